/*
 * What the CUPTI producer's tests share: a translator writing into a real
 * trace (opened back for reading), fabricated CUPTI kernel records and a
 * minimal cubin.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef MPROF_TEST_CUPTI_FIXTURE_H
#define MPROF_TEST_CUPTI_FIXTURE_H

#include <stddef.h>
#include <stdint.h>

#include <cupti.h>

#include "mprof/trace.h"
#include "mprof/writer.h"
#include "translate.h"

/* A trace path under MPROF_TEST_TMP (or /tmp), unique to this process. */
void temp_path(char *out, size_t size, const char *name);

typedef struct fixture {
  char path[4096];
  mprof_writer *w;
  mprof_cupti_translate *t;
  mprof_trace *trace;
} fixture;

void open_fixture(fixture *f, const char *name,
                  const mprof_cupti_translate_options *opts);
/* Finish the trace and open it for reading. */
void finish_fixture(fixture *f);
void close_fixture(fixture *f);
/* One drain of @p count parsed PC records on device 0 (all of them taken). */
void translate_pcs(fixture *f, CUpti_PCSamplingPCData *pcs, size_t count);

/* A DROPS count of @p kind on @p device; UINT64_MAX when absent. */
uint64_t drop_count(const mprof_trace *trace, mprof_drop_kind kind,
                    uint32_t device);
const char *str(const mprof_trace *trace, uint32_t ref);
/* A kernel record on context 1: 132x2 blocks of 256 threads, 32 registers,
 * 1 KB static + 4 KB dynamic shared memory, 16 B local memory a thread. */
CUpti_ActivityKernel10 kernel(const char *name, uint32_t device,
                              uint32_t stream, uint64_t start, uint64_t end,
                              uint32_t correlation);
/* An NVTX marker record (CUPTI_ACTIVITY_FLAG_MARKER_START, _END or
 * _INSTANTANEOUS in @p flags) of thread @p thread at @p ts. */
CUpti_ActivityMarker2 marker(uint32_t flags, uint32_t id, uint64_t ts,
                             const char *name, uint32_t thread);
/* A minimal ELF64 cubin stand-in: .shstrtab, .strtab and a .symtab holding
 * one STT_FUNC symbol per name (symbol index = position + 1) plus one
 * STT_OBJECT symbol that must not count as a function. */
size_t build_elf(unsigned char *buf, size_t cap, const char *const *functions,
                 size_t count);

#endif
