/*
 * mprof — MKPROF1.2: reader, conversion to a trace, and exporter.
 *
 * SPDX-License-Identifier: MIT
 */
#include <errno.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "mprof/mkprof.h"
#include "mprof/trace.h"
#include "mprof/writer.h"

struct mprof_mkprof {
  char *name;
  unsigned char *data;
  size_t size;
  mprof_mkprof_layout layout;
  char *format_version;
  char *config_text; /* NUL-terminated copy, for mprof_mkprof_to_trace */
  mprof_mkprof_instruction_type *types;
  size_t type_count;
  mprof_mkprof_param *params;
  mprof_mkprof_unit *units;
  size_t unit_count;
  mprof_mkprof_event_type *event_types;
  size_t event_type_count;
  mprof_mkprof_event_type *controllers;
  size_t controller_count;
  char **names; /* every string the tables point to */
  size_t name_count, name_cap;
  const int32_t *instructions;
  const uint32_t *starts, *ends, *events;
};

/* "NAME: at byte N: MESSAGE" */
static int bad(const mprof_mkprof *m, uint64_t at, const char *fmt, ...)
    MPROF__PRINTF(3, 4);

static int bad(const mprof_mkprof *m, uint64_t at, const char *fmt, ...) {
  char msg[768];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return mprof__error_set(MPROF_EFORMAT, "%s: at byte %" PRIu64 ": %s", m->name,
                          at, msg);
}

void mprof_mkprof_free(mprof_mkprof *m) {
  if (!m)
    return;
  for (size_t i = 0; i < m->name_count; i++)
    free(m->names[i]);
  free(m->names);
  free(m->types);
  free(m->params);
  free(m->units);
  free(m->event_types);
  free(m->controllers);
  free(m->format_version);
  free(m->config_text);
  free(m->data);
  free(m->name);
  free(m);
}

static const char *keep_name(mprof_mkprof *m, const char *s) {
  if (m->name_count == m->name_cap) {
    size_t cap = m->name_cap ? 2 * m->name_cap : 32;
    char **grown = (char **)realloc(m->names, cap * sizeof *grown);
    if (!grown)
      return NULL;
    m->names = grown;
    m->name_cap = cap;
  }
  char *copy = strdup(s);
  if (!copy)
    return NULL;
  m->names[m->name_count++] = copy;
  return copy;
}

/* Saturating a * b. */
static uint64_t mul_sat(uint64_t a, uint64_t b) {
  if (a && b > UINT64_MAX / a)
    return UINT64_MAX;
  return a * b;
}

/* The config's end: the '}' that closes the first '{', braces inside JSON
 * strings (and escaped quotes) not counted. */
static int find_config_end(const mprof_mkprof *m, size_t start, size_t *end) {
  const unsigned char *d = m->data;
  int depth = 0, in_string = 0, escape = 0;
  for (size_t i = start; i < m->size; i++) {
    unsigned char c = d[i];
    if (in_string) {
      if (escape)
        escape = 0;
      else if (c == '\\')
        escape = 1;
      else if (c == '"')
        in_string = 0;
      else if (c < 0x20)
        return bad(m, i,
                   "config: byte 0x%02x inside a JSON string (a JSON "
                   "config cut short or corrupt)",
                   c);
    } else if (c == '"') {
      in_string = 1;
    } else if (c == '{') {
      depth++;
    } else if (c == '}') {
      if (--depth == 0) {
        *end = i + 1;
        return 0;
      }
    } else if (c == 0) {
      return bad(m, i,
                 "config: NUL byte before the JSON config closed "
                 "(a JSON config cut short or corrupt)");
    }
  }
  return bad(m, m->size,
             "config: the JSON that starts at byte %zu does not close "
             "before the end of the file",
             start);
}

/* ---- config values ------------------------------------------------------ */

typedef struct config_ctx {
  mprof_mkprof *m;
  uint64_t at; /* where the config starts, for messages */
} config_ctx;

/* An integer (or an integral number, or a boolean when @p allow_bool). */
static int json_integer(json_object *v, int allow_bool, int64_t *out) {
  switch (json_object_get_type(v)) {
  case json_type_int:
    errno = 0;
    *out = json_object_get_int64(v);
    return errno == 0;
  case json_type_double: {
    double d = json_object_get_double(v);
    if (d != d || d < -9.2e18 || d > 9.2e18 || (double)(int64_t)d != d)
      return 0;
    *out = (int64_t)d;
    return 1;
  }
  case json_type_boolean:
    if (!allow_bool)
      return 0;
    *out = json_object_get_boolean(v) ? 1 : 0;
    return 1;
  default: return 0;
  }
}

/* Key @p key of @p obj as an integer in [lo, hi]. Returns 1 found, 0
 * absent (an error when @p required), negative on error. */
static int get_int(const config_ctx *c, json_object *obj, const char *where,
                   const char *key, int required, int64_t lo, int64_t hi,
                   int64_t *out) {
  json_object *v;
  if (!json_object_object_get_ex(obj, key, &v) || !v) {
    if (required)
      return bad(c->m, c->at, "config: %s%s'%s' is missing", where,
                 *where ? ": " : "", key);
    return 0;
  }
  int64_t x;
  if (!json_integer(v, 1, &x))
    return bad(c->m, c->at, "config: %s%s'%s' is not an integer", where,
               *where ? ": " : "", key);
  if (x < lo || x > hi)
    return bad(c->m, c->at,
               "config: %s%s'%s' is %" PRId64 ", outside %" PRId64 "..%" PRId64,
               where, *where ? ": " : "", key, x, lo, hi);
  *out = x;
  return 1;
}

static int get_object(const config_ctx *c, json_object *obj, const char *key,
                      int required, json_object **out) {
  json_object *v;
  *out = NULL;
  if (!json_object_object_get_ex(obj, key, &v) || !v) {
    if (required)
      return bad(c->m, c->at, "config: '%s' is missing", key);
    return 0;
  }
  if (!json_object_is_type(v, json_type_object))
    return bad(c->m, c->at, "config: '%s' is not an object", key);
  *out = v;
  return 1;
}

/* An object key that must be an integer ("12"). */
static int key_integer(const config_ctx *c, const char *table, const char *key,
                       int64_t *out) {
  char *end;
  errno = 0;
  long long x = strtoll(key, &end, 10);
  if (!*key || *end || errno)
    return bad(c->m, c->at, "config: %s: key '%.60s' is not an integer", table,
               key);
  *out = (int64_t)x;
  return 0;
}

/* "#RRGGBB" → 0xFFRRGGBB. Like the viewer, any 1..8 hex digits parse. */
static int parse_color(const config_ctx *c, const char *where,
                       json_object *entry, uint32_t *out) {
  json_object *v;
  *out = 0;
  if (!json_object_object_get_ex(entry, "color", &v) || !v)
    return 0;
  const char *s = json_object_get_string(v);
  if (!json_object_is_type(v, json_type_string) || s[0] != '#' || !s[1] ||
      strlen(s) > 9 || strspn(s + 1, "0123456789abcdefABCDEF") != strlen(s + 1))
    return bad(c->m, c->at, "config: %s: color '%.40s' is not #RRGGBB", where,
               s);
  *out = 0xff000000u | ((uint32_t)strtoul(s + 1, NULL, 16) & 0xffffffu);
  return 0;
}

static int get_name(const config_ctx *c, const char *where, json_object *entry,
                    int required, const char **out) {
  json_object *v;
  *out = "";
  if (!json_object_object_get_ex(entry, "name", &v) || !v) {
    if (required)
      return bad(c->m, c->at, "config: %s: 'name' is missing", where);
    return 0;
  }
  if (!json_object_is_type(v, json_type_string))
    return bad(c->m, c->at, "config: %s: 'name' is not a string", where);
  *out = keep_name(c->m, json_object_get_string(v));
  if (!*out)
    return mprof__error_set(MPROF_ENOMEM, "%s: out of memory", c->m->name);
  return 0;
}

static uint32_t role_of(const char *name) {
  char lower[64];
  size_t n = 0;
  for (; name[n] && n < sizeof lower - 1; n++)
    lower[n] =
        (char)(name[n] >= 'A' && name[n] <= 'Z' ? name[n] + 32 : name[n]);
  lower[n] = '\0';
  if (strstr(lower, "load"))
    return MPROF_ROLE_LOADER;
  if (strstr(lower, "consum"))
    return MPROF_ROLE_CONSUMER;
  if (strstr(lower, "stor"))
    return MPROF_ROLE_STORER;
  return MPROF_ROLE_OTHER;
}

