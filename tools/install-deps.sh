#!/bin/sh
# Install the Debian 12 packages mprof needs to build and test (see README,
# "Dependencies", for why each one is there). Safe to run again.
set -eu
packages="build-essential cmake pkg-config git libjson-c-dev libelf-dev zlib1g-dev
libcmocka-dev libgtk-4-dev libcairo2-dev clang libclang-rt-14-dev
clang-format libxml2-utils xvfb xauth x11-apps imagemagick dbus-x11
chromium desktop-file-utils shared-mime-info zsh man-db groff-base
bsdextrautils python3 procps libsqlite3-dev sqlite3 lintian
protobuf-compiler
python3-cffi python3-numpy python3-pandas python3-pytest python3-pip
python3-dask python3-distributed"
# node and npm run the browser checks of the exports; a node that is
# already installed (e.g. from another repository) is kept.
command -v node >/dev/null 2>&1 || packages="$packages nodejs"
command -v npm >/dev/null 2>&1 || packages="$packages npm"
missing=""
for p in $packages; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing="$missing $p"
done
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
if [ -z "$missing" ]; then
  echo "install-deps: all packages present"
else
  echo "install-deps: installing$missing"
  $sudo apt-get update -qq
  # shellcheck disable=SC2086
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends $missing >/dev/null
fi
# speedscope and playwright-core for the browser checks (tests/browser),
# at the versions package-lock.json pins; node_modules stays out of git.
browser_dir=$(dirname "$0")/../tests/browser
if [ ! -f "$browser_dir/node_modules/.package-lock.json" ] ||
   ! cmp -s "$browser_dir/package-lock.json" "$browser_dir/node_modules/.mprof-lock"; then
  echo "install-deps: npm ci in tests/browser"
  (cd "$browser_dir" && npm ci --no-audit --no-fund --loglevel=error >/dev/null &&
    cp package-lock.json node_modules/.mprof-lock)
fi
