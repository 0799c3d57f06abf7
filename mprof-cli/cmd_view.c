/*
 * mprof view — open a trace in the viewer (mprof-gtk, installed next to
 * mprof), or draw one of its views offscreen to PNG/SVG with --render.
 *
 * SPDX-License-Identifier: MIT
 */
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "cli.h"
#include "mprof/mprof.h"

#ifdef MPROF_HAVE_RENDER
#include "mprof-render/render.h"
#endif

typedef struct view_args {
  const char *trace; /* the first argument: names the set */
  cli_trace_set set; /* every trace given: one run */
  int trace_args;
  const char *kernel;
  const char *tab;
  const char *render;
  const char *sidecar;
  const char *range;
  const char *select; /* Trace: a selected range, with what it holds */
  const char *rows;   /* Activity: sm, block, warp */
  const char *depth;  /* Activity: auto, phase, instruction */
  const char *sm_height;
  const char *line; /* Source: [FILE:]N marked and scrolled to */
  const char *hot;  /* Source: the Nth hottest line instead */
  const char *find; /* Source: text searched in the file */
  int demo;         /* --demo-activity: the synthetic SM/block/warp hierarchy */
  int width, height;
} view_args;

static int parse_size(const char *text, int *width, int *height) {
  char *end;
  long w = strtol(text, &end, 10);
  if (end == text || (*end != 'x' && *end != 'X'))
    return -1;
  const char *rest = end + 1;
  long h = strtol(rest, &end, 10);
  if (end == rest || *end || w < 16 || h < 16 || w > 16384 || h > 16384)
    return -1;
  *width = (int)w;
  *height = (int)h;
  return 0;
}

static int parse(int argc, char **argv, view_args *a) {
  memset(a, 0, sizeof *a);
  a->width = 1600;
  a->height = 1000;
  for (int i = 1; i < argc; i++) {
    const char *arg = argv[i];
    const char **slot = NULL;
    if (strcmp(arg, "--kernel") == 0 || strcmp(arg, "-k") == 0)
      slot = &a->kernel;
    else if (strcmp(arg, "--tab") == 0 || strcmp(arg, "-t") == 0)
      slot = &a->tab;
    else if (strcmp(arg, "--render") == 0 || strcmp(arg, "-o") == 0)
      slot = &a->render;
    else if (strcmp(arg, "--sidecar") == 0)
      slot = &a->sidecar;
    else if (strcmp(arg, "--range") == 0)
      slot = &a->range;
    else if (strcmp(arg, "--select") == 0)
      slot = &a->select;
    else if (strcmp(arg, "--rows") == 0)
      slot = &a->rows;
    else if (strcmp(arg, "--depth") == 0)
      slot = &a->depth;
    else if (strcmp(arg, "--sm-height") == 0)
      slot = &a->sm_height;
    else if (strcmp(arg, "--line") == 0)
      slot = &a->line;
    else if (strcmp(arg, "--hot") == 0)
      slot = &a->hot;
    else if (strcmp(arg, "--find") == 0)
      slot = &a->find;
    else if (strcmp(arg, "--demo-activity") == 0) {
      a->demo = 1;
      continue;
    } else if (strcmp(arg, "--size") == 0) {
      if (i + 1 >= argc)
        return cli_usage_error("view", "--size needs WIDTHxHEIGHT");
      if (parse_size(argv[++i], &a->width, &a->height))
        return cli_usage_error(
            "view", "--size '%s' is not WIDTHxHEIGHT (16..16384)", argv[i]);
      continue;
    } else if (arg[0] == '-' && arg[1]) {
      return cli_usage_error("view", "unknown option '%s'", arg);
    } else {
      /* Several traces, a directory or a quoted glob: one run. */
      int status = cli_trace_set_resolve(&a->set, "view", arg);
      if (status)
        return status;
      if (!a->trace)
        a->trace = arg;
      a->trace_args++;
      continue;
    }
    if (i + 1 >= argc)
      return cli_usage_error("view", "%s needs a value", arg);
    *slot = argv[++i];
  }
  if (!a->trace && !a->demo)
    return cli_usage_error("view", "no trace given");
  if (a->trace && a->demo)
    return cli_usage_error("view", "--demo-activity takes no trace");
  if (!a->render && (a->line || a->hot || a->find))
    return cli_usage_error("view",
                           "--line, --hot and --find go with "
                           "--render (in the viewer: n, N and Ctrl+F on the "
                           "Source tab)");
  if (a->render) {
    size_t n = strlen(a->render);
    if (n < 5 || (strcmp(a->render + n - 4, ".png") != 0 &&
                  strcmp(a->render + n - 4, ".svg") != 0))
      return cli_usage_error("view",
                             "--render '%s': the file name must end in .png "
                             "or .svg",
                             a->render);
  }
  return 0;
}

