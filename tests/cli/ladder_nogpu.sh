#!/bin/sh
# `ladder` without a GPU succeeds, says NOT MEASURED HERE with the reason
# in one line, and prints the stored H200 and H100 ladders of
# docs/TEACHING.md (built in); `run ladder` refuses in one line; nothing is
# stored as a ladder. On a machine with a CUDA device: skipped (the GPU
# tests and scripts/gpu-check run the ladder there).
# usage: tests/cli/ladder_nogpu.sh PATH/TO/tcjoin   (exit 0 pass, 77 skip, 1 fail)
set -u
bin=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
out=$("$bin" --db "$tmp/s.db" -e ladder 2>&1)
rc=$?
case $out in
*"NOT MEASURED HERE"*) ;;
*) echo "a CUDA device is present: the ladder ran"; exit 77 ;;
esac
[ $rc -eq 0 ] || { echo "ladder without a GPU exited $rc: $out"; exit 1; }
first=$(printf '%s\n' "$out" | head -n 1)
case $first in
"NOT MEASURED HERE ("*"): the stored ladders of docs/TEACHING.md follow.") ;;
*) echo "first line does not give the reason: $first"; exit 1 ;;
esac
for want in "NVIDIA H200 (sm_90, 132 SMs)" "NVIDIA H100 80GB HBM3" "13   wgmma-int8" "pk@run"; do
    printf '%s\n' "$out" | grep -qF "$want" || { echo "stored ladders lack '$want'"; exit 1; }
done
err=$("$bin" --db "$tmp/s.db" -e 'gen ints n=300 d=8; eps 3; run ladder' 2>&1 >/dev/null)
[ "$(printf '%s\n' "$err" | grep -c .)" -eq 1 ] || { echo "run ladder: not one line: $err"; exit 1; }
printf '%s\n' "$err" | grep -q "ladder" || { echo "run ladder: $err"; exit 1; }
shown=$("$bin" --db "$tmp/s.db" -e 'ladder show' 2>&1)
case $shown in
*"no ladder in the session log"*) ;;
*) echo "a ladder was stored without a GPU: $shown"; exit 1 ;;
esac
echo "ladder_nogpu: ok"
