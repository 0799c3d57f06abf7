/*
 * mprof-render — tabs, instruction categories (Flame lanes), stall
 * families (Raster lanes) and their colours.
 *
 * SPDX-License-Identifier: MIT
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "render_internal.h"

static const char *const tab_keys[MPROF_RENDER_TAB_COUNT] = {
    "trace",  "summary", "hotspots", "flame",
    "raster", "mega",    "density",  "activity"};
static const char *const tab_titles[MPROF_RENDER_TAB_COUNT] = {
    "Trace",  "Summary", "Hotspots", "Flame",
    "Raster", "Mega",    "Density",  "Activity"};

int mprof_render_tab_is_span(int tab) {
  return tab == MPROF_RENDER_MEGA || tab == MPROF_RENDER_DENSITY ||
         tab == MPROF_RENDER_ACTIVITY;
}

int mprof_render_tab_is_timeline(int tab) {
  return tab == MPROF_RENDER_TRACE || mprof_render_tab_is_span(tab);
}

/* The index of @p key (any case) among @p count @p keys, or -1. */
static int parse_key(const char *const *keys, int count, const char *key) {
  for (int i = 0; key && i < count; i++)
    if (strcasecmp(key, keys[i]) == 0)
      return i;
  return -1;
}

static const char *const rows_keys[MPROF_ACTIVITY_ROWS_COUNT] = {"sm", "block",
                                                                 "warp"};
static const char *const depth_keys[MPROF_ACTIVITY_DEPTH_COUNT] = {
    "auto", "phase", "instruction"};

const char *mprof_render_activity_rows_key(int rows) {
  return rows >= 0 && rows < MPROF_ACTIVITY_ROWS_COUNT ? rows_keys[rows] : "";
}

int mprof_render_activity_rows_parse(const char *key) {
  return parse_key(rows_keys, MPROF_ACTIVITY_ROWS_COUNT, key);
}

const char *mprof_render_activity_depth_key(int depth) {
  return depth >= 0 && depth < MPROF_ACTIVITY_DEPTH_COUNT ? depth_keys[depth]
                                                          : "";
}

int mprof_render_activity_depth_parse(const char *key) {
  return parse_key(depth_keys, MPROF_ACTIVITY_DEPTH_COUNT, key);
}

const char *mprof_render_tab_key(int tab) {
  return tab >= 0 && tab < MPROF_RENDER_TAB_COUNT ? tab_keys[tab] : "";
}

const char *mprof_render_tab_title(int tab) {
  return tab >= 0 && tab < MPROF_RENDER_TAB_COUNT ? tab_titles[tab] : "";
}

int mprof_render_tab_parse(const char *key) {
  return parse_key(tab_keys, MPROF_RENDER_TAB_COUNT, key);
}

/* ---- instruction categories ---------------------------------------------
 *
 * By the opcode's base (up to the first '.'). Uniform-datapath opcodes
 * (UIADD3, ULDC, ...) are classified as their vector twin unless they are
 * known themselves (UTMALDG is TMA, a memory operation).
 */
typedef struct opcode_class {
  const char *base;
  int category;
} opcode_class;

