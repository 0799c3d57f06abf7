/*
 * mprof — the short form of a kernel name (mprof/names.h).
 *
 * SPDX-License-Identifier: MIT
 */
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
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

/* One cut of a name at one width (see name_cut, below). */
typedef struct name_width_cut name_width_cut;

typedef struct {
  int done; /* atomic: cuts and count are made */
  size_t count;
  name_width_cut *cuts; /* by index */
} width_cuts;

struct mprof_name_set {
  size_t count;
  char **shorts;
  size_t *lengths;     /* in characters */
  size_t *differs;     /* character where short i first differs from the
                          short sharing most of its beginning */
  size_t *differs_end; /* where it last differs from the one sharing most
                          of its end; SIZE_MAX: none */
  size_t longest_bytes;
  /* Per width from MPROF_NAME_FIT_MIN to MPROF_NAME_FIT_CHECKED, made on
   * first use: the cuts where the telling cut reads like another name's. */
  width_cuts *widths;
  pthread_mutex_t widths_lock;
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

/* One cut of a name of len characters into max (< len): its first head
 * characters, MPROF_NAME_ELIDED, characters [from, from + window),
 * MPROF_NAME_ELIDED and its last tail characters, where window = max -
 * head - tail - 2. from 0 is the plain cut, head…tail with tail = max - 1
 * - head; a window that reaches the tail runs on to the end,
 * head…[len - (max - head - 1), len). */
typedef struct {
  size_t head, from, tail;
} name_cut;

struct name_width_cut {
  size_t index;
  name_cut cut;
};

/* Where cut @p c of a name of @p len characters into @p max shows the
 * middle, [*from, *to), and how many characters of the end, *tail. */
static void cut_window(size_t len, size_t max, name_cut c, size_t *from,
                       size_t *to, size_t *tail) {
  if (!c.from) {
    *from = *to = c.head;
    *tail = max - 1 - c.head;
    return;
  }
  size_t window = max - c.head - c.tail - 2;
  /* Eliding one character before the tail saves nothing. */
  if (c.from + window + 1 >= len - c.tail) {
    *from = len - (max - c.head - 1);
    *to = len;
    *tail = 0;
    return;
  }
  *from = c.from;
  *to = c.from + window;
  *tail = c.tail;
}

/* @p text (@p len characters, more than @p max) cut by @p c into @p buf. */
static const char *put_cut(char *buf, size_t size, const char *text, size_t len,
                           size_t max, name_cut c) {
  size_t from, to, tail, o = 0;
  cut_window(len, max, c, &from, &to, &tail);
  *buf = '\0';
  put_chars(buf, size, &o, text, 0, c.head);
  put_elided(buf, size, &o);
  if (to > from) {
    put_chars(buf, size, &o, text, from, to);
    if (tail)
      put_elided(buf, size, &o);
  }
  put_chars(buf, size, &o, text, len - tail, len);
  return buf;
}

/* The cut of a name of @p len characters into @p max (< len) that keeps
 * what tells it from its set: @p first, where it first differs from the
 * name sharing most of its beginning (len: nowhere), and @p last, where
 * it last differs from the name sharing most of its end (SIZE_MAX:
 * nowhere). Each stays visible, in the head, the tail, or a window
 * between them; where the window cannot hold both, @p first. */
static name_cut telling_cut(size_t len, size_t max, size_t first, size_t last) {
  name_cut plain = {max / 2, 0, 0};
  if (max < MPROF_NAME_FIT_MIN)
    return plain;
  size_t tail = max - 1 - plain.head;
  /* A first difference wants a few characters after it. */
  int first_shown =
      first >= len || first + 4 <= plain.head || first >= len - tail;
  int last_shown = last >= len || last < plain.head || last >= len - tail;
  if (first_shown && last_shown)
    return plain;
  name_cut c = {max / 4, 0, max / 4};
  size_t window = max - c.head - c.tail - 2;
  int first_in = first < len && first + 4 > c.head && first < len - c.tail;
  int last_in = last < len && last >= c.head && last < len - c.tail;
  if (!first_in && !last_in)
    return plain;
  size_t a = first_in ? first : last, b = a;
  if (first_in && last_in) {
    a = first < last ? first : last;
    b = first < last ? last : first;
  }
  c.from = a > 3 ? a - 3 : 0;
  if (c.from < c.head)
    c.from = c.head;
  if (b >= c.from + window) { /* both do not fit: the first difference */
    c.from = first > 3 ? first - 3 : 0;
    if (c.from < c.head)
      c.from = c.head;
  }
  return c;
}

/* Where @p s first (*@p first, characters from its start) and last
 * (*@p last) differs from @p t, t aligned with its start, then with its
 * end; *@p first is s's length where t begins with s, *@p last SIZE_MAX
 * where t ends with s. */
static void differences(const char *s, const char *t, size_t *first,
                        size_t *last) {
  size_t n = 0;
  while (s[n] && s[n] == t[n])
    n++;
  while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80)
    n--;
  *first = char_count(s, n);
  size_t sl = strlen(s), tl = strlen(t), e = 0;
  while (e < sl && e < tl && s[sl - 1 - e] == t[tl - 1 - e])
    e++;
  while (e > 0 && ((unsigned char)s[sl - e] & 0xC0) == 0x80)
    e--;
  *last = e == sl ? SIZE_MAX : char_count(s, sl - e) - 1;
}

