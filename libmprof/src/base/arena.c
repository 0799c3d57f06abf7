/*
 * mprof — an arena: many small allocations freed at once.
 *
 * SPDX-License-Identifier: MIT
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/arena.h"

struct mprof__arena_chunk {
  mprof__arena_chunk *next;
  size_t used, size;
  _Alignas(16) unsigned char data[];
};

void *mprof__arena_alloc(mprof__arena *arena, size_t size) {
  if (arena->failed)
    return NULL;
  size = (size + 15) & ~(size_t)15;
  mprof__arena_chunk *c = arena->head;
  if (!c || c->size - c->used < size) {
    size_t chunk = size > 32768 ? size : 32768;
    c = (mprof__arena_chunk *)malloc(sizeof *c + chunk);
    if (!c) {
      arena->failed = 1;
      return NULL;
    }
    c->next = arena->head;
    c->used = 0;
    c->size = chunk;
    arena->head = c;
  }
  void *p = c->data + c->used;
  c->used += size;
  memset(p, 0, size);
  return p;
}

char *mprof__arena_strdup(mprof__arena *arena, const char *text) {
  if (!text)
    text = "";
  size_t n = strlen(text);
  char *p = (char *)mprof__arena_alloc(arena, n + 1);
  if (p)
    memcpy(p, text, n + 1);
  return p;
}

char *mprof__arena_printf(mprof__arena *arena, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (n < 0)
    return NULL;
  char *p = (char *)mprof__arena_alloc(arena, (size_t)n + 1);
  if (!p)
    return NULL;
  va_start(ap, fmt);
  vsnprintf(p, (size_t)n + 1, fmt, ap);
  va_end(ap);
  return p;
}

void mprof__arena_free(mprof__arena *arena) {
  mprof__arena_chunk *c = arena->head;
  while (c) {
    mprof__arena_chunk *next = c->next;
    free(c);
    c = next;
  }
  arena->head = NULL;
  arena->failed = 0;
}