static int contains_error(const char *name) {
  for (const char *p = name; *p; p++)
    if ((p[0] | 32) == 'e' && (p[1] | 32) == 'r' && (p[2] | 32) == 'r' &&
        (p[3] | 32) == 'o' && (p[4] | 32) == 'r')
      return 1;
  return 0;
}

static int read_types(const config_ctx *c, json_object *table) {
  mprof_mkprof *m = c->m;
  size_t count = (size_t)json_object_object_length(table), params = 0;
  json_object_object_foreach(table, key0, val0) {
    (void)key0;
    json_object *p;
    if (json_object_is_type(val0, json_type_object) &&
        json_object_object_get_ex(val0, "params", &p) &&
        json_object_is_type(p, json_type_object))
      params += (size_t)json_object_object_length(p);
  }
  m->types = (mprof_mkprof_instruction_type *)calloc(count ? count : 1,
                                                     sizeof *m->types);
  m->params =
      (mprof_mkprof_param *)calloc(params ? params : 1, sizeof *m->params);
  if (!m->types || !m->params)
    return mprof__error_set(MPROF_ENOMEM, "%s: out of memory", m->name);
  size_t next_param = 0;
  json_object_object_foreach(table, key, val) {
    char where[96];
    snprintf(where, sizeof where, "instruction_types[%.40s]", key);
    mprof_mkprof_instruction_type *t = &m->types[m->type_count];
    int rc = key_integer(c, "instruction_types", key, &t->id);
    if (rc)
      return rc;
    if (!json_object_is_type(val, json_type_object))
      return bad(m, c->at, "config: %s is not an object", where);
    if ((rc = get_name(c, where, val, 1, &t->name)) ||
        (rc = parse_color(c, where, val, &t->color)))
      return rc;
    json_object *p;
    if (json_object_object_get_ex(val, "params", &p) && p) {
      if (!json_object_is_type(p, json_type_object))
        return bad(m, c->at, "config: %s: 'params' is not an object", where);
      t->params = &m->params[next_param];
      json_object_object_foreach(p, pos, pname) {
        int64_t position = 0;
        if ((rc = key_integer(c, where, pos, &position)))
          return rc;
        if (position < 0 || position >= m->layout.instruction_length)
          return bad(m, c->at,
                     "config: %s: parameter position %" PRId64
                     " is outside the %u-word instruction",
                     where, position, m->layout.instruction_length);
        if (!json_object_is_type(pname, json_type_string))
          return bad(m, c->at,
                     "config: %s: the name of parameter %" PRId64
                     " is not a string",
                     where, position);
        mprof_mkprof_param *param = &m->params[next_param++];
        param->position = (uint32_t)position;
        param->name = keep_name(m, json_object_get_string(pname));
        if (!param->name)
          return mprof__error_set(MPROF_ENOMEM, "%s: out of memory", m->name);
        t->param_count++;
      }
    }
    m->type_count++;
  }
  return 0;
}

static int read_range(const config_ctx *c, const char *where, json_object *obj,
                      const char *key, int required, uint32_t *start,
                      uint32_t *end) {
  json_object *r;
  if (!json_object_object_get_ex(obj, key, &r) || !r) {
    if (required)
      return bad(c->m, c->at, "config: %s: '%s' is missing", where, key);
    return 0;
  }
  if (!json_object_is_type(r, json_type_object))
    return bad(c->m, c->at, "config: %s: '%s' is not an object", where, key);
  char inner[160];
  snprintf(inner, sizeof inner, "%s.%s", where, key);
  int64_t hi = (int64_t)c->m->layout.timing_length - 1, a, b;
  int rc = get_int(c, r, inner, "start", 1, 0, hi, &a);
  if (rc < 0)
    return rc;
  rc = get_int(c, r, inner, "end", 1, 0, hi, &b);
  if (rc < 0)
    return rc;
  if (b < a)
    return bad(c->m, c->at,
               "config: %s: end %" PRId64 " is before start %" PRId64, inner, b,
               a);
  *start = (uint32_t)a;
  *end = (uint32_t)b;
  return 1;
}

static int read_units(const config_ctx *c, json_object *table) {
  mprof_mkprof *m = c->m;
  size_t count = (size_t)json_object_object_length(table);
  m->units = (mprof_mkprof_unit *)calloc(count ? count : 1, sizeof *m->units);
  if (!m->units)
    return mprof__error_set(MPROF_ENOMEM, "%s: out of memory", m->name);
  json_object_object_foreach(table, key, val) {
    char where[96];
    snprintf(where, sizeof where, "functional_units[%.40s]", key);
    mprof_mkprof_unit *u = &m->units[m->unit_count];
    int rc = key_integer(c, "functional_units", key, &u->id);
    if (rc)
      return rc;
    if (!json_object_is_type(val, json_type_object))
      return bad(m, c->at, "config: %s is not an object", where);
    if ((rc = get_name(c, where, val, 1, &u->name)))
      return rc;
    if ((rc = read_range(c, where, val, "event_range", 1, &u->event_start,
                         &u->event_end)) < 0)
      return rc;
    rc = read_range(c, where, val, "special_events", 0, &u->special_start,
                    &u->special_end);
    if (rc < 0)
      return rc;
    u->has_special = rc;
    u->height_multiplier = 1.0;
    json_object *h;
    if (json_object_object_get_ex(val, "height_multiplier", &h) && h) {
      if (!json_object_is_type(h, json_type_double) &&
          !json_object_is_type(h, json_type_int))
        return bad(m, c->at, "config: %s: 'height_multiplier' is not a number",
                   where);
      u->height_multiplier = json_object_get_double(h);
    }
    u->role = role_of(u->name);
    m->unit_count++;
  }
  return 0;
}

static int read_event_types(const config_ctx *c, json_object *table,
                            const char *what, int slots,
                            mprof_mkprof_event_type **out, size_t *count) {
  mprof_mkprof *m = c->m;
  size_t n = (size_t)json_object_object_length(table);
  *out = (mprof_mkprof_event_type *)calloc(n ? n : 1, sizeof **out);
  if (!*out)
    return mprof__error_set(MPROF_ENOMEM, "%s: out of memory", m->name);
  json_object_object_foreach(table, key, val) {
    char where[96];
    snprintf(where, sizeof where, "%s[%.40s]", what, key);
    mprof_mkprof_event_type *e = &(*out)[*count];
    int rc = key_integer(c, what, key, &e->id);
    if (rc)
      return rc;
    if (slots && (e->id < 0 || e->id >= m->layout.timing_length))
      return bad(m, c->at,
                 "config: %s: slot %" PRId64 " is outside the %u timing slots",
                 where, e->id, m->layout.timing_length);
    if (!json_object_is_type(val, json_type_object))
      return bad(m, c->at, "config: %s is not an object", where);
    if ((rc = get_name(c, where, val, 1, &e->name)) ||
        (rc = parse_color(c, where, val, &e->color)))
      return rc;
    e->is_error = contains_error(e->name);
    (*count)++;
  }
  return 0;
}