#ifdef MPROF_HAVE_RENDER
/* "1.5ms" -> 1500000 ns; units ns, us, ms (the default) and s. -1 when it
 * is not a time, -2 when it is not finite or beyond CLI_MAX_TIME_NS. */
static int parse_time(const char *text, const char *end, double *ns) {
  char *stop;
  double v = strtod(text, &stop);
  if (stop == text)
    return -1;
  size_t unit = (size_t)(end - stop);
  double scale = 1e6;
  if (unit == 0)
    scale = 1e6;
  else if (unit == 2 && strncmp(stop, "ns", 2) == 0)
    scale = 1;
  else if ((unit == 2 && strncmp(stop, "us", 2) == 0) ||
           (unit == 3 && strncmp(stop, "\u00b5s", 3) == 0))
    scale = 1e3;
  else if (unit == 2 && strncmp(stop, "ms", 2) == 0)
    scale = 1e6;
  else if (unit == 1 && *stop == 's')
    scale = 1e9;
  else
    return -1;
  *ns = v * scale;
  /* NaN fails both comparisons. */
  return *ns >= -CLI_MAX_TIME_NS && *ns <= CLI_MAX_TIME_NS ? 0 : -2;
}

/* --range FROM:TO, times after the start of the trace's GPU activity: 0,
 * -1 when it is not FROM:TO, -2 when a time is out of range. */
static int parse_range(const char *text, double *from, double *to) {
  const char *colon = strchr(text, ':');
  if (!colon)
    return -1;
  int a = parse_time(text, colon, from);
  int b = parse_time(colon + 1, colon + 1 + strlen(colon + 1), to);
  if (a == -1 || b == -1)
    return -1;
  if (a || b)
    return -2;
  return *to <= *from ? -1 : 0;
}

/* The one line for a bad --range or --select; returns 2. */
static int range_error(const char *option, const char *text, int why) {
  if (why == -2)
    return cli_usage_error("view",
                           "%s '%s': a time is beyond 2^62 ns (about 146 "
                           "years) or not a number",
                           option, text);
  return cli_usage_error("view", "%s '%s' is not FROM:TO (e.g. 1.5ms:2ms)",
                         option, text);
}

static int render_file(const view_args *a);

/* An unsigned decimal of digits only, 1..UINT32_MAX; 0 when it is not. */
static uint32_t parse_count(const char *text) {
  if (!*text || strlen(text) > 10 || strspn(text, "0123456789") != strlen(text))
    return 0;
  unsigned long long v = strtoull(text, NULL, 10);
  return v <= UINT32_MAX ? (uint32_t)v : 0;
}

/* The Source tab's --line, --hot and --find: the line marked and scrolled
 * to, the search marked. 0, or 2 after one line naming what is wrong. */
