/*
 * mprof — helpers shared by the analysis and report sources: an arena,
 * number formatting, XML and JSON escaping, kernel selection, colours.
 *
 * SPDX-License-Identifier: MIT
 */
#include <math.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>

#include "report_internal.h"

/* ---- arena -------------------------------------------------------------- */

struct mprof__arena_chunk {
  mprof__arena_chunk *next;
  size_t used, size;
  _Alignas(16) unsigned char data[];
};

void *mprof__arena_alloc(mprof__arena *arena, size_t size) {
  if (arena->failed)
    return NULL;
  size = (size + 15) & ~(size_t)15;
  mprof__arena_chunk *c = arena->head;
  if (!c || c->size - c->used < size) {
    size_t chunk = size > 32768 ? size : 32768;
    c = (mprof__arena_chunk *)malloc(sizeof *c + chunk);
    if (!c) {
      arena->failed = 1;
      return NULL;
    }
    c->next = arena->head;
    c->used = 0;
    c->size = chunk;
    arena->head = c;
  }
  void *p = c->data + c->used;
  c->used += size;
  memset(p, 0, size);
  return p;
}

char *mprof__arena_strdup(mprof__arena *arena, const char *text) {
  if (!text)
    text = "";
  size_t n = strlen(text);
  char *p = (char *)mprof__arena_alloc(arena, n + 1);
  if (p)
    memcpy(p, text, n + 1);
  return p;
}

char *mprof__arena_printf(mprof__arena *arena, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (n < 0)
    return NULL;
  char *p = (char *)mprof__arena_alloc(arena, (size_t)n + 1);
  if (!p)
    return NULL;
  va_start(ap, fmt);
  vsnprintf(p, (size_t)n + 1, fmt, ap);
  va_end(ap);
  return p;
}

void mprof__arena_free(mprof__arena *arena) {
  mprof__arena_chunk *c = arena->head;
  while (c) {
    mprof__arena_chunk *next = c->next;
    free(c);
    c = next;
  }
  arena->head = NULL;
  arena->failed = 0;
}

/* ---- formatting --------------------------------------------------------- */

void mprof__format_ns(char *buf, size_t size, double ns) {
  double a = fabs(ns);
  if (a >= 1e9)
    snprintf(buf, size, "%.3g s", ns / 1e9);
  else if (a >= 1e6)
    snprintf(buf, size, "%.4g ms", ns / 1e6);
  else if (a >= 1e3)
    snprintf(buf, size, "%.4g us", ns / 1e3);
  else
    snprintf(buf, size, "%.0f ns", ns);
}

void mprof__format_pct(char *buf, size_t size, double fraction) {
  double pct = fraction * 100.0;
  if (pct == 0.0 || pct == 100.0)
    snprintf(buf, size, "%.0f%%", pct);
  else
    snprintf(buf, size, "%.1f%%", pct);
}

void mprof__format_count(char *buf, size_t size, uint64_t value) {
  char digits[32];
  int n = snprintf(digits, sizeof digits, "%llu", (unsigned long long)value);
  size_t o = 0;
  for (int i = 0; i < n && o + 2 < size; i++) {
    if (i && (n - i) % 3 == 0)
      buf[o++] = ',';
    buf[o++] = digits[i];
  }
  buf[o] = 0;
}

/* ---- UTF-8 -------------------------------------------------------------- */

/* Length of the valid UTF-8 sequence at @p s (1..4), 0 when invalid; sets
 * *cp to its code point. */
static size_t utf8_next(const unsigned char *s, uint32_t *cp) {
  unsigned char c = s[0];
  if (c < 0x80) {
    *cp = c;
    return 1;
  }
  size_t len;
  uint32_t v, min;
  if ((c & 0xe0) == 0xc0) {
    len = 2;
    v = c & 0x1f;
    min = 0x80;
  } else if ((c & 0xf0) == 0xe0) {
    len = 3;
    v = c & 0x0f;
    min = 0x800;
  } else if ((c & 0xf8) == 0xf0) {
    len = 4;
    v = c & 0x07;
    min = 0x10000;
  } else {
    return 0;
  }
  for (size_t i = 1; i < len; i++) {
    if ((s[i] & 0xc0) != 0x80)
      return 0;
    v = (v << 6) | (s[i] & 0x3f);
  }
  if (v < min || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff))
    return 0;
  *cp = v;
  return len;
}

void mprof__xml_escape(FILE *out, const char *text) {
  const unsigned char *s = (const unsigned char *)(text ? text : "");
  while (*s) {
    uint32_t cp;
    size_t len = utf8_next(s, &cp);
    if (!len) {
      fputs("\xef\xbf\xbd", out);
      s++;
      continue;
    }
    switch (cp) {
    case '&': fputs("&amp;", out); break;
    case '<': fputs("&lt;", out); break;
    case '>': fputs("&gt;", out); break;
    case '"': fputs("&quot;", out); break;
    case '\'': fputs("&apos;", out); break;
    case '\t': fputs("&#9;", out); break;
    case '\n': fputs("&#10;", out); break;
    case '\r': fputs("&#13;", out); break;
    default:
      /* XML 1.0 forbids other C0 controls and U+FFFE/U+FFFF. */
      if (cp < 0x20 || cp == 0xfffe || cp == 0xffff)
        fputs("\xef\xbf\xbd", out);
      else
        fwrite(s, 1, len, out);
    }
    s += len;
  }
}

void mprof__xml_attr(FILE *out, const char *name, const char *value) {
  fprintf(out, " %s=\"", name);
  mprof__xml_escape(out, value);
  fputc('"', out);
}

void mprof__xml_attr_u64(FILE *out, const char *name, uint64_t value) {
  fprintf(out, " %s=\"%llu\"", name, (unsigned long long)value);
}

