"""tcjoin's Python face against independent computations: scikit-learn's
DBSCAN, radius_neighbors_graph and NearestNeighbors (kd_tree: squared
distances in FP64's direct form compared with eps^2, as the ground-truth
engines compare them, so pairs exactly at eps agree), NumPy's direct
pairwise counts, and the session log read with sqlite3."""

import _thread
import os
import sqlite3
import threading

import numpy as np
import pytest
from conftest import load_shared

import tcjoin
from sklearn.cluster import DBSCAN as SkDBSCAN
from sklearn.neighbors import NearestNeighbors

U = np.finfo(np.float64).eps


def direct_d2(X):
    """All squared distances in FP64's direct form, (a - b)^2 summed."""
    X = np.asarray(X, dtype=np.float64)
    return ((X[:, None, :] - X[None, :, :]) ** 2).sum(axis=2)


def truth():
    """The ground-truth engine here: exact where a GPU runs it, else cpu."""
    try:
        tcjoin.count(np.zeros((2, 2)), 1.0, engine="exact", progress=False)
        return "exact"
    except tcjoin.NoDevice:
        return "cpu"


def blobs(n=1500, d=6, seed=1):
    rng = np.random.default_rng(seed)
    c = rng.random((5, d)) * 10
    return (c[rng.integers(0, 5, n)] + rng.normal(0, 0.4, (n, d))).astype(np.float32)


SETS = [  # file, eps, min_samples (tests/cli/dbscan_sklearn.sh's)
    ("letter.csv", 3.0, 10),
    ("letter.csv", 2.0, 4),
    ("htru2.csv", 6.0, 16),
    ("kitti_000000_xyzr.f32", 0.35, 8),
]


@pytest.mark.parametrize("name,eps,ms", SETS)
def test_dbscan_equals_scikit_learn(name, eps, ms):
    X = load_shared(name)
    want = SkDBSCAN(eps=eps, min_samples=ms, algorithm="kd_tree").fit(X)
    got = tcjoin.DBSCAN(eps=eps, min_samples=ms).fit(X)
    assert np.array_equal(got.labels_, want.labels_)
    assert np.array_equal(got.core_sample_indices_, want.core_sample_indices_)
    assert np.array_equal(got.components_, X[want.core_sample_indices_])


@pytest.mark.parametrize("name,eps", [("kitti_000000_xyzr.f32", 0.35), ("letter.csv", 2.0),
                                      ("sift5k.fvecs", 260.0)])
@pytest.mark.parametrize("mode", ["connectivity", "distance"])
def test_radius_neighbors_graph_equals_scikit_learn(name, eps, mode):
    X = load_shared(name)[:5000]
    want = NearestNeighbors(radius=eps, algorithm="kd_tree").fit(X) \
        .radius_neighbors_graph(None, mode=mode)
    want.sort_indices()  # columns ascending, as tcjoin gives them
    got = tcjoin.radius_neighbors_graph(X, eps, mode=mode)
    assert got.shape == want.shape
    assert np.array_equal(got.indptr, want.indptr)
    assert np.array_equal(got.indices, want.indices)
    assert got.nnz > X.shape[0]  # the sets are not empty at these eps
    if mode == "connectivity":
        assert np.array_equal(got.data, want.data)
    else:
        # both sqrt of an FP64 direct-form sum of d squares, summed in
        # another order: relative error at most about d units of rounding
        d = X.shape[1]
        assert np.allclose(got.data, want.data, rtol=(d + 2) * U, atol=0)


def test_graph_include_self_and_duplicates():
    X = np.array([[0, 0], [0, 0], [1, 0], [5, 5]], dtype=np.float64)
    g = tcjoin.radius_neighbors_graph(X, 1.0, mode="distance", include_self=True)
    d = np.sqrt(direct_d2(X))
    assert np.array_equal(g.toarray() > 0, (d <= 1.0) & (d > 0))
    assert g.nnz == int((d <= 1.0).sum())  # the zeros kept: self and the duplicate
    g0 = tcjoin.radius_neighbors_graph(X, 1.0)
    assert g0.nnz == int((d <= 1.0).sum()) - 4
    assert list(g0.indices[g0.indptr[0]:g0.indptr[1]]) == [1, 2]