static int source_place(const view_args *a, const mprof_render_model *model,
                        mprof_render_view *view) {
  const char *trace = a->trace ? a->trace : "the demo";
  const mprof_render_kernel *k =
      view->kernel >= 0 ? mprof_render_kernel_at(model, (size_t)view->kernel)
                        : NULL;
  const char *name = k ? k->short_name : "no kernel";
  size_t files = mprof_render_source_file_count(model, view->kernel);
  if ((a->line || a->find) && !files)
    return cli_usage_error("view",
                           "%s: %s has no source lines (no line table: built "
                           "without nvcc -lineinfo, or a library kernel)",
                           trace, name);
  if (a->hot) {
    uint32_t rank = parse_count(a->hot);
    size_t hot = mprof_render_source_hot_count(model, view->kernel);
    if (!rank)
      return cli_usage_error("view",
                             "--hot '%s' is not a rank (1: the "
                             "hottest line)",
                             a->hot);
    if (rank > hot)
      return cli_usage_error("view", "--hot %u: %s has %zu sampled %s%s", rank,
                             name, hot, files ? "line" : "instruction",
                             hot == 1 ? "" : "s");
    for (uint32_t r = 1; r < rank; r++)
      mprof_render_view_source_hot(view, model, 1);
  }
  if (a->line) {
    const char *colon = strrchr(a->line, ':');
    int32_t file = view->source_file;
    uint32_t line = parse_count(colon ? colon + 1 : a->line);
    if (!line)
      return cli_usage_error("view",
                             "--line '%s' is not [FILE:]N (e.g. "
                             "kernel.cu:42)",
                             a->line);
    if (colon) {
      char path[4096];
      snprintf(path, sizeof path, "%.*s", (int)(colon - a->line), a->line);
      file = mprof_render_source_file_find(model, view->kernel, path);
      if (!file) {
        char list[1024];
        size_t at = 0;
        list[0] = '\0';
        for (size_t f = 0; f < files && at < sizeof list - 256; f++)
          at += (size_t)snprintf(
              list + at, sizeof list - at, "%s%s", f ? ", " : "",
              mprof_render_source_file_at(model, view->kernel, f, NULL));
        return cli_usage_error("view",
                               "--line '%s': %s has no file '%s' "
                               "(its files: %s)",
                               a->line, name, path, list);
      }
    }
    if (mprof_render_view_source_line(view, model, file, line))
      return cli_usage_error("view",
                             "--line '%s': the file has no line %u "
                             "in the Source tab of %s",
                             a->line, line, name);
  }
  if (a->find)
    mprof_render_view_source_find(view, model, a->find, 0);
  if (!a->line && !a->hot && !a->find)
    return 0; /* as the viewer opens it */
  view->scroll_y = 0;
  mprof_render_view_source_scroll(view, model, a->height);
  return 0;
}

/* Draw, then let go of the font caches (a clean exit for leak checkers). */
static int render(const view_args *a) {
  int rc = render_file(a);
  mprof_render_shutdown();
  return rc;
}

