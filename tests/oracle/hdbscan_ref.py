#!/usr/bin/env python3
"""HDBSCAN* reference: an independent test oracle for `tcjoin hdbscan`.

Written apart from the product (src/cluster/hdbscan*.c was not read) and
from other projects (no code taken from scikit-learn or the hdbscan
library): it follows written definitions of scikit-learn 1.3+'s
sklearn.cluster.HDBSCAN (metric euclidean, alpha 1) and of the hdbscan
library's GLOSH outlier scores, step by step, in plain numpy:

  core distances -> mutual-reachability MST (the one tree under the total
  order (squared weight, smaller end, larger end), by Prim from node 0) ->
  edges in that order -> single linkage (union-find, the left side of a
  merge the end nearer node 0) ->
  condensed tree -> stabilities -> EOM or leaf selection (with epsilon and
  allow_single_cluster) -> labels, probabilities, GLOSH scores.

Distances: squared distances in the direct form sum((a-b)**2), summed over
the coordinates in order 0..d-1 in float64, and their square roots.

Cost: O(n^2 d) time (every pair is formed twice: once for the core
distances, once in Prim's algorithm), O(n d) memory for a row of distances;
the tree stages are O(n) but run as Python loops.

usage: hdbscan_ref.py X.npy min_cluster_size min_samples method epsilon \
           single(0|1) OUTPREFIX
       (min_samples may be "none"; writes OUTPREFIX.labels.npy, .probs.npy,
       .scores.npy and prints tree_weight)
       hdbscan_ref.py --selftest
"""

import sys
from collections import deque

import numpy as np


# ---------------------------------------------------------------- distances

def _sq_row(XT, i):
    """Squared distances from point i to every point, summed over the
    coordinates in order (not numpy's pairwise summation). XT is X
    transposed, one contiguous row a coordinate."""
    d = XT.shape[0]
    diff = XT[0] - XT[0, i]
    acc = diff * diff
    for j in range(1, d):
        diff = XT[j] - XT[j, i]
        acc = acc + diff * diff
    return acc


def core_distances2(X, min_samples):
    """Squared distance to the min_samples-th nearest point, the point
    itself counted (min_samples 1 gives 0)."""
    X = np.ascontiguousarray(X, dtype=np.float64)
    n = X.shape[0]
    if min_samples < 1 or min_samples > n:
        raise ValueError("need 1 <= min_samples <= n")
    core2 = np.zeros(n)
    if min_samples == 1:
        return core2
    XT = np.ascontiguousarray(X.T)
    k = min_samples - 2  # 0-based index among the other points
    for i in range(n):
        r = _sq_row(XT, i)
        r[i] = np.inf
        core2[i] = np.partition(r, k)[k]
    return core2


def mutual_reachability_mst(X, min_samples):
    """The minimum spanning tree of the mutual-reachability graph under
    the total order (squared weight, smaller end, larger end) on edges:
    weights tie often (an edge's weight is often a core distance), and
    under a total order the tree is unique, so that it does not depend on
    the algorithm. Prim's algorithm from node 0 comparing whole keys (with
    distinct keys Prim and Kruskal give the one tree). Returns (a, b, w2)
    in emission order: a the end already in the tree (nearer node 0), b
    the node added, w2 the squared weight."""
    X = np.ascontiguousarray(X, dtype=np.float64)
    n = X.shape[0]
    core2 = core_distances2(X, min_samples)
    XT = np.ascontiguousarray(X.T)
    idx = np.arange(n)
    in_tree = np.zeros(n, dtype=bool)
    bw = np.full(n, np.inf)  # each node's best key: weight, lo, hi
    blo = np.full(n, n, dtype=np.int64)
    bhi = np.full(n, n, dtype=np.int64)
    source = np.zeros(n, dtype=np.int64)
    m = max(n - 1, 0)
    a = np.zeros(m, dtype=np.int64)
    b = np.zeros(m, dtype=np.int64)
    w2 = np.zeros(m)
    current = 0
    in_tree[0] = True
    for e in range(m):
        mr2 = np.maximum(np.maximum(core2[current], core2), _sq_row(XT, current))
        lo = np.minimum(idx, current)
        hi = np.maximum(idx, current)
        less = (mr2 < bw) | ((mr2 == bw) & ((lo < blo) | ((lo == blo) & (hi < bhi))))
        upd = (~in_tree) & less
        bw[upd], blo[upd], bhi[upd] = mr2[upd], lo[upd], hi[upd]
        source[upd] = current
        out = np.nonzero(~in_tree)[0]
        o = np.lexsort((bhi[out], blo[out], bw[out]))
        nxt = int(out[o[0]])
        a[e], b[e], w2[e] = source[nxt], nxt, bw[nxt]
        in_tree[nxt] = True
        current = nxt
    return a, b, w2


