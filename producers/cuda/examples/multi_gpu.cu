/*
 * multi_gpu: one computation split over every visible GPU, for profiling
 * multi-device programs.
 *
 * A periodic 1-D array of N floats is cut into one contiguous slice per
 * worker; worker w runs on device w % devices, with its own host thread and
 * its own stream. Every iteration each worker
 *
 *   1. saxpy            y = alpha * x + y on its slice;
 *   2. pulls halos      the last RADIUS elements of its left neighbour and
 *                       the first RADIUS of its right neighbour (the ring
 *                       wraps, so on one worker it is its own neighbour):
 *                       a peer-to-peer copy when cudaDeviceCanAccessPeer
 *                       allows it, else staged through pinned host memory
 *                       (the neighbour copies device-to-host, this worker
 *                       host-to-device), a device-to-device copy when the
 *                       neighbour is on the same GPU;
 *   3. halo_stencil     a 5-point smoothing stencil over slice + halos;
 *   4. block_reduce_sum twice (1024 blocks, then 1): the slice's sum.
 *
 * At the end every slice is gathered onto worker 0's device the same way
 * (peer, staged or local copies of whole slices), and the gathered array
 * and the per-iteration sums are checked against a CPU reference computed
 * with the same float operations in the same order.
 *
 * usage: multi_gpu [N] [iterations] [--workers W] [--host-staged]
 *   N            elements in the whole array (default 8388608)
 *   iterations   default 20
 *   --workers W  number of workers (default: one per visible device); with
 *                more workers than devices they share GPUs round-robin, so
 *                the exchange logic can be exercised on a single GPU
 *   --host-staged  stage every cross-device copy through the host even
 *                where peer access is possible
 * exit status: 0 on success, 1 on mismatch, bad arguments or CUDA error.
 *
 * Besides the EVENT_TIMING and RESULT lines of every example, it prints one
 * MULTI_GPU line (devices, workers, exchange mode) and one EXCHANGE line per
 * worker. EVENT_TIMING names carry the device: kernel=saxpy@dev1.
 */
#include "example_common.h"

#include <math.h>
#include <pthread.h>

#define DEFAULT_ELEMENTS (1 << 23)
#define DEFAULT_ITERATIONS 20
#define MAX_WORKERS 64
#define MAX_DEVICES 64
#define RADIUS 2
#define REDUCE_THREADS 256
#define REDUCE_BLOCKS 1024
#define SAXPY_ALPHA 0.25f

/* Stencil weights (sum 1), applied left to right in this order on both the
 * GPU and the CPU so both round identically. */
__constant__ float c_weights[2 * RADIUS + 1];
static const float h_weights[2 * RADIUS + 1] = {0.0625f, 0.25f, 0.375f,
                                                 0.25f, 0.0625f};

__global__ void saxpy(float alpha, const float *x, float *y, int n)
{
    int stride = gridDim.x * blockDim.x;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        y[i] = fmaf(alpha, x[i], y[i]);
}

/* out[i] = sum_k w[k] * in[i + k - RADIUS], reading the RADIUS elements
 * before the slice from halo_lo and those after it from halo_hi. */
__global__ void halo_stencil(const float *in, const float *halo_lo,
                             const float *halo_hi, float *out, int n)
{
    int stride = gridDim.x * blockDim.x;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        float acc = 0.0f;
        for (int k = 0; k < 2 * RADIUS + 1; k++) {
            int j = i + k - RADIUS;
            float v = j < 0 ? halo_lo[RADIUS + j]
                            : (j >= n ? halo_hi[j - n] : in[j]);
            acc = k == 0 ? __fmul_rn(c_weights[0], v)
                         : fmaf(c_weights[k], v, acc);
        }
        out[i] = acc;
    }
}