static const opcode_class exact_opcodes[] = {
    /* memory */
    {"LD", MPROF_CAT_MEMORY},
    {"ST", MPROF_CAT_MEMORY},
    {"LDG", MPROF_CAT_MEMORY},
    {"STG", MPROF_CAT_MEMORY},
    {"LDS", MPROF_CAT_MEMORY},
    {"STS", MPROF_CAT_MEMORY},
    {"LDL", MPROF_CAT_MEMORY},
    {"STL", MPROF_CAT_MEMORY},
    {"LDC", MPROF_CAT_MEMORY},
    {"LDSM", MPROF_CAT_MEMORY},
    {"STSM", MPROF_CAT_MEMORY},
    {"LDGSTS", MPROF_CAT_MEMORY},
    {"ATOM", MPROF_CAT_MEMORY},
    {"ATOMG", MPROF_CAT_MEMORY},
    {"ATOMS", MPROF_CAT_MEMORY},
    {"RED", MPROF_CAT_MEMORY},
    {"REDG", MPROF_CAT_MEMORY},
    {"REDUX", MPROF_CAT_ARITH},
    {"TEX", MPROF_CAT_MEMORY},
    {"TLD", MPROF_CAT_MEMORY},
    {"TLD4", MPROF_CAT_MEMORY},
    {"TXQ", MPROF_CAT_MEMORY},
    {"TMML", MPROF_CAT_MEMORY},
    {"TXD", MPROF_CAT_MEMORY},
    {"SULD", MPROF_CAT_MEMORY},
    {"SUST", MPROF_CAT_MEMORY},
    {"SURED", MPROF_CAT_MEMORY},
    {"SUATOM", MPROF_CAT_MEMORY},
    {"CCTL", MPROF_CAT_MEMORY},
    {"CCTLL", MPROF_CAT_MEMORY},
    {"UTMALDG", MPROF_CAT_MEMORY},
    {"UTMASTG", MPROF_CAT_MEMORY},
    {"UTMAREDG", MPROF_CAT_MEMORY},
    {"UTMAPF", MPROF_CAT_MEMORY},
    {"UTMACCTL", MPROF_CAT_MEMORY},
    {"UBLKCP", MPROF_CAT_MEMORY},
    {"UBLKPF", MPROF_CAT_MEMORY},
    {"UBLKRED", MPROF_CAT_MEMORY},
    {"ULDC", MPROF_CAT_MEMORY},
    /* tensor cores */
    {"HMMA", MPROF_CAT_TENSOR},
    {"IMMA", MPROF_CAT_TENSOR},
    {"DMMA", MPROF_CAT_TENSOR},
    {"BMMA", MPROF_CAT_TENSOR},
    {"HGMMA", MPROF_CAT_TENSOR},
    {"IGMMA", MPROF_CAT_TENSOR},
    {"QGMMA", MPROF_CAT_TENSOR},
    {"BGMMA", MPROF_CAT_TENSOR},
    {"OMMA", MPROF_CAT_TENSOR},
    {"QMMA", MPROF_CAT_TENSOR},
    {"UTCMMA", MPROF_CAT_TENSOR},
    {"UTCHMMA", MPROF_CAT_TENSOR},
    {"UTCQMMA", MPROF_CAT_TENSOR},
    {"UTCIMMA", MPROF_CAT_TENSOR},
    /* control flow */
    {"BRA", MPROF_CAT_CONTROL},
    {"BRX", MPROF_CAT_CONTROL},
    {"BRXU", MPROF_CAT_CONTROL},
    {"JMP", MPROF_CAT_CONTROL},
    {"JMX", MPROF_CAT_CONTROL},
    {"JMXU", MPROF_CAT_CONTROL},
    {"CALL", MPROF_CAT_CONTROL},
    {"RET", MPROF_CAT_CONTROL},
    {"EXIT", MPROF_CAT_CONTROL},
    {"BSSY", MPROF_CAT_CONTROL},
    {"BSYNC", MPROF_CAT_CONTROL},
    {"BREAK", MPROF_CAT_CONTROL},
    {"BPT", MPROF_CAT_CONTROL},
    {"KILL", MPROF_CAT_CONTROL},
    {"BMOV", MPROF_CAT_CONTROL},
    {"RPCMOV", MPROF_CAT_CONTROL},
    {"ACQBULK", MPROF_CAT_CONTROL},
    /* synchronisation */
    {"BAR", MPROF_CAT_SYNC},
    {"BARRIER", MPROF_CAT_SYNC},
    {"MEMBAR", MPROF_CAT_SYNC},
    {"DEPBAR", MPROF_CAT_SYNC},
    {"LDGDEPBAR", MPROF_CAT_SYNC},
    {"WARPSYNC", MPROF_CAT_SYNC},
    {"SYNCS", MPROF_CAT_SYNC},
    {"ERRBAR", MPROF_CAT_SYNC},
    {"FENCE", MPROF_CAT_SYNC},
    {"ARRIVES", MPROF_CAT_SYNC},
    {"NANOSLEEP", MPROF_CAT_SYNC},
    {"YIELD", MPROF_CAT_SYNC},
    {"WARPGROUP", MPROF_CAT_SYNC},
    {"WARPGROUPSET", MPROF_CAT_SYNC},
    {"UCGABAR_ARV", MPROF_CAT_SYNC},
    {"UCGABAR_WAIT", MPROF_CAT_SYNC},
    {"CGAERRBAR", MPROF_CAT_SYNC},
    {"ELECT", MPROF_CAT_SYNC},
    {"VOTE", MPROF_CAT_OTHER},
    {"MATCH", MPROF_CAT_OTHER},
    /* arithmetic */
    {"FADD", MPROF_CAT_ARITH},
    {"FADD32I", MPROF_CAT_ARITH},
    {"FMUL", MPROF_CAT_ARITH},
    {"FMUL32I", MPROF_CAT_ARITH},
    {"FFMA", MPROF_CAT_ARITH},
    {"FFMA32I", MPROF_CAT_ARITH},
    {"FMNMX", MPROF_CAT_ARITH},
    {"FSET", MPROF_CAT_ARITH},
    {"FSETP", MPROF_CAT_ARITH},
    {"FSEL", MPROF_CAT_ARITH},
    {"FCHK", MPROF_CAT_ARITH},
    {"FRND", MPROF_CAT_ARITH},
    {"FSWZADD", MPROF_CAT_ARITH},
    {"MUFU", MPROF_CAT_ARITH},
    {"F2F", MPROF_CAT_ARITH},
    {"F2I", MPROF_CAT_ARITH},
    {"I2F", MPROF_CAT_ARITH},
    {"I2I", MPROF_CAT_ARITH},
    {"F2FP", MPROF_CAT_ARITH},
    {"I2FP", MPROF_CAT_ARITH},
    {"F2IP", MPROF_CAT_ARITH},
    {"I2IP", MPROF_CAT_ARITH},
    {"FRCP", MPROF_CAT_ARITH},
    {"DADD", MPROF_CAT_ARITH},
    {"DMUL", MPROF_CAT_ARITH},
    {"DFMA", MPROF_CAT_ARITH},
    {"DSETP", MPROF_CAT_ARITH},
    {"DMNMX", MPROF_CAT_ARITH},
    {"HADD2", MPROF_CAT_ARITH},
    {"HMUL2", MPROF_CAT_ARITH},
    {"HFMA2", MPROF_CAT_ARITH},
    {"HSET2", MPROF_CAT_ARITH},
    {"HSETP2", MPROF_CAT_ARITH},
    {"HMNMX2", MPROF_CAT_ARITH},
    {"IADD", MPROF_CAT_ARITH},
    {"IADD3", MPROF_CAT_ARITH},
    {"IADD32I", MPROF_CAT_ARITH},
    {"VIADD", MPROF_CAT_ARITH},
    {"VIADDMNMX", MPROF_CAT_ARITH},
    {"VIMNMX", MPROF_CAT_ARITH},
    {"VIMNMX3", MPROF_CAT_ARITH},
    {"IMAD", MPROF_CAT_ARITH},
    {"IMAD32I", MPROF_CAT_ARITH},
    {"IMUL", MPROF_CAT_ARITH},
    {"IMUL32I", MPROF_CAT_ARITH},
    {"IMNMX", MPROF_CAT_ARITH},
    {"ISETP", MPROF_CAT_ARITH},
    {"ISCADD", MPROF_CAT_ARITH},
    {"IABS", MPROF_CAT_ARITH},
    {"IDP", MPROF_CAT_ARITH},
    {"IDP4A", MPROF_CAT_ARITH},
    {"LOP", MPROF_CAT_ARITH},
    {"LOP3", MPROF_CAT_ARITH},
    {"LOP32I", MPROF_CAT_ARITH},
    {"LEA", MPROF_CAT_ARITH},
    {"SHF", MPROF_CAT_ARITH},
    {"SHL", MPROF_CAT_ARITH},
    {"SHR", MPROF_CAT_ARITH},
    {"POPC", MPROF_CAT_ARITH},
    {"FLO", MPROF_CAT_ARITH},
    {"BREV", MPROF_CAT_ARITH},
    {"BMSK", MPROF_CAT_ARITH},
    {"SGXT", MPROF_CAT_ARITH},
    {"PRMT", MPROF_CAT_ARITH},
    {"SEL", MPROF_CAT_ARITH},
    {"PLOP3", MPROF_CAT_ARITH},
    {"PSETP", MPROF_CAT_ARITH},
    {"FMNMX3", MPROF_CAT_ARITH},
    {"FADD2", MPROF_CAT_ARITH},
    {"FMUL2", MPROF_CAT_ARITH},
    {"FFMA2", MPROF_CAT_ARITH},
    /* data movement and the rest */
    {"MOV", MPROF_CAT_OTHER},
    {"MOV32I", MPROF_CAT_OTHER},
    {"S2R", MPROF_CAT_OTHER},
    {"S2UR", MPROF_CAT_OTHER},
    {"CS2R", MPROF_CAT_OTHER},
    {"R2UR", MPROF_CAT_OTHER},
    {"SHFL", MPROF_CAT_OTHER},
    {"P2R", MPROF_CAT_OTHER},
    {"R2P", MPROF_CAT_OTHER},
    {"NOP", MPROF_CAT_OTHER},
};

