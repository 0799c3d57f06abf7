/*
 * What the CUPTI producer's tests share (cupti_fixture.h).
 *
 * SPDX-License-Identifier: MIT
 */
#include <elf.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "config.h"
#include "cubin.h"
#include "process.h"
#include "mprof/error.h"
#include "mprof/reasons.h"
#include "mprof/sass.h"
#include "mprof/sidecar.h"
#include "mprof/status.h"
#include "mprof/trace.h"
#include "mprof/writer.h"
#include "translate.h"

#include "cupti_fixture.h"

void temp_path(char *out, size_t size, const char *name) {
  const char *dir = getenv("MPROF_TEST_TMP");
  snprintf(out, size, "%s/cupti-%ld-%s.mprof", dir && *dir ? dir : "/tmp",
           (long)getpid(), name);
}

void open_fixture(fixture *f, const char *name,
                  const mprof_cupti_translate_options *opts) {
  memset(f, 0, sizeof *f);
  temp_path(f->path, sizeof f->path, name);
  assert_int_equal(mprof_writer_open(&f->w, f->path, NULL), 0);
  assert_int_equal(mprof_cupti_translate_new(&f->t, f->w, opts), 0);
}

void translate_pcs(fixture *f, CUpti_PCSamplingPCData *pcs, size_t count) {
  CUpti_PCSamplingData data;
  memset(&data, 0, sizeof data);
  data.collectNumPcs = count;
  data.totalNumPcs = count;
  data.pPcData = pcs;
  assert_int_equal(mprof_cupti_translate_pc_data(f->t, 0, &data, 1), 0);
}

/* Finish the trace and open it for reading. */
void finish_fixture(fixture *f) {
  assert_int_equal(mprof_cupti_translate_finish(f->t), 0);
  int rc = mprof_trace_open(&f->trace, f->path, NULL);
  if (rc != 0)
    fail_msg("mprof_trace_open: %s", mprof_error_last());
}

void close_fixture(fixture *f) {
  mprof_trace_free(f->trace);
  mprof_cupti_translate_free(f->t);
  unlink(f->path);
}

uint64_t drop_count(const mprof_trace *trace, mprof_drop_kind kind,
                    uint32_t device) {
  size_t n = 0;
  const mprof_drop_record *d = mprof_trace_drops(trace, &n);
  for (size_t i = 0; i < n; i++)
    if (d[i].kind == (uint32_t)kind && d[i].device == device)
      return d[i].count;
  return UINT64_MAX; /* absent: distinguishable from a written zero */
}

const char *str(const mprof_trace *trace, uint32_t ref) {
  return mprof_trace_string(trace, ref);
}

CUpti_ActivityKernel10 kernel(const char *name, uint32_t device,
                              uint32_t stream, uint64_t start, uint64_t end,
                              uint32_t correlation) {
  CUpti_ActivityKernel10 k;
  memset(&k, 0, sizeof k);
  k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
  k.name = name;
  k.deviceId = device;
  k.contextId = 1;
  k.streamId = stream;
  k.start = start;
  k.end = end;
  k.correlationId = correlation;
  k.gridX = 132;
  k.gridY = 2;
  k.gridZ = 1;
  k.blockX = 256;
  k.blockY = 1;
  k.blockZ = 1;
  k.registersPerThread = 32;
  k.staticSharedMemory = 1024;
  k.dynamicSharedMemory = 4096;
  k.localMemoryPerThread = 16;
  return k;
}

CUpti_ActivityMarker2 marker(uint32_t flags, uint32_t id, uint64_t ts,
                             const char *name, uint32_t thread) {
  CUpti_ActivityMarker2 m;
  memset(&m, 0, sizeof m);
  m.kind = CUPTI_ACTIVITY_KIND_MARKER;
  m.flags = (CUpti_ActivityFlag)flags;
  m.timestamp = ts;
  m.id = id;
  m.objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
  m.objectId.pt.processId = 1;
  m.objectId.pt.threadId = thread;
  m.name = name;
  return m;
}

/* A minimal ELF64 cubin stand-in: .shstrtab, .strtab and a .symtab holding
 * one STT_FUNC symbol per name (symbol index = position + 1) plus one
 * STT_OBJECT symbol that must not count as a function. */
size_t build_elf(unsigned char *buf, size_t cap, const char *const *functions,
                 size_t count) {
  memset(buf, 0, cap);
  static const char shstrtab[] = "\0.shstrtab\0.strtab\0.symtab\0";
  char strtab[1024];
  size_t strtab_size = 1;
  strtab[0] = '\0';
  uint32_t name_offset[16];
  for (size_t i = 0; i < count; i++) {
    name_offset[i] = (uint32_t)strtab_size;
    size_t len = strlen(functions[i]) + 1;
    memcpy(strtab + strtab_size, functions[i], len);
    strtab_size += len;
  }
  uint32_t object_name = (uint32_t)strtab_size;
  memcpy(strtab + strtab_size, "a_global", 9);
  strtab_size += 9;

  size_t off = sizeof(Elf64_Ehdr);
  size_t shstrtab_off = off;
  memcpy(buf + off, shstrtab, sizeof shstrtab);
  off += sizeof shstrtab;
  size_t strtab_off = off;
  memcpy(buf + off, strtab, strtab_size);
  off += strtab_size;
  off = (off + 7) & ~(size_t)7;
  size_t symtab_off = off;
  size_t symbol_count = count + 2;
  Elf64_Sym *syms = (Elf64_Sym *)(buf + off);
  for (size_t i = 0; i < count; i++) {
    syms[i + 1].st_name = name_offset[i];
    syms[i + 1].st_info = ELF64_ST_INFO(STB_GLOBAL, STT_FUNC);
    syms[i + 1].st_size = 256;
  }
  syms[count + 1].st_name = object_name;
  syms[count + 1].st_info = ELF64_ST_INFO(STB_GLOBAL, STT_OBJECT);
  off += symbol_count * sizeof(Elf64_Sym);
  size_t shoff = off;
  Elf64_Shdr *sh = (Elf64_Shdr *)(buf + off);
  sh[1].sh_name = 1;
  sh[1].sh_type = SHT_STRTAB;
  sh[1].sh_offset = shstrtab_off;
  sh[1].sh_size = sizeof shstrtab;
  sh[2].sh_name = 11;
  sh[2].sh_type = SHT_STRTAB;
  sh[2].sh_offset = strtab_off;
  sh[2].sh_size = strtab_size;
  sh[3].sh_name = 19;
  sh[3].sh_type = SHT_SYMTAB;
  sh[3].sh_offset = symtab_off;
  sh[3].sh_size = symbol_count * sizeof(Elf64_Sym);
  sh[3].sh_link = 2;
  sh[3].sh_entsize = sizeof(Elf64_Sym);
  off += 4 * sizeof(Elf64_Shdr);
  assert_true(off <= cap);

  Elf64_Ehdr *eh = (Elf64_Ehdr *)buf;
  memcpy(eh->e_ident, ELFMAG, SELFMAG);
  eh->e_ident[EI_CLASS] = ELFCLASS64;
  eh->e_ident[EI_DATA] = ELFDATA2LSB;
  eh->e_ident[EI_VERSION] = EV_CURRENT;
  eh->e_type = ET_EXEC;
  eh->e_machine = 190; /* EM_CUDA */
  eh->e_shoff = shoff;
  eh->e_ehsize = sizeof(Elf64_Ehdr);
  eh->e_shentsize = sizeof(Elf64_Shdr);
  eh->e_shnum = 4;
  eh->e_shstrndx = 1;
  return off;
}
