#!/bin/sh
# The test runner: unit and GPU test binaries, command-line golden tests and
# terminal (tmux) tests, for the plain build and then the sanitized one.
# Last line: "N passed, N failed, N skipped".
# usage: tests/run.sh BUILD [SAN_BUILD]
set -u
cd "$(dirname "$0")/.." || exit 2
plain=${1:-build}
san=${2:-}
pass=0 fail=0 skip=0
log=$(mktemp)
export TCJOIN_DATASETS="${TCJOIN_DATASETS:-$(cd .. && pwd)/shared/datasets}"
export ASAN_OPTIONS="${ASAN_OPTIONS:-protect_shadow_gap=0:detect_leaks=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1}"
# Keep tests away from the user's files.
export XDG_DATA_HOME=$(mktemp -d) XDG_STATE_HOME=$(mktemp -d)
export TCJOIN_HISTORY="$XDG_STATE_HOME/history"
unset TCJOIN_DB

count() { # count "ok/not ok/skip" lines of a test binary's output
    while IFS= read -r line; do
        case "$line" in
        "ok - "*) pass=$((pass + 1)) ;;
        "not ok - "*) fail=$((fail + 1)); echo "$1: $line" ;;
        "skip - "*) skip=$((skip + 1)); echo "$1: $line" ;;
        esac
    done <"$log"
}

run_bin() { # run_bin LABEL BINARY
    "$2" >"$log" 2>"$log.err"
    rc=$?
    count "$1"
    if [ $rc -ne 0 ] && ! grep -q '^not ok' "$log"; then
        fail=$((fail + 1))
        echo "$1: crashed (exit $rc)"; tail -n 20 "$log.err"
    elif grep -q 'runtime error\|AddressSanitizer\|LeakSanitizer' "$log.err"; then
        fail=$((fail + 1))
        echo "$1: sanitizer report"; head -n 30 "$log.err"
    fi
}

units() { # units BUILD LABEL
    for t in "$1"/tests/t_*; do
        [ -x "$t" ] || continue
        run_bin "$2$(basename "$t")" "$t"
    done
}

gpu() {
    for t in "$1"/tests/g_*; do
        [ -x "$t" ] || continue
        run_bin "$(basename "$t")" "$t"
    done
}

