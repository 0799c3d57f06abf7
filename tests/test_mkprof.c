/*
 * mprof tests — MKPROF1.2: reading files in the Megakernels layout,
 * exporting a trace's spans and reading them back, importing into a trace,
 * and clear errors (no crash) on every truncation and corruption.
 *
 * SPDX-License-Identifier: MIT
 */
#include <inttypes.h>

#include "test_util.h"

#include "megakernels_fixture.h"

#include "mprof/mkprof.h"
#include "mprof/mprof.h"

/* ---- a file in the layout of Megakernels' timings.py ----------------------
 */

/* Its config (trimmed), with a '}' and an escaped quote inside strings that
 * a naive brace counter would trip on. */
static const char megakernels_config[] =
    "{\"format_version\":\"1.2\",\"instruction_types\":{"
    "\"0\":{\"name\":\"No Op\",\"color\":\"#808080\",\"params\":{}},"
    "\"1\":{\"name\":\"RMS {QKV} \\\"Rope\\\" }Append\",\"color\":\"#ff7f0e\","
    "\"params\":{\"1\":\"layer_idx\",\"2\":\"start_block\",\"3\":"
    "\"end_block\"}},"
    "\"2\":{\"name\":\"Partial Attention\",\"color\":\"#2ca02c\",\"params\":{"
    "\"1\":\"layer_idx\",\"2\":\"kv_head\"}}},"
    "\"instruction_format\":{\"instruction_length\":32,\"timing_length\":128},"
    "\"functional_units\":{"
    "\"0\":{\"name\":\"Loader\",\"event_range\":{\"start\":16,\"end\":47},"
    "\"height_multiplier\":1.0,\"special_events\":{\"start\":8,\"end\":9}},"
    "\"1\":{\"name\":\"Consumer\",\"event_range\":{\"start\":48,\"end\":79},"
    "\"height_multiplier\":2.0,\"special_events\":{\"start\":12,\"end\":13}},"
    "\"2\":{\"name\":\"Storer\",\"event_range\":{\"start\":112,\"end\":127},"
    "\"height_multiplier\":1.0,\"special_events\":{\"start\":14,\"end\":15}},"
    "\"3\":{\"name\":\"Launcher\",\"event_range\":{\"start\":80,\"end\":111},"
    "\"height_multiplier\":1.0,\"special_events\":{\"start\":10,\"end\":11}}},"
    "\"main_functional_unit\":1,"
    "\"event_types\":{\"0\":{\"name\":\"LOAD_EVENT\",\"color\":\"#0000ff\"},"
    "\"2\":{\"name\":\"COMPUTE_EVENT\",\"color\":\"#aa00ff\"},"
    "\"7\":{\"name\":\"ERROR_EVENT\",\"color\":\"#ff0000\"}},"
    "\"controller_events\":{\"5\":{\"name\":\"CTRL_WAIT_START\",\"color\":"
    "\"#FA8072\"},\"6\":{\"name\":\"CTRL_WAIT_END\",\"color\":\"#32CD32\"}},"
    "\"num_gpus\":1,\"total_processors\":2,\"max_instructions\":2,"
    "\"time_unit_flag\":1,\"has_events_flag\":1}";

static uint32_t pack(uint64_t ns, uint32_t type) {
  return (uint32_t)(((ns / 16) & 0x0fffffff) << 4) | (type & 0xf);
}

/* Magic, config, padding, then P*I instructions of L words, starts, ends
 * and P*I*T event slots from the arrays given. */
static unsigned char *build_mkprof(const char *config, uint32_t slots,
                                   uint32_t words, uint32_t timing,
                                   const int32_t *ins, const uint32_t *starts,
                                   const uint32_t *ends, const uint32_t *events,
                                   size_t *size) {
  size_t head = 10 + strlen(config);
  size_t pad = (4 - head % 4) % 4;
  *size = head + pad +
          4 * ((size_t)slots * words + 2 * slots + (size_t)slots * timing);
  unsigned char *out = (unsigned char *)calloc(1, *size);
  unsigned char *p = out;
  memcpy(p, "MKPROF1.2\n", 10);
  memcpy(p + 10, config, strlen(config));
  p += head + pad;
  memcpy(p, ins, 4 * (size_t)slots * words);
  p += 4 * (size_t)slots * words;
  memcpy(p, starts, 4 * (size_t)slots);
  p += 4 * (size_t)slots;
  memcpy(p, ends, 4 * (size_t)slots);
  p += 4 * (size_t)slots;
  memcpy(p, events, 4 * (size_t)slots * timing);
  return out;
}

static unsigned char *megakernels_file(size_t *size) {
  enum { P = 2, I = 2, L = 32, T = 128 };
  static int32_t ins[P * I * L];
  static uint32_t starts[P * I], ends[P * I], ev[P * I * T];
  memset(ins, 0, sizeof ins);
  memset(ev, 0, sizeof ev);
  /* processor 0, slot 0: opcode 1, layer 3, blocks 10..20 */
  ins[0] = 1;
  ins[1] = 3;
  ins[2] = 10;
  ins[3] = 20;
  starts[0] = 1000;
  ends[0] = 9000;
  ev[0] = 1;
  ev[1] = 0;
  ev[5] = pack(1100, 5); /* controller wait start */
  ev[6] = pack(1500, 6);
  ev[8] = 1200; /* loader bar, raw ns */
  ev[9] = 3000;
  ev[12] = 3000; /* consumer bar */
  ev[13] = 8000;
  ev[16] = pack(1200, 0);
  ev[17] = pack(2000, 0);
  ev[18] = pack(2990, 7); /* an error event */
  ev[19] = 0;             /* the range stops here */
  ev[20] = pack(2500, 0); /* never read */
  ev[48] = pack(3000, 2);
  ev[49] = 5; /* decodes to time 0: skipped */
  ev[50] = pack(7990, 2);
  /* processor 1, slot 1: opcode 2 (slot 0 stays empty) */
  ins[(1 * I + 1) * L] = 2;
  ins[(1 * I + 1) * L + 1] = 7;
  ins[(1 * I + 1) * L + 2] = 4;
  starts[1 * I + 1] = 2000;
  ends[1 * I + 1] = 6000;
  ev[(1 * I + 1) * T + 14] = 5000; /* storer bar */
  ev[(1 * I + 1) * T + 15] = 6000;
  ev[(1 * I + 1) * T + 112] = pack(5000, 3);
  return build_mkprof(megakernels_config, P * I, L, T, ins, starts, ends, ev,
                      size);
}

