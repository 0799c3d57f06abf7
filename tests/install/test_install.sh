#!/bin/sh
# Install mprof into a scratch prefix and build a consumer against it twice:
# with pkg-config and with find_package(mprof). Also checks that a program
# linked with mprof-writer alone needs no json-c, libelf or GLib.
set -eu
build=$1
work=$2/install.$$
src=$(cd "$(dirname "$0")" && pwd)
rm -rf "$work"
mkdir -p "$work"
trap 'rm -rf "$work"' EXIT
prefix="$work/prefix"
cmake --install "$build" --prefix "$prefix" >/dev/null
# The synthetic-trace generator is a tool of the project, not installed API.
if [ -e "$prefix/include/mprof/synth.h" ]; then
  echo "synth.h was installed; it is not part of the stable API" >&2
  exit 1
fi
libdir=$(ls -d "$prefix"/lib*/ | head -n 1)
libdir=${libdir%/}

# pkg-config. The .pc files carry the configured prefix, so point
# pkg-config at the scratch tree with --define-prefix.
export PKG_CONFIG_PATH="$libdir/pkgconfig"
cc -o "$work/consumer-pc" "$src/consumer/consumer.c" \
  $(pkg-config --define-prefix --cflags --libs mprof) -Wl,-rpath,"$libdir"
"$work/consumer-pc" "$work/pc.mprof"
cc -o "$work/writer-pc" "$src/consumer/writer_only.c" \
  $(pkg-config --define-prefix --cflags --libs --static mprof-writer)
"$work/writer-pc" "$work/w.mprof"
if readelf -d "$work/writer-pc" | grep -E 'json-c|libelf|glib|libmprof\.so'; then
  echo "a writer-only program depends on more than libc" >&2
  exit 1
fi

# find_package(mprof).
cmake -S "$src/consumer" -B "$work/cm" -DCMAKE_PREFIX_PATH="$prefix" \
  -DCMAKE_BUILD_RPATH="$libdir" >/dev/null
cmake --build "$work/cm" >/dev/null
"$work/cm/consumer" "$work/cm.mprof"
"$work/cm/writer_only" "$work/cm-w.mprof"
readelf -d "$work/cm/writer_only" | grep NEEDED
echo "install consumers built and ran through pkg-config and find_package"

# mprof setup rebuilds a missing producer from the installed sources.
if [ -d "$prefix/share/mprof/producer-src" ] && [ -e /usr/local/cuda/include/cupti.h ]; then
  rm -f "$libdir"/mprof/libmprof-cupti.so
  HOME="$work/home" "$prefix/bin/mprof" setup >"$work/setup.log" 2>&1 || {
    cat "$work/setup.log"
    echo "mprof setup failed" >&2
    exit 1
  }
  HOME="$work/home" "$prefix/bin/mprof" setup | grep -q "the CUPTI producer is present: $work/home/.local/share/mprof/libmprof-cupti.so"
  readelf -d "$work/home/.local/share/mprof/libmprof-cupti.so" | grep NEEDED
  echo "mprof setup built the producer from the installed sources"
fi
