/*
 * mprof — internal: UTF-8 validation and XML and JSON writers.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef MPROF_BASE_TEXT_H
#define MPROF_BASE_TEXT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Length of the valid UTF-8 sequence at @p s (1..4), 0 when invalid
 * (overlong forms, surrogates, code points above U+10FFFF, a NUL inside);
 * sets *cp to its code point. */
size_t mprof__utf8_next(const unsigned char *s, uint32_t *cp);

/* Write @p text as XML character data or an attribute value: escapes
 * & < > " ', drops characters XML 1.0 forbids and replaces invalid UTF-8
 * with U+FFFD. */
void mprof__xml_escape(FILE *out, const char *text);
/* ` name="value"` with the value escaped. */
void mprof__xml_attr(FILE *out, const char *name, const char *value);
void mprof__xml_attr_u64(FILE *out, const char *name, uint64_t value);
/* A finite number with up to @p digits decimals; NaN/inf are omitted. */
void mprof__xml_attr_num(FILE *out, const char *name, double value, int digits);

/* A JSON string literal for @p text (NULL gives null), escaping quotes,
 * backslashes and control characters; invalid UTF-8 becomes U+FFFD. */
void mprof__json_string(FILE *out, const char *text);
/* A JSON number; NaN and infinities give null. */
void mprof__json_num(FILE *out, double value, int digits);

/* The fields of one record written as JSON members ("name":value, commas
 * between) or as XML attributes ( name="value"): one list of fields for
 * both report formats. The caller writes the braces or the element. */
typedef struct mprof__fields {
  FILE *out;
  int json;     /* 1: JSON members; 0: XML attributes */
  size_t count; /* members written so far (for JSON's commas) */
} mprof__fields;

/* A string; NULL is null in JSON and left out in XML. */
void mprof__fields_str(mprof__fields *o, const char *name, const char *value);
void mprof__fields_u64(mprof__fields *o, const char *name, uint64_t value);
/* A number with @p digits decimals; one not finite is null in JSON and left
 * out in XML. */
void mprof__fields_num(mprof__fields *o, const char *name, double value,
                       int digits);
/* An offset: a number in JSON, hexadecimal (0x...) in XML. */
void mprof__fields_hex(mprof__fields *o, const char *name, uint64_t value);

#endif /* MPROF_BASE_TEXT_H */