/* Writes one partial sum per block; run twice to reduce to one value. */
__global__ void block_reduce_sum(const float *in, int n, float *block_sums)
{
    __shared__ float partial[REDUCE_THREADS];
    float sum = 0.0f;
    int stride = gridDim.x * blockDim.x;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        sum += in[i];
    partial[threadIdx.x] = sum;
    __syncthreads();
    for (int width = blockDim.x / 2; width > 0; width /= 2) {
        if ((int)threadIdx.x < width)
            partial[threadIdx.x] += partial[threadIdx.x + width];
        __syncthreads();
    }
    if (threadIdx.x == 0)
        block_sums[blockIdx.x] = partial[0];
}

/* How a worker gets data from another worker. */
typedef enum { COPY_LOCAL, COPY_PEER, COPY_STAGED } CopyMode;

static const char *copy_mode_name(CopyMode mode)
{
    return mode == COPY_LOCAL ? "local" : mode == COPY_PEER ? "p2p"
                                                            : "host-staged";
}

typedef struct {
    int index;
    int device;
    int left, right;   /* neighbouring workers on the ring */
    long offset;       /* first global element of the slice */
    int n;             /* slice length */
    CopyMode from_left, from_right, to_root;
    int exports;       /* a neighbour stages our edges through the host */
    cudaStream_t stream;
    float *d_x;
    float *d_y[2]; /* iteration i reads d_y[i & 1], writes d_y[~i & 1] */
    float *d_halo_lo, *d_halo_hi;
    float *d_partials, *d_sums;
    float *h_head, *h_tail; /* pinned: our edges, for staged neighbours */
    float *h_slice;         /* pinned: our slice, when staged to the root */
    cudaEvent_t ready;      /* our y of this iteration is final */
    cudaEvent_t consumed;   /* we are done reading our neighbours' data */
    cudaEvent_t finished;   /* our final slice is ready to gather */
    LaunchTimer *timer;
    char names[3][64];      /* "saxpy@devN", ... */
} Worker;

static Worker g_workers[MAX_WORKERS];
static int g_worker_count;
static int g_iterations;
static pthread_barrier_t g_barrier;
static float *g_d_gathered; /* on worker 0's device */

enum { NAME_SAXPY, NAME_STENCIL, NAME_REDUCE };

static void timed_begin(Worker *w, int name, TimerSlot **slot)
{
    *slot = timer_begin(w->timer, w->names[name], NULL, w->stream);
}

static void timed_end(Worker *w, TimerSlot *slot)
{
    CHECK_CUDA(cudaGetLastError());
    timer_end(w->timer, slot, w->stream);
}

/* Copy @p bytes of worker @p src's device memory at @p from into worker
 * @p dst's device memory at @p to, on @p dst's stream. Staged copies read
 * @p staged, which @p src filled on its own stream before the barrier. */
static void pull(Worker *dst, const Worker *src, CopyMode mode, float *to,
                 const float *from, const float *staged, size_t bytes)
{
    switch (mode) {
    case COPY_LOCAL:
        CHECK_CUDA(cudaMemcpyAsync(to, from, bytes, cudaMemcpyDeviceToDevice,
                                   dst->stream));
        break;
    case COPY_PEER:
        CHECK_CUDA(cudaMemcpyPeerAsync(to, dst->device, from, src->device,
                                       bytes, dst->stream));
        break;
    case COPY_STAGED:
        CHECK_CUDA(cudaMemcpyAsync(to, staged, bytes, cudaMemcpyHostToDevice,
                                   dst->stream));
        break;
    }
}

