/*
 * mprof — the CUDA tools mprof runs (nvdisasm, cuobjdump), demangling, and
 * the options of the sass module.
 *
 * SPDX-License-Identifier: MIT
 */
#include <dirent.h>
#include <stddef.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/array.h"
#include "base/file.h"
#include "internal.h"
#include "sass_internal.h"

/* libstdc++'s demangler (C-callable; libmprof links -lstdc++ for it). */
extern char *__cxa_demangle(const char *mangled, char *buffer, size_t *length,
                            int *status);

/* Standard output beyond this is refused: a runaway tool, not a cubin. */
#define TOOL_MAX_OUTPUT ((size_t)2 << 30)

MPROF__VERSIONS(sass_options, "sass options",
                MPROF__END_OF(mprof_sass_options, arch),
                MPROF__END_OF(mprof_sass_options, progress_userdata));

void mprof__sass_options_copy(mprof_sass_options *out,
                              const mprof_sass_options *in) {
  mprof_sass_options init = MPROF_SASS_OPTIONS_INIT;
  *out = init;
  memcpy(out, in, mprof__version_size(&sass_options, in->version));
  out->version = MPROF_SASS_OPTIONS_VERSION;
}

int mprof__sass_options_take(mprof_sass_options *out,
                             const mprof_sass_options *in) {
  static const mprof_sass_options defaults = MPROF_SASS_OPTIONS_INIT;
  in = mprof__options_or_defaults(in, &defaults, 1, MPROF_SASS_OPTIONS_VERSION,
                                  "sass");
  if (!in)
    return MPROF_EVERSION;
  mprof__sass_options_copy(out, in);
  return 0;
}

int mprof_sass_options_init(mprof_sass_options *opts, unsigned version) {
  mprof_sass_options init = MPROF_SASS_OPTIONS_INIT;
  return mprof__options_init(opts, &init, version, &sass_options);
}

int mprof_sass_demangle(char **out, const char *mangled) {
  if (!out || !mangled)
    return mprof__error_set(MPROF_EINVAL, "mprof_sass_demangle: NULL");
  *out = NULL;
  int status = 0;
  char *s = __cxa_demangle(mangled, NULL, NULL, &status);
  if (status == 0 && s) {
    *out = s;
    return 0;
  }
  free(s);
  if (status == -1)
    return mprof__error_set(MPROF_ENOMEM, "demangling: out of memory");
  return mprof__error_set(MPROF_ENOTFOUND, "%.200s is not a mangled C++ name",
                          mangled);
}