static int read_config(mprof_mkprof *m, json_object *root) {
  config_ctx c = {m, m->layout.config_offset};
  mprof_mkprof_layout *l = &m->layout;
  json_object *types, *units, *format, *events, *controllers;
  int64_t v;
  int rc;
  if ((rc = get_object(&c, root, "instruction_types", 1, &types)) < 0 ||
      (rc = get_object(&c, root, "functional_units", 1, &units)) < 0 ||
      (rc = get_object(&c, root, "instruction_format", 1, &format)) < 0)
    return rc;
  if ((rc = get_int(&c, root, "", "num_gpus", 1, 1, UINT32_MAX, &v)) < 0)
    return rc;
  l->num_gpus = (uint32_t)v;
  if ((rc = get_int(&c, root, "", "total_processors", 1, 0, UINT32_MAX, &v)) <
      0)
    return rc;
  l->total_processors = (uint32_t)v;
  if ((rc = get_int(&c, root, "", "max_instructions", 1, 0, UINT32_MAX, &v)) <
      0)
    return rc;
  l->max_instructions = (uint32_t)v;
  if ((rc = get_int(&c, format, "instruction_format", "instruction_length", 1,
                    1, UINT32_MAX, &v)) < 0)
    return rc;
  l->instruction_length = (uint32_t)v;
  if ((rc = get_int(&c, format, "instruction_format", "timing_length", 1, 0,
                    UINT32_MAX, &v)) < 0)
    return rc;
  l->timing_length = (uint32_t)v;
  v = 0;
  if ((rc = get_int(&c, root, "", "has_events_flag", 0, 0, 1, &v)) < 0)
    return rc;
  l->has_events = (int)v;
  v = 0;
  if ((rc = get_int(&c, root, "", "time_unit_flag", 0, INT64_MIN, INT64_MAX,
                    &v)) < 0)
    return rc;
  l->time_unit_flag = v;
  l->sms_per_gpu =
      (uint32_t)(((uint64_t)l->total_processors + l->num_gpus - 1) /
                 l->num_gpus);
  json_object *fv;
  const char *version = "";
  if (json_object_object_get_ex(root, "format_version", &fv) && fv &&
      json_object_is_type(fv, json_type_string))
    version = json_object_get_string(fv);
  if (!(m->format_version = strdup(version)))
    return mprof__error_set(MPROF_ENOMEM, "%s: out of memory", m->name);
  if ((rc = read_types(&c, types)) || (rc = read_units(&c, units)))
    return rc;
  if ((rc = get_object(&c, root, "event_types", 0, &events)) < 0 ||
      (events &&
       (rc = read_event_types(&c, events, "event_types", 0, &m->event_types,
                              &m->event_type_count))))
    return rc;
  if ((rc = get_object(&c, root, "controller_events", 0, &controllers)) < 0 ||
      (controllers &&
       (rc = read_event_types(&c, controllers, "controller_events", 1,
                              &m->controllers, &m->controller_count))))
    return rc;
  l->main_unit = MPROF_INDEX_NONE;
  if ((rc = get_int(&c, root, "", "main_functional_unit", 0, INT64_MIN,
                    INT64_MAX, &v)) < 0)
    return rc;
  if (rc == 1) {
    for (size_t i = 0; i < m->unit_count; i++)
      if (m->units[i].id == v)
        l->main_unit = (uint32_t)i;
    if (l->main_unit == MPROF_INDEX_NONE)
      return bad(m, c.at,
                 "config: main_functional_unit %" PRId64
                 " is not a key of functional_units",
                 v);
  }
  return 0;
}

static int parse_all(mprof_mkprof *m) {
  mprof_mkprof_layout *l = &m->layout;
  if (m->size < MPROF_MKPROF_MAGIC_SIZE ||
      memcmp(m->data, MPROF_MKPROF_MAGIC, MPROF_MKPROF_MAGIC_SIZE) != 0) {
    size_t n = 6;
    while (n < m->size && n < 24 && m->data[n] != '\n')
      n++;
    if (m->size >= 6 && memcmp(m->data, "MKPROF", 6) == 0 && n < m->size &&
        m->data[n] == '\n')
      return mprof__error_set(MPROF_EVERSION,
                              "%s: at byte 6: MKPROF version '%.*s' is not "
                              "supported (only 1.2)",
                              m->name, (int)(n - 6), (const char *)m->data + 6);
    return bad(m, 0,
               "not an MKPROF1.2 file (it must start with "
               "\"MKPROF1.2\\n\")");
  }
  size_t start = MPROF_MKPROF_MAGIC_SIZE;
  while (start < m->size && (m->data[start] == ' ' || m->data[start] == '\t' ||
                             m->data[start] == '\r' || m->data[start] == '\n'))
    start++;
  if (start >= m->size)
    return bad(m, start, "config: the file ends before the JSON config");
  if (m->data[start] != '{')
    return bad(m, start,
               "config: expected '{' to open the JSON config, found "
               "byte 0x%02x",
               m->data[start]);
  size_t end = 0;
  int rc = find_config_end(m, start, &end);
  if (rc)
    return rc;
  l->config_offset = start;
  l->config_size = end - start;
  if (l->config_size > 0x7fffffff)
    return bad(m, start, "config: the JSON config is over 2 GiB");
  m->config_text = (char *)malloc(l->config_size + 1);
  if (!m->config_text)
    return mprof__error_set(MPROF_ENOMEM, "%s: out of memory", m->name);
  memcpy(m->config_text, m->data + start, l->config_size);
  m->config_text[l->config_size] = '\0';

  struct json_tokener *tok = json_tokener_new_ex(JSON_TOKENER_DEFAULT_DEPTH);
  if (!tok)
    return mprof__error_set(MPROF_ENOMEM, "%s: out of memory", m->name);
  json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
  json_object *root =
      json_tokener_parse_ex(tok, m->config_text, (int)l->config_size);
  enum json_tokener_error jerr = json_tokener_get_error(tok);
  size_t parsed = json_tokener_get_parse_end(tok);
  json_tokener_free(tok);
  if (!root || jerr != json_tokener_success) {
    json_object_put(root);
    return bad(m, start + parsed, "config: bad JSON: %s",
               jerr == json_tokener_continue ? "unexpected end of the config"
                                             : json_tokener_error_desc(jerr));
  }
  if (!json_object_is_type(root, json_type_object)) {
    json_object_put(root);
    return bad(m, start, "config: the JSON config is not an object");
  }
  rc = read_config(m, root);
  json_object_put(root);
  if (rc)
    return rc;

  /* The arrays, each checked against what is left of the file. */
  uint64_t at = (end + 3) & ~(uint64_t)3;
  if (at > m->size)
    return bad(m, m->size,
               "padding: the file ends in the padding after the "
               "JSON config");
  l->data_offset = at;
  uint64_t slots = mul_sat(l->total_processors, l->max_instructions);
  struct {
    const char *what;
    uint64_t words;
    const void **ptr;
    int present;
  } arrays[] = {
      {"instructions", mul_sat(slots, l->instruction_length),
       (const void **)&m->instructions, 1},
      {"starts", slots, (const void **)&m->starts, 1},
      {"ends", slots, (const void **)&m->ends, 1},
      {"events", mul_sat(slots, l->timing_length), (const void **)&m->events,
       l->has_events},
  };
  for (size_t i = 0; i < sizeof arrays / sizeof arrays[0]; i++) {
    if (!arrays[i].present)
      continue;
    uint64_t bytes = mul_sat(arrays[i].words, 4);
    if (bytes > m->size - at)
      return bad(m, at,
                 "%s: %u processors x %u instructions need %s%" PRIu64
                 " bytes; %" PRIu64 " remain",
                 arrays[i].what, l->total_processors, l->max_instructions,
                 bytes == UINT64_MAX ? "over " : "", bytes,
                 (uint64_t)(m->size - at));
    *arrays[i].ptr = m->data + at;
    at += bytes;
  }
  if (at != m->size)
    return bad(m, at, "%" PRIu64 " bytes after the %s array",
               (uint64_t)(m->size - at), l->has_events ? "events" : "ends");
  return 0;
}

int mprof_mkprof_parse(mprof_mkprof **out, const void *data, size_t size,
                       const char *name) {
  if (!out || (!data && size))
    return mprof__error_set(MPROF_EINVAL, "mprof_mkprof_parse: NULL");
  *out = NULL;
  mprof_mkprof *m = (mprof_mkprof *)calloc(1, sizeof *m);
  if (!m)
    return mprof__error_set(MPROF_ENOMEM, "out of memory");
  m->name = strdup(name ? name : "<memory>");
  /* +4: the arrays are read as 32-bit words at 4-aligned file offsets,
   * and malloc's alignment makes those addresses aligned too. */
  m->data = (unsigned char *)malloc(size + 4);
  if (!m->name || !m->data) {
    mprof_mkprof_free(m);
    return mprof__error_set(MPROF_ENOMEM, "out of memory");
  }
  if (size)
    memcpy(m->data, data, size);
  m->size = size;
  int rc = parse_all(m);
  if (rc) {
    mprof_mkprof_free(m);
    return rc;
  }
  *out = m;
  return 0;
}

