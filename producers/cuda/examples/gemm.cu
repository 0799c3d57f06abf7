/*
 * gemm: a tiled single-precision matrix multiply C = A * B (row-major,
 * square N x N), repeated a number of times. It is a steady, compute-bound
 * workload of identical launches, used to measure the profiler's overhead.
 *
 * usage: gemm [N] [iterations] [--seconds S]
 *   N           matrix size (default 2048)
 *   iterations  launches per batch (default 20)
 *   --seconds S keep launching batches until at least S seconds of GPU work
 *               have been done (default 0: a single batch)
 * exit status: 0 on success, 1 on mismatch, bad arguments or CUDA error.
 *
 * Built with -DMPROF_SOURCE (the gemm_source target) the kernel also records
 * per-block spans for `mprof record source`: loading the tiles into shared
 * memory (loader), the FMA loop over them (consumer), writing C (storer).
 * Without it the markers compile to nothing. gemm_source --timer-probe
 * only measures the %globaltimer step and exits.
 */
#include "example_common.h"
#include "../../source/mprof_source.cuh"

#include <math.h>

/* Each 16x16 thread block computes a 64x64 tile of C; each thread a 4x4
 * sub-tile held in registers, so every shared-memory value loaded feeds
 * four FMAs. */
#define TILE_M 64
#define TILE_N 64
#define TILE_K 16
#define BLOCK_DIM 16
#define THREAD_TILE 4
#define GEMM_THREADS (BLOCK_DIM * BLOCK_DIM)

#define VERIFY_SAMPLES 256
#define VERIFY_TOLERANCE 1e-3

/* Region ids for the source markers, in the order main() names them. */
enum { REGION_LOAD_TILES, REGION_FMA, REGION_STORE_C };

__global__ void __launch_bounds__(GEMM_THREADS)
sgemm_tiled(int M, int N, int K, const float *A, const float *B, float *C
            MPROF_SOURCE_PARAM(prof))
{
    MPROF_SOURCE_BLOCK_RECORDER(prof, rec);
    /* A is stored transposed (k-major) so the inner loop reads a column of
     * the A tile contiguously; +1 padding avoids bank conflicts when the
     * transposing store writes it. */
    __shared__ float a_tile[TILE_K][TILE_M + 1];
    __shared__ float b_tile[TILE_K][TILE_N];

    const int tx = threadIdx.x;
    const int ty = threadIdx.y;
    const int tid = ty * BLOCK_DIM + tx;
    const int row0 = blockIdx.y * TILE_M;
    const int col0 = blockIdx.x * TILE_N;

    float acc[THREAD_TILE][THREAD_TILE];
    for (int i = 0; i < THREAD_TILE; i++)
        for (int j = 0; j < THREAD_TILE; j++)
            acc[i][j] = 0.0f;

    for (int k0 = 0; k0 < K; k0 += TILE_K) {
        MPROF_SOURCE_BEGIN(prof, rec, t_load);
        /* Both tiles hold TILE_M * TILE_K == TILE_K * TILE_N elements:
         * four per thread. Out-of-range elements are zero so edge tiles
         * need no special casing in the multiply loop. */
        for (int i = 0; i < (TILE_M * TILE_K) / GEMM_THREADS; i++) {
            int idx = tid + i * GEMM_THREADS;
            int a_row = idx / TILE_K, a_col = idx % TILE_K;
            int g_row = row0 + a_row, g_col = k0 + a_col;
            a_tile[a_col][a_row] = (g_row < M && g_col < K)
                                       ? A[(size_t)g_row * K + g_col]
                                       : 0.0f;
            int b_row = idx / TILE_N, b_col = idx % TILE_N;
            g_row = k0 + b_row;
            g_col = col0 + b_col;
            b_tile[b_row][b_col] = (g_row < K && g_col < N)
                                       ? B[(size_t)g_row * N + g_col]
                                       : 0.0f;
        }
        __syncthreads();
        MPROF_SOURCE_END(prof, rec, t_load, REGION_LOAD_TILES, k0);

        MPROF_SOURCE_BEGIN(prof, rec, t_fma);
#pragma unroll
        for (int kk = 0; kk < TILE_K; kk++) {
            float a[THREAD_TILE], b[THREAD_TILE];
            /* Strided ownership (ty + 16 i, tx + 16 j) keeps shared loads
             * conflict-free and global stores coalesced. */
#pragma unroll
            for (int i = 0; i < THREAD_TILE; i++)
                a[i] = a_tile[kk][ty + BLOCK_DIM * i];
#pragma unroll
            for (int j = 0; j < THREAD_TILE; j++)
                b[j] = b_tile[kk][tx + BLOCK_DIM * j];
#pragma unroll
            for (int i = 0; i < THREAD_TILE; i++)
#pragma unroll
                for (int j = 0; j < THREAD_TILE; j++)
                    acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
        }
        __syncthreads();
        MPROF_SOURCE_END(prof, rec, t_fma, REGION_FMA, k0);
    }

    MPROF_SOURCE_BEGIN(prof, rec, t_store);
#pragma unroll
    for (int i = 0; i < THREAD_TILE; i++) {
        int row = row0 + ty + BLOCK_DIM * i;
        if (row >= M)
            continue;
#pragma unroll
        for (int j = 0; j < THREAD_TILE; j++) {
            int col = col0 + tx + BLOCK_DIM * j;
            if (col < N)
                C[(size_t)row * N + col] = acc[i][j];
        }
    }
    /* The storer span ends when every thread of the block has stored. */
    MPROF_SOURCE_SYNC_BLOCK();
    MPROF_SOURCE_END(prof, rec, t_store, REGION_STORE_C, 0);
}