static int executable_file(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

static int try_dir(char *out, size_t out_size, const char *dir, size_t dir_len,
                   const char *name) {
  if (dir_len == 0) /* an empty PATH entry means the current folder */
    dir = ".", dir_len = 1;
  int n = snprintf(out, out_size, "%.*s/%s", (int)dir_len, dir, name);
  return n > 0 && (size_t)n < out_size && executable_file(out);
}

int mprof_sass_find_tool(char *out, size_t out_size, const char *name) {
  if (!out || !out_size || !name || !*name || strchr(name, '/'))
    return mprof__error_set(MPROF_EINVAL, "mprof_sass_find_tool: bad argument");
  out[0] = '\0';
  char var[64];
  int vn = snprintf(var, sizeof var, "MPROF_");
  for (const char *p = name; *p && vn < (int)sizeof var - 1; p++)
    var[vn++] = (char)(*p >= 'a' && *p <= 'z' ? *p - 'a' + 'A' : *p);
  var[vn] = '\0';
  const char *env = getenv(var);
  if (env && *env) {
    if (strlen(env) < out_size && executable_file(env)) {
      snprintf(out, out_size, "%s", env);
      return 0;
    }
    return mprof__error_set(MPROF_ENOTFOUND,
                            "%s=%s is not an executable file (point it at "
                            "%s, or unset it)",
                            var, env, name);
  }
  const char *path = getenv("PATH");
  while (path && *path) {
    size_t len = strcspn(path, ":");
    if (try_dir(out, out_size, path, len, name))
      return 0;
    path += len;
    if (*path == ':')
      path++;
  }
  const char *cuda = getenv("CUDA_HOME");
  if (cuda && *cuda) {
    char dir[4096];
    int n = snprintf(dir, sizeof dir, "%s/bin", cuda);
    if (n > 0 && (size_t)n < sizeof dir &&
        try_dir(out, out_size, dir, (size_t)n, name))
      return 0;
  }
  if (try_dir(out, out_size, "/usr/local/cuda/bin", 19, name))
    return 0;
  out[0] = '\0';
  return mprof__error_set(MPROF_ENOTFOUND,
                          "%s was not found (looked at $%s, PATH, "
                          "$CUDA_HOME/bin and /usr/local/cuda/bin; install "
                          "the CUDA toolkit or set %s)",
                          name, var, var);
}

int mprof__sass_tool(char *out, size_t out_size, const char *given,
                     const char *name) {
  if (!given)
    return mprof_sass_find_tool(out, out_size, name);
  if (strlen(given) >= out_size || !executable_file(given)) {
    out[0] = '\0';
    return mprof__error_set(MPROF_ENOTFOUND,
                            "%s: %s is not there (not an executable file)",
                            given, name);
  }
  snprintf(out, out_size, "%s", given);
  return 0;
}

void mprof__remove_dir(const char *dir) {
  DIR *d = opendir(dir);
  if (d) {
    struct dirent *e;
    while ((e = readdir(d))) {
      if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
        continue;
      char path[4096];
      int n = snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
      if (n > 0 && (size_t)n < sizeof path)
        unlink(path);
    }
    closedir(d);
  }
  rmdir(dir);
}

/* Append @p n bytes to a growing buffer; -1 past @p limit or without
 * memory. */
static int grow_append(char **buf, size_t *used, size_t *cap, const char *p,
                       size_t n, size_t limit) {
  if (*used + n + 1 > limit || mprof__grow(buf, cap, *used + n + 1, 1))
    return -1;
  memcpy(*buf + *used, p, n);
  *used += n;
  (*buf)[*used] = '\0';
  return 0;
}

int mprof__run_tool(char *const argv[], const char *cwd, char **out,
                    size_t *out_size, char *err, size_t err_size) {
  *out = NULL;
  *out_size = 0;
  if (err_size)
    err[0] = '\0';
  /* pipe2() leaves the descriptors as they were when it fails. */
  int out_pipe[2] = {-1, -1}, err_pipe[2] = {-1, -1};
  const char *failed = "cannot make a pipe";
  pid_t pid = -1;
  if (pipe2(out_pipe, O_CLOEXEC) == 0 && pipe2(err_pipe, O_CLOEXEC) == 0) {
    failed = "cannot start";
    pid = fork();
  }
  if (pid < 0) {
    int e = errno;
    for (int i = 0; i < 2; i++) {
      if (out_pipe[i] >= 0)
        close(out_pipe[i]);
      if (err_pipe[i] >= 0)
        close(err_pipe[i]);
    }
    return mprof__error_set(MPROF_EIO, "%s: %s: %s", argv[0], failed,
                            strerror(e));
  }
  if (pid == 0) {
    /* Only async-signal-safe calls from here to exec. */
    int devnull = open("/dev/null", O_RDONLY);
    if (devnull >= 0)
      dup2(devnull, 0);
    dup2(out_pipe[1], 1);
    dup2(err_pipe[1], 2);
    if (cwd && chdir(cwd) != 0)
      _exit(126);
    execv(argv[0], argv);
    _exit(127);
  }
  close(out_pipe[1]);
  close(err_pipe[1]);
  char *buf = NULL, *ebuf = NULL;
  size_t used = 0, cap = 0, eused = 0, ecap = 0;
  int overflow = 0, oom = 0;
  struct pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
  int open_fds = 2;
  char chunk[65536];
  while (open_fds) {
    if (poll(fds, 2, -1) < 0) {
      if (errno == EINTR)
        continue;
      break;
    }
    for (int i = 0; i < 2; i++) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR)))
        continue;
      ssize_t n = read(fds[i].fd, chunk, sizeof chunk);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0) {
        close(fds[i].fd);
        fds[i].fd = -1;
        open_fds--;
        continue;
      }
      if (i == 0 && !overflow && !oom) {
        if (grow_append(&buf, &used, &cap, chunk, (size_t)n, TOOL_MAX_OUTPUT) !=
            0) {
          if (used + (size_t)n + 1 > TOOL_MAX_OUTPUT)
            overflow = 1;
          else
            oom = 1;
          kill(pid, SIGKILL);
        }
      } else if (i == 1) {
        grow_append(&ebuf, &eused, &ecap, chunk, (size_t)n, 65536);
      }
    }
  }
  for (int i = 0; i < 2; i++)
    if (fds[i].fd >= 0)
      close(fds[i].fd);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
    ;
  if (ebuf && err_size) {
    const char *line = ebuf;
    while (*line == '\n' || *line == ' ')
      line++;
    size_t n = strcspn(line, "\n");
    snprintf(err, err_size, "%.*s", (int)n, line);
  }
  free(ebuf);
  int rc = 0;
  if (oom)
    rc = mprof__error_set(MPROF_ENOMEM, "%s: out of memory reading its output",
                          argv[0]);
  else if (overflow)
    rc = mprof__error_set(MPROF_EIO, "%s: printed more than %zu bytes", argv[0],
                          TOOL_MAX_OUTPUT);
  else if (WIFSIGNALED(status))
    rc = mprof__error_set(MPROF_EIO, "%s was killed by signal %d%s%s", argv[0],
                          WTERMSIG(status), err_size && *err ? ": " : "",
                          err_size ? err : "");
  else if (WIFEXITED(status) && WEXITSTATUS(status) == 127 &&
           !(err_size && *err))
    rc = mprof__error_set(MPROF_EIO, "%s could not be started", argv[0]);
  else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    rc = mprof__error_set(MPROF_EIO, "%s failed (exit status %d)%s%s", argv[0],
                          WIFEXITED(status) ? WEXITSTATUS(status) : -1,
                          err_size && *err ? ": " : "", err_size ? err : "");
  if (rc) {
    free(buf);
    return rc;
  }
  if (!buf) {
    buf = (char *)malloc(1);
    if (!buf)
      return mprof__error_set(MPROF_ENOMEM, "out of memory");
    buf[0] = '\0';
  }
  *out = buf;
  *out_size = used;
  return 0;
}

