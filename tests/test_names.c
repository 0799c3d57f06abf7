/*
 * mprof tests — the short form of kernel names (mprof/names.h) on real
 * PyTorch, CUTLASS, CUB and cuBLAS names: manglings as the compilers emit
 * them, demangled by libmprof's demangler, and the kernels of the samples.
 *
 * SPDX-License-Identifier: MIT
 */
#include "test_util.h"

#include <stdlib.h>
#include <string.h>

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

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_pytorch),
      cmocka_unit_test(test_cutlass_cub_cublas),
      cmocka_unit_test(test_edges),
      cmocka_unit_test(test_samples),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
