"""The Python module's tests: python/tcjoin on the library the runner
names (TCJOIN_LIBRARY, tests/python/run.sh sets it), against scikit-learn,
SciPy and NumPy computed independently."""

import os
import sys

import numpy as np
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))

DATA = os.environ.get("TCJOIN_DATASETS") or os.path.join(HERE, "..", "..", "..", "shared",
                                                          "datasets")


def load_shared(name):
    """A shared dataset as float64, read here without the library."""
    path = os.path.join(DATA, name)
    if not os.path.exists(path):
        pytest.skip("no %s (TCJOIN_DATASETS)" % path)
    if name.startswith("kitti"):
        return np.fromfile(path, dtype="<f4").reshape(-1, 4)[:6000].astype(np.float64)
    if name.endswith(".fvecs"):
        raw = np.fromfile(path, dtype="<i4")
        d = raw[0]
        return raw.reshape(-1, d + 1)[:, 1:].view("<f4").astype(np.float64)
    # letter: columns 1-16 of a header line; htru2: 0-7, lines ended by CR alone
    text = open(path, newline="").read().replace("\r\n", "\n").replace("\r", "\n")
    rows = [r.split(",") for r in text.split("\n")[1:] if r.strip()]
    lo, hi = (1, 16) if name.startswith("letter") else (0, 7)
    return np.array([[float(v) for v in r[lo:hi + 1]] for r in rows], dtype=np.float64)
