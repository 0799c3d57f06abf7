#!/bin/sh
# The man pages and shell completion the build generated from mprof's help
# (tools/gen-man.sh, tools/gen-completion.sh), and the desktop files in
# data/: every command has a page that shows its --help text, completion
# knows every command and option, the desktop entry and the MIME entry are
# valid.
# Usage: test_docs.sh MPROF GENERATED_DIR SOURCE_DIR TMPDIR
mprof=$1
gen=$2
src=$3
tmp=${4:-/tmp}/docs.$$
. "$(dirname "$0")/common.sh"

need groff groff-base
need col bsdextrautils
need zsh zsh
need desktop-file-validate desktop-file-utils
need update-mime-database shared-mime-info

commands=$("$mprof" help | awk '/^Commands:/ { on = 1; next } on && /^  [a-z]/ { print $1 }')
[ -n "$commands" ] || fail "no commands in 'mprof help'"
[ -f "$gen/man1/mprof.1" ] || fail "no mprof.1"
for c in $commands; do
  page=$gen/man1/mprof-$c.1
  [ -f "$page" ] || { fail "no man page for $c"; continue; }
  grep -q "^\.TH MPROF-$(echo "$c" | tr '[:lower:]' '[:upper:]') 1" "$page" || fail "$page: no .TH"
  # Every option --help names shows in the rendered page.
  groff -man -Tutf8 -ww "$page" 2>"$tmp/warn" >"$tmp/page.raw" || fail "groff $page exited $?"
  col -b <"$tmp/page.raw" >"$tmp/page" || fail "col -b on $page exited $?"
  [ -s "$tmp/warn" ] && fail "groff warns on $page: $(cat "$tmp/warn")"
  for opt in $("$mprof" help "$c" | grep -o -- ' --[a-z][a-z-]*' | sort -u); do
    grep -q -- "$opt" "$tmp/page" || fail "man page of $c lacks $opt"
  done
  grep -q "^    $c) opts=" "$gen/completion/mprof.bash" || fail "bash completion lacks $c"
  grep -q "^    '$c:" "$gen/completion/_mprof" || fail "zsh completion lacks $c"
done
# The viewer's page (built with GTK): its options, and the keys its F1
# window lists, search, zoom to selection and Esc among them.
page=$gen/viewer-man/mprof-gtk.1
if [ -f "$page" ]; then
  groff -man -Tutf8 -ww "$page" 2>"$tmp/warn" >"$tmp/page.raw" || fail "groff $page exited $?"
  col -bx <"$tmp/page.raw" >"$tmp/page"
  [ -s "$tmp/warn" ] && fail "groff warns on $page: $(cat "$tmp/warn")"
  grep -q "^KEYS" "$tmp/page" || fail "mprof-gtk.1 has no KEYS section"
  for key in "Ctrl+F  *find: kernel and NVTX range names on the Trace" "F1, ?  *this list of keys" \
    "F, Enter  *zoom to the selected range" "Esc  *clear the selected range" \
    "Enter, Ctrl+G  *in the search: the next match" "--tab=TAB"; do
    grep -q -- "$key" "$tmp/page" || fail "mprof-gtk.1 lacks '$key'"
  done
fi
bash -n "$gen/completion/mprof.bash" || fail "mprof.bash does not parse"
bash -c ". '$gen/completion/mprof.bash'
  COMP_WORDS=(mprof su); COMP_CWORD=1; _mprof; [ \"\${COMPREPLY[*]}\" = summary ] || exit 1
  COMP_WORDS=(mprof diff --allow); COMP_CWORD=2; _mprof; [ \"\${COMPREPLY[*]}\" = --allow-disjoint ] || exit 2
  COMP_WORDS=(mprof view x.mprof --tab me); COMP_CWORD=4; _mprof; [ \"\${COMPREPLY[*]}\" = mega ] || exit 3" ||
  fail "bash completion (step $?)"
zsh -n "$gen/completion/_mprof" || fail "_mprof does not parse"

desktop-file-validate "$src/data/mprof.desktop" || fail "mprof.desktop is not valid"
mkdir -p "$tmp/mime/packages"
cp "$src/data/mprof-mime.xml" "$tmp/mime/packages/mprof.xml"
XDG_DATA_DIRS=$tmp update-mime-database "$tmp/mime" 2>"$tmp/mime.err" || fail "update-mime-database: $(cat "$tmp/mime.err")"
[ -s "$tmp/mime.err" ] && fail "update-mime-database warns: $(cat "$tmp/mime.err")"
grep -q "application/x-mprof" "$tmp/mime/globs2" || fail "no glob for .mprof"
grep -q "application/x-mkprof" "$tmp/mime/globs2" || fail "no glob for .mkprof"

[ "$failures" -eq 0 ] || { echo "$failures failure(s)" >&2; exit 1; }
echo "man pages, completion and desktop files: all checks passed"
