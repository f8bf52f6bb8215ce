#!/bin/sh
# tcjoin-mpi against one process, on the CPU engines: the
# commands of session.tcj at mpirun -np 2 and -np 3 give rank 0 the output
# one process gives (times, devices and variants aside), the same
# per-point counts file and curve CSV, pair files whose union is the
# one-process pair set, and a log with one session and each join's ranks;
# a rank failing in a run gives one line naming it and a failed run in
# the log; a rank killed in a run leaves the run failed in the log; a
# stopped rank is named by the rank that waits for it, and the job goes on
# when it is continued; Ctrl-C on rank 0 ends a job that a stopped rank
# holds; an MPI error fails the run with its reason and ends the job.
# Prints "ok - ", "not ok - " or "skip - " lines (tests/run.sh counts them).
# usage: tests/mpi/run.sh BUILD
set -u
cd "$(dirname "$0")/../.." || exit 2
build=$(cd "${1:-build}" && pwd)
here=$(pwd)
if ! command -v mpirun >/dev/null 2>&1; then
    echo "skip - no mpirun"
    exit 0
fi
if [ ! -x "$build/tcjoin-mpi" ]; then
    echo "skip - no $build/tcjoin-mpi (no mpicc when it was built)"
    exit 0
fi
# Root in a container (CI), more ranks than cores (CI has 2): the flags
# each MPI needs. MPICH's mpiexec takes neither.
flags=""
xenv="" # how an environment variable reaches every rank (MPICH: all do)
xwait=""
if mpirun --version 2>/dev/null | grep -q "Open MPI"; then
    flags="--oversubscribe"
    xenv="-x TCJOIN_MPI_FAULT"
    xwait="-x TCJOIN_MPI_WAIT"
    [ "$(id -u)" -eq 0 ] && flags="$flags --allow-run-as-root"
    # No network probing in a container: shared memory and loopback.
    export OMPI_MCA_btl="self,vader,tcp" OMPI_MCA_btl_tcp_if_include=lo \
        OMPI_MCA_oob_tcp_if_include=lo OMPI_MCA_btl_vader_single_copy_mechanism=none
fi
fdb="$build/tests/f_db"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

ok() { echo "ok - $1"; }
notok() {
    echo "not ok - $1"
    shift
    for f in "$@"; do [ -f "$f" ] && head -n 30 "$f"; done
}
check() { # check NAME CONDITION-COMMAND...
    name=$1
    shift
    if "$@" >/dev/null 2>&1; then ok "$name"; else notok "$name"; fi
}

# What changes from run to run or from one process to several: times,
# rates, devices, variants, the reused-run lines of one process.
# What the ranks do differently by design is not compared: timings, and
# the joins `dbscan curve` takes (one process also decides rounds from
# each point's cheapest edges between joins, src/cluster/dbscan_curve.c, and
# takes its core distances and first round from one join at max keeping
# each point's nearest, src/cluster/curve_knn.h; the ranks from the k-distance).
norm() {
    sed -E -f "$here/tests/cli/normalize.sed" "$1" |
        sed -E 's/^(  time|  derived|    convert|    compute|    sink).*//; s/ in [0-9.]+ s//;
            s/[0-9.]+ s\b/<T>/g; s/[0-9.e+-]+ pairs\/s/<R> pairs\/s/g; s/[0-9]{4}-[0-9]{2}-[0-9]{2}T[^)]*//;
            s/[0-9]+ joins? at max/<N> joins at max/;
            s/ from the join at max, each point.s [0-9]+ nearest;/;/'
}
pairset() { # the pairs of u32 pair files as sorted text lines
    cat "$@" | od -An -tu4 -w8 -v | sort
}
# rank_pid WORD RANK: the pid of the tcjoin-mpi of that rank (its
# environment says which: Open MPI, MPICH) whose arguments hold WORD.
rank_pid() {
    for p in $(ps -eo pid=,args= | awk '$2 ~ /tcjoin-mpi$/ {print $1}'); do
        if tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null |
            grep -qx "OMPI_COMM_WORLD_RANK=$2\|PMI_RANK=$2"; then
            case " $(ps -o args= -p "$p") " in *"$1"*) echo "$p" && return ;; esac
        fi
    done
}
# wait_for FILE PATTERN TENTHS: whether PATTERN shows in FILE within TENTHS
# tenths of a second.
wait_for() {
    i=0
    while [ "$i" -lt "$3" ]; do
        grep -q "$2" "$1" 2>/dev/null && return 0
        sleep 0.1
        i=$((i + 1))
    done
    return 1
}

