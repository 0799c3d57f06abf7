/*
 * mprof — parsing the text nvdisasm prints.
 *
 * The layout followed is nvdisasm's documented text form (CUDA Binary
 * Utilities, "nvdisasm") as `nvdisasm -c -g FILE.cubin` prints it; the
 * lines below show it (as // lines, since the offsets are C comments):
 *
 * The text is copied once and cut in place: every string the listing hands
 * out points into that copy. The parser is tested with small inline strings
 * in tests/test_sass.c; output of the real tool is exercised by tests/gpu on
 * the GPU machine, which has nvdisasm.
 *
 * SPDX-License-Identifier: MIT
 */
// //--------------------- .text._Z4memkPfPKfS1_i --------------------------
//         .section        .text._Z4memkPfPKfS1_i,"ax",@progbits
// _Z4memkPfPKfS1_i:
// .text._Z4memkPfPKfS1_i:
//         //## File "/tmp/p.cu", line 2
//         /*0000*/                   LDC R1, c[0x0][0x28] ;
//         /*0070*/               @P0 EXIT ;
//
// An instruction line may end with its encoding in a comment (-hex); with
// -gi a block of //## lines gives the inline stack, innermost first. Data
// sections (without -c) carry offsets too; their lines are skipped.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/array.h"
#include "internal.h"
#include "sass_internal.h"

typedef struct listing_fn {
  mprof_sass_listing_function pub;
  mprof_sass_instruction *insns;
  size_t capacity;
} listing_fn;

struct mprof_sass_listing {
  char *text;
  listing_fn *fns;
  size_t count;
  size_t capacity;
};

static int is_blank(char c) { return c == ' ' || c == '\t' || c == '\r'; }

static char *skip_blank(char *s) {
  while (is_blank(*s))
    s++;
  return s;
}

static int hex_value(char c) {
  if (c >= '0' && c <= '9')
    return c - '0';
  if (c >= 'a' && c <= 'f')
    return c - 'a' + 10;
  if (c >= 'A' && c <= 'F')
    return c - 'A' + 10;
  return -1;
}

static int bad_line(size_t line, const char *what, const char *text) {
  return mprof__error_set(MPROF_EFORMAT,
                          "nvdisasm output line %zu: %s: \"%.80s\" (the "
                          "disassembler printed something mprof does not "
                          "know; please report it with the nvdisasm version)",
                          line, what, text);
}

/* Start (or go back to) the function named @p name; NULL on no memory. */
static listing_fn *begin_function(mprof_sass_listing *l, const char *name) {
  for (size_t i = 0; i < l->count; i++)
    if (strcmp(l->fns[i].pub.name, name) == 0)
      return &l->fns[i];
  if (MPROF__GROW(l->fns, l->capacity, l->count + 1))
    return NULL;
  listing_fn *f = &l->fns[l->count++];
  memset(f, 0, sizeof *f);
  f->pub.name = name;
  return f;
}

/* "NAME" from ".text.NAME" followed by one of @p stops (cut in place). */
static char *text_name(char *s, const char *stops) {
  if (strncmp(s, ".text.", 6) != 0)
    return NULL;
  s += 6;
  size_t n = strcspn(s, stops);
  if (n == 0)
    return NULL;
  s[n] = '\0';
  return s;
}

/* A function header: "//---- .text.NAME ----", ".section .text.NAME,..." or
 * the label ".text.NAME:". Returns the name (cut in place) or NULL; sets
 * *other for the header of a section that is not code. */
static char *header_name(char *s, int *other) {
  *other = 0;
  if (strncmp(s, "//-", 3) == 0) {
    char *t = strstr(s, ".text.");
    /* "//---- .nv.info ----", "//---- SYMBOLS ----": the code ends */
    *other = !t && s[strspn(s, "/- \t\r")] != '\0';
    return t ? text_name(t, " \t\r") : NULL;
  }
  if (strncmp(s, ".section", 8) == 0 && is_blank(s[8])) {
    char *name = text_name(skip_blank(s + 8), ", \t\r");
    *other = !name;
    return name;
  }
  if (strncmp(s, ".text.", 6) == 0) {
    size_t n = strlen(s);
    while (n && is_blank(s[n - 1]))
      n--;
    if (n > 7 && s[n - 1] == ':') {
      s[n - 1] = '\0';
      return text_name(s, " \t\r");
    }
  }
  return NULL;
}