typedef struct {
  const char *text;
  size_t length;
  size_t index;
} name_end_key;

/* Texts in the order of their ends: compared from their last byte. */
static int by_end(const void *x, const void *y) {
  const name_end_key *a = (const name_end_key *)x, *b = (const name_end_key *)y;
  size_t i = 0;
  while (i < a->length && i < b->length) {
    unsigned char ca = (unsigned char)a->text[a->length - 1 - i];
    unsigned char cb = (unsigned char)b->text[b->length - 1 - i];
    if (ca != cb)
      return ca < cb ? -1 : 1;
    i++;
  }
  if (a->length != b->length)
    return a->length < b->length ? -1 : 1;
  return (a->index > b->index) - (a->index < b->index);
}

/* Where each short name first differs from the one sharing most of its
 * beginning (a neighbour in sorted order), and last differs from the one
 * sharing most of its end (a neighbour in the order of the ends). */
static int find_differences(mprof_name_set *set) {
  size_t *order = sorted_by((const char *const *)set->shorts, set->count);
  name_end_key *ends =
      (name_end_key *)malloc((set->count ? set->count : 1) * sizeof *ends);
  if (!order || !ends) {
    free(order);
    free(ends);
    return MPROF_ENOMEM;
  }
  for (size_t i = 0; i < set->count; i++) {
    set->lengths[i] = char_count(set->shorts[i], strlen(set->shorts[i]));
    if (strlen(set->shorts[i]) > set->longest_bytes)
      set->longest_bytes = strlen(set->shorts[i]);
    set->differs[i] = set->lengths[i];
    set->differs_end[i] = SIZE_MAX;
    ends[i] = (name_end_key){set->shorts[i], strlen(set->shorts[i]), i};
  }
  mprof__qsort(ends, set->count, sizeof *ends, by_end);
  /* Runs of one text (one full name on two GPUs) share their neighbours. */
  for (size_t g = 0, e; g < set->count; g = e) {
    const char *s = set->shorts[order[g]];
    for (e = g + 1; e < set->count && !strcmp(set->shorts[order[e]], s); e++)
      ;
    size_t first, last, deepest = set->lengths[order[g]];
    if (g > 0)
      differences(s, set->shorts[order[g - 1]], &deepest, &last);
    if (e < set->count) {
      differences(s, set->shorts[order[e]], &first, &last);
      if (g == 0 || first > deepest)
        deepest = first;
    }
    for (size_t k = g; k < e; k++)
      set->differs[order[k]] = deepest;
  }
  for (size_t g = 0, e; g < set->count; g = e) {
    const char *s = ends[g].text;
    for (e = g + 1; e < set->count && !strcmp(ends[e].text, s); e++)
      ;
    size_t first, last, earliest = SIZE_MAX;
    if (g > 0)
      differences(s, ends[g - 1].text, &first, &earliest);
    if (e < set->count) {
      differences(s, ends[e].text, &first, &last);
      if (last < earliest)
        earliest = last;
    }
    for (size_t k = g; k < e; k++)
      set->differs_end[ends[k].index] = earliest;
  }
  free(ends);
  free(order);
  return 0;
}