def pairs_csr(X, eps, engine, include_self):
    """The CSR of an engine's PAIRS run, built here from its pair stream
    (tcj_pairs: every pair (i, j) with its d2, both orders), rows by i,
    columns ascending, distances NumPy's sqrt of the engine's d2."""
    got = []

    def put(user, k, i, j, d2):
        got.append((np.ctypeslib.as_array(i, (k,)).copy(), np.ctypeslib.as_array(j, (k,)).copy(),
                    np.ctypeslib.as_array(d2, (k,)).copy()))
        return 0

    fn = tcjoin._lib.PAIRS_FN(put)
    c = tcjoin.Context()
    with tcjoin._Data(c, X) as x:
        c._check(tcjoin.lib.tcj_pairs(c._h, x.h, eps, engine.encode(), fn, None))
    c.close()
    i, j, d2 = (np.concatenate(v) for v in zip(*got))
    if not include_self:
        i, j, d2 = i[i != j], j[i != j], d2[i != j]
    order = np.lexsort((j, i))
    indptr = np.zeros(X.shape[0] + 1, dtype=np.int64)
    np.cumsum(np.bincount(i, minlength=X.shape[0]), out=indptr[1:])
    return indptr, j[order].astype(np.int32), np.sqrt(np.maximum(d2[order], 0))


GRAPH_SETS = [("sift5k.fvecs", 260.0), ("letter.csv", 2.0), ("kitti_000000_xyzr.f32", 0.35)]


@pytest.mark.parametrize("name,eps", GRAPH_SETS)
@pytest.mark.parametrize("include_self", [False, True])
def test_graph_equals_its_engines_pairs(name, eps, include_self, tmp_path):
    """The graph holds exactly the engine's PAIRS run, with its distances:
    on a GPU built on the device in one join (the log shows no PERPOINT
    run), elsewhere from a PERPOINT and a PAIRS join."""
    X = load_shared(name)[:4000]
    engines = ["exact", "fasted"] if truth() == "exact" else ["cpu"]
    for engine in engines:
        log = str(tmp_path / ("%s-%d.db" % (engine, include_self)))
        g = tcjoin.radius_neighbors_graph(X, eps, mode="distance", include_self=include_self,
                                          engine=engine, log=log)
        tcjoin._contexts.pop(log).close()
        indptr, indices, dist = pairs_csr(X, eps, engine, include_self)
        assert np.array_equal(g.indptr, indptr)
        assert np.array_equal(g.indices, indices)
        assert np.array_equal(g.data, dist)  # both the correctly rounded sqrt of one d2
        assert g.nnz > X.shape[0] * (0 if not include_self else 1)
        db = sqlite3.connect(log)
        modes = [r[0] for r in db.execute("SELECT mode FROM runs ORDER BY id")]
        db.close()
        assert modes == (["pairs"] if engine != "cpu" else ["perpoint", "pairs"])


def test_graph_kept_for_its_own_fill_only():
    """tcj_graph_rows' graph serves the fill that names the same data, eps,
    engine and include_self; any call between, or another include_self,
    leaves the fill to the host's route, with the same result or the
    lengths' mismatch named."""
    X = blobs(900, 5, seed=3)
    eps = 1.0
    want = tcjoin.radius_neighbors_graph(X, eps, mode="distance")
    c = tcjoin.Context()
    e = truth().encode()
    with tcjoin._Data(c, X) as x:
        indptr = np.empty(X.shape[0] + 1, dtype=np.int64)
        c._check(tcjoin.lib.tcj_graph_rows(c._h, x.h, eps, e, 0, indptr.ctypes.data_as(tcjoin._P)))
        assert np.array_equal(indptr, want.indptr)
        n = int(indptr[-1])
        indices, dist = np.empty(n, dtype=np.int32), np.empty(n)
        c._check(tcjoin.lib.tcj_count(c._h, x.h, eps, e, tcjoin._lib.ctypes.byref(
            tcjoin._lib.ctypes.c_uint64())))
        c._check(tcjoin.lib.tcj_graph_fill(c._h, x.h, eps, e, 0, indptr.ctypes.data_as(tcjoin._P),
                                           indices.ctypes.data_as(tcjoin._P),
                                           dist.ctypes.data_as(tcjoin._P)))
        assert np.array_equal(indices, want.indices) and np.array_equal(dist, want.data)
        c._check(tcjoin.lib.tcj_graph_rows(c._h, x.h, eps, e, 0, indptr.ctypes.data_as(tcjoin._P)))
        rc = tcjoin.lib.tcj_graph_fill(c._h, x.h, eps, e, 1, indptr.ctypes.data_as(tcjoin._P),
                                       indices.ctypes.data_as(tcjoin._P), None)
        assert rc != 0 and "entries where its length says" in tcjoin._lib.error(c._h)
    c.close()


@pytest.mark.parametrize("name,k", [("htru2.csv", 4), ("kitti_000000_xyzr.f32", 9),
                                    ("letter.csv", 1)])
def test_kdist_equals_scikit_learn(name, k):
    X = load_shared(name)[:6000]
    dist, _ = NearestNeighbors(n_neighbors=k + 1, algorithm="kd_tree").fit(X).kneighbors(X)
    want = dist[:, k]  # self is one of the nearest, at 0, as is any duplicate
    got = tcjoin.kdist(X, k, engine=truth())  # kdist's default is run's (fasted on a GPU)
    d = X.shape[1]
    assert np.allclose(got, want, rtol=(d + 2) * U, atol=0)


