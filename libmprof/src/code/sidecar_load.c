/*
 * mprof — the sidecar: a validating json-c reader (docs/SIDECAR.md).
 *
 * SPDX-License-Identifier: MIT
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <json-c/json.h>

#include "base/file.h"
#include "base/text.h"
#include "internal.h"
#include "mprof/sidecar.h"
#include "mprof/trace.h"
#include "sass_internal.h"

#include "sidecar_internal.h"

/* ---- loading -------------------------------------------------------------
 */

typedef struct loader {
  const char *path;
  mprof_sidecar *sc;
  uint64_t cell_budget;
  size_t file_count;
  const char **files; /* interned */
} loader;

#define HINT                                                                   \
  "the sidecar is damaged or was not written by mprof; rebuild it with "       \
  "'mprof sass --rebuild TRACE', or read the trace without it: --no-sidecar"

/* "PATH: WHERE: WHAT (hint)". */
static int bad(const loader *l, const char *where, const char *fmt, ...)
    MPROF__PRINTF(3, 4);

static int bad(const loader *l, const char *where, const char *fmt, ...) {
  char what[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  if (where && *where)
    return mprof__error_set(MPROF_EFORMAT, "%s: %s: %s (" HINT ")", l->path,
                            where, what);
  return mprof__error_set(MPROF_EFORMAT, "%s: %s (" HINT ")", l->path, what);
}

/* json-c gives NULL for a JSON null; an array item or a key that is null
 * is handed around as this marker, so "missing" means really absent. */
static int null_marker;
#define JSON_NULL ((json_object *)&null_marker)

static json_object *item_of(json_object *array, size_t i) {
  json_object *v = json_object_array_get_idx(array, i);
  return v ? v : JSON_NULL;
}

static int is_type(json_object *o, json_type type) {
  return o && o != JSON_NULL && json_object_is_type(o, type);
}

static const char *type_word(json_object *o) {
  if (o == JSON_NULL)
    return "null";
  switch (json_object_get_type(o)) {
  case json_type_null: return "null";
  case json_type_boolean: return "a boolean";
  case json_type_double: return "a fraction";
  case json_type_int: return "an integer";
  case json_type_object: return "an object";
  case json_type_array: return "an array";
  case json_type_string: return "a string";
  default: return "something else";
  }
}

/* An unsigned integer no larger than @p max. */
static int get_uint(const loader *l, const char *where, const char *field,
                    json_object *o, uint64_t max, uint64_t *out) {
  if (!o)
    return bad(l, where, "%s is missing", field);
  if (is_type(o, json_type_double))
    return bad(l, where, "%s is not an integer (it is a fraction)", field);
  if (!is_type(o, json_type_int))
    return bad(l, where, "%s is not a number (it is %s)", field, type_word(o));
  int64_t v = json_object_get_int64(o);
  if (v < 0)
    return bad(l, where, "%s is negative (%lld)", field, (long long)v);
  uint64_t u = json_object_get_uint64(o);
  if (u == UINT64_MAX) /* json-c stops there: the number may be larger */
    return bad(l, where, "%s is out of range (too large; at most %llu)", field,
               (unsigned long long)max);
  if (u > max)
    return bad(l, where, "%s is out of range (%llu; at most %llu)", field,
               (unsigned long long)u, (unsigned long long)max);
  *out = u;
  return 0;
}

static int get_u32(const loader *l, const char *where, const char *field,
                   json_object *o, uint32_t *out) {
  uint64_t v;
  int rc = get_uint(l, where, field, o, UINT32_MAX, &v);
  if (!rc)
    *out = (uint32_t)v;
  return rc;
}

/* A string of valid UTF-8 without NUL characters (what mprof writes, so
 * that it reads back the same); *out points into @p o. */
static int get_string(const loader *l, const char *where, const char *field,
                      json_object *o, const char **out) {
  if (!o)
    return bad(l, where, "%s is missing", field);
  if (!is_type(o, json_type_string))
    return bad(l, where, "%s is not a string (it is %s)", field, type_word(o));
  const char *s = json_object_get_string(o);
  if (strlen(s) != (size_t)json_object_get_string_len(o))
    return bad(l, where, "%s contains a NUL character", field);
  for (const unsigned char *p = (const unsigned char *)s; *p;) {
    uint32_t cp;
    size_t len = mprof__utf8_next(p, &cp);
    if (!len)
      return bad(l, where, "%s is not valid UTF-8 (byte %zu)", field,
                 (size_t)(p - (const unsigned char *)s));
    p += len;
  }
  *out = s;
  return 0;
}

static json_object *field_of(json_object *obj, const char *key) {
  json_object *v = NULL;
  if (!json_object_object_get_ex(obj, key, &v))
    return NULL;
  return v ? v : JSON_NULL;
}

static int get_array(const loader *l, const char *where, const char *field,
                     json_object *o, size_t *count) {
  if (!o)
    return bad(l, where, "%s is missing", field);
  if (!is_type(o, json_type_array))
    return bad(l, where, "%s is not an array (it is %s)", field, type_word(o));
  *count = json_object_array_length(o);
  return 0;
}

static int parse_crc(const loader *l, const char *where, json_object *o,
                     uint64_t *out) {
  const char *s;
  int rc = get_string(l, where, "cubin_crc", o, &s);
  if (rc)
    return rc;
  size_t n = strlen(s);
  if (n == 0 || n > 16)
    return bad(l, where,
               "cubin_crc \"%.40s\" is not 1 to 16 hexadecimal digits", s);
  if (strspn(s, "0123456789abcdefABCDEF") != n)
    return bad(l, where, "cubin_crc \"%.40s\" is not hexadecimal", s);
  *out = strtoull(s, NULL, 16);
  return 0;
}

/* An instruction's or PC's @p offset comes after the one before, @p prev. */
static int check_ascending(const loader *l, const char *where, uint32_t offset,
                           uint32_t prev) {
  if (offset > prev)
    return 0;
  return bad(l, where,
             offset == prev
                 ? "offset 0x%x appears twice"
                 : "offset 0x%x comes after 0x%x (offsets must ascend)",
             offset, prev);
}

static int load_instruction(loader *l, const char *fwhere, uint32_t fn,
                            const mprof_sidecar_function *info, json_object *o,
                            size_t index, int have_prev, uint32_t prev) {
  static const char *const names[6] = {"offset",   "predicate",  "opcode",
                                       "operands", "file_index", "line"};
  char where[160];
  snprintf(where, sizeof where, "%s.instructions[%zu]", fwhere, index);
  if (!is_type(o, json_type_array))
    return bad(l, where, "is not an array (it is %s)", type_word(o));
  if (json_object_array_length(o) != 6)
    return bad(l, where,
               "has %zu items, expected 6 [offset, predicate, opcode, "
               "operands, file_index, line]",
               json_object_array_length(o));
  mprof_sass_instruction in;
  memset(&in, 0, sizeof in);
  int rc = get_u32(l, where, names[0], item_of(o, 0), &in.offset);
  if (!rc)
    rc = get_string(l, where, names[1], item_of(o, 1), &in.predicate);
  if (!rc)
    rc = get_string(l, where, names[2], item_of(o, 2), &in.opcode);
  if (!rc)
    rc = get_string(l, where, names[3], item_of(o, 3), &in.operands);
  if (rc)
    return rc;
  json_object *fi = item_of(o, 4);
  if (is_type(fi, json_type_int) && json_object_get_int64(fi) == -1) {
    in.file = "";
  } else {
    uint64_t v;
    rc = get_uint(l, where, names[4], fi, UINT32_MAX, &v);
    if (rc)
      return rc;
    if (v >= l->file_count)
      return bad(l, where,
                 "file_index %llu does not exist (files has %zu; -1 means "
                 "none)",
                 (unsigned long long)v, l->file_count);
    in.file = l->files[v];
  }
  rc = get_u32(l, where, names[5], item_of(o, 5), &in.line);
  if (rc)
    return rc;
  if (have_prev && (rc = check_ascending(l, where, in.offset, prev)))
    return rc;
  if (info->size && in.offset >= info->size)
    return bad(l, where,
               "offset 0x%x is past the end of the function (%u "
               "bytes)",
               in.offset, info->size);
  rc = mprof_sidecar_add_instruction(l->sc, fn, &in);
  return rc == MPROF_ENOMEM ? rc : (rc ? bad(l, where, "%s", "rejected") : 0);
}

/* Strict decimal: no sign, no leading zeros. */
static int parse_reason_key(const char *key, uint32_t *out) {
  size_t n = strlen(key);
  if (n == 0 || n > 4 || (n > 1 && key[0] == '0'))
    return -1;
  uint32_t v = 0;
  for (size_t i = 0; i < n; i++) {
    if (key[i] < '0' || key[i] > '9')
      return -1;
    v = v * 10 + (uint32_t)(key[i] - '0');
  }
  if (v > MPROF__SIDECAR_MAX_REASON)
    return -1;
  *out = v;
  return 0;
}

static int load_pc(loader *l, const char *fwhere, uint32_t fn, json_object *o,
                   size_t index, int have_prev, uint32_t prev) {
  char where[160];
  snprintf(where, sizeof where, "%s.pcs[%zu]", fwhere, index);
  if (!is_type(o, json_type_array))
    return bad(l, where, "is not an array (it is %s)", type_word(o));
  if (json_object_array_length(o) != 2)
    return bad(l, where, "has %zu items, expected 2 [offset, {reason: count}]",
               json_object_array_length(o));
  uint32_t offset;
  int rc = get_u32(l, where, "offset", item_of(o, 0), &offset);
  if (rc)
    return rc;
  if (have_prev && (rc = check_ascending(l, where, offset, prev)))
    return rc;
  json_object *counts = item_of(o, 1);
  if (!is_type(counts, json_type_object))
    return bad(l, where, "the counts are not an object (they are %s)",
               type_word(counts));
  /* Check every key first, so the table is sized once and within budget. */
  uint32_t top = 0;
  int any = 0;
  json_object_object_foreach(counts, key, value) {
    uint32_t reason;
    if (parse_reason_key(key, &reason) != 0)
      return bad(l, where,
                 "stall reason \"%.20s\" is not an index from 0 to %u", key,
                 MPROF__SIDECAR_MAX_REASON);
    char field[48];
    snprintf(field, sizeof field, "the count of reason %u", reason);
    uint64_t v;
    rc = get_uint(l, where, field, value ? value : JSON_NULL, INT64_MAX, &v);
    if (rc)
      return rc;
    if (reason + 1 > top)
      top = reason + 1;
    any = 1;
  }
  if (l->sc->cells + top > l->cell_budget)
    return bad(l, where,
               "the PC count tables need more memory than a file of this "
               "size can justify (%llu cells)",
               (unsigned long long)(l->sc->cells + top));
  json_object_object_foreach(counts, key2, value2) {
    uint32_t reason = 0;
    parse_reason_key(key2, &reason);
    rc = mprof_sidecar_add_samples(l->sc, fn, offset, reason,
                                   json_object_get_uint64(value2));
    if (rc)
      return rc;
  }
  if (!any) {
    /* Keep the PC (an empty table) so the file round-trips. */
    rc = mprof_sidecar_add_samples(l->sc, fn, offset, 0, 0);
    if (rc)
      return rc;
  }
  return 0;
}

static int load_function(loader *l, json_object *o, size_t index) {
  char where[64];
  snprintf(where, sizeof where, "functions[%zu]", index);
  if (!is_type(o, json_type_object))
    return bad(l, where, "is not an object (it is %s)", type_word(o));
  mprof_sidecar_function info;
  memset(&info, 0, sizeof info);
  int rc = get_string(l, where, "name", field_of(o, "name"), &info.name);
  if (!rc && !*info.name)
    rc = bad(l, where, "name is empty");
  if (!rc)
    rc = get_string(l, where, "demangled", field_of(o, "demangled"),
                    &info.demangled);
  if (!rc)
    rc = parse_crc(l, where, field_of(o, "cubin_crc"), &info.cubin_crc);
  const struct {
    const char *key;
    uint32_t *out;
  } u32s[] = {{"function_index", &info.function_index},
              {"device", &info.device},
              {"registers", &info.registers},
              {"static_shared", &info.static_shared},
              {"size", &info.size}};
  for (size_t i = 0; !rc && i < sizeof u32s / sizeof u32s[0]; i++)
    rc = get_u32(l, where, u32s[i].key, field_of(o, u32s[i].key), u32s[i].out);
  const char *state = NULL;
  if (!rc)
    rc = get_string(l, where, "sass_state", field_of(o, "sass_state"), &state);
  if (rc)
    return rc;
  size_t s = 0;
  while (s < STATE_COUNT && strcmp(state, mprof__sidecar_state_names[s]) != 0)
    s++;
  if (s == STATE_COUNT)
    return bad(l, where,
               "sass_state \"%.40s\" is not present, no_cubin, "
               "no_disassembler, failed or deferred",
               state);
  info.sass_state = (uint32_t)s;
  rc = get_string(l, where, "sass_error", field_of(o, "sass_error"),
                  &info.sass_error);
  if (rc)
    return rc;
  json_object *insns = field_of(o, "instructions");
  json_object *pcs = field_of(o, "pcs");
  size_t insn_count, pc_count;
  rc = get_array(l, where, "instructions", insns, &insn_count);
  if (!rc)
    rc = get_array(l, where, "pcs", pcs, &pc_count);
  if (rc)
    return rc;
  const mprof_sidecar_function *dup =
      mprof_sidecar_find(l->sc, info.name, info.cubin_crc);
  if (dup && dup->cubin_crc == info.cubin_crc)
    return bad(l, where,
               "repeats function \"%.80s\" with cubin_crc %016llx (each "
               "(name, cubin_crc) appears once)",
               info.name, (unsigned long long)info.cubin_crc);
  uint32_t fn;
  rc = mprof_sidecar_add_function(l->sc, &fn, &info);
  if (rc)
    return rc == MPROF_ENOMEM ? rc : bad(l, where, "%s", mprof_error_last());
  uint32_t prev = 0;
  for (size_t i = 0; i < insn_count; i++) {
    json_object *in = item_of(insns, i);
    rc = load_instruction(l, where, fn, &info, in, i, i > 0, prev);
    if (rc)
      return rc;
    prev = mprof_sidecar_function_at(l->sc, fn)->instructions[i].offset;
  }
  for (size_t i = 0; i < pc_count; i++) {
    rc = load_pc(l, where, fn, item_of(pcs, i), i, i > 0, prev);
    if (rc)
      return rc;
    prev = mprof_sidecar_function_at(l->sc, fn)->pcs[i].offset;
  }
  return 0;
}

static int load_root(loader *l, json_object *root) {
  if (!is_type(root, json_type_object))
    return bad(l, NULL, "is not a JSON object");
  json_object *format = field_of(root, "format");
  if (!format || !is_type(format, json_type_string) ||
      strcmp(json_object_get_string(format), SIDECAR_FORMAT) != 0)
    return mprof__error_set(MPROF_EFORMAT,
                            "%s: format is not \"" SIDECAR_FORMAT
                            "\" (not an mprof PC sidecar; these are written "
                            "by 'mprof record' and 'mprof sass')",
                            l->path);
  uint64_t version;
  int rc = get_uint(l, NULL, "version", field_of(root, "version"), UINT32_MAX,
                    &version);
  if (rc)
    return rc;
  if (version != SIDECAR_VERSION)
    return mprof__error_set(MPROF_EVERSION,
                            "%s: sidecar version %llu is not supported (this "
                            "mprof reads version %d; upgrade mprof, or "
                            "rebuild the sidecar with 'mprof sass --rebuild "
                            "TRACE')",
                            l->path, (unsigned long long)version,
                            SIDECAR_VERSION);
  json_object *reasons = field_of(root, "stall_reasons");
  size_t n;
  rc = get_array(l, NULL, "stall_reasons", reasons, &n);
  if (rc)
    return rc;
  if (n > MPROF__SIDECAR_MAX_REASON + 1)
    return bad(l, "stall_reasons", "has %zu names, more than the %u allowed", n,
               MPROF__SIDECAR_MAX_REASON + 1);
  for (size_t i = 0; i < n; i++) {
    char where[48];
    snprintf(where, sizeof where, "stall_reasons[%zu]", i);
    const char *name;
    rc = get_string(l, where, "the name", item_of(reasons, i), &name);
    if (!rc)
      rc = mprof_sidecar_set_stall_reason(l->sc, (uint32_t)i, name);
    if (rc)
      return rc;
  }
  json_object *files = field_of(root, "files");
  rc = get_array(l, NULL, "files", files, &l->file_count);
  if (rc)
    return rc;
  l->files = (const char **)calloc(l->file_count ? l->file_count : 1,
                                   sizeof *l->files);
  if (!l->files)
    return mprof__sidecar_oom();
  for (size_t i = 0; i < l->file_count; i++) {
    char where[48];
    snprintf(where, sizeof where, "files[%zu]", i);
    const char *name;
    rc = get_string(l, where, "the name", item_of(files, i), &name);
    if (rc)
      return rc;
    if (!*name)
      return bad(l, where, "the name is empty");
    l->files[i] = mprof__sidecar_intern(l->sc, name);
    if (!l->files[i])
      return mprof__sidecar_oom();
  }
  json_object *fns = field_of(root, "functions");
  rc = get_array(l, NULL, "functions", fns, &n);
  if (rc)
    return rc;
  for (size_t i = 0; i < n; i++) {
    rc = load_function(l, item_of(fns, i), i);
    if (rc)
      return rc;
  }
  return 0;
}

static int is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* The JSON object of the file @p text (@p size bytes), in *root. */
static int parse_json(const loader *l, const char *text, size_t size,
                      json_object **root) {
  if (size > SIDECAR_MAX_FILE)
    return mprof__error_set(MPROF_EFORMAT,
                            "%s: %llu bytes is more than the %u a sidecar may "
                            "have (" HINT ")",
                            l->path, (unsigned long long)size,
                            SIDECAR_MAX_FILE);
  size_t first = 0;
  while (first < size && is_space(text[first]))
    first++;
  if (first == size)
    return bad(l, NULL, "is empty");
  if (text[first] != '{')
    return bad(l, NULL, "byte %zu: is not a JSON object (expected '{')", first);
  struct json_tokener *tok = json_tokener_new_ex(SIDECAR_MAX_DEPTH);
  if (!tok)
    return mprof__sidecar_oom();
  json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
  *root = json_tokener_parse_ex(tok, text, (int)size);
  enum json_tokener_error jerr = json_tokener_get_error(tok);
  size_t end = json_tokener_get_parse_end(tok);
  json_tokener_free(tok);
  if (!*root) {
    if (jerr == json_tokener_continue)
      return bad(l, NULL,
                 "byte %zu: the JSON ends before it is complete (the file "
                 "is truncated)",
                 size);
    if (jerr == json_tokener_error_depth)
      return bad(l, NULL, "byte %zu: nested deeper than %d levels", end,
                 SIDECAR_MAX_DEPTH);
    return bad(l, NULL, "byte %zu: JSON syntax error: %s", end,
               json_tokener_error_desc(jerr));
  }
  while (end < size && is_space(text[end]))
    end++;
  if (end < size)
    return bad(l, NULL, "byte %zu: unexpected data after the JSON object", end);
  return 0;
}

int mprof_sidecar_load(mprof_sidecar **out, const char *path) {
  if (!out || !path)
    return mprof__error_set(MPROF_EINVAL, "mprof_sidecar_load: NULL argument");
  *out = NULL;
  /* Not read ahead: a file over SIDECAR_MAX_FILE is refused by its size
   * before any of it is read. */
  mprof__file_map map;
  int rc = mprof__file_map_open(&map, path, MPROF__MAP_RANDOM);
  if (rc)
    return rc;
  loader l;
  memset(&l, 0, sizeof l);
  l.path = path;
  l.cell_budget =
      (uint64_t)map.size * SIDECAR_CELLS_PER_BYTE + SIDECAR_CELLS_SLACK;
  json_object *root = NULL;
  rc = parse_json(&l, (const char *)map.data, map.size, &root);
  mprof__file_map_close(&map);
  if (!rc)
    rc = mprof_sidecar_new(&l.sc);
  if (!rc)
    rc = load_root(&l, root);
  json_object_put(root);
  free((void *)l.files);
  if (rc) {
    mprof_sidecar_free(l.sc);
    return rc;
  }
  *out = l.sc;
  return 0;
}

int mprof_sidecar_path_of(const mprof_trace *trace, char *out, size_t size) {
  size_t n = mprof_trace_process_count(trace);
  for (size_t p = 0; out && size && p < n; p++) {
    const char *path = mprof_trace_process_meta(trace, p, "path");
    struct stat st;
    if (path && *path &&
        (size_t)snprintf(out, size, "%s.pc.json", path) < size &&
        stat(out, &st) == 0)
      return 0;
  }
  return -1;
}