static mprof_mkprof *open_bytes(const unsigned char *bytes, size_t size) {
  mprof_mkprof *m = NULL;
  int rc = mprof_mkprof_parse(&m, bytes, size, "mem.mkprof");
  if (rc)
    fail_msg("parse failed: %s", mprof_error_last());
  return m;
}

static void test_read_megakernels_layout(void **state) {
  (void)state;
  size_t size;
  unsigned char *bytes = megakernels_file(&size);
  /* through a real file too */
  const char *path = test_path("mk.mkprof");
  assert_int_equal(test_write_file(path, bytes, size), 0);
  mprof_mkprof *m;
  assert_int_equal(mprof_mkprof_open(&m, path), 0);
  mprof_mkprof_free(m);
  m = open_bytes(bytes, size);
  const mprof_mkprof_layout *l = mprof_mkprof_get_layout(m);
  assert_int_equal(l->num_gpus, 1);
  assert_int_equal(l->total_processors, 2);
  assert_int_equal(l->max_instructions, 2);
  assert_int_equal(l->instruction_length, 32);
  assert_int_equal(l->timing_length, 128);
  assert_int_equal(l->has_events, 1);
  assert_int_equal(l->config_offset, 10);
  assert_int_equal(l->config_size, strlen(megakernels_config));
  assert_int_equal(l->data_offset % 4, 0);
  assert_string_equal(mprof_mkprof_format_version(m), "1.2");
  size_t n;
  const mprof_mkprof_instruction_type *t =
      mprof_mkprof_instruction_types(m, &n);
  assert_int_equal(n, 3);
  assert_string_equal(t[1].name, "RMS {QKV} \"Rope\" }Append");
  assert_int_equal(t[1].color, 0xffff7f0eu);
  assert_int_equal(t[1].param_count, 3);
  assert_string_equal(t[1].params[2].name, "end_block");
  const mprof_mkprof_unit *u = mprof_mkprof_units(m, &n);
  assert_int_equal(n, 4);
  assert_int_equal(u[0].role, MPROF_ROLE_LOADER);
  assert_int_equal(u[1].role, MPROF_ROLE_CONSUMER);
  assert_int_equal(u[2].role, MPROF_ROLE_STORER);
  assert_int_equal(u[3].role, MPROF_ROLE_OTHER);
  assert_true(u[1].height_multiplier == 2.0);
  assert_int_equal(l->main_unit, 1);
  const mprof_mkprof_event_type *e = mprof_mkprof_event_types(m, &n);
  assert_int_equal(n, 3);
  assert_int_equal(e[2].is_error, 1);
  assert_int_equal(e[0].is_error, 0);
  mprof_mkprof_controller_events(m, &n);
  assert_int_equal(n, 2);

  mprof_mkprof_instruction ins;
  assert_int_equal(mprof_mkprof_instruction_at(m, 0, 0, &ins), 0);
  assert_int_equal(ins.opcode, 1);
  assert_true(ins.valid);
  assert_int_equal(ins.start, 1000);
  assert_int_equal(mprof_mkprof_instruction_at(m, 1, 0, &ins), 0);
  assert_false(ins.valid);
  assert_int_equal(mprof_mkprof_instruction_at(m, 2, 0, &ins), MPROF_EINVAL);

  mprof_mkprof_param_value pv[8];
  assert_int_equal(mprof_mkprof_params(m, 0, 0, pv, 8), 3);
  assert_string_equal(pv[0].name, "layer_idx");
  assert_int_equal(pv[0].value, 3);
  assert_int_equal(pv[2].value, 20);
  assert_int_equal(mprof_mkprof_params(m, 1, 1, pv, 8), 2);
  assert_string_equal(pv[1].name, "kv_head");
  assert_int_equal(pv[1].value, 4);

  uint32_t a, b;
  assert_int_equal(mprof_mkprof_unit_activity(m, 0, 0, 0, &a, &b), 1);
  assert_int_equal(a, 1200);
  assert_int_equal(b, 3000);
  assert_int_equal(mprof_mkprof_unit_activity(m, 0, 0, 2, &a, &b), 0);
  assert_int_equal(mprof_mkprof_unit_activity(m, 1, 1, 2, &a, &b), 1);
  mprof_mkprof_event ev[16];
  assert_int_equal(mprof_mkprof_unit_events(m, 0, 0, 0, ev, 16), 3);
  assert_int_equal(ev[2].type, 7);
  assert_int_equal(ev[2].time_ns, 2976); /* 16 ns resolution */
  assert_int_equal(ev[2].slot, 18);
  assert_int_equal(mprof_mkprof_unit_events(m, 0, 0, 1, ev, 16), 2);
  assert_int_equal(ev[1].slot, 50);
  assert_int_equal(mprof_mkprof_unit_events(m, 0, 0, 1, NULL, 0), 2);
  assert_int_equal(mprof_mkprof_instruction_controller_events(m, 0, 0, ev, 16),
                   2);
  assert_int_equal(ev[0].slot, 5);
  assert_int_equal(ev[0].time_ns, 1088);

  mprof_mkprof_summary s = MPROF_MKPROF_SUMMARY_INIT;
  assert_int_equal(mprof_mkprof_summarize(m, &s), 0);
  assert_int_equal(s.instructions, 2);
  assert_int_equal(s.unit_activities, 3);
  assert_int_equal(s.events, 6);
  assert_int_equal(s.error_events, 1);
  assert_int_equal(s.controller_events, 2);
  /* A struct of a version this library does not know is left alone. */
  mprof_mkprof_summary later = MPROF_MKPROF_SUMMARY_INIT;
  later.version = 99;
  assert_int_equal(mprof_mkprof_summarize(m, &later), MPROF_EVERSION);
  assert_int_equal(later.instructions, 0);
  assert_int_equal(s.min_time, 1000);
  assert_int_equal(s.max_time, 9000);

  /* Into a trace: one span per unit bar, regions per (type, unit). */
  const char *trace_path = test_path("mk-import.mprof");
  assert_int_equal(mprof_mkprof_to_trace(m, trace_path), 0);
  mprof_trace *tr;
  assert_int_equal(mprof_trace_open(&tr, trace_path, NULL), 0);
  const mprof_span_record *sp = mprof_trace_spans(tr, &n);
  assert_int_equal(n, 3);
  const mprof_region_record *rg = mprof_trace_regions(tr, &n);
  assert_int_equal(n, 3);
  assert_string_equal(mprof_trace_string(tr, rg[sp[0].region].name),
                      "RMS {QKV} \"Rope\" }Append");
  assert_int_equal(rg[sp[0].region].role, MPROF_ROLE_LOADER);
  assert_int_equal(sp[0].start, 1200);
  assert_int_equal(sp[0].payload, 1);
  assert_int_equal(sp[2].sm, 1);
  assert_int_equal(sp[2].block, 1);
  assert_string_equal(mprof_trace_meta(tr, "capture.mode"), "mkprof");
  mprof_trace_free(tr);
  mprof_mkprof_free(m);
  mprof_mkprof_free(NULL);
  free(bytes);
}

