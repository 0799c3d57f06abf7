/*
 * mprof tests — the short form of kernel names (mprof/names.h) on real
 * PyTorch, CUTLASS, CUB and cuBLAS names: manglings as the compilers emit
 * them, demangled by libmprof's demangler, and the kernels of the samples.
 *
 * SPDX-License-Identifier: MIT
 */
#include "test_util.h"

#include <dirent.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mprof/mprof.h"

/* The short form of mangled name @p mangled, demangled first. */
static const char *short_of_mangled(char *buf, size_t size,
                                    const char *mangled) {
  char *demangled = NULL;
  assert_int_equal(mprof_sass_demangle(&demangled, mangled), 0);
  assert_non_null(demangled);
  mprof_name_short(buf, size, demangled);
  free(demangled);
  return buf;
}

static void test_pytorch(void **state) {
  (void)state;
  char buf[256];
  /* Two kernels in at::native's anonymous namespace: both used to read
   * "at::native::". */
  assert_string_equal(
      short_of_mangled(
          buf, sizeof buf,
          "_ZN2at6native12_GLOBAL__N_124fused_dropout_kernel_vecIffjLi1ELi4"
          "EbEEvNS_4cuda6detail10TensorInfoIKT_T1_EENS5_IS6_S8_EENS5_IT4_S8_"
          "EES8_T0_NS_15PhiloxCudaStateE"),
      "fused_dropout_kernel_vec<float, float, unsigned int, 1, 4, bool>");
  assert_string_equal(
      short_of_mangled(buf, sizeof buf,
                       "_ZN2at6native12_GLOBAL__N_135GammaBetaBackwardCUDAKern"
                       "elTemplateIffLj32ELj32ELj32ELb0EEEvllPKT_S5_PKT0_S8_"
                       "PS3_S9_"),
      "GammaBetaBackwardCUDAKernelTemplate<float, float, 32u, 32u, 32u, "
      "false>");
  /* The functor tells the elementwise kernels apart: kept, unqualified. */
  assert_string_equal(
      short_of_mangled(buf, sizeof buf,
                       "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_"
                       "15CUDAFunctor_addIfEENS_6detail5ArrayIPcLi3EEEEEviT0_"
                       "T1_"),
      "vectorized_elementwise_kernel<4, CUDAFunctor_add<float>, Array<char*, "
      "3> >");
  /* A lambda's long closure type is elided. */
  assert_string_equal(
      short_of_mangled(buf, sizeof buf,
                       "_ZN2at6native29vectorized_elementwise_kernelILi4EZZZN"
                       "S0_23direct_copy_kernel_cudaERNS_18TensorIteratorBase"
                       "EENKUlvE0_clEvENKUlvE5_clEvEUlfE_NS_6detail5ArrayIPcL"
                       "i2EEEEEviT0_T1_"),
      "vectorized_elementwise_kernel<" MPROF_NAME_ELIDED ">");
}

static void test_cutlass_cub_cublas(void **state) {
  (void)state;
  char buf[256];
  /* CUTLASS's wrapper: the template argument is the kernel. */
  assert_string_equal(
      short_of_mangled(buf, sizeof buf,
                       "_ZN7cutlass7Kernel2I43cutlass_80_simt_sgemm_256x128_8x"
                       "4_nn_align1EEvNT_6ParamsE"),
      "Kernel2<cutlass_80_simt_sgemm_256x128_8x4_nn_align1>");
  assert_string_equal(short_of_mangled(buf, sizeof buf,
                                       "_ZN3cub17CUB_200200_800_NS11EmptyKern"
                                       "elIvEEvv"),
                      "EmptyKernel<void>");
  assert_string_equal(
      short_of_mangled(
          buf, sizeof buf,
          "_ZN3cub17CUB_200200_800_NS30DeviceRadixSortHistogramKernelINS0_21"
          "DeviceRadixSortPolicyIfNS0_8NullTypeEiE9Policy800ELb0EfiNS0_6detai"
          "l21identity_decomposer_tEEEvPT2_PKT1_S8_iiT3_"),
      "DeviceRadixSortHistogramKernel<" MPROF_NAME_ELIDED ">");
  /* cuBLAS's plain C names are kept whole. */
  const char *xmma = "sm80_xmma_gemm_f32f32_f32f32_f32_nn_n_tilesize64x64x8_"
                     "stage3_warpsize1x4x1_ffma_aligna4_alignc4_execute_"
                     "kernel__5x_cublas";
  assert_string_equal(mprof_name_short(buf, sizeof buf, xmma), xmma);
  assert_string_equal(
      mprof_name_short(buf, sizeof buf,
                       "void cublasLt::splitKreduce_kernel<32, 16, int, float,"
                       " float, float, float, false, float, float, float, "
                       "true, false, false, false>(cublasLt::"
                       "cublasSplitKParams<float>, float const*)"),
      "splitKreduce_kernel<" MPROF_NAME_ELIDED ">");
}

