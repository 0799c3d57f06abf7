#!/bin/sh
# Fails when the object files of a static library call each other in a
# circle: file A uses a function defined in B and B, through any chain,
# one of A's. Layers show as a tree of calls; a circle means two files that
# cannot be read, tested or replaced one without the other. Prints the files
# left in circles with the symbols that tie them.
nm_tool=${NM:-nm}
archive=$1
[ -f "$archive" ] || { echo "check_layers: no archive '$archive'" >&2; exit 2; }
"$nm_tool" -A "$archive" 2>/dev/null | awk '
  {
    # "archive:member.o:0000 T name" or "archive:member.o:         U name"
    n = split($1, part, ":"); file = part[n - 1]; sub(/\.c\.o$|\.o$/, "", file)
    kind = $(NF - 1); sym = $NF
    if (kind ~ /^[TDBR]$/) def[sym] = file
    else if (kind == "U") { nu++; ufile[nu] = file; usym[nu] = sym }
    files[file] = 1
  }
  END {
    for (i = 1; i <= nu; i++) {
      to = def[usym[i]]
      if (to == "" || to == ufile[i]) continue
      key = ufile[i] SUBSEP to
      if (!(key in edge)) { edge[key] = usym[i]; out[ufile[i]]++ }
    }
    # Peel files that call no remaining file; what is left is in circles.
    for (f in files) alive[f] = 1
    do {
      changed = 0
      for (f in alive) {
        calls = 0
        for (key in edge) { split(key, e, SUBSEP); if (e[1] == f && (e[2] in alive)) calls++ }
        if (!calls) { delete alive[f]; changed = 1 }
      }
    } while (changed)
    left = 0
    for (f in alive) left++
    if (!left) { print "no circles among the files of the library"; exit 0 }
    print "files that call each other in a circle:"
    for (key in edge) {
      split(key, e, SUBSEP)
      if ((e[1] in alive) && (e[2] in alive)) print "  " e[1] " -> " e[2] " (" edge[key] ")"
    }
    exit 1
  }'