static void test_pack_decode(void **state) {
  (void)state;
  uint32_t type;
  uint64_t t;
  mprof_mkprof_decode(mprof_mkprof_pack(123456, 9), &type, &t);
  assert_int_equal(type, 9);
  assert_int_equal(t, 123456 / 16 * 16);
  mprof_mkprof_decode(0xfffffff5u, &type, &t);
  assert_int_equal(type, 5);
  assert_int_equal(t, 0x0fffffffull * 16);
}

/* ---- exporting a trace ----------------------------------------------------
 */

/* Two devices of 4 SMs, two kernels, per block: loader, 3 consumer spans
 * (the last per warp), storer; one span with an "other" region. */
static void write_span_trace(const char *path, uint64_t stretch) {
  mprof_writer *w;
  assert_int_equal(mprof_writer_open(&w, path, NULL), 0);
  uint32_t dev[2], stream[2], shape[2];
  for (int d = 0; d < 2; d++) {
    mprof_device_record dr;
    memset(&dr, 0, sizeof dr);
    dr.id = (uint32_t)d;
    dr.name = mprof_writer_string(w, "NVIDIA H200");
    dr.sm_count = 4;
    assert_int_equal(
        mprof_writer_append(w, &dev[d], MPROF_SECTION_DEVICES, &dr), 0);
    mprof_stream_record st = {dev[d], 1, 7, 0};
    assert_int_equal(
        mprof_writer_append(w, &stream[d], MPROF_SECTION_STREAMS, &st), 0);
  }
  const char *names[2] = {"_Z4gemmPf", "_Z9layernormPf"};
  for (int k = 0; k < 2; k++) {
    mprof_kernel_record kr;
    memset(&kr, 0, sizeof kr);
    kr.mangled_name = mprof_writer_string(w, names[k]);
    kr.demangled_name =
        mprof_writer_string(w, k ? "layernorm(float*)" : "gemm(float*)");
    kr.function_index = MPROF_INDEX_NONE;
    uint32_t ki;
    assert_int_equal(mprof_writer_append(w, &ki, MPROF_SECTION_KERNELS, &kr),
                     0);
    mprof_shape_record sh;
    memset(&sh, 0, sizeof sh);
    sh.kernel = ki;
    sh.grid[0] = 6;
    sh.grid[1] = sh.grid[2] = 1;
    sh.block[0] = 128;
    sh.block[1] = sh.block[2] = 1;
    assert_int_equal(
        mprof_writer_append(w, &shape[k], MPROF_SECTION_SHAPES, &sh), 0);
  }
  static const char *region_names[] = {"load", "fma", "store", "misc"};
  static const uint32_t roles[] = {MPROF_ROLE_LOADER, MPROF_ROLE_CONSUMER,
                                   MPROF_ROLE_STORER, MPROF_ROLE_OTHER};
  for (int r = 0; r < 4; r++) {
    mprof_region_record rg = {mprof_writer_string(w, region_names[r]), 0,
                              roles[r], 0};
    assert_int_equal(mprof_writer_append(w, NULL, MPROF_SECTION_REGIONS, &rg),
                     0);
  }
  /* launch 0: gemm on device 0; launch 1: layernorm on device 1;
   * launch 2: gemm on device 0 again, `stretch` ns later. */
  uint64_t t0[3] = {1000000, 1100000, 1200000 + stretch};
  int kern[3] = {0, 1, 0}, devi[3] = {0, 1, 0};
  for (int l = 0; l < 3; l++) {
    mprof_launch_record lr = {t0[l],
                              t0[l] + 50000,
                              shape[kern[l]],
                              stream[devi[l]],
                              (uint32_t)l + 1,
                              0,
                              0};
    assert_int_equal(mprof_writer_append(w, NULL, MPROF_SECTION_LAUNCHES, &lr),
                     0);
  }
  for (uint32_t l = 0; l < 3; l++)
    for (uint32_t b = 0; b < 6; b++) {
      uint64_t s = t0[l] + 100 + b * 3000;
      uint32_t sm = b % 4;
      mprof_span_record spans[6] = {
          {s, s + 400, l, sm, b, MPROF_INDEX_NONE, 0, 0, b},
          {s + 400, s + 900, l, sm, b, MPROF_INDEX_NONE, 1, 0, b},
          {s + 900, s + 1400, l, sm, b, MPROF_INDEX_NONE, 1, 0, b},
          {s + 1400, s + 1900, l, sm, b, 2, 1, MPROF_SPAN_FLAG_WARP, b},
          {s + 1900, s + 2100, l, sm, b, MPROF_INDEX_NONE, 2, 0, b},
          {s + 2100, s + 2200, l, sm, b, MPROF_INDEX_NONE, 3, 0, b},
      };
      for (int i = 0; i < 6; i++)
        assert_int_equal(
            mprof_writer_append(w, NULL, MPROF_SECTION_SPANS, &spans[i]), 0);
    }
  assert_int_equal(mprof_writer_finish(w), 0);
}

