#!/usr/bin/env python3
"""The Python module's benchmark (docs/PYTHON.md's figures), one process,
warm: the radius-neighbours graph of 10^6 x 128 uniform points at S = 64
against a PAIRS run of the same engine (pairs to a function that keeps
nothing), the process's peak memory against the dataset and the graph,
and the Python call's overhead over the same C calls through ctypes.
Prints markdown rows ("| ... |"). N, D and S from the environment
(defaults 1000000, 128, 64) for a smaller run; REPS (3) the repetitions.
usage: TCJOIN_LIBRARY=build/libtcjoin.so python3 scripts/bench_python.py"""

import ctypes
import os
import resource
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import tcjoin  # noqa: E402
from tcjoin import _lib  # noqa: E402

N = int(os.environ.get("N", 1000000))
D = int(os.environ.get("D", 128))
S = float(os.environ.get("S", 64))
REPS = int(os.environ.get("REPS", 3))


def rss_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


X = np.random.default_rng(1).random((N, D), dtype=np.float32)
c = tcjoin._ctx(None)
try:  # the graph's default engine: the ground truth, exact where a GPU is
    tcjoin.count(X[:100], 0.1, engine="exact", progress=False)
    engine = "exact"
except tcjoin.NoDevice:
    engine = "cpu"
t = time.perf_counter()
eps, sel = tcjoin.sweep(X, S, engine=engine, progress=False)
t_sweep = time.perf_counter() - t
print("| set | %d x %d uniform f32, seed 1; engine %s; eps %.6g (S = %.2f, sweep %.2f s) |"
      % (N, D, engine, eps, sel, t_sweep))


def null_pairs(user, k, i, j, d2):
    return 0


fn = _lib.PAIRS_FN(null_pairs)
times = {"pairs": [], "graph": [], "wrap": []}
peak_before = rss_mb()
for rep in range(REPS):
    t = time.perf_counter()
    with tcjoin._Data(c, X) as x:
        times["wrap"].append(time.perf_counter() - t)
        t = time.perf_counter()
        rc = tcjoin.lib.tcj_pairs(c._h, x.h, eps, engine.encode(), fn, None)
        times["pairs"].append(time.perf_counter() - t)
        if rc:
            print("| pairs | failed: %s |" % _lib.error(c._h))
            sys.exit(1)
    t = time.perf_counter()
    G = tcjoin.radius_neighbors_graph(X, eps, engine=engine, progress=False)
    times["graph"].append(time.perf_counter() - t)
    steps = tcjoin._timings["graph"]
    if times["graph"][-1] == min(times["graph"]):
        best_steps = steps
    nnz = G.nnz
    del G
peak = rss_mb()
csr_mb = (nnz * (4 + 8) + (N + 1) * 8) / 2 ** 20
data_mb = X.nbytes / 2 ** 20
tp, tg, tw = (min(times[k]) for k in ("pairs", "graph", "wrap"))
print("| radius graph | %.3f s (warm, best of 3; wrap %.3f s of it) |" % (tg, tw))
print("| graph's steps | wrap %.3f, tcj_graph_rows %.3f (GPU: the PAIRS join, the entries "
      "sorted there; CPU: a PERPOINT join), tcj_graph_fill %.3f (GPU: the copy out; CPU: a "
      "PAIRS join, in place, rows sorted), SciPy's CSR %.3f s |"
      % tuple(best_steps[k] for k in ("wrap", "rows", "fill", "csr")))
print("| PAIRS run, same eps and engine | %.3f s; graph / PAIRS %.2fx (goal <= 1.5x) |"
      % (tp, tg / tp))
print("| graph | %d entries (%.1f a point), CSR %.0f MB with float64 data |" % (nnz, nnz / N,
                                                                              csr_mb))
print("| peak RSS | %.0f MB; before the graphs %.0f MB; dataset %.0f MB + CSR %.0f MB = %.0f MB |"
      % (peak, peak_before, data_mb, csr_mb, data_mb + csr_mb))

# The call's overhead: tcjoin.count on a small set against the same
# library calls made directly through ctypes (wrap, count, free), median
# of 200 each.
Y = X[:2000, :16].copy()
py, cc = [], []
out = ctypes.c_uint64()
for _ in range(200):
    t = time.perf_counter()
    tcjoin.count(Y, 0.5, engine="cpu", progress=False)
    py.append(time.perf_counter() - t)
    t = time.perf_counter()
    h = _lib.P()
    tcjoin.lib.tcj_data_wrap(c._h, Y.ctypes.data_as(_lib.P), Y.shape[0], Y.shape[1], 0, b"array",
                             ctypes.byref(h))
    tcjoin.lib.tcj_count(c._h, h, 0.5, b"cpu", ctypes.byref(out))
    tcjoin.lib.tcj_data_free(h)
    cc.append(time.perf_counter() - t)
print("| Python call overhead | %.3f ms (tcjoin.count %.3f ms, the C calls %.3f ms; medians of "
      "200, 2,000 x 16, cpu) |" % ((statistics.median(py) - statistics.median(cc)) * 1e3,
                                    statistics.median(py) * 1e3, statistics.median(cc) * 1e3))