static void test_edges(void **state) {
  (void)state;
  char buf[64];
  assert_string_equal(mprof_name_short(buf, sizeof buf,
                                       "saxpy(float, float "
                                       "const*, float*, "
                                       "int)"),
                      "saxpy");
  assert_string_equal(mprof_name_short(buf, sizeof buf, "plain_c_kernel"),
                      "plain_c_kernel");
  assert_string_equal(mprof_name_short(buf, sizeof buf, "megakernel (MKPROF)"),
                      "megakernel (MKPROF)");
  assert_string_equal(mprof_name_short(buf, sizeof buf, "_Z3fooPf_broken"),
                      "_Z3fooPf_broken");
  assert_string_equal(mprof_name_short(buf, sizeof buf, ""), "");
  assert_string_equal(mprof_name_short(buf, sizeof buf, NULL), "");
  /* A template argument in parentheses is not the parameter list. */
  assert_string_equal(mprof_name_short(buf, sizeof buf, "void f<(int)3>(int)"),
                      "f<(int)3>");
  /* A small buffer cuts at a character boundary, never inside "…". */
  char small[24];
  mprof_name_short(small, sizeof small,
                   "void ns::kernel_with_long_name<int, int, int, int, int, "
                   "int, int, int, int, int, int, int>(int)");
  assert_string_equal(small, "kernel_with_long_name<");
  assert_true(mprof_name_short(small, 0, "x") == small);
}

/* The kernels of the samples keep distinct short names. */
static void test_samples(void **state) {
  (void)state;
  const char *root = getenv("MPROF_SOURCE_DIR");
  char path[4096];
  snprintf(path, sizeof path, "%s/samples/transformer_forward.mprof",
           root ? root : ".");
  mprof_trace *t = NULL;
  /* samples/ is part of the tree: a missing sample is a broken checkout. */
  if (mprof_trace_open(&t, path, NULL) != 0)
    fail_msg("cannot open the sample %s: %s", path, mprof_error_last());
  size_t n;
  const mprof_kernel_record *k = mprof_trace_kernels(t, &n);
  assert_true(n >= 10);
  char(*names)[256] = calloc(n, sizeof *names);
  assert_non_null(names);
  int cutlass = 0, split = 0;
  for (size_t i = 0; i < n; i++) {
    const char *d = mprof_trace_string(t, k[i].demangled_name);
    mprof_name_short(names[i], sizeof names[i],
                     *d ? d : mprof_trace_string(t, k[i].mangled_name));
    assert_null(strchr(names[i], '('));
    for (size_t j = 0; j < i; j++)
      if (strcmp(mprof_trace_string(t, k[i].mangled_name),
                 mprof_trace_string(t, k[j].mangled_name)) != 0)
        assert_string_not_equal(names[i], names[j]);
    cutlass += strcmp(names[i], "Kernel2<cutlass_80_simt_sgemm_256x128_8x4_"
                                "nn_align1>") == 0;
    split +=
        strcmp(names[i], "splitKreduce_kernel<" MPROF_NAME_ELIDED ">") == 0;
  }
  assert_int_equal(cutlass, 1);
  assert_int_equal(split, 1);
  free(names);
  mprof_trace_free(t);
}

/* The join's short names of sample @p file: the kernels of one trace. */
static mprof_join *join_sample(mprof_trace **trace, const char *file) {
  const char *root = getenv("MPROF_SOURCE_DIR");
  char path[4096];
  snprintf(path, sizeof path, "%s/samples/%s", root ? root : ".", file);
  if (mprof_trace_open(trace, path, NULL) != 0)
    fail_msg("cannot open the sample %s: %s", path, mprof_error_last());
  mprof_join *j = NULL;
  assert_int_equal(mprof_join_build(&j, *trace, NULL), 0);
  return j;
}

/* The number of the join's kernels whose short name starts with @p prefix,
 * each checked unique among the kernels of other names. */