static void test_export_and_read_back(void **state) {
  (void)state;
  const char *trace_path = test_path("spans.mprof");
  const char *out = test_path("spans.mkprof");
  write_span_trace(trace_path, 0);
  mprof_trace *t;
  assert_int_equal(mprof_trace_open(&t, trace_path, NULL), 0);
  mprof_mkprof_export_report rep = MPROF_MKPROF_EXPORT_REPORT_INIT;
  assert_int_equal(mprof_mkprof_export(t, out, NULL, &rep), 0);
  assert_int_equal(rep.spans, 3 * 6 * 6);
  assert_int_equal(rep.processors, 8);
  assert_int_equal(rep.instructions, 18);
  /* SM 0 of device 0 ran blocks 0 and 4 of launches 0 and 2 */
  assert_int_equal(rep.max_instructions, 4);
  assert_int_equal(rep.events_dropped, 0);
  assert_int_equal(rep.base_ns, 1000100 - 16);
  mprof_trace_free(t);

  mprof_mkprof *m;
  assert_int_equal(mprof_mkprof_open(&m, out), 0);
  const mprof_mkprof_layout *l = mprof_mkprof_get_layout(m);
  assert_int_equal(l->total_processors, 8);
  assert_int_equal(l->num_gpus, 2);
  assert_int_equal(l->sms_per_gpu, 4);
  assert_int_equal(l->max_instructions, 4);
  size_t n;
  const mprof_mkprof_instruction_type *types =
      mprof_mkprof_instruction_types(m, &n);
  assert_int_equal(n, 3);
  assert_string_equal(types[0].name, "No Op");
  assert_string_equal(types[1].name, "gemm(float*)");
  assert_string_equal(types[2].name, "layernorm(float*)");
  const mprof_mkprof_unit *units = mprof_mkprof_units(m, &n);
  assert_int_equal(n, 4);
  assert_string_equal(units[0].name, "Loader");
  assert_string_equal(units[1].name, "Consumer");
  assert_string_equal(units[2].name, "Storer");

  /* Processor 0 = device 0 SM 0: launch 0 block 0, launch 0 block 4,
   * launch 2 block 0, launch 2 block 4, in time order. */
  mprof_mkprof_instruction ins;
  assert_int_equal(mprof_mkprof_instruction_at(m, 0, 1, &ins), 0);
  assert_true(ins.valid);
  assert_int_equal(ins.opcode, 1);
  mprof_mkprof_param_value pv[8];
  assert_int_equal(mprof_mkprof_params(m, 0, 1, pv, 8), 4);
  assert_string_equal(pv[0].name, "launch");
  assert_int_equal(pv[0].value, 0);
  assert_string_equal(pv[1].name, "block");
  assert_int_equal(pv[1].value, 4);
  assert_int_equal(pv[2].value, 6); /* spans */
  assert_int_equal(pv[3].value, 0); /* dropped */
  uint64_t s = 1000000 + 100 + 4 * 3000 - (1000100 - 16);
  assert_int_equal(ins.start, s);
  assert_int_equal(ins.end, s + 2200);
  uint32_t a, b;
  assert_int_equal(mprof_mkprof_unit_activity(m, 0, 1, 0, &a, &b), 1);
  assert_int_equal(a, s);
  assert_int_equal(b, s + 400);
  assert_int_equal(mprof_mkprof_unit_activity(m, 0, 1, 1, &a, &b), 1);
  assert_int_equal(a, s + 400);
  assert_int_equal(b, s + 1900);
  assert_int_equal(mprof_mkprof_unit_activity(m, 0, 1, 3, &a, &b), 1);
  assert_int_equal(b - a, 100);
  /* consumer events: 3 begins (type 1 = region "fma") and 3 ends (15) */
  mprof_mkprof_event ev[32];
  assert_int_equal(mprof_mkprof_unit_events(m, 0, 1, 1, ev, 32), 6);
  assert_int_equal(ev[0].type, 1);
  assert_int_equal(ev[0].time_ns, (s + 400) / 16 * 16);
  assert_int_equal(ev[5].type, 15);
  const mprof_mkprof_event_type *et = mprof_mkprof_find_event_type(m, 1);
  assert_non_null(et);
  assert_string_equal(et->name, "fma begins");
  /* Processor 4 = device 1 SM 0: the layernorm launch only */
  assert_int_equal(mprof_mkprof_instruction_at(m, 4, 0, &ins), 0);
  assert_int_equal(ins.opcode, 2);
  assert_int_equal(mprof_mkprof_instruction_at(m, 4, 2, &ins), 0);
  assert_false(ins.valid);
  mprof_mkprof_summary sum = MPROF_MKPROF_SUMMARY_INIT;
  mprof_mkprof_summarize(m, &sum);
  assert_int_equal(sum.instructions, 18);
  assert_int_equal(sum.unit_activities, 18 * 4);
  assert_int_equal(sum.events, 18 * 12);
  mprof_mkprof_free(m);
}

