// A program written the way Thrust and CUB users write them: sorts,
// scans, reductions, histograms and segmented reductions through the
// libraries, whose kernels are templates instantiated in this binary.
// tests/gpu/programs.sh records it and checks what mprof says about
// kernels nobody here wrote.
//
// Prints one checksum line per step (the same with and without mprof) and,
// last, "launches checksum_keys N": the launches of its own kernel.
//
// SPDX-License-Identifier: MIT
#include <cub/cub.cuh>
#include <thrust/copy.h>
#include <thrust/device_vector.h>
#include <thrust/functional.h>
#include <thrust/reduce.h>
#include <thrust/scan.h>
#include <thrust/sequence.h>
#include <thrust/sort.h>
#include <thrust/transform.h>
#include <thrust/unique.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "../../producers/cuda/examples/example_common.h"

// A hash per element, so the data is not sorted to begin with.
struct scramble {
  __host__ __device__ uint32_t operator()(uint32_t i) const {
    i ^= i >> 16;
    i *= 0x7feb352dU;
    i ^= i >> 15;
    i *= 0x846ca68bU;
    return i ^ (i >> 16);
  }
};

struct saxpy {
  float a;
  __host__ __device__ float operator()(float x, float y) const {
    return a * x + y;
  }
};

struct is_small {
  __host__ __device__ bool operator()(uint32_t v) const {
    return v < 0x10000000U;
  }
};

// The program's own kernel: a checksum of a key array.
__global__ void checksum_keys(const uint32_t *keys, size_t n,
                              unsigned long long *sum) {
  unsigned long long local = 0;
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
       i += (size_t)gridDim.x * blockDim.x)
    local += keys[i] * (unsigned long long)(i + 1);
  atomicAdd(sum, local);
}

static int own_launches;

static unsigned long long checksum(const thrust::device_vector<uint32_t> &v) {
  thrust::device_vector<unsigned long long> sum(1, 0);
  checksum_keys<<<264, 256>>>(thrust::raw_pointer_cast(v.data()), v.size(),
                              thrust::raw_pointer_cast(sum.data()));
  CHECK_CUDA(cudaGetLastError());
  own_launches++;
  return sum[0];
}

