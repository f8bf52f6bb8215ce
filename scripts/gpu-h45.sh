#!/bin/bash
# Issue 45's GPU tests on one GPU, from scripts/gpu-check's bundle layout
# (B=/tmp/tcjoin-gpu: $B/tests/g_*), output under $OUT: g_tiles (a work
# list shared with another process through kern_tiles, every GPU join
# engine and mode, against the engine alone), g_devices' list-of-one case
# (the queue path the shared list rides on), and compute-sanitizer memcheck
# over g_tiles (no new kernel: the host side's ranges into the launches).
# Under 200 s; a short table last.
B=${B:-/tmp/tcjoin-gpu}
OUT=${OUT:-/tmp}
declare -a rows
one() { # name limit command...
    local name=$1 lim=$2
    shift 2
    local t0=$SECONDS
    timeout -k 5 "$lim" "$@" >"$OUT/h45-$name.log" 2>&1
    local rc=$?
    local okc notc
    okc=$(grep -c '^ok' "$OUT/h45-$name.log")
    notc=$(grep -c '^not ok' "$OUT/h45-$name.log")
    rows+=("| $name | $rc | $okc | $notc | $((SECONDS - t0)) s |")
    grep -E '^(not ok|#)' "$OUT/h45-$name.log" | head -n 20
}
one g_tiles 90 "$B/tests/g_tiles"
one g_devices_one 60 "$B/tests/g_devices" a_list_of_one_device_equals_the_single_device_run
CS=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
one memcheck_tiles 45 "$CS" --tool memcheck --error-exitcode 9 "$B/tests/g_tiles" \
    a_list_the_other_side_disagrees
echo "| step | exit | ok | not ok | time |"
echo "|---|---|---|---|---|"
printf '%s\n' "${rows[@]}"