void mprof__xml_attr_num(FILE *out, const char *name, double value,
                         int digits) {
  if (!isfinite(value))
    return;
  if (value == 0)
    value = 0; /* no "-0" */
  fprintf(out, " %s=\"%.*f\"", name, digits, value);
}

void mprof__json_string(FILE *out, const char *text) {
  if (!text) {
    fputs("null", out);
    return;
  }
  const unsigned char *s = (const unsigned char *)text;
  fputc('"', out);
  while (*s) {
    uint32_t cp;
    size_t len = utf8_next(s, &cp);
    if (!len) {
      fputs("\\ufffd", out);
      s++;
      continue;
    }
    switch (cp) {
    case '"': fputs("\\\"", out); break;
    case '\\': fputs("\\\\", out); break;
    case '\n': fputs("\\n", out); break;
    case '\r': fputs("\\r", out); break;
    case '\t': fputs("\\t", out); break;
    default:
      if (cp < 0x20 || cp == 0x7f)
        fprintf(out, "\\u%04x", (unsigned)cp);
      else
        fwrite(s, 1, len, out);
    }
    s += len;
  }
  fputc('"', out);
}

void mprof__json_num(FILE *out, double value, int digits) {
  if (!isfinite(value)) {
    fputs("null", out);
    return;
  }
  if (value == 0)
    value = 0;
  if (digits <= 0 && fabs(value) < 9.0e15)
    fprintf(out, "%.0f", value);
  else
    fprintf(out, "%.*f", digits, value);
}

/* ---- kernel selection --------------------------------------------------- */

int mprof__matcher_init(mprof__matcher *m, const char *pattern, int exact) {
  memset(m, 0, sizeof *m);
  if (!pattern || !*pattern)
    return 0;
  m->pattern = pattern;
  if (exact)
    return 0;
  regex_t *re = (regex_t *)malloc(sizeof *re);
  if (!re)
    return mprof__error_set(MPROF_ENOMEM, "out of memory");
  int rc = regcomp(re, pattern, REG_EXTENDED | REG_NOSUB);
  if (rc) {
    char why[256];
    regerror(rc, re, why, sizeof why);
    free(re);
    m->pattern = NULL;
    return mprof__error_set(MPROF_EINVAL,
                            "--kernel '%s' is neither a kernel name nor a "
                            "valid regular expression: %s",
                            pattern, why);
  }
  m->regex = 1;
  m->compiled = re;
  return 0;
}

int mprof__matcher_test(const mprof__matcher *m, const char *name,
                        const char *mangled) {
  if (!m->pattern)
    return 1;
  if (!m->regex)
    return strcmp(name, m->pattern) == 0 || strcmp(mangled, m->pattern) == 0;
  const regex_t *re = (const regex_t *)m->compiled;
  return regexec(re, name, 0, NULL, 0) == 0 ||
         regexec(re, mangled, 0, NULL, 0) == 0;
}

void mprof__matcher_free(mprof__matcher *m) {
  if (m->compiled) {
    regfree((regex_t *)m->compiled);
    free(m->compiled);
  }
  memset(m, 0, sizeof *m);
}

int mprof__select_kernels(size_t **out, size_t *count, const mprof_join *join,
                          const char *pattern) {
  size_t n = mprof_join_kernel_count(join);
  *out = NULL;
  *count = 0;
  int exact = 0;
  for (size_t k = 0; pattern && k < n && !exact; k++) {
    const mprof_kernel_stats *ks = mprof_join_kernel(join, k);
    exact = strcmp(ks->mangled, pattern) == 0 || strcmp(ks->name, pattern) == 0;
  }
  mprof__matcher m;
  int rc = mprof__matcher_init(&m, pattern, exact);
  if (rc)
    return rc;
  size_t *list = (size_t *)malloc((n ? n : 1) * sizeof *list);
  if (!list) {
    mprof__matcher_free(&m);
    return mprof__error_set(MPROF_ENOMEM, "out of memory");
  }
  size_t found = 0;
  for (size_t k = 0; k < n; k++) {
    const mprof_kernel_stats *ks = mprof_join_kernel(join, k);
    if (mprof__matcher_test(&m, ks->name, ks->mangled))
      list[found++] = k;
  }
  mprof__matcher_free(&m);
  if (!found && pattern && *pattern) {
    const mprof_kernel_stats *top = mprof_join_kernel(join, 0);
    free(list);
    if (top)
      return mprof__error_set(MPROF_ENOTFOUND,
                              "%s: no kernel matches '%s' (%zu kernels; the "
                              "dominant one is '%s')",
                              mprof_trace_path(mprof_join_trace(join)), pattern,
                              n, top->name);
    return mprof__error_set(MPROF_ENOTFOUND,
                            "%s: no kernel matches '%s' (the trace has no "
                            "kernels)",
                            mprof_trace_path(mprof_join_trace(join)), pattern);
  }
  *out = list;
  *count = found;
  return 0;
}

/* ---- colours ------------------------------------------------------------ */

void mprof__style_init(mprof__style *style, int color) {
  if (color) {
    style->bold = "\x1b[1m";
    style->dim = "\x1b[2m";
    style->red = "\x1b[1;31m";
    style->yellow = "\x1b[33m";
    style->green = "\x1b[32m";
    style->cyan = "\x1b[36m";
    style->reset = "\x1b[0m";
  } else {
    style->bold = style->dim = style->red = style->yellow = style->green =
        style->cyan = style->reset = "";
  }
}

const char *mprof__state_color(const mprof__style *style, uint32_t state) {
  switch (state) {
  case MPROF_STATE_ISSUE: return style->red;
  case MPROF_STATE_MINOR: return style->yellow;
  case MPROF_STATE_OK: return style->green;
  default: return style->dim;
  }
}