int main(int argc, char **argv) {
  size_t n = argc > 1 ? strtoull(argv[1], NULL, 10) : (size_t)1 << 24;
  int rounds = argc > 2 ? atoi(argv[2]) : 5;
  thrust::device_vector<uint32_t> keys(n), sorted(n);
  thrust::device_vector<float> x(n), y(n);

  for (int r = 0; r < rounds; r++) {
    // Thrust: generate, transform, sort, sort by key, scan, reduce, unique,
    // copy_if.
    thrust::sequence(keys.begin(), keys.end(), (uint32_t)r * 7919U);
    thrust::transform(keys.begin(), keys.end(), keys.begin(), scramble());
    thrust::sequence(x.begin(), x.end(), 0.0f, 1e-6f);
    thrust::fill(y.begin(), y.end(), 1.0f);
    thrust::transform(x.begin(), x.end(), y.begin(), y.begin(), saxpy{2.0f});
    float ysum = thrust::reduce(y.begin(), y.end(), 0.0f);

    sorted = keys;
    thrust::sort(sorted.begin(), sorted.end());
    unsigned long long sorted_sum = checksum(sorted);

    thrust::device_vector<uint32_t> vals(n);
    thrust::sequence(vals.begin(), vals.end());
    thrust::device_vector<uint32_t> k2 = keys;
    thrust::sort_by_key(k2.begin(), k2.end(), vals.begin());
    unsigned long long perm_sum = checksum(vals);

    thrust::inclusive_scan(vals.begin(), vals.end(), vals.begin());
    uint32_t last = vals[n - 1];

    thrust::device_vector<uint32_t> masked(n);
    thrust::transform(sorted.begin(), sorted.end(), masked.begin(),
                      [] __device__(uint32_t v) { return v >> 20; });
    size_t distinct =
        thrust::unique(masked.begin(), masked.end()) - masked.begin();
    thrust::device_vector<uint32_t> small(n);
    size_t small_n =
        thrust::copy_if(keys.begin(), keys.end(), small.begin(), is_small()) -
        small.begin();

    // CUB: radix sort of pairs, a histogram and a segmented reduction,
    // each asked for its scratch size first as CUB wants.
    thrust::device_vector<uint32_t> cub_keys(n), cub_vals(n);
    void *scratch = NULL;
    size_t scratch_bytes = 0, need = 0;
    CHECK_CUDA(cub::DeviceRadixSort::SortPairs(
        NULL, need, thrust::raw_pointer_cast(keys.data()),
        thrust::raw_pointer_cast(cub_keys.data()),
        thrust::raw_pointer_cast(vals.data()),
        thrust::raw_pointer_cast(cub_vals.data()), (int)n));
    scratch_bytes = need;
    const int bins = 256, segments = 1024;
    thrust::device_vector<int> hist(bins);
    CHECK_CUDA(cub::DeviceHistogram::HistogramEven(
        NULL, need, thrust::raw_pointer_cast(keys.data()),
        thrust::raw_pointer_cast(hist.data()), bins + 1, 0U, 0xffffffffU,
        (int)n));
    if (need > scratch_bytes)
      scratch_bytes = need;
    thrust::device_vector<int> offsets(segments + 1);
    thrust::sequence(offsets.begin(), offsets.end(), 0, (int)(n / segments));
    thrust::device_vector<float> seg_sums(segments);
    CHECK_CUDA(cub::DeviceSegmentedReduce::Sum(
        NULL, need, thrust::raw_pointer_cast(y.data()),
        thrust::raw_pointer_cast(seg_sums.data()), segments,
        thrust::raw_pointer_cast(offsets.data()),
        thrust::raw_pointer_cast(offsets.data()) + 1));
    if (need > scratch_bytes)
      scratch_bytes = need;
    CHECK_CUDA(cudaMalloc(&scratch, scratch_bytes));
    need = scratch_bytes;
    CHECK_CUDA(cub::DeviceRadixSort::SortPairs(
        scratch, need, thrust::raw_pointer_cast(keys.data()),
        thrust::raw_pointer_cast(cub_keys.data()),
        thrust::raw_pointer_cast(vals.data()),
        thrust::raw_pointer_cast(cub_vals.data()), (int)n));
    need = scratch_bytes;
    CHECK_CUDA(cub::DeviceHistogram::HistogramEven(
        scratch, need, thrust::raw_pointer_cast(keys.data()),
        thrust::raw_pointer_cast(hist.data()), bins + 1, 0U, 0xffffffffU,
        (int)n));
    need = scratch_bytes;
    CHECK_CUDA(cub::DeviceSegmentedReduce::Sum(
        scratch, need, thrust::raw_pointer_cast(y.data()),
        thrust::raw_pointer_cast(seg_sums.data()), segments,
        thrust::raw_pointer_cast(offsets.data()),
        thrust::raw_pointer_cast(offsets.data()) + 1));
    CHECK_CUDA(cudaDeviceSynchronize());
    CHECK_CUDA(cudaFree(scratch));
    unsigned long long cub_sum = checksum(cub_keys);
    int hist0 = hist[0];
    float seg0 = seg_sums[0];

    printf("round %d: ysum %.6e sorted %llu perm %llu scan %u distinct %zu "
           "small %zu cub %llu hist0 %d seg0 %.6e\n",
           r, ysum, sorted_sum, perm_sum, last, distinct, small_n, cub_sum,
           hist0, seg0);
  }
  CHECK_CUDA(cudaDeviceSynchronize());
  printf("launches checksum_keys %d\n", own_launches);
  return 0;
}
