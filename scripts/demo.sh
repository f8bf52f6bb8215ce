#!/bin/sh
# make demo: the main job on an embedded default. Generates Gaussian
# clusters (fixed seed), solves eps for 32 neighbours per point (sweep, a
# few passes), joins with the exact FP64 CPU engine and the CPU emulation of
# FASTED's FP16 arithmetic and compares the two; on a machine with a CUDA
# device it also runs the tensor-core engine and compares FASTED and
# TED-Join side by side against the FP64 ground truth. Everything is logged
# in the session database.
# usage: scripts/demo.sh [path/to/tcjoin]
set -u
bin=${1:-build/tcjoin}
[ -x "$bin" ] || { echo "demo: $bin not built (run make)"; exit 1; }

# n=10000, d=32, 16 clusters of sigma 0.05 (about 0.32 for S=32).
data="gen gauss n=10000 d=32 seed=1"

gpus=$("$bin" --db /dev/null -e engines 2>/dev/null | sed -n 's/^CUDA devices: \([0-9]*\).*/\1/p')
gpus=${gpus:-0}

cmds="$data; info; sweep 32 use; run cpu; run cpu-fp16; compare cpu-fp16 cpu"
if [ "$gpus" -gt 0 ]; then
    cmds="$cmds; run fasted; compare fasted ted"
else
    echo "demo: no CUDA device here; the GPU engines are skipped (help engines says why)"
fi

# On a terminal the demo runs inside the dashboard and stays there (quit to
# leave); otherwise it prints plain output.
if [ -t 0 ] && [ -t 1 ]; then
    echo "demo: tcjoin -i -e '$cmds'"
    exec "$bin" -i -e "$cmds"
fi
echo "demo: tcjoin -e '$cmds'"
"$bin" -e "$cmds"
status=$?

db=${TCJOIN_DB:-${XDG_DATA_HOME:-$HOME/.local/share}/tcjoin/sessions.db}
echo
echo "demo: the runs are in the session log $db"
echo "demo: see them with: $bin -e 'runs 10'   (or sqlite3 $db)"
exit $status
