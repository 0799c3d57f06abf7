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

/* A JSON string literal for @p text (NULL gives null), escaping quotes,
 * backslashes and control characters; invalid UTF-8 becomes U+FFFD. */
void mprof__json_string(FILE *out, const char *text);

/*
 * One writer for both report formats: a record's fields are JSON members
 * ("name":value, commas between) or XML attributes ( name="value"), and
 * records nest as JSON objects and arrays or as XML elements, indented two
 * spaces a level. A record without an XML element (element NULL) is
 * transparent in XML: its fields are attributes of the enclosing element,
 * its records that element's children. A bare record ({out, json}) is a
 * list of fields whose braces or element the caller writes; only JSON
 * records nest in one.
 */
typedef struct mprof__fields {
  FILE *out;
  int json;     /* 1: JSON members; 0: XML attributes */
  size_t count; /* JSON: members or items written so far (for the commas) */
  int array;    /* JSON: an array, whose items have no name */
  const char *element;             /* XML: its element, NULL if none */
  struct mprof__fields *container; /* XML: the element its records go in */
  int depth;                       /* XML: the element's indentation */
  int open;                        /* XML: the start tag is not ended yet */
  const char *text;                /* XML: content, written at the end */
} mprof__fields;

/* The document: the XML declaration and the root element @p root, or a
 * JSON object. mprof__fields_close() ends it with a newline. */
void mprof__fields_document(mprof__fields *o, FILE *out, int json,
                            const char *root);
/* A record in @p parent: XML element @p element, JSON object; @p name is
 * its member name when the parent is an object. */
void mprof__fields_open(mprof__fields *o, mprof__fields *parent,
                        const char *element, const char *name);
/* The same as a JSON array. */
void mprof__fields_list(mprof__fields *o, mprof__fields *parent,
                        const char *element, const char *name);
/* "/>" or the end tag in XML, "}" or "]" in JSON. */
void mprof__fields_close(mprof__fields *o);
/* XML: end the start tag now, so that the element has an end tag even
 * without children. */
void mprof__fields_expand(mprof__fields *o);
/* The record's text: the XML element's content, the JSON member @p name. */
void mprof__fields_text(mprof__fields *o, const char *name, const char *text);

/* A string; NULL is null in JSON and left out in XML. */
void mprof__fields_str(mprof__fields *o, const char *name, const char *value);
void mprof__fields_u64(mprof__fields *o, const char *name, uint64_t value);
/* A number with @p digits decimals; one not finite is null in JSON and left
 * out in XML. */
void mprof__fields_num(mprof__fields *o, const char *name, double value,
                       int digits);
/* An offset: a number in JSON, hexadecimal (0x...) in XML. */
void mprof__fields_hex(mprof__fields *o, const char *name, uint64_t value);
/* A literal (true, -12, [1,2,3]) as it is in JSON, quoted in XML. */
void mprof__fields_raw(mprof__fields *o, const char *name, const char *value);

#endif /* MPROF_BASE_TEXT_H */