static size_t unique_with_prefix(const mprof_join *j, const char *prefix) {
  size_t found = 0, n = mprof_join_kernel_count(j);
  for (size_t i = 0; i < n; i++) {
    const char *a = mprof_join_kernel_short(j, i);
    for (size_t k = 0; k < i; k++)
      if (strcmp(mprof_join_kernel(j, i)->name, mprof_join_kernel(j, k)->name))
        if (strcmp(a, mprof_join_kernel_short(j, k)) == 0)
          fail_msg("kernels %zu and %zu both read \"%s\"", k, i, a);
    found += strncmp(a, prefix, strlen(prefix)) == 0;
  }
  return found;
}

static int has_short(const mprof_join *j, const char *name) {
  for (size_t i = 0; i < mprof_join_kernel_count(j); i++)
    if (strcmp(mprof_join_kernel_short(j, i), name) == 0)
      return 1;
  return 0;
}

/* nvtx_step's 7 foreach kernels and 6 elementwise kernels once all read
 * "multi_tensor_apply_kernel<…>" and "vectorized_elementwise_kernel<…>":
 * now the functor (and what it computes) tells them apart. */
static void test_unique_in_trace(void **state) {
  (void)state;
  mprof_trace *t = NULL;
  mprof_join *j = join_sample(&t, "nvtx_step.mprof");
  assert_int_equal(unique_with_prefix(j, "multi_tensor_apply_kernel<"), 7);
  assert_true(unique_with_prefix(j, "vectorized_elementwise_kernel<") >= 6);
  assert_true(has_short(
      j, "multi_tensor_apply_kernel<" MPROF_NAME_ELIDED
         ", BinaryOpScalarFunctor, multiplies, " MPROF_NAME_ELIDED ">"));
  assert_true(has_short(j, "multi_tensor_apply_kernel<" MPROF_NAME_ELIDED
                           ", BinaryOpScalarFunctor, plus, " MPROF_NAME_ELIDED
                           ">"));
  assert_true(has_short(
      j, "vectorized_elementwise_kernel<" MPROF_NAME_ELIDED
         ", bfloat16_copy_kernel_cuda::lambda, " MPROF_NAME_ELIDED ">"));
  assert_false(
      has_short(j, "multi_tensor_apply_kernel<" MPROF_NAME_ELIDED ">"));
  mprof_join_free(j);
  mprof_trace_free(t);

  /* cuBLAS's names differ in the middle (the tile) and near the end:
   * cut to 40 characters, all three still read differently. */
  j = join_sample(&t, "transformer_forward.mprof");
  const mprof_name_set *set = mprof_join_kernel_names(j);
  assert_int_equal(mprof_name_set_count(set), mprof_join_kernel_count(j));
  char cut[3][128];
  size_t gemms = 0;
  for (size_t i = 0; i < mprof_name_set_count(set); i++) {
    if (strncmp(mprof_name_set_short(set, i), "sm80_xmma_gemm_", 15) != 0)
      continue;
    assert_true(gemms < 3);
    mprof_name_set_fit(set, i, cut[gemms], sizeof cut[gemms], 40);
    char whole[1024];
    mprof_name_middle(whole, sizeof whole, mprof_name_set_short(set, i), 4096);
    assert_string_equal(whole, mprof_name_set_short(set, i));
    for (size_t k = 0; k < gemms; k++)
      assert_string_not_equal(cut[gemms], cut[k]);
    gemms++;
  }
  assert_int_equal(gemms, 3);
  mprof_join_free(j);
  mprof_trace_free(t);
}

/* ---- cut names stay apart ------------------------------------------------ */

typedef struct {
  const char *cut;
  const char *whole;
} cut_pair;

static int by_cut(const void *x, const void *y) {
  return strcmp(((const cut_pair *)x)->cut, ((const cut_pair *)y)->cut);
}

/* Every name of @p set cut to each width of [@p lo, @p hi]: two names
 * whose short names differ never read alike, none is wider than the
 * width. Returns the number of cut names seen. */
