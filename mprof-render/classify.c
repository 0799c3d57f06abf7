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
    "trace", "summary", "hotspots", "flame",  "raster",
    "mega",  "density", "activity", "source", "ranks"};
static const char *const tab_titles[MPROF_RENDER_TAB_COUNT] = {
    "Trace", "Summary", "Hotspots", "Flame",  "Raster",
    "Mega",  "Density", "Activity", "Source", "Ranks"};

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
static const struct {
  int category;
  const char *bases; /* separated by spaces */
} opcode_classes[] = {
    /* memory */
    {MPROF_CAT_MEMORY,
     "LD ST LDG STG LDS STS LDL STL LDC LDSM STSM LDGSTS ATOM ATOMG ATOMS RED "
     "REDG TEX TLD TLD4 TXQ TMML TXD SULD SUST SURED SUATOM CCTL CCTLL UTMALDG "
     "UTMASTG UTMAREDG UTMAPF UTMACCTL UBLKCP UBLKPF UBLKRED ULDC"},
    /* tensor cores */
    {MPROF_CAT_TENSOR, "HMMA IMMA DMMA BMMA HGMMA IGMMA QGMMA BGMMA OMMA QMMA "
                       "UTCMMA UTCHMMA UTCQMMA UTCIMMA"},
    /* control flow */
    {MPROF_CAT_CONTROL, "BRA BRX BRXU JMP JMX JMXU CALL RET EXIT BSSY BSYNC "
                        "BREAK BPT KILL BMOV RPCMOV ACQBULK"},
    /* synchronisation */
    {MPROF_CAT_SYNC,
     "BAR BARRIER MEMBAR DEPBAR LDGDEPBAR WARPSYNC SYNCS ERRBAR FENCE ARRIVES "
     "NANOSLEEP YIELD WARPGROUP WARPGROUPSET UCGABAR_ARV UCGABAR_WAIT "
     "CGAERRBAR ELECT"},
    /* arithmetic */
    {MPROF_CAT_ARITH,
     "REDUX FADD FADD32I FMUL FMUL32I FFMA FFMA32I FMNMX FSET FSETP FSEL FCHK "
     "FRND FSWZADD MUFU F2F F2I I2F I2I F2FP I2FP F2IP I2IP FRCP DADD DMUL "
     "DFMA DSETP DMNMX HADD2 HMUL2 HFMA2 HSET2 HSETP2 HMNMX2 IADD IADD3 "
     "IADD32I VIADD VIADDMNMX VIMNMX VIMNMX3 IMAD IMAD32I IMUL IMUL32I IMNMX "
     "ISETP ISCADD IABS IDP IDP4A LOP LOP3 LOP32I LEA SHF SHL SHR POPC FLO "
     "BREV BMSK SGXT PRMT SEL PLOP3 PSETP FMNMX3 FADD2 FMUL2 FFMA2"},
    /* data movement and the rest */
    {MPROF_CAT_OTHER,
     "VOTE MATCH MOV MOV32I S2R S2UR CS2R R2UR SHFL P2R R2P NOP"},
};

/* Whether @p word is one of the words of @p list. */
static int has_word(const char *list, const char *word) {
  size_t n = strlen(word);
  for (const char *p = list; n && (p = strstr(p, word)) != NULL; p += n)
    if ((p == list || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\0'))
      return 1;
  return 0;
}

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
    for (size_t i = 0; i < sizeof opcode_classes / sizeof opcode_classes[0];
         i++)
      if (has_word(opcode_classes[i].bases, key))
        return opcode_classes[i].category;
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