static void test_export_filters_and_limits(void **state) {
  (void)state;
  const char *trace_path = test_path("filters.mprof");
  const char *out = test_path("filters.mkprof");
  write_span_trace(trace_path, 0);
  mprof_trace *t;
  assert_int_equal(mprof_trace_open(&t, trace_path, NULL), 0);
  mprof_mkprof_export_options o = MPROF_MKPROF_EXPORT_OPTIONS_INIT;
  mprof_mkprof_export_report rep = MPROF_MKPROF_EXPORT_REPORT_INIT;
  o.kernel_regex = "layernorm";
  assert_int_equal(mprof_mkprof_export(t, out, &o, &rep), 0);
  assert_int_equal(rep.spans, 36);
  /* --kernel gemm --launch 1: the second gemm launch (launch 2) */
  o.kernel_regex = "gemm";
  o.launch = 1;
  assert_int_equal(mprof_mkprof_export(t, out, &o, &rep), 0);
  assert_int_equal(rep.spans, 36);
  assert_int_equal(rep.base_ns, 1200100 - 16);
  o.launch = 2;
  assert_int_equal(mprof_mkprof_export(t, out, &o, &rep), MPROF_EINVAL);
  assert_non_null(
      strstr(mprof_error_last(), "2 launches have spans and match"));
  o.kernel_regex = NULL;
  o.launch = 2;
  assert_int_equal(mprof_mkprof_export(t, out, &o, &rep), 0);
  assert_int_equal(rep.spans, 36);
  assert_int_equal(rep.max_instructions, 2);
  o.launch = 99;
  assert_int_equal(mprof_mkprof_export(t, out, &o, &rep), MPROF_EINVAL);
  o.launch = MPROF_INDEX_NONE;
  o.kernel_regex = "nothing_like_this";
  assert_int_equal(mprof_mkprof_export(t, out, &o, &rep), MPROF_ENOTFOUND);
  o.kernel_regex = "(";
  assert_int_equal(mprof_mkprof_export(t, out, &o, &rep), MPROF_EINVAL);
  mprof_trace_free(t);

  /* Five seconds of spans do not fit 32-bit ns; one launch does. */
  write_span_trace(trace_path, 5000000000ull);
  assert_int_equal(mprof_trace_open(&t, trace_path, NULL), 0);
  assert_int_equal(mprof_mkprof_export(t, out, NULL, NULL), MPROF_EINVAL);
  assert_non_null(strstr(mprof_error_last(), "4.29 s"));
  o.kernel_regex = NULL;
  o.launch = 2;
  assert_int_equal(mprof_mkprof_export(t, out, &o, NULL), 0);
  mprof_trace_free(t);
}

static void test_export_import_round_trip(void **state) {
  (void)state;
  const char *trace_path = test_path("rt.mprof");
  const char *out = test_path("rt.mkprof");
  const char *back = test_path("rt-back.mprof");
  write_span_trace(trace_path, 0);
  mprof_trace *t;
  assert_int_equal(mprof_trace_open(&t, trace_path, NULL), 0);
  assert_int_equal(mprof_mkprof_export(t, out, NULL, NULL), 0);
  mprof_trace_free(t);
  mprof_mkprof *m;
  assert_int_equal(mprof_mkprof_open(&m, out), 0);
  assert_int_equal(mprof_mkprof_to_trace(m, back), 0);
  mprof_mkprof_free(m);
  assert_int_equal(mprof_trace_open(&t, back, NULL), 0);
  size_t n, nl;
  mprof_trace_spans(t, &n);
  assert_int_equal(n, 18 * 4); /* one bar per unit per block */
  mprof_trace_launches(t, &nl);
  assert_int_equal(nl, 2); /* one per GPU */
  mprof_trace_free(t);
}

/* ---- import then export: lossless ----------------------------------------
 */

static void same_event_types(const mprof_mkprof_event_type *x, size_t nx,
                             const mprof_mkprof_event_type *y, size_t ny) {
  assert_int_equal(nx, ny);
  for (size_t i = 0; i < nx; i++) {
    assert_int_equal(x[i].id, y[i].id);
    assert_string_equal(x[i].name, y[i].name);
    assert_int_equal(x[i].color, y[i].color);
    assert_int_equal(x[i].is_error, y[i].is_error);
  }
}

static void same_events(const mprof_mkprof_event *x, size_t nx,
                        const mprof_mkprof_event *y, size_t ny) {
  assert_int_equal(nx, ny);
  for (size_t i = 0; i < nx; i++) {
    assert_int_equal(x[i].slot, y[i].slot);
    assert_int_equal(x[i].type, y[i].type);
    assert_int_equal(x[i].time_ns, y[i].time_ns);
  }
}