int mprof_mkprof_open(mprof_mkprof **out, const char *path) {
  if (!out || !path)
    return mprof__error_set(MPROF_EINVAL, "mprof_mkprof_open: NULL");
  *out = NULL;
  FILE *f = fopen(path, "rb");
  if (!f)
    return mprof__error_set(errno == ENOENT ? MPROF_ENOTFOUND : MPROF_EIO,
                            "%s: %s", path, strerror(errno));
  unsigned char *buf = NULL;
  size_t size = 0, cap = 0;
  for (;;) {
    if (size == cap) {
      cap = cap ? 2 * cap : 1 << 16;
      unsigned char *grown = (unsigned char *)realloc(buf, cap);
      if (!grown) {
        free(buf);
        fclose(f);
        return mprof__error_set(MPROF_ENOMEM, "%s: out of memory", path);
      }
      buf = grown;
    }
    size_t n = fread(buf + size, 1, cap - size, f);
    size += n;
    if (n == 0)
      break;
  }
  int failed = ferror(f);
  fclose(f);
  if (failed) {
    free(buf);
    return mprof__error_set(MPROF_EIO, "%s: read error", path);
  }
  int rc = mprof_mkprof_parse(out, buf, size, path);
  free(buf);
  return rc;
}

/* ---- accessors ---------------------------------------------------------- */

const mprof_mkprof_layout *mprof_mkprof_get_layout(const mprof_mkprof *m) {
  return &m->layout;
}

const char *mprof_mkprof_config_json(const mprof_mkprof *m, size_t *size) {
  *size = (size_t)m->layout.config_size;
  return (const char *)m->data + m->layout.config_offset;
}

const char *mprof_mkprof_format_version(const mprof_mkprof *m) {
  return m->format_version;
}

const mprof_mkprof_instruction_type *
mprof_mkprof_instruction_types(const mprof_mkprof *m, size_t *count) {
  *count = m->type_count;
  return m->types;
}

const mprof_mkprof_unit *mprof_mkprof_units(const mprof_mkprof *m,
                                            size_t *count) {
  *count = m->unit_count;
  return m->units;
}

const mprof_mkprof_event_type *mprof_mkprof_event_types(const mprof_mkprof *m,
                                                        size_t *count) {
  *count = m->event_type_count;
  return m->event_types;
}

const mprof_mkprof_event_type *
mprof_mkprof_controller_events(const mprof_mkprof *m, size_t *count) {
  *count = m->controller_count;
  return m->controllers;
}

const mprof_mkprof_instruction_type *
mprof_mkprof_find_type(const mprof_mkprof *m, int64_t opcode) {
  for (size_t i = 0; i < m->type_count; i++)
    if (m->types[i].id == opcode)
      return &m->types[i];
  return NULL;
}

const mprof_mkprof_event_type *
mprof_mkprof_find_event_type(const mprof_mkprof *m, int64_t type) {
  for (size_t i = 0; i < m->event_type_count; i++)
    if (m->event_types[i].id == type)
      return &m->event_types[i];
  return NULL;
}

static int slot_of(const mprof_mkprof *m, uint32_t processor, uint32_t index,
                   uint64_t *slot) {
  if (processor >= m->layout.total_processors ||
      index >= m->layout.max_instructions)
    return 0;
  *slot = (uint64_t)processor * m->layout.max_instructions + index;
  return 1;
}

int mprof_mkprof_instruction_at(const mprof_mkprof *m, uint32_t processor,
                                uint32_t index, mprof_mkprof_instruction *out) {
  uint64_t slot;
  if (!slot_of(m, processor, index, &slot))
    return mprof__error_set(MPROF_EINVAL,
                            "%s: instruction %u of processor %u does not "
                            "exist (%u x %u)",
                            m->name, index, processor,
                            m->layout.total_processors,
                            m->layout.max_instructions);
  out->processor = processor;
  out->gpu = m->layout.sms_per_gpu ? processor / m->layout.sms_per_gpu : 0;
  out->sm = m->layout.sms_per_gpu ? processor % m->layout.sms_per_gpu : 0;
  out->index = index;
  out->words = m->instructions + slot * m->layout.instruction_length;
  out->opcode = out->words[0];
  out->start = m->starts[slot];
  out->end = m->ends[slot];
  out->valid = out->start > 0 && out->end > out->start;
  return 0;
}

int mprof_mkprof_unit_activity(const mprof_mkprof *m, uint32_t processor,
                               uint32_t index, size_t unit, uint32_t *start,
                               uint32_t *end) {
  uint64_t slot;
  if (!m->events || unit >= m->unit_count || !m->units[unit].has_special ||
      !slot_of(m, processor, index, &slot))
    return 0;
  const uint32_t *ev = m->events + slot * m->layout.timing_length;
  uint32_t a = ev[m->units[unit].special_start];
  uint32_t b = ev[m->units[unit].special_end];
  if (a == 0 || b <= a)
    return 0;
  *start = a;
  *end = b;
  return 1;
}

void mprof_mkprof_decode(uint32_t raw, uint32_t *type, uint64_t *time_ns) {
  *type = raw & 0xfu;
  *time_ns = (uint64_t)(raw >> 4) * 16;
}

uint32_t mprof_mkprof_pack(uint64_t time_ns, uint32_t type) {
  return (uint32_t)(((time_ns / 16) & 0x0fffffffu) << 4) | (type & 0xfu);
}

size_t mprof_mkprof_unit_events(const mprof_mkprof *m, uint32_t processor,
                                uint32_t index, size_t unit,
                                mprof_mkprof_event *out, size_t max) {
  uint64_t slot;
  if (!m->events || unit >= m->unit_count ||
      !slot_of(m, processor, index, &slot))
    return 0;
  const uint32_t *ev = m->events + slot * m->layout.timing_length;
  size_t n = 0;
  for (uint32_t s = m->units[unit].event_start; s <= m->units[unit].event_end;
       s++) {
    if (!ev[s])
      break;
    mprof_mkprof_event e;
    e.slot = s;
    mprof_mkprof_decode(ev[s], &e.type, &e.time_ns);
    if (!e.time_ns)
      continue;
    if (out && n < max)
      out[n] = e;
    n++;
  }
  return n;
}

size_t mprof_mkprof_instruction_controller_events(const mprof_mkprof *m,
                                                  uint32_t processor,
                                                  uint32_t index,
                                                  mprof_mkprof_event *out,
                                                  size_t max) {
  uint64_t slot;
  if (!m->events || !slot_of(m, processor, index, &slot))
    return 0;
  const uint32_t *ev = m->events + slot * m->layout.timing_length;
  size_t n = 0;
  for (size_t i = 0; i < m->controller_count; i++) {
    uint32_t s = (uint32_t)m->controllers[i].id;
    mprof_mkprof_event e;
    e.slot = s;
    mprof_mkprof_decode(ev[s], &e.type, &e.time_ns);
    if (!ev[s] || !e.time_ns)
      continue;
    if (out && n < max)
      out[n] = e;
    n++;
  }
  return n;
}

size_t mprof_mkprof_params(const mprof_mkprof *m, uint32_t processor,
                           uint32_t index, mprof_mkprof_param_value *out,
                           size_t max) {
  mprof_mkprof_instruction ins;
  if (mprof_mkprof_instruction_at(m, processor, index, &ins) != 0)
    return 0;
  const mprof_mkprof_instruction_type *t =
      mprof_mkprof_find_type(m, ins.opcode);
  if (!t)
    return 0;
  for (size_t i = 0; out && i < t->param_count && i < max; i++) {
    out[i].name = t->params[i].name;
    out[i].position = t->params[i].position;
    out[i].value = ins.words[t->params[i].position];
  }
  return t->param_count;
}

void mprof_mkprof_summarize(const mprof_mkprof *m, mprof_mkprof_summary *out) {
  memset(out, 0, sizeof *out);
  const mprof_mkprof_layout *l = &m->layout;
  out->min_time = UINT32_MAX;
  for (uint32_t p = 0; p < l->total_processors; p++)
    for (uint32_t i = 0; i < l->max_instructions; i++) {
      mprof_mkprof_instruction ins;
      mprof_mkprof_instruction_at(m, p, i, &ins);
      if (!ins.valid)
        continue;
      out->instructions++;
      out->min_time = ins.start < out->min_time ? ins.start : out->min_time;
      out->max_time = ins.end > out->max_time ? ins.end : out->max_time;
      for (size_t u = 0; u < m->unit_count; u++) {
        uint32_t a, b;
        out->unit_activities +=
            (size_t)mprof_mkprof_unit_activity(m, p, i, u, &a, &b);
        mprof_mkprof_event ev[64];
        size_t n = mprof_mkprof_unit_events(m, p, i, u, ev, 64);
        out->events += n;
        for (size_t e = 0; e < n && e < 64; e++) {
          const mprof_mkprof_event_type *t =
              mprof_mkprof_find_event_type(m, ev[e].type);
          out->error_events += t && t->is_error;
        }
      }
      out->controller_events +=
          mprof_mkprof_instruction_controller_events(m, p, i, NULL, 0);
    }
  if (!out->instructions)
    out->min_time = 0;
}

