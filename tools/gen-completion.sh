#!/bin/sh
# Write bash (mprof.bash) and zsh (_mprof) completion for mprof from the
# built `mprof` itself: `mprof --complete-spec` prints, per command, the
# subcommands, options, which options take which values and what the
# operands are, from the completion table beside each command's help in
# mprof-cli/main.c (its syntax is described at cli_command in
# mprof-cli/cli.h); `mprof help` gives each command's one-line synopsis.
# Run by the build; also by hand: tools/gen-completion.sh build/bin/mprof OUTDIR
set -eu
mprof=$1
out=$2
mkdir -p "$out"
spec=$(mktemp)
trap 'rm -f "$spec"' EXIT
"$mprof" --complete-spec >"$spec"
[ -s "$spec" ] || { echo "gen-completion.sh: '$mprof --complete-spec' printed nothing" >&2; exit 1; }
commands=$(awk '{ print $1 }' "$spec" | tr '\n' ' ' | sed 's/ $//')

# The cases of one shell: SHELL is bash or zsh; PART is "commands" (per
# command: its options, subcommands and operand kind) or "values" (per
# option that takes a value: what that value is).
cases() {
  awk -v shell="$1" -v part="$2" '{
    cmd = $1; opts = ""; subs = ""; arg = ""
    for (i = 2; i <= NF; i++) {
      t = $i
      if (t ~ /^sub:/) { subs = subs (subs == "" ? "" : " ") substr(t, 5); continue }
      if (t ~ /^arg:/) { arg = substr(t, 5); continue }
      n = index(t, ":")
      opt = n ? substr(t, 1, n - 1) : t
      opts = opts (opts == "" ? "" : " ") opt
      if (!n || part != "values")
        continue
      kind = substr(t, n + 1)
      if (kind == "file" || kind == "dir")
        printf "    \"%s %s\") kind=%s ;;\n", cmd, opt, kind
      else if (kind == "value" || kind == "duration" || kind == "size")
        printf "    \"%s %s\") kind=none ;; # %s\n", cmd, opt, kind
      else {
        gsub(/,/, " ", kind)
        printf "    \"%s %s\") kind=words words=\"%s\" ;;\n", cmd, opt, kind
      }
    }
    opts = opts (opts == "" ? "" : " ") "--help"
    if (part != "commands")
      next
    if (shell == "bash")
      printf "    %s) opts=\"%s\" subs=\"%s\" arg=%s ;;\n", cmd, opts, subs, arg
    else
      printf "    %s) opts=(%s) subs=(%s) arg=%s ;;\n", cmd, opts, subs, arg
  }' "$spec"
}

{
  echo "# bash completion for mprof; generated from 'mprof --complete-spec' by"
  echo "# tools/gen-completion.sh"
  echo ""
  echo "# Traces (.mprof, .mkprof) and folders starting with \$1."
  echo "_mprof_traces() {"
  echo "  local f"
  echo "  while IFS= read -r f; do"
  echo '    [[ -d $f || $f == *.mprof || $f == *.mkprof ]] && COMPREPLY+=("$f")'
  echo '  done < <(compgen -f -- "$1")'
  echo "  compopt -o filenames 2>/dev/null"
  echo "}"
  echo ""
  echo "_mprof() {"
  echo '  local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}'
  echo '  local cmd= at=0 dash=0 opts= subs= arg= kind= words= joined= i'
  echo '  COMPREPLY=()'
  echo '  # --color=WHEN: bash splits the word at "=" (or a caller may not).'
  echo '  if [[ $cur == = ]]; then prev+="="; cur=""'
  echo '  elif [[ $prev == = ]]; then prev=${COMP_WORDS[COMP_CWORD-2]}=; fi'
  echo '  if [[ $cur == --*=* ]]; then joined=${cur%%=*}=; prev=$joined; cur=${cur#*=}; fi'
  echo '  for ((i = 1; i < COMP_CWORD; i++)); do'
  echo '    if [[ -z $cmd ]]; then'
  echo '      [[ ${COMP_WORDS[i]} == -* ]] || { cmd=${COMP_WORDS[i]}; at=$i; }'
  echo '    elif [[ ${COMP_WORDS[i]} == -- ]]; then'
  echo '      dash=$i; break'
  echo '    fi'
  echo '  done'
  echo '  if [[ -z $cmd ]]; then'
  echo '    if [[ $cur == -* ]]; then'
  echo '      COMPREPLY=($(compgen -W "--help --version" -- "$cur"))'
  echo '    else'
  printf '      COMPREPLY=($(compgen -W "%s help" -- "$cur"))\n' "$commands"
  echo '      _mprof_traces "$cur"'
  echo '    fi'
  echo '    return'
  echo '  fi'
  echo '  case $cmd in'
  cases bash commands
  printf '    help) COMPREPLY=($(compgen -W "%s" -- "$cur")); return ;;\n' "$commands"
  echo '    *) return ;;'
  echo '  esac'
  echo '  if ((dash)); then'
  echo '    if ((COMP_CWORD == dash + 1)); then'
  echo '      COMPREPLY=($(compgen -c -- "$cur"))'
  echo '    else'
  echo '      COMPREPLY=($(compgen -f -- "$cur")); compopt -o filenames 2>/dev/null'
  echo '    fi'
  echo '    return'
  echo '  fi'
  echo '  case "$cmd $prev" in'
  cases bash values
  echo '  esac'
  echo '  case $kind in'
  echo '    file) COMPREPLY=($(compgen -f -- "$cur")); compopt -o filenames 2>/dev/null ;;'
  echo '    dir) COMPREPLY=($(compgen -d -- "$cur")); compopt -o filenames 2>/dev/null ;;'
  echo '    words) COMPREPLY=($(compgen -W "$words" -P "$joined" -- "$cur")) ;;'
  echo '  esac'
  echo '  [[ -n $kind ]] && return'
  echo '  if [[ $cur == -* ]]; then'
  echo '    COMPREPLY=($(compgen -W "$opts" -- "$cur"))'
  echo '    [[ ${#COMPREPLY[@]} == 1 && ${COMPREPLY[0]} == *= ]] && compopt -o nospace 2>/dev/null'
  echo '  elif [[ -n $subs ]] && ((COMP_CWORD == at + 1)); then'
  echo '    COMPREPLY=($(compgen -W "$subs" -- "$cur"))'
  echo '  else'
  echo '    case $arg in'
  echo '      trace) _mprof_traces "$cur" ;;'
  echo '      file) COMPREPLY=($(compgen -f -- "$cur")); compopt -o filenames 2>/dev/null ;;'
  echo '      command) COMPREPLY=($(compgen -W "--" -- "$cur")) ;;'
  echo '    esac'
  echo '  fi'
  echo '  return 0'
  echo "}"
  echo "complete -F _mprof mprof"
} >"$out/mprof.bash"