def sort_edges(a, b, w2):
    """In the order (squared weight, smaller end, larger end); weights as
    distances (square roots)."""
    o = np.lexsort((np.maximum(a, b), np.minimum(a, b), w2))
    return a[o], b[o], np.sqrt(w2[o])


# ----------------------------------------------------------- single linkage

def single_linkage(a, b, w, n):
    """scipy-format linkage (left, right, value, size) rows, as a float64
    (n-1, 4) array; merge k is node n+k."""
    parent = np.arange(2 * n - 1, dtype=np.int64)
    size = np.ones(2 * n - 1, dtype=np.int64)

    def find(x):
        r = x
        while parent[r] != r:
            r = parent[r]
        while parent[x] != r:
            parent[x], x = r, parent[x]
        return r

    L = np.zeros((max(n - 1, 0), 4))
    for k in range(n - 1):
        ra, rb = find(int(a[k])), find(int(b[k]))
        L[k] = (ra, rb, w[k], size[ra] + size[rb])
        size[n + k] = size[ra] + size[rb]
        parent[ra] = n + k
        parent[rb] = n + k
    return L


# ----------------------------------------------------------- condensed tree

def _bfs(L, n, root):
    out = []
    q = deque([root])
    while q:
        x = q.popleft()
        out.append(x)
        if x >= n:
            q.append(int(L[x - n, 0]))
            q.append(int(L[x - n, 1]))
    return out


def condense(L, n, min_cluster_size):
    """Rows (parent, child, lambda, child_size) in emission order, as four
    arrays (int64, int64, float64, int64)."""
    rows = []
    if n < 2:
        return (np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0),
                np.zeros(0, np.int64))
    root = 2 * (n - 1)
    relabel = np.zeros(root + 1, dtype=np.int64)
    ignore = np.zeros(root + 1, dtype=bool)
    relabel[root] = n
    next_label = n + 1

    def count(x):
        return int(L[x - n, 3]) if x >= n else 1

    def fall_out(sub, parent_label, lam):
        for s in _bfs(L, n, sub):
            if s < n:
                rows.append((parent_label, s, lam, 1))
            ignore[s] = True

    for node in _bfs(L, n, root):
        if node < n or ignore[node]:
            continue
        left, right, value = int(L[node - n, 0]), int(L[node - n, 1]), L[node - n, 2]
        lam = 1.0 / value if value > 0.0 else np.inf
        lc, rc = count(left), count(right)
        p = int(relabel[node])
        if lc >= min_cluster_size and rc >= min_cluster_size:
            relabel[left] = next_label
            next_label += 1
            rows.append((p, int(relabel[left]), lam, lc))
            relabel[right] = next_label
            next_label += 1
            rows.append((p, int(relabel[right]), lam, rc))
        elif lc < min_cluster_size and rc < min_cluster_size:
            fall_out(left, p, lam)
            fall_out(right, p, lam)
        elif lc < min_cluster_size:
            relabel[right] = p
            fall_out(left, p, lam)
        else:
            relabel[left] = p
            fall_out(right, p, lam)
    par = np.array([r[0] for r in rows], dtype=np.int64)
    chi = np.array([r[1] for r in rows], dtype=np.int64)
    lam = np.array([r[2] for r in rows], dtype=np.float64)
    siz = np.array([r[3] for r in rows], dtype=np.int64)
    return par, chi, lam, siz


def stability(tree):
    """{cluster id: stability}; inf allowed (nan where a cluster born at
    lambda inf has rows at lambda inf: inf - inf)."""
    par, chi, lam, siz = tree
    root = int(par.min())
    top = int(max(par.max(), chi.max()))
    births = np.zeros(top + 1)
    births[chi] = lam
    births[root] = 0.0
    stab = {int(c): 0.0 for c in range(root, int(par.max()) + 1)}
    with np.errstate(invalid="ignore"):
        for p, l, s in zip(par.tolist(), lam.tolist(), siz.tolist()):
            stab[p] += (l - births[p]) * s
    return stab


# ---------------------------------------------------------------- selection