int mprof_render_opcode_category(const char *opcode) {
  if (!opcode || !*opcode)
    return MPROF_CAT_OTHER;
  char base[32];
  size_t n = strcspn(opcode, ". ");
  if (n >= sizeof base)
    n = sizeof base - 1;
  memcpy(base, opcode, n);
  base[n] = '\0';
  for (int pass = 0; pass < 2; pass++) {
    const char *key = pass == 0 ? base : base + 1;
    if (pass == 1 && base[0] != 'U')
      break;
    for (size_t i = 0; i < sizeof exact_opcodes / sizeof exact_opcodes[0]; i++)
      if (strcmp(key, exact_opcodes[i].base) == 0)
        return exact_opcodes[i].category;
  }
  /* Families the table does not spell out, by shape of the name. */
  size_t len = strlen(base);
  if (len >= 3 && strcmp(base + len - 3, "MMA") == 0)
    return MPROF_CAT_TENSOR;
  if (strncmp(base, "LD", 2) == 0 || strncmp(base, "ST", 2) == 0 ||
      strncmp(base, "ATOM", 4) == 0 || strncmp(base, "UTMA", 4) == 0)
    return MPROF_CAT_MEMORY;
  if (strstr(base, "BAR"))
    return MPROF_CAT_SYNC;
  return MPROF_CAT_OTHER;
}

