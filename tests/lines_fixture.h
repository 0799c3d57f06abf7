/*
 * mprof tests — the per-line fixture: a trace of the committed nvcc
 * -lineinfo cubin (tests/data/lines) with PC samples planted at known
 * offsets, shared by test_lines and test_render_source.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef MPROF_TEST_LINES_FIXTURE_H
#define MPROF_TEST_LINES_FIXTURE_H

#include <stddef.h>
#include <stdint.h>

#define LINES_CRC 0x11e5ull
#define CU "/build/lines/lines_kernels.cu"
#define CUH "/build/lines/lines_math.cuh"
#define INLINE_K "_Z12lines_inlinePfPKfi"
#define SCALE_K "_Z11lines_scalePfPKfi"
#define SQUARE "_Z9lm_squaref"
#define POLY "_Z7lm_polyf"

/* tests/data/lines under $MPROF_SOURCE_DIR. */
const char *data_dir(void);

/* The line of "// @@p name" in tests/data/lines/@p file. */
uint32_t marker(const char *file, const char *name);

/* The bytes of tests/data/lines/lines_kernels.cubin (caller frees). */
unsigned char *fixture_cubin(size_t *size);

/*
 * Write at @p path the trace of the fixture's two kernels and one whose
 * code was not kept (_Z7nocodev), sampled as planted (lines_fixture.c:
 * lm_square 65 samples over its two call sites, the kernel's call line 10,
 * inline-index 5, lines_scale 8), its cubin kept whole when @p keep_cubin.
 * Returns @p path.
 */
const char *write_trace_at(const char *path, int keep_cubin);

#endif
