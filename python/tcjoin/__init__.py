"""tcjoin from Python: exact and mixed-precision ε-joins, k-distances,
DBSCAN and HDBSCAN* on NumPy arrays, through libtcjoin (ctypes; no
compiler needed). The calls run the workbench's own commands, so engines,
defaults and results are the command line's; ``log=`` writes the runs into
a session log the workbench's dashboard and ``history`` read.

    import numpy as np, tcjoin
    X = np.random.default_rng(0).random((10000, 16), dtype=np.float32)
    eps, S = tcjoin.sweep(X, 32)                      # eps for 32 neighbours a point
    labels = tcjoin.DBSCAN(eps=eps, min_samples=10).fit_predict(X)
    G = tcjoin.radius_neighbors_graph(X, eps, mode="distance")   # scipy CSR

Engines: ``engine=None`` takes the command's default: the ground truth
(``exact`` on a GPU, ``cpu`` without one) for DBSCAN, HDBSCAN, the graph,
the sweep and the curve; ``run``'s (``fasted`` on a GPU) for ``count``,
``perpoint`` and ``kdist``. ``tcjoin.engines()`` lists them.
docs/PYTHON.md has the whole API.
"""

import json
import time
from collections import namedtuple

import numpy as np

from . import _lib
from ._lib import InvalidInput, NoDevice, TcjoinError, enc, lib

__all__ = [
    "DBSCAN", "HDBSCAN", "Context", "InvalidInput", "NoDevice", "TcjoinError", "compare",
    "count", "curve", "engines", "exec_line", "kdist", "perpoint", "precisions",
    "radius_neighbors_graph", "sweep", "version",
]

_P = _lib.P
_timings = {}


def version():
    """libtcjoin's version string."""
    return lib.tcj_version().decode()


class Context:
    """What a workbench session holds: settings (``set``), the session log
    (``log``: a path, "" for the workbench's default log, None for none),
    the last call's records and text. Module-level calls use one context
    per log path; make one to keep settings apart."""

    def __init__(self, log=None, name="python"):
        h = _P()
        rc = lib.tcj_open(enc(log), enc(name), _lib.ctypes.byref(h))
        if rc != 0:
            _lib._raise(rc, _lib.error(None))
        self._h = h

    def close(self):
        if getattr(self, "_h", None):
            lib.tcj_close(self._h)
            self._h = None

    def __del__(self):
        self.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def set(self, name, value):
        """``set NAME VALUE``: a workbench setting (devices, threads, center, ...)."""
        self._check(lib.tcj_set(self._h, enc(name), enc(value)))

    def get(self, name):
        buf = _lib.ctypes.create_string_buffer(1024)
        self._check(lib.tcj_get(self._h, enc(name), buf, len(buf)))
        return buf.value.decode()

    def _check(self, rc):
        if rc != 0:
            _lib._raise(rc, _lib.error(self._h))

    def records(self):
        """The last call's result records (the workbench's --json output), as dicts."""
        text = (lib.tcj_records(self._h) or b"").decode()
        return [json.loads(line) for line in text.splitlines() if line.strip()]

    def text(self):
        """The last call's human-readable output, as the workbench prints it."""
        return (lib.tcj_text(self._h) or b"").decode()

    def run(self, what, fn, *args, progress=None, meanwhile=None):
        return _lib.call(self._h, what, fn, self._h, *args, progress=progress,
                         meanwhile=meanwhile)


_contexts = {}


def _ctx(log):
    key = log if log is not None else None
    c = _contexts.get(key)
    if c is None:
        c = _contexts[key] = Context(log)
    return c


_DTYPES = {np.dtype(np.float32): 0, np.dtype(np.float64): 1, np.dtype(np.float16): 2,
           np.dtype(np.uint8): 3, np.dtype(np.int8): 4}