def select(tree, stab, method="eom", allow_single_cluster=False, epsilon=0.0):
    """Set of selected cluster ids."""
    par, chi, lam, siz = tree
    stab = dict(stab)
    root = int(par.min())
    keep = siz > 1
    cpar, cchi, clam = par[keep], chi[keep], lam[keep]
    kids = {}
    lam_of = {}
    for p, c, l in zip(cpar.tolist(), cchi.tolist(), clam.tolist()):
        kids.setdefault(p, []).append(c)
        lam_of[c] = l

    def descendants(c):  # BFS in the cluster tree, c itself excluded
        out, q = [], deque(kids.get(c, []))
        while q:
            x = q.popleft()
            out.append(x)
            q.extend(kids.get(x, []))
        return out

    def traverse_upwards(leaf):
        parent = cpar[cchi == leaf][0]
        if parent == root:
            return root if allow_single_cluster else leaf
        if 1.0 / lam_of[int(parent)] > epsilon:
            return int(parent)
        return traverse_upwards(int(parent))

    def epsilon_search(leaves):
        selected, processed = set(), set()
        for leaf in sorted(leaves):
            eps_leaf = 1.0 / lam_of[leaf]
            if eps_leaf < epsilon:
                if leaf not in processed:
                    c = traverse_upwards(leaf)
                    selected.add(c)
                    processed.update(descendants(c))
            else:
                selected.add(leaf)
        return selected

    node_list = sorted(stab.keys(), reverse=True)
    if not allow_single_cluster:
        node_list = [c for c in node_list if c != root]
    if method == "eom":
        is_cluster = {c: True for c in node_list}
        for node in node_list:
            subtree = sum(stab[c] for c in kids.get(node, []))
            if subtree > stab[node]:
                is_cluster[node] = False
                stab[node] = subtree
            else:
                for d in descendants(node):
                    is_cluster[d] = False
        selected = {c for c, v in is_cluster.items() if v}
        if epsilon != 0.0 and len(cpar) > 0:
            if selected == {root}:
                selected = {root} if allow_single_cluster else set()
            else:
                selected = epsilon_search(selected)
        return selected
    if method == "leaf":
        if len(cpar) == 0:
            leaves = set()
        else:
            leaves, stack = [], [root]
            while stack:
                x = stack.pop()
                if x in kids:
                    stack.extend(kids[x])
                else:
                    leaves.append(x)
            leaves = set(leaves)
        return epsilon_search(leaves) if epsilon != 0.0 else leaves
    raise ValueError("method must be eom or leaf")


# ------------------------------------------------------ labels and scores

def labels_of(tree, selected, n, allow_single_cluster=False, epsilon=0.0):
    par, chi, lam, siz = tree
    root = int(par.min())
    cmap = {c: i for i, c in enumerate(sorted(selected))}
    up = {}  # cluster -> parent cluster
    for p, c, s in zip(par.tolist(), chi.tolist(), siz.tolist()):
        if s > 1:
            up[c] = p
    # nearest selected ancestor (or itself) of every cluster
    top = {}

    def owner(c):
        path = []
        while c not in top:
            if c in selected:
                top[c] = c
                break
            if c == root:
                top[c] = root
                break
            path.append(c)
            c = up[c]
        for x in path:
            top[x] = top[c]
        return top[c]

    labels = np.full(n, -1, dtype=np.int32)
    single = len(selected) == 1 and allow_single_cluster and root in selected
    if single:
        threshold = 1.0 / epsilon if epsilon != 0.0 else lam[par == root].max()
    for p, c, l in zip(par.tolist(), chi.tolist(), lam.tolist()):
        if c >= n:
            continue
        o = owner(p)
        if o != root:
            labels[c] = cmap[o]
        elif single and l >= threshold:
            labels[c] = cmap[root]
    return labels, cmap


def run_max_deaths(tree):
    """scikit-learn's deaths: a running max over each run of equal parents
    in row order; a parent with several runs keeps its last run's max."""
    par, chi, lam, siz = tree
    deaths = np.zeros(int(par.max()) + 1)
    cur, m = int(par[0]), lam[0]
    for p, l in zip(par[1:].tolist(), lam[1:].tolist()):
        if p == cur:
            m = max(m, l)
        else:
            deaths[cur] = m
            cur, m = p, l
    deaths[cur] = m
    return deaths


def probabilities(tree, labels, cmap, n):
    par, chi, lam, siz = tree
    deaths = run_max_deaths(tree)
    back = {v: k for k, v in cmap.items()}
    prob = np.zeros(n)
    for c, l in zip(chi.tolist(), lam.tolist()):
        if c >= n or labels[c] == -1:
            continue
        m = deaths[back[int(labels[c])]]
        if m == 0.0 or np.isinf(l):
            prob[c] = 1.0
        else:
            prob[c] = min(l, m) / m
    return prob