static size_t check_cuts_apart(const mprof_name_set *set, const char *what,
                               size_t lo, size_t hi) {
  size_t n = mprof_name_set_count(set), cut = 0;
  cut_pair *pairs = calloc(n ? n : 1, sizeof *pairs);
  char(*bufs)[1024] = calloc(n ? n : 1, sizeof *bufs);
  assert_non_null(pairs);
  assert_non_null(bufs);
  for (size_t width = lo; width <= hi; width++) {
    for (size_t i = 0; i < n; i++) {
      mprof_name_set_fit(set, i, bufs[i], sizeof bufs[i], width);
      size_t chars = 0;
      for (const char *p = bufs[i]; *p; p++)
        chars += ((unsigned char)*p & 0xC0) != 0x80;
      assert_true(chars <= width);
      cut += strcmp(bufs[i], mprof_name_set_short(set, i)) != 0;
      pairs[i] = (cut_pair){bufs[i], mprof_name_set_short(set, i)};
    }
    qsort(pairs, n, sizeof *pairs, by_cut);
    for (size_t i = 1; i < n; i++)
      if (strcmp(pairs[i].cut, pairs[i - 1].cut) == 0 &&
          strcmp(pairs[i].whole, pairs[i - 1].whole) != 0)
        fail_msg("%s at %zu characters: \"%s\" and \"%s\" both read \"%s\"",
                 what, width, pairs[i - 1].whole, pairs[i].whole, pairs[i].cut);
  }
  free(bufs);
  free(pairs);
  return cut;
}

/* A set made by hand: repeats numbered, one full name kept as one. */
static void test_set_edges(void **state) {
  (void)state;
  const char *names[] = {"void ns1::k<int>(int)",
                         "void ns2::k<int>(int)",
                         "void ns1::k<int>(int)",
                         NULL,
                         "void f<Fill<float>, g(int)::{lambda(int)#1}>(int)",
                         "void f<Fill<double>, g(int)::{lambda(int)#1}>(int)"};
  mprof_name_set *set = NULL;
  assert_int_equal(mprof_name_set_build(&set, names, 6), 0);
  assert_string_equal(mprof_name_set_short(set, 0), "k<int>");
  assert_string_equal(mprof_name_set_short(set, 1), "k<int> #2");
  assert_string_equal(mprof_name_set_short(set, 2), "k<int>");
  assert_string_equal(mprof_name_set_short(set, 3), "");
  assert_string_equal(mprof_name_set_short(set, 4),
                      "f<Fill<float>, " MPROF_NAME_ELIDED ">");
  assert_string_equal(mprof_name_set_short(set, 5),
                      "f<Fill<double>, " MPROF_NAME_ELIDED ">");
  assert_string_equal(mprof_name_set_short(set, 6), "");
  assert_string_equal(mprof_name_set_short(NULL, 0), "");
  mprof_name_set_free(set);
  assert_int_equal(mprof_name_set_build(NULL, names, 1), MPROF_EINVAL);
  assert_int_equal(mprof_name_set_build(&set, NULL, 1), MPROF_EINVAL);
  assert_int_equal(mprof_name_set_build(&set, NULL, 0), 0);
  assert_int_equal(mprof_name_set_count(set), 0);
  mprof_name_set_free(set);
  mprof_name_set_free(NULL);

  /* Many kernels of one name told apart by a template argument (a
   * machine-made trace): numbered, quickly, every one its own. */
  enum { MANY = 3000 };
  char **many = calloc(MANY, sizeof *many);
  assert_non_null(many);
  for (int i = 0; i < MANY; i++) {
    many[i] = malloc(96);
    assert_non_null(many[i]);
    snprintf(many[i], 96, "void k<f(int)::{lambda(int)#%d}>(int)", i);
  }
  assert_int_equal(mprof_name_set_build(&set, (const char *const *)many, MANY),
                   0);
  assert_string_equal(mprof_name_set_short(set, 0), "k<" MPROF_NAME_ELIDED ">");
  assert_string_equal(mprof_name_set_short(set, MANY - 1),
                      "k<" MPROF_NAME_ELIDED "> #3000");
  mprof_name_set_free(set);
  for (int i = 0; i < MANY; i++)
    free(many[i]);
  free(many);

  /* A whole name that reads like another's cut keeps its text; the cut
   * one, and the same full name on another GPU, move together. */
  const char *alike[] = {
      "abcdefghijklmnopqrstuvwxyz", "abcdef" MPROF_NAME_ELIDED "vwxyz",
      "abcdefghijklmnopqrstuvwxyz", "abcdefghijklmnopqrstuvwxy"};
  assert_int_equal(mprof_name_set_build(&set, alike, 4), 0);
  check_cuts_apart(set, "alike", MPROF_NAME_FIT_MIN, 30);
  for (size_t width = MPROF_NAME_FIT_MIN; width < 30; width++) {
    char a[64], b[64];
    assert_string_equal(mprof_name_set_fit(set, 0, a, sizeof a, width),
                        mprof_name_set_fit(set, 2, b, sizeof b, width));
  }
  mprof_name_set_free(set);

  /* The middle goes, the ends stay; characters, not bytes. */
  char buf[64];
  assert_string_equal(
      mprof_name_middle(buf, sizeof buf, "transformer_forward.cu:118", 13),
      "transf" MPROF_NAME_ELIDED "cu:118");
  assert_string_equal(
      mprof_name_middle(buf, sizeof buf, "\xc3\xa9t\xc3\xa9", 2),
      "\xc3\xa9" MPROF_NAME_ELIDED);
  assert_string_equal(mprof_name_middle(buf, sizeof buf, "short", 5), "short");
  assert_string_equal(mprof_name_middle(buf, sizeof buf, "short", 0), "");
  assert_string_equal(mprof_name_middle(buf, sizeof buf, NULL, 5), "");
  assert_string_equal(mprof_name_middle(buf, 4, "abcdefghij", 9), "abc");
}