/* ---- MKPROF → trace ----------------------------------------------------- */

#define TRY(expr)                                                              \
  do {                                                                         \
    int rc_ = (expr);                                                          \
    if (rc_) {                                                                 \
      mprof_writer_abort(w);                                                   \
      free(first);                                                             \
      free(last);                                                              \
      return rc_;                                                              \
    }                                                                          \
  } while (0)

int mprof_mkprof_to_trace(const mprof_mkprof *m, const char *path) {
  if (!m || !path)
    return mprof__error_set(MPROF_EINVAL, "mprof_mkprof_to_trace: NULL");
  const mprof_mkprof_layout *l = &m->layout;
  uint32_t gpus = l->num_gpus;
  uint64_t *first = (uint64_t *)calloc(gpus, sizeof *first);
  uint64_t *last = (uint64_t *)calloc(gpus, sizeof *last);
  if (!first || !last) {
    free(first);
    free(last);
    return mprof__error_set(MPROF_ENOMEM, "%s: out of memory", path);
  }
  for (uint32_t g = 0; g < gpus; g++)
    first[g] = UINT64_MAX;
  for (uint32_t p = 0; p < l->total_processors; p++)
    for (uint32_t i = 0; i < l->max_instructions; i++) {
      mprof_mkprof_instruction ins;
      mprof_mkprof_instruction_at(m, p, i, &ins);
      if (!ins.valid || ins.gpu >= gpus)
        continue;
      first[ins.gpu] = ins.start < first[ins.gpu] ? ins.start : first[ins.gpu];
      last[ins.gpu] = ins.end > last[ins.gpu] ? ins.end : last[ins.gpu];
      for (size_t u = 0; u < m->unit_count; u++) {
        uint32_t a, b;
        if (!mprof_mkprof_unit_activity(m, p, i, u, &a, &b))
          continue;
        first[ins.gpu] = a < first[ins.gpu] ? a : first[ins.gpu];
        last[ins.gpu] = b > last[ins.gpu] ? b : last[ins.gpu];
      }
    }
  mprof_writer *w;
  int rc = mprof_writer_open(&w, path, NULL);
  if (rc) {
    free(first);
    free(last);
    return rc;
  }
  TRY(mprof_writer_meta(w, "tool", "mprof mkprof import"));
  TRY(mprof_writer_meta(w, "capture.mode", "mkprof"));
  TRY(mprof_writer_meta(w, "clock", "mkprof (ns, relative)"));
  TRY(mprof_writer_meta(w, "mkprof.source", m->name));
  TRY(mprof_writer_meta(w, "mkprof.format_version", m->format_version));
  TRY(mprof_writer_meta(w, "mkprof.config", m->config_text));
  uint32_t kernel_name = mprof_writer_string(w, "megakernel (MKPROF)");
  /* one device, stream, kernel, shape and launch per GPU */
  uint32_t *launch = (uint32_t *)malloc(gpus * sizeof *launch);
  if (!launch)
    TRY(mprof__error_set(MPROF_ENOMEM, "%s: out of memory", path));
  for (uint32_t g = 0; g < gpus; g++) {
    launch[g] = MPROF_INDEX_NONE;
    char name[64];
    snprintf(name, sizeof name, "MKPROF GPU %u", g);
    mprof_device_record dev;
    memset(&dev, 0, sizeof dev);
    dev.id = g;
    dev.name = mprof_writer_string(w, name);
    dev.sm_count = l->sms_per_gpu;
    dev.warp_size = 32;
    uint32_t d, s, k, sh;
    rc = mprof_writer_append(w, &d, MPROF_SECTION_DEVICES, &dev);
    mprof_stream_record st = {d, 0, 0, mprof_writer_string(w, "mkprof")};
    rc = rc ? rc : mprof_writer_append(w, &s, MPROF_SECTION_STREAMS, &st);
    mprof_kernel_record kr;
    memset(&kr, 0, sizeof kr);
    kr.mangled_name = kernel_name;
    kr.function_index = MPROF_INDEX_NONE;
    kr.device = d;
    rc = rc ? rc : mprof_writer_append(w, &k, MPROF_SECTION_KERNELS, &kr);
    mprof_shape_record shape;
    memset(&shape, 0, sizeof shape);
    shape.kernel = k;
    shape.grid[0] = l->sms_per_gpu;
    shape.grid[1] = shape.grid[2] = 1;
    shape.block[0] = shape.block[1] = shape.block[2] = 1;
    rc = rc ? rc : mprof_writer_append(w, &sh, MPROF_SECTION_SHAPES, &shape);
    if (!rc && first[g] != UINT64_MAX) {
      mprof_launch_record lr = {first[g], last[g], sh, s, 0, 0, 0};
      rc = mprof_writer_append(w, &launch[g], MPROF_SECTION_LAUNCHES, &lr);
    }
    if (rc) {
      free(launch);
      TRY(rc);
    }
  }
  size_t spans = 0;
  for (uint32_t p = 0; p < l->total_processors && !rc; p++)
    for (uint32_t i = 0; i < l->max_instructions && !rc; i++) {
      mprof_mkprof_instruction ins;
      mprof_mkprof_instruction_at(m, p, i, &ins);
      if (!ins.valid || ins.gpu >= gpus)
        continue;
      const mprof_mkprof_instruction_type *t =
          mprof_mkprof_find_type(m, ins.opcode);
      char fallback[32];
      snprintf(fallback, sizeof fallback, "opcode %d", ins.opcode);
      for (size_t u = 0; u < m->unit_count && !rc; u++) {
        uint32_t a, b;
        if (!mprof_mkprof_unit_activity(m, p, i, u, &a, &b))
          continue;
        mprof_region_record rg = {
            mprof_writer_string(w, t ? t->name : fallback), t ? t->color : 0,
            m->units[u].role, 0};
        uint32_t region;
        rc = mprof_writer_intern(w, &region, MPROF_SECTION_REGIONS, &rg);
        mprof_span_record sp = {a,      b, launch[ins.gpu],
                                ins.sm, i, MPROF_INDEX_NONE,
                                region, 0, (uint64_t)(uint32_t)ins.opcode};
        rc = rc ? rc : mprof_writer_append(w, NULL, MPROF_SECTION_SPANS, &sp);
        spans++;
      }
    }
  free(launch);
  if (rc)
    TRY(rc);
  mprof_mkprof_summary sum;
  mprof_mkprof_summarize(m, &sum);
  char text[32];
  snprintf(text, sizeof text, "%zu", sum.events);
  TRY(mprof_writer_meta(w, "mkprof.events", text));
  snprintf(text, sizeof text, "%zu", sum.instructions);
  TRY(mprof_writer_meta(w, "mkprof.instructions", text));
  free(first);
  free(last);
  return mprof_writer_finish(w);
}

#undef TRY

/* ---- trace → MKPROF ----------------------------------------------------- */

/* The Megakernels layout: 128 timing slots, units 0..3 as its viewer
 * expects them (it draws units 0, 1, 2 as loader, consumer, storer rows). */
#define EXPORT_TIMING_LENGTH 128
#define EXPORT_INSTRUCTION_LENGTH 8
#define EXPORT_END_TYPE 15
#define EXPORT_REGION_TYPES 14 /* types 0..13 name regions, 14 the rest */

static const struct {
  const char *name;
  uint32_t event_start, event_end, special_start, special_end;
  double height;
} export_units[4] = {
    {"Loader", 16, 47, 8, 9, 1.0},
    {"Consumer", 48, 79, 12, 13, 2.0},
    {"Storer", 112, 127, 14, 15, 1.0},
    {"Other", 80, 111, 10, 11, 1.0},
};