class _Data:
    """X wrapped for the library: no copy for C-contiguous float32,
    float64, float16 and uint8 (int8 is widened by the library); other
    numeric types become float64, other layouts a contiguous copy."""

    def __init__(self, ctx, X, name="array"):
        a = np.asarray(X)
        if a.ndim != 2:
            raise InvalidInput(_lib.EINVAL, "expected a 2-D array (n points x d dimensions), got "
                                            "%d-D with shape %s" % (a.ndim, a.shape))
        if a.shape[0] == 0 or a.shape[1] == 0:
            raise InvalidInput(_lib.EINVAL, "expected at least one point of at least one "
                                            "dimension, got shape %s" % (a.shape,))
        if a.dtype not in _DTYPES:
            if not (np.issubdtype(a.dtype, np.number) or a.dtype == np.bool_) or \
                    np.iscomplexobj(a):
                raise InvalidInput(_lib.EINVAL, "expected real numbers, got dtype %s" % a.dtype)
            a = a.astype(np.float64)
        a = np.ascontiguousarray(a)
        self.a = a  # kept alive while wrapped
        self.n, self.d = a.shape
        h = _P()
        ctx._check(lib.tcj_data_wrap(ctx._h, a.ctypes.data_as(_P), self.n, self.d,
                                     _DTYPES[a.dtype], enc(name), _lib.ctypes.byref(h)))
        self.h = h

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        lib.tcj_data_free(self.h)
        self.h = None


def _eps(eps):
    e = float(eps)
    if not e > 0 or not np.isfinite(e):
        raise InvalidInput(_lib.EINVAL, "eps must be a positive finite number, got %r" % eps)
    return e


def count(X, eps, engine=None, log=None, progress=None):
    """The pairs (i, j) with |X[i] - X[j]| <= eps, both orders and each
    point with itself: the workbench's ``run ENGINE mode=count``."""
    c = _ctx(log)
    out = _lib.ctypes.c_uint64()
    with _Data(c, X) as x:
        c.run("count", lib.tcj_count, x.h, _eps(eps), enc(engine), _lib.ctypes.byref(out),
              progress=progress)
    return int(out.value)


def perpoint(X, eps, engine=None, log=None, progress=None):
    """Each point's neighbours within eps, itself included (uint64, n)."""
    c = _ctx(log)
    with _Data(c, X) as x:
        out = np.empty(x.n, dtype=np.uint64)
        c.run("perpoint", lib.tcj_perpoint, x.h, _eps(eps), enc(engine), out.ctypes.data_as(_P),
              progress=progress)
    return out


def radius_neighbors_graph(X, radius, mode="connectivity", include_self=False, engine=None,
                           log=None, progress=None):
    """scikit-learn's ``radius_neighbors_graph`` (Euclidean): a scipy.sparse
    CSR matrix n x n whose row i holds the points within radius of X[i]
    (1.0, or the distance with mode='distance'), columns ascending. Exact
    by default (the ground-truth engine). On a GPU one PAIRS join whose
    entries are sorted on the device and copied out; on the CPU engines a
    PERPOINT join (the rows' lengths) and a PAIRS join written in place.
    Host memory is the graph's and O(n)."""
    import scipy.sparse as sp
    if mode not in ("connectivity", "distance"):
        raise InvalidInput(_lib.EINVAL, "mode must be 'connectivity' or 'distance', got %r" % mode)
    c = _ctx(log)
    eps = _eps(radius)
    t = [time.perf_counter()]
    with _Data(c, X) as x:
        t.append(time.perf_counter())
        indptr = np.empty(x.n + 1, dtype=np.int64)
        c.run("graph", lib.tcj_graph_rows, x.h, eps, enc(engine), int(bool(include_self)),
              indptr.ctypes.data_as(_P), progress=progress)
        t.append(time.perf_counter())
        nnz = int(indptr[-1])
        indices = np.empty(nnz, dtype=np.int32)
        dist = np.empty(nnz, dtype=np.float64) if mode == "distance" else None
        ones = []  # connectivity's data, written while the entries are copied out

        def fill_ones():
            ones.append(np.ones(nnz, dtype=np.float64))
        c.run("graph", lib.tcj_graph_fill, x.h, eps, enc(engine), int(bool(include_self)),
              indptr.ctypes.data_as(_P), indices.ctypes.data_as(_P),
              dist.ctypes.data_as(_P) if dist is not None else None, progress=progress,
              meanwhile=fill_ones if dist is None else None)
        t.append(time.perf_counter())
    data = dist if dist is not None else ones[0]
    if nnz < 2 ** 31 - 1:
        indptr = indptr.astype(np.int32)
    g = sp.csr_matrix((data, indices, indptr), shape=(x.n, x.n))
    t.append(time.perf_counter())
    # where the last graph's time went (scripts/bench_python.py prints it)
    _timings["graph"] = dict(zip(("wrap", "rows", "fill", "csr"),
                                 (b - a for a, b in zip(t, t[1:]))))
    return g


