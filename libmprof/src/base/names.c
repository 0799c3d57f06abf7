/*
 * mprof — the short form of a kernel name (mprof/names.h).
 *
 * SPDX-License-Identifier: MIT
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/arena.h"
#include "mprof/format.h"
#include "mprof/names.h"
#include "mprof/status.h"

#define ANONYMOUS "(anonymous namespace)"

static int opens(char c) {
  return c == '<' || c == '(' || c == '{' || c == '[';
}
static int closes(char c) {
  return c == '>' || c == ')' || c == '}' || c == ']';
}

/* The end of the qualified name: the '(' of the parameter list, the first
 * one outside brackets that is not "(anonymous namespace)". */
static size_t name_end(const char *s, size_t n) {
  int depth = 0;
  for (size_t i = 0; i < n; i++) {
    /* "name (note)" is not a parameter list: those follow the name. */
    if (depth == 0 && s[i] == '(' && i > 0 && s[i - 1] != ' ' &&
        strncmp(s + i, ANONYMOUS, sizeof ANONYMOUS - 1) != 0)
      return i;
    if (opens(s[i]))
      depth++;
    else if (closes(s[i]) && depth > 0)
      depth--;
  }
  return n;
}

/* Where the last component of qualified name [s, s+n) starts: after its
 * last "::" outside brackets. */
static size_t last_component(const char *s, size_t n) {
  int depth = 0;
  size_t at = 0;
  for (size_t i = 0; i < n; i++) {
    if (opens(s[i]))
      depth++;
    else if (closes(s[i]) && depth > 0)
      depth--;
    else if (depth == 0 && s[i] == ':' && i + 1 < n && s[i + 1] == ':')
      at = i + 2;
  }
  return at;
}

#define MAX_DEPTH 64

/* Template arguments [s, s+n) into @p out with every qualified name cut to
 * its last component ("cub::NullType" -> "NullType",
 * "ns::Policy<int>::P800" -> "P800"). Returns the length written. */
static size_t unqualify(char *out, const char *s, size_t n) {
  size_t start[MAX_DEPTH]; /* where the current name began, per depth */
  int depth = 0;
  size_t o = 0;
  start[0] = 0;
  for (size_t i = 0; i < n; i++) {
    char c = s[i];
    if (c == ':' && i + 1 < n && s[i + 1] == ':') {
      o = start[depth];
      i++;
      continue;
    }
    out[o++] = c;
    if (opens(c)) {
      if (depth + 1 < MAX_DEPTH)
        depth++;
      start[depth] = o;
    } else if (closes(c)) {
      if (depth > 0)
        depth--;
    } else if (c == ',' || c == '*' || c == '&' ||
               (c == ' ' && i > 0 && s[i - 1] == ',')) {
      start[depth] = o; /* "a::b const::c" is one name: a space is not */
    }
  }
  return o;
}

/* Copy @p s (length @p n) into @p buf of @p size, cut at a UTF-8
 * character boundary. */
static void copy_out(char *buf, size_t size, const char *s, size_t n) {
  if (n >= size) {
    n = size - 1;
    while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80)
      n--;
  }
  memcpy(buf, s, n);
  buf[n] = '\0';
}