def glosh(tree, n):
    """GLOSH: each cluster's death is the max lambda in its subtree;
    score = (death(parent) - lambda) / death(parent). Where the death is
    inf (duplicates below) and the point's lambda finite the score is the
    formula's limit, 1 (the hdbscan library computes inf / inf = nan
    there; tcjoin documents 1)."""
    par, chi, lam, siz = tree
    top = int(max(par.max(), chi.max()))
    deaths = np.zeros(top + 1)
    np.maximum.at(deaths, par, lam)
    for k in range(len(par) - 1, -1, -1):
        c, p = chi[k], par[k]
        if deaths[c] > deaths[p]:
            deaths[p] = deaths[c]
    score = np.zeros(n)
    with np.errstate(invalid="ignore"):
        for p, c, l in zip(par.tolist(), chi.tolist(), lam.tolist()):
            if c >= n:
                continue
            m = deaths[p]
            score[c] = (0.0 if (m == 0.0 or np.isinf(l))
                        else 1.0 if np.isinf(m) else (m - l) / m)
    return score


# ------------------------------------------------------------------ driver

def hdbscan(X, min_cluster_size=5, min_samples=None, method="eom", epsilon=0.0,
            allow_single_cluster=False):
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2:
        raise ValueError("X must be (n, d)")
    n = X.shape[0]
    if min_samples is None:
        min_samples = min_cluster_size
    if min_cluster_size < 2:
        raise ValueError("min_cluster_size must be >= 2")
    if n < 2 or min_samples > n:
        raise ValueError("need n >= 2 and min_samples <= n")
    a, b, w2 = mutual_reachability_mst(X, min_samples)
    a, b, w = sort_edges(a, b, w2)
    L = single_linkage(a, b, w, n)
    tree = condense(L, n, min_cluster_size)
    stab = stability(tree)
    selected = select(tree, stab, method, allow_single_cluster, epsilon)
    labels, cmap = labels_of(tree, selected, n, allow_single_cluster, epsilon)
    return dict(labels=labels,
                probabilities=probabilities(tree, labels, cmap, n),
                scores=glosh(tree, n),
                tree_weight=float(np.sum(w)),
                mst=(a, b, w), linkage=L, tree=tree, selected=selected)


# --------------------------------------------------------------- self test

def _dense_mr(X, min_samples):
    """The mutual-reachability matrix built separately (broadcast
    distances, sort-based core distances)."""
    X = np.asarray(X, dtype=np.float64)
    D = np.sqrt(((X[:, None, :] - X[None, :, :]) ** 2).sum(-1))
    core = np.sort(D, axis=1)[:, min_samples - 1]  # self (0) counted first
    return np.maximum(D, np.maximum(core[:, None], core[None, :]))


def _kruskal_weight(M):
    """MST weight over a dense matrix, Kruskal with union-find."""
    n = len(M)
    iu, ju = np.triu_indices(n, 1)
    order = np.argsort(M[iu, ju], kind="stable")
    parent = list(range(n))

    def find(x):
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    total, used = 0.0, 0
    for k in order:
        ra, rb = find(iu[k]), find(ju[k])
        if ra != rb:
            parent[ra] = rb
            total += M[iu[k], ju[k]]
            used += 1
            if used == n - 1:
                break
    return total


def _partition_diff(x, y):
    """How many points are placed otherwise by two labellings, cluster
    numbers aside (noise is noise in both)."""
    pairs = {}
    for a, b in zip(x.tolist(), y.tolist()):
        pairs[(a, b)] = pairs.get((a, b), 0) + 1
    # each x cluster to the y cluster it shares most points with
    best = {}
    for (a, b), c in pairs.items():
        if a >= 0 and b >= 0 and c > best.get(a, (None, 0))[1]:
            best[a] = (b, c)
    used = [v[0] for v in best.values()]
    if len(set(used)) != len(used):
        return len(x)
    return sum(c for (a, b), c in pairs.items()
               if not (a == b == -1 or (a >= 0 and best.get(a, (None,))[0] == b)))


def _blobs(rng, n, d, k):
    centers = rng.uniform(-10, 10, size=(k, d))
    which = rng.integers(0, k, size=n)
    std = rng.uniform(0.3, 1.5, size=k)
    return centers[which] + rng.normal(size=(n, d)) * std[which, None]


