/*
 * mprof — kernel names for people: the one shortening of a (demangled)
 * kernel name that the reports, the CLI, the exports and the viewer show.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef MPROF_NAMES_H
#define MPROF_NAMES_H

#include <stddef.h>

#include "api.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The template-argument marker of a shortened name: "…" (UTF-8). */
#define MPROF_NAME_ELIDED "\xe2\x80\xa6"

/** Template arguments longer than this (after their own namespaces are
 * dropped) are elided; shorter ones are kept, since they are often what
 * tells two instantiations apart (`Kernel2<sgemm_256x128>`). */
#define MPROF_NAME_TEMPLATE_KEPT 48

/**
 * The short form of kernel name @p name (demangled or not) in @p buf:
 * the function's own name without its return type, parameter list and
 * enclosing namespaces or classes (`(anonymous namespace)` included);
 * its template arguments kept, with their namespaces dropped, when they
 * are at most MPROF_NAME_TEMPLATE_KEPT bytes and name no lambda (a
 * closure's name, `{lambda(float)#1}`, tells nothing apart), else replaced
 * by "<" MPROF_NAME_ELIDED ">". A name that is not C++ (`sm80_xmma_gemm_...`)
 * is kept whole.
 *
 *   void at::native::(anonymous namespace)::fused_dropout_kernel_vec<
 *     float, float, unsigned int, 1, 4, bool>(at::cuda::detail::TensorInfo<
 *     ...>, ...)  ->  fused_dropout_kernel_vec<float, float, unsigned int,
 *     1, 4, bool>
 *   void cublasLt::splitKreduce_kernel<32, 16, int, float, ...>(...)
 *     ->  splitKreduce_kernel<…>
 *
 * Writes at most @p size bytes, always terminated, cut at a character
 * boundary when @p buf is too small (256 bytes suffice for all but the
 * longest plain names). Returns @p buf; "" for a NULL @p name.
 */
MPROF_API const char *mprof_name_short(char *buf, size_t size,
                                       const char *name);

/**
 * A copy's direction as the viewer and the exports spell it: "HtoD",
 * "DtoH", "DtoD", "HtoH" or "PtoP" for an mprof_copy_kind (mprof/format.h);
 * "" for MPROF_COPY_UNKNOWN or a value this version does not know.
 */
MPROF_API const char *mprof_copy_kind_name(unsigned copy_kind);

#ifdef __cplusplus
}
#endif

#endif /* MPROF_NAMES_H */