def kdist(X, k, engine=None, log=None, progress=None):
    """Each point's distance to its k-th nearest other point (1 <= k <= 256;
    a duplicate is a neighbour at 0): the workbench's ``kdist K``, whose
    default engine is run's (fasted on a GPU: engine="exact" for FP64's
    values)."""
    c = _ctx(log)
    with _Data(c, X) as x:
        out = np.empty(x.n, dtype=np.float64)
        c.run("kdist", lib.tcj_kdist, x.h, int(k), enc(engine), out.ctypes.data_as(_P),
              progress=progress)
    return out


SweepResult = namedtuple("SweepResult", "eps selectivity")


def sweep(X, target, engine=None, log=None, progress=None):
    """The eps at which points have ``target`` neighbours on average (self
    excluded): ``sweep TARGET``. Returns (eps, selectivity reached)."""
    c = _ctx(log)
    e, s = _lib.ctypes.c_double(), _lib.ctypes.c_double()
    with _Data(c, X) as x:
        c.run("sweep", lib.tcj_sweep, x.h, float(target), enc(engine), _lib.ctypes.byref(e),
              _lib.ctypes.byref(s), progress=progress)
    return SweepResult(e.value, s.value)


def _table(rows):
    try:
        import pandas as pd
    except ImportError:
        return rows
    return pd.DataFrame(rows)


def exec_line(X, line, eps=None, log=None, progress=None, context=None):
    """Any workbench command line on X (``;`` separates commands; ``load``
    and ``gen`` are refused: the data are X). Returns the result records
    as dicts; ``Context.text()`` has what the workbench would print."""
    c = context or _ctx(log)
    if X is None:
        c.run(line, lib.tcj_exec, None, float(eps or 0), enc(line), progress=progress)
    else:
        with _Data(c, X) as x:
            c.run(line.split()[0] if line.split() else "exec", lib.tcj_exec, x.h,
                  float(eps or 0), enc(line), progress=progress)
    return c.records()


def _first(records, kind):
    for r in records:
        if r.get("type") == kind:
            return r
    raise TcjoinError(_lib.EINVAL, "the command gave no %s record" % kind)


def curve(X, min_samples, max_eps, engine=None, log=None, progress=None):
    """DBSCAN for every eps up to max_eps at once (``dbscan curve``):
    returns (points, plateaus, record): points a table of eps, clusters,
    core, noise, largest_core; plateaus the ranges of eps where the
    cluster count holds (a DataFrame where pandas is present, else lists of
    dicts)."""
    line = "dbscan curve minpts=%d max=%r" % (int(min_samples), _eps(max_eps))
    if engine:
        line += " engine=%s" % engine
    rec = _first(exec_line(X, line, log=log, progress=progress), "dbscan_curve")
    return _table(rec.get("points", [])), _table(rec.get("plateaus", [])), rec


def precisions(X, eps, formats=None, cpu=False, log=None, progress=None):
    """The precision lab at eps (``precisions``): each number format's
    pairs, recall and precision against the FP64 truth, time; a DataFrame
    where pandas is present, else a list of dicts."""
    line = "precisions" + "".join(" " + f for f in (formats or [])) + (" cpu" if cpu else "")
    recs = exec_line(X, line, eps=_eps(eps), log=log, progress=progress)
    return _table([r for r in recs if r.get("type") == "lab_format"])


def compare(X, eps, engine_a, engine_b, log=None, progress=None):
    """Two engines side by side, each against the FP64 ground truth
    (``compare A B``): the comparison record as a dict."""
    recs = exec_line(X, "compare %s %s" % (engine_a, engine_b), eps=_eps(eps), log=log,
                     progress=progress)
    return _first(recs, "compare")


def engines(log=None):
    """The engines, as ``engines`` lists them (records)."""
    return exec_line(None, "engines", log=log)