mkdir "$tmp/one"
cp tests/mpi/session.tcj "$tmp/one/"
(cd "$tmp/one" && "$build/tcjoin" --db one.db session.tcj >out 2>&1)
norm "$tmp/one/out" >"$tmp/one/out.n"
pairset "$tmp/one/pairs.bin" >"$tmp/one/p32"
pairset "$tmp/one/pairs16.bin" >"$tmp/one/p16"
pairset "$tmp/one/pairs3.bin" >"$tmp/one/p3"
runs_one=$("$fdb" count "$tmp/one/one.db" runs)

for np in 2 3; do
    d="$tmp/np$np"
    mkdir "$d"
    cp tests/mpi/session.tcj "$d/"
    # shellcheck disable=SC2086
    (cd "$d" && timeout 120 mpirun $flags -np $np "$build/tcjoin-mpi" --db log.db session.tcj \
        >out 2>err)
    rc=$?
    if [ $rc -ne 0 ]; then
        notok "np $np: session.tcj exit $rc" "$d/out" "$d/err"
        continue
    fi
    norm "$d/out" >"$d/out.n"
    if diff -u "$tmp/one/out.n" "$d/out.n" >"$d/diff"; then
        ok "np $np: every command's output equals one process's (run, kdist, sweep, curve, compare, precisions, dbscan, dbscan compare, dbscan curve)"
    else
        notok "np $np: output differs from one process's" "$d/diff"
    fi
    check "np $np: per-point counts file equal" cmp "$tmp/one/counts.txt" "$d/counts.txt"
    check "np $np: per-point counts file equal (grid index, cpu-fp16)" cmp "$tmp/one/counts3.txt" "$d/counts3.txt"
    check "np $np: curve CSV (a histogram pass) equal" cmp "$tmp/one/curve.csv" "$d/curve.csv"
    # DBSCAN: each rank's forest from its share of the pairs, merged; the
    # border labels reduced. Labels byte for byte (their counts are in the
    # output compared above).
    check "np $np: dbscan labels equal (cpu)" cmp "$tmp/one/labels.txt" "$d/labels.txt"
    check "np $np: dbscan labels equal (cpu-fp16, minpts 12)" cmp "$tmp/one/labels16.txt" "$d/labels16.txt"
    check "np $np: dbscan labels equal (grid index)" cmp "$tmp/one/labels3.txt" "$d/labels3.txt"
    check "np $np: no labels file from another rank" test ! -e "$d/labels.txt.1"
    files=""
    for r in $(seq 0 $((np - 1))); do files="$files $d/pairs.bin.$r"; done
    # shellcheck disable=SC2086
    pairset $files >"$d/p32"
    check "np $np: union of the rank files is the pair set (cpu)" cmp "$tmp/one/p32" "$d/p32"
    files=""
    for r in $(seq 0 $((np - 1))); do files="$files $d/pairs16.bin.$r"; done
    # shellcheck disable=SC2086
    pairset $files >"$d/p16"
    check "np $np: union of the rank files is the pair set (cpu-fp16)" cmp "$tmp/one/p16" "$d/p16"
    files=""
    for r in $(seq 0 $((np - 1))); do files="$files $d/pairs3.bin.$r"; done
    # shellcheck disable=SC2086
    pairset $files >"$d/p3"
    check "np $np: union of the rank files is the pair set (grid index)" cmp "$tmp/one/p3" "$d/p3"
    check "np $np: no pairs.bin itself, only the rank files" test ! -e "$d/pairs.bin"
    want=$(wc -l <"$tmp/one/p32")
    if grep -q "^ranks $np\$" "$d/pairs.bin.manifest" &&
        grep -q "^pairs $want\$" "$d/pairs.bin.manifest" &&
        [ "$(grep -c '^file pairs.bin\.' "$d/pairs.bin.manifest")" -eq "$np" ]; then
        ok "np $np: manifest names $np files and $want pairs"
    else
        notok "np $np: manifest" "$d/pairs.bin.manifest"
    fi
    check "np $np: one session in the log (rank 0's)" test "$("$fdb" count "$d/log.db" sessions)" -eq 1
    check "np $np: as many runs logged as one process logs" test "$("$fdb" count "$d/log.db" runs)" -eq "$runs_one"
    # every join stored by run (10) and compare and precisions has its ranks
    nrr=$("$fdb" count "$d/log.db" run_ranks)
    check "np $np: each run's ranks logged ($nrr rows)" test $((nrr % np)) -eq 0 -a "$nrr" -ge $((np * 10))
    check "np $np: no other log file written" test "$(ls "$d" | grep -c '\.db$')" -eq 1
