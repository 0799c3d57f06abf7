/*
 * mprof tests — a .mkprof as the Megakernels project writes one.
 *
 * A persistent decode megakernel (one block per SM, on two GPUs) is
 * simulated as the device records it: per SM and instruction, 15 clock64()
 * stamps (opcode, global wait, first/last load, first/last use, first/last
 * store, compute start, output ready, controller wait, global signal). The
 * stamps then go through the steps of the project's converter
 * (megakittens/timings.py, timings_to_mkprof): cycles to ns at 2100 MHz
 * from the smallest stamp, the 128-slot rows, the packed events sorted by
 * time, and its config of instruction types, units, event types and
 * controller events. Nothing here is written by hand but that config.
 *
 * SPDX-License-Identifier: MIT
 */
#include "megakernels_fixture.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { IC, GW, GWD, FL, LL, FU, LU, FS, LS, CS, OR, CW, CWD, GS, GSD, STAMPS };
enum { E_LOAD = 0, E_COMPUTE = 2, E_STORE = 3, E_WAIT = 5, E_READY = 6 };
enum { TIMING_LEN = 128, INST_LEN = 32 };

#define CLOCK_MHZ 2100.0
#define PROCESSORS (MEGAKERNELS_GPUS * MEGAKERNELS_SMS_PER_GPU)
#define SLOTS (PROCESSORS * MEGAKERNELS_INSTRUCTIONS)

static const char config_format[] =
    "{\"format_version\":\"1.2\",\"instruction_types\":{"
    "\"0\":{\"name\":\"No Op\",\"color\":\"#808080\",\"params\":{}},"
    "\"1\":{\"name\":\"Attn Norm\",\"color\":\"#1f77b4\",\"params\":{\"1\":"
    "\"layer_idx\",\"2\":\"start_block\",\"3\":\"end_block\"}},"
    "\"2\":{\"name\":\"QKV Rope\",\"color\":\"#ff7f0e\",\"params\":{\"1\":"
    "\"layer_idx\",\"2\":\"start_block\",\"3\":\"end_block\"}},"
    "\"3\":{\"name\":\"Partial Attention\",\"color\":\"#2ca02c\",\"params\":{"
    "\"1\":\"layer_idx\",\"2\":\"kv_head\"}},"
    "\"4\":{\"name\":\"Attention Reduction\",\"color\":\"#d62728\",\"params\":"
    "{\"1\":\"layer_idx\",\"2\":\"kv_head\"}},"
    "\"5\":{\"name\":\"O Proj Residual\",\"color\":\"#9467bd\",\"params\":{"
    "\"1\":\"layer_idx\",\"2\":\"start_block\",\"3\":\"end_block\"}},"
    "\"6\":{\"name\":\"MLP Norm\",\"color\":\"#8c564b\",\"params\":{\"1\":"
    "\"layer_idx\",\"2\":\"start_block\",\"3\":\"end_block\"}},"
    "\"7\":{\"name\":\"Upgate SiLU\",\"color\":\"#e377c2\",\"params\":{\"1\":"
    "\"layer_idx\",\"2\":\"start_block\",\"3\":\"end_block\"}},"
    "\"8\":{\"name\":\"Down Proj Residual\",\"color\":\"#7f7f7f\",\"params\":{"
    "\"1\":\"layer_idx\",\"2\":\"start_block\",\"3\":\"end_block\"}},"
    "\"9\":{\"name\":\"RMS LM Head\",\"color\":\"#17becf\",\"params\":{\"1\":"
    "\"start_block\",\"2\":\"end_block\"}}},"
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
    "\"3\":{\"name\":\"STORE_EVENT\",\"color\":\"#ffff00\"},"
    "\"5\":{\"name\":\"WAIT_EVENT\",\"color\":\"#ff0000\"},"
    "\"6\":{\"name\":\"READY_EVENT\",\"color\":\"#00ff00\"}},"
    "\"controller_events\":{\"5\":{\"name\":\"CTRL_WAIT_START\",\"color\":"
    "\"#FA8072\"},\"6\":{\"name\":\"CTRL_WAIT_END\",\"color\":\"#32CD32\"}},"
    "\"num_gpus\":%d,\"total_processors\":%d,\"max_instructions\":%d,"
    "\"time_unit_flag\":1,\"has_events_flag\":1}";

static uint64_t rng_state = 20261206;
static uint32_t rng(uint32_t below) {
  rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
  return (uint32_t)(rng_state >> 33) % below;
}

/* Instruction @p i of every SM's queue: three layers of the eight steps,
 * then the LM head. */
