/*
 * mprof — export macro shared by every public header.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef MPROF_API_H
#define MPROF_API_H

/* The build compiles with hidden visibility; only declarations marked
 * MPROF_API are exported from libmprof.so. */
#if defined(_WIN32)
#define MPROF_API
#elif defined(__GNUC__) || defined(__clang__)
#define MPROF_API __attribute__((visibility("default")))
#else
#define MPROF_API
#endif

#endif /* MPROF_API_H */