const char *mprof_name_short(char *buf, size_t size, const char *name) {
  if (!buf || !size)
    return buf;
  if (!name) {
    *buf = '\0';
    return buf;
  }
  const char *s = name;
  if (strncmp(s, "void ", 5) == 0 && s[5])
    s += 5;
  size_t n = name_end(s, strlen(s));
  size_t first = last_component(s, n);
  s += first;
  n -= first;
  /* The template arguments: from the first '<' to its matching '>'. */
  const char *lt = memchr(s, '<', n);
  if (!lt || lt == s) {
    copy_out(buf, size, s, n);
    return buf;
  }
  size_t base = (size_t)(lt - s), close = n;
  int depth = 0;
  for (size_t i = base; i < n; i++) {
    if (opens(s[i]))
      depth++;
    else if (closes(s[i]) && --depth == 0) {
      close = i;
      break;
    }
  }
  size_t args = close > base ? close - base - 1 : 0;
  char *tmp = (char *)malloc(n + sizeof MPROF_NAME_ELIDED + 3);
  if (!tmp) {
    copy_out(buf, size, s, n);
    return buf;
  }
  memcpy(tmp, s, base + 1);
  size_t o = base + 1;
  size_t kept = unqualify(tmp + o, s + base + 1, args);
  tmp[o + kept] = '\0';
  if (kept > MPROF_NAME_TEMPLATE_KEPT || strstr(tmp + o, "{lambda")) {
    memcpy(tmp + o, MPROF_NAME_ELIDED, sizeof MPROF_NAME_ELIDED - 1);
    kept = sizeof MPROF_NAME_ELIDED - 1;
  }
  o += kept;
  tmp[o++] = '>';
  copy_out(buf, size, tmp, o);
  free(tmp);
  return buf;
}

/* ---- names unique within a set ------------------------------------------ */

/* A template argument in the two forms that can tell kernels apart. */
typedef struct {
  const char *head;  /* its own name: "FillFunctor", "copy_kernel::lambda" */
  const char *whole; /* unqualified whole: "FillFunctor<float>" */
} name_arg;

typedef struct {
  const char *function; /* the short name without template arguments */
  name_arg *args;
  size_t arg_count;
} name_parts;

struct mprof_name_set {
  size_t count;
  char **shorts;
  size_t *differs; /* byte where short i first differs from its nearest */
  mprof__arena arena;
};

/* The last component of qualified name [s, s+n) without its template
 * arguments, into the arena. */
static const char *bare_name(mprof__arena *a, const char *s, size_t n) {
  size_t first = last_component(s, n);
  s += first;
  n -= first;
  const char *lt = memchr(s, '<', n);
  if (lt && lt != s)
    n = (size_t)(lt - s);
  char *out = (char *)mprof__arena_alloc(a, n + 1);
  if (!out)
    return NULL;
  memcpy(out, s, n);
  out[n] = '\0';
  return out;
}

/* Argument [s, s+n) in its two forms. A closure's type is named after the
 * function it is in: "f(int)::{lambda(float)#1}" -> "f::lambda". */
static int arg_forms(mprof__arena *a, name_arg *arg, const char *s, size_t n) {
  while (n && s[0] == ' ')
    s++, n--;
  while (n && s[n - 1] == ' ')
    n--;
  char *whole = (char *)mprof__arena_alloc(a, n + 1);
  if (!whole)
    return MPROF_ENOMEM;
  size_t w = unqualify(whole, s, n);
  whole[w] = '\0';
  arg->whole = whole;
  const char *lambda = NULL;
  for (size_t i = 0; i + 7 <= n; i++)
    if (memcmp(s + i, "{lambda", 7) == 0) {
      lambda = s + i;
      break;
    }
  if (lambda) {
    size_t end = name_end(s, n);
    if (end < (size_t)(lambda - s)) {
      const char *f = bare_name(a, s, end);
      arg->head = f ? mprof__arena_printf(a, "%s::lambda", f) : NULL;
    } else {
      arg->head = "lambda";
    }
  } else {
    arg->head = bare_name(a, whole, w);
    /* bare_name() cuts at the last "::": the whole has none left. */
  }
  return arg->head ? 0 : MPROF_ENOMEM;
}

