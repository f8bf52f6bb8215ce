#!/bin/sh
# Run each libFuzzer harness of BUILD for SECONDS on a scratch copy of its
# corpus (tests/fuzz/corpus/NAME; new inputs are not written back), one
# process and one core each, in turn. One line per harness, as the unit
# tests print them:
#   ok - fuzz NAME: EXECS execs in S s, corpus N, cov C
#   not ok - fuzz NAME: the finding (its input is kept in BUILD/crash-NAME-*)
# usage: tests/fuzz/run.sh BUILD SECONDS
set -u
cd "$(dirname "$0")/../.." || exit 2
build=${1:-build-fuzz}
secs=${2:-60}
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
status=0
for bin in "$build"/fuzz_*; do
    [ -x "$bin" ] || continue
    name=${bin##*/fuzz_}
    mkdir -p "$scratch/$name"
    seeds=tests/fuzz/corpus/$name
    [ -d "$seeds" ] || seeds=
    # -rss_limit_mb: a loader that allocates from a header value is a finding;
    # the hdf5 harness forks libhdf5 into a child whose mallocs are libhdf5's
    extra=
    [ "$name" = hdf5 ] && extra=-malloc_limit_mb=1048576
    # hdf5_child runs libhdf5 in-process, and libhdf5 itself crashes on
    # some files (what the child process of load_hdf5 isolates): run it in
    # libFuzzer's fork mode, going on after a crash and an out-of-memory;
    # each input that stopped it is then replayed, and it is a finding unless
    # the first frame past the sanitizer's and libc's own lies in libhdf5
    art="$build/crash-$name-"
    if [ "$name" = hdf5_child ]; then
        extra="-fork=1 -ignore_crashes=1 -ignore_ooms=1"
        art="$scratch/art-$name-"
    fi
    ASAN_OPTIONS=${FUZZ_ASAN_OPTIONS:-} \
        "$bin" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 $extra \
        -artifact_prefix="$art" "$scratch/$name" $seeds >"$scratch/$name.log" 2>&1
    rc=$?
    # In fork mode libFuzzer exits 1 when a job it was told to ignore
    # crashed last; what counts is the replay of each input below.
    [ "$name" = hdf5_child ] && rc=0
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$scratch/$name.log" | tail -n 1)
    [ -n "$execs" ] || execs=$(grep -a -o '^#[0-9]*' "$scratch/$name.log" | tail -n 1 | tr -d '#')
    cov=$(grep -a -o 'cov: [0-9]*' "$scratch/$name.log" | tail -n 1 | cut -d' ' -f2)
    corpus=$(ls "$scratch/$name" | wc -l)
    theirs=0
    # The replay names the allocation itself: an out-of-memory by the RSS
    # limit reports whichever malloc its check interrupts (libFuzzer's own
    # main), so a libhdf5 allocation sized from a corrupt header
    # (H5C_protect asking for 21 GB, after 2.5 GB of smaller ones) read as
    # a finding of ours; -malloc_limit_mb below a looser RSS limit stops at
    # the oversized malloc, with its stack.
    for f in "$scratch"/art-"$name"-*; do
        [ -f "$f" ] || continue
        first=$(ASAN_OPTIONS=${FUZZ_ASAN_OPTIONS:-} "$bin" -rss_limit_mb=4096 -malloc_limit_mb=2048 "$f" 2>&1 |
            grep -a -E '^    #[0-9]+ ' |
            grep -a -v -E 'interceptor|__asan|__sanitizer|fuzzer::|libc\.so|sysdeps| in (malloc|realloc|calloc|strdup|memcpy|memmove|strlen) ' |
            head -n 1)
        if echo "$first" | grep -q libhdf5; then
            theirs=$((theirs + 1))
        else
            rc=1
            cp "$f" "$build/crash-$name-${f##*/art-$name-}"
            echo "$name: $f stops outside libhdf5" >>"$scratch/$name.log"
        fi
    done
    note=
    [ "$theirs" -gt 0 ] && note=", $theirs inputs crash libhdf5 itself (load_hdf5's child isolates them)"
    if [ $rc -eq 0 ]; then
        echo "ok - fuzz $name: ${execs:-?} execs in $secs s, corpus $corpus, cov ${cov:-?}$note"
    else
        status=1
        what=$(grep -a -m1 'stops outside' "$scratch/$name.log")
        [ -n "$what" ] || what=$(grep -a -m1 -E 'ERROR:|runtime error|fuzz:|deadly signal|out-of-memory|timeout' \
            "$scratch/$name.log")
        echo "not ok - fuzz $name: exit $rc: ${what:-see below} ($build/crash-$name-*)"
        tail -n 30 "$scratch/$name.log" >&2
    fi
done
exit $status