def _selftest():
    rng = np.random.default_rng(12345)
    fails = 0
    sk = None
    try:
        import sklearn
        from sklearn.cluster import HDBSCAN as sk  # noqa: N811
        print("scikit-learn", sklearn.__version__, "HDBSCAN: comparing")
    except Exception as exc:  # 1.2 and older have no HDBSCAN
        print("scikit-learn HDBSCAN not available (%s): skipping that comparison"
              % type(exc).__name__)
    try:
        from scipy.cluster import hierarchy
        from scipy.spatial.distance import squareform
    except ImportError:
        hierarchy = None
        print("scipy not available: skipping the single-linkage comparison")
    for t in range(40):
        n = int(rng.integers(20, 300))
        d = int(rng.integers(1, 6))
        X = _blobs(rng, n, d, int(rng.integers(1, 5)))
        if t % 5 == 0:  # exact duplicates
            reps = rng.integers(0, n, size=n // 10)
            X = np.vstack([X] + [X[reps]] * int(rng.integers(1, 4)))
            n = len(X)
        mcs = int(rng.integers(2, 15))
        ms = int(rng.integers(1, 15))
        ms = min(ms, n)
        method = ["eom", "leaf"][t % 2]
        eps = [0.0, 0.0, 0.5, 2.0][t % 4]
        single = bool(t % 3 == 0)
        r = hdbscan(X, mcs, ms, method, eps, single)
        M = _dense_mr(X, ms)
        kw = _kruskal_weight(M)
        ok = abs(kw - r["tree_weight"]) <= 1e-9 * max(1.0, abs(kw))
        line = ("selftest %2d n=%4d d=%d mcs=%2d ms=%2d %-4s eps=%.1f single=%d "
                "clusters=%d noise=%d weight %s"
                % (t, n, d, mcs, ms, method, eps, single,
                   len(r["selected"]), int((r["labels"] < 0).sum()),
                   "ok" if ok else "DIFFERS %r %r" % (kw, r["tree_weight"])))
        if hierarchy is not None:
            # scipy's single linkage of the dense matrix: the merge heights
            # are those of any MST (asserted). Through our later stages its
            # linkage gives the same partition (scipy orders a merge's two
            # sides otherwise, so cluster ids and label numbers can differ)
            # except where merges tie (asserted when all MST weights differ)
            Z = hierarchy.linkage(squareform(M, checks=False), "single")
            hs = np.allclose(Z[:, 2], r["linkage"][:, 2], rtol=1e-12, atol=0)
            tree = condense(Z, n, mcs)
            sel = select(tree, stability(tree), method, single, eps)
            lab2, _ = labels_of(tree, sel, n, single, eps)
            nd = _partition_diff(lab2, r["labels"])
            distinct = len(np.unique(r["mst"][2])) == n - 1
            line += " scipy heights %s labels %s" % (
                "ok" if hs else "DIFFER",
                "same" if nd == 0 else "%d differ%s" % (nd, "" if distinct else " (ties)"))
            ok = ok and hs and (nd == 0 or not distinct)
        if sk is not None:
            m = sk(min_cluster_size=mcs, min_samples=ms,
                   cluster_selection_method=method,
                   cluster_selection_epsilon=eps,
                   allow_single_cluster=single).fit(X)
            same = (np.array_equal(m.labels_, r["labels"])
                    and np.allclose(m.probabilities_, r["probabilities"],
                                    rtol=1e-12, atol=0))
            line += " sklearn " + ("same" if same else "DIFFERS")
            ok = ok and same
        # invariants: probabilities in [0, 1], noise has probability 0
        lab, pr = r["labels"], r["probabilities"]
        inv = (np.all((pr >= 0) & (pr <= 1)) and np.all(pr[lab < 0] == 0)
               and lab.max() < len(r["selected"]))
        if not inv:
            line += " INVARIANT"
            ok = False
        print(line)
        fails += not ok
    # a hand-made case: two well separated pairs of triples
    X = np.array([[0.0], [0.1], [0.2], [10.0], [10.1], [10.2]])
    r = hdbscan(X, 3, 2)
    want = np.array([0, 0, 0, 1, 1, 1])
    if not np.array_equal(r["labels"], want):
        print("hand case: labels", r["labels"], "want", want)
        fails += 1
    print("selftest:", "FAIL %d" % fails if fails else "pass")
    return 1 if fails else 0


def main(argv):
    if len(argv) == 2 and argv[1] == "--selftest":
        return _selftest()
    if len(argv) != 8:
        sys.stderr.write(__doc__)
        return 2
    path, mcs, ms, method, eps, single, prefix = argv[1:]
    X = np.load(path).astype(np.float64)
    ms = None if ms.lower() in ("none", "-", "") else int(ms)
    r = hdbscan(X, int(mcs), ms, method, float(eps), single == "1")
    np.save(prefix + ".labels.npy", r["labels"])
    np.save(prefix + ".probs.npy", r["probabilities"])
    np.save(prefix + ".scores.npy", r["scores"])
    print(repr(r["tree_weight"]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
