#!/bin/bash
# hdbscan on the shared real sets and on a generated one, against one
# COUNT at the eps of S = 64 (the yardstick of docs/BENCHMARKS.md) and
# against scikit-learn's HDBSCAN (1.3 or later, where the machine has it):
# time cold and warm (the first and second `hdbscan` in one process), and
# whether the labels equal scikit-learn's point for point, else the
# adjusted Rand index and how many points differ after matching clusters
# (ties in the mutual-reachability tree: docs/CLUSTERING.md, "HDBSCAN*").
# Run on the device machine; builds nothing:
#   bash scripts/bench_hdbscan.sh [ENGINE]     (default exact)
# Binaries: $BUILD (default /tmp/tcjoin-gpu, unpacked from
# build-gpu/bundle.tar.xz as scripts/gpu-check does); logs under $OUT
# (default /tmp/bench-hdbscan), the table last (summary.txt).
set -u
OUT=${OUT:-/tmp/bench-hdbscan}
ENG=${1:-exact}
MCS=${MCS:-10}
. "$(dirname "$0")/bench_env.inc"
rec() { grep "\"type\":\"$2\"" "$1" | sed -n "${3:-1}p" | sed -E "s/.*\"$4\":([0-9.e+-]+).*/\1/"; }
PY=""
for p in ${PYTHON:-} python3 /usr/bin/python3; do
    if "$p" -c 'import numpy' >/dev/null 2>&1; then PY=$p; break; fi
done

# one set: COUNT at S = 64 twice, hdbscan twice (labels from the second)
one() { # name, load command, python loader expression
    local log=$OUT/$1.log lab=$OUT/$1.labels.npy
    timeout 600 "$X" --json --db "$OUT/$1.db" -e "$2; sweep 64 engine=exact use; run exact;
        run exact; hdbscan engine=$ENG min_cluster_size=$MCS;
        hdbscan engine=$ENG min_cluster_size=$MCS out=$lab force" >"$log" 2>"$log.err"
    local rc=$? c h1 h2 cl no
    c=$(rec "$log" run 2 time_s)
    h1=$(rec "$log" hdbscan 1 time_s)
    h2=$(rec "$log" hdbscan 2 time_s)
    cl=$(rec "$log" hdbscan 2 clusters)
    no=$(rec "$log" hdbscan 2 noise)
    local sk="no scikit-learn HDBSCAN"
    if [ -n "$PY" ] && [ -f "$lab" ]; then
        sk=$("$PY" - "$3" "$lab" "$MCS" <<'EOF' 2>&1 | tail -1
import sys, time
import numpy as np
load, lab, mcs = sys.argv[1], sys.argv[2], int(sys.argv[3])
try:
    from sklearn.cluster import HDBSCAN
    from sklearn.metrics import adjusted_rand_score
except ImportError:
    print("no scikit-learn HDBSCAN"); sys.exit(0)
X = eval(load)
ours = np.load(lab)
t = time.perf_counter()
want = HDBSCAN(min_cluster_size=mcs).fit(X).labels_
t = time.perf_counter() - t
if np.array_equal(ours, want):
    print(f"sklearn {t:.2f} s, labels equal ({want.max() + 1} clusters)")
else:
    # points placed otherwise after matching each of our clusters to the
    # scikit-learn cluster it shares most points with
    diff = 0
    for c in np.unique(ours):
        m = ours == c
        if c < 0:
            diff += int((want[m] >= 0).sum())
            continue
        v, k = np.unique(want[m], return_counts=True)
        diff += int(m.sum() - k.max())
    print(f"sklearn {t:.2f} s, {want.max() + 1} clusters, {(want < 0).sum()} noise; "
          f"ARI {adjusted_rand_score(want, ours):.6f}, {diff} points placed otherwise")
EOF
)
    fi
    row "| $1 | $(awk -v a="$c" 'BEGIN{printf "%.2f", a*1000}') | $h1 | $h2 ($(awk -v a="$h2" -v b="$c" 'BEGIN{if (b>0) printf "%.0fx", a/b}')) | $cl | $no | $sk | rc=$rc"
}
row "hdbscan engine=$ENG min_cluster_size=$MCS ($(date -u +%F), $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1))"
row "| set | COUNT ms (S=64) | hdbscan cold s | warm s (x COUNT) | clusters | noise | scikit-learn |"
row "|---|---|---|---|---|---|---|"
one sift5k "load $D/sift5k.fvecs" \
    "np.fromfile('$D/sift5k.fvecs', dtype='<f4').reshape(-1, 129)[:, 1:].astype(np.float64)"
one letter "load $D/letter.csv cols=1-16" \
    "np.loadtxt('$D/letter.csv', delimiter=',', skiprows=1, usecols=range(1, 17))"
one htru2 "load $D/htru2.csv cols=0-7 header=1" \
    "np.array([[float(v) for v in r.split(',')[:8]] for r in open('$D/htru2.csv', newline='').read().replace('\r\n', '\n').replace('\r', '\n').split('\n')[1:] if r.strip()])"
one kitti "load $D/kitti_000000_xyzr.f32 format=raw dtype=f32 dim=4" \
    "np.fromfile('$D/kitti_000000_xyzr.f32', dtype='<f4').reshape(-1, 4).astype(np.float64)"
