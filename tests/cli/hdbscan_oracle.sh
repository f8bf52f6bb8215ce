#!/bin/sh
# hdbscan against its own oracle, tests/oracle/hdbscan_ref.py: a numpy
# HDBSCAN* written apart from the product from scikit-learn 1.3+'s
# definitions (Prim's MST from node 0, stable sort, single linkage,
# condensed tree, EOM/leaf selection with epsilon and allow_single_cluster)
# and the hdbscan library's GLOSH scores. `hdbscan engine=cpu out= probs=
# scores=` must give, on every case below:
#   - labels equal to the oracle's point for point (no renumbering);
#   - probabilities and GLOSH scores within 1e-12 relative (a GLOSH
#     death of inf over a finite lambda scores 1, the formula's limit);
#   - the JSON record "type":"hdbscan"'s tree_weight within 1e-9 relative
#     (the MST's summed weights; the sum's order may differ).
# Why any tolerance on probabilities and scores: both sides form the
# squared distances the same way, take one correctly rounded sqrt of them
# and one correctly rounded 1/x for a lambda, and sum stabilities in the
# same row order, so they should agree to the bit; 1e-12 leaves room for
# an equivalent final step written otherwise (l/m against min(l, m)/m,
# a division done as a multiplication by 1/m) and nothing more.
# Ties: mutual-reachability weights tie often (a weight is often a core
# distance), so two correct MSTs can differ; the merge heights cannot, and
# the order of merges at one height changes the condensed tree only in
# rare cases. The oracle fixes the order as scikit-learn does (Prim from
# node 0, first index on ties, stable sort), the product is to do the
# same, so the assertion stays exact; a mismatch prints whether the labels
# are a renumbering of the oracle's and how many MST weights tie.
# Exit 0 pass, 77 skip (no python3 with numpy, or no hdbscan command),
# 1 fail.
# usage: tests/cli/hdbscan_oracle.sh PATH/TO/tcjoin
set -u
bin=$1
here=$(cd "$(dirname "$0")/../.." && pwd)
data=${TCJOIN_DATASETS:-$(cd "$here/.." && pwd)/shared/datasets}
. "$here/tests/cli/find_python.inc"
find_python hdbscan_oracle numpy
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if ! "$bin" --db "$tmp/help.db" -e 'help hdbscan' >/dev/null 2>&1; then
    echo "skip - hdbscan_oracle: tcjoin has no hdbscan command"
    exit 77
fi

# The data sets, float64 .npy files, fixed seeds; the real sets' first
# 2000 rows where the shared datasets are there.
if ! "$py" - "$tmp" "$data" <<'EOF'; then
import os
import sys
import numpy as np

tmp, data = sys.argv[1:]


def save(name, x):
    np.save(os.path.join(tmp, name + ".npy"), np.ascontiguousarray(x, dtype=np.float64))


def blobs(rng, sizes, stds, d, spread, background):
    """Gaussian blobs of the given sizes and stds around random centres in
    [-spread, spread]^d, plus `background` uniform points over the box."""
    centres = rng.uniform(-spread, spread, size=(len(sizes), d))
    parts = [c + rng.normal(size=(m, d)) * s for c, m, s in zip(centres, sizes, stds)]
    parts.append(rng.uniform(-1.3 * spread, 1.3 * spread, size=(background, d)))
    x = np.vstack(parts)
    return x[rng.permutation(len(x))]