/* The kernels of every sample, cut to 12..80 characters, read apart. */
static void test_samples_cut_apart(void **state) {
  (void)state;
  const char *root = getenv("MPROF_SOURCE_DIR");
  char dir[4096];
  snprintf(dir, sizeof dir, "%s/samples", root ? root : ".");
  DIR *d = opendir(dir);
  if (!d)
    fail_msg("cannot list %s", dir);
  struct dirent *e;
  size_t samples = 0, cut = 0;
  while ((e = readdir(d)) != NULL) {
    size_t len = strlen(e->d_name);
    if (len < 7 || strcmp(e->d_name + len - 6, ".mprof") != 0)
      continue;
    mprof_trace *t = NULL;
    mprof_join *j = join_sample(&t, e->d_name);
    cut += check_cuts_apart(mprof_join_kernel_names(j), e->d_name,
                            MPROF_NAME_FIT_MIN, 80);
    samples++;
    mprof_join_free(j);
    mprof_trace_free(t);
  }
  closedir(d);
  assert_true(samples >= 8);
  assert_true(cut > 100); /* the check saw cut names, not only whole ones */

  /* nvtx_step's two foreach kernels that share both their beginning and
   * their end with each other, not with their neighbours in sorted order:
   * they once both read "multi_te…alarListFunctor, divides>". */
  mprof_trace *t = NULL;
  mprof_join *j = join_sample(&t, "nvtx_step.mprof");
  const mprof_name_set *set = mprof_join_kernel_names(j);
  size_t pointwise = SIZE_MAX, binary = SIZE_MAX;
  for (size_t i = 0; i < mprof_name_set_count(set); i++) {
    const char *s = mprof_name_set_short(set, i);
    if (strncmp(s, "multi_tensor_apply_kernel<", 26) != 0 ||
        !strstr(s, "ScalarListFunctor, divides>"))
      continue;
    if (strstr(s, "PointwiseOpScalarListFunctor"))
      pointwise = i;
    if (strstr(s, "BinaryOpScalarListFunctor"))
      binary = i;
  }
  assert_true(pointwise != SIZE_MAX && binary != SIZE_MAX);
  static const size_t widths[] = {28, 34, 40};
  for (size_t w = 0; w < 3; w++) {
    char a[256], b[256];
    mprof_name_set_fit(set, pointwise, a, sizeof a, widths[w]);
    mprof_name_set_fit(set, binary, b, sizeof b, widths[w]);
    printf("%zu: %s | %s\n", widths[w], a, b);
    assert_string_not_equal(a, b);
    assert_non_null(strstr(a, MPROF_NAME_ELIDED));
    assert_true(strncmp(a, "mu", 2) == 0 && strncmp(b, "mu", 2) == 0);
  }
  mprof_join_free(j);
  mprof_trace_free(t);
}

/* Names built to share their beginning and their end with names that are
 * not their neighbours in sorted order (PyTorch's foreach kernels, every
 * functor with every operation), plus names differing at scattered places
 * in a long common middle. */
