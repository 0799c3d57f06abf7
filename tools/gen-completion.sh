#!/bin/sh
# Write bash (mprof.bash) and zsh (_mprof) completion for mprof from the
# help text of the built `mprof` itself, like the man pages: the commands
# from `mprof help`, each command's options from `mprof help COMMAND`, so
# completion knows exactly the options --help documents. Run by the build;
# also by hand: tools/gen-completion.sh build/bin/mprof OUTDIR
set -eu
mprof=$1
out=$2
mkdir -p "$out"
commands=$("$mprof" help | awk '/^Commands:/ { on = 1; next } on && /^  [a-z]/ { print $1 }')

# The options of one command: every --long and -s option its help names,
# with a trailing "=" or "=WHEN" cut to the option itself.
options() {
  "$mprof" help "$1" | grep -o -- '\(^\|[][ |(]\)--*[a-zA-Z][a-zA-Z0-9-]*=\{0,1\}' |
    sed -e 's/^[][ |(]//' | sort -u | tr '\n' ' '
}

# Options followed by a value that is a file name.
file_options="-o --output --sidecar --render --nvdisasm --cuobjdump"

{
  echo "# bash completion for mprof; generated from 'mprof help' by tools/gen-completion.sh"
  echo "_mprof() {"
  echo '  local cur prev cmd i'
  echo '  cur=${COMP_WORDS[COMP_CWORD]}'
  echo '  prev=${COMP_WORDS[COMP_CWORD-1]}'
  echo '  cmd='
  echo '  for ((i = 1; i < COMP_CWORD; i++)); do'
  echo '    case ${COMP_WORDS[i]} in -*) ;; *) cmd=${COMP_WORDS[i]}; break ;; esac'
  echo '  done'
  echo '  case $prev in'
  printf '    %s) COMPREPLY=($(compgen -f -- "$cur")); return ;;\n' "$(echo $file_options | tr ' ' '|')"
  echo '    --format) COMPREPLY=($(compgen -W "perfetto chrome speedscope sqlite kineto" -- "$cur")); return ;;'
  echo '    --tab|-t) COMPREPLY=($(compgen -W "trace summary hotspots flame raster mega density activity" -- "$cur")); return ;;'
  echo '    --pc-mode) COMPREPLY=($(compgen -W "continuous serialized off" -- "$cur")); return ;;'
  echo '    --rows) COMPREPLY=($(compgen -W "sm block warp" -- "$cur")); return ;;'
  echo '    --depth) COMPREPLY=($(compgen -W "auto phase instruction" -- "$cur")); return ;;'
  echo '  esac'
  echo '  if [[ -z $cmd ]]; then'
  printf '    COMPREPLY=($(compgen -W "%s help --help --version" -- "$cur"))\n' "$(echo $commands)"
  echo '    [[ $cur == -* ]] || COMPREPLY+=($(compgen -f -X "!*.@(mprof|mkprof)" -- "$cur"))'
  echo '    return'
  echo '  fi'
  echo '  local opts'
  echo '  case $cmd in'
  for c in $commands; do
    printf '    %s) opts="%s--help" ;;\n' "$c" "$(options "$c")"
  done
  printf '    help) COMPREPLY=($(compgen -W "%s" -- "$cur")); return ;;\n' "$(echo $commands)"
  echo '  esac'
  echo '  if [[ $cur == -* ]]; then'
  echo '    COMPREPLY=($(compgen -W "$opts" -- "$cur"))'
  echo '    [[ ${COMPREPLY[0]} == *= ]] && compopt -o nospace'
  echo '  else'
  echo '    COMPREPLY=($(compgen -f -- "$cur"))'
  echo '  fi'
  echo "}"
  echo "complete -o filenames -o bashdefault -F _mprof mprof"
} >"$out/mprof.bash"

{
  echo "#compdef mprof"
  echo "# zsh completion for mprof; generated from 'mprof help' by tools/gen-completion.sh"
  echo "_mprof() {"
  echo "  local -a commands"
  echo "  commands=("
  "$mprof" help | awk '/^Commands:/ { on = 1; next } on && /^  [a-z]/ {
      name = $1; $1 = ""; sub(/^ +/, ""); gsub(/'"'"'/, ""); gsub(/:/, "\\:");
      printf "    '"'"'%s:%s'"'"'\n", name, $0 }'
  echo "    'help:the usage of every command'"
  echo "  )"
  echo "  if (( CURRENT == 2 )); then"
  echo "    _describe -t commands 'mprof command' commands"
  echo "    _files -g '*.(mprof|mkprof)'"
  echo "    return"
  echo "  fi"
  echo '  local cmd=${words[2]}'
  echo "  local -a opts"
  echo '  case $cmd in'
  for c in $commands; do
    printf '    %s) opts=(%s--help) ;;\n' "$c" "$(options "$c")"
  done
  echo "    help) _describe -t commands 'mprof command' commands; return ;;"
  echo '  esac'
  echo '  case ${words[CURRENT-1]} in'
  echo "    --format) compadd perfetto chrome speedscope sqlite kineto; return ;;"
  echo "    --tab|-t) compadd trace summary hotspots flame raster mega density activity; return ;;"
  echo "    --pc-mode) compadd continuous serialized off; return ;;"
  echo "    --rows) compadd sm block warp; return ;;"
  echo "    --depth) compadd auto phase instruction; return ;;"
  echo '  esac'
  echo '  if [[ $PREFIX == -* ]]; then'
  echo '    compadd -a opts'
  echo '  else'
  echo '    _files'
  echo '  fi'
  echo "}"
  echo '_mprof "$@"'
} >"$out/_mprof"