/* A new file @p path (it must not exist), readable by its owner only,
 * holding @p data; -1 and errno on failure. */
static int write_file(const char *path, const void *data, size_t size) {
  int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  FILE *f = fd < 0 ? NULL : fdopen(fd, "w");
  if (!f) {
    if (fd >= 0)
      close(fd);
    return -1;
  }
  size_t put = size ? fwrite(data, 1, size, f) : 0;
  return fclose(f) == 0 && put == size ? 0 : -1;
}

/* "a,b,c" for nvdisasm -fun; NULL without memory. */
static char *symbol_list(const uint32_t *symbols, size_t count) {
  char *s = (char *)malloc(count * 11 + 1);
  if (!s)
    return NULL;
  size_t at = 0;
  for (size_t i = 0; i < count; i++)
    at += (size_t)sprintf(s + at, i ? ",%u" : "%u", symbols[i]);
  s[at] = '\0';
  return s;
}

/* Write @p data to the scratch file @p name, run @p argv with its path at
 * argv[@p file_arg] and parse the listing nvdisasm prints. @p origin, when
 * not NULL, prefixes the tool's and the parser's errors. */
static int disassemble_file(mprof_sass_listing **out, char **argv,
                            size_t file_arg, const char *name, const void *data,
                            size_t size, const char *origin) {
  char dir[4096];
  int rc = mprof__temp_dir(dir, sizeof dir);
  if (rc)
    return rc;
  char file[4200];
  snprintf(file, sizeof file, "%s/%s", dir, name);
  if (write_file(file, data, size) != 0) {
    int e = errno;
    mprof__remove_dir(dir);
    return mprof__error_set(MPROF_EIO, "%s: cannot write: %s", file,
                            strerror(e));
  }
  argv[file_arg] = file;
  char *text;
  size_t text_size;
  char err[512];
  rc = mprof__run_tool(argv, NULL, &text, &text_size, err, sizeof err);
  mprof__remove_dir(dir);
  if (rc) {
    if (origin)
      mprof__error_prefix("%s", origin);
    return rc;
  }
  rc = mprof_sass_listing_parse(out, text, text_size);
  free(text);
  if (rc && origin)
    mprof__error_prefix("%s: %s", origin, argv[0]);
  return rc;
}

int mprof_sass_disassemble(mprof_sass_listing **out,
                           const mprof_sass_cubin *cubin,
                           const uint32_t *symbols, size_t count,
                           const mprof_sass_options *opts) {
  if (!out || !cubin || (count && !symbols))
    return mprof__error_set(MPROF_EINVAL,
                            "mprof_sass_disassemble: NULL argument");
  *out = NULL;
  mprof_sass_options o;
  int rc = mprof__sass_options_take(&o, opts);
  if (rc)
    return rc;
  char tool[4096];
  if ((rc = mprof__sass_tool(tool, sizeof tool, o.nvdisasm, "nvdisasm")))
    return rc;
  char *funs = count ? symbol_list(symbols, count) : NULL;
  if (count && !funs)
    return mprof__error_set(MPROF_ENOMEM, "out of memory");
  char *argv[8];
  size_t argc = 0;
  argv[argc++] = tool;
  argv[argc++] = (char *)"-c";
  if (mprof__sass_cubin_has_debug_line(cubin))
    argv[argc++] = (char *)"-g";
  if (funs) {
    argv[argc++] = (char *)"-fun";
    argv[argc++] = funs;
  }
  argv[argc + 1] = NULL;
  size_t size;
  const void *data = mprof_sass_cubin_data(cubin, &size);
  rc = disassemble_file(out, argv, argc, "module.cubin", data, size,
                        mprof_sass_cubin_origin(cubin));
  free(funs);
  return rc;
}

int mprof__sass_disassemble_raw(mprof_sass_listing **out, const void *code,
                                size_t size, uint32_t arch,
                                const mprof_sass_options *opts) {
  *out = NULL;
  char tool[4096];
  int rc = mprof__sass_tool(tool, sizeof tool, opts ? opts->nvdisasm : NULL,
                            "nvdisasm");
  if (rc)
    return rc;
  if (!code || !size || !arch)
    return mprof__error_set(MPROF_EINVAL, "no code to disassemble");
  char sm[16];
  snprintf(sm, sizeof sm, "SM%u", arch);
  char *argv[] = {tool, (char *)"-b", sm, NULL, NULL};
  return disassemble_file(out, argv, 3, "code.bin", code, size, NULL);
}
