#!/bin/sh
# Write the man pages mprof.1 and mprof-COMMAND.1 from the help text of the
# built `mprof` itself (`mprof help`, `mprof help COMMAND`), so the pages
# and --help cannot drift apart. Run by the build; also by hand:
#   tools/gen-man.sh build/bin/mprof OUTDIR
# With --viewer, mprof-gtk.1 from the viewer's own (GLib) --help:
#   tools/gen-man.sh --viewer build/bin/mprof-gtk OUTDIR
set -eu
viewer=""
if [ "$1" = --viewer ]; then
  viewer=$2
  shift
fi
mprof=$1
out=$2
mkdir -p "$out"
version=$("$mprof" --version | sed -n 's/^mprof[^ ]* \([^ ]*\).*/\1/p')
date=$(date -u -d "@${SOURCE_DATE_EPOCH:-0}" +%Y-%m-%d 2>/dev/null || echo 1970-01-01)
[ -n "${SOURCE_DATE_EPOCH:-}" ] || date=""

# roff-escape the text on stdin: backslashes, and lines that start with a
# dot or an apostrophe (roff requests).
escape() {
  sed -e 's/\\/\\e/g' -e 's/^\./\\\&./' -e "s/^'/\\\\\\&'/" -e 's/-/\\-/g'
}

# The body of one help text (stdin) as roff: the usage lines as SYNOPSIS,
# the rest as DESCRIPTION. Prose paragraphs are filled; indented lines
# (option lists, examples) are kept as they are.
body() {
  escape | awk '
    BEGIN { section = "synopsis" }
    section == "synopsis" {
      if ($0 ~ /^usage: / || ($0 ~ /^       / && $0 !~ /^$/)) {
        if (!started) { print ".SH SYNOPSIS"; print ".nf"; started = 1 }
        sub(/^usage: /, ""); sub(/^       /, ""); print; next
      }
      if (started) print ".fi"
      print ".SH DESCRIPTION"
      section = "description"
    }
    /^$/ { if (pre) { print ".RE"; print ".fi"; pre = 0 } print ".PP"; next }
    /^  / {
      if (!pre) { print ".nf"; print ".RS 2"; pre = 1 }
      sub(/^  /, ""); print; next
    }
    { if (pre) { print ".RE"; print ".fi"; pre = 0 } print }
    END { if (pre) { print ".RE"; print ".fi" } }
  '
}

header() { # NAME SUMMARY
  printf '.TH %s 1 "%s" "mprof %s" "mprof manual"\n' \
    "$(echo "$1" | tr '[:lower:]' '[:upper:]')" "$date" "$version"
  printf '.SH NAME\n%s \\- %s\n' "$1" "$(echo "$2" | escape)"
}

# mprof-gtk.1: GLib's help is "Usage:", the usage line, the summary, then
# option groups; the page keeps the usage, the summary and the
# application's options.
if [ -n "$viewer" ]; then
  help=$(LC_ALL=C.UTF-8 "$viewer" --help | sed 's/\xe2\x80\xa6/.../g')
  summary=$(echo "$help" | awk 'NR > 2 && NF { print; exit }')
  {
    header mprof-gtk "the mprof viewer (GTK 4)"
    echo ".SH SYNOPSIS"
    echo "$help" | sed -n '2s/^ *//p' | escape
    echo ".SH DESCRIPTION"
    echo "$summary" | escape
    echo ".PP"
    printf '%s\n' '\fBmprof view\fR TRACE (or plain \fBmprof\fR TRACE) starts it.'
    echo ".SH OPTIONS"
    echo ".nf"
    echo "$help" | awk '/^Application Options:/ { on = 1; next } on && !NF { exit } on { sub(/^  /, ""); print }' | escape
    echo ".fi"
    # The keys (the viewer's F1 window lists the same), after "Keys:".
    echo ".SH KEYS"
    echo ".nf"
    echo "$help" | awk '/^Keys:$/ { on = 1; next } on' | escape
    echo ".fi"
    printf '.SH SEE ALSO\n\\fBmprof\\fR(1), \\fBmprof\\-view\\fR(1)\n'
  } >"$out/mprof-gtk.1"
  exit 0
fi

commands=$("$mprof" help | awk '/^Commands:/ { on = 1; next } on && /^  [a-z]/ { print $1 }')

# mprof.1: the overview, then one paragraph per command.
{
  header mprof "a within-kernel timeline profiler for CUDA"
  "$mprof" help | body
  echo ".SH COMMANDS"
  for c in $commands; do
    summary=$("$mprof" help | awk -v c="$c" '$1 == c { $1 = ""; sub(/^ +/, ""); print }')
    printf '.TP\n.B mprof %s\n%s (see \\fBmprof\\-%s\\fR(1))\n' "$c" "$(echo "$summary" | escape)" "$c"
  done
  echo ".SH EXIT STATUS"
  echo "0 success, 1 the operation failed, 2 bad usage or bad input (one line"
  echo "on standard error names the file and the problem), 3 a"
  echo ".B diff"
  echo "gate tripped."
  echo ".SH SEE ALSO"
  sep=""
  for c in $commands; do printf '%s\\fBmprof\\-%s\\fR(1)' "$sep" "$c"; sep=", "; done
  echo
} >"$out/mprof.1"

for c in $commands; do
  summary=$("$mprof" help | awk -v c="$c" '$1 == c { $1 = ""; sub(/^ +/, ""); print }')
  {
    header "mprof-$c" "$summary"
    "$mprof" help "$c" | body
    printf '.SH SEE ALSO\n\\fBmprof\\fR(1)\n'
  } >"$out/mprof-$c.1"
done
