/*
 * Compiled by tests/source/check_nvcc.sh with and without -DMPROF_SOURCE:
 * the device header builds warning-free, markers vanish when off, and the
 * record layout the device writes is the one libmprof reads.
 *
 * SPDX-License-Identifier: MIT
 */
#include <stddef.h>

#include "mprof_source.cuh"
#include "mprof/source.h"

static_assert(sizeof(mprof_source_record) == sizeof(mprof_source_file_record),
              "record size");
static_assert(offsetof(mprof_source_record, launch) ==
                  offsetof(mprof_source_file_record, launch),
              "launch offset");
static_assert(offsetof(mprof_source_record, region) ==
                  offsetof(mprof_source_file_record, region),
              "region offset");
static_assert(offsetof(mprof_source_record, payload) ==
                  offsetof(mprof_source_file_record, payload),
              "payload offset");
static_assert(MPROF_SOURCE_ROLE_LOADER == MPROF_ROLE_LOADER, "roles");
static_assert(MPROF_SOURCE_ROLE_CONSUMER == MPROF_ROLE_CONSUMER, "roles");
static_assert(MPROF_SOURCE_ROLE_STORER == MPROF_ROLE_STORER, "roles");
static_assert(MPROF_SOURCE_NO_WARP == MPROF_INDEX_NONE, "no warp");

enum { REGION_LOAD, REGION_WORK, REGION_STORE };

__global__ void scale(float *x, int n MPROF_SOURCE_PARAM(prof)) {
  MPROF_SOURCE_BLOCK_RECORDER(prof, rec);
  MPROF_SOURCE_WARP_RECORDER(prof, warp_rec);
  __shared__ float tile[256];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  MPROF_SOURCE_BEGIN(prof, rec, t_load);
  tile[threadIdx.x] = i < n ? x[i] : 0.0f;
  __syncthreads();
  MPROF_SOURCE_END(prof, rec, t_load, REGION_LOAD, blockIdx.x);
  MPROF_SOURCE_BEGIN(prof, warp_rec, t_work);
  float v = tile[threadIdx.x] * 2.0f;
  MPROF_SOURCE_END(prof, warp_rec, t_work, REGION_WORK, 0);
  MPROF_SOURCE_BEGIN(prof, rec, t_store);
  if (i < n)
    x[i] = v;
  MPROF_SOURCE_SYNC_BLOCK();
  MPROF_SOURCE_END(prof, rec, t_store, REGION_STORE, 0);
}

int main(void) {
  mprof_source_init();
  mprof_source_region("load", MPROF_SOURCE_ROLE_LOADER);
  mprof_source_region("work", MPROF_SOURCE_ROLE_CONSUMER);
  mprof_source_region_color("store", MPROF_SOURCE_ROLE_STORER, 0xff3366ccu);
  float *x = NULL;
  if (cudaMalloc(&x, 1024 * sizeof(float)) != cudaSuccess)
    return 0; /* compiled, not run, in CI */
  dim3 grid(4), block(256);
  scale<<<grid, block>>>(x, 1024 MPROF_SOURCE_ARG(
                                   MPROF_SOURCE_NEXT(scale, grid, block)));
  cudaFree(x);
  return mprof_source_finish() == 0 ? 0 : 1;
}
