#!/bin/sh
# Install the Debian 12 packages mprof needs to build and test (see README,
# "Dependencies", for why each one is there). Safe to run again.
set -eu
packages="build-essential cmake pkg-config git libjson-c-dev libelf-dev
libcmocka-dev libgtk-4-dev libcairo2-dev clang libclang-rt-14-dev
clang-format libxml2-utils xvfb xauth x11-apps imagemagick dbus-x11"
missing=""
for p in $packages; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing="$missing $p"
done
if [ -z "$missing" ]; then
  echo "install-deps: all packages present"
  exit 0
fi
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
echo "install-deps: installing$missing"
$sudo apt-get update -qq
# shellcheck disable=SC2086
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends $missing >/dev/null
