/*
 * mprof — UTF-8 validation and the XML and JSON writers every output of
 * libmprof uses (reports, the sidecar).
 *
 * SPDX-License-Identifier: MIT
 */
#include <math.h>
#include <stdio.h>

#include "base/text.h"

size_t mprof__utf8_next(const unsigned char *s, uint32_t *cp) {
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

/* @p text as XML character data or an attribute value: escapes & < > " ',
 * drops characters XML 1.0 forbids and replaces invalid UTF-8 with U+FFFD. */
static void xml_escape(FILE *out, const char *text) {
  const unsigned char *s = (const unsigned char *)(text ? text : "");
  while (*s) {
    uint32_t cp;
    size_t len = mprof__utf8_next(s, &cp);
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

/* ` name="value"` with the value escaped. */
static void xml_attr(FILE *out, const char *name, const char *value) {
  fprintf(out, " %s=\"", name);
  xml_escape(out, value);
  fputc('"', out);
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
    size_t len = mprof__utf8_next(s, &cp);
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

/* A JSON number; NaN and infinities give null. */
static void json_num(FILE *out, double value, int digits) {
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

/* JSON: the comma before every member but the first, and the key (none
 * in an array). */
static void json_member(mprof__fields *o, const char *name) {
  if (o->count++)
    fputc(',', o->out);
  if (!o->array) {
    mprof__json_string(o->out, name);
    fputc(':', o->out);
  }
}

void mprof__fields_document(mprof__fields *o, FILE *out, int json,
                            const char *root) {
  mprof__fields doc = {out, json, 0, 0, root, NULL, 0, 1, NULL};
  *o = doc;
  o->container = o;
  if (json)
    fputc('{', out);
  else
    fprintf(out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<%s", root);
}

static void nest(mprof__fields *o, mprof__fields *parent, const char *element,
                 const char *name, int array) {
  mprof__fields child = {parent->out, parent->json,      0, array,
                         element,     parent->container, 0, 0,
                         NULL};
  *o = child;
  if (o->json) {
    json_member(parent, name);
    fputc(array ? '[' : '{', o->out);
    return;
  }
  if (!element) /* transparent */
    return;
  mprof__fields_expand(o->container);
  o->depth = o->container->depth + 1;
  o->container = o;
  o->open = 1;
  fprintf(o->out, "%*s<%s", 2 * o->depth, "", element);
}

void mprof__fields_open(mprof__fields *o, mprof__fields *parent,
                        const char *element, const char *name) {
  nest(o, parent, element, name, 0);
}

void mprof__fields_list(mprof__fields *o, mprof__fields *parent,
                        const char *element, const char *name) {
  nest(o, parent, element, name, 1);
}

void mprof__fields_expand(mprof__fields *o) {
  if (!o->json && o->open) {
    fputs(">\n", o->out);
    o->open = 0;
  }
}

void mprof__fields_close(mprof__fields *o) {
  if (o->json) {
    fputc(o->array ? ']' : '}', o->out);
    if (o->container == o) /* the document */
      fputc('\n', o->out);
  } else if (o->container != o) {
    return; /* transparent */
  } else if (o->text) {
    fputc('>', o->out);
    xml_escape(o->out, o->text);
    fprintf(o->out, "</%s>\n", o->element);
  } else if (o->open) {
    fputs("/>\n", o->out);
  } else {
    fprintf(o->out, "%*s</%s>\n", 2 * o->depth, "", o->element);
  }
}

void mprof__fields_text(mprof__fields *o, const char *name, const char *text) {
  if (o->json)
    mprof__fields_str(o, name, text);
  else
    o->text = text;
}

void mprof__fields_str(mprof__fields *o, const char *name, const char *value) {
  if (!o->json) {
    if (value)
      xml_attr(o->out, name, value);
    return;
  }
  json_member(o, name);
  mprof__json_string(o->out, value);
}

void mprof__fields_u64(mprof__fields *o, const char *name, uint64_t value) {
  if (!o->json) {
    fprintf(o->out, " %s=\"%llu\"", name, (unsigned long long)value);
    return;
  }
  json_member(o, name);
  fprintf(o->out, "%llu", (unsigned long long)value);
}

void mprof__fields_num(mprof__fields *o, const char *name, double value,
                       int digits) {
  if (!o->json) {
    if (isfinite(value)) /* no "-0" */
      fprintf(o->out, " %s=\"%.*f\"", name, digits, value == 0 ? 0 : value);
    return;
  }
  json_member(o, name);
  json_num(o->out, value, digits);
}

void mprof__fields_hex(mprof__fields *o, const char *name, uint64_t value) {
  if (!o->json) {
    fprintf(o->out, " %s=\"0x%llx\"", name, (unsigned long long)value);
    return;
  }
  mprof__fields_u64(o, name, value);
}

void mprof__fields_raw(mprof__fields *o, const char *name, const char *value) {
  if (!o->json) {
    xml_attr(o->out, name, value);
    return;
  }
  json_member(o, name);
  fputs(value, o->out);
}
