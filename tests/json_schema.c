/*
 * mprof tests — a small JSON Schema checker (see json_schema.h).
 *
 * SPDX-License-Identifier: MIT
 */
#include "json_schema.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

typedef struct checker {
  json_object *root;
  char *why;
  size_t why_size;
} checker;

static int fail(checker *c, const char *path, const char *fmt, ...) {
  char what[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  snprintf(c->why, c->why_size, "%s: %s", *path ? path : "$", what);
  return -1;
}

static int check(checker *c, json_object *schema, json_object *doc,
                 const char *path);

static int type_matches(const char *type, json_object *doc) {
  enum json_type t = json_object_get_type(doc);
  if (strcmp(type, "null") == 0)
    return t == json_type_null;
  if (strcmp(type, "boolean") == 0)
    return t == json_type_boolean;
  if (strcmp(type, "object") == 0)
    return t == json_type_object;
  if (strcmp(type, "array") == 0)
    return t == json_type_array;
  if (strcmp(type, "string") == 0)
    return t == json_type_string;
  if (strcmp(type, "number") == 0)
    return t == json_type_int || t == json_type_double;
  if (strcmp(type, "integer") == 0) {
    if (t == json_type_int)
      return 1;
    if (t != json_type_double)
      return 0;
    double v = json_object_get_double(doc);
    return isfinite(v) && v == floor(v);
  }
  return -1;
}

static int json_equal(json_object *a, json_object *b) {
  if (json_object_get_type(a) != json_object_get_type(b)) {
    int na = json_object_is_type(a, json_type_int) ||
             json_object_is_type(a, json_type_double);
    int nb = json_object_is_type(b, json_type_int) ||
             json_object_is_type(b, json_type_double);
    return na && nb && json_object_get_double(a) == json_object_get_double(b);
  }
  return strcmp(json_object_to_json_string_ext(a, JSON_C_TO_STRING_PLAIN),
                json_object_to_json_string_ext(b, JSON_C_TO_STRING_PLAIN)) == 0;
}

/* "#/$defs/NAME", or draft-07's "#/definitions/NAME" (speedscope's own
 * file-format schema uses those). */
static json_object *resolve(checker *c, const char *ref) {
  const char *container = NULL, *name = NULL;
  if (strncmp(ref, "#/$defs/", 8) == 0) {
    container = "$defs";
    name = ref + 8;
  } else if (strncmp(ref, "#/definitions/", 14) == 0) {
    container = "definitions";
    name = ref + 14;
  } else {
    return NULL;
  }
  json_object *defs, *target;
  if (!json_object_object_get_ex(c->root, container, &defs) ||
      !json_object_object_get_ex(defs, name, &target))
    return NULL;
  return target;
}

static int check(checker *c, json_object *schema, json_object *doc,
                 const char *path) {
  if (json_object_is_type(schema, json_type_boolean))
    return json_object_get_boolean(schema)
               ? 0
               : fail(c, path, "no value is allowed here");
  if (!json_object_is_type(schema, json_type_object))
    return fail(c, path, "the schema is not an object");
  char sub[1024];
  json_object_object_foreach(schema, keyword, value) {
    if (strcmp(keyword, "$schema") == 0 || strcmp(keyword, "$id") == 0 ||
        strcmp(keyword, "title") == 0 || strcmp(keyword, "description") == 0 ||
        strcmp(keyword, "$defs") == 0 || strcmp(keyword, "definitions") == 0)
      continue;
    if (strcmp(keyword, "$ref") == 0) {
      json_object *target = resolve(c, json_object_get_string(value));
      if (!target)
        return fail(c, path, "unresolved $ref %s",
                    json_object_get_string(value));
      if (check(c, target, doc, path))
        return -1;
    } else if (strcmp(keyword, "type") == 0) {
      int ok = 0;
      if (json_object_is_type(value, json_type_string)) {
        ok = type_matches(json_object_get_string(value), doc);
      } else {
        for (size_t i = 0; i < json_object_array_length(value) && ok != 1;
             i++) {
          int m = type_matches(
              json_object_get_string(json_object_array_get_idx(value, i)), doc);
          ok = m < 0 ? m : ok | m;
        }
      }
      if (ok < 0)
        return fail(c, path, "unknown type in schema");
      if (!ok)
        return fail(c, path, "expected type %s, got %s",
                    json_object_to_json_string(value),
                    json_type_to_name(json_object_get_type(doc)));
    } else if (strcmp(keyword, "enum") == 0) {
      int found = 0;
      for (size_t i = 0; i < json_object_array_length(value) && !found; i++)
        found = json_equal(json_object_array_get_idx(value, i), doc);
      if (!found)
        return fail(c, path, "%s is not one of %s",
                    json_object_to_json_string(doc),
                    json_object_to_json_string(value));
    } else if (strcmp(keyword, "const") == 0) {
      if (!json_equal(value, doc))
        return fail(c, path, "%s is not %s", json_object_to_json_string(doc),
                    json_object_to_json_string(value));
    } else if (strcmp(keyword, "anyOf") == 0) {
      int any = 0;
      char first[512] = "";
      for (size_t i = 0; i < json_object_array_length(value) && !any; i++) {
        if (check(c, json_object_array_get_idx(value, i), doc, path) == 0)
          any = 1;
        else if (!*first)
          snprintf(first, sizeof first, "%s", c->why);
      }
      if (!any)
        return fail(c, path, "matches no alternative of anyOf (%s)", first);
    } else if (strcmp(keyword, "minimum") == 0 ||
               strcmp(keyword, "maximum") == 0) {
      if (!json_object_is_type(doc, json_type_int) &&
          !json_object_is_type(doc, json_type_double))
        continue;
      double v = json_object_get_double(doc);
      double limit = json_object_get_double(value);
      if (keyword[1] == 'i' ? v < limit : v > limit)
        return fail(c, path, "%g is %s %g", v,
                    keyword[1] == 'i' ? "below the minimum"
                                      : "above the "
                                        "maximum",
                    limit);
    } else if (strcmp(keyword, "required") == 0) {
      if (!json_object_is_type(doc, json_type_object))
        continue;
      for (size_t i = 0; i < json_object_array_length(value); i++) {
        const char *name =
            json_object_get_string(json_object_array_get_idx(value, i));
        if (!json_object_object_get_ex(doc, name, NULL))
          return fail(c, path, "lacks the required key \"%s\"", name);
      }
    } else if (strcmp(keyword, "properties") == 0 ||
               strcmp(keyword, "additionalProperties") == 0) {
      if (!json_object_is_type(doc, json_type_object))
        continue;
      json_object *props = NULL, *extra = NULL;
      json_object_object_get_ex(schema, "properties", &props);
      json_object_object_get_ex(schema, "additionalProperties", &extra);
      int is_props = strcmp(keyword, "properties") == 0;
      json_object_object_foreach(doc, name, member) {
        json_object *s = NULL;
        int known = props && json_object_object_get_ex(props, name, &s);
        snprintf(sub, sizeof sub, "%s.%s", *path ? path : "$", name);
        if (is_props && known) {
          if (check(c, s, member, sub))
            return -1;
        } else if (!is_props && !known && extra) {
          if (json_object_is_type(extra, json_type_boolean) &&
              !json_object_get_boolean(extra))
            return fail(c, sub, "is not allowed (additionalProperties)");
          if (check(c, extra, member, sub))
            return -1;
        }
      }
    } else if (strcmp(keyword, "items") == 0) {
      if (!json_object_is_type(doc, json_type_array))
        continue;
      for (size_t i = 0; i < json_object_array_length(doc); i++) {
        snprintf(sub, sizeof sub, "%s[%zu]", *path ? path : "$", i);
        if (check(c, value, json_object_array_get_idx(doc, i), sub))
          return -1;
      }
    } else if (strcmp(keyword, "minItems") == 0 ||
               strcmp(keyword, "maxItems") == 0) {
      if (!json_object_is_type(doc, json_type_array))
        continue;
      size_t n = json_object_array_length(doc);
      size_t limit = (size_t)json_object_get_int64(value);
      if (keyword[1] == 'i' ? n < limit : n > limit)
        return fail(c, path, "has %zu items (%s %zu)", n, keyword, limit);
    } else {
      return fail(c, path, "the checker does not know the keyword \"%s\"",
                  keyword);
    }
  }
  return 0;
}

int json_schema_validate(json_object *schema, json_object *doc, char *why,
                         size_t why_size) {
  checker c = {schema, why, why_size};
  if (why_size)
    why[0] = 0;
  return check(&c, schema, doc, "");
}

int json_schema_validate_text(const char *schema_path, const char *text,
                              char *why, size_t why_size) {
  json_object *schema = json_object_from_file(schema_path);
  if (!schema) {
    snprintf(why, why_size, "%s: cannot read the schema", schema_path);
    return -1;
  }
  enum json_tokener_error err;
  json_object *doc = json_tokener_parse_verbose(text, &err);
  int rc;
  if (!doc) {
    snprintf(why, why_size, "not JSON: %s", json_tokener_error_desc(err));
    rc = -1;
  } else {
    rc = json_schema_validate(schema, doc, why, why_size);
  }
  json_object_put(doc);
  json_object_put(schema);
  return rc;
}