def test_count_and_perpoint_equal_direct_counts():
    X = blobs(800, 5)
    eps = 0.7
    within = direct_d2(X) <= np.float64(eps) ** 2
    assert tcjoin.count(X, eps, engine="cpu") == int(within.sum())
    assert np.array_equal(tcjoin.perpoint(X, eps, engine="cpu"), within.sum(axis=1))


def test_sweep_reaches_its_selectivity():
    X = np.random.default_rng(3).random((3000, 4))
    eps, s = tcjoin.sweep(X, 16)
    pairs = int((direct_d2(X) <= eps * eps).sum())
    assert s == pytest.approx((pairs - len(X)) / len(X), abs=0)
    assert abs(s - 16) <= 16 * 0.05  # the sweep's default tolerance, 5%


def test_curve_counts_clusters_as_dbscan():
    X = blobs(1200, 3, seed=4).astype(np.float64)
    points, plateaus, rec = tcjoin.curve(X, 6, 1.2)
    rows = points.to_dict("records") if hasattr(points, "to_dict") else points
    assert len(rows) > 10
    for r in rows[::max(1, len(rows) // 6)]:
        want = SkDBSCAN(eps=r["eps"], min_samples=6, algorithm="kd_tree").fit(X).labels_
        assert r["clusters"] == want.max() + 1
        assert r["noise"] == int((want < 0).sum())


def test_hdbscan_equals_the_workbench_command(tmp_path):
    X = blobs(1000, 4, seed=5)
    h = tcjoin.HDBSCAN(min_cluster_size=15).fit(X)
    assert h.labels_.max() >= 1
    assert ((h.probabilities_ >= 0) & (h.probabilities_ <= 1)).all()
    assert ((h.outlier_scores_ >= 0) & (h.outlier_scores_ <= 1)).all()
    assert (h.probabilities_[h.labels_ < 0] == 0).all()


def test_hdbscan_equals_scikit_learn_where_it_has_one():
    sk = pytest.importorskip("sklearn.cluster")
    if not hasattr(sk, "HDBSCAN"):
        pytest.skip("scikit-learn %s has no HDBSCAN (1.3 and later)" %
                    __import__("sklearn").__version__)
    # htru2's features are measured values: no equal weights in the tree
    # (integer data's ties may give other labels: docs/CLUSTERING.md)
    X = load_shared("htru2.csv")
    want = sk.HDBSCAN(min_cluster_size=10).fit(X)
    got = tcjoin.HDBSCAN(min_cluster_size=10).fit(X)
    assert np.array_equal(got.labels_, want.labels_)


def test_no_copy_of_contiguous_float_data():
    for dt in (np.float32, np.float64):
        X = np.ascontiguousarray(blobs(50, 3).astype(dt))
        c = tcjoin._ctx(None)
        with tcjoin._Data(c, X) as x:
            assert x.a is X or np.shares_memory(x.a, X)


def test_other_layouts_and_types_give_the_same_labels():
    X = blobs(600, 8, seed=6).astype(np.float64)
    want = tcjoin.DBSCAN(eps=0.9, min_samples=5).fit_predict(X)
    wide = np.zeros((600, 16))
    wide[:, ::2] = X
    assert np.array_equal(tcjoin.DBSCAN(eps=0.9, min_samples=5).fit_predict(wide[:, ::2]), want)
    assert np.array_equal(tcjoin.DBSCAN(eps=0.9, min_samples=5).fit_predict(X.tolist()), want)
    Xi = np.round(X * 10).astype(np.int64)
    assert np.array_equal(tcjoin.DBSCAN(eps=9, min_samples=5).fit_predict(Xi),
                          SkDBSCAN(eps=9, min_samples=5, algorithm="kd_tree")
                          .fit_predict(Xi.astype(np.float64)))
    Xb = np.clip(Xi, -128, 127).astype(np.int8)
    assert np.array_equal(tcjoin.DBSCAN(eps=9, min_samples=5).fit_predict(Xb),
                          SkDBSCAN(eps=9, min_samples=5, algorithm="kd_tree")
                          .fit_predict(Xb.astype(np.float64)))


@pytest.mark.parametrize("X,eps,what", [
    (np.zeros(5), 1.0, "2-D"),
    (np.zeros((0, 3)), 1.0, "at least one point"),
    (np.array([[0.0, 1.0], [np.nan, 2.0]]), 1.0, "row 1, column 0 is NaN"),
    (np.array([[0.0, np.inf]]), 1.0, "infinite"),
    (np.zeros((4, 2), dtype=np.complex128), 1.0, "real numbers"),
    (np.zeros((4, 2)), 0.0, "eps"),
    (np.zeros((4, 2)), -1.0, "eps"),
])
def test_bad_input_raises_with_the_reason(X, eps, what):
    with pytest.raises(ValueError, match=what):
        tcjoin.DBSCAN(eps=eps).fit(X)


def test_library_errors_become_exceptions():
    X = blobs(100, 3)
    with pytest.raises(tcjoin.InvalidInput, match="unknown engine 'cpux'; did you mean cpu"):
        tcjoin.count(X, 1.0, engine="cpux")
    with pytest.raises(tcjoin.InvalidInput, match="minpts must be 1 to n = 100"):
        tcjoin.DBSCAN(eps=1.0, min_samples=101).fit(X)
    with pytest.raises(tcjoin.InvalidInput, match="load: not through the library"):
        tcjoin.exec_line(X, "load /etc/passwd")
    with pytest.raises(tcjoin.InvalidInput, match="K=100 needs at least 101 points"):
        tcjoin.kdist(X, 100)
    # the context goes on after a failure
    assert tcjoin.count(X, 1.0, engine="cpu") >= 100


def test_log_gets_the_runs(tmp_path):
    path = str(tmp_path / "notebook.db")
    X = blobs(700, 4, seed=7)
    tcjoin.count(X, 0.8, engine="cpu", log=path)
    labels = tcjoin.DBSCAN(eps=0.8, min_samples=5, log=path).fit_predict(X)
    tcjoin.radius_neighbors_graph(X, 0.8, log=path)
    tcjoin._contexts.pop(path).close()
    db = sqlite3.connect(path)
    cmds = [r[0] for r in db.execute("SELECT line FROM commands ORDER BY id")]
    assert cmds[0] == "run cpu mode=count"
    assert cmds[1].startswith("dbscan minpts=5")
    assert any("libtcjoin graph" in c for c in cmds)
    runs = db.execute("SELECT COUNT(*) FROM runs r JOIN datasets d ON r.dataset_id = d.id "
                      "WHERE d.n = 700").fetchone()[0]
    # the count, DBSCAN's passes, the graph's one join (on a device) or two
    assert runs >= 4 if truth() == "cpu" else runs >= 3
    row = db.execute("SELECT clusters, noise FROM dbscans").fetchone()
    assert row == (labels.max() + 1, int((labels < 0).sum()))
    assert db.execute("SELECT argv FROM sessions").fetchone()[0] == "python"


def test_ctrl_c_cancels_a_long_call():
    X = np.random.default_rng(8).random((120000, 32), dtype=np.float32)
    c = tcjoin._ctx(None)

    def interrupt():  # once the join is in flight, not during the wrap
        while tcjoin.lib.tcj_progress(c._h) < 0:
            threading.Event().wait(0.01)
        threading.Event().wait(0.3)
        _thread.interrupt_main()

    t = threading.Thread(target=interrupt)
    t.start()
    with pytest.raises(KeyboardInterrupt):
        tcjoin.perpoint(X, 1.5, engine="cpu", progress=False)
    t.join()
    # the join stopped (it had not finished: 2 * 120,000^2 * 32 flops)
    assert tcjoin._lib.last_interrupted_rc == tcjoin._lib.ECANCEL
    assert tcjoin.count(X[:100], 0.5, engine="cpu") >= 100


def test_contexts_in_threads():
    X = blobs(900, 5, seed=9)
    want = tcjoin.DBSCAN(eps=0.8, min_samples=5).fit_predict(X)
    out = [None] * 4

    def work(k):
        with tcjoin.Context() as c:
            with tcjoin._Data(c, X) as x:
                lab = np.empty(len(X), dtype=np.int32)
                c.run("dbscan", tcjoin.lib.tcj_dbscan, x.h, 0.8, 5, None,
                      lab.ctypes.data_as(tcjoin._P), None, None)
                out[k] = lab

    ts = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    for lab in out:
        assert np.array_equal(lab, want)


def test_settings_and_records():
    with tcjoin.Context() as c:
        c.set("threads", "1")
        assert c.get("threads") == "1"
        with pytest.raises(tcjoin.InvalidInput, match="unknown setting"):
            c.set("no-such-setting", "1")
        recs = tcjoin.exec_line(blobs(200, 3), "run cpu", eps=0.5, context=c)
        run = [r for r in recs if r["type"] == "run"][0]
        assert run["engine"] == "cpu" and run["n"] == 200
        assert "pairs" in c.text()


def test_package_metadata_names_the_library_version():
    tomllib = pytest.importorskip("tomllib")
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python",
                        "pyproject.toml")
    with open(path, "rb") as f:
        meta = tomllib.load(f)
    assert meta["project"]["name"] == "tcjoin"
    assert meta["project"]["version"] == tcjoin.version()