static uint32_t export_unit_of(uint32_t role) {
  switch (role) {
  case MPROF_ROLE_LOADER: return 0;
  case MPROF_ROLE_CONSUMER: return 1;
  case MPROF_ROLE_STORER: return 2;
  default: return 3;
  }
}

typedef struct export_span {
  uint64_t start, end;
  uint32_t processor;
  uint32_t launch;
  uint32_t block;
  uint32_t region;
  uint32_t group; /* instruction group, after grouping */
} export_span;

static int cmp_export_span(const void *a, const void *b) {
  const export_span *x = (const export_span *)a, *y = (const export_span *)b;
  if (x->processor != y->processor)
    return x->processor < y->processor ? -1 : 1;
  if (x->launch != y->launch)
    return x->launch < y->launch ? -1 : 1;
  if (x->block != y->block)
    return x->block < y->block ? -1 : 1;
  if (x->start != y->start)
    return x->start < y->start ? -1 : 1;
  return x->end < y->end ? -1 : x->end > y->end;
}

typedef struct export_group {
  uint64_t start, end;
  uint32_t processor;
  size_t first, count; /* range in the sorted spans */
  uint32_t slot;       /* instruction index on its processor */
} export_group;

static int cmp_export_group(const void *a, const void *b) {
  const export_group *x = (const export_group *)a, *y = (const export_group *)b;
  if (x->processor != y->processor)
    return x->processor < y->processor ? -1 : 1;
  if (x->start != y->start)
    return x->start < y->start ? -1 : 1;
  return x->first < y->first ? -1 : x->first > y->first;
}

typedef struct export_event {
  uint64_t time;
  uint32_t type;
} export_event;

static int cmp_export_event(const void *a, const void *b) {
  const export_event *x = (const export_event *)a, *y = (const export_event *)b;
  if (x->time != y->time)
    return x->time < y->time ? -1 : 1;
  return x->type < y->type ? -1 : x->type > y->type;
}

static const uint32_t export_palette[] = {
    0x1f77b4, 0xff7f0e, 0x2ca02c, 0xd62728, 0x9467bd, 0x8c564b,
    0xe377c2, 0x7f7f7f, 0xbcbd22, 0x17becf, 0xaec7e8, 0xffbb78,
    0x98df8a, 0xff9896, 0xc5b0d5, 0xc49c94};

static void json_color(json_object *obj, uint32_t rgb) {
  char text[8];
  snprintf(text, sizeof text, "#%06x", rgb & 0xffffffu);
  json_object_object_add(obj, "color", json_object_new_string(text));
}

static json_object *json_range(uint32_t start, uint32_t end) {
  json_object *r = json_object_new_object();
  json_object_object_add(r, "start", json_object_new_int64(start));
  json_object_object_add(r, "end", json_object_new_int64(end));
  return r;
}

typedef struct export_ctx {
  const mprof_trace *trace;
  const mprof_mkprof_export_options *opts;
  regex_t regex;
  int have_regex;
  uint8_t *kernel_ok; /* per KERNELS record */
  uint32_t launch;    /* the LAUNCHES index opts->launch picked, or NONE */
} export_ctx;

/* The kernel of launch @p launch, or MPROF_INDEX_NONE. */
static uint32_t launch_kernel(const mprof_trace *t, uint32_t launch) {
  size_t nl, ns;
  const mprof_launch_record *l = mprof_trace_launches(t, &nl);
  const mprof_shape_record *s = mprof_trace_shapes(t, &ns);
  if (launch == MPROF_INDEX_NONE || launch >= nl)
    return MPROF_INDEX_NONE;
  return s[l[launch].shape].kernel;
}

static uint32_t launch_device_index(const mprof_trace *t, uint32_t launch) {
  size_t nl, ns;
  const mprof_launch_record *l = mprof_trace_launches(t, &nl);
  const mprof_stream_record *s = mprof_trace_streams(t, &ns);
  if (launch == MPROF_INDEX_NONE || launch >= nl)
    return MPROF_INDEX_NONE;
  return s[l[launch].stream].device;
}

static const char *kernel_label(const mprof_trace *t, uint32_t kernel) {
  size_t n;
  const mprof_kernel_record *k = mprof_trace_kernels(t, &n);
  if (kernel == MPROF_INDEX_NONE || kernel >= n)
    return "unknown kernel";
  const char *d = mprof_trace_string(t, k[kernel].demangled_name);
  return *d ? d : mprof_trace_string(t, k[kernel].mangled_name);
}

static int export_keep(const export_ctx *c, const mprof_span_record *sp) {
  if (c->launch != MPROF_INDEX_NONE && sp->launch != c->launch)
    return 0;
  if (c->have_regex) {
    uint32_t k = launch_kernel(c->trace, sp->launch);
    return k != MPROF_INDEX_NONE && c->kernel_ok[k];
  }
  return 1;
}