/* The function's short name and its template arguments of @p name. */
static int name_split(mprof__arena *a, name_parts *p, const char *name) {
  memset(p, 0, sizeof *p);
  const char *s = name ? name : "";
  if (strncmp(s, "void ", 5) == 0 && s[5])
    s += 5;
  size_t n = name_end(s, strlen(s));
  size_t first = last_component(s, n);
  s += first;
  n -= first;
  const char *lt = memchr(s, '<', n);
  if (!lt || lt == s)
    return 0;
  size_t base = (size_t)(lt - s);
  char *function = (char *)mprof__arena_alloc(a, base + 1);
  if (!function)
    return MPROF_ENOMEM;
  memcpy(function, s, base);
  function[base] = '\0';
  p->function = function;
  size_t cap = 8;
  p->args = (name_arg *)mprof__arena_alloc(a, cap * sizeof *p->args);
  if (!p->args)
    return MPROF_ENOMEM;
  int depth = 0;
  size_t start = base + 1;
  for (size_t i = base; i < n; i++) {
    char c = s[i];
    int split = 0, done = 0;
    if (opens(c)) {
      depth++;
    } else if (closes(c)) {
      if (--depth == 0)
        split = done = 1;
    } else if (c == ',' && depth == 1) {
      split = 1;
    }
    if (split && i > start) {
      if (p->arg_count == cap) {
        name_arg *grown =
            (name_arg *)mprof__arena_alloc(a, 2 * cap * sizeof *grown);
        if (!grown)
          return MPROF_ENOMEM;
        memcpy(grown, p->args, cap * sizeof *grown);
        p->args = grown;
        cap *= 2;
      }
      int rc = arg_forms(a, &p->args[p->arg_count++], s + start, i - start);
      if (rc)
        return rc;
    }
    if (split)
      start = i + 1;
    if (done)
      break;
  }
  return 0;
}

/* One chosen form: argument @p position, its head (0) or whole (1). */
typedef struct {
  size_t position;
  int whole;
} name_choice;

static const char *choice_text(const name_parts *p, name_choice c) {
  if (c.position >= p->arg_count)
    return "";
  return c.whole ? p->args[c.position].whole : p->args[c.position].head;
}

/* Whether members @p x and @p y read the same under choices @p chosen. */
static int same_under(const name_parts *x, const name_parts *y,
                      const name_choice *chosen, size_t count) {
  for (size_t c = 0; c < count; c++)
    if (strcmp(choice_text(x, chosen[c]), choice_text(y, chosen[c])) != 0)
      return 0;
  return 1;
}

/* The number of different readings of @p group under @p chosen. */
static size_t readings(name_parts *const *group, size_t size,
                       const name_choice *chosen, size_t count) {
  size_t distinct = 0;
  for (size_t i = 0; i < size; i++) {
    size_t j = 0;
    while (j < i && !same_under(group[i], group[j], chosen, count))
      j++;
    distinct += j == i;
  }
  return distinct;
}

#define GROUP_SEARCH_MAX 256
#define ARGS_SEARCH_MAX 32

/* The short names of a group sharing one mprof_name_short(): the fewest
 * argument forms that tell them apart, picked greedily. */