{
  echo "#compdef mprof"
  echo "# zsh completion for mprof; generated from 'mprof --complete-spec' by"
  echo "# tools/gen-completion.sh"
  echo "_mprof() {"
  echo "  local -a commands opts subs"
  echo "  commands=("
  "$mprof" help | awk -v names=" $commands " '/^Commands:/ { on = 1; next } on && /^  [a-z]/ {
      name = $1; if (index(names, " " name " ") == 0) next
      $1 = ""; sub(/^ +/, ""); gsub(/'"'"'/, ""); gsub(/:/, "\\:");
      printf "    '"'"'%s:%s'"'"'\n", name, $0 }'
  echo "    'help:the usage of every command'"
  echo "  )"
  echo "  if (( CURRENT == 2 )); then"
  echo '    if [[ $PREFIX == -* ]]; then'
  echo "      compadd -- --help --version"
  echo "    else"
  echo "      _describe -t commands 'mprof command' commands"
  echo "      _files -g '*.(mprof|mkprof)'"
  echo "    fi"
  echo "    return"
  echo "  fi"
  echo '  local cmd=${words[2]} arg= kind= words_= prev=${words[CURRENT-1]} dash'
  echo '  case $cmd in'
  cases zsh commands | sed 's/words="/words_="/'
  echo "    help) _describe -t commands 'mprof command' commands; return ;;"
  echo '    *) return ;;'
  echo '  esac'
  echo '  dash=${words[(i)--]}'
  echo '  if (( dash < CURRENT )); then'
  echo '    if (( CURRENT == dash + 1 )); then _command_names -e; else _files; fi'
  echo '    return'
  echo '  fi'
  echo '  if [[ $PREFIX == --*=* ]]; then'
  echo '    prev=${PREFIX%%=*}='
  echo "    compset -P '*='"
  echo '  fi'
  echo '  case "$cmd $prev" in'
  cases zsh values | sed 's/words="/words_="/'
  echo '  esac'
  echo '  case $kind in'
  echo '    file) _files; return ;;'
  echo '    dir) _files -/; return ;;'
  echo '    words) compadd -- ${=words_}; return ;;'
  echo '    none) return ;;'
  echo '  esac'
  echo '  if [[ $PREFIX == -* ]]; then'
  echo '    local o'
  echo '    for o in $opts; do'
  echo '      if [[ $o == *= ]]; then compadd -S "" -- $o; else compadd -- $o; fi'
  echo '    done'
  echo '  elif (( ${#subs} && CURRENT == 3 )); then'
  echo '    compadd -- $subs'
  echo '  else'
  echo '    case $arg in'
  echo "      trace) _files -g '*.(mprof|mkprof)' ;;"
  echo '      file) _files ;;'
  echo '      command) compadd -- -- ;;'
  echo '    esac'
  echo '  fi'
  echo "}"
  echo '_mprof "$@"'
} >"$out/_mprof"