/* ---- stall families (mprof/reasons.h) ---------------------------------- */

int mprof_render_reason_family(const char *name) {
  return (int)mprof_stall_reason_family(name);
}

static const char *const category_titles[MPROF_CAT_COUNT] = {
    "Memory (load/store)", "Arithmetic (FP/INT)", "Tensor (MMA)",
    "Control (branch)",    "Sync (barrier)",      "Other"};
static const uint32_t category_colors[MPROF_CAT_COUNT] = {
    0xe15759, 0x4e79a7, 0xf28e2b, 0x59a14f, 0xb07aa1, 0x9c958f};

static const char *const family_titles[MPROF_FAM_COUNT] = {
    "Memory latency", "Memory throughput", "MIO / shared", "Compute",
    "Sync",           "Fetch / branch",    "Scheduling",   "Issued"};
static const uint32_t family_colors[MPROF_FAM_COUNT] = {
    0xd62728, 0xff7f0e, 0xc9b52a, 0x1f77b4,
    0x9467bd, 0x8c564b, 0x7f7f7f, 0x2ca02c};

const char *mprof_render_category_title(int category) {
  return category >= 0 && category < MPROF_CAT_COUNT ? category_titles[category]
                                                     : "";
}

const char *mprof_render_family_title(int family) {
  return family >= 0 && family < MPROF_FAM_COUNT ? family_titles[family] : "";
}

uint32_t mprof_render_category_color(int category) {
  return category >= 0 && category < MPROF_CAT_COUNT ? category_colors[category]
                                                     : 0x808080u;
}

uint32_t mprof_render_family_color(int family) {
  return family >= 0 && family < MPROF_FAM_COUNT ? family_colors[family]
                                                 : 0x808080u;
}