static int group_names(mprof_name_set *set, const size_t *members, size_t size,
                       name_parts *parts, const char *const *names) {
  name_parts **group = (name_parts **)malloc(size * sizeof *group);
  size_t max_args = 0;
  if (!group)
    return MPROF_ENOMEM;
  for (size_t i = 0; i < size; i++) {
    group[i] = &parts[members[i]];
    if (group[i]->arg_count > max_args)
      max_args = group[i]->arg_count;
  }
  /* Distinct full names: what the choices aim to separate. */
  size_t wanted = 0;
  for (size_t i = 0; i < size; i++) {
    size_t j = 0;
    while (j < i && strcmp(names[members[i]] ? names[members[i]] : "",
                           names[members[j]] ? names[members[j]] : "") != 0)
      j++;
    wanted += j == i;
  }
  name_choice *chosen =
      (name_choice *)malloc((2 * max_args + 1) * sizeof *chosen);
  if (!chosen) {
    free(group);
    return MPROF_ENOMEM;
  }
  size_t count = 0, have = 1;
  /* The search compares every pair of members per candidate: past a few
   * hundred members or a few dozen arguments (machine-made names) the
   * names are numbered instead. */
  if (size > GROUP_SEARCH_MAX || max_args > ARGS_SEARCH_MAX)
    have = wanted;
  while (have < wanted && group[0]->function) {
    name_choice best = {0, 0};
    size_t best_have = have;
    for (int whole = 0; whole < 2; whole++)
      for (size_t pos = 0; pos < max_args; pos++) {
        chosen[count] = (name_choice){pos, whole};
        size_t r = readings(group, size, chosen, count + 1);
        if (r > best_have) {
          best_have = r;
          best = chosen[count];
        }
      }
    if (best_have == have)
      break;
    chosen[count++] = best;
    have = best_have;
  }
  int rc = 0;
  for (size_t i = 0; i < size && count && !rc; i++) {
    const name_parts *p = group[i];
    size_t len = strlen(p->function) + 3;
    for (size_t a = 0; a < p->arg_count; a++)
      len += strlen(p->args[a].whole) + sizeof MPROF_NAME_ELIDED + 2;
    char *out = (char *)mprof__arena_alloc(&set->arena, len);
    if (!out) {
      rc = MPROF_ENOMEM;
      break;
    }
    size_t o = (size_t)sprintf(out, "%s<", p->function);
    int elided = 0;
    for (size_t a = 0; a < p->arg_count; a++) {
      const char *form = NULL;
      for (size_t c = 0; c < count; c++)
        if (chosen[c].position == a)
          if (!form || chosen[c].whole)
            form = choice_text(p, chosen[c]);
      if (!form && elided)
        continue;
      if (a)
        o += (size_t)sprintf(out + o, ", ");
      o += (size_t)sprintf(out + o, "%s", form ? form : MPROF_NAME_ELIDED);
      elided = !form;
    }
    sprintf(out + o, ">");
    set->shorts[members[i]] = out;
  }
  free(chosen);
  free(group);
  return rc;
}

typedef struct {
  const char *text;
  size_t index;
} name_key;

static int by_text(const void *x, const void *y) {
  const name_key *a = (const name_key *)x, *b = (const name_key *)y;
  int c = strcmp(a->text, b->text);
  return c ? c : (a->index > b->index) - (a->index < b->index);
}

/* The indexes of @p by in the order of their text, equal texts by index. */
static size_t *sorted_by(const char *const *by, size_t count) {
  name_key *keys = (name_key *)malloc((count ? count : 1) * sizeof *keys);
  size_t *order = (size_t *)malloc((count ? count : 1) * sizeof *order);
  if (!keys || !order) {
    free(keys);
    free(order);
    return NULL;
  }
  for (size_t i = 0; i < count; i++)
    keys[i] = (name_key){by[i], i};
  qsort(keys, count, sizeof *keys, by_text);
  for (size_t i = 0; i < count; i++)
    order[i] = keys[i].index;
  free(keys);
  return order;
}

static const char *full_of(const char *const *names, size_t i) {
  return names[i] ? names[i] : "";
}

/* " #2", " #3"... for names that still read the same, one per full name. */
static int number_repeats(mprof_name_set *set, const char *const *names) {
  size_t *order = sorted_by((const char *const *)set->shorts, set->count);
  if (!order)
    return MPROF_ENOMEM;
  for (size_t g = 0; g < set->count;) {
    size_t e = g + 1;
    while (e < set->count &&
           strcmp(set->shorts[order[g]], set->shorts[order[e]]) == 0)
      e++;
    /* order[g..e) is in index order: the first full name keeps its name. */
    const char *base = set->shorts[order[g]];
    size_t ordinal = 1;
    for (size_t i = g + 1; i < e; i++) {
      size_t j = g;
      while (j < i &&
             strcmp(full_of(names, order[i]), full_of(names, order[j])) != 0)
        j++;
      if (j < i) {
        set->shorts[order[i]] = set->shorts[order[j]];
        continue;
      }
      char *numbered =
          mprof__arena_printf(&set->arena, "%s #%zu", base, ++ordinal);
      if (!numbered) {
        free(order);
        return MPROF_ENOMEM;
      }
      set->shorts[order[i]] = numbered;
    }
    g = e;
  }
  free(order);
  return 0;
}

