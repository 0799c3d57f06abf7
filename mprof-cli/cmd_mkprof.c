/*
 * mprof mkprof — MKPROF1.2 (Megakernels) files: info, export, import.
 *
 * SPDX-License-Identifier: MIT
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "mprof/mkprof.h"
#include "mprof/mprof.h"

static const char *role_name(uint32_t role) {
  static const char *const names[] = {"other", "separator", "loader",
                                      "consumer", "storer"};
  return role < sizeof names / sizeof names[0] ? names[role] : "?";
}

static void print_events(const mprof_mkprof *m, const mprof_mkprof_event *ev,
                         size_t n, int controller) {
  size_t controllers;
  const mprof_mkprof_event_type *ct =
      mprof_mkprof_controller_events(m, &controllers);
  for (size_t e = 0; e < n; e++) {
    char unnamed[16];
    snprintf(unnamed, sizeof unnamed, "type%u", ev[e].type);
    const char *name = unnamed;
    if (controller) {
      for (size_t c = 0; c < controllers; c++)
        if (ct[c].id == ev[e].slot)
          name = ct[c].name;
    } else {
      const mprof_mkprof_event_type *t =
          mprof_mkprof_find_event_type(m, ev[e].type);
      if (t)
        name = t->name;
    }
    printf(" [%u]%s@%.3fus", ev[e].slot, name, (double)ev[e].time_ns / 1e3);
  }
}

static void print_instruction(const mprof_mkprof *m, uint32_t p, uint32_t i) {
  mprof_mkprof_instruction ins;
  mprof_mkprof_instruction_at(m, p, i, &ins);
  const mprof_mkprof_instruction_type *t =
      mprof_mkprof_find_type(m, ins.opcode);
  printf("instr      gpu %u sm %u #%u  %s (opcode %d)  %.3f..%.3f us\n",
         ins.gpu, ins.sm, i, t ? t->name : "?", ins.opcode, ins.start / 1e3,
         ins.end / 1e3);
  mprof_mkprof_param_value params[32];
  size_t np = mprof_mkprof_params(m, p, i, params, 32);
  if (np) {
    printf("             params:");
    for (size_t k = 0; k < np && k < 32; k++)
      printf(" %s=%d", params[k].name, params[k].value);
    printf("\n");
  }
  size_t units;
  const mprof_mkprof_unit *u = mprof_mkprof_units(m, &units);
  for (size_t k = 0; k < units; k++) {
    uint32_t a, b;
    mprof_mkprof_event ev[256];
    size_t n = mprof_mkprof_unit_events(m, p, i, k, ev, 256);
    int active = mprof_mkprof_unit_activity(m, p, i, k, &a, &b);
    if (!active && !n)
      continue;
    printf("             %-9s", u[k].name);
    if (active)
      printf(" %.3f..%.3f us", a / 1e3, b / 1e3);
    print_events(m, ev, n < 256 ? n : 256, 0);
    printf("\n");
  }
  mprof_mkprof_event cev[64];
  size_t nc = mprof_mkprof_instruction_controller_events(m, p, i, cev, 64);
  if (nc) {
    printf("             controller");
    print_events(m, cev, nc < 64 ? nc : 64, 1);
    printf("\n");
  }
}

static int mkprof_info(int argc, char **argv) {
  const char *path = NULL;
  unsigned long long show = 0;
  for (int i = 2; i < argc; i++) {
    if (strcmp(argv[i], "--instructions") == 0 && i + 1 < argc) {
      if (cli_parse_u64(argv[++i], &show) != 0)
        return cli_usage_error("mkprof", "--instructions takes a count");
    } else if (argv[i][0] == '-')
      return cli_usage_error("mkprof", "unknown option '%s'", argv[i]);
    else if (!path)
      path = argv[i];
    else
      return cli_usage_error("mkprof", "info takes one file");
  }
  if (!path)
    return cli_usage_error("mkprof", "info needs a .mkprof file");
  mprof_mkprof *m;
  int rc = mprof_mkprof_open(&m, path);
  if (rc)
    return cli_fail(rc);
  const mprof_mkprof_layout *l = mprof_mkprof_get_layout(m);
  printf("mkprof     %s (MKPROF1.2, format_version \"%s\")\n", path,
         mprof_mkprof_format_version(m));
  printf("layout     %u GPUs, %u processors (%u per GPU), %u instruction "
         "slots each; %u words per instruction, %u timing slots, events %s\n",
         l->num_gpus, l->total_processors, l->sms_per_gpu, l->max_instructions,
         l->instruction_length, l->timing_length, l->has_events ? "yes" : "no");
  printf("config     %" PRIu64 " bytes of JSON at byte %" PRIu64
         ", arrays at byte %" PRIu64 "\n",
         l->config_size, l->config_offset, l->data_offset);
  size_t n;
  const mprof_mkprof_instruction_type *types =
      mprof_mkprof_instruction_types(m, &n);
  for (size_t i = 0; i < n; i++) {
    printf("type %-5" PRId64 " %-32s #%06x", types[i].id, types[i].name,
           types[i].color & 0xffffffu);
    for (size_t k = 0; k < types[i].param_count; k++)
      printf(" %u:%s", types[i].params[k].position, types[i].params[k].name);
    printf("\n");
  }
  const mprof_mkprof_unit *units = mprof_mkprof_units(m, &n);
  for (size_t i = 0; i < n; i++) {
    printf("unit %-5" PRId64 " %-12s %-9s events %u..%u", units[i].id,
           units[i].name, role_name(units[i].role), units[i].event_start,
           units[i].event_end);
    if (units[i].has_special)
      printf(", bar in slots %u/%u", units[i].special_start,
             units[i].special_end);
    if (l->main_unit == i)
      printf(" (main)");
    printf("\n");
  }
  const mprof_mkprof_event_type *ev = mprof_mkprof_event_types(m, &n);
  for (size_t i = 0; i < n; i++)
    printf("event %-4" PRId64 " %s%s\n", ev[i].id, ev[i].name,
           ev[i].is_error ? " (error)" : "");
  ev = mprof_mkprof_controller_events(m, &n);
  for (size_t i = 0; i < n; i++)
    printf("controller slot %-3" PRId64 " %s\n", ev[i].id, ev[i].name);
  mprof_mkprof_summary s = MPROF_MKPROF_SUMMARY_INIT;
  mprof_mkprof_summarize(m, &s);
  printf("holds      %zu instructions, %zu unit bars, %zu events (%zu "
         "errors), %zu controller events, %.3f..%.3f us\n",
         s.instructions, s.unit_activities, s.events, s.error_events,
         s.controller_events, s.min_time / 1e3, s.max_time / 1e3);
  unsigned long long shown = 0;
  for (uint32_t p = 0; p < l->total_processors && shown < show; p++)
    for (uint32_t i = 0; i < l->max_instructions && shown < show; i++) {
      mprof_mkprof_instruction ins;
      mprof_mkprof_instruction_at(m, p, i, &ins);
      if (!ins.valid)
        continue;
      print_instruction(m, p, i);
      shown++;
    }
  mprof_mkprof_free(m);
  return CLI_EXIT_OK;
}

static int mkprof_export(int argc, char **argv) {
  const char *trace_path = NULL, *out = NULL;
  mprof_mkprof_export_options opts = MPROF_MKPROF_EXPORT_OPTIONS_INIT;
  for (int i = 2; i < argc; i++) {
    if (strcmp(argv[i], "-o") == 0 && i + 1 < argc)
      out = argv[++i];
    else if (strcmp(argv[i], "--kernel") == 0 && i + 1 < argc)
      opts.kernel_regex = argv[++i];
    else if (strcmp(argv[i], "--launch") == 0 && i + 1 < argc) {
      unsigned long long v;
      if (cli_parse_u64(argv[++i], &v) != 0 || v >= MPROF_INDEX_NONE)
        return cli_usage_error("mkprof", "--launch takes a launch index");
      opts.launch = (uint32_t)v;
    } else if (argv[i][0] == '-')
      return cli_usage_error("mkprof", "unknown option '%s'", argv[i]);
    else if (!trace_path)
      trace_path = argv[i];
    else
      return cli_usage_error("mkprof", "export takes one trace");
  }
  if (!trace_path || !out)
    return cli_usage_error("mkprof", "usage: mprof mkprof export TRACE -o "
                                     "OUT.mkprof");
  mprof_trace *t;
  int rc = mprof_trace_open(&t, trace_path, NULL);
  if (rc)
    return cli_fail(rc);
  mprof_mkprof_export_report report = MPROF_MKPROF_EXPORT_REPORT_INIT;
  rc = mprof_mkprof_export(t, out, &opts, &report);
  size_t kept = 0;
  mprof_trace_section(t, MPROF_SECTION_MKPROF, &kept);
  mprof_trace_free(t);
  if (rc)
    return cli_fail(rc);
  if (kept && !opts.kernel_regex && opts.launch == MPROF_INDEX_NONE) {
    printf("wrote %s: the MKPROF file %s was imported from, whole: %zu "
           "instructions on %zu processors, %zu events\n",
           out, trace_path, report.instructions, report.processors,
           report.events);
    return CLI_EXIT_OK;
  }
  printf("wrote %s: %zu spans as %zu instructions on %zu processors (at most "
         "%zu each), %zu events, %.3f ms",
         out, report.spans, report.instructions, report.processors,
         report.max_instructions, report.events, report.extent_ns / 1e6);
  if (report.events_dropped)
    printf("; %zu events did not fit the 16/32-slot event ranges",
           report.events_dropped);
  printf("\n");
  return CLI_EXIT_OK;
}

static int mkprof_import(int argc, char **argv) {
  const char *path = NULL, *out = NULL;
  for (int i = 2; i < argc; i++) {
    if (strcmp(argv[i], "-o") == 0 && i + 1 < argc)
      out = argv[++i];
    else if (argv[i][0] == '-')
      return cli_usage_error("mkprof", "unknown option '%s'", argv[i]);
    else if (!path)
      path = argv[i];
    else
      return cli_usage_error("mkprof", "import takes one file");
  }
  if (!path || !out)
    return cli_usage_error("mkprof", "usage: mprof mkprof import FILE.mkprof "
                                     "-o OUT.mprof");
  mprof_mkprof *m;
  int rc = mprof_mkprof_open(&m, path);
  if (rc)
    return cli_fail(rc);
  rc = mprof_mkprof_to_trace(m, out);
  mprof_mkprof_free(m);
  if (rc)
    return cli_fail(rc);
  printf("wrote %s\n", out);
  return CLI_EXIT_OK;
}

int cmd_mkprof(int argc, char **argv) {
  if (argc < 2)
    return cli_usage_error("mkprof", "expected 'info', 'export' or 'import'");
  if (strcmp(argv[1], "info") == 0)
    return mkprof_info(argc, argv);
  if (strcmp(argv[1], "export") == 0)
    return mkprof_export(argc, argv);
  if (strcmp(argv[1], "import") == 0)
    return mkprof_import(argc, argv);
  return cli_usage_error("mkprof", "unknown subcommand '%s'", argv[1]);
}