static void usage(void)
{
    fprintf(stderr, "usage: gemm [N] [iterations] [--seconds S]%s\n",
#ifdef MPROF_SOURCE
            " [--timer-probe]"
#else
            ""
#endif
    );
}

#ifdef MPROF_SOURCE
/* One line a script can parse: the %globaltimer step on this GPU. */
static int timer_probe(void)
{
    print_device();
    mprof_source_timer_probe p;
    if (mprof_source_probe_timer(&p, 100000) != 0)
        return 1;
    printf("TIMER_PROBE min_step_ns=%llu max_step_ns=%llu changes=%llu "
           "reads=%llu mean_step_ns=%.1f globaltimer_minus_realtime_ns=%lld "
           "host_bracket_ns=%llu\n",
           p.min_step_ns, p.max_step_ns, p.changes, p.reads,
           p.changes ? (double)(p.last_ns - p.first_ns) / (double)p.changes
                     : 0.0,
           (long long)(p.first_ns - p.host_realtime_ns), p.host_bracket_ns);
    return 0;
}
#endif

static int parse_positive_int(const char *text, int *out)
{
    char *end = NULL;
    long value = strtol(text, &end, 10);
    if (end == text || *end != '\0' || value <= 0 || value > 1000000)
        return 0;
    *out = (int)value;
    return 1;
}

static LaunchTimer g_timer;