static int render_file(const view_args *a) {
  int tab = a->demo ? MPROF_RENDER_ACTIVITY : MPROF_RENDER_SUMMARY;
  if (a->tab && (tab = mprof_render_tab_parse(a->tab)) < 0)
    return cli_usage_error(
        "view",
        "unknown tab '%s' (trace, summary, hotspots, "
        "flame, raster, mega, density, activity, source, ranks)",
        a->tab);
  if ((a->line || a->hot || a->find) && tab != MPROF_RENDER_SOURCE)
    return cli_usage_error("view", "--line, --hot and --find are for --tab "
                                   "source");
  int rows = 0, depth = 0;
  if (a->rows && (rows = mprof_render_activity_rows_parse(a->rows)) < 0)
    return cli_usage_error("view", "--rows '%s' is not sm, block or warp",
                           a->rows);
  if (a->depth && (depth = mprof_render_activity_depth_parse(a->depth)) < 0)
    return cli_usage_error(
        "view", "--depth '%s' is not auto, phase or instruction", a->depth);
  double sm_height = 0;
  if (a->sm_height) {
    char *end;
    sm_height = strtod(a->sm_height, &end);
    if (end == a->sm_height || *end || !(sm_height >= 1 && sm_height <= 2000))
      return cli_usage_error("view", "--sm-height '%s' is not 1..2000 (px)",
                             a->sm_height);
  }
  mprof_render_model *model;
  char name[4096];
  if (a->set.count > 1 && a->trace_args == 1)
    snprintf(name, sizeof name, "%s (%zu traces)", a->trace, a->set.count);
  else if (a->set.count > 1)
    snprintf(name, sizeof name, "%s + %zu more", a->set.paths[0],
             a->set.count - 1);
  if (a->demo ? mprof_render_model_open_demo(&model)
              : mprof_render_model_open_set(
                    &model, (const char *const *)a->set.paths, a->set.count,
                    a->set.count > 1 ? name : NULL, a->sidecar)) {
    fprintf(stderr, "mprof: %s\n", mprof_render_error());
    return CLI_EXIT_USAGE;
  }
  if (!a->tab && !a->demo)
    tab = mprof_render_model_first_tab(model); /* a .mkprof: Mega */
  if (tab == MPROF_RENDER_RANKS && !mprof_render_rank_count(model)) {
    fprintf(stderr, "mprof view: %s\n", mprof_render_error());
    mprof_render_model_free(model);
    return CLI_EXIT_FAILED;
  }
  mprof_render_view view;
  mprof_render_view_init(&view, model);
  view.activity_rows = rows;
  view.activity_depth = depth;
  view.sm_height = sm_height;
  view.activity_height = sm_height;
  int span_tab = mprof_render_tab_is_span(tab);
  if (a->kernel) {
    int k = mprof_render_kernel_find(model, a->kernel);
    if (k < 0) {
      fprintf(stderr, "mprof view: %s: no kernel matches '%s'\n",
              a->demo ? "the demo" : a->trace, a->kernel);
      mprof_render_model_free(model);
      return CLI_EXIT_USAGE;
    }
    view.kernel = k;
  }
  if (span_tab)
    mprof_render_view_open_span_tab(&view, model, a->kernel != NULL);
  if (tab == MPROF_RENDER_SOURCE) {
    mprof_render_view_open_source_tab(&view, model, a->height);
    int rc = source_place(a, model, &view);
    if (rc) {
      mprof_render_model_free(model);
      return rc;
    }
  }
  if (a->range) {
    double from, to;
    int why = parse_range(a->range, &from, &to);
    if (why) {
      mprof_render_model_free(model);
      return range_error("--range", a->range, why);
    }
    /* After the trace's start; for the span views after the kernel's
     * first span, the zero of their axis. */
    int64_t start, end;
    mprof_render_model_bounds(model, &start, &end);
    if (span_tab)
      start = mprof_render_span_origin(model, &view);
    mprof_render_limits limits;
    mprof_render_model_limits(model, &limits);
    view.start_ns = start + (int64_t)from;
    view.end_ns = start + (int64_t)to;
    mprof_render_view_clamp(&view, &limits);
  }
  if (a->select) {
    double from, to;
    int why = parse_range(a->select, &from, &to);
    if (why) {
      mprof_render_model_free(model);
      return range_error("--select", a->select, why);
    }
    int64_t start, end;
    mprof_render_model_bounds(model, &start, &end);
    view.sel_start_ns = start + (int64_t)from;
    view.sel_end_ns = start + (int64_t)to;
  }
  int rc =
      mprof_render_write(model, &view, tab, a->width, a->height, a->render);
  if (rc) {
    fprintf(stderr, "mprof view: %s\n", mprof_render_error());
    mprof_render_model_free(model);
    return CLI_EXIT_FAILED;
  }
  /* Trace and Ranks show no one kernel. */
  const mprof_render_kernel *k =
      view.kernel >= 0 && tab != MPROF_RENDER_RANKS
          ? mprof_render_kernel_at(model, (size_t)view.kernel)
          : NULL;
  printf("wrote %s: %s, %dx%d%s%s%s\n", a->render, mprof_render_tab_title(tab),
         a->width, a->height, k && tab != MPROF_RENDER_TRACE ? ", kernel " : "",
         k && tab != MPROF_RENDER_TRACE ? k->name : "",
         !span_tab                           ? ""
         : mprof_render_model_is_demo(model) ? " (synthetic demo)"
         : mprof_render_kernel_span_count(model, view.kernel) ? " (measured)"
                                                              : " (projected)");
  mprof_render_model_free(model);
  return CLI_EXIT_OK;
}
#endif