static void *worker_main(void *arg)
{
    Worker *w = (Worker *)arg;
    Worker *left = &g_workers[w->left];
    Worker *right = &g_workers[w->right];
    const size_t halo_bytes = RADIUS * sizeof(float);
    const dim3 grid(1024), block(256);
    CHECK_CUDA(cudaSetDevice(w->device));

    for (int iter = 0; iter < g_iterations; iter++) {
        TimerSlot *slot;
        /* Buffers by parity, never swapped pointers: the neighbours' threads
         * compute our buffer from the iteration number without a race. */
        float *y = w->d_y[iter & 1], *z = w->d_y[~iter & 1];
        const float *left_y = left->d_y[iter & 1];
        const float *right_y = right->d_y[iter & 1];
        /* Phase A: our neighbours have finished reading last iteration's
         * edges (ours, and our host staging buffers) before we change them. */
        CHECK_CUDA(cudaStreamWaitEvent(w->stream, left->consumed, 0));
        CHECK_CUDA(cudaStreamWaitEvent(w->stream, right->consumed, 0));
        timed_begin(w, NAME_SAXPY, &slot);
        saxpy<<<grid, block, 0, w->stream>>>(SAXPY_ALPHA, w->d_x, y, w->n);
        timed_end(w, slot);
        if (w->exports) {
            CHECK_CUDA(cudaMemcpyAsync(w->h_head, y, halo_bytes,
                                       cudaMemcpyDeviceToHost, w->stream));
            CHECK_CUDA(cudaMemcpyAsync(w->h_tail, y + w->n - RADIUS,
                                       halo_bytes, cudaMemcpyDeviceToHost,
                                       w->stream));
        }
        CHECK_CUDA(cudaEventRecord(w->ready, w->stream));
        /* Every `ready` of this iteration is recorded before anyone waits
         * on it: a wait on an unrecorded event would not wait at all. */
        pthread_barrier_wait(&g_barrier);

        /* Phase B: pull the halos, smooth, reduce. */
        CHECK_CUDA(cudaStreamWaitEvent(w->stream, left->ready, 0));
        CHECK_CUDA(cudaStreamWaitEvent(w->stream, right->ready, 0));
        pull(w, left, w->from_left, w->d_halo_lo, left_y + left->n - RADIUS,
             left->h_tail, halo_bytes);
        pull(w, right, w->from_right, w->d_halo_hi, right_y, right->h_head,
             halo_bytes);
        timed_begin(w, NAME_STENCIL, &slot);
        halo_stencil<<<grid, block, 0, w->stream>>>(y, w->d_halo_lo,
                                                    w->d_halo_hi, z, w->n);
        timed_end(w, slot);
        CHECK_CUDA(cudaEventRecord(w->consumed, w->stream));
        timed_begin(w, NAME_REDUCE, &slot);
        block_reduce_sum<<<REDUCE_BLOCKS, REDUCE_THREADS, 0, w->stream>>>(
            z, w->n, w->d_partials);
        timed_end(w, slot);
        timed_begin(w, NAME_REDUCE, &slot);
        block_reduce_sum<<<1, REDUCE_THREADS, 0, w->stream>>>(
            w->d_partials, REDUCE_BLOCKS, w->d_sums + iter);
        timed_end(w, slot);
        /* Our y and `consumed` change next iteration: every neighbour must
         * have queued its reads of this iteration first. */
        pthread_barrier_wait(&g_barrier);
    }

    /* Gather: every slice onto worker 0's device. */
    const float *final_y = w->d_y[g_iterations & 1];
    if (w->to_root == COPY_STAGED)
        CHECK_CUDA(cudaMemcpyAsync(w->h_slice, final_y,
                                   (size_t)w->n * sizeof(float),
                                   cudaMemcpyDeviceToHost, w->stream));
    CHECK_CUDA(cudaEventRecord(w->finished, w->stream));
    pthread_barrier_wait(&g_barrier);
    if (w->index == 0) {
        for (int i = 0; i < g_worker_count; i++) {
            Worker *src = &g_workers[i];
            CHECK_CUDA(cudaStreamWaitEvent(w->stream, src->finished, 0));
            pull(w, src, src->to_root, g_d_gathered + src->offset,
                 src->d_y[g_iterations & 1], src->h_slice,
                 (size_t)src->n * sizeof(float));
        }
    }
    CHECK_CUDA(cudaStreamSynchronize(w->stream));
    return NULL;
}

/* Can device @p a read device @p b's memory directly? Enables it if so. */
static int enable_peer(int a, int b, int force_host)
{
    if (force_host)
        return 0;
    int can = 0;
    CHECK_CUDA(cudaDeviceCanAccessPeer(&can, a, b));
    if (!can)
        return 0;
    CHECK_CUDA(cudaSetDevice(a));
    cudaError_t err = cudaDeviceEnablePeerAccess(b, 0);
    if (err == cudaErrorPeerAccessAlreadyEnabled) {
        (void)cudaGetLastError(); /* not sticky: just clear it */
        return 1;
    }
    CHECK_CUDA(err);
    return 1;
}

