#!/bin/sh
# dbscan against scikit-learn, the second oracle: the labels `dbscan
# engine=cpu out=FILE.npy` writes equal DBSCAN(eps, min_samples,
# algorithm='kd_tree').labels_ point for point on the shared datasets
# (letter.csv columns 1-16, htru2.csv's 8 features, the first 6000 points
# of the KITTI scan). kd_tree forms squared distances in the direct
# (a-b)^2 form in FP64 and compares them with eps*eps, as cpu does, and
# its node bounds are computed the same way, so even pairs exactly at eps
# agree (letter's integer features at eps 3 have many). Exit 0 pass, 77
# skip (no python3-sklearn: scripts/deps.sh installs it), 1 fail.
# usage: tests/cli/dbscan_sklearn.sh PATH/TO/tcjoin
set -u
bin=$1
here=$(cd "$(dirname "$0")/../.." && pwd)
data=${TCJOIN_DATASETS:-$(cd "$here/.." && pwd)/shared/datasets}
. "$here/tests/cli/find_python.inc"
find_python dbscan_sklearn sklearn numpy
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

fail=0
k=0
# name | load options | eps | minpts
while IFS='|' read -r file opts eps minpts; do
    [ -n "$file" ] || continue
    k=$((k + 1))
    out="$tmp/labels$k.npy"
    # shellcheck disable=SC2086
    if ! "$bin" --db "$tmp/log.db" -e "load $data/$file $opts; eps $eps; dbscan engine=cpu \
minpts=$minpts out=$out" >"$tmp/tcj.out" 2>&1; then
        echo "tcjoin failed on $file"
        cat "$tmp/tcj.out"
        fail=1
        continue
    fi
    grep '^  clusters' "$tmp/tcj.out" | sed "s|^ *|$file: tcjoin |"
    if ! "$py" - "$data/$file" "$opts" "$eps" "$minpts" "$out" <<'EOF'; then
import sys
import numpy as np
from sklearn.cluster import DBSCAN

path, opts, eps, minpts, labels = sys.argv[1:]
o = dict(kv.split("=") for kv in opts.split())
if path.endswith(".f32"):
    # raw little-endian float32, dim values a row, widened exactly
    x = np.fromfile(path, dtype="<f4").reshape(-1, int(o["dim"])).astype(np.float64)
else:
    # header line; htru2 ends its lines with CR alone
    text = open(path, newline="").read().replace("\r\n", "\n").replace("\r", "\n")
    rows = [r.split(",") for r in text.split("\n")[1:] if r.strip()]
    lo, hi = (int(v) for v in o["cols"].split("-"))
    x = np.array([[float(v) for v in r[lo:hi + 1]] for r in rows], dtype=np.float64)
if "limit" in o:
    x = x[: int(o["limit"])]
ours = np.load(labels)
want = DBSCAN(eps=float(eps), min_samples=int(minpts), algorithm="kd_tree").fit(x).labels_
n = len(want)
print(f"{path.split('/')[-1]}: scikit-learn clusters {want.max() + 1}, "
      f"noise {(want < 0).sum()} of {n}")
if ours.shape != want.shape:
    print(f"shape {ours.shape}, scikit-learn {want.shape}")
    sys.exit(1)
bad = np.nonzero(ours != want)[0]
if len(bad):
    print(f"{len(bad)} of {n} labels differ; first at {bad[0]}: {ours[bad[0]]}, "
          f"scikit-learn {want[bad[0]]}")
    sys.exit(1)
EOF
        fail=1
    fi
done <<EOF
letter.csv|cols=1-16|3|10
letter.csv|cols=1-16|2|4
htru2.csv|cols=0-7|6|16
kitti_000000_xyzr.f32|dim=4 limit=6000|0.35|8
EOF
exit $fail