golden() { # golden BUILD LABEL: tests/cli/NAME.tcj against NAME.out / NAME.status
    bin="$(cd "$1" && pwd)/tcjoin"
    for script in tests/cli/*.tcj; do
        [ -f "$script" ] || continue
        name=${script%.tcj}
        db=$(mktemp -u /tmp/tcjoin-golden-XXXXXX.db)
        args=""
        [ -f "$name.args" ] && args=$(cat "$name.args")
        want_status=0
        [ -f "$name.status" ] && want_status=$(cat "$name.status")
        # shellcheck disable=SC2086
        (cd tests/cli && "$bin" --db "$db" $args "$(basename "$script")" </dev/null \
            >"$log" 2>&1)
        status=$?
        sed -E -f tests/cli/normalize.sed "$log" >"$log.n"
        if [ "$status" != "$want_status" ]; then
            fail=$((fail + 1))
            echo "$2cli $(basename "$name"): exit $status, expected $want_status"; head -n 20 "$log"
        elif ! diff -u "$name.out" "$log.n" >"$log.diff"; then
            fail=$((fail + 1))
            echo "$2cli $(basename "$name"): output differs"; head -n 40 "$log.diff"
        else
            pass=$((pass + 1))
        fi
        rm -f "$db" "$db-wal" "$db-shm"
    done
}

scripts() { # scripts BUILD LABEL: tests/cli/*.sh BUILD/tcjoin, each exits 0 pass, 77 skip, else fail
    for t in tests/cli/*.sh; do
        [ -f "$t" ] || continue
        sh "$t" "$1/tcjoin" >"$log" 2>&1
        rc=$?
        if [ $rc -eq 0 ]; then pass=$((pass + 1))
        elif [ $rc -eq 77 ]; then skip=$((skip + 1)); echo "$2cli $(basename "$t"): $(tail -n 1 "$log")"
        else fail=$((fail + 1)); echo "$2cli $(basename "$t"): failed"; tail -n 30 "$log"; fi
    done
}

terminal() { # tests/ui/*.sh: each exits 0 pass, 77 skip, else fail
    for t in tests/ui/*.sh; do
        [ -f "$t" ] || continue
        sh "$t" "$1/tcjoin" >"$log" 2>&1
        rc=$?
        if [ $rc -eq 0 ]; then pass=$((pass + 1))
        elif [ $rc -eq 77 ]; then skip=$((skip + 1)); echo "$(basename "$t"): skipped: $(tail -n 1 "$log")"
        else fail=$((fail + 1)); echo "$(basename "$t"): failed"; tail -n 30 "$log"; fi
    done
}

# Faults: tests/faults/*.sh BUILD, each bounded; exit 0 pass,
# 77 skip, else fail. lib.sh is what they share, not a test.
faults() {
    for t in tests/faults/*.sh; do
        [ -f "$t" ] && [ "$(basename "$t")" != lib.sh ] || continue
        timeout 180 sh "$t" "$1" >"$log" 2>&1
        rc=$?
        if [ $rc -eq 0 ]; then pass=$((pass + 1))
        elif [ $rc -eq 77 ]; then skip=$((skip + 1)); echo "$2faults $(basename "$t"): skipped: $(tail -n 1 "$log")"
        else fail=$((fail + 1)); echo "$2faults $(basename "$t"): failed"; tail -n 30 "$log"; fi
    done
}

builds() { # tests/build/*.sh: the Makefile's rules and scripts/deps.sh; exit 0 pass, else fail
    for t in tests/build/*.sh; do
        if sh "$t" >"$log" 2>&1; then pass=$((pass + 1))
        else fail=$((fail + 1)); echo "build $(basename "$t"): failed"; grep -A5 '^not ok' "$log"; fi
    done
}

layers() { # tests/layers.sh: includes, ui/ through store.h and gpu_status.h, no circles
    if sh tests/layers.sh >"$log" 2>&1; then pass=$((pass + 1))
    else fail=$((fail + 1)); echo "layers: failed"; tail -n 30 "$log"; fi
}

docs() { # tests/docs.sh: the names the docs give exist; it fails on planted stale names
    if sh tests/docs.sh >"$log" 2>&1 && sh tests/docs.sh --self-test >>"$log" 2>&1; then pass=$((pass + 1))
    else fail=$((fail + 1)); echo "docs: failed"; tail -n 30 "$log"; fi
}

# MPI: tcjoin-mpi under mpirun -np 2 and 3 against one process
# (tests/mpi/run.sh prints ok/not ok/skip lines; "skip - no mpirun" here
# without MPI).
mpi() {
    timeout 300 sh tests/mpi/run.sh "$1" >"$log" 2>"$log.err"
    rc=$?
    count "$2mpi"
    if [ $rc -ne 0 ]; then
        fail=$((fail + 1))
        echo "$2mpi: exit $rc"; tail -n 20 "$log.err"
    fi
}

pymodule() { # tests/python/run.sh: the Python module under pytest, a line a test
    timeout 900 sh tests/python/run.sh "$1" >"$log" 2>"$log.err"
    count "python"
    grep -q '^not ok' "$log" && tail -n 60 "$log.err"
}

fuzzing() { # each libFuzzer harness for a few seconds (make fuzz runs them longer)
    if ! make -s fuzz-available 2>/dev/null; then
        echo "skip - fuzz: no clang with libFuzzer here (make fuzz-available)" >"$log"
        count "fuzz"
        return
    fi
    if ! make -s -j2 fuzz-build >"$log.err" 2>&1; then
        fail=$((fail + 1))
        echo "fuzz: the harnesses do not build"; tail -n 20 "$log.err"
        return
    fi
    sh tests/fuzz/run.sh build-fuzz "${FUZZ_SECONDS:-6}" >"$log" 2>"$log.err"
    count "fuzz"
    grep -q '^not ok' "$log" && tail -n 30 "$log.err"
}

layers
docs
builds
units "$plain" ""
gpu "$plain"
golden "$plain" ""
scripts "$plain" ""
terminal "$plain"
faults "$plain" ""
mpi "$plain" ""
pymodule "$plain"
fuzzing
if [ -n "$san" ]; then
    units "$san" "asan:"
    golden "$san" "asan:"
    scripts "$san" "asan:"
fi
rm -f "$log" "$log.err" "$log.n" "$log.diff"
echo "$pass passed, $fail failed, $skip skipped"
[ $fail -eq 0 ]