/* -1 not asked yet, 0 no, 1 peer access enabled: asked only for the pairs
 * that exchange data, since a GPU has a limited number of peers. */
static int g_peer[MAX_DEVICES][MAX_DEVICES];

static CopyMode copy_mode(int to_device, int from_device, int force_host)
{
    if (to_device == from_device)
        return COPY_LOCAL;
    int *peer = &g_peer[to_device][from_device];
    if (*peer < 0)
        *peer = enable_peer(to_device, from_device, force_host);
    return *peer ? COPY_PEER : COPY_STAGED;
}

/* Forces module loading on the current device, so lazy loading does not
 * inflate the first timed launch of each kernel there. */
static void preload_kernels(void)
{
    struct cudaFuncAttributes attr;
    CHECK_CUDA(cudaFuncGetAttributes(&attr, saxpy));
    CHECK_CUDA(cudaFuncGetAttributes(&attr, halo_stencil));
    CHECK_CUDA(cudaFuncGetAttributes(&attr, block_reduce_sum));
}

static int parse_positive(const char *text, long max, long *out)
{
    char *end = NULL;
    long value = strtol(text, &end, 10);
    if (end == text || *end != '\0' || value <= 0 || value > max)
        return 0;
    *out = value;
    return 1;
}

static void usage(void)
{
    fprintf(stderr, "usage: multi_gpu [N] [iterations] [--workers W] "
                    "[--host-staged]\n");
}

/* Adds worker @p w's timings into the per-device totals in @p merged. */
static void merge_stats(LaunchTimer *merged, LaunchTimer *timer)
{
    while (timer->tail < timer->head)
        timer_harvest_oldest(timer);
    for (int i = 0; i < timer->num_names; i++) {
        const TimerStats *s = &timer->stats[i];
        TimerStats *m = timer_stats_for(merged, s->name);
        m->launches += s->launches;
        m->sum_us += s->sum_us;
        if (s->min_us < m->min_us)
            m->min_us = s->min_us;
        if (s->max_us > m->max_us)
            m->max_us = s->max_us;
    }
}

