/*
 * mprof — libFuzzer target for the PC sidecar reader.
 *
 * Any byte string handed to mprof_sidecar_load() must give either a valid
 * sidecar whose accessors are safe, or a clean error; never a crash or
 * leak. A sidecar that loads must save and load again to the same counts.
 *
 * SPDX-License-Identifier: MIT
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fuzz_file.h"
#include "mprof/mprof.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Sum of everything a reader touches, so nothing is optimised away. */
static uint64_t touch(const mprof_sidecar *sc, size_t *functions) {
  uint64_t sum = 0;
  *functions = mprof_sidecar_function_count(sc);
  for (size_t r = 0; r < mprof_sidecar_stall_reason_count(sc); r++)
    sum += (unsigned char)mprof_sidecar_stall_reason(sc, (uint32_t)r)[0];
  for (size_t i = 0; i < *functions; i++) {
    const mprof_sidecar_function *f = mprof_sidecar_function_at(sc, i);
    sum += f->name[0] + f->demangled[0] + f->sass_error[0] + f->size;
    if (mprof_sidecar_find(sc, f->name, f->cubin_crc) == NULL)
      abort(); /* every function can be found again */
    for (size_t k = 0; k < f->instruction_count; k++) {
      const mprof_sass_instruction *in = &f->instructions[k];
      sum += in->line + (unsigned char)in->opcode[0] +
             (unsigned char)in->operands[0] + (unsigned char)in->file[0] +
             (unsigned char)in->predicate[0];
      if (mprof_sidecar_instruction(f, in->offset) != in)
        abort();
    }
    for (size_t p = 0; p < f->pc_count; p++)
      for (uint32_t r = 0; r < f->pcs[p].reason_count; r++)
        sum += f->pcs[p].counts[r];
  }
  return sum;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char path[64];
  int fd = fuzz_file("mprof-fuzz-sidecar", data, size, path);
  if (fd < 0)
    return 0;
  mprof_sidecar *sc = NULL;
  if (mprof_sidecar_load(&sc, path) == 0) {
    size_t functions, again_functions;
    uint64_t sum = touch(sc, &functions);
    char saved[64];
    snprintf(saved, sizeof saved, "/tmp/mprof-fuzz-sidecar-%ld.json",
             (long)getpid());
    if (mprof_sidecar_save(sc, saved) == 0) {
      mprof_sidecar *again = NULL;
      if (mprof_sidecar_load(&again, saved) != 0)
        abort(); /* what mprof writes, mprof reads */
      if (touch(again, &again_functions) != sum || again_functions != functions)
        abort();
      mprof_sidecar_free(again);
      unlink(saved);
    }
    mprof_sidecar_free(sc);
  }
  close(fd);
  return 0;
}
