#!/bin/sh
# Acceptance test of the dashboard in a real terminal (tmux): load a shared
# dataset, kdist, run cpu, compare cpu-fp16 cpu, precisions, sweep, resize, cancel a long run,
# quit; after each step assert what the panels show, then that the session
# log holds the runs. Exit 0 pass, 77 skip (reason on the last line), else
# fail with the captured screen.
# usage: tests/ui/dashboard.sh BUILD/tcjoin
set -u
bin=${1:-build/tcjoin}
case $bin in /*) ;; *) bin=$(pwd)/$bin ;; esac
here=$(cd "$(dirname "$0")/../.." && pwd)
data=${TCJOIN_DATASETS:-$(cd "$here/.." && pwd)/shared/datasets}

if ! command -v tmux >/dev/null 2>&1; then
    echo "skipped: tmux is not installed"
    exit 77
fi
if ! command -v sqlite3 >/dev/null 2>&1; then
    echo "skipped: sqlite3 (the shell) is not installed"
    exit 77
fi
[ -x "$bin" ] || { echo "no binary at $bin"; exit 1; }
[ -f "$data/letter.csv" ] || { echo "skipped: no $data/letter.csv"; exit 77; }

tmp=$(mktemp -d)
db=$tmp/session.db
sock=tcjoin-ui-test-$$
t="tmux -L $sock"
screen=$tmp/screen.txt
step=start

cleanup() { $t kill-server >/dev/null 2>&1; rm -rf "$tmp"; }
trap cleanup EXIT

# capture: the screen once it has settled (two captures 0.1 s apart the
# same, at most 5 tries): a capture in the middle of a redraw (after a
# resize, on a loaded machine) showed half a screen.
capture() {
    $t capture-pane -p -t ui >"$screen" 2>/dev/null
    tries=0
    while [ $tries -lt 5 ]; do
        sleep 0.1
        $t capture-pane -p -t ui >"$screen.next" 2>/dev/null
        cmp -s "$screen" "$screen.next" && return 0
        mv "$screen.next" "$screen"
        tries=$((tries + 1))
    done
}

fail() {
    echo "FAIL at step '$step': $*"
    echo "---- screen ----"
    capture
    cat "$screen"
    echo "----------------"
    if [ -s "$tmp/stderr" ]; then
        echo "---- stderr ----"
        head -n 40 "$tmp/stderr"
    fi
    echo "FAIL at step '$step': $*" # again: the runner shows the last lines
    exit 1
}

# Waits scale with the load: on 2 cores shared with builds a step takes
# several times its idle time. The factor is the load per CPU (at least 1,
# at most 8), read at each wait; TCJOIN_UI_WAIT_SCALE overrides it.
wait_scale() {
    if [ -n "${TCJOIN_UI_WAIT_SCALE:-}" ]; then
        echo "$TCJOIN_UI_WAIT_SCALE"
        return
    fi
    awk -v n="$(nproc 2>/dev/null || echo 1)" \
        '{ s = int($1 / n + 0.999); print (s < 1 ? 1 : s > 8 ? 8 : s) }' /proc/loadavg 2>/dev/null ||
        echo 1
}

# wait_for REGEX [SECONDS]: until the screen shows it (SECONDS on an idle
# machine, times wait_scale).
wait_for() {
    n=$(( ${2:-20} * 5 * $(wait_scale) ))
    while [ $n -gt 0 ]; do
        capture
        grep -Eq -- "$1" "$screen" && return 0
        sleep 0.2
        n=$((n - 1))
    done
    fail "screen never showed /$1/"
}

# shows REGEX: the current screen holds it (no waiting).
shows() { grep -Eq -- "$1" "$screen" || fail "screen does not show /$1/"; }
hides() { grep -Eq -- "$1" "$screen" && fail "screen still shows /$1/"; return 0; }

# idle: the command finished (the prompt is back, nothing running).
idle() {
    n=$(( ${1:-60} * 5 * $(wait_scale) ))
    while [ $n -gt 0 ]; do
        capture
        if tail -n 1 "$screen" | grep -Eq '^tcjoin( \[.*\])?> *$' &&
            ! grep -q 'Esc cancels' "$screen"; then
            return 0
        fi
        sleep 0.2
        n=$((n - 1))
    done
    fail "the command did not finish"
}

type_line() { $t send-keys -t ui -l "$1"; $t send-keys -t ui Enter; }

step=start
$t new-session -d -s ui -x 120 -y 40 \
    "cd '$tmp' && TERM=screen TCJOIN_HISTORY='$tmp/history' '$bin' --db '$db' 2>'$tmp/stderr'; echo tcjoin-exited-\$?; sleep 60"
$t set-option -t ui -g window-size manual >/dev/null 2>&1
wait_for 'F10 log'
wait_for '^tcjoin>'
capture
for p in 'F2 dataset' 'F3 runs' 'F4 compare' 'F5 selectivity' 'F6 error histogram' \
    'F7 counters' 'F8 clocks' 'F9 k-distance' 'F10 log' 'F12 precision lab'; do
    shows "$p"
done
shows 'no dataset'
shows 'no k-distance: kdist K'
shows 'no lab: precisions'

step=load
type_line "load $data/letter.csv cols=1-16 limit=3000"
idle
shows 'letter.csv'
shows 'n=3000 d=16'
shows 'range \[0, 15\]'
shows 'fp16 ok'

step=kdist
# The k-distance curve has its own panel, titled with the dataset, K and
# engine, the knee marked O; the selectivity panel stays as it was.
type_line "kdist 4 engine=cpu"
idle 60
shows '│letter\.csv\[0:3000\]: 4-dist, cpu \(minPts 5\)'
shows '│knee \(O\) eps [0-9.]+ at rank [0-9]+ of 3000'
shows 'no curve: curve or sweep S'

step=run
type_line "eps 3"
idle
type_line "run cpu"
idle 120
# runs panel row: id engine eps S time TFLOPS
grep -Eq '│ +1 cpu +3 ' "$screen" || fail "runs panel has no row for run 1 (cpu, eps 3)"
shows 'run 1: cpu on letter.csv'

step=compare
type_line "compare cpu-fp16 cpu"
idle 180
shows 'cpu-fp16 vs cpu on letter.csv'
# letter's values are small integers, exact in FP16: the emulation agrees,
# and an all-zero error reads "no error", not a wall of bars.
shows 'overlap 1\.000000'
shows 'only A 0  only B 0'
shows 'err min 0 max 0: no error'
shows '│no error '
grep -Eq '\|#' "$screen" && fail "an all-zero error drew bars"
# The runs panel lists the comparison's two runs above run 1.
grep -Eq '│ +2 cpu-fp16 ' "$screen" || fail "runs panel lacks run 2 (cpu-fp16)"

step=lab
# The precision lab: each format a point labelled with its name, kernel
# time across and 1 - overlap up. letter's small integers are exact in
# fp16 and ue4m4 alike (overlap 1), so both sit on the axis floor, which
# the panel names.
type_line "precisions cpu fp16 ue4m4"
idle 180
shows '│lab 1: letter\.csv\[0:3000\] eps 3 vs cpu'
grep -Eq 'o fp16|fp16 o' "$screen" || fail "the lab panel has no fp16 point"
grep -Eq 'o ue4m4|ue4m4 o' "$screen" || fail "the lab panel has no ue4m4 point"
shows 'y 1-overlap; on 1\.0e-06: overlap 1'

step=wide-160x48
# At 160 columns the runs panel shows a 12-character engine name whole,
# and the k-distance panel marks the current eps (eps 3) beside the knee.
$t resize-window -t ui -x 160 -y 48
wait_for 'F9 k-distance'
type_line "run cpu-fp8-e4m3"
idle 120
grep -Eq '│ +[0-9]+ cpu-fp8-e4m3 +3 ' "$screen" || fail "runs panel cut the engine name cpu-fp8-e4m3"
shows 'eps now 3 \(- -\)'
# The lab header keeps the threshold's digits (0.9999, not 1).
type_line "precisions cpu fp16 bf16"
idle 180
shows 'fastest with overlap >= 0\.9999: (fp16|bf16)'
$t resize-window -t ui -x 120 -y 40
wait_for 'F10 log'

step=sweep
if "$bin" --db "$tmp/probe.db" -e 'help sweep' >/dev/null 2>&1; then
    type_line "sweep 16 engine=cpu"
    idle 180
    shows 'sweep S=16'
    hides 'no curve'
fi

step=resize-small
$t resize-window -t ui -x 80 -y 24
wait_for 'F10 log'
capture
hides 'too small'
shows 'F2 dataset'
shows 'F3 runs'
shows 'F4 compare'
tail -n 1 "$screen" | grep -Eq '^tcjoin( \[.*\])?>' || fail "no prompt on the last line at 80x24"
[ "$(wc -L <"$screen")" -le 80 ] || fail "lines wider than 80 at 80x24"

# The status line is a whole form of the key help, not one cut at 80.
tail -n 2 "$screen" | head -n 1 | grep -Eq 'quit *$' || fail "the status line is cut at 80 columns"
# A plot slot too short for its plot says how to see it.
$t send-keys -t ui F9
sleep 0.3
capture
grep -q 'too small to plot: F9, F11 zooms' "$screen" ||
    grep -Eq '\|.*\*' "$screen" || fail "the k-distance slot neither plots nor says how to zoom"

step=focus-and-zoom
# Tab on an empty line moves the focus; F11 zooms the focused panel.
$t send-keys -t ui F7
wait_for 'F7 counters'
$t send-keys -t ui F11
wait_for 'F7 counters \(zoom\)'
capture
hides 'F3 runs'
shows 'F10 log'
$t send-keys -t ui Escape
wait_for 'F3 runs'
# F12 (F11 zooms) brings the lab into the shared slot.
$t send-keys -t ui F12
wait_for 'F12 precision lab'
capture
shows 'lab [0-9]+: letter'

step=no-gpu-lines
# Without a CUDA device the counters and clocks panels are one line each,
# at the bottom of the body, and say why they are empty.
if [ ! -e /proc/driver/nvidia/version ] && [ ! -e /dev/nvidia0 ]; then
    $t send-keys -t ui F10
    sleep 0.3
    capture
    tail -n 4 "$screen" | head -n 1 | grep -q '^ F7 counters N/A: ' || fail "counters is not one line"
    tail -n 3 "$screen" | head -n 1 | grep -q '^ F8 clocks & power N/A: no CUDA device here' ||
        fail "clocks is not one line"
fi

step=resize-large
$t resize-window -t ui -x 200 -y 50
wait_for 'F8 clocks'
capture
for p in 'F2 dataset' 'F3 runs' 'F4 compare' 'F5 selectivity' 'F6 error histogram' \
    'F7 counters' 'F9 k-distance' 'F10 log' 'F12 precision lab'; do
    shows "$p"
done
shows 'cpu-fp16 vs cpu'

step=tiny
$t resize-window -t ui -x 40 -y 6
wait_for 'too small'
$t resize-window -t ui -x 120 -y 40
wait_for 'F5 selectivity'

step=new-dataset
# Another dataset clears the results of the old one; a comparison with real
# errors draws its histogram over the errors observed.
type_line "gen uniform n=2000 d=8 seed=3"
idle 60
shows 'no comparison: compare A B'
shows 'no histogram: compare A B'
shows 'no curve: curve or sweep S'
shows 'no k-distance: kdist K'
shows 'no lab: precisions'
type_line "eps 0.4"
idle
type_line "compare cpu-fp16 cpu"
idle 120
shows 'cpu-fp16 vs cpu on uniform-n2000-d8-s3'
shows 'dist cpu-fp16 - cpu, log count'
shows '│uniform-n2000-d8-s3 eps 0\.4 '
grep -Eq 'err min -[0-9.e-]+ max [0-9.e-]+ ' "$screen" || fail "no min and max error"
grep -Eq '\|#' "$screen" || fail "error histogram has no bars"

step=typeahead
# The typeahead and cancel steps need joins that run for seconds: brute
# force (the CPU engines' grid index would finish those in a blink).
type_line "set cpu-index off"
idle
shows '│cpu-index off'
# 160k points (about 4x the 80k this step first used): the two lines typed
# after the run shows its Esc line must land while it runs, and at 80k a
# fast machine finished the run first now and then.
type_line "gen uniform n=160000 d=4 seed=2"
idle 60
type_line "eps 0.05"
idle
# The prompt and the dataset panel name the data and the eps.
tail -n 1 "$screen" | grep -q '^tcjoin \[uniform-n160000-d4-s2 eps=0.05\]> *$' ||
    fail "the prompt does not name the dataset and eps"
shows '│eps 0\.05 '
type_line "run cpu"
wait_for 'Esc cancels' 30
# Typed (or pasted) during the run: queued, shown, run in order after it.
type_line "eps 0.06"
type_line "info"
wait_for 'queued 2: eps 0\.06; info' 10
idle 180
tail -n 1 "$screen" | grep -q '^tcjoin \[uniform-n160000-d4-s2 eps=0.06\]> *$' ||
    fail "the queued eps 0.06 did not run"
# info ran after eps 0.06 (its bound line names the eps it was given)
shows 'bound +at eps 0\.06,'
last=$(sqlite3 "$db" "select group_concat(line, '|') from (select line from commands order by id desc limit 3 ) " )
[ "$last" = "info|eps 0.06|run cpu" ] || fail "queued lines did not run in order after the run: $last"
hides 'queued'

step=cancel
# A join long enough to need the cancel key: 400k uniform points.
type_line "gen uniform n=400000 d=8 seed=1"
idle 60
type_line "eps 0.05"
idle
type_line "run cpu"
wait_for 'Esc cancels' 30
wait_for '\] +[0-9]+% cpu' 30
# Esc cancels the run and drops what was typed ahead.
type_line "eps 0.9"
wait_for 'queued 1: eps 0\.9' 10
$t send-keys -t ui Escape
wait_for 'cancelled' 10
idle 10
shows '│run cpu: cancelled'
hides 'error: run cpu: cancelled'
shows 'dropped what was typed ahead \(1 line\)'
grep -Eq '│ +[0-9]+ cpu +0\.05 +cancelled' "$screen" || fail "the runs panel does not say cancelled"
tail -n 1 "$screen" | grep -q 'eps=0.05\]> *$' || fail "the dropped eps 0.9 ran"

step=quit
type_line "quit"
wait_for 'tcjoin-exited-0' 10
[ -s "$tmp/stderr" ] && fail "stderr not empty: $(head -c 300 "$tmp/stderr")"

step=store
ok=$(sqlite3 "$db" "select count(*) from runs where engine='cpu' and status=0")
fp=$(sqlite3 "$db" "select count(*) from runs where engine='cpu-fp16' and status=0")
cancelled=$(sqlite3 "$db" "select count(*) from runs where status<>0 and n=400000")
cmps=$(sqlite3 "$db" "select count(*) from comparisons")
# compare reuses the run of `run cpu` (same data, eps and options)
[ "${ok:-0}" -ge 1 ] || fail "session log has $ok ok cpu runs, expected at least 1"
[ "${fp:-0}" -ge 1 ] || fail "session log has no cpu-fp16 run"
[ "${cancelled:-0}" -ge 1 ] || fail "the cancelled run is not in the session log"
[ "${cmps:-0}" -ge 1 ] || fail "the comparison is not in the session log"
labs=$(sqlite3 "$db" "select count(*) from labs where ended is not null")
labrows=$(sqlite3 "$db" "select count(*) from lab_rows where status = 'ok' and comparison_id is not null")
[ "${labs:-0}" -eq 2 ] && [ "${labrows:-0}" -eq 4 ] || fail "the lab is not in the session log ($labs, $labrows)"
pairs=$(sqlite3 "$db" "select pairs from runs where id=1")
[ -n "$pairs" ] && [ "$pairs" -gt 3000 ] || fail "run 1 pairs '$pairs' not above n"
echo "dashboard: all steps passed"
exit 0