int main(int argc, char **argv)
{
    long elements = DEFAULT_ELEMENTS, iterations = DEFAULT_ITERATIONS;
    long workers = 0;
    int force_host = 0, positional = 0;
    for (int a = 1; a < argc; a++) {
        if (strcmp(argv[a], "--host-staged") == 0) {
            force_host = 1;
        } else if (strcmp(argv[a], "--workers") == 0 && a + 1 < argc) {
            if (!parse_positive(argv[++a], MAX_WORKERS, &workers)) {
                usage();
                return 1;
            }
        } else if (positional == 0 &&
                   parse_positive(argv[a], 1L << 30, &elements)) {
            positional++;
        } else if (positional == 1 &&
                   parse_positive(argv[a], 1000000, &iterations)) {
            positional++;
        } else {
            usage();
            return 1;
        }
    }

    int device_count = 0;
    CHECK_CUDA(cudaGetDeviceCount(&device_count));
    if (device_count > MAX_DEVICES)
        device_count = MAX_DEVICES;
    if (workers == 0)
        workers = device_count;
    if (elements < workers * RADIUS) {
        fprintf(stderr, "multi_gpu: N=%ld is too small for %ld workers\n",
                elements, workers);
        return 1;
    }
    int used_devices = workers < device_count ? (int)workers : device_count;
    g_worker_count = (int)workers;
    g_iterations = (int)iterations;
    for (int d = 0; d < used_devices; d++) {
        CHECK_CUDA(cudaSetDevice(d));
        print_device();
    }

    memset(g_peer, 0xff, sizeof g_peer);
    int modes_seen[3] = {0, 0, 0};
    for (int i = 0; i < g_worker_count; i++) {
        Worker *w = &g_workers[i];
        w->index = i;
        w->device = i % device_count;
        w->left = (i + g_worker_count - 1) % g_worker_count;
        w->right = (i + 1) % g_worker_count;
        w->offset = elements * i / g_worker_count;
        w->n = (int)(elements * (i + 1) / g_worker_count - w->offset);
    }
    for (int i = 0; i < g_worker_count; i++) {
        Worker *w = &g_workers[i];
        w->from_left =
            copy_mode(w->device, g_workers[w->left].device, force_host);
        w->from_right =
            copy_mode(w->device, g_workers[w->right].device, force_host);
        w->to_root = copy_mode(g_workers[0].device, w->device, force_host);
        if (w->from_left == COPY_STAGED)
            g_workers[w->left].exports = 1;
        if (w->from_right == COPY_STAGED)
            g_workers[w->right].exports = 1;
        modes_seen[w->from_left]++;
        modes_seen[w->from_right]++;
    }
    const char *exchange = modes_seen[COPY_PEER] && modes_seen[COPY_STAGED]
                               ? "mixed"
                           : modes_seen[COPY_STAGED] ? "host-staged"
                           : modes_seen[COPY_PEER]   ? "p2p"
                                                     : "local";
    printf("MULTI_GPU devices=%d workers=%d elements=%ld iterations=%ld "
           "exchange=%s\n",
           used_devices, g_worker_count, elements, iterations, exchange);
    for (int i = 0; i < g_worker_count; i++) {
        const Worker *w = &g_workers[i];
        printf("EXCHANGE worker=%d device=%d elements=%d left=dev%d:%s "
               "right=dev%d:%s gather=%s\n",
               i, w->device, w->n, g_workers[w->left].device,
               copy_mode_name(w->from_left), g_workers[w->right].device,
               copy_mode_name(w->from_right), copy_mode_name(w->to_root));
    }

    /* Inputs, deterministic. */
    float *h_x = (float *)malloc((size_t)elements * sizeof(float));
    float *h_y = (float *)malloc((size_t)elements * sizeof(float));
    float *h_ref = (float *)malloc((size_t)elements * sizeof(float));
    float *h_tmp = (float *)malloc((size_t)elements * sizeof(float));
    float *h_out = (float *)malloc((size_t)elements * sizeof(float));
    float *h_sums =
        (float *)malloc((size_t)g_worker_count * iterations * sizeof(float));
    if (!h_x || !h_y || !h_ref || !h_tmp || !h_out || !h_sums) {
        fprintf(stderr, "host allocation failed\n");
        return 1;
    }
    Rng rng = {2024};
    for (long i = 0; i < elements; i++) {
        h_x[i] = rng_uniform_pm1(&rng);
        h_y[i] = rng_uniform_pm1(&rng);
    }

    for (int i = 0; i < g_worker_count; i++) {
        Worker *w = &g_workers[i];
        size_t bytes = (size_t)w->n * sizeof(float);
        CHECK_CUDA(cudaSetDevice(w->device));
        preload_kernels();
        CHECK_CUDA(cudaMemcpyToSymbol(c_weights, h_weights, sizeof h_weights));
        CHECK_CUDA(cudaStreamCreateWithFlags(&w->stream,
                                             cudaStreamNonBlocking));
        CHECK_CUDA(cudaMalloc(&w->d_x, bytes));
        CHECK_CUDA(cudaMalloc(&w->d_y[0], bytes));
        CHECK_CUDA(cudaMalloc(&w->d_y[1], bytes));
        CHECK_CUDA(cudaMalloc(&w->d_halo_lo, RADIUS * sizeof(float)));
        CHECK_CUDA(cudaMalloc(&w->d_halo_hi, RADIUS * sizeof(float)));
        CHECK_CUDA(cudaMalloc(&w->d_partials, REDUCE_BLOCKS * sizeof(float)));
        CHECK_CUDA(cudaMalloc(&w->d_sums, iterations * sizeof(float)));
        CHECK_CUDA(cudaMemcpy(w->d_x, h_x + w->offset, bytes,
                              cudaMemcpyHostToDevice));
        CHECK_CUDA(cudaMemcpy(w->d_y[0], h_y + w->offset, bytes,
                              cudaMemcpyHostToDevice));
        CHECK_CUDA(cudaMemset(w->d_sums, 0, iterations * sizeof(float)));
        /* Portable: pinned for every device's context, not just this one. */
        CHECK_CUDA(cudaHostAlloc(&w->h_head, RADIUS * sizeof(float),
                                 cudaHostAllocPortable));
        CHECK_CUDA(cudaHostAlloc(&w->h_tail, RADIUS * sizeof(float),
                                 cudaHostAllocPortable));
        if (w->to_root == COPY_STAGED)
            CHECK_CUDA(cudaHostAlloc(&w->h_slice, bytes,
                                     cudaHostAllocPortable));
        CHECK_CUDA(cudaEventCreateWithFlags(&w->ready,
                                            cudaEventDisableTiming));
        CHECK_CUDA(cudaEventCreateWithFlags(&w->consumed,
                                            cudaEventDisableTiming));
        CHECK_CUDA(cudaEventCreateWithFlags(&w->finished,
                                            cudaEventDisableTiming));
        /* Recorded once up front, so the first iteration's waits on
         * `consumed` are satisfied. */
        CHECK_CUDA(cudaEventRecord(w->consumed, w->stream));
        CHECK_CUDA(cudaDeviceSynchronize());
        w->timer = (LaunchTimer *)malloc(sizeof(LaunchTimer));
        if (!w->timer) {
            fprintf(stderr, "host allocation failed\n");
            return 1;
        }
        timer_init(w->timer);
        snprintf(w->names[NAME_SAXPY], sizeof w->names[0], "saxpy@dev%d",
                 w->device);
        snprintf(w->names[NAME_STENCIL], sizeof w->names[0],
                 "halo_stencil@dev%d", w->device);
        snprintf(w->names[NAME_REDUCE], sizeof w->names[0],
                 "block_reduce_sum@dev%d", w->device);
    }
    CHECK_CUDA(cudaSetDevice(g_workers[0].device));
    CHECK_CUDA(cudaMalloc(&g_d_gathered, (size_t)elements * sizeof(float)));

    pthread_barrier_init(&g_barrier, NULL, (unsigned)g_worker_count);
    pthread_t threads[MAX_WORKERS];
    for (int i = 0; i < g_worker_count; i++) {
        if (pthread_create(&threads[i], NULL, worker_main, &g_workers[i]) !=
            0) {
            fprintf(stderr, "pthread_create failed\n");
            return 1;
        }
    }
    for (int i = 0; i < g_worker_count; i++)
        pthread_join(threads[i], NULL);
    pthread_barrier_destroy(&g_barrier);

    CHECK_CUDA(cudaSetDevice(g_workers[0].device));
    CHECK_CUDA(cudaMemcpy(h_out, g_d_gathered,
                          (size_t)elements * sizeof(float),
                          cudaMemcpyDeviceToHost));
    for (int i = 0; i < g_worker_count; i++) {
        Worker *w = &g_workers[i];
        CHECK_CUDA(cudaSetDevice(w->device));
        CHECK_CUDA(cudaMemcpy(h_sums + (size_t)i * iterations, w->d_sums,
                              iterations * sizeof(float),
                              cudaMemcpyDeviceToHost));
    }

    /* CPU reference: the same float operations in the same order. */
    memcpy(h_ref, h_y, (size_t)elements * sizeof(float));
    double max_err = 0.0;
    int mismatches = 0;
    for (long iter = 0; iter < iterations; iter++) {
        for (long i = 0; i < elements; i++)
            h_ref[i] = fmaf(SAXPY_ALPHA, h_x[i], h_ref[i]);
        for (long i = 0; i < elements; i++) {
            float acc = 0.0f;
            for (int k = 0; k < 2 * RADIUS + 1; k++) {
                long j = i + k - RADIUS; /* the array is periodic */
                if (j < 0)
                    j += elements;
                else if (j >= elements)
                    j -= elements;
                acc = k == 0 ? h_weights[0] * h_ref[j]
                             : fmaf(h_weights[k], h_ref[j], acc);
            }
            h_tmp[i] = acc;
        }
        memcpy(h_ref, h_tmp, (size_t)elements * sizeof(float));
        double ref_sum = 0.0, abs_sum = 0.0, gpu_sum = 0.0;
        for (long i = 0; i < elements; i++) {
            ref_sum += h_ref[i];
            abs_sum += fabs((double)h_ref[i]);
        }
        for (int w = 0; w < g_worker_count; w++)
            gpu_sum += h_sums[(size_t)w * iterations + iter];
        /* Float tree reductions err in proportion to the sum of magnitudes. */
        double err = fabs(gpu_sum - ref_sum) / (abs_sum > 0 ? abs_sum : 1.0);
        if (isnan(err))
            err = INFINITY;
        if (err > max_err)
            max_err = err;
        if (err > 1e-5) {
            fprintf(stderr, "sum mismatch at iteration %ld: %.6f vs %.6f\n",
                    iter, gpu_sum, ref_sum);
            mismatches++;
        }
    }
    for (long i = 0; i < elements; i++) {
        double err = fabs((double)h_out[i] - (double)h_ref[i]);
        if (isnan(err))
            err = INFINITY;
        if (err > max_err)
            max_err = err;
        if (err > 1e-5 * (1.0 + fabs((double)h_ref[i]))) {
            if (mismatches < 5)
                fprintf(stderr, "mismatch at %ld: %g vs %g\n", i, h_out[i],
                        h_ref[i]);
            mismatches++;
        }
    }

    /* One EVENT_TIMING line per kernel and device, device by device. */
    static LaunchTimer merged;
    memset(&merged, 0, sizeof merged);
    for (int d = 0; d < used_devices; d++) {
        CHECK_CUDA(cudaSetDevice(d)); /* the timers' events live there */
        for (int i = 0; i < g_worker_count; i++)
            if (g_workers[i].device == d)
                merge_stats(&merged, g_workers[i].timer);
    }
    for (int i = 0; i < merged.num_names; i++) {
        const TimerStats *s = &merged.stats[i];
        if (s->launches == 0)
            continue;
        printf("EVENT_TIMING kernel=%s launches=%ld mean_us=%.3f "
               "min_us=%.3f max_us=%.3f\n",
               s->name, s->launches, s->sum_us / (double)s->launches,
               s->min_us, s->max_us);
    }
    if (mismatches == 0)
        printf("RESULT ok\n");
    else
        printf("RESULT mismatch max_err=%g\n", max_err);

    for (int i = 0; i < g_worker_count; i++) {
        Worker *w = &g_workers[i];
        CHECK_CUDA(cudaSetDevice(w->device));
        timer_destroy(w->timer);
        free(w->timer);
        CHECK_CUDA(cudaEventDestroy(w->ready));
        CHECK_CUDA(cudaEventDestroy(w->consumed));
        CHECK_CUDA(cudaEventDestroy(w->finished));
        CHECK_CUDA(cudaStreamDestroy(w->stream));
        CHECK_CUDA(cudaFree(w->d_x));
        CHECK_CUDA(cudaFree(w->d_y[0]));
        CHECK_CUDA(cudaFree(w->d_y[1]));
        CHECK_CUDA(cudaFree(w->d_halo_lo));
        CHECK_CUDA(cudaFree(w->d_halo_hi));
        CHECK_CUDA(cudaFree(w->d_partials));
        CHECK_CUDA(cudaFree(w->d_sums));
        CHECK_CUDA(cudaFreeHost(w->h_head));
        CHECK_CUDA(cudaFreeHost(w->h_tail));
        if (w->h_slice)
            CHECK_CUDA(cudaFreeHost(w->h_slice));
    }
    CHECK_CUDA(cudaSetDevice(g_workers[0].device));
    CHECK_CUDA(cudaFree(g_d_gathered));
    free(h_x);
    free(h_y);
    free(h_ref);
    free(h_tmp);
    free(h_out);
    free(h_sums);
    return mismatches == 0 ? 0 : 1;
}