done

# A rank failing in a run: one line naming it, the run failed in the log,
# the session goes on (the next command runs).
d="$tmp/fail"
mkdir "$d"
# shellcheck disable=SC2086
(cd "$d" && TCJOIN_MPI_FAULT=1:error timeout 60 mpirun $flags $xenv -np 2 \
    "$build/tcjoin-mpi" --db log.db -e 'gen uniform n=4000 d=8 seed=3; eps 0.3; run cpu; info' \
    >out 2>err)
rc=$?
if [ $rc -ne 0 ] && [ "$(grep -c 'error: rank 1 (.*): injected fault' "$d/err")" -eq 1 ] &&
    [ "$(grep -c 'error:' "$d/err")" -eq 1 ] && ! grep -q '^  pairs' "$d/out" &&
    grep -q '^dataset ' "$d/out"; then
    ok "a failing rank: one line naming rank 1, no result, exit $rc"
else
    notok "a failing rank: exit $rc" "$d/out" "$d/err"
fi
"$fdb" failed "$d/log.db" >"$d/failed" 2>&1
if grep -q '^-[0-9]*|rank 1 (.*): injected fault' "$d/failed" && [ "$(wc -l <"$d/failed")" -eq 1 ]; then
    ok "a failing rank: the run is logged as failed, naming rank 1"
else
    notok "a failing rank: the log" "$d/failed"
fi

# A rank killed in a run: mpirun ends the job; rank 0 logs the run failed.
d="$tmp/kill"
mkdir "$d"
# Open MPI: rank 0 gets 5 s (1 s by default; CI is slow) between mpirun's
# SIGTERM and its SIGKILL to log the run.
# shellcheck disable=SC2086
(cd "$d" && TCJOIN_MPI_FAULT=1:kill OMPI_MCA_odls_base_sigkill_timeout=5 timeout 60 \
    mpirun $flags $xenv -np 2 "$build/tcjoin-mpi" \
    --db log.db -e 'gen uniform n=20000 d=8 seed=3; eps 0.3; run cpu; run cpu' >out 2>err)
rc=$?
"$fdb" failed "$d/log.db" >"$d/failed" 2>&1
if [ -z "$xenv" ] && [ $rc -ne 0 ] && [ $rc -ne 124 ] &&
    [ "$("$fdb" count "$d/log.db" runs)" -eq 0 ] && ! grep -q '^  pairs' "$d/out"; then
    # MPICH's hydra kills every rank at once (SIGKILL, no SIGTERM first):
    # the command stays unfinished in the log, and no run is stored.
    ok "a killed rank (MPICH): the job ends (exit $rc), no run stored, no result"
elif [ $rc -ne 0 ] && [ $rc -ne 124 ] && grep -q 'mpirun is stopping every rank' "$d/failed" &&
    [ "$("$fdb" count "$d/log.db" runs)" -eq 1 ] && ! grep -q '^  pairs' "$d/out"; then
    ok "a killed rank: the job ends (exit $rc), the run logged as failed, no result"