rng = np.random.default_rng(20240611)
save("blobs2", blobs(rng, [700, 500, 300, 150], [0.3, 0.8, 1.5, 0.15], 2, 10, 350))
rng = np.random.default_rng(20240612)
save("blobs5", blobs(rng, [800, 600, 400, 250, 150], [0.5, 1.0, 1.8, 0.3, 0.8], 5, 8, 300))
rng = np.random.default_rng(20240613)
save("uniform3", rng.uniform(0, 1, size=(1500, 3)))
# exact duplicates: 160 rows of a blob set repeated 3-10 times in all,
# spread through the file (a group of min_samples or more copies has core
# distance 0: merges at 0, lambda inf)
rng = np.random.default_rng(20240614)
base = blobs(rng, [300, 250, 150], [0.4, 1.0, 0.2], 3, 6, 100)
pick = rng.choice(len(base), size=160, replace=False)
reps = [np.repeat(base[i:i + 1], rng.integers(2, 10), axis=0) for i in pick]
x = np.vstack([base] + reps)
save("dups", x[rng.permutation(len(x))])
rng = np.random.default_rng(20240615)
save("noise", rng.uniform(-1, 1, size=(400, 2)))
rng = np.random.default_rng(20240616)
save("tiny", rng.normal(size=(6, 2)))
rng = np.random.default_rng(20240617)
save("oneblob", rng.normal(size=(800, 2)) * [1.0, 0.5])

p = os.path.join(data, "htru2.csv")
if os.path.exists(p):
    # header line; htru2 ends its lines with CR alone
    text = open(p, newline="").read().replace("\r\n", "\n").replace("\r", "\n")
    rows = [r.split(",") for r in text.split("\n")[1:] if r.strip()][:2000]
    save("htru2", np.array([[float(v) for v in r[0:8]] for r in rows]))
p = os.path.join(data, "kitti_000000_xyzr.f32")
if os.path.exists(p):
    # raw little-endian float32, 4 values a row, widened exactly
    save("kitti", np.fromfile(p, dtype="<f4", count=4 * 2000).reshape(-1, 4))
EOF
    echo "not ok - hdbscan_oracle: could not write the data sets"
    exit 1
fi

fail=0
k=0
# case | data set | min_cluster_size | min_samples | method | epsilon | single
# (an empty field is left off the command: its default). Each epsilon was
# chosen where it changes the selection. duplicates: groups of 5+ equal
# rows have core distance 0, so lambda inf, infinite stabilities and
# GLOSH scores of 1 under them. all-noise: min_cluster_size over n/2, no split, no
# cluster. tiny: n = min_samples = 6 (the least n that min_samples allows),
# with and without single; then min_samples 2 on the same 6 points.
while IFS='|' read -r name set mcs ms method eps single; do
    [ -n "$name" ] || continue
    if [ ! -f "$tmp/$set.npy" ]; then
        echo "skip - $name: no $set data set in $data"
        continue
    fi
    k=$((k + 1))
    opts="min_cluster_size=$mcs"
    [ -z "$ms" ] || opts="$opts min_samples=$ms"
    [ -z "$method" ] || opts="$opts method=$method"
    [ -z "$eps" ] || opts="$opts epsilon=$eps"
    [ -z "$single" ] || opts="$opts single"
    if ! "$bin" --db "$tmp/log.db" --json -e "load $tmp/$set.npy; hdbscan engine=cpu $opts \
out=$tmp/l$k.npy probs=$tmp/p$k.npy scores=$tmp/s$k.npy" </dev/null >"$tmp/tcj$k.out" 2>&1; then
        echo "not ok - $name: tcjoin failed ($opts)"
        tail -n 5 "$tmp/tcj$k.out"
        fail=1
        continue
    fi
    if ! "$py" - "$here/tests/oracle" "$name" "$tmp/$set.npy" "$mcs" "${ms:-none}" \
        "${method:-eom}" "${eps:-0}" "${single:-0}" "$tmp/tcj$k.out" \
        "$tmp/l$k.npy" "$tmp/p$k.npy" "$tmp/s$k.npy" <<'EOF'; then
import json
import sys
import numpy as np

(oracle, name, path, mcs, ms, method, eps, single, out,
 lpath, ppath, spath) = sys.argv[1:]
sys.path.insert(0, oracle)
import hdbscan_ref  # noqa: E402

x = np.load(path)
n = len(x)
r = hdbscan_ref.hdbscan(x, int(mcs), None if ms == "none" else int(ms), method,
                        float(eps), single != "0")