/* Everything the API reads of @p a is what it reads of @p b. */
static void same_mkprof(const mprof_mkprof *a, const mprof_mkprof *b) {
  const mprof_mkprof_layout *la = mprof_mkprof_get_layout(a);
  const mprof_mkprof_layout *lb = mprof_mkprof_get_layout(b);
  assert_memory_equal(la, lb, sizeof *la);
  assert_string_equal(mprof_mkprof_format_version(a),
                      mprof_mkprof_format_version(b));
  size_t na, nb;
  const mprof_mkprof_instruction_type *ta =
      mprof_mkprof_instruction_types(a, &na);
  const mprof_mkprof_instruction_type *tb =
      mprof_mkprof_instruction_types(b, &nb);
  assert_int_equal(na, nb);
  for (size_t i = 0; i < na; i++) {
    assert_int_equal(ta[i].id, tb[i].id);
    assert_string_equal(ta[i].name, tb[i].name);
    assert_int_equal(ta[i].color, tb[i].color);
    assert_int_equal(ta[i].param_count, tb[i].param_count);
    for (size_t k = 0; k < ta[i].param_count; k++) {
      assert_int_equal(ta[i].params[k].position, tb[i].params[k].position);
      assert_string_equal(ta[i].params[k].name, tb[i].params[k].name);
    }
  }
  const mprof_mkprof_unit *ua = mprof_mkprof_units(a, &na);
  const mprof_mkprof_unit *ub = mprof_mkprof_units(b, &nb);
  assert_int_equal(na, nb);
  for (size_t i = 0; i < na; i++) {
    assert_string_equal(ua[i].name, ub[i].name);
    assert_int_equal(ua[i].event_start, ub[i].event_start);
    assert_int_equal(ua[i].event_end, ub[i].event_end);
    assert_int_equal(ua[i].special_start, ub[i].special_start);
    assert_int_equal(ua[i].special_end, ub[i].special_end);
  }
  size_t units = na;
  const mprof_mkprof_event_type *ea = mprof_mkprof_event_types(a, &na);
  const mprof_mkprof_event_type *eb = mprof_mkprof_event_types(b, &nb);
  same_event_types(ea, na, eb, nb);
  ea = mprof_mkprof_controller_events(a, &na);
  eb = mprof_mkprof_controller_events(b, &nb);
  same_event_types(ea, na, eb, nb);
  for (uint32_t p = 0; p < la->total_processors; p++)
    for (uint32_t i = 0; i < la->max_instructions; i++) {
      mprof_mkprof_instruction x, y;
      assert_int_equal(mprof_mkprof_instruction_at(a, p, i, &x), 0);
      assert_int_equal(mprof_mkprof_instruction_at(b, p, i, &y), 0);
      assert_int_equal(x.opcode, y.opcode);
      assert_int_equal(x.start, y.start);
      assert_int_equal(x.end, y.end);
      assert_int_equal(x.valid, y.valid);
      assert_memory_equal(x.words, y.words, 4 * la->instruction_length);
      mprof_mkprof_param_value pa[32], pb[32];
      size_t np = mprof_mkprof_params(a, p, i, pa, 32);
      assert_int_equal(np, mprof_mkprof_params(b, p, i, pb, 32));
      for (size_t k = 0; k < np && k < 32; k++) {
        assert_string_equal(pa[k].name, pb[k].name);
        assert_int_equal(pa[k].value, pb[k].value);
      }
      mprof_mkprof_event xa[128], xb[128];
      for (size_t u = 0; u < units; u++) {
        uint32_t s0, e0, s1, e1;
        assert_int_equal(mprof_mkprof_unit_activity(a, p, i, u, &s0, &e0),
                         mprof_mkprof_unit_activity(b, p, i, u, &s1, &e1));
        size_t n0 = mprof_mkprof_unit_events(a, p, i, u, xa, 128);
        size_t n1 = mprof_mkprof_unit_events(b, p, i, u, xb, 128);
        same_events(xa, n0, xb, n1);
      }
      size_t c0 = mprof_mkprof_instruction_controller_events(a, p, i, xa, 128);
      size_t c1 = mprof_mkprof_instruction_controller_events(b, p, i, xb, 128);
      same_events(xa, c0, xb, c1);
    }
}

/* A file as the Megakernels converter writes one, imported into a trace
 * and exported again: the same file, byte for byte, and the same names,
 * params, event types, controller events and events through the API. The
 * spans alone would give back 2 events per unit bar (4,608 of 9,216) and
 * no controller events (of 1,535): a filtered export, which works from
 * the spans, shows the difference. */
static void test_import_export_lossless(void **state) {
  (void)state;
  char orig[1024], trace[1024], back[1024];
  snprintf(orig, sizeof orig, "%s", test_path("mk-orig.mkprof"));
  snprintf(trace, sizeof trace, "%s", test_path("mk-rt.mprof"));
  snprintf(back, sizeof back, "%s", test_path("mk-back.mkprof"));
  assert_int_equal(megakernels_fixture_write(orig), 0);
  mprof_mkprof *a, *b;
  assert_int_equal(mprof_mkprof_open(&a, orig), 0);
  assert_int_equal(mprof_mkprof_to_trace(a, trace), 0);
  mprof_trace *t;
  assert_int_equal(mprof_trace_open(&t, trace, NULL), 0);
  mprof_mkprof_export_report rep = MPROF_MKPROF_EXPORT_REPORT_INIT;
  assert_int_equal(mprof_mkprof_export(t, back, NULL, &rep), 0);
  mprof_mkprof_summary sa = MPROF_MKPROF_SUMMARY_INIT,
                       sb = MPROF_MKPROF_SUMMARY_INIT;
  mprof_mkprof_summarize(a, &sa);
  /* 12 unit events an instruction; 2 controller events each, but for the
   * first, whose wait starts at time 0 and is not written (timings.py). */
  assert_int_equal(sa.events, 9216);
  assert_int_equal(sa.controller_events, 1535);
  assert_int_equal(rep.instructions, 768);
  assert_int_equal(rep.events, sa.events + sa.controller_events);
  assert_int_equal(rep.processors, 32);
  assert_int_equal(mprof_mkprof_open(&b, back), 0);
  same_mkprof(a, b);
  mprof_mkprof_summarize(b, &sb);
  assert_memory_equal(&sa, &sb, sizeof sa);
  mprof_mkprof_free(b);
  size_t na, nb;
  unsigned char *x = test_read_file(orig, &na);
  unsigned char *y = test_read_file(back, &nb);
  assert_int_equal(na, nb);
  assert_memory_equal(x, y, na);
  free(x);
  free(y);
  /* From the spans (a filter): the bars' begins and ends only. */
  mprof_mkprof_export_options o = MPROF_MKPROF_EXPORT_OPTIONS_INIT;
  o.kernel_regex = "megakernel";
  assert_int_equal(mprof_mkprof_export(t, back, &o, &rep), 0);
  assert_int_equal(mprof_mkprof_open(&b, back), 0);
  mprof_mkprof_summarize(b, &sb);
  assert_int_equal(sb.events, 4608);
  assert_int_equal(sb.controller_events, 0);
  mprof_mkprof_free(b);
  mprof_trace_free(t);
  /* A rewrite keeps the file. */
  char rewritten[1024];
  snprintf(rewritten, sizeof rewritten, "%s", test_path("mk-rw.mprof"));
  assert_int_equal(mprof_trace_open(&t, trace, NULL), 0);
  assert_int_equal(mprof_trace_rewrite(t, rewritten, 0), 0);
  mprof_trace_free(t);
  assert_int_equal(mprof_trace_open(&t, rewritten, NULL), 0);
  assert_int_equal(mprof_mkprof_export(t, back, NULL, NULL), 0);
  mprof_trace_free(t);
  y = test_read_file(back, &nb);
  x = test_read_file(orig, &na);
  assert_int_equal(na, nb);
  assert_memory_equal(x, y, na);
  free(x);
  free(y);
  mprof_mkprof_free(a);
}