/* `//## File "F", line N` (anything after N, such as "inlined at", is
 * ignored). Returns 0 and cuts the file name in place, or -1. */
static int parse_line_comment(char *s, const char **file, uint32_t *line) {
  s = skip_blank(s + 4);
  if (strncmp(s, "File", 4) != 0)
    return -1;
  s = skip_blank(s + 4);
  if (*s != '"')
    return -1;
  char *name = ++s;
  char *close = strchr(name, '"');
  if (!close)
    return -1;
  *close = '\0';
  s = skip_blank(close + 1);
  if (*s != ',')
    return -1;
  s = skip_blank(s + 1);
  if (strncmp(s, "line", 4) != 0)
    return -1;
  s = skip_blank(s + 4);
  if (*s < '0' || *s > '9')
    return -1;
  uint64_t v = 0;
  while (*s >= '0' && *s <= '9' && v <= UINT32_MAX)
    v = v * 10 + (uint64_t)(*s++ - '0');
  if (v > UINT32_MAX)
    return -1;
  *file = name;
  *line = (uint32_t)v;
  return 0;
}

static int add_instruction(listing_fn *f, const mprof_sass_instruction *in) {
  if (MPROF__GROW(f->insns, f->capacity, f->pub.instruction_count + 1))
    return -1;
  f->insns[f->pub.instruction_count++] = *in;
  f->pub.instructions = f->insns;
  return 0;
}

/* The instruction after the offset comment at @p s ("/" "*0040*" "/ ..."):
 * 1 when @p s is one, 0 when it is another comment, <0 on error. */
static int parse_instruction(char *s, size_t lineno,
                             mprof_sass_instruction *in) {
  char *p = s + 2;
  uint64_t offset = 0;
  size_t digits = 0;
  for (int v; (v = hex_value(*p)) >= 0; p++, digits++)
    if (digits < 16)
      offset = offset << 4 | (uint64_t)v;
  if (digits == 0 || p[0] != '*' || p[1] != '/')
    return 0; /* "/" "* 0x000fc8... *" "/": an encoding, or prose */
  if (digits > 8 || offset > UINT32_MAX)
    return bad_line(lineno, "the offset does not fit in 32 bits", s);
  p = skip_blank(p + 2);
  if (*p == '{') /* dual-issue pairs of old architectures */
    p = skip_blank(p + 1);
  in->offset = (uint32_t)offset;
  in->predicate = "";
  if (*p == '@') {
    char *pred = p;
    while (*p && !is_blank(*p) && *p != ';')
      p++;
    if (!is_blank(*p))
      return bad_line(lineno, "a predicate without an instruction", s);
    *p++ = '\0';
    in->predicate = pred;
    p = skip_blank(p);
  }
  char *opcode = p;
  while (*p && !is_blank(*p) && *p != ';')
    p++;
  if (p == opcode)
    return bad_line(lineno, "no opcode after the offset", s);
  char stop = *p;
  *p = '\0';
  in->opcode = opcode;
  in->operands = "";
  if (stop == ';' || stop == '\0')
    return 1;
  char *ops = skip_blank(p + 1);
  char *end = strchr(ops, ';');
  if (!end) /* no terminator: up to a trailing comment or the end */
    end = strstr(ops, "/*");
  if (!end)
    end = ops + strlen(ops);
  while (end > ops && is_blank(end[-1]))
    end--;
  *end = '\0';
  in->operands = ops;
  return 1;
}

