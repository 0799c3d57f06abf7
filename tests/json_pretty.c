/*
 * mprof tests — a JSON document on stdin, pretty-printed on stdout: one
 * member or element per line, two-space indents, members in their order and
 * numbers as written (json-c keeps their text), so that a golden file can be
 * reviewed as a diff. Exit 2 when stdin is not one JSON document.
 *
 * SPDX-License-Identifier: MIT
 */
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(void) {
  size_t size = 0, cap = 1 << 16;
  char *text = (char *)malloc(cap);
  size_t n;
  while (text && (n = fread(text + size, 1, cap - size, stdin)) > 0) {
    size += n;
    if (size == cap)
      text = (char *)realloc(text, cap *= 2);
  }
  if (!text)
    return 2;
  json_tokener *tok = json_tokener_new();
  json_object *doc = json_tokener_parse_ex(tok, text, (int)size);
  enum json_tokener_error err = json_tokener_get_error(tok);
  size_t end = json_tokener_get_parse_end(tok);
  while (end < size && strchr(" \t\r\n", text[end]))
    end++;
  if (!doc || err != json_tokener_success || end != size) {
    fprintf(stderr, "json_pretty: not one JSON document (%s at byte %zu)\n",
            doc ? "trailing data" : json_tokener_error_desc(err), end);
    return 2;
  }
  puts(json_object_to_json_string_ext(doc, JSON_C_TO_STRING_PRETTY |
                                               JSON_C_TO_STRING_SPACED |
                                               JSON_C_TO_STRING_NOSLASHESCAPE));
  json_object_put(doc);
  json_tokener_free(tok);
  free(text);
  return 0;
}
