#!/bin/bash
# Shell completion generated from mprof's own completion table
# (`mprof --complete-spec`, tools/gen-completion.sh): the bash completion
# the build wrote, sourced and asked as bash asks it on TAB, offers the
# commands, subcommands, options and option values mprof takes, traces
# (not any file) where a trace goes, and nothing scraped from prose; the
# table names only options each command's help documents, and every
# option of each usage synopsis.
# Usage: test_completion.sh MPROF GENERATED_DIR TMPDIR
mprof=$1
gen=$2
tmp=${3:-/tmp}/completion.$$
. "$(dirname "$0")/common.sh"
bash_file=$(cd "$gen/completion" 2>/dev/null && pwd)/mprof.bash
zsh_file=$gen/completion/_mprof
[ -f "$bash_file" ] || { echo "FAIL: no $bash_file" >&2; exit 1; }

# complete WORDS...: COMPREPLY, sorted, one line, for the last word.
complete_words() {
  bash -c '. "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _mprof
    printf "%s\n" "${COMPREPLY[@]}" | sort | tr "\n" " " | sed "s/ $//"' \
    complete "$bash_file" "$@"
}
# check WANT WORDS...: the completion of WORDS is exactly WANT.
check() {
  want=$1; shift
  got=$(complete_words "$@")
  [ "$got" = "$want" ] || fail "${*}<TAB> offers '$got', expected '$want'"
}
# has WORD WORDS...: the completion of WORDS includes WORD.
has() {
  word=$1; shift
  complete_words "$@" | tr ' ' '\n' | grep -qx -- "$word" ||
    fail "${*}<TAB> lacks '$word': $(complete_words "$@")"
}
lacks() {
  word=$1; shift
  complete_words "$@" | tr ' ' '\n' | grep -qx -- "$word" &&
    fail "${*}<TAB> offers '$word'"
}

bash -n "$bash_file" || fail "mprof.bash does not parse"
check export mprof exp
check "help" mprof hel
check "--help --version" mprof --
for sub in source blocks; do has $sub mprof record ''; done
check "blocks source" mprof record ''
check "export import info" mprof mkprof ''
check "info merge" mprof source ''
check "chrome kineto perfetto speedscope sqlite" mprof export x.mprof --format ''
check "speedscope sqlite" mprof export --format s
check "continuous off serialized" mprof record --pc-mode ''
check "mega" mprof view x.mprof --tab me
check "--by-line --by-process --by-range" mprof summary x.mprof --by-
check "--allow-disjoint" mprof diff --allow
check "--memory" mprof record blocks --mem
check "--instructions" mprof mkprof info --instr
# --color=WHEN: bash splits the word at "="; both forms complete.
check "always auto never" mprof summary --color = ''
check "always" mprof summary --color = al
check "--color=always" mprof summary --color=al
# A free value (a count, a regex) offers nothing, not file names.
check "" mprof summary --top ''
# After "--", record completes the program to run.
has bash mprof record -- ba
# Help and the option of no command.
check "mkprof" mprof help mk
check "" mprof doctor ''

# Where a trace goes: traces and folders, not other files; where a file
# goes: any file.
mkdir -p "$tmp/dir/sub"
: >"$tmp/dir/a.mprof"; : >"$tmp/dir/b.mkprof"; : >"$tmp/dir/README.md"
cd "$tmp/dir" || exit 1
check "a.mprof b.mkprof sub" mprof summary ''
check "a.mprof" mprof view a
lacks README.md mprof ''
has a.mprof mprof ''
has export mprof ''
check "b.mkprof" mprof mkprof info b
has README.md mprof export a.mprof -o ''
check "sub" mprof record --source-root s
cd - >/dev/null || exit 1

# Nothing scraped from the help's prose.
for word in -DMPROF -lineinfo -arch README.md; do
  grep -q -- "$word" "$bash_file" "$zsh_file" && fail "the completion holds '$word' from the help's prose"
done

# The table behind it: every command of `mprof help` has a line; every
# option it names is in that command's help; every option the usage
# synopsis (the text up to the first blank line) shows is in the table.
spec=$("$mprof" --complete-spec) || fail "mprof --complete-spec exited $?"
for c in $("$mprof" help | awk '/^Commands:/ { on = 1; next } on && /^  [a-z]/ { print $1 }'); do
  line=$(printf '%s\n' "$spec" | grep "^$c\( \|$\)") || { fail "--complete-spec lacks $c"; continue; }
  "$mprof" help "$c" >"$tmp/help"
  for opt in $(printf '%s\n' "$line" | tr ' ' '\n' | sed -n 's/^\(-[^:]*\).*/\1/p'); do
    grep -q -- "\(^\|[^a-z-]\)$opt\($\|[^a-z-]\)" "$tmp/help" || fail "$c: completion offers $opt, which 'mprof help $c' does not name"
  done
  for opt in $(sed '/^$/q' "$tmp/help" | grep -o -- '[[ |]--*[a-z][a-z-]*=\{0,1\}' | sed 's/^.//' | sort -u); do
    printf '%s\n' "$line" | tr ' ' '\n' | sed 's/:.*//' | grep -qx -- "$opt" ||
      fail "$c: 'mprof help $c' shows $opt, which completion does not offer"
  done
done

if command -v zsh >/dev/null; then
  zsh -n "$zsh_file" || fail "_mprof does not parse"
  # The zsh function, with zsh's completion builtins replaced by ones that
  # print what they were asked to offer.
  zsh -f -c 'compadd() { print -r -- "compadd $*"; }
    _files() { print -r -- "_files $*"; }
    _describe() { print -r -- "_describe $*"; }
    _command_names() { print -r -- "_command_names $*"; }
    compset() { PREFIX=${PREFIX#*=}; }
    source "$1" >/dev/null
    t() { words=("$@"); CURRENT=$#; PREFIX=${words[-1]}; print -rn -- "$*: "; _mprof | tr "\n" ";"; print; }
    t mprof mkprof ""; t mprof record ""; t mprof export --format ""; t mprof summary ""
    t mprof summary --color=; t mprof summary --top ""' zsh "$zsh_file" >"$tmp/zsh" 2>&1
  for want in "mprof mkprof : compadd -- info export import;" "mprof record : compadd -- source blocks;" \
    "mprof export --format : compadd -- perfetto chrome speedscope sqlite kineto;" \
    "mprof summary : _files -g *.(mprof|mkprof);" "mprof summary --color=: compadd -- auto always never;" \
    "mprof summary --top : "; do
    grep -qxF -- "$want" "$tmp/zsh" || fail "zsh completion: expected '$want' in: $(cat "$tmp/zsh")"
  done
fi

[ "$failures" -eq 0 ] || { echo "$failures completion check(s) failed" >&2; exit 1; }
echo "completion: commands, subcommands, options, values and traces complete as mprof takes them"
