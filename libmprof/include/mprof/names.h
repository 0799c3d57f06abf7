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

/** A set of kernels' short names, unique within the set: owned by whoever
 * built it, freed with mprof_name_set_free(). */
typedef struct mprof_name_set mprof_name_set;

/**
 * Short names for @p count kernel names (@p names[i] demangled or not;
 * NULL reads as ""), unique within the set. Each starts as
 * mprof_name_short()'s; kernels that would share one are told apart by
 * the template arguments that differ among them, each written as its
 * own name without namespaces (`FillFunctor`, a lambda as the function
 * it is in, `bfloat16_copy_kernel_cuda::lambda`), or whole
 * (`FillFunctor<float>`) when its name alone does not tell; arguments
 * that tell nothing become one MPROF_NAME_ELIDED:
 *
 *   multi_tensor_apply_kernel<…, BinaryOpScalarFunctor, multiplies, …>
 *   multi_tensor_apply_kernel<…, BinaryOpScalarFunctor, plus, …>
 *
 * Names that still agree get " #2", " #3"... in order of index. The same
 * full name (one kernel on two GPUs) keeps one short name.
 *
 * Returns 0, or MPROF_EINVAL (NULL @p out, or NULL @p names with a
 * nonzero @p count) or MPROF_ENOMEM.
 */
MPROF_API int mprof_name_set_build(mprof_name_set **out,
                                   const char *const *names, size_t count);

/** Frees @p set; NULL is a no-op. */
MPROF_API void mprof_name_set_free(mprof_name_set *set);

/** The number of names in @p set (0 for NULL). */
MPROF_API size_t mprof_name_set_count(const mprof_name_set *set);

/** Short name @p index of @p set, owned by @p set; "" when out of range. */
MPROF_API const char *mprof_name_set_short(const mprof_name_set *set,
                                           size_t index);

/** The narrowest cut at which a set's names stay told apart (below it, the
 * plain head…tail cut of mprof_name_middle()). */
#define MPROF_NAME_FIT_MIN 12

/** The widest cut that mprof_name_set_fit() checks against the set's
 * other names; wider cuts keep the telling part but are not checked. */
#define MPROF_NAME_FIT_CHECKED 256

/**
 * Short name @p index of @p set in at most @p max_chars characters, into
 * @p buf of @p size bytes: cut in the middle with MPROF_NAME_ELIDED, and
 * never through the part that tells it from the set's other names, which
 * stays visible between the head and the tail: where it first differs
 * from the name sharing most of its beginning, and where it last differs
 * from the one sharing most of its end:
 *
 *   sm80_xmma_gemm_f32f32_f32f32_f32_nn_n_tilesize64x128x8_stage3_...
 *     -> sm80_xmma_g…tilesize64x128x8_st…_5x_cublas
 *
 * From MPROF_NAME_FIT_MIN to MPROF_NAME_FIT_CHECKED characters, two
 * different short names of one set do not cut alike: on the first call
 * for a width, the set cuts all its names to it (in the order of their
 * index) and a name that would read like an earlier one gets another
 * cut, a window around where the two differ with the head and the tail
 * as short as it takes (2 characters), else the first window that reads
 * like no other. Only where no window of that width is left free (hundreds
 * of long names that differ by a character or two, at 12 or 13
 * characters) may two read alike; narrower cuts may too. The same full
 * name (one kernel on two GPUs) cuts one way. Safe to call from several
 * threads on one set. Returns @p buf.
 */
MPROF_API const char *mprof_name_set_fit(const mprof_name_set *set,
                                         size_t index, char *buf, size_t size,
                                         size_t max_chars);

/**
 * @p text in at most @p max_chars characters (UTF-8) into @p buf of
 * @p size bytes: whole when it fits, else its head and its tail with
 * MPROF_NAME_ELIDED between them, so the end of a name, a path or a
 * `file:line` stays. Returns @p buf ("" for a NULL @p text).
 */
MPROF_API const char *mprof_name_middle(char *buf, size_t size,
                                        const char *text, size_t max_chars);

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
