"""libtcjoin through ctypes: finding the library, its calls' signatures,
and running a call so that Ctrl-C and a progress bar work while it runs."""

import ctypes
import ctypes.util
import os
import threading
import time

OK, EINVAL, EIO, ENOMEM, ENODEV, EGPU, ECANCEL, ESTORE, EUNSUP = 0, -1, -2, -3, -4, -5, -6, -7, -8


class TcjoinError(RuntimeError):
    """A call of libtcjoin failed; ``code`` is its return code (tcjoin.h),
    the message the library's one line."""

    def __init__(self, code, message):
        super().__init__(message)
        self.code = code


class InvalidInput(TcjoinError, ValueError):
    """Bad input: wrong shape or type, NaN, eps <= 0, an unknown engine."""


class NoDevice(TcjoinError):
    """The engine needs a GPU and none is usable here, or is unsupported."""


def _raise(code, message):
    if code == EINVAL:
        raise InvalidInput(code, message)
    if code == ENOMEM:
        raise MemoryError(message)
    if code == ECANCEL:
        raise KeyboardInterrupt(message)
    if code in (ENODEV, EUNSUP):
        raise NoDevice(code, message)
    raise TcjoinError(code, message)


def _candidates():
    """Where libtcjoin is looked for: TCJOIN_LIBRARY (a path), the build
    next to this package (python/../build after make), the installed
    library."""
    env = os.environ.get("TCJOIN_LIBRARY")
    if env:
        yield env
        return
    here = os.path.dirname(os.path.abspath(__file__))
    for build in ("build", "build-cpu"):
        p = os.path.join(here, "..", "..", build, "libtcjoin.so")
        if os.path.exists(p):
            yield os.path.normpath(p)
    yield "libtcjoin.so.1"
    for prefix in ("/usr/local/lib", "/usr/lib"):  # make install's, before ldconfig has run
        yield os.path.join(prefix, "libtcjoin.so.1")
    found = ctypes.util.find_library("tcjoin")
    if found:
        yield found


def _load():
    errors = []
    for path in _candidates():
        try:
            return ctypes.CDLL(path)
        except OSError as e:
            errors.append(str(e))
    raise ImportError("tcjoin: libtcjoin not found (run make in the repository, or make install; "
                      "TCJOIN_LIBRARY names the file): " + "; ".join(errors))


lib = _load()
P = ctypes.c_void_p
S = ctypes.c_size_t
D = ctypes.c_double
C = ctypes.c_char_p
I = ctypes.c_int
PROGRESS_FN = ctypes.CFUNCTYPE(I, P, C, D)
PAIRS_FN = ctypes.CFUNCTYPE(I, P, S, ctypes.POINTER(ctypes.c_uint32),
                            ctypes.POINTER(ctypes.c_uint32), ctypes.POINTER(D))

_sigs = {
    "tcj_version": (C, []),
    "tcj_api_version": (I, []),
    "tcj_open": (I, [C, C, ctypes.POINTER(P)]),
    "tcj_close": (None, [P]),
    "tcj_error": (C, [P]),
    "tcj_set": (I, [P, C, C]),
    "tcj_get": (I, [P, C, C, S]),
    "tcj_progress": (D, [P]),
    "tcj_cancel": (None, [P]),
    "tcj_data_wrap": (I, [P, P, S, S, I, C, ctypes.POINTER(P)]),
    "tcj_data_free": (None, [P]),
    "tcj_exec": (I, [P, P, D, C]),
    "tcj_records": (C, [P]),
    "tcj_text": (C, [P]),
    "tcj_count": (I, [P, P, D, C, ctypes.POINTER(ctypes.c_uint64)]),
    "tcj_perpoint": (I, [P, P, D, C, P]),
    "tcj_pairs": (I, [P, P, D, C, PAIRS_FN, P]),
    "tcj_graph_rows": (I, [P, P, D, C, I, P]),
    "tcj_graph_fill": (I, [P, P, D, C, I, P, P, P]),
    "tcj_kdist": (I, [P, P, I, C, P]),
    "tcj_dbscan": (I, [P, P, D, S, C, P, P, ctypes.POINTER(S)]),
    "tcj_hdbscan": (I, [P, P, C, C, P, P, P]),
    "tcj_sweep": (I, [P, P, D, C, ctypes.POINTER(D), ctypes.POINTER(D)]),
}
for _name, (_res, _args) in _sigs.items():
    _f = getattr(lib, _name)
    _f.restype = _res
    _f.argtypes = _args

if lib.tcj_api_version() != 1:
    raise ImportError("tcjoin: libtcjoin's API version %d, this module speaks 1"
                      % lib.tcj_api_version())


def enc(s):
    return None if s is None else str(s).encode()


def error(ctx):
    return (lib.tcj_error(ctx) or b"").decode(errors="replace")


def _bar(desc):
    """A tqdm bar where tqdm is installed, else None."""
    try:
        from tqdm.auto import tqdm
    except ImportError:
        return None
    return tqdm(total=1000, desc=desc, leave=False)


# The return code of the call a KeyboardInterrupt stopped: ECANCEL where
# it stopped early, OK where it had finished.
last_interrupted_rc = None


def call(ctx, what, fn, *args, progress=None, meanwhile=None):
    """fn(*args) (a libtcjoin call on ctx) on a worker thread, the caller
    waiting so that Ctrl-C cancels it (tcj_cancel) and, after a second,
    a progress bar shows tcj_progress (progress=False: never; True: at
    once); meanwhile (a function), where given, runs on the calling thread
    first, under the call. Raises the library's error as an exception."""
    out = {}

    done = threading.Event()  # not Thread.join: an interrupted join can leave
                              # is_alive() False while the thread runs

    def run():
        try:
            out["rc"] = fn(*args)
        finally:
            done.set()

    t = threading.Thread(target=run, daemon=True)
    t0 = time.monotonic()
    t.start()
    bar = None
    try:
        if meanwhile is not None:
            meanwhile()
        while not done.wait(0.05):
            if bar is None and progress is not False and \
                    (progress or time.monotonic() - t0 > 1.0):
                bar = _bar(what) or False
            if bar:
                f = lib.tcj_progress(ctx)
                if f >= 0:
                    bar.n = int(min(max(f, 0.0), 1.0) * 1000)
                    bar.refresh()
    except KeyboardInterrupt:
        # again until it ends: a command clears the flag as it starts
        while not done.is_set():
            lib.tcj_cancel(ctx)
            done.wait(0.05)
        if bar:
            bar.close()
        global last_interrupted_rc
        last_interrupted_rc = out.get("rc")
        raise
    if bar:
        bar.close()
    rc = out.get("rc", EINVAL)
    if rc != OK:
        _raise(rc, error(ctx))
    return rc