/* Build the JSON config. Kernel k's instruction type is opcode k + 1. */
static char *export_config(const mprof_trace *t, const uint32_t *opcode_kernel,
                           size_t opcodes, uint32_t processors,
                           uint32_t max_instructions, uint32_t gpus) {
  size_t nr;
  const mprof_region_record *regions = mprof_trace_regions(t, &nr);
  json_object *root = json_object_new_object();
  json_object_object_add(root, "format_version", json_object_new_string("1.2"));
  json_object *types = json_object_new_object();
  json_object *noop = json_object_new_object();
  json_object_object_add(noop, "name", json_object_new_string("No Op"));
  json_color(noop, 0x808080);
  json_object_object_add(noop, "params", json_object_new_object());
  json_object_object_add(types, "0", noop);
  for (size_t i = 0; i < opcodes; i++) {
    json_object *ty = json_object_new_object();
    json_object_object_add(
        ty, "name", json_object_new_string(kernel_label(t, opcode_kernel[i])));
    json_color(ty, export_palette[i % 16]);
    json_object *params = json_object_new_object();
    json_object_object_add(params, "1", json_object_new_string("launch"));
    json_object_object_add(params, "2", json_object_new_string("block"));
    json_object_object_add(params, "3", json_object_new_string("spans"));
    json_object_object_add(params, "4",
                           json_object_new_string("events_dropped"));
    json_object_object_add(ty, "params", params);
    char key[24];
    snprintf(key, sizeof key, "%zu", i + 1);
    json_object_object_add(types, key, ty);
  }
  json_object_object_add(root, "instruction_types", types);
  json_object *format = json_object_new_object();
  json_object_object_add(format, "instruction_length",
                         json_object_new_int64(EXPORT_INSTRUCTION_LENGTH));
  json_object_object_add(format, "timing_length",
                         json_object_new_int64(EXPORT_TIMING_LENGTH));
  json_object_object_add(root, "instruction_format", format);
  json_object *units = json_object_new_object();
  for (int u = 0; u < 4; u++) {
    json_object *unit = json_object_new_object();
    json_object_object_add(unit, "name",
                           json_object_new_string(export_units[u].name));
    json_object_object_add(
        unit, "event_range",
        json_range(export_units[u].event_start, export_units[u].event_end));
    json_object_object_add(unit, "height_multiplier",
                           json_object_new_double(export_units[u].height));
    json_object_object_add(
        unit, "special_events",
        json_range(export_units[u].special_start, export_units[u].special_end));
    char key[4];
    snprintf(key, sizeof key, "%d", u);
    json_object_object_add(units, key, unit);
  }
  json_object_object_add(root, "functional_units", units);
  json_object_object_add(root, "main_functional_unit",
                         json_object_new_int64(1));
  json_object *events = json_object_new_object();
  for (size_t r = 0; r < nr && r < EXPORT_REGION_TYPES; r++) {
    json_object *e = json_object_new_object();
    char name[160];
    snprintf(name, sizeof name, "%.140s begins",
             mprof_trace_string(t, regions[r].name));
    json_object_object_add(e, "name", json_object_new_string(name));
    json_color(e, regions[r].color ? regions[r].color
                                   : export_palette[(r + 3) % 16]);
    char key[8];
    snprintf(key, sizeof key, "%zu", r);
    json_object_object_add(events, key, e);
  }
  if (nr > EXPORT_REGION_TYPES) {
    json_object *e = json_object_new_object();
    json_object_object_add(e, "name",
                           json_object_new_string("other region begins"));
    json_color(e, 0xcccccc);
    json_object_object_add(events, "14", e);
  }
  json_object *end = json_object_new_object();
  json_object_object_add(end, "name", json_object_new_string("span ends"));
  json_color(end, 0xffffff);
  json_object_object_add(events, "15", end);
  json_object_object_add(root, "event_types", events);
  json_object_object_add(root, "controller_events", json_object_new_object());
  json_object_object_add(root, "num_gpus", json_object_new_int64(gpus));
  json_object_object_add(root, "total_processors",
                         json_object_new_int64(processors));
  json_object_object_add(root, "max_instructions",
                         json_object_new_int64(max_instructions));
  json_object_object_add(root, "time_unit_flag", json_object_new_int64(1));
  json_object_object_add(root, "has_events_flag", json_object_new_int64(1));
  const char *text = json_object_to_json_string_ext(
      root, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
  char *copy = text ? strdup(text) : NULL;
  json_object_put(root);
  return copy;
}

static int write_all(FILE *f, const void *data, size_t size) {
  return size == 0 || fwrite(data, 1, size, f) == size;
}

int mprof_mkprof_export(const mprof_trace *t, const char *path,
                        const mprof_mkprof_export_options *opts,
                        mprof_mkprof_export_report *report) {
  if (!t || !path)
    return mprof__error_set(MPROF_EINVAL, "mprof_mkprof_export: NULL");
  mprof_mkprof_export_options defaults = MPROF_MKPROF_EXPORT_OPTIONS_INIT;
  if (!opts)
    opts = &defaults;
  if (opts->version != MPROF_MKPROF_EXPORT_OPTIONS_VERSION)
    return mprof__error_set(MPROF_EVERSION,
                            "mprof_mkprof_export: options version %u unknown",
                            opts->version);
  if (report && report->version != MPROF_MKPROF_EXPORT_REPORT_VERSION)
    return mprof__error_set(MPROF_EVERSION,
                            "mprof_mkprof_export: report version %u unknown",
                            report->version);
  mprof_mkprof_export_report rep = MPROF_MKPROF_EXPORT_REPORT_INIT;
  size_t nspans, nkernels, ndevices, nlaunches, nregions;
  const mprof_span_record *spans = mprof_trace_spans(t, &nspans);
  const mprof_kernel_record *kernels = mprof_trace_kernels(t, &nkernels);
  const mprof_device_record *devices = mprof_trace_devices(t, &ndevices);
  const mprof_region_record *regions = mprof_trace_regions(t, &nregions);
  const mprof_launch_record *launches = mprof_trace_launches(t, &nlaunches);
  export_ctx c;
  memset(&c, 0, sizeof c);
  c.trace = t;
  c.opts = opts;
  c.launch = MPROF_INDEX_NONE;
  if (opts->kernel_regex) {
    int err = regcomp(&c.regex, opts->kernel_regex, REG_EXTENDED | REG_NOSUB);
    if (err) {
      char msg[256];
      regerror(err, &c.regex, msg, sizeof msg);
      return mprof__error_set(MPROF_EINVAL, "bad kernel regex '%s': %s",
                              opts->kernel_regex, msg);
    }
    c.have_regex = 1;
    c.kernel_ok = (uint8_t *)calloc(nkernels ? nkernels : 1, 1);
    if (!c.kernel_ok) {
      regfree(&c.regex);
      return mprof__error_set(MPROF_ENOMEM, "out of memory");
    }
    for (size_t k = 0; k < nkernels; k++)
      c.kernel_ok[k] =
          regexec(&c.regex, mprof_trace_string(t, kernels[k].mangled_name), 0,
                  NULL, 0) == 0 ||
          regexec(&c.regex, mprof_trace_string(t, kernels[k].demangled_name), 0,
                  NULL, 0) == 0;
  }

  /* --launch N: the N-th launch, in time order, of those with spans that
   * pass the kernel filter. */
  if (opts->launch != MPROF_INDEX_NONE) {
    uint8_t *has = (uint8_t *)calloc(nlaunches ? nlaunches : 1, 1);
    if (!has) {
      free(c.kernel_ok);
      if (c.have_regex)
        regfree(&c.regex);
      return mprof__error_set(MPROF_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < nspans; i++)
      if (spans[i].launch != MPROF_INDEX_NONE && export_keep(&c, &spans[i]))
        has[spans[i].launch] = 1;
    size_t with = 0;
    export_event *order = (export_event *)malloc(
        (nlaunches ? nlaunches : 1) * sizeof *order); /* (start, index) */
    for (size_t i = 0; order && i < nlaunches; i++)
      if (has[i]) {
        order[with].time = launches[i].start;
        order[with++].type = (uint32_t)i;
      }
    if (order) {
      qsort(order, with, sizeof *order, cmp_export_event);
      if (opts->launch < with)
        c.launch = order[opts->launch].type;
    }
    int no_memory = !order;
    free(order);
    free(has);
    if (no_memory || opts->launch >= with) {
      free(c.kernel_ok);
      if (c.have_regex)
        regfree(&c.regex);
      if (no_memory)
        return mprof__error_set(MPROF_ENOMEM, "out of memory");
      return mprof__error_set(MPROF_EINVAL,
                              "%s: there is no launch %u: %zu launches have "
                              "spans%s",
                              mprof_trace_path(t), opts->launch, with,
                              c.have_regex ? " and match the kernel filter"
                                           : "");
    }
  }

  /* Processors: the devices side by side, each as wide as its SM count or
   * the highest SM a span names. */
  size_t dev_slots = ndevices ? ndevices : 1;
  uint32_t *dev_width = (uint32_t *)calloc(dev_slots, sizeof *dev_width);
  uint32_t *dev_base = (uint32_t *)calloc(dev_slots, sizeof *dev_base);
  export_span *es = (export_span *)malloc((nspans ? nspans : 1) * sizeof *es);
  uint32_t *opcode_of = (uint32_t *)malloc((nkernels + 1) * sizeof *opcode_of);
  uint32_t *opcode_kernel =
      (uint32_t *)malloc((nkernels + 1) * sizeof *opcode_kernel);
  export_group *groups = NULL;
  char *config = NULL;
  uint32_t *words = NULL;
  FILE *f = NULL;
  char *partial = NULL;
  int rc = 0;
  if (!dev_width || !dev_base || !es || !opcode_of || !opcode_kernel) {
    rc = mprof__error_set(MPROF_ENOMEM, "out of memory");
    goto done;
  }
  for (size_t d = 0; d < ndevices; d++)
    dev_width[d] = devices[d].sm_count;
  size_t n = 0;
  for (size_t i = 0; i < nspans; i++) {
    if (!export_keep(&c, &spans[i]))
      continue;
    uint32_t d = launch_device_index(t, spans[i].launch);
    if (d == MPROF_INDEX_NONE || d >= dev_slots)
      d = 0;
    if (spans[i].sm >= dev_width[d])
      dev_width[d] = spans[i].sm + 1;
    es[n].start = spans[i].start;
    es[n].end = spans[i].end;
    es[n].processor = d; /* the device for now */
    es[n].launch = spans[i].launch;
    es[n].block = spans[i].block;
    es[n].region = spans[i].region;
    es[n].group = spans[i].sm;
    n++;
  }
  if (n == 0) {
    rc = mprof__error_set(MPROF_ENOTFOUND, "%s: no activity spans to export%s",
                          mprof_trace_path(t),
                          nspans ? " (none matches the filter)" : "");
    goto done;
  }
  uint64_t processors = 0;
  for (size_t d = 0; d < dev_slots; d++) {
    dev_base[d] = (uint32_t)processors;
    processors += dev_width[d];
  }
  if (processors > UINT32_MAX) {
    rc = mprof__error_set(MPROF_EINVAL, "too many SMs");
    goto done;
  }
  uint64_t base = UINT64_MAX, last = 0;
  for (size_t i = 0; i < n; i++) {
    es[i].processor = dev_base[es[i].processor] + es[i].group;
    base = es[i].start < base ? es[i].start : base;
    last = es[i].end > last ? es[i].end : last;
  }
  /* Time 0 means "absent" in MKPROF: start the first span at 16 ns. */
  base = base >= 16 ? base - 16 : 0;
  if (last - base > UINT32_MAX) {
    rc = mprof__error_set(
        MPROF_EINVAL,
        "%s: the spans cover %.3f s; MKPROF times are 32-bit ns (4.29 s): "
        "export one kernel (--kernel) or one launch (--launch)",
        mprof_trace_path(t), (double)(last - base) / 1e9);
    goto done;
  }
  qsort(es, n, sizeof *es, cmp_export_span);
  /* Instructions: (processor, launch, block) groups, ordered by start on
   * each processor. */
  size_t group_count = 0;
  for (size_t i = 0; i < n; i++)
    group_count += i == 0 || es[i].processor != es[i - 1].processor ||
                   es[i].launch != es[i - 1].launch ||
                   es[i].block != es[i - 1].block;
  groups = (export_group *)calloc(group_count, sizeof *groups);
  if (!groups) {
    rc = mprof__error_set(MPROF_ENOMEM, "out of memory");
    goto done;
  }
  size_t g = 0;
  for (size_t i = 0; i < n; i++) {
    if (i > 0 &&
        (es[i].processor != es[i - 1].processor ||
         es[i].launch != es[i - 1].launch || es[i].block != es[i - 1].block))
      g++;
    export_group *gr = &groups[g];
    if (gr->count == 0) {
      gr->first = i;
      gr->processor = es[i].processor;
      gr->start = es[i].start;
    }
    gr->count++;
    gr->start = es[i].start < gr->start ? es[i].start : gr->start;
    gr->end = es[i].end > gr->end ? es[i].end : gr->end;
  }
  qsort(groups, group_count, sizeof *groups, cmp_export_group);
  uint32_t max_instructions = 0;
  for (size_t i = 0; i < group_count; i++) {
    groups[i].slot = i > 0 && groups[i].processor == groups[i - 1].processor
                         ? groups[i - 1].slot + 1
                         : 0;
    if (groups[i].slot + 1 > max_instructions)
      max_instructions = groups[i].slot + 1;
  }
  /* Opcodes: kernels in order of first appearance. */
  size_t opcodes = 0;
  for (size_t k = 0; k <= nkernels; k++)
    opcode_of[k] = 0;
  for (size_t i = 0; i < group_count; i++) {
    uint32_t k = launch_kernel(t, es[groups[i].first].launch);
    size_t slot = k == MPROF_INDEX_NONE ? nkernels : k;
    if (!opcode_of[slot]) {
      opcode_kernel[opcodes] = k;
      opcode_of[slot] = (uint32_t)++opcodes;
    }
  }
  uint32_t gpus = ndevices ? (uint32_t)ndevices : 1;
  config = export_config(t, opcode_kernel, opcodes, (uint32_t)processors,
                         max_instructions, gpus);
  uint64_t slots = (uint64_t)processors * max_instructions;
  uint64_t slot_words = EXPORT_INSTRUCTION_LENGTH + 2 + EXPORT_TIMING_LENGTH;
  if (!config || slots > SIZE_MAX / 4 / slot_words) {
    rc = mprof__error_set(MPROF_ENOMEM, "out of memory");
    goto done;
  }
  /* One allocation: instructions, starts, ends, events, as in the file. */
  size_t word_count = (size_t)(slots * slot_words);
  words = (uint32_t *)calloc(word_count ? word_count : 1, 4);
  if (!words) {
    rc = mprof__error_set(
        MPROF_ENOMEM, "out of memory for %" PRIu64 " instruction slots", slots);
    goto done;
  }
  uint32_t *ins = words;
  uint32_t *starts = ins + slots * EXPORT_INSTRUCTION_LENGTH;
  uint32_t *ends = starts + slots;
  uint32_t *events = ends + slots;
  export_event ev[4][64];
  size_t ev_count[4];
  for (size_t i = 0; i < group_count; i++) {
    const export_group *gr = &groups[i];
    uint64_t slot = (uint64_t)gr->processor * max_instructions + gr->slot;
    uint32_t *w = ins + slot * EXPORT_INSTRUCTION_LENGTH;
    uint32_t *e = events + slot * EXPORT_TIMING_LENGTH;
    const export_span *first_span = &es[gr->first];
    uint32_t k = launch_kernel(t, first_span->launch);
    uint32_t opcode = opcode_of[k == MPROF_INDEX_NONE ? nkernels : k];
    uint64_t unit_start[4] = {UINT64_MAX, UINT64_MAX, UINT64_MAX, UINT64_MAX};
    uint64_t unit_end[4] = {0, 0, 0, 0};
    size_t dropped = 0;
    memset(ev_count, 0, sizeof ev_count);
    for (size_t s = gr->first; s < gr->first + gr->count; s++) {
      uint32_t role = es[s].region < nregions ? regions[es[s].region].role
                                              : MPROF_ROLE_OTHER;
      uint32_t u = export_unit_of(role);
      uint64_t a = es[s].start - base, b = es[s].end - base;
      unit_start[u] = a < unit_start[u] ? a : unit_start[u];
      unit_end[u] = b > unit_end[u] ? b : unit_end[u];
      uint32_t type = es[s].region < EXPORT_REGION_TYPES ? es[s].region
                                                         : EXPORT_REGION_TYPES;
      for (int half = 0; half < 2; half++) {
        if (ev_count[u] < 64) {
          ev[u][ev_count[u]].time = half ? b : a;
          ev[u][ev_count[u]].type = half ? EXPORT_END_TYPE : type;
          ev_count[u]++;
        } else {
          dropped++;
        }
      }
    }
    for (uint32_t u = 0; u < 4; u++) {
      if (unit_start[u] == UINT64_MAX)
        continue;
      e[export_units[u].special_start] = (uint32_t)unit_start[u];
      e[export_units[u].special_end] = (uint32_t)unit_end[u];
      qsort(ev[u], ev_count[u], sizeof ev[u][0], cmp_export_event);
      size_t room = export_units[u].event_end - export_units[u].event_start + 1;
      for (size_t j = 0; j < ev_count[u]; j++) {
        if (j < room) {
          e[export_units[u].event_start + j] =
              mprof_mkprof_pack(ev[u][j].time, ev[u][j].type);
          rep.events++;
        } else {
          dropped++;
        }
      }
    }
    e[0] = opcode;
    e[1] = gr->processor;
    w[0] = opcode;
    w[1] = first_span->launch;
    w[2] = first_span->block;
    w[3] = (uint32_t)gr->count;
    w[4] = (uint32_t)dropped;
    starts[slot] = (uint32_t)(gr->start - base);
    ends[slot] = (uint32_t)(gr->end - base);
    rep.events_dropped += dropped;
  }
  rep.spans = n;
  rep.processors = (size_t)processors;
  rep.max_instructions = max_instructions;
  rep.instructions = group_count;
  rep.base_ns = base;
  rep.extent_ns = last - base;

  size_t plen = strlen(path);
  partial = (char *)malloc(plen + sizeof ".partial");
  if (!partial) {
    rc = mprof__error_set(MPROF_ENOMEM, "out of memory");
    goto done;
  }
  memcpy(partial, path, plen);
  memcpy(partial + plen, ".partial", sizeof ".partial");
  f = fopen(partial, "wb");
  if (!f) {
    rc = mprof__error_set(MPROF_EIO, "%s: %s", partial, strerror(errno));
    goto done;
  }
  size_t clen = strlen(config);
  size_t pad = (4 - (MPROF_MKPROF_MAGIC_SIZE + clen) % 4) % 4;
  static const char zeros[4] = {0, 0, 0, 0};
  int ok = write_all(f, MPROF_MKPROF_MAGIC, MPROF_MKPROF_MAGIC_SIZE) &&
           write_all(f, config, clen) && write_all(f, zeros, pad) &&
           write_all(f, words, word_count * 4);
  if (fclose(f) != 0)
    ok = 0;
  f = NULL;
  if (!ok || rename(partial, path) != 0) {
    rc = mprof__error_set(MPROF_EIO, "%s: %s", path, strerror(errno));
    remove(partial);
    goto done;
  }
  if (report)
    *report = rep;
done:
  if (f)
    fclose(f);
  free(partial);
  free(words);
  free(config);
  free(groups);
  free(opcode_of);
  free(opcode_kernel);
  free(es);
  free(dev_width);
  free(dev_base);
  free(c.kernel_ok);
  if (c.have_regex)
    regfree(&c.regex);
  return rc;
}