static void schedule(uint32_t i, uint32_t sm, int32_t *opcode, int32_t *words) {
  uint32_t layer = i / 8;
  *opcode = i == MEGAKERNELS_INSTRUCTIONS - 1 ? 9 : (int32_t)(1 + i % 8);
  words[1] = *opcode == 9 ? (int32_t)(sm * 4) : (int32_t)layer;
  words[2] = *opcode == 3 || *opcode == 4 ? (int32_t)(sm % 8)
                                          : (int32_t)(sm * 4 + (*opcode == 9));
  words[3] = *opcode == 3 || *opcode == 4 ? 0 : (int32_t)(sm * 4 + 4);
}

/* The clock64() stamps of every instruction, [SLOTS][STAMPS]; the last SM
 * of the second GPU gets a slow LM head, the tail of the run. */
static void simulate(int64_t (*stamps)[STAMPS]) {
  static const uint32_t load[10] = {0,    900, 2600, 4200, 1500,
                                    3800, 900, 6400, 5200, 7000};
  static const uint32_t compute[10] = {0,    1200, 3400, 5600, 1800,
                                       2900, 1100, 4800, 4100, 8200};
  for (uint32_t p = 0; p < PROCESSORS; p++) {
    int64_t t =
        1000000 + (int64_t)(p / MEGAKERNELS_SMS_PER_GPU) * 4000 + rng(600);
    for (uint32_t i = 0; i < MEGAKERNELS_INSTRUCTIONS; i++) {
      int64_t *s = stamps[p * MEGAKERNELS_INSTRUCTIONS + i];
      int32_t opcode, words[4];
      schedule(i, p % MEGAKERNELS_SMS_PER_GPU, &opcode, words);
      uint32_t slow = p == PROCESSORS - 1 && opcode == 9 ? 6 : 1;
      s[IC] = opcode;
      s[CW] = t;
      s[CWD] = t + 200 + rng(800);
      s[GW] = s[CWD] + 50;
      s[GWD] = s[GW] + 100 + rng(1500);
      s[FL] = s[GWD] + 10;
      s[LL] = s[FL] + load[opcode] + rng(load[opcode] / 3 + 1);
      s[CS] = s[FL] + 120;
      s[FU] = s[CS] + 20;
      s[LU] = s[LL] + slow * (compute[opcode] + rng(compute[opcode] / 2 + 1));
      s[OR] = s[LU] + 30;
      s[FS] = s[OR] + 10;
      s[LS] = s[FS] + 300 + rng(400);
      s[GS] = s[LS] + 10;
      s[GSD] = s[GS] + 40;
      t = s[GSD] + 20 + rng(60);
    }
  }
}

/* timings.py's _pack: 16 ns steps and a 4-bit type; 0 stays 0. */
static uint32_t pack(int64_t ns, uint32_t type) {
  if (ns <= 0)
    return 0;
  int64_t steps = ns / 16 > 1 ? ns / 16 : 1;
  return (uint32_t)(((uint64_t)steps & 0x0fffffffu) << 4) | (type & 0xf);
}

typedef struct stamp_event {
  int64_t ns;
  uint32_t type;
} stamp_event;

static int by_time(const void *a, const void *b) {
  const stamp_event *x = a, *y = b;
  return x->ns < y->ns ? -1 : x->ns > y->ns;
}

/* timings.py's _pack_events: the stamps that are set, by time, packed from
 * slot @p base on. */
static void pack_events(stamp_event *pairs, uint32_t *row, uint32_t base) {
  stamp_event kept[4];
  size_t n = 0;
  for (size_t k = 0; k < 4; k++)
    if (pairs[k].ns > 0)
      kept[n++] = pairs[k];
  qsort(kept, n, sizeof kept[0], by_time); /* stable enough: times differ */
  for (size_t k = 0; k < n; k++)
    row[base + k] = pack(kept[k].ns, kept[k].type);
}

static int64_t first_pos(int64_t a, int64_t b) { return a > 0 ? a : b; }

