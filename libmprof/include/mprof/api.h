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

/* Ends each struct that may grow at a minor version (docs/ABI.md, "Structs
 * that grow"): new fields go just above it, and such a struct is never
 * embedded by value in another public struct, never indexed in an array by
 * callers, and starts with `unsigned version` wherever it lives in the
 * caller's memory. It is empty, except in the second libmprof the ABI test
 * builds (tests/abi), where each growable struct gains a field as a later
 * minor version would add one. */
#ifdef MPROF_TEST_GROW_STRUCTS
#define MPROF_GROWABLE_TAIL unsigned long long test_appended_;
#else
#define MPROF_GROWABLE_TAIL
#endif

#endif /* MPROF_API_H */
