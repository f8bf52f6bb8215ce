#!/bin/sh
# A build without CUDA says why in the GPU engines' line: "nvcc not found"
# only where there is no nvcc. A CPU_ONLY build on a machine with nvcc
# (make demo without a driver, or make CPU_ONLY=1) names that instead.
# usage: tests/cli/nocuda_reason.sh PATH/TO/tcjoin   (exit 0 pass, 1 fail)
set -u
bin=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
out=$("$bin" --db "$tmp/s.db" -e engines 2>&1) || { echo "engines failed: $out"; exit 1; }
case $out in
*"this build has no CUDA"*) ;;
*) echo "a CUDA build: nothing to check"; exit 0 ;;
esac
nvcc=$(command -v nvcc 2>/dev/null || ls /usr/local/cuda/bin/nvcc 2>/dev/null)
if [ -n "$nvcc" ] && printf '%s\n' "$out" | grep -q 'nvcc not found'; then
    echo "nvcc is at $nvcc, yet the GPU engines say 'nvcc not found':"
    printf '%s\n' "$out" | grep 'nvcc not found' | head -n 2
    exit 1
fi
if ! printf '%s\n' "$out" | grep -Eq 'this tcjoin (is the CPU-only build|was built without CUDA)'; then
    echo "the GPU engines do not say why this build has no CUDA:"
    printf '%s\n' "$out" | grep fasted
    exit 1
fi
echo "nocuda_reason: ok"