int megakernels_fixture_write(const char *path) {
  int64_t(*stamps)[STAMPS] = calloc(SLOTS, sizeof *stamps);
  int32_t *instructions = calloc((size_t)SLOTS * INST_LEN, sizeof(int32_t));
  uint32_t *starts = calloc(SLOTS, sizeof(uint32_t));
  uint32_t *ends = calloc(SLOTS, sizeof(uint32_t));
  uint32_t *ev = calloc((size_t)SLOTS * TIMING_LEN, sizeof(uint32_t));
  int rc = -1;
  if (!stamps || !instructions || !starts || !ends || !ev)
    goto out;
  rng_state = 20261206;
  simulate(stamps);
  int64_t min_c = INT64_MAX;
  for (size_t x = 0; x < SLOTS; x++)
    for (int k = 1; k < STAMPS; k++)
      if (stamps[x][k] > 0 && stamps[x][k] < min_c)
        min_c = stamps[x][k];
  for (uint32_t p = 0; p < PROCESSORS; p++)
    for (uint32_t i = 0; i < MEGAKERNELS_INSTRUCTIONS; i++) {
      size_t idx = (size_t)p * MEGAKERNELS_INSTRUCTIONS + i;
      const int64_t *raw = stamps[idx];
      int64_t ns[STAMPS];
      for (int k = 1; k < STAMPS; k++) {
        int64_t v =
            raw[k] > 0
                ? (int64_t)((double)(raw[k] - min_c) * 1000.0 / CLOCK_MHZ)
                : 0;
        ns[k] = v > 0 ? v : 0;
      }
      int64_t lo = INT64_MAX, hi = 0;
      static const int bar_stamps[] = {GW, GWD, FL, LL, FU, LU,
                                       FS, LS,  CS, OR, GS, GSD};
      int set = 0;
      for (size_t k = 0; k < sizeof bar_stamps / sizeof bar_stamps[0]; k++) {
        int64_t v = ns[bar_stamps[k]];
        if (v <= 0)
          continue;
        set++;
        lo = v < lo ? v : lo;
        hi = v > hi ? v : hi;
      }
      if (set < 2 || hi <= lo)
        continue;
      int32_t opcode, words[4];
      schedule(i, p % MEGAKERNELS_SMS_PER_GPU, &opcode, words);
      int32_t *w = &instructions[idx * INST_LEN];
      w[0] = opcode;
      w[1] = words[1];
      w[2] = words[2];
      w[3] = words[3];
      starts[idx] = (uint32_t)lo;
      ends[idx] = (uint32_t)hi;
      uint32_t *row = &ev[idx * TIMING_LEN];
      row[0] = (uint32_t)opcode;
      row[1] = p;
      row[5] = pack(ns[CW], E_WAIT);
      row[6] = pack(ns[CWD], E_READY);
      row[8] = (uint32_t)first_pos(ns[GW], ns[FL]);
      row[9] = (uint32_t)first_pos(ns[LL], ns[GWD]);
      row[12] = (uint32_t)first_pos(ns[CS], ns[FU]);
      row[13] = (uint32_t)first_pos(ns[OR], ns[LU]);
      row[14] = (uint32_t)ns[FS];
      row[15] = (uint32_t)ns[LS];
      stamp_event loader[4] = {{ns[GW], E_WAIT},
                               {ns[GWD], E_READY},
                               {ns[FL], E_LOAD},
                               {ns[LL], E_LOAD}};
      stamp_event consumer[4] = {{ns[CS], E_COMPUTE},
                                 {ns[FU], E_COMPUTE},
                                 {ns[LU], E_COMPUTE},
                                 {ns[OR], E_READY}};
      stamp_event storer[4] = {{ns[FS], E_STORE},
                               {ns[LS], E_STORE},
                               {ns[GS], E_STORE},
                               {ns[GSD], E_STORE}};
      pack_events(loader, row, 16);
      pack_events(consumer, row, 48);
      pack_events(storer, row, 112);
    }
  char config[sizeof config_format + 64];
  snprintf(config, sizeof config, config_format, MEGAKERNELS_GPUS, PROCESSORS,
           MEGAKERNELS_INSTRUCTIONS);
  FILE *f = fopen(path, "wb");
  if (!f)
    goto out;
  size_t head = 10 + strlen(config);
  static const char zeros[4];
  int ok = fwrite("MKPROF1.2\n", 1, 10, f) == 10 &&
           fwrite(config, 1, strlen(config), f) == strlen(config) &&
           fwrite(zeros, 1, (4 - head % 4) % 4, f) == (4 - head % 4) % 4 &&
           fwrite(instructions, sizeof(int32_t), (size_t)SLOTS * INST_LEN, f) ==
               (size_t)SLOTS * INST_LEN &&
           fwrite(starts, sizeof(uint32_t), SLOTS, f) == SLOTS &&
           fwrite(ends, sizeof(uint32_t), SLOTS, f) == SLOTS &&
           fwrite(ev, sizeof(uint32_t), (size_t)SLOTS * TIMING_LEN, f) ==
               (size_t)SLOTS * TIMING_LEN;
  if (fclose(f) == 0 && ok)
    rc = 0;
out:
  free(stamps);
  free(instructions);
  free(starts);
  free(ends);
  free(ev);
  return rc;
}