else
    notok "a killed rank: exit $rc" "$d/out" "$d/err" "$d/failed"
fi

# Ctrl-C on rank 0 in the middle of a run: every rank stops within a
# second or two (not at the end of its range), the run is logged as
# cancelled, the batch exits 130.
d="$tmp/sigint"
mkdir "$d"
# shellcheck disable=SC2086
(cd "$d" && exec timeout 120 mpirun $flags -np 2 "$build/tcjoin-mpi" --db log.db \
    -e 'gen uniform n=60000 d=64 seed=3; eps 3; run cpu' >out 2>err) &
job=$!
rank0=""
i=0
while [ $i -lt 300 ] && ! grep -q '^eps 3' "$d/out" 2>/dev/null; do sleep 0.1; i=$((i + 1)); done
sleep 1
rank0=$(rank_pid log.db 0)
t0=$(date +%s)
[ -n "$rank0" ] && kill -INT "$rank0"
wait $job
rc=$?
dt=$(($(date +%s) - t0))
"$fdb" failed "$d/log.db" >"$d/failed" 2>&1
if [ -n "$rank0" ] && [ $rc -eq 130 ] && [ $dt -le 10 ] && grep -q 'cancelled' "$d/err" &&
    grep -q '^-6|cancelled' "$d/failed"; then
    ok "Ctrl-C on rank 0: every rank stopped in ${dt}s, the run logged cancelled, exit 130"
else
    notok "Ctrl-C on rank 0: pid '$rank0', exit $rc after ${dt}s" "$d/out" "$d/err" "$d/failed"
fi

# A slow rank: rank 1 waits 3 s before it asks for work, and rank 0 takes
# the whole queue meanwhile (a static split would have waited for rank 1's
# half); the pairs are the same.
d="$tmp/slow"
mkdir "$d"
# shellcheck disable=SC2086
(cd "$d" && TCJOIN_MPI_FAULT=1:slow timeout 60 mpirun $flags $xenv -np 2 "$build/tcjoin-mpi" \
    --db log.db -e 'set threads 1; gen gauss n=1500 d=6 clusters=5 sigma=0.3 seed=11; eps 0.35; run cpu mode=pairs out=p.bin' \
    >out 2>err)
rc=$?
pairset "$d/p.bin.0" "$d/p.bin.1" >"$d/p"
if [ $rc -eq 0 ] && cmp -s "$tmp/one/p32" "$d/p" && grep -q '^file p.bin.1 rank 1 .* pairs 0$' "$d/p.bin.manifest"; then
    ok "a slow rank: the fast one took every range, the same pairs"
else
    notok "a slow rank: exit $rc" "$d/out" "$d/err" "$d/p.bin.manifest"
fi

# A rank that fails before the run (its pair file exists there): the others
# meet it at their check-in, the run fails with its one line, rank 0 keeps
# no partial file, and the next command runs on every rank.
d="$tmp/early"
mkdir "$d"
: >"$d/p.bin.1"
# shellcheck disable=SC2086
(cd "$d" && timeout 60 mpirun $flags -np 2 "$build/tcjoin-mpi" --db log.db \
    -e 'gen uniform n=2000 d=8 seed=3; eps 0.3; run cpu mode=pairs out=p.bin; run cpu' >out 2>err)
rc=$?
"$fdb" failed "$d/log.db" >"$d/failed" 2>&1
if [ $rc -eq 1 ] && [ "$(grep -c 'error: rank 1 (.*): p.bin.1: exists' "$d/err")" -eq 1 ] &&
    [ "$(grep -c 'error:' "$d/err")" -eq 1 ] && [ ! -e "$d/p.bin.0" ] &&
    [ "$(grep -c '^  pairs' "$d/out")" -eq 1 ] && grep -q '^-1|rank 1 (.*): p.bin.1: exists' "$d/failed"; then
    ok "a rank failing before the run: one line, the run failed in the log, the session goes on"