static int by_index(const void *x, const void *y) {
  const name_width_cut *a = (const name_width_cut *)x,
                       *b = (const name_width_cut *)y;
  return (a->index > b->index) - (a->index < b->index);
}

static uint64_t text_hash(const char *s) {
  uint64_t h = 1469598103934665603u; /* FNV-1a */
  while (*s)
    h = (h ^ (unsigned char)*s++) * 1099511628211u;
  return h;
}

/* The texts of one width's cuts, one per name, in an open-addressing
 * table: slot holds the name + 1 that owns a text, 0 empty. */
typedef struct {
  const mprof_name_set *set;
  char *pool; /* stride bytes a name */
  size_t stride;
  const char **text; /* the name's cut, or its whole short name */
  uint64_t *hash;
  size_t *slots;
  size_t slot_count; /* a power of two, at least twice the names */
  char *trial;       /* a cut being tried */
  size_t work;       /* characters cut while searching this width */
} fit_table;

/* The name that owns @p text (hash @p h) in @p t, or SIZE_MAX; *@p slot
 * is where it is or would go. */
static size_t text_owner(const fit_table *t, const char *text, uint64_t h,
                         size_t *slot) {
  size_t s = (size_t)h & (t->slot_count - 1);
  for (; t->slots[s]; s = (s + 1) & (t->slot_count - 1)) {
    size_t o = t->slots[s] - 1;
    if (t->hash[o] == h && strcmp(t->text[o], text) == 0)
      break;
  }
  *slot = s;
  return t->slots[s] ? t->slots[s] - 1 : SIZE_MAX;
}

/* Whether cut @p c of name @p i reads like no other short name's cut so
 * far; if so, it becomes i's. */
static int try_cut(fit_table *t, size_t i, size_t max, name_cut c) {
  const mprof_name_set *set = t->set;
  put_cut(t->trial, t->stride, set->shorts[i], set->lengths[i], max, c);
  t->work += max;
  uint64_t h = text_hash(t->trial);
  size_t slot, o = text_owner(t, t->trial, h, &slot);
  if (o != SIZE_MAX && strcmp(set->shorts[o], set->shorts[i]) != 0)
    return 0;
  memcpy(t->pool + i * t->stride, t->trial, t->stride);
  t->text[i] = t->pool + i * t->stride;
  t->hash[i] = h;
  if (o == SIZE_MAX)
    t->slots[slot] = i + 1;
  return 1;
}

/* Names that the telling cut leaves alike are given other cuts, searched
 * in this order until one reads like no other name: windows that start
 * just before, or end just after, where the name differs from the one it
 * reads like, with heads and tails of a quarter, an eighth of the width
 * and 2 characters; then every window with those heads and tails. The
 * search stops after this many characters cut for one width. */
#define FIT_WORK ((size_t)1 << 18)

static name_cut *another_cut(fit_table *t, size_t i, size_t like, size_t max,
                             name_cut *found) {
  const mprof_name_set *set = t->set;
  size_t len = set->lengths[i], first, last;
  differences(set->shorts[i], set->shorts[like], &first, &last);
  size_t heads[3] = {max / 4, max / 8, 2};
  for (int scan = 0; scan < 2; scan++)
    for (int hi = 0; hi < 3; hi++) {
      size_t h = heads[hi] < 2 ? 2 : heads[hi];
      if (hi && h >= (heads[hi - 1] < 2 ? 2 : heads[hi - 1]))
        continue;
      size_t window = max - 2 * h - 2;
      if (!scan) {
        size_t places[2] = {first, last};
        for (int p = 0; p < 2; p++) {
          size_t at = places[p];
          if (at >= len)
            continue;
          for (int side = 0; side < 2; side++) {
            size_t from = side ? (at + 4 > window ? at + 4 - window : 0)
                               : (at > 3 ? at - 3 : 0);
            *found = (name_cut){h, from < h ? h : from, h};
            if (try_cut(t, i, max, *found))
              return found;
          }
        }
        continue;
      }
      for (size_t from = h; from + window + h < len; from++) {
        if (t->work > FIT_WORK)
          return NULL;
        *found = (name_cut){h, from, h};
        if (try_cut(t, i, max, *found))
          return found;
      }
    }
  return NULL;
}