class DBSCAN:
    """scikit-learn's DBSCAN (Euclidean) on tcjoin: labels equal to
    scikit-learn's, exact by default, O(n) memory (no neighbour lists).
    Attributes after fit: labels_, core_sample_indices_, components_."""

    def __init__(self, eps=0.5, min_samples=5, engine=None, log=None, progress=None):
        self.eps = eps
        self.min_samples = min_samples
        self.engine = engine
        self.log = log
        self.progress = progress

    def fit(self, X, y=None):
        c = _ctx(self.log)
        eps = _eps(self.eps)
        ms = int(self.min_samples)
        if ms < 1:
            raise InvalidInput(_lib.EINVAL, "min_samples must be >= 1, got %r" % self.min_samples)
        with _Data(c, X) as x:
            labels = np.empty(x.n, dtype=np.int32)
            core = np.empty(x.n, dtype=np.uint8)
            nc = _lib.S()
            c.run("dbscan", lib.tcj_dbscan, x.h, eps, ms, enc(self.engine),
                  labels.ctypes.data_as(_P), core.ctypes.data_as(_P), _lib.ctypes.byref(nc),
                  progress=self.progress)
            self.labels_ = labels.astype(np.int64)
            self.core_sample_indices_ = np.flatnonzero(core)
            self.components_ = np.asarray(x.a)[self.core_sample_indices_].copy()
        return self

    def fit_predict(self, X, y=None):
        return self.fit(X).labels_

    def get_params(self, deep=True):
        return {"eps": self.eps, "min_samples": self.min_samples, "engine": self.engine,
                "log": self.log, "progress": self.progress}

    def set_params(self, **params):
        for k, v in params.items():
            setattr(self, k, v)
        return self


class HDBSCAN:
    """scikit-learn's HDBSCAN (Euclidean, alpha 1) on tcjoin: the exact
    minimum spanning tree of mutual reachability, O(n) memory. Attributes
    after fit: labels_, probabilities_, outlier_scores_ (GLOSH, as the
    hdbscan library's)."""

    def __init__(self, min_cluster_size=5, min_samples=None, cluster_selection_epsilon=0.0,
                 cluster_selection_method="eom", allow_single_cluster=False, engine=None,
                 log=None, progress=None):
        self.min_cluster_size = min_cluster_size
        self.min_samples = min_samples
        self.cluster_selection_epsilon = cluster_selection_epsilon
        self.cluster_selection_method = cluster_selection_method
        self.allow_single_cluster = allow_single_cluster
        self.engine = engine
        self.log = log
        self.progress = progress

    def _words(self):
        if self.cluster_selection_method not in ("eom", "leaf"):
            raise InvalidInput(_lib.EINVAL, "cluster_selection_method must be 'eom' or 'leaf', "
                                            "got %r" % self.cluster_selection_method)
        w = "min_cluster_size=%d method=%s" % (int(self.min_cluster_size),
                                               self.cluster_selection_method)
        if self.min_samples is not None:
            w += " min_samples=%d" % int(self.min_samples)
        if self.cluster_selection_epsilon:
            w += " epsilon=%r" % float(self.cluster_selection_epsilon)
        if self.allow_single_cluster:
            w += " single"
        return w

    def fit(self, X, y=None):
        c = _ctx(self.log)
        words = self._words()
        with _Data(c, X) as x:
            labels = np.empty(x.n, dtype=np.int32)
            prob = np.empty(x.n, dtype=np.float64)
            score = np.empty(x.n, dtype=np.float64)
            c.run("hdbscan", lib.tcj_hdbscan, x.h, enc(words), enc(self.engine),
                  labels.ctypes.data_as(_P), prob.ctypes.data_as(_P), score.ctypes.data_as(_P),
                  progress=self.progress)
        self.labels_ = labels.astype(np.int64)
        self.probabilities_ = prob
        self.outlier_scores_ = score
        return self

    def fit_predict(self, X, y=None):
        return self.fit(X).labels_

    def get_params(self, deep=True):
        return {k: getattr(self, k) for k in (
            "min_cluster_size", "min_samples", "cluster_selection_epsilon",
            "cluster_selection_method", "allow_single_cluster", "engine", "log", "progress")}

    def set_params(self, **params):
        for k, v in params.items():
            setattr(self, k, v)
        return self