else
    notok "a rank failing before the run: exit $rc" "$d/out" "$d/err" "$d/failed"
fi

# A rank stopped in a run (SIGSTOP): the rank that waits for it names it
# in one line once the wait's bound (TCJOIN_MPI_WAIT, 30 s by default;
# 2 s here) has passed, and keeps waiting; continued (SIGCONT), the rank
# finishes its range and the run gives one process's pairs.
d="$tmp/stop"
mkdir "$d"
join='gen uniform n=30000 d=32 seed=3; eps 2'
want=$(cd "$d" && "$build/tcjoin" --db one.db -e "$join; run cpu" 2>&1 | grep '^  pairs ')
# shellcheck disable=SC2086
(cd "$d" && TCJOIN_MPI_WAIT=2 exec timeout -k 5 90 mpirun $flags $xwait -np 3 \
    "$build/tcjoin-mpi" --db "$d/log.db" -e "set threads 1; $join; run cpu" >out 2>err) &
job=$!
wait_for "$d/out" '^eps 2' 300 && sleep 0.5
rank2=$(rank_pid "$d/" 2)
[ -n "$rank2" ] && kill -STOP "$rank2"
t0=$(date +%s)
said=0
wait_for "$d/err" 'waits for rank 2' 300 && said=1
dt=$(($(date +%s) - t0))
sleep 1
[ -n "$rank2" ] && kill -CONT "$rank2"
wait $job
rc=$?
if [ -n "$rank2" ] && [ $said -eq 1 ] &&
    [ "$(grep -c '^tcjoin-mpi: rank 0 waits for rank 2 (no answer for .* s; stopped or lost?)$' "$d/err")" -eq 1 ] &&
    [ "$(grep -c 'waits for' "$d/err")" -eq 1 ]; then
    ok "a stopped rank: rank 0 names rank 2 in one line (${dt}s after the stop)"
else
    notok "a stopped rank: pid '$rank2', no line naming it within 30 s" "$d/out" "$d/err"
fi
if [ $rc -eq 0 ] && [ -n "$want" ] && [ "$(grep '^  pairs ' "$d/out")" = "$want" ]; then
    ok "a stopped rank continued: the job ends, one process's pairs"
else
    notok "a stopped rank continued: exit $rc, want '$want'" "$d/out" "$d/err"
fi

# Rank 0 stopped: rank 1 (and it alone) says so.
d="$tmp/stop0"
mkdir "$d"
# shellcheck disable=SC2086
(cd "$d" && TCJOIN_MPI_WAIT=2 exec timeout -k 5 90 mpirun $flags $xwait -np 3 \
    "$build/tcjoin-mpi" --db "$d/log.db" -e "set threads 1; $join; run cpu" >out 2>err) &
job=$!
wait_for "$d/out" '^eps 2' 300 && sleep 0.5
rank0=$(rank_pid "$d/" 0)
[ -n "$rank0" ] && kill -STOP "$rank0"
said=0
wait_for "$d/err" 'waits for rank 0' 300 && said=1
sleep 1
[ -n "$rank0" ] && kill -CONT "$rank0"
wait $job
rc=$?
if [ -n "$rank0" ] && [ $said -eq 1 ] && [ $rc -eq 0 ] &&
    [ "$(grep -c '^tcjoin-mpi: rank 1 waits for rank 0 (no answer for .* s; stopped or lost?)$' "$d/err")" -eq 1 ] &&
    [ "$(grep -c 'waits for' "$d/err")" -eq 1 ] && [ "$(grep '^  pairs ' "$d/out")" = "$want" ]; then
    ok "rank 0 stopped: one line from rank 1 naming it; continued, the job ends with the pairs"
else
    notok "rank 0 stopped: pid '$rank0', exit $rc" "$d/out" "$d/err"
fi