static int add_cut(width_cuts *w, size_t *cap, size_t index, name_cut cut) {
  if (w->count == *cap) {
    size_t grown_cap = *cap ? 2 * *cap : 16;
    name_width_cut *grown =
        (name_width_cut *)realloc(w->cuts, grown_cap * sizeof *grown);
    if (!grown)
      return MPROF_ENOMEM;
    w->cuts = grown;
    *cap = grown_cap;
  }
  w->cuts[w->count++] = (name_width_cut){index, cut};
  return 0;
}

/* The set cut into @p max characters, each name's text in a table; a
 * name whose telling cut reads like an earlier one's (by index) gets
 * another_cut(). Those cuts, by index, into @p w. */
static int cuts_at(const mprof_name_set *set, size_t max, width_cuts *w) {
  size_t n = set->count;
  fit_table t;
  memset(&t, 0, sizeof t);
  t.set = set;
  t.stride = set->longest_bytes + 2 * sizeof MPROF_NAME_ELIDED + 1;
  t.slot_count = 16;
  while (t.slot_count < 2 * n)
    t.slot_count *= 2;
  t.pool = (char *)malloc(n * t.stride);
  t.text = (const char **)malloc(n * sizeof *t.text);
  t.hash = (uint64_t *)malloc(n * sizeof *t.hash);
  t.slots = (size_t *)calloc(t.slot_count, sizeof *t.slots);
  t.trial = (char *)malloc(t.stride);
  size_t *alike = (size_t *)malloc(n * sizeof *alike);
  size_t cap = 0, alike_count = 0;
  int rc = t.pool && t.text && t.hash && t.slots && t.trial && alike
               ? 0
               : MPROF_ENOMEM;
  for (size_t i = 0; i < n && !rc; i++) {
    if (set->lengths[i] > max)
      t.text[i] = put_cut(t.pool + i * t.stride, t.stride, set->shorts[i],
                          set->lengths[i], max,
                          telling_cut(set->lengths[i], max, set->differs[i],
                                      set->differs_end[i]));
    else
      t.text[i] = set->shorts[i];
    t.hash[i] = text_hash(t.text[i]);
    size_t slot, o = text_owner(&t, t.text[i], t.hash[i], &slot);
    if (o == SIZE_MAX)
      t.slots[slot] = i + 1;
    else if (strcmp(set->shorts[o], set->shorts[i]) != 0)
      alike[alike_count++] = i;
  }
  for (size_t a = 0; a < alike_count && !rc; a++) {
    size_t i = alike[a], slot;
    size_t o = text_owner(&t, t.text[i], t.hash[i], &slot);
    name_cut found;
    if (set->lengths[i] <= max) {
      /* A whole name keeps its text: the cut one it reads like moves. */
      if (o == SIZE_MAX || set->lengths[o] <= max)
        continue;
      t.slots[slot] = i + 1;
      size_t moved = o;
      o = i;
      i = moved;
    }
    if (!another_cut(&t, i, o, max, &found))
      continue;
    rc = add_cut(w, &cap, i, found);
    /* One full name (on two GPUs) keeps one cut: those after a name that
     * moves follow it by themselves, unless it moved for a whole name. */
    for (size_t j = 0; j < n && !rc && o == alike[a]; j++)
      if (j != i && strcmp(set->shorts[j], set->shorts[i]) == 0)
        rc = add_cut(w, &cap, j, found);
  }
  mprof__qsort(w->cuts, w->count, sizeof *w->cuts, by_index);
  free(t.pool);
  free((void *)t.text);
  free(t.hash);
  free(t.slots);
  free(t.trial);
  free(alike);
  return rc;
}

/* The cuts of @p set at width @p max, made on first use: a set may be
 * read by several threads at once, so one lock guards the making. */