want = r["labels"]
clusters = int(want.max()) + 1 if n else 0
head = "%s: n=%d clusters %d noise %d" % (name, n, clusters, int((want < 0).sum()))
bad = []


def close(a, b, rtol):
    """Equal within rtol relative, nan where the other is nan."""
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    both_nan = np.isnan(a) & np.isnan(b)
    with np.errstate(invalid="ignore"):
        ok = (a == b) | (np.abs(a - b) <= rtol * np.maximum(np.abs(a), np.abs(b)))
    return ok | both_nan


labels = np.load(lpath)
if labels.shape != want.shape:
    bad.append("labels shape %s, oracle %s" % (labels.shape, want.shape))
else:
    diff = np.nonzero(labels != want)[0]
    if len(diff):
        i = diff[0]
        # renumbering only? (the same partition, noise the same)
        pairs = set(zip(labels.tolist(), want.tolist()))
        fwd = {}
        perm = all(fwd.setdefault(a, b) == b for a, b in pairs) and \
            len(set(fwd.values())) == len(fwd) and fwd.get(-1, -1) == -1
        w = r["mst"][2]
        ties = len(w) - len(np.unique(w))
        bad.append("%d of %d labels differ; first at %d: tcjoin %d, oracle %d; %s; "
                   "%d of the %d MST weights repeat an earlier one"
                   % (len(diff), n, i, labels[i], want[i],
                      "a renumbering of the oracle's clusters" if perm
                      else "not a renumbering", ties, len(w)))
        # where the first few differing points leave the oracle's condensed
        # tree, and how many single-linkage merges share that height
        par, chi, lam, _ = r["tree"]
        for j in diff[:5]:
            row = int(np.nonzero(chi == j)[0][0])
            with np.errstate(divide="ignore"):
                heights = 1.0 / r["linkage"][:, 2]  # lambdas, as the tree has them
            bad.append("  point %d: tcjoin %d, oracle %d; falls out of cluster %d at "
                       "lambda %r, %d merges at that height"
                       % (j, labels[j], want[j], par[row], lam[row],
                          int((heights == lam[row]).sum())))

for what, p, ref in (("probabilities", ppath, r["probabilities"]),
                     ("scores", spath, r["scores"])):
    got = np.load(p)
    if got.shape != ref.shape:
        bad.append("%s shape %s, oracle %s" % (what, got.shape, ref.shape))
        continue
    ok = close(got, ref, 1e-12)
    if not ok.all():
        i = np.nonzero(~ok)[0][0]
        bad.append("%d of %d %s differ; first at %d: tcjoin %r, oracle %r"
                   % (int((~ok).sum()), n, what, i, float(got[i]), float(ref[i])))

recs = []
for line in open(out, errors="replace"):
    if '"type":"hdbscan"' in line:
        try:
            rec = json.loads(line)
        except ValueError:
            continue
        if rec.get("type") == "hdbscan":
            recs.append(rec)
if not recs or not isinstance(recs[-1].get("tree_weight"), (int, float)):
    bad.append("no \"type\":\"hdbscan\" record with a numeric tree_weight")
elif not close(recs[-1]["tree_weight"], r["tree_weight"], 1e-9):
    bad.append("tree_weight %r, oracle %r" % (recs[-1]["tree_weight"], r["tree_weight"]))

if bad:
    print("not ok - " + head)
    for b in bad:
        print("    " + b)
    sys.exit(1)
print("ok - " + head)
EOF
        fail=1
    fi
