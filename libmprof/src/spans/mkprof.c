/*
 * mprof — MKPROF1.2: the reader and its accessors. The import into a trace
 * is in mkprof_import.c, the export from one in mkprof_export.c.
 *
 * SPDX-License-Identifier: MIT
 */
#include <errno.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/arena.h"
#include "base/file.h"
#include "internal.h"
#include "mkprof_internal.h"
#include "mprof/mkprof.h"

/* "NAME: at byte N: MESSAGE" */
#define BAD(m, at, ...)                                                        \
  mprof__error_at(MPROF_EFORMAT, (m)->name, (uint64_t)(at), __VA_ARGS__)

void mprof_mkprof_free(mprof_mkprof *m) {
  if (!m)
    return;
  mprof__arena_free(&m->names);
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
        return BAD(m, i,
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
      return BAD(m, i,
                 "config: NUL byte before the JSON config closed "
                 "(a JSON config cut short or corrupt)");
    }
  }
  return BAD(m, m->size,
             "config: the JSON that starts at byte %zu does not close "
             "before the end of the file",
             start);
}

/* ---- config values ------------------------------------------------------ */

typedef struct config_ctx {
  mprof_mkprof *m;
  uint64_t at; /* where the config starts, for messages */
} config_ctx;

/* An integer (or an integral number, or a boolean as 0 or 1). */
static int json_integer(json_object *v, int64_t *out) {
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
  case json_type_boolean: *out = json_object_get_boolean(v) ? 1 : 0; return 1;
  default: return 0;
  }
}

/* Key @p key of @p obj (in @p where, "" at the top), in *out: an object
 * or a string as @p type says, json_type_null for any value. Returns 1
 * found, 0 absent (an error when @p required; *out is NULL), negative on
 * error. */
static int get_member(const config_ctx *c, json_object *obj, const char *where,
                      const char *key, int required, json_type type,
                      json_object **out) {
  const char *sep = *where ? ": " : "";
  /* json-c sets *out to NULL when the key is absent. */
  if (!json_object_object_get_ex(obj, key, out) || !*out)
    return required ? BAD(c->m, c->at, "config: %s%s'%s' is missing", where,
                          sep, key)
                    : 0;
  if (type != json_type_null && !json_object_is_type(*out, type))
    return BAD(c->m, c->at, "config: %s%s'%s' is not %s", where, sep, key,
               type == json_type_object ? "an object" : "a string");
  return 1;
}

/* Key @p key of @p obj as an integer in [lo, hi]. Returns 1 found, 0
 * absent (an error when @p required), negative on error. */
static int get_int(const config_ctx *c, json_object *obj, const char *where,
                   const char *key, int required, int64_t lo, int64_t hi,
                   int64_t *out) {
  json_object *v;
  int rc = get_member(c, obj, where, key, required, json_type_null, &v);
  if (rc <= 0)
    return rc;
  int64_t x;
  if (!json_integer(v, &x))
    return BAD(c->m, c->at, "config: %s%s'%s' is not an integer", where,
               *where ? ": " : "", key);
  if (x < lo || x > hi)
    return BAD(c->m, c->at,
               "config: %s%s'%s' is %" PRId64 ", outside %" PRId64 "..%" PRId64,
               where, *where ? ": " : "", key, x, lo, hi);
  *out = x;
  return 1;
}