int mprof_sass_listing_parse(mprof_sass_listing **out, const char *text,
                             size_t size) {
  if (!out || (!text && size))
    return mprof__error_set(MPROF_EINVAL,
                            "mprof_sass_listing_parse: NULL argument");
  *out = NULL;
  mprof_sass_listing *l = (mprof_sass_listing *)calloc(1, sizeof *l);
  if (!l || !(l->text = (char *)malloc(size + 1))) {
    free(l);
    return mprof__error_set(MPROF_ENOMEM, "nvdisasm output: out of memory");
  }
  if (size)
    memcpy(l->text, text, size);
  l->text[size] = '\0';
  listing_fn *cur = NULL;
  int skipping = 0; /* inside a section that is not code */
  const char *file = "";
  uint32_t line = 0;
  int in_block = 0; /* the previous line was a //## comment */
  size_t lineno = 0;
  int rc = 0;
  char *next = l->text;
  char *const end = l->text + size;
  while (next < end && !rc) {
    char *s = next;
    char *nl = memchr(s, '\n', (size_t)(end - s));
    if (nl) {
      *nl = '\0';
      next = nl + 1;
    } else {
      next = end;
    }
    lineno++;
    if (memchr(s, '\0', (size_t)((nl ? nl : end) - s))) {
      rc = bad_line(lineno, "a NUL byte", "");
      break;
    }
    s = skip_blank(s);
    if (strncmp(s, "//##", 4) == 0) {
      const char *f;
      uint32_t n;
      if (!in_block && parse_line_comment(s, &f, &n) == 0) {
        file = f;
        line = n;
      }
      in_block = 1;
      continue;
    }
    in_block = 0;
    int other;
    char *name = header_name(s, &other);
    if (other) {
      cur = NULL;
      skipping = 1;
      continue;
    }
    if (name) {
      skipping = 0;
      if (!cur || strcmp(cur->pub.name, name) != 0) {
        cur = begin_function(l, name);
        file = "";
        line = 0;
      }
      if (!cur)
        rc = mprof__error_set(MPROF_ENOMEM, "nvdisasm output: out of memory");
      continue;
    }
    if (skipping || strncmp(s, "/*", 2) != 0)
      continue; /* directives, labels, braces, blank lines, data */
    mprof_sass_instruction in;
    memset(&in, 0, sizeof in);
    int got = parse_instruction(s, lineno, &in);
    if (got < 0) {
      rc = got;
      break;
    }
    if (!got || in.opcode[0] == '.')
      continue; /* a comment, or data such as ".byte 0x04" */
    in.file = line ? file : "";
    in.line = line;
    if (!cur && !(cur = begin_function(l, ""))) {
      rc = mprof__error_set(MPROF_ENOMEM, "nvdisasm output: out of memory");
      break;
    }
    size_t n = cur->pub.instruction_count;
    if (n && in.offset <= cur->insns[n - 1].offset) {
      rc = mprof__error_set(MPROF_EFORMAT,
                            "nvdisasm output line %zu: offset 0x%x does not "
                            "follow 0x%x (offsets must ascend within a "
                            "function)",
                            lineno, in.offset, cur->insns[n - 1].offset);
      break;
    }
    if (add_instruction(cur, &in) != 0)
      rc = mprof__error_set(MPROF_ENOMEM, "nvdisasm output: out of memory");
  }
  if (rc) {
    mprof_sass_listing_free(l);
    return rc;
  }
  *out = l;
  return 0;
}

void mprof_sass_listing_free(mprof_sass_listing *listing) {
  if (!listing)
    return;
  for (size_t i = 0; i < listing->count; i++)
    free(listing->fns[i].insns);
  free(listing->fns);
  free(listing->text);
  free(listing);
}

size_t mprof_sass_listing_function_count(const mprof_sass_listing *listing) {
  return listing ? listing->count : 0;
}

const mprof_sass_listing_function *
mprof_sass_listing_function_at(const mprof_sass_listing *listing,
                               size_t index) {
  if (!listing || index >= listing->count)
    return NULL;
  return &listing->fns[index].pub;
}

const mprof_sass_listing_function *
mprof_sass_listing_find(const mprof_sass_listing *listing, const char *name) {
  if (!listing || !name)
    return NULL;
  for (size_t i = 0; i < listing->count; i++)
    if (strcmp(listing->fns[i].pub.name, name) == 0)
      return &listing->fns[i].pub;
  return NULL;
}
