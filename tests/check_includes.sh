#!/bin/sh
# Fails when a source file includes a header its module may not use
# (docs/ARCHITECTURE.md, "Modules and what each may include"):
#   - a libmprof module includes an internal header of a module that is not
#     below it (the table below is the one in ARCHITECTURE.md, and a table
#     of "below" has no circles, so neither can the includes);
#   - mprof-render includes anything of libmprof but its public headers.
# Public headers (`mprof/*.h`) are the ABI and may be included anywhere.
# Usage: check_includes.sh [ROOT]   (ROOT: the repository, default ".")
root=${1:-.}
src=$root/libmprof/src
[ -d "$src" ] || { echo "check_includes: no folder '$src'" >&2; exit 2; }

# The internal headers each module may include besides its own; "top" is
# libmprof/src/internal.h.
allowed() {
  case $1 in
  top) echo "" ;;
  base) echo "top" ;;
  format | code | spans) echo "top base format" ;;
  analysis) echo "top base format code" ;;
  synth) echo "top base format code" ;;
  report) echo "top base format code spans analysis" ;;
  export) echo "top base format code spans analysis report" ;;
  *) echo "?" ;;
  esac
}

bad=0
files=$(find "$src" -name '*.[ch]' | sort)
for f in $files; do
  rel=${f#"$src"/}
  case $rel in
  */*) module=${rel%%/*} ;;
  *) module=top ;;
  esac
  ok=$(allowed "$module")
  if [ "$ok" = "?" ]; then
    echo "$rel: module '$module' is not in check_includes.sh's table" >&2
    bad=1
    continue
  fi
  dir=$(dirname "$f")
  for inc in $(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f"); do
    case $inc in
    mprof/*) continue ;;
    */*) target=${inc%%/*} ;;
    *)
      if [ -f "$dir/$inc" ]; then
        target=$module
      elif [ -f "$src/$inc" ]; then
        target=top
      else
        continue # generated (version.h) or not ours
      fi
      ;;
    esac
    [ "$target" = "$module" ] && continue
    case " $ok " in
    *" $target "*) ;;
    *)
      echo "$rel: includes \"$inc\" ($target), which $module may not use" >&2
      bad=1
      ;;
    esac
  done
done

# The renderer: its own headers and libmprof's public ones only.
for f in $(find "$root/mprof-render" -name '*.[ch]' | sort); do
  dir=$(dirname "$f")
  for inc in $(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f"); do
    case $inc in
    mprof/* | mprof-render/*) continue ;;
    esac
    [ -f "$dir/$inc" ] && continue
    echo "${f#"$root"/}: includes \"$inc\", not a public libmprof header" >&2
    bad=1
  done
done

[ $bad = 0 ] || exit 1
echo "check_includes: $(echo "$files" | wc -l) libmprof files and the renderer include only what their module may"