/* Where each short name first differs from the one most like it: the
 * longest common prefix with a neighbour in sorted order. */
static int find_differences(mprof_name_set *set) {
  size_t *order = sorted_by((const char *const *)set->shorts, set->count);
  if (!order)
    return MPROF_ENOMEM;
  for (size_t k = 0; k < set->count; k++) {
    const char *s = set->shorts[order[k]];
    size_t at = 0;
    for (int side = -1; side <= 1; side += 2) {
      size_t m = k + (size_t)(ptrdiff_t)side;
      if ((side < 0 && k == 0) || m >= set->count)
        continue;
      const char *t = set->shorts[order[m]];
      if (strcmp(s, t) == 0)
        continue;
      size_t c = 0;
      while (s[c] && s[c] == t[c])
        c++;
      if (c > at)
        at = c;
    }
    set->differs[order[k]] = at;
  }
  free(order);
  return 0;
}

int mprof_name_set_build(mprof_name_set **out, const char *const *names,
                         size_t count) {
  if (!out || (!names && count))
    return MPROF_EINVAL;
  *out = NULL;
  mprof_name_set *set = (mprof_name_set *)calloc(1, sizeof *set);
  if (!set)
    return MPROF_ENOMEM;
  set->count = count;
  set->shorts = (char **)calloc(count ? count : 1, sizeof *set->shorts);
  set->differs = (size_t *)calloc(count ? count : 1, sizeof *set->differs);
  name_parts *parts = (name_parts *)calloc(count ? count : 1, sizeof *parts);
  int rc = set->shorts && set->differs && parts ? 0 : MPROF_ENOMEM;
  char buf[1024];
  for (size_t i = 0; i < count && !rc; i++) {
    mprof_name_short(buf, sizeof buf, full_of(names, i));
    set->shorts[i] = mprof__arena_strdup(&set->arena, buf);
    if (!set->shorts[i])
      rc = MPROF_ENOMEM;
  }
  size_t *order =
      rc ? NULL : sorted_by((const char *const *)set->shorts, count);
  if (!rc && !order)
    rc = MPROF_ENOMEM;
  size_t *members =
      rc ? NULL : (size_t *)malloc((count ? count : 1) * sizeof *members);
  if (!rc && !members)
    rc = MPROF_ENOMEM;
  for (size_t g = 0; g < count && !rc;) {
    size_t e = g + 1;
    while (e < count &&
           strcmp(set->shorts[order[g]], set->shorts[order[e]]) == 0)
      e++;
    if (e - g > 1) {
      for (size_t i = g; i < e && !rc; i++) {
        members[i - g] = order[i];
        rc =
            name_split(&set->arena, &parts[order[i]], full_of(names, order[i]));
      }
      if (!rc)
        rc = group_names(set, members, e - g, parts, names);
    }
    g = e;
  }
  free(members);
  free(order);
  free(parts);
  if (!rc)
    rc = number_repeats(set, names);
  if (!rc)
    rc = find_differences(set);
  if (rc) {
    mprof_name_set_free(set);
    return rc;
  }
  *out = set;
  return 0;
}

void mprof_name_set_free(mprof_name_set *set) {
  if (!set)
    return;
  mprof__arena_free(&set->arena);
  free(set->shorts);
  free(set->differs);
  free(set);
}

size_t mprof_name_set_count(const mprof_name_set *set) {
  return set ? set->count : 0;
}

const char *mprof_name_set_short(const mprof_name_set *set, size_t index) {
  return set && index < set->count ? set->shorts[index] : "";
}

/* ---- cutting in the middle ---------------------------------------------- */