# A stopped rank, then Ctrl-C on rank 0 (the bound left at 30 s): rank 0
# gives the stopped rank 2 s, says in one line that it ends the job, and
# the job ends; the log keeps the run before, and the run in flight as
# cancelled. The join is nine times the one above (some 10 s of a core a
# rank), so that every rank is still at work when the stop and Ctrl-C
# land a second after it starts, however idle the machine.
d="$tmp/stopint"
mkdir "$d"
long='gen uniform n=90000 d=32 seed=3; eps 2'
# shellcheck disable=SC2086
(cd "$d" && exec timeout -k 5 60 mpirun $flags -np 3 "$build/tcjoin-mpi" --db "$d/log.db" \
    -e "gen uniform n=2000 d=8 seed=3; eps 0.3; run cpu; set threads 1; $long; run cpu" \
    >out 2>err) &
job=$!
wait_for "$d/out" '^eps 2' 300 && sleep 0.5
rank0=$(rank_pid "$d/" 0)
rank2=$(rank_pid "$d/" 2)
[ -n "$rank2" ] && kill -STOP "$rank2"
sleep 0.5
t0=$(date +%s)
[ -n "$rank0" ] && kill -INT "$rank0"
wait $job
rc=$?
dt=$(($(date +%s) - t0))
[ -n "$rank2" ] && kill -CONT "$rank2" 2>/dev/null
"$fdb" failed "$d/log.db" >"$d/failed" 2>&1
if [ -n "$rank0" ] && [ -n "$rank2" ] && [ $rc -ne 0 ] && [ $rc -ne 124 ] && [ $dt -le 10 ] &&
    [ "$(grep -c '^tcjoin-mpi: ' "$d/err")" -eq 1 ] &&
    grep -q '^tcjoin-mpi: no sign from rank 2 for .* after Ctrl-C (stopped or lost?): ending the job$' "$d/err" &&
    [ "$("$fdb" count "$d/log.db" runs)" -eq 2 ] && grep -q '^-6|cancelled$' "$d/failed" &&
    [ "$(wc -l <"$d/failed")" -eq 1 ]; then
    ok "a stopped rank and Ctrl-C on rank 0: one line, the job ends in ${dt}s (exit $rc), the run before kept"
else
    notok "a stopped rank and Ctrl-C on rank 0: exit $rc after ${dt}s" "$d/out" "$d/err" "$d/failed"
fi

# An MPI call that fails (MPI's own error, TCJOIN_MPI_FAULT=RANK:mpi): on
# rank 0 the run fails with MPI's reason in one line and is logged failed;
# on rank 1 that rank says it in one line. The ranks cannot meet again, so
# the job ends either way (MPI_Abort), within seconds.
for r in 0 1; do
    d="$tmp/mpierr$r"
    mkdir "$d"
    # shellcheck disable=SC2086
    (cd "$d" && TCJOIN_MPI_FAULT=$r:mpi timeout -k 5 60 mpirun $flags $xenv -np 2 \
        "$build/tcjoin-mpi" --db log.db -e 'gen uniform n=3000 d=8 seed=3; eps 0.3; run cpu; run cpu' \
        >out 2>err)
    rc=$?
    "$fdb" failed "$d/log.db" >"$d/failed" 2>&1
    if [ $r -eq 0 ]; then
        line='^tcjoin: error: injected fault: MPI error: .* (the ranks cannot meet again)$'
    else
        line='^tcjoin-mpi: rank 1: injected fault: MPI error: .* (the ranks cannot meet again); ending the job$'
    fi
    if [ $rc -ne 0 ] && [ $rc -ne 124 ] && [ "$(grep -c "$line" "$d/err")" -eq 1 ] &&
        [ "$(grep -c 'MPI error' "$d/err")" -eq 1 ] && ! grep -q '^  pairs' "$d/out" &&
        [ "$("$fdb" count "$d/log.db" runs)" -le 1 ] &&
        { [ $r -eq 1 ] || grep -q '^-2|injected fault: MPI error' "$d/failed"; }; then
        ok "an MPI error on rank $r: one line with MPI's reason, the job ends (exit $rc)"
    else
        notok "an MPI error on rank $r: exit $rc" "$d/out" "$d/err" "$d/failed"
    fi
done