static void test_synthetic_cut_apart(void **state) {
  (void)state;
  static const char *ops[] = {"Pointwise", "Binary", "Unary",
                              "Ternary",   "Reduce", "Bin"};
  static const char *lists[] = {"", "List", "Lists"};
  static const char *fns[] = {"divides", "multiplies", "plus",
                              "minus",   "max",        "maximum"};
  enum { OPS = 6, LISTS = 3, FNS = 6, SCATTERED = 200 };
  size_t count = OPS * LISTS * FNS + SCATTERED, n = 0;
  char **names = calloc(count, sizeof *names);
  assert_non_null(names);
  for (size_t o = 0; o < OPS; o++)
    for (size_t l = 0; l < LISTS; l++)
      for (size_t f = 0; f < FNS; f++) {
        names[n] = malloc(256);
        assert_non_null(names[n]);
        snprintf(names[n++], 256,
                 "void at::native::multi_tensor_apply_kernel<TensorListMeta"
                 "data<2>, %sOpScalar%sFunctor<float, 2, 1, 1>, std::%s<"
                 "float> >(T1, T2, T3)",
                 ops[o], lists[l], fns[f]);
      }
  /* A long middle, one or two characters changed at spread-out places. */
  uint32_t seed = 12345;
  for (size_t i = 0; i < SCATTERED; i++) {
    char middle[97];
    memset(middle, 'x', 96);
    middle[96] = '\0';
    for (int k = 0; k < 1 + (int)(i % 2); k++) {
      seed = seed * 1103515245u + 12345u;
      middle[(seed >> 8) % 96] = (char)('a' + (seed >> 20) % 26);
    }
    names[n] = malloc(256);
    assert_non_null(names[n]);
    snprintf(names[n++], 256, "generated_kernel_%s_sm90", middle);
  }
  clock_t start = clock();
  mprof_name_set *set = NULL;
  assert_int_equal(
      mprof_name_set_build(&set, (const char *const *)names, count), 0);
  assert_true(check_cuts_apart(set, "synthetic", MPROF_NAME_FIT_MIN, 80) >
              1000);
  printf("%zu names built and cut to 69 widths in %.3f s\n", count,
         (double)(clock() - start) / CLOCKS_PER_SEC);
  mprof_name_set_free(set);
  for (size_t i = 0; i < count; i++)
    free(names[i]);
  free(names);
}

/* A set's cuts are made on a width's first use: threads that cut the same
 * fresh set at once read what one thread alone reads. */
typedef struct {
  const mprof_name_set *set;
  char (*cuts)[128]; /* per width from 12 to 80, per name */
} cutter;

static void *cut_all(void *arg) {
  cutter *c = (cutter *)arg;
  size_t n = mprof_name_set_count(c->set);
  for (size_t width = MPROF_NAME_FIT_MIN; width <= 80; width++)
    for (size_t i = 0; i < n; i++)
      mprof_name_set_fit(
          c->set, i, c->cuts[(width - MPROF_NAME_FIT_MIN) * n + i], 128, width);
  return NULL;
}

static void test_cut_from_threads(void **state) {
  (void)state;
  mprof_trace *t = NULL;
  mprof_join *j = join_sample(&t, "nvtx_step.mprof");
  size_t n = mprof_join_kernel_count(j), cells = (80 - 12 + 1) * n;
  const char **names = calloc(n, sizeof *names);
  assert_non_null(names);
  for (size_t i = 0; i < n; i++)
    names[i] = mprof_join_kernel(j, i)->name;
  mprof_name_set *alone = NULL, *shared = NULL;
  assert_int_equal(mprof_name_set_build(&alone, names, n), 0);
  assert_int_equal(mprof_name_set_build(&shared, names, n), 0);
  cutter first = {alone, calloc(cells, 128)};
  assert_non_null(first.cuts);
  cut_all(&first);
  enum { THREADS = 4 };
  cutter each[THREADS];
  pthread_t threads[THREADS];
  for (int k = 0; k < THREADS; k++) {
    each[k] = (cutter){shared, calloc(cells, 128)};
    assert_non_null(each[k].cuts);
    assert_int_equal(pthread_create(&threads[k], NULL, cut_all, &each[k]), 0);
  }
  for (int k = 0; k < THREADS; k++) {
    assert_int_equal(pthread_join(threads[k], NULL), 0);
    for (size_t c = 0; c < cells; c++)
      assert_string_equal(each[k].cuts[c], first.cuts[c]);
    free(each[k].cuts);
  }
  free(first.cuts);
  mprof_name_set_free(alone);
  mprof_name_set_free(shared);
  free(names);
  mprof_join_free(j);
  mprof_trace_free(t);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_pytorch),
      cmocka_unit_test(test_cutlass_cub_cublas),
      cmocka_unit_test(test_edges),
      cmocka_unit_test(test_samples),
      cmocka_unit_test(test_unique_in_trace),
      cmocka_unit_test(test_set_edges),
      cmocka_unit_test(test_samples_cut_apart),
      cmocka_unit_test(test_synthetic_cut_apart),
      cmocka_unit_test(test_cut_from_threads),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