/* The byte offset of character @p chars of @p s (its length past the end). */
static size_t char_offset(const char *s, size_t chars) {
  size_t i = 0;
  while (s[i] && chars) {
    i++;
    while (((unsigned char)s[i] & 0xC0) == 0x80)
      i++;
    chars--;
  }
  return i;
}

static size_t char_count(const char *s, size_t bytes) {
  size_t n = 0;
  for (size_t i = 0; i < bytes && s[i]; i++)
    n += ((unsigned char)s[i] & 0xC0) != 0x80;
  return n;
}

/* Append characters [from, to) of @p s to @p buf at *@p o. */
static void put_chars(char *buf, size_t size, size_t *o, const char *s,
                      size_t from, size_t to) {
  size_t a = char_offset(s, from), b = char_offset(s, to);
  if (*o + (b - a) >= size)
    b = a + (size - 1 - *o);
  while (b > a && ((unsigned char)s[b] & 0xC0) == 0x80)
    b--;
  memcpy(buf + *o, s + a, b - a);
  *o += b - a;
  buf[*o] = '\0';
}

static void put_elided(char *buf, size_t size, size_t *o) {
  if (*o + sizeof MPROF_NAME_ELIDED - 1 < size) {
    memcpy(buf + *o, MPROF_NAME_ELIDED, sizeof MPROF_NAME_ELIDED);
    *o += sizeof MPROF_NAME_ELIDED - 1;
  }
}

/* @p text in @p max characters, keeping character @p keep (and a few
 * around it) visible when it is not already in the head or the tail. */
static const char *fit(char *buf, size_t size, const char *text, size_t max,
                       size_t keep) {
  if (!buf || !size)
    return buf;
  *buf = '\0';
  if (!text)
    return buf;
  size_t len = char_count(text, strlen(text)), o = 0;
  if (len <= max) {
    copy_out(buf, size, text, strlen(text));
    return buf;
  }
  if (max == 0)
    return buf;
  size_t head = max / 2, tail = max - 1 - head;
  int inside = keep + 4 > head && keep + 4 < len - tail;
  if (!inside || max < 12) {
    put_chars(buf, size, &o, text, 0, head);
    put_elided(buf, size, &o);
    put_chars(buf, size, &o, text, len - tail, len);
    return buf;
  }
  /* head … [from the difference on] (… tail) */
  head = max / 4;
  size_t from = keep > 3 ? keep - 3 : 0;
  if (from < head)
    from = head;
  put_chars(buf, size, &o, text, 0, head);
  put_elided(buf, size, &o);
  if (len - from <= max - head - 1) {
    put_chars(buf, size, &o, text, len - (max - head - 1), len);
    return buf;
  }
  tail = max / 4;
  size_t window = max - head - tail - 2;
  if (from + window > len - tail)
    from = len - tail - window;
  put_chars(buf, size, &o, text, from, from + window);
  put_elided(buf, size, &o);
  put_chars(buf, size, &o, text, len - tail, len);
  return buf;
}

const char *mprof_name_middle(char *buf, size_t size, const char *text,
                              size_t max_chars) {
  return fit(buf, size, text, max_chars, 0);
}

const char *mprof_name_set_fit(const mprof_name_set *set, size_t index,
                               char *buf, size_t size, size_t max_chars) {
  const char *s = mprof_name_set_short(set, index);
  size_t keep =
      set && index < set->count ? char_count(s, set->differs[index]) : 0;
  return fit(buf, size, s, max_chars, keep);
}

const char *mprof_copy_kind_name(unsigned copy_kind) {
  switch (copy_kind) {
  case MPROF_COPY_HTOD: return "HtoD";
  case MPROF_COPY_DTOH: return "DtoH";
  case MPROF_COPY_DTOD: return "DtoD";
  case MPROF_COPY_HTOH: return "HtoH";
  case MPROF_COPY_PTOP: return "PtoP";
  default: return "";
  }
}
