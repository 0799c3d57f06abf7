/*
 * mprof — the short form of a kernel name (mprof/names.h).
 *
 * SPDX-License-Identifier: MIT
 */
#include <stdlib.h>
#include <string.h>

#include "mprof/format.h"
#include "mprof/names.h"

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