/* mprof-gtk next to this mprof: the build tree's bin/ or the installed
 * bindir. */
static int find_viewer(char *out, size_t size) {
  const char *env = getenv("MPROF_GTK");
  if (env && *env) {
    snprintf(out, size, "%s", env);
    return access(out, X_OK) == 0 ? 0 : -1;
  }
  char dir[PATH_MAX];
  if (cli_self_dir(dir, sizeof dir) != 0)
    return -1;
  int n = snprintf(out, size, "%s/mprof-gtk", dir);
  return n > 0 && (size_t)n < size && access(out, X_OK) == 0 ? 0 : -1;
}

static int view(view_args *a);

int cmd_view(int argc, char **argv) {
  view_args a;
  int rc = parse(argc, argv, &a);
  if (!rc)
    rc = view(&a);
  cli_trace_set_free(&a.set);
  return rc;
}

static int view(view_args *ap) {
  view_args a = *ap;
  if (a.tab && strcasecmp(a.tab, "ranks") == 0 && (a.demo || a.set.count < 2))
    return cli_usage_error("view", "--tab ranks compares ranks: give one "
                                   "trace per rank (a run's directory, "
                                   "several files or a quoted glob)");
  if (a.render) {
#ifdef MPROF_HAVE_RENDER
    return render(&a);
#else
    fprintf(stderr, "mprof view: --render is unavailable in this build (it "
                    "was built without Cairo: install libcairo2-dev and "
                    "rebuild)\n");
    return CLI_EXIT_FAILED;
#endif
  }
  const char *x11 = getenv("DISPLAY"), *wayland = getenv("WAYLAND_DISPLAY");
  if (!(x11 && *x11) && !(wayland && *wayland)) {
    fprintf(stderr,
            "mprof view: no display (DISPLAY and WAYLAND_DISPLAY are unset); "
            "draw offscreen with 'mprof view %s --render OUT.png'\n",
            a.trace ? a.trace : "--demo-activity");
    return CLI_EXIT_USAGE;
  }
  char viewer[PATH_MAX + 32];
  if (find_viewer(viewer, sizeof viewer)) {
    fprintf(stderr,
            "mprof view: the viewer (mprof-gtk) is not installed next to "
            "mprof; this build has no GTK 4 viewer (try --render OUT.png)\n");
    return CLI_EXIT_FAILED;
  }
  char **args = (char **)calloc(20 + a.set.count, sizeof *args);
  if (!args) {
    fprintf(stderr, "mprof view: out of memory\n");
    return CLI_EXIT_FAILED;
  }
  int n = 0;
  args[n++] = viewer;
  if (a.demo)
    args[n++] = "--demo-activity";
  if (a.rows) {
    args[n++] = "--rows";
    args[n++] = (char *)a.rows;
  }
  if (a.depth) {
    args[n++] = "--depth";
    args[n++] = (char *)a.depth;
  }
  if (a.kernel) {
    args[n++] = "--kernel";
    args[n++] = (char *)a.kernel;
  }
  if (a.tab) {
    args[n++] = "--tab";
    args[n++] = (char *)a.tab;
  }
  if (a.sidecar) {
    args[n++] = "--sidecar";
    args[n++] = (char *)a.sidecar;
  }
  if (a.set.count) {
    args[n++] = "--";
    for (size_t i = 0; i < a.set.count; i++)
      args[n++] = a.set.paths[i];
  }
  args[n] = NULL;
  execv(viewer, args);
  perror("mprof view: cannot start mprof-gtk");
  free(args);
  return CLI_EXIT_FAILED;
}