/* ---- corrupt files
 * ---------------------------------------------------------*/

static void expect_error(const unsigned char *bytes, size_t size, int status,
                         const char *needle) {
  mprof_mkprof *m = NULL;
  int rc = mprof_mkprof_parse(&m, bytes, size, "bad.mkprof");
  if (rc != status || !strstr(mprof_error_last(), needle) ||
      strncmp(mprof_error_last(), "bad.mkprof: at byte ", 20) != 0)
    fail_msg("got %d '%s', wanted %d with '%s'", rc, mprof_error_last(), status,
             needle);
  assert_null(m);
}

/* A small valid file from the exporter, cut at every byte. */
static void test_truncated_everywhere(void **state) {
  (void)state;
  const char *trace_path = test_path("cut.mprof");
  const char *out = test_path("cut.mkprof");
  write_span_trace(trace_path, 0);
  mprof_trace *t;
  assert_int_equal(mprof_trace_open(&t, trace_path, NULL), 0);
  mprof_mkprof_export_options o = MPROF_MKPROF_EXPORT_OPTIONS_INIT;
  o.launch = 1;
  assert_int_equal(mprof_mkprof_export(t, out, &o, NULL), 0);
  mprof_trace_free(t);
  size_t size = 0;
  unsigned char *bytes = test_read_file(out, &size);
  assert_non_null(bytes);
  for (size_t cut = 0; cut < size; cut++) {
    mprof_mkprof *m = NULL;
    int rc = mprof_mkprof_parse(&m, bytes, cut, "cut.mkprof");
    if (rc != MPROF_EFORMAT ||
        strncmp(mprof_error_last(), "cut.mkprof: at byte ", 20) != 0)
      fail_msg("cut at %zu: got %d '%s'", cut, rc, mprof_error_last());
    assert_null(m);
  }
  mprof_mkprof *m;
  assert_int_equal(mprof_mkprof_parse(&m, bytes, size, "cut.mkprof"), 0);
  mprof_mkprof_free(m);
  free(bytes);
}

/* Replace the first @p from in the config with @p to and rebuild. */
static unsigned char *variant(const char *from, const char *to, size_t *size) {
  char config[4096];
  const char *at = strstr(megakernels_config, from);
  assert_non_null(at);
  size_t head = (size_t)(at - megakernels_config);
  snprintf(config, sizeof config, "%.*s%s%s", (int)head, megakernels_config, to,
           at + strlen(from));
  enum { P = 2, I = 2, L = 32, T = 128 };
  static int32_t ins[P * I * L];
  static uint32_t se[P * I], ev[P * I * T];
  return build_mkprof(config, P * I, L, T, ins, se, se, ev, size);
}

static void expect_variant(const char *from, const char *to, int status,
                           const char *needle) {
  size_t size;
  unsigned char *bytes = variant(from, to, &size);
  expect_error(bytes, size, status, needle);
  free(bytes);
}

