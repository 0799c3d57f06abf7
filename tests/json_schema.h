/*
 * mprof tests — a small JSON Schema (draft 2020-12) checker on json-c, for
 * the subset docs/summary.schema.json and docs/diff.schema.json use: type,
 * enum, const, properties, required, additionalProperties, items, minItems,
 * maxItems, minimum, maximum, anyOf and local $ref (into $defs, or
 * draft-07's definitions). Any other keyword is an
 * error, so a schema never silently loses a constraint the checker does not
 * know.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef MPROF_TEST_JSON_SCHEMA_H
#define MPROF_TEST_JSON_SCHEMA_H

#include <stddef.h>

#include <json-c/json.h>

/* 0 when @p doc satisfies @p schema; else -1 with the JSON path of the
 * first violation and why in @p why. */
int json_schema_validate(json_object *schema, json_object *doc, char *why,
                         size_t why_size);

/* Validate the JSON text @p text against the schema file @p schema_path. */
int json_schema_validate_text(const char *schema_path, const char *text,
                              char *why, size_t why_size);

#endif
