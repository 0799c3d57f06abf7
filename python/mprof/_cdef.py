"""The part of libmprof's C ABI (libmprof/include/mprof/*.h) this package calls.

cffi's ABI mode reads these declarations instead of the headers, so they
mirror them: the records of ``format.h`` are fixed (docs/ABI.md), so their
layout here is exact and the tests compare it with the library's record
sizes; the growable structs the library hands out are declared with the
fields of this version, which every later library of the same SOVERSION
keeps at the same offsets.
"""

CDEF = r"""
typedef struct mprof_trace mprof_trace;
typedef struct mprof_sidecar mprof_sidecar;
typedef struct mprof_join mprof_join;
typedef struct mprof_diagnosis mprof_diagnosis;
typedef struct mprof_throughput mprof_throughput;
typedef struct mprof_range_times mprof_range_times;

const char *mprof_error_last(void);
int mprof_error_last_status(void);
void mprof_error_clear(void);
const char *mprof_status_name(int status);
const char *mprof_version(void);
unsigned mprof_version_number(void);

/* format.h: fixed records */
typedef struct { uint32_t key; uint32_t value; } mprof_meta_record;
typedef struct {
  uint32_t id; uint32_t name; uint32_t cc_major; uint32_t cc_minor;
  uint32_t sm_count; uint32_t warp_size; uint32_t max_threads_per_block;
  uint32_t max_threads_per_sm; uint32_t max_blocks_per_sm;
  uint32_t max_warps_per_sm; uint32_t max_regs_per_block;
  uint32_t max_regs_per_sm; uint32_t max_shared_per_block;
  uint32_t max_shared_per_sm; uint32_t core_clock_khz;
  uint32_t memory_clock_khz; uint32_t memory_bus_width; uint32_t l2_size;
  uint64_t global_memory; uint32_t uuid_lo; uint32_t reserved[3];
} mprof_device_record;
typedef struct {
  uint32_t device; uint32_t context_id; uint32_t stream_id; uint32_t name;
} mprof_stream_record;
typedef struct {
  uint32_t mangled_name; uint32_t demangled_name; uint64_t cubin_crc;
  uint32_t function_index; uint32_t device; uint32_t registers;
  uint32_t static_shared; uint32_t local_per_thread; uint32_t reserved;
} mprof_kernel_record;
typedef struct {
  uint32_t kernel; uint32_t grid[3]; uint32_t block[3]; uint32_t cluster[3];
  uint32_t dynamic_shared; uint32_t launch_type;
} mprof_shape_record;
typedef struct {
  uint64_t start; uint64_t end; uint32_t shape; uint32_t stream;
  uint32_t correlation_id; uint32_t graph_id; uint64_t graph_node_id;
} mprof_launch_record;
typedef struct {
  uint64_t start; uint64_t end; uint64_t bytes; uint32_t stream;
  uint32_t correlation_id; uint16_t kind; uint16_t copy_kind; uint32_t value;
  uint32_t src_device; uint32_t dst_device;
} mprof_memop_record;
typedef struct {
  uint64_t start; uint64_t end; uint32_t name; uint32_t domain;
  uint32_t thread_id; uint32_t depth; uint32_t color; uint32_t flags;
} mprof_range_record;
typedef struct {
  uint64_t start; uint64_t end; uint32_t correlation_id; uint32_t thread_id;
  uint32_t name; uint32_t kind;
} mprof_api_call_record;
typedef struct {
  uint32_t name; uint32_t color; uint32_t role; uint32_t reserved;
} mprof_region_record;
typedef struct {
  uint64_t start; uint64_t end; uint32_t launch; uint32_t sm; uint32_t block;
  uint32_t warp; uint32_t region; uint32_t flags; uint64_t payload;
} mprof_span_record;
typedef struct {
  uint32_t device; uint32_t index; uint32_t name; uint32_t reserved;
} mprof_stall_reason_record;
typedef struct {
  uint64_t cubin_crc; uint32_t function_name; uint32_t function_index;
  uint32_t pc_offset; uint32_t stall_reason; uint32_t samples;
  uint32_t correlation_id; uint32_t device; uint32_t drain;
} mprof_pc_sample_record;
typedef struct {
  uint32_t device; uint32_t column; uint32_t name; uint32_t unit;
  uint64_t interval_ns; uint64_t reserved;
} mprof_pm_metric_record;
typedef struct {
  uint64_t start; uint64_t end; uint32_t device; uint32_t reserved;
  float value[12];
} mprof_pm_sample_record;

int mprof_trace_open(mprof_trace **out, const char *path, const void *opts);
int mprof_mkprof_open_trace(mprof_trace **out, const char *path, void **mkprof);
int mprof_trace_open_merged(mprof_trace **out, mprof_trace *const *traces,
                            size_t count, const char *name);
void mprof_trace_free(mprof_trace *trace);
const char *mprof_trace_path(const mprof_trace *trace);
const char *mprof_trace_string(const mprof_trace *trace, uint32_t ref);
const char *mprof_trace_meta(const mprof_trace *trace, const char *key);
const void *mprof_trace_section(const mprof_trace *trace, uint32_t type,
                                size_t *count);
size_t mprof_trace_process_count(const mprof_trace *trace);
const char *mprof_trace_process_meta(const mprof_trace *trace, size_t process,
                                     const char *key);
uint32_t mprof_trace_stream_process(const mprof_trace *trace, uint32_t stream);
const char *mprof_copy_kind_name(unsigned copy_kind);
const char *mprof_name_short(char *buf, size_t size, const char *name);
const char *mprof_join_kernel_short(const mprof_join *join, size_t index);

int mprof_sidecar_load(mprof_sidecar **out, const char *path);
int mprof_sidecar_path_of(const mprof_trace *trace, char *out, size_t size);
void mprof_sidecar_free(mprof_sidecar *sidecar);
int mprof_sass_complete(mprof_sidecar *sidecar, const char *trace_path,
                        const char *sidecar_path, const void *opts,
                        void *report);

typedef struct {
  unsigned version; const mprof_sidecar *sidecar; unsigned flags;
  unsigned threads;
} mprof_join_options;
typedef struct {
  const char *name; const char *mangled; uint32_t device; uint32_t device_id;
  uint64_t launches; uint64_t total_ns; uint64_t min_ns; uint64_t max_ns;
  uint64_t median_ns; uint64_t p90_ns; double mean_ns; double stddev_ns;
  double share; double device_share; uint64_t gap_count;
  uint64_t gap_median_ns; double gap_mean_ns; uint64_t samples;
  uint64_t not_issued; size_t shape_count; size_t pc_count;
  size_t function_count; uint64_t cubin_crc; const void *function;
  uint32_t process; uint32_t process_count; size_t memory_count;
  uint32_t flags;
} mprof_kernel_stats;
typedef struct {
  const char *name; const char *full_name; uint32_t not_issued;
  uint32_t plain; uint32_t dimension;
} mprof_stall_reason;

int mprof_join_build(mprof_join **out, const mprof_trace *trace,
                     const mprof_join_options *opts);
void mprof_join_free(mprof_join *join);
uint64_t mprof_join_kernel_time(const mprof_join *join);
size_t mprof_join_kernel_count(const mprof_join *join);
const mprof_kernel_stats *mprof_join_kernel(const mprof_join *join,
                                            size_t index);
uint32_t mprof_join_launch_kernel(const mprof_join *join, size_t launch);
size_t mprof_join_reason_count(const mprof_join *join);
const mprof_stall_reason *mprof_join_reason(const mprof_join *join,
                                            size_t index);

/* join.h: the sampled instructions as columns */
size_t mprof_join_pc_rows(const mprof_join *join);
size_t mprof_join_pc_reason_rows(const mprof_join *join);
int mprof_join_pc_column(void *out, size_t count, const mprof_join *join,
                         unsigned column);
int mprof_join_pc_reason_column(void *out, size_t count,
                                const mprof_join *join, unsigned column);

/* sidecar.h: fixed */
typedef struct {
  uint32_t offset; uint32_t line; const char *predicate; const char *opcode;
  const char *operands; const char *file;
} mprof_sass_instruction;
char *mprof_sass_instruction_text(char *buf, size_t size,
                                  const mprof_sass_instruction *in);

/* diagnose.h, throughput.h: growable, in the library's memory */
typedef struct {
  const char *name; double value; const char *unit;
} mprof_metric;
typedef struct {
  uint32_t id; uint32_t state; double cost; const char *detail;
  size_t metric_count; const mprof_metric *metrics; double gain;
  uint32_t gain_bound; double saved_ns;
} mprof_dimension;
typedef struct {
  unsigned version; uint32_t known; uint32_t warps_per_block;
  uint32_t blocks_per_sm; uint32_t active_warps; uint32_t max_warps;
  double theoretical; uint32_t limit_warps; uint32_t limit_blocks;
  uint32_t limit_registers; uint32_t limit_shared; uint32_t limiter;
  uint64_t grid_blocks; uint32_t sm_count; double waves;
  double tail_efficiency;
} mprof_occupancy;
typedef struct {
  uint64_t samples; uint64_t partial; uint64_t interval_ns;
  uint64_t covered_ns; double shared; const double *value;
} mprof_kernel_throughput;
typedef struct {
  size_t kernel; const mprof_kernel_stats *stats; const char *verdict;
  uint32_t verdict_dimension; uint32_t verdict_state;
  size_t dimension_count; const mprof_dimension *dimensions;
  size_t stall_count; const void *stalls; double other_share;
  double issue_active; size_t hot_count; const void *hot;
  const mprof_occupancy *occupancy; double weighted_occupancy;
  double weighted_tail; size_t shape_count; const mprof_occupancy *shapes;
  size_t note_count; const char *const *notes;
  const mprof_kernel_throughput *throughput; uint32_t tensor_core;
  uint32_t library; const char *roof; double gain; uint32_t gain_bound;
  double saved_ns; uint32_t gain_of_stream;
} mprof_kernel_diagnosis;
typedef struct { const char *key; const char *text; } mprof_note;

int mprof_diagnose(mprof_diagnosis **out, const mprof_join *join,
                   const void *opts);
void mprof_diagnosis_free(mprof_diagnosis *diagnosis);
size_t mprof_diagnosis_kernel_count(const mprof_diagnosis *diagnosis);
const mprof_kernel_diagnosis *
mprof_diagnosis_kernel(const mprof_diagnosis *diagnosis, size_t index);
const mprof_dimension *
mprof_kernel_diagnosis_dimension(const mprof_kernel_diagnosis *kernel,
                                 size_t index);
const mprof_metric *mprof_dimension_metric(const mprof_dimension *dimension,
                                           size_t index);
size_t mprof_diagnosis_note_count(const mprof_diagnosis *diagnosis);
const mprof_note *mprof_diagnosis_note(const mprof_diagnosis *diagnosis,
                                       size_t index);
const char *mprof_dimension_key(uint32_t dimension);
const char *mprof_dimension_title(uint32_t dimension);
const char *mprof_state_name(uint32_t state);
const char *mprof_gain_bound_name(uint32_t bound);
const char *mprof_occupancy_limiter_name(uint32_t limiter);
const char *mprof_counter_key(uint32_t counter);

/* ranges.h */
typedef struct {
  const char *name; const char *domain; uint64_t instances; uint64_t host_ns;
  uint64_t launches; uint64_t kernel_ns; uint64_t copies; uint64_t copy_ns;
  double share; uint64_t open_instances;
  uint64_t inclusive_launches; uint64_t inclusive_ns;
  uint64_t inclusive_copies; uint64_t inclusive_copy_ns;
  double inclusive_share; uint64_t borrowed_launches;
  const char *parent; const char *parent_domain; uint32_t depth;
} mprof_range_time;
int mprof_range_times_build(mprof_range_times **out,
                            const mprof_trace *trace);
void mprof_range_times_free(mprof_range_times *times);
size_t mprof_range_times_count(const mprof_range_times *times);
const mprof_range_time *mprof_range_times_get(const mprof_range_times *times,
                                              size_t index);

/* ranks.h: the per-rank table as bytes, and the reduce */
typedef struct mprof_rank_table mprof_rank_table;
typedef struct mprof_ranks mprof_ranks;
typedef struct {
  unsigned version; double threshold; uint64_t min_excess_ns; unsigned flags;
  size_t max_diffs; unsigned threads;
} mprof_ranks_options;
typedef struct {
  unsigned version; unsigned format; unsigned flags; size_t max_kernels;
  size_t max_hot; const char *kernel;
} mprof_report_options;
int mprof_rank_table_build(mprof_rank_table **out, const mprof_trace *trace);
void mprof_rank_table_free(mprof_rank_table *table);
int mprof_rank_table_save(const mprof_rank_table *table, void *buf,
                          size_t capacity, size_t *size);
int mprof_rank_table_load(mprof_rank_table **out, const void *bytes,
                          size_t size);
int mprof_ranks_options_init(mprof_ranks_options *opts, unsigned version);
int mprof_ranks_build(mprof_ranks **out, mprof_rank_table *const *tables,
                      size_t count, const mprof_ranks_options *opts);
void mprof_ranks_free(mprof_ranks *ranks);
int mprof_report_options_init(mprof_report_options *opts, unsigned version);
int mprof_ranks_write(void *out, const mprof_ranks *ranks,
                      const mprof_report_options *opts);

/* libc, to hand a report writer a FILE * in memory */
void *open_memstream(char **ptr, size_t *size);
int fclose(void *stream);
void free(void *ptr);
"""
