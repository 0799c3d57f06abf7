/*
 * mprof CLI — finding the producer, CUDA tools and libraries.
 *
 * SPDX-License-Identifier: MIT
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

static int is_file(const char *path) { return access(path, R_OK) == 0; }

static int is_exec(const char *path) { return access(path, X_OK) == 0; }

int cli_self_dir(char *out, size_t size) {
  char self[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0)
    return -1;
  self[n] = '\0';
  char *slash = strrchr(self, '/');
  if (!slash)
    return -1;
  *slash = '\0';
  if (strlen(self) + 1 > size)
    return -1;
  strcpy(out, self);
  return 0;
}

int cli_find_library(char *out, size_t size, const char *name,
                     const char *env_name) {
  const char *env = getenv(env_name);
  if (env && *env) {
    if (!is_file(env))
      return -1;
    snprintf(out, size, "%s", env);
    return 0;
  }
  char dir[PATH_MAX];
  if (cli_self_dir(dir, sizeof dir) != 0)
    return -1;
  /* Build tree (bin/../lib), install trees (bin/../lib/mprof, the lib64
   * and the multiarch one), then beside what `mprof setup` builds under
   * the user's data folder. */
  const char *relative[] = {"../lib", "../lib/mprof", "../lib64/mprof",
                            "../lib/x86_64-linux-gnu/mprof"};
  char path[2 * PATH_MAX];
  for (size_t i = 0; i < sizeof relative / sizeof relative[0]; i++) {
    snprintf(path, sizeof path, "%s/%s/%s", dir, relative[i], name);
    char resolved[PATH_MAX];
    if (is_file(path) && realpath(path, resolved)) {
      snprintf(out, size, "%s", resolved);
      return 0;
    }
  }
  if (cli_setup_path(path, sizeof path) == 0) {
    char *slash = strrchr(path, '/');
    if (slash) {
      snprintf(slash + 1, sizeof path - (size_t)(slash + 1 - path), "%s", name);
      if (is_file(path)) {
        snprintf(out, size, "%s", path);
        return 0;
      }
    }
  }
  return -1;
}

int cli_find_producer(char *out, size_t size) {
  return cli_find_library(out, size, "libmprof-cupti.so", "MPROF_CUPTI_LIB");
}

int cli_setup_path(char *out, size_t size) {
  const char *data = getenv("XDG_DATA_HOME");
  const char *home = getenv("HOME");
  int n;
  if (data && *data)
    n = snprintf(out, size, "%s/mprof/libmprof-cupti.so", data);
  else if (home && *home)
    n = snprintf(out, size, "%s/.local/share/mprof/libmprof-cupti.so", home);
  else
    return -1;
  return n > 0 && (size_t)n < size ? 0 : -1;
}

const char *cli_cuda_home(void) {
  static char found[PATH_MAX];
  const char *env[] = {"CUDA_HOME", "CUDA_PATH"};
  for (size_t i = 0; i < 2; i++) {
    const char *v = getenv(env[i]);
    if (v && *v) {
      snprintf(found, sizeof found, "%s", v);
      return found;
    }
  }
  if (access("/usr/local/cuda", R_OK) == 0)
    return "/usr/local/cuda";
  return NULL;
}

int cli_find_tool(const char *name, const char *env_override, char *out,
                  size_t size) {
  const char *v = env_override ? getenv(env_override) : NULL;
  if (v && *v) {
    if (!is_exec(v))
      return -1;
    snprintf(out, size, "%s", v);
    return 0;
  }
  const char *path = getenv("PATH");
  if (path) {
    const char *p = path;
    while (*p) {
      const char *colon = strchr(p, ':');
      size_t len = colon ? (size_t)(colon - p) : strlen(p);
      char candidate[PATH_MAX];
      if (len && len < sizeof candidate - strlen(name) - 2) {
        snprintf(candidate, sizeof candidate, "%.*s/%s", (int)len, p, name);
        if (is_exec(candidate)) {
          snprintf(out, size, "%s", candidate);
          return 0;
        }
      }
      if (!colon)
        break;
      p = colon + 1;
    }
  }
  const char *cuda = cli_cuda_home();
  const char *roots[] = {cuda, "/usr/local/cuda"};
  for (size_t i = 0; i < 2; i++) {
    if (!roots[i])
      continue;
    char candidate[PATH_MAX];
    snprintf(candidate, sizeof candidate, "%s/bin/%s", roots[i], name);
    if (is_exec(candidate)) {
      snprintf(out, size, "%s", candidate);
      return 0;
    }
  }
  return -1;
}

int cli_find_cupti(char *out, size_t size) {
  const char *cuda = cli_cuda_home();
  const char *sub[] = {"lib64/libcupti.so.13",
                       "lib/libcupti.so.13",
                       "targets/x86_64-linux/lib/libcupti.so.13",
                       "extras/CUPTI/lib64/libcupti.so.13",
                       "lib64/libcupti.so",
                       "lib/libcupti.so",
                       "targets/x86_64-linux/lib/libcupti.so"};
  const char *roots[] = {cuda, "/usr/local/cuda", "/usr/local/cuda-13.0"};
  for (size_t r = 0; r < 3; r++) {
    if (!roots[r])
      continue;
    for (size_t i = 0; i < sizeof sub / sizeof sub[0]; i++) {
      char candidate[PATH_MAX];
      snprintf(candidate, sizeof candidate, "%s/%s", roots[r], sub[i]);
      if (is_file(candidate)) {
        snprintf(out, size, "%s", candidate);
        return 0;
      }
    }
  }
  return -1;
}