/* An object key that must be an integer ("12"). */
static int key_integer(const config_ctx *c, const char *table, const char *key,
                       int64_t *out) {
  char *end;
  errno = 0;
  long long x = strtoll(key, &end, 10);
  if (!*key || *end || errno)
    return BAD(c->m, c->at, "config: %s: key '%.60s' is not an integer", table,
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
    return BAD(c->m, c->at, "config: %s: color '%.40s' is not #RRGGBB", where,
               s);
  *out = 0xff000000u | ((uint32_t)strtoul(s + 1, NULL, 16) & 0xffffffu);
  return 0;
}

/* The entry's 'name', which it must have. */
static int get_name(const config_ctx *c, const char *where, json_object *entry,
                    const char **out) {
  json_object *v;
  int rc = get_member(c, entry, where, "name", 1, json_type_string, &v);
  if (rc < 0)
    return rc;
  *out = mprof__arena_strdup(&c->m->names, json_object_get_string(v));
  if (!*out)
    return mprof__error_set(MPROF_ENOMEM, "%s: out of memory", c->m->name);
  return 0;
}

/* Entry @p key of table @p table: its integer key (a timing slot when
 * @p slots) in *id, its name in *name, and in @p where (96 bytes) how
 * messages call it. */
static int read_entry(const config_ctx *c, const char *table, const char *key,
                      json_object *val, int slots, char where[96], int64_t *id,
                      const char **name) {
  snprintf(where, 96, "%s[%.40s]", table, key);
  int rc = key_integer(c, table, key, id);
  if (rc)
    return rc;
  uint32_t timing = c->m->layout.timing_length;
  if (slots && (*id < 0 || *id >= timing))
    return BAD(c->m, c->at,
               "config: %s: slot %" PRId64 " is outside the %u timing slots",
               where, *id, timing);
  if (!json_object_is_type(val, json_type_object))
    return BAD(c->m, c->at, "config: %s is not an object", where);
  return get_name(c, where, val, name);
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
    mprof_mkprof_instruction_type *t = &m->types[m->type_count];
    int rc = read_entry(c, "instruction_types", key, val, 0, where, &t->id,
                        &t->name);
    if (rc || (rc = parse_color(c, where, val, &t->color)))
      return rc;
    json_object *p;
    if ((rc = get_member(c, val, where, "params", 0, json_type_object, &p)) < 0)
      return rc;
    if (p) {
      t->params = &m->params[next_param];
      json_object_object_foreach(p, pos, pname) {
        int64_t position = 0;
        if ((rc = key_integer(c, where, pos, &position)))
          return rc;
        if (position < 0 || position >= m->layout.instruction_length)
          return BAD(m, c->at,
                     "config: %s: parameter position %" PRId64
                     " is outside the %u-word instruction",
                     where, position, m->layout.instruction_length);
        if (!json_object_is_type(pname, json_type_string))
          return BAD(m, c->at,
                     "config: %s: the name of parameter %" PRId64
                     " is not a string",
                     where, position);
        mprof_mkprof_param *param = &m->params[next_param++];
        param->position = (uint32_t)position;
        param->name =
            mprof__arena_strdup(&m->names, json_object_get_string(pname));
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
  int rc = get_member(c, obj, where, key, required, json_type_object, &r);
  if (rc <= 0)
    return rc;
  char inner[160];
  snprintf(inner, sizeof inner, "%s.%s", where, key);
  int64_t hi = (int64_t)c->m->layout.timing_length - 1, a, b;
  rc = get_int(c, r, inner, "start", 1, 0, hi, &a);
  if (rc < 0)
    return rc;
  rc = get_int(c, r, inner, "end", 1, 0, hi, &b);
  if (rc < 0)
    return rc;
  if (b < a)
    return BAD(c->m, c->at,
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
    mprof_mkprof_unit *u = &m->units[m->unit_count];
    int rc =
        read_entry(c, "functional_units", key, val, 0, where, &u->id, &u->name);
    if (rc)
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
        return BAD(m, c->at, "config: %s: 'height_multiplier' is not a number",
                   where);
      u->height_multiplier = json_object_get_double(h);
    }
    u->role = role_of(u->name);
    m->unit_count++;
  }
  return 0;
}

/* The optional table @p what of @p root, whose keys are timing slots when
 * @p slots. */
static int read_event_types(const config_ctx *c, json_object *root,
                            const char *what, int slots,
                            mprof_mkprof_event_type **out, size_t *count) {
  mprof_mkprof *m = c->m;
  json_object *table;
  int rc = get_member(c, root, "", what, 0, json_type_object, &table);
  if (rc <= 0)
    return rc;
  size_t n = (size_t)json_object_object_length(table);
  *out = (mprof_mkprof_event_type *)calloc(n ? n : 1, sizeof **out);
  if (!*out)
    return mprof__error_set(MPROF_ENOMEM, "%s: out of memory", m->name);
  json_object_object_foreach(table, key, val) {
    char where[96];
    mprof_mkprof_event_type *e = &(*out)[*count];
    if ((rc = read_entry(c, what, key, val, slots, where, &e->id, &e->name)) ||
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
  json_object *types, *units, *format;
  int64_t v;
  int rc;
  if ((rc = get_member(&c, root, "", "instruction_types", 1, json_type_object,
                       &types)) < 0 ||
      (rc = get_member(&c, root, "", "functional_units", 1, json_type_object,
                       &units)) < 0 ||
      (rc = get_member(&c, root, "", "instruction_format", 1, json_type_object,
                       &format)) < 0)
    return rc;
  /* The sizes, each a required uint32 of at least lo. */
  const struct {
    json_object *obj;
    const char *where, *key;
    int64_t lo;
    uint32_t *out;
  } sizes[] = {
      {root, "", "num_gpus", 1, &l->num_gpus},
      {root, "", "total_processors", 0, &l->total_processors},
      {root, "", "max_instructions", 0, &l->max_instructions},
      {format, "instruction_format", "instruction_length", 1,
       &l->instruction_length},
      {format, "instruction_format", "timing_length", 0, &l->timing_length},
  };
  for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
    if ((rc = get_int(&c, sizes[i].obj, sizes[i].where, sizes[i].key, 1,
                      sizes[i].lo, UINT32_MAX, &v)) < 0)
      return rc;
    *sizes[i].out = (uint32_t)v;
  }
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
  if (l->sms_per_gpu > MPROF_DEVICE_SM_MAX)
    return BAD(m, c.at,
               "config: %u processors on %u GPU%s are %u SMs a GPU, above "
               "the %u a trace may hold",
               l->total_processors, l->num_gpus, l->num_gpus == 1 ? "" : "s",
               l->sms_per_gpu, MPROF_DEVICE_SM_MAX);
  json_object *fv;
  const char *version = "";
  if (json_object_object_get_ex(root, "format_version", &fv) && fv &&
      json_object_is_type(fv, json_type_string))
    version = json_object_get_string(fv);
  if (!(m->format_version = strdup(version)))
    return mprof__error_set(MPROF_ENOMEM, "%s: out of memory", m->name);
  if ((rc = read_types(&c, types)) || (rc = read_units(&c, units)))
    return rc;
  if ((rc = read_event_types(&c, root, "event_types", 0, &m->event_types,
                             &m->event_type_count)) ||
      (rc = read_event_types(&c, root, "controller_events", 1, &m->controllers,
                             &m->controller_count)))
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
      return BAD(m, c.at,
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
    return BAD(m, 0,
               "not an MKPROF1.2 file (it must start with "
               "\"MKPROF1.2\\n\")");
  }
  size_t start = MPROF_MKPROF_MAGIC_SIZE;
  while (start < m->size && (m->data[start] == ' ' || m->data[start] == '\t' ||
                             m->data[start] == '\r' || m->data[start] == '\n'))
    start++;
  if (start >= m->size)
    return BAD(m, start, "config: the file ends before the JSON config");
  if (m->data[start] != '{')
    return BAD(m, start,
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
    return BAD(m, start, "config: the JSON config is over 2 GiB");
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
    return BAD(m, start + parsed, "config: bad JSON: %s",
               jerr == json_tokener_continue ? "unexpected end of the config"
                                             : json_tokener_error_desc(jerr));
  }
  if (!json_object_is_type(root, json_type_object)) {
    json_object_put(root);
    return BAD(m, start, "config: the JSON config is not an object");
  }
  rc = read_config(m, root);
  json_object_put(root);
  if (rc)
    return rc;

  /* The arrays, each checked against what is left of the file. */
  uint64_t at = (end + 3) & ~(uint64_t)3;
  if (at > m->size)
    return BAD(m, m->size,
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
      return BAD(m, at,
                 "%s: %u processors x %u instructions need %s%" PRIu64
                 " bytes; %" PRIu64 " remain",
                 arrays[i].what, l->total_processors, l->max_instructions,
                 bytes == UINT64_MAX ? "over " : "", bytes,
                 (uint64_t)(m->size - at));
    *arrays[i].ptr = m->data + at;
    at += bytes;
  }
  if (at != m->size)
    return BAD(m, at, "%" PRIu64 " bytes after the %s array",
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
  mprof__file_map map;
  int rc = mprof__file_map_open(&map, path, MPROF__MAP_SEQUENTIAL);
  if (rc)
    return rc;
  rc = mprof_mkprof_parse(out, map.data, map.size, path);
  mprof__file_map_close(&map);
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

/* The timing words of instruction @p index of @p processor, or NULL when
 * the file has no events or no such instruction. */
static const uint32_t *timing_of(const mprof_mkprof *m, uint32_t processor,
                                 uint32_t index) {
  uint64_t slot;
  if (!m->events || !slot_of(m, processor, index, &slot))
    return NULL;
  return m->events + slot * m->layout.timing_length;
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
  const uint32_t *ev = timing_of(m, processor, index);
  if (!ev || unit >= m->unit_count || !m->units[unit].has_special)
    return 0;
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

/* Timing slot @p s of @p ev, counted in *n and stored while out has room,
 * when it holds a time. */
static void take_event(const uint32_t *ev, uint32_t s, mprof_mkprof_event *out,
                       size_t max, size_t *n) {
  mprof_mkprof_event e;
  e.slot = s;
  mprof_mkprof_decode(ev[s], &e.type, &e.time_ns);
  if (!e.time_ns)
    return;
  if (out && *n < max)
    out[*n] = e;
  (*n)++;
}

size_t mprof_mkprof_unit_events(const mprof_mkprof *m, uint32_t processor,
                                uint32_t index, size_t unit,
                                mprof_mkprof_event *out, size_t max) {
  const uint32_t *ev = timing_of(m, processor, index);
  if (!ev || unit >= m->unit_count)
    return 0;
  size_t n = 0;
  for (uint32_t s = m->units[unit].event_start;
       s <= m->units[unit].event_end && ev[s]; s++)
    take_event(ev, s, out, max, &n);
  return n;
}

size_t mprof_mkprof_instruction_controller_events(const mprof_mkprof *m,
                                                  uint32_t processor,
                                                  uint32_t index,
                                                  mprof_mkprof_event *out,
                                                  size_t max) {
  const uint32_t *ev = timing_of(m, processor, index);
  size_t n = 0;
  for (size_t i = 0; ev && i < m->controller_count; i++)
    take_event(ev, (uint32_t)m->controllers[i].id, out, max, &n);
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

MPROF__VERSIONS(summary_versions, "mkprof summary",
                MPROF__END_OF(mprof_mkprof_summary, max_time));

int mprof_mkprof_summarize(const mprof_mkprof *m,
                           mprof_mkprof_summary *caller) {
  if (!m || !caller)
    return mprof__error_set(MPROF_EINVAL, "mprof_mkprof_summarize: NULL");
  int rc = mprof__result_check(caller, &summary_versions);
  if (rc)
    return rc;
  /* Counted here, then the caller's version of it copied out. */
  mprof_mkprof_summary full = MPROF_MKPROF_SUMMARY_INIT, *out = &full;
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
  mprof__result_store(caller, &full, &summary_versions);
  return 0;
}