done <<EOF
blobs-2d|blobs2|15||||
blobs-5d|blobs5|20|10|||
blobs-2d-leaf|blobs2|15|5|leaf||
blobs-2d-leaf-eps|blobs2|15|5|leaf|0.3|
blobs-2d-eps|blobs2|15||eom|3|
blobs-5d-leaf-eps|blobs5|8|4|leaf|0.5|
uniform-3d|uniform3|10|5|||
uniform-3d-eps|uniform3|10|5|eom|0.1|
duplicates|dups|10|5|||
duplicates-leaf|dups|6|4|leaf||
all-noise|noise|201|5|||
tiny-n-eq-min-samples|tiny|2|6|||
tiny-n-eq-min-samples-single|tiny|2|6|||single
tiny-min-samples-2|tiny|2|2|||
one-blob-single|oneblob|20||eom||single
one-blob-single-eps|oneblob|20|10|eom|0.5|single
blobs-2d-single|blobs2|15||||single
htru2-2000|htru2|20||||
kitti-2000|kitti|10|5|||
kitti-2000-leaf|kitti|10|5|leaf||
EOF
if [ "$k" -eq 0 ]; then
    echo "not ok - hdbscan_oracle: no case ran"
    exit 1
fi

# hdbscan compare dbscan: HDBSCAN* against DBSCAN at eps on the blobs. The
# record's adjusted Rand index against one computed here from the
# oracle's HDBSCAN* labels and a brute-force DBSCAN (scikit-learn's
# definitions: core with minpts points within eps, itself included;
# clusters numbered by their smallest core point; a border point takes
# the smallest cluster among its core neighbours), noise points as
# singletons, from the contingency table: the same counts summed in
# another order, so within 1e-12 relative.
if "$bin" --db "$tmp/log.db" --json -e "load $tmp/blobs2.npy; eps 0.4; hdbscan compare dbscan \
min_cluster_size=15 minpts=8 engine=cpu" </dev/null >"$tmp/cmp.out" 2>&1; then
    if ! "$py" - "$here/tests/oracle" "$tmp/blobs2.npy" "$tmp/cmp.out" <<'EOF'; then
import json
import sys
import numpy as np

sys.path.insert(0, sys.argv[1])
import hdbscan_ref  # noqa: E402

x = np.load(sys.argv[2])
n = len(x)
a = hdbscan_ref.hdbscan(x, 15, None, "eom", 0.0, False)["labels"]
d2 = ((x[:, None, :] - x[None, :, :]) ** 2).sum(-1)
nb = d2 <= 0.4 * 0.4
core = nb.sum(1) >= 8
b = np.full(n, -1)
c = 0
for i in range(n):  # components of core points, in index order
    if core[i] and b[i] < 0:
        stack = [i]
        b[i] = c
        while stack:
            j = stack.pop()
            for m in np.nonzero(nb[j] & core)[0]:
                if b[m] < 0:
                    b[m] = c
                    stack.append(m)
        c += 1
for i in range(n):  # borders: the smallest cluster among core neighbours
    if not core[i]:
        cl = b[nb[i] & core]
        b[i] = cl.min() if len(cl) else -1


def singletons(lab):
    lab = lab.copy()
    noise = np.nonzero(lab < 0)[0]
    lab[noise] = lab.max() + 1 + np.arange(len(noise))
    return lab


def ari(p, q):
    p, q = singletons(p), singletons(q)
    pairs = {}
    for u, v in zip(p.tolist(), q.tolist()):
        pairs[(u, v)] = pairs.get((u, v), 0) + 1
    comb = lambda m: m * (m - 1) / 2.0  # noqa: E731
    sij = sum(comb(m) for m in pairs.values())
    sa = sum(comb(m) for m in np.unique(p, return_counts=True)[1])
    sb = sum(comb(m) for m in np.unique(q, return_counts=True)[1])
    e = sa * sb / comb(len(p))
    return (sij - e) / (0.5 * (sa + sb) - e)


want = ari(a, b)
rec = [json.loads(l) for l in open(sys.argv[3]) if '"type":"hdbscan_compare"' in l]
got = rec[-1]["ari"] if rec else None
ok = got is not None and abs(got - want) <= 1e-12 * max(1.0, abs(want))
print("%s - compare dbscan: ARI %r, here %r" % ("ok" if ok else "not ok", got, want))
sys.exit(0 if ok else 1)
EOF
        fail=1
    fi
else
    echo "not ok - compare dbscan: tcjoin failed"
    tail -n 5 "$tmp/cmp.out"
    fail=1
fi
exit $fail
