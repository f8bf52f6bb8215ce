#!/bin/sh
# Which architectures the kernels are compiled for, read from make -n in a
# temporary BUILD with a stand-in nvcc that make -n never runs (so the
# test needs no CUDA):
#   1. make test without a GPU (HAVE_GPU empty), SM not given: one
#      architecture, sm_90a, for the kernels and the ladder;
#   2. make all without a GPU, and make test with one: the fat binary
#      (sm_80, sm_86, sm_89, sm_90a, sm_90);
#   3. SM given (command line or environment): make test honours it;
#   4. kernel objects compiled for one SM list are not reused for another:
#      with objects newer than their sources, make -q calls them up to date
#      for the list their stamp holds and out of date for any other list or
#      without a stamp;
#   5. make test without a GPU keeps the list the kernel objects hold
#      (after a plain `make`, nothing is compiled again);
#   6. make test's sanitized build makes only what tests/run.sh runs under
#      the sanitizers (tcjoin, the unit tests and the fault programs some
#      of them start), not the GPU tests or tcjoin-mpi: the goal make test
#      gives that build, made with make -n in another temporary BUILD.
# Exit 0 pass, 1 fail.
# usage: sh tests/build/test_sm.sh
set -u
cd "$(dirname "$0")/../.." || exit 1
# make here must not inherit a calling make's flags or a user's settings
unset MAKEFLAGS MFLAGS MAKELEVEL SM CPU_ONLY KOBJ_BUILD NVFLAGS SAN BUILD
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
b=$tmp/b
fake=$tmp/cuda/bin/nvcc
fail=0
FAT="sm_80 sm_86 sm_89 sm_90a sm_90"
mk() { make --no-print-directory NVCC="$fake" BUILD="$b" "$@"; }
say() { # say OK|FAIL TEXT
    if [ "$1" = OK ]; then echo "ok: $2"; else echo "not ok: $2"; fail=1; fi
}
archs() { # archs FILE.cu: the code=sm_XX list of FILE.cu's nvcc line in $tmp/n
    grep -- "$fake .* $1\$" "$tmp/n" | head -n 1 | grep -o 'code=sm_[0-9a]*' | sed 's/code=//' | tr '\n' ' ' |
        sed 's/ $//'
}
expect() { # expect CASE FILE.cu WANT
    got=$(archs "$2")
    [ "$got" = "$3" ] && say OK "$1: $2 for '$got'" || say FAIL "$1: $2 for '$got', expected '$3'"
}

mk -n HAVE_GPU= test >"$tmp/n" 2>&1
expect "make test, no GPU" kernels/fasted.cu sm_90a
expect "make test, no GPU" kernels/exact.cu sm_90a
expect "make test, no GPU" kernels/ladder/r01_naive.cu sm_90a

mk -n HAVE_GPU= all >"$tmp/n" 2>&1
expect "make, no GPU" kernels/fasted.cu "$FAT"
mk -n HAVE_GPU=1 test >"$tmp/n" 2>&1
expect "make test, a GPU" kernels/fasted.cu "$FAT"

mk -n HAVE_GPU= SM=86 test >"$tmp/n" 2>&1
expect "make test SM=86, no GPU" kernels/fasted.cu sm_86
SM="89 90" mk -n HAVE_GPU= test >"$tmp/n" 2>&1
expect "SM='89 90' make test, no GPU" kernels/fasted.cu "sm_89 sm_90a sm_90"

# 4. objects newer than every source, then the stamp's list against others
mkdir -p "$b/obj/kernels"
obj=$b/obj/kernels/fasted.o
touch "$obj"
mk -q SM=90a "$obj" >/dev/null 2>&1
rc=$?
[ $rc -eq 1 ] && say OK "no stamp: fasted.o out of date" || say FAIL "no stamp: make -q exit $rc, expected 1"
echo 90a >"$b/obj/kernels/sm-list"
touch -d '-1 hour' "$b/obj/kernels/sm-list"
mk -q SM=90a "$obj" >/dev/null 2>&1
rc=$?
[ $rc -eq 0 ] && say OK "stamp 90a, SM=90a: fasted.o up to date" ||
    say FAIL "stamp 90a, SM=90a: make -q exit $rc, expected 0"
for sm in 90 "80 86 89 90" "90a 80"; do
    mk -q SM="$sm" "$obj" >/dev/null 2>&1
    rc=$?
    [ $rc -eq 1 ] && say OK "stamp 90a, SM='$sm': fasted.o out of date" ||
        say FAIL "stamp 90a, SM='$sm': make -q exit $rc, expected 1"
done

# 5. after `make` (the fat list) make test compiles nothing again
echo "80 86 89 90" >"$b/obj/kernels/sm-list"
touch -d '-1 hour' "$b/obj/kernels/sm-list"
touch "$obj"
mk -n HAVE_GPU= test >"$tmp/n" 2>&1
expect "make test after make, no GPU" kernels/fasted.cu ""
expect "make test after make, no GPU" kernels/exact.cu "$FAT"

# 6. the sanitized build's goal, as make test's recipe names it
goal=$(mk -n HAVE_GPU= test 2>/dev/null | sed -n 's/.* SAN=1 .* \([^ ]*\)$/\1/p' | head -n 1)
s=$tmp/s
make --no-print-directory -n CPU_ONLY=1 MPICC=mpicc-never-run BUILD="$s" SAN=1 "${goal:-none}" >"$tmp/n" 2>&1
t=$(grep -c -- "-o $s/tests/t_" "$tmp/n")
units=$(ls tests/unit/t_*.c | wc -l)
other=$(grep -c -- "-o $s/tests/g_\|-o $s/tcjoin-mpi" "$tmp/n")
# the fault programs (sqlite only) are what unit tests start beside them
faults=$(ls tests/faults/f_*.c | wc -l)
f=$(grep -c -- "-o $s/tests/f_" "$tmp/n")
if [ "$t" -eq "$units" ] && [ "$f" -eq "$faults" ] && grep -q -- "-o $s/tcjoin " "$tmp/n" &&
    [ "$other" -eq 0 ]; then
    say OK "sanitized build ($goal): tcjoin, $t unit tests and $f fault programs, nothing else linked"
else
    say FAIL "sanitized build (${goal:-no goal found}): $t of $units unit tests, $f of $faults fault programs, $other GPU or MPI programs"
fi
exit $fail