static void test_bad_configs(void **state) {
  (void)state;
  size_t size;
  unsigned char *good = megakernels_file(&size);
  unsigned char *bad = (unsigned char *)malloc(size + 16);

  memcpy(bad, good, size);
  memcpy(bad, "MKPROF1.3\n", 10);
  mprof_mkprof *m = NULL;
  assert_int_equal(mprof_mkprof_parse(&m, bad, size, "bad.mkprof"),
                   MPROF_EVERSION);
  assert_non_null(strstr(mprof_error_last(), "version '1.3'"));
  memcpy(bad, "NOTMKPROF\n", 10);
  expect_error(bad, size, MPROF_EFORMAT, "not an MKPROF1.2 file");
  memcpy(bad, good, size);
  bad[10] = '[';
  expect_error(bad, size, MPROF_EFORMAT, "expected '{'");
  /* A NUL inside the config, outside any string */
  memcpy(bad, good, size);
  bad[11 + strlen("\"format_version\":\"1.2\",")] = 0;
  expect_error(bad, size, MPROF_EFORMAT, "NUL byte");
  /* Trailing bytes */
  memcpy(bad, good, size);
  memset(bad + size, 0, 16);
  expect_error(bad, size + 16, MPROF_EFORMAT, "16 bytes after the events");

  expect_variant("\"num_gpus\":1,", "\"num_gpus\":1,,", MPROF_EFORMAT,
                 "bad JSON");
  expect_variant("\"functional_units\":{", "\"functional_unitz\":{",
                 MPROF_EFORMAT, "'functional_units' is missing");
  expect_variant("\"num_gpus\":1", "\"num_gpus\":\"one\"", MPROF_EFORMAT,
                 "'num_gpus' is not an integer");
  expect_variant("\"num_gpus\":1", "\"num_gpus\":0", MPROF_EFORMAT,
                 "'num_gpus' is 0, outside 1..");
  /* Processors per GPU are SMs: up to MPROF_DEVICE_SM_MAX (then the file
   * is too short for them), one more refused. */
  expect_variant("\"total_processors\":2", "\"total_processors\":1024",
                 MPROF_EFORMAT, "remain");
  expect_variant("\"total_processors\":2", "\"total_processors\":1025",
                 MPROF_EFORMAT,
                 "config: 1025 processors on 1 GPU are 1025 SMs a GPU, above "
                 "the 1024 a trace may hold");
  expect_variant("\"total_processors\":2", "\"total_processors\":2000000",
                 MPROF_EFORMAT, "2000000 processors on 1 GPU");
  expect_variant("\"max_instructions\":2", "\"max_instructions\":4294967295",
                 MPROF_EFORMAT, "remain");
  expect_variant("\"instruction_length\":32",
                 "\"instruction_length\":4294967295", MPROF_EFORMAT,
                 "instructions: 2 processors x 2 instructions need");
  expect_variant("\"start\":112", "\"start\":200", MPROF_EFORMAT,
                 "outside 0..127");
  expect_variant("\"start\":112,\"end\":127", "\"start\":120,\"end\":119",
                 MPROF_EFORMAT, "end 119 is before start 120");
  expect_variant("#ff7f0e", "orange", MPROF_EFORMAT,
                 "color 'orange' is not #RRGGBB");
  expect_variant("\"3\":\"end_block\"", "\"33\":\"end_block\"", MPROF_EFORMAT,
                 "parameter position 33");
  expect_variant("\"2\":{\"name\":\"Partial", "\"two\":{\"name\":\"Partial",
                 MPROF_EFORMAT, "key 'two' is not an integer");
  expect_variant("\"main_functional_unit\":1", "\"main_functional_unit\":9",
                 MPROF_EFORMAT, "main_functional_unit 9");
  expect_variant("\"5\":{\"name\":\"CTRL", "\"500\":{\"name\":\"CTRL",
                 MPROF_EFORMAT, "slot 500");
  expect_variant("{\"name\":\"Loader\",", "{\"nam\":\"Loader\",", MPROF_EFORMAT,
                 "'name' is missing");
  /* Unbalanced: the config runs into the arrays, or to the end. */
  expect_variant("\"has_events_flag\":1}", "\"has_events_flag\":1",
                 MPROF_EFORMAT, "NUL byte before the JSON config closed");
  static const char open_only[] = "MKPROF1.2\n{\"a\":{\"b\":\"}\\\"\"}";
  expect_error((const unsigned char *)open_only, sizeof open_only - 1,
               MPROF_EFORMAT, "does not close before the end of the file");
  /* Deep nesting stops in json-c, not in a crash. */
  {
    char deep[512] = "\"x\":";
    for (int i = 0; i < 100; i++)
      strcat(deep, "[");
    expect_variant("\"time_unit_flag\":1,", deep, MPROF_EFORMAT, "bad JSON");
  }
  free(bad);
  free(good);
}

/* Random corruption of a valid file never crashes (ASan build). */
static void test_random_corruption(void **state) {
  (void)state;
  size_t size;
  unsigned char *good = megakernels_file(&size);
  unsigned char *bad = (unsigned char *)malloc(size);
  uint64_t rng = 12345;
  for (int round = 0; round < 3000; round++) {
    memcpy(bad, good, size);
    for (int k = 0; k < 3; k++) {
      rng = rng * 6364136223846793005ull + 1442695040888963407ull;
      size_t at = (size_t)(rng >> 33) % size;
      bad[at] = (unsigned char)(rng >> 13);
    }
    mprof_mkprof *m = NULL;
    if (mprof_mkprof_parse(&m, bad, size, "fuzz.mkprof") == 0) {
      mprof_mkprof_summary s = MPROF_MKPROF_SUMMARY_INIT;
      mprof_mkprof_summarize(m, &s);
      mprof_mkprof_free(m);
    } else {
      assert_non_null(strstr(mprof_error_last(), "fuzz.mkprof: at byte"));
    }
  }
  free(bad);
  free(good);
}

int main(int argc, char **argv) {
  /* For tests/cli/test_source_mkprof.sh: a trace with spans to export. */
  if (argc == 3 && strcmp(argv[1], "--write-trace") == 0) {
    write_span_trace(argv[2], 0);
    return 0;
  }
  /* A .mkprof as the Megakernels project's converter writes one. */
  if (argc == 3 && strcmp(argv[1], "--write-megakernels") == 0)
    return megakernels_fixture_write(argv[2]) ? 1 : 0;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_read_megakernels_layout),
      cmocka_unit_test(test_pack_decode),
      cmocka_unit_test(test_export_and_read_back),
      cmocka_unit_test(test_export_filters_and_limits),
      cmocka_unit_test(test_export_import_round_trip),
      cmocka_unit_test(test_import_export_lossless),
      cmocka_unit_test(test_truncated_everywhere),
      cmocka_unit_test(test_bad_configs),
      cmocka_unit_test(test_random_corruption),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