static const width_cuts *cuts_of_width(const mprof_name_set *set, size_t max) {
  mprof_name_set *cache = (mprof_name_set *)set; /* made once, then read */
  width_cuts *w = &cache->widths[max - MPROF_NAME_FIT_MIN];
  if (__atomic_load_n(&w->done, __ATOMIC_ACQUIRE))
    return w;
  pthread_mutex_lock(&cache->widths_lock);
  if (!w->done) {
    if (cuts_at(set, max, w) != 0) { /* out of memory: the telling cuts */
      free(w->cuts);
      w->cuts = NULL;
      w->count = 0;
    }
    __atomic_store_n(&w->done, 1, __ATOMIC_RELEASE);
  }
  pthread_mutex_unlock(&cache->widths_lock);
  return w;
}

/* The cut of name @p index into @p max characters: the one that tells it
 * from the set's other names at that width. */
static name_cut cut_of(const mprof_name_set *set, size_t index, size_t max) {
  if (max >= MPROF_NAME_FIT_MIN && max <= MPROF_NAME_FIT_CHECKED) {
    const width_cuts *w = cuts_of_width(set, max);
    size_t lo = 0, hi = w->count;
    while (lo < hi) {
      size_t mid = lo + (hi - lo) / 2;
      if (w->cuts[mid].index < index)
        lo = mid + 1;
      else
        hi = mid;
    }
    if (lo < w->count && w->cuts[lo].index == index)
      return w->cuts[lo].cut;
  }
  return telling_cut(set->lengths[index], max, set->differs[index],
                     set->differs_end[index]);
}

int mprof_name_set_build(mprof_name_set **out, const char *const *names,
                         size_t count) {
  if (!out || (!names && count))
    return MPROF_EINVAL;
  *out = NULL;
  mprof_name_set *set = (mprof_name_set *)calloc(1, sizeof *set);
  if (!set)
    return MPROF_ENOMEM;
  pthread_mutex_init(&set->widths_lock, NULL);
  set->count = count;
  set->shorts = (char **)calloc(count ? count : 1, sizeof *set->shorts);
  set->lengths = (size_t *)calloc(count ? count : 1, sizeof *set->lengths);
  set->differs = (size_t *)calloc(count ? count : 1, sizeof *set->differs);
  set->differs_end =
      (size_t *)calloc(count ? count : 1, sizeof *set->differs_end);
  name_parts *parts = (name_parts *)calloc(count ? count : 1, sizeof *parts);
  int rc =
      set->shorts && set->lengths && set->differs && set->differs_end && parts
          ? 0
          : MPROF_ENOMEM;
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
  if (!rc) {
    set->widths = (width_cuts *)calloc(
        MPROF_NAME_FIT_CHECKED - MPROF_NAME_FIT_MIN + 1, sizeof *set->widths);
    if (!set->widths)
      rc = MPROF_ENOMEM;
  }
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
  free(set->lengths);
  free(set->differs);
  free(set->differs_end);
  if (set->widths)
    for (size_t w = 0; w <= MPROF_NAME_FIT_CHECKED - MPROF_NAME_FIT_MIN; w++)
      free(set->widths[w].cuts);
  free(set->widths);
  pthread_mutex_destroy(&set->widths_lock);
  free(set);
}

size_t mprof_name_set_count(const mprof_name_set *set) {
  return set ? set->count : 0;
}

const char *mprof_name_set_short(const mprof_name_set *set, size_t index) {
  return set && index < set->count ? set->shorts[index] : "";
}

const char *mprof_name_middle(char *buf, size_t size, const char *text,
                              size_t max_chars) {
  if (!buf || !size)
    return buf;
  *buf = '\0';
  if (!text)
    return buf;
  size_t len = char_count(text, strlen(text));
  if (len <= max_chars) {
    copy_out(buf, size, text, strlen(text));
    return buf;
  }
  if (max_chars == 0)
    return buf;
  name_cut plain = {max_chars / 2, 0, 0};
  return put_cut(buf, size, text, len, max_chars, plain);
}

const char *mprof_name_set_fit(const mprof_name_set *set, size_t index,
                               char *buf, size_t size, size_t max_chars) {
  if (!set || index >= set->count)
    return mprof_name_middle(buf, size, "", max_chars);
  const char *s = set->shorts[index];
  if (!buf || !size || set->lengths[index] <= max_chars || max_chars == 0)
    return mprof_name_middle(buf, size, s, max_chars);
  return put_cut(buf, size, s, set->lengths[index], max_chars,
                 cut_of(set, index, max_chars));
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