int main(int argc, char **argv)
{
    int n = 2048;
    int iterations = 20;
    double min_seconds = 0.0;
    int positional = 0;
    for (int a = 1; a < argc; a++) {
#ifdef MPROF_SOURCE
        if (strcmp(argv[a], "--timer-probe") == 0)
            return timer_probe();
#endif
        if (strcmp(argv[a], "--seconds") == 0 && a + 1 < argc) {
            char *end = NULL;
            min_seconds = strtod(argv[++a], &end);
            if (*end != '\0' || min_seconds < 0.0) {
                usage();
                return 1;
            }
        } else if (positional == 0 && parse_positive_int(argv[a], &n)) {
            positional++;
        } else if (positional == 1 &&
                   parse_positive_int(argv[a], &iterations)) {
            positional++;
        } else {
            usage();
            return 1;
        }
    }
    const int M = n, N = n, K = n;
    printf("gemm: M=N=K=%d iterations=%d seconds=%g\n", n, iterations,
           min_seconds);
    print_device();
    struct cudaFuncAttributes attr;
    CHECK_CUDA(cudaFuncGetAttributes(&attr, sgemm_tiled)); /* preload */
    /* Source instrumentation: on only with MPROF_SOURCE_OUTPUT set. */
    mprof_source_init();
    mprof_source_region("load tiles", MPROF_SOURCE_ROLE_LOADER);
    mprof_source_region("fma", MPROF_SOURCE_ROLE_CONSUMER);
    mprof_source_region("store C", MPROF_SOURCE_ROLE_STORER);

    const size_t a_elems = (size_t)M * K, b_elems = (size_t)K * N,
                 c_elems = (size_t)M * N;
    float *h_a = (float *)malloc(a_elems * sizeof(float));
    float *h_b = (float *)malloc(b_elems * sizeof(float));
    float *h_c = (float *)malloc(c_elems * sizeof(float));
    if (!h_a || !h_b || !h_c) {
        fprintf(stderr, "host allocation failed\n");
        return 1;
    }
    Rng rng = {2024};
    for (size_t i = 0; i < a_elems; i++)
        h_a[i] = rng_uniform_pm1(&rng);
    for (size_t i = 0; i < b_elems; i++)
        h_b[i] = rng_uniform_pm1(&rng);

    float *d_a, *d_b, *d_c;
    CHECK_CUDA(cudaMalloc(&d_a, a_elems * sizeof(float)));
    CHECK_CUDA(cudaMalloc(&d_b, b_elems * sizeof(float)));
    CHECK_CUDA(cudaMalloc(&d_c, c_elems * sizeof(float)));
    CHECK_CUDA(cudaMemcpy(d_a, h_a, a_elems * sizeof(float),
                          cudaMemcpyHostToDevice));
    CHECK_CUDA(cudaMemcpy(d_b, h_b, b_elems * sizeof(float),
                          cudaMemcpyHostToDevice));
    /* NaN pattern: any element the kernel fails to write fails the check. */
    CHECK_CUDA(cudaMemset(d_c, 0xff, c_elems * sizeof(float)));

    cudaStream_t stream;
    CHECK_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    timer_init(&g_timer);

    const dim3 grid((N + TILE_N - 1) / TILE_N, (M + TILE_M - 1) / TILE_M);
    const dim3 block(BLOCK_DIM, BLOCK_DIM);
    long launches = 0;
    const double t_start = wall_seconds();
    double elapsed = 0.0;
    do {
        for (int it = 0; it < iterations; it++) {
            TIMED_LAUNCH(&g_timer, sgemm_tiled, grid, block, 0, stream, M, N,
                         K, d_a, d_b, d_c
                         MPROF_SOURCE_ARG(
                             MPROF_SOURCE_NEXT(sgemm_tiled, grid, block)));
            launches++;
        }
        /* One sync per batch, only to read the clock for --seconds. */
        CHECK_CUDA(cudaStreamSynchronize(stream));
        elapsed = wall_seconds() - t_start;
    } while (elapsed < min_seconds);

    CHECK_CUDA(cudaMemcpy(h_c, d_c, c_elems * sizeof(float),
                          cudaMemcpyDeviceToHost));
    const double flops = 2.0 * M * N * (double)K * (double)launches;
    printf("gemm: %ld launches in %.3f s wall, %.1f GFLOP/s\n", launches,
           elapsed, flops / elapsed * 1e-9);

    /* Error relative to the natural scale of a sum of K random products,
     * so entries that happen to be near zero do not give false alarms. */
    double max_err = 0.0;
    for (int s = 0; s < VERIFY_SAMPLES; s++) {
        int i = (int)(rng_next_u32(&rng) % (unsigned)M);
        int j = (int)(rng_next_u32(&rng) % (unsigned)N);
        double ref = 0.0, sq = 0.0;
        for (int k = 0; k < K; k++) {
            double p = (double)h_a[(size_t)i * K + k] *
                       (double)h_b[(size_t)k * N + j];
            ref += p;
            sq += p * p;
        }
        double scale = fmax(fabs(ref), sqrt(sq));
        double err = fabs((double)h_c[(size_t)i * N + j] - ref) / scale;
        if (isnan(err))
            max_err = INFINITY; /* unwritten or corrupted element */
        else if (err > max_err)
            max_err = err;
    }
    printf("gemm: max relative error over %d sampled entries: %.3g\n",
           VERIFY_SAMPLES, max_err);

    timer_report(&g_timer);
    if (mprof_source_finish() != 0)
        fprintf(stderr, "gemm: could not write the source spans\n");
    int ok = max_err <= VERIFY_TOLERANCE;
    if (ok)
        printf("RESULT ok\n");
    else
        printf("RESULT mismatch max_err=%g\n", max_err);

    timer_destroy(&g_timer);
    CHECK_CUDA(cudaStreamDestroy(stream));
    CHECK_CUDA(cudaFree(d_a));
    CHECK_CUDA(cudaFree(d_b));
    CHECK_CUDA(cudaFree(d_c));
    free(h_a);
    free(h_b);
    free(h_c);
    return ok ? 0 : 1;
}