one olivetti "load $D/olivetti_400x4096_u8.npy" \
    "np.load('$D/olivetti_400x4096_u8.npy').astype(np.float64)"

# Generated sets (GEN=1, the default): COUNT at S = 64 and hdbscan twice
# in one process, the warm one's time by step and its rounds beyond the
# forest (on the device: how many, and the rows their screen left to
# FP64); each round's trace in the set's .log.err; GEN_TIMEOUT seconds a
# set (600); GEN_SETS="name ..." runs those alone.
gen_one() { # name, gen command
    case " ${GEN_SETS:-all} " in " all " | *" $1 "*) ;; *) return 0 ;; esac
    local log=$OUT/$1.log
    TCJOIN_TRACE=1 timeout "${GEN_TIMEOUT:-600}" "$X" --json --db "$OUT/$1.db" -e "$2; sweep 64 engine=exact use; run exact;
        run exact; hdbscan engine=$ENG min_cluster_size=$MCS;
        hdbscan engine=$ENG min_cluster_size=$MCS" >"$log" 2>"$log.err"
    local rc=$? c h
    c=$(rec "$log" run 2 time_s)
    h=$(rec "$log" hdbscan 2 time_s)
    row "| $1 | $(awk -v a="$c" 'BEGIN{printf "%.2f", a*1000}') | $(rec "$log" hdbscan 1 time_s) | $h ($(awk -v a="$h" -v b="$c" 'BEGIN{if (b>0) printf "%.0fx", a/b}')) | $(rec "$log" hdbscan 2 core_s) | $(rec "$log" hdbscan 2 forest_s) | $(rec "$log" hdbscan 2 rest_s) | $(rec "$log" hdbscan 2 device_rounds)+$(rec "$log" hdbscan 2 host_rounds) | $(rec "$log" hdbscan 2 rows_fp64) | $(rec "$log" hdbscan 2 clusters) | rc=$rc"
}
if [ "${GEN:-1}" = 1 ]; then
    row ""
    row "| generated set | COUNT ms (S=64) | hdbscan cold s | warm s (x COUNT) | core s | forest s | rest s | rounds device+host | rows FP64 | clusters |"
    row "|---|---|---|---|---|---|---|---|---|---|"
    gen_one uniform1e6x3 "gen uniform n=1000000 d=3 seed=1"
    gen_one gauss1e6x16 "gen gauss n=1000000 d=16 seed=1 clusters=64"
    gen_one gauss6e4x784 "gen gauss n=60000 d=784 seed=1 clusters=10"
    gen_one gauss1e6x128 "gen gauss n=1000000 d=128 seed=1 clusters=64"
    gen_one gauss1e6x128bg "gen gauss n=1000000 d=128 seed=1 clusters=64 background=0.1"
    gen_one uniform1e6x128 "gen uniform n=1000000 d=128 seed=1"
fi

# The CPU path against scikit-learn on two cores of the same machine:
# 10^5 x 16, 16 Gaussian blobs of sd 0.05 to 0.3 in [0, 1]^16 and a tenth
# of the points uniform, written as float64 .npy so both read the same
# values; `hdbscan engine=cpu` and HDBSCAN(min_cluster_size=10) each under
# taskset -c 0,1 (scikit-learn given n_jobs=2).
if [ -n "$PY" ] && [ "${CPU2:-1}" = 1 ]; then
    npy=$OUT/blobs1e5x16.npy
    "$PY" -c "
import numpy as np
r = np.random.default_rng(7)
n, d, k = 100000, 16, 16
c = r.uniform(0, 1, (k, d)); sd = r.uniform(0.05, 0.3, k)
w = r.integers(0, k, n)
x = c[w] + r.normal(size=(n, d)) * sd[w, None]
u = r.random(n) < 0.1
x[u] = r.uniform(-0.5, 1.5, (u.sum(), d))
np.save('$npy', x)"
    log=$OUT/cpu2.log
    taskset -c 0,1 timeout 600 "$X" --json --db "$OUT/cpu2.db" -e "load $npy; hdbscan engine=cpu \
min_cluster_size=10 out=$OUT/cpu2.labels.npy force" >"$log" 2>"$log.err"
    ours=$(rec "$log" hdbscan 1 time_s)
    sk=$(taskset -c 0,1 timeout 400 "$PY" - "$npy" "$OUT/cpu2.labels.npy" <<'EOF2' 2>&1 | tail -1
import sys, time
import numpy as np
try:
    from sklearn.cluster import HDBSCAN
    from sklearn.metrics import adjusted_rand_score
except ImportError:
    print("no scikit-learn HDBSCAN"); sys.exit(0)
x = np.load(sys.argv[1]); ours = np.load(sys.argv[2])
t = time.perf_counter()
want = HDBSCAN(min_cluster_size=10, n_jobs=2).fit(x).labels_
t = time.perf_counter() - t
same = np.array_equal(ours, want)
print(f"{t:.1f} s; labels {'equal' if same else 'ARI %.6f' % adjusted_rand_score(want, ours)}")
EOF2
)
    row "cpu path, 2 cores, 10^5 x 16 blobs: hdbscan engine=cpu ${ours:-?} s; scikit-learn ${sk:-timed out (400 s)}"
fi
