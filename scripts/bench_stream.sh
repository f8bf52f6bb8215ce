#!/bin/sh
# A dataset larger than the device (kernels/kern_stream.c),
# made so with `set gpu-mem`: one batch session on uniform n=1e6, d=128
# (seed 1, eps 3.69, S = 80), COUNT, each engine run whole (twice: cold,
# then the cached dataset) and then under caps that make it stream; then
# fasted's k-distance (K = 16) whole and under a cap.
#   sh scripts/bench_stream.sh TCJOIN [N]
# Prints one line per run:
#   engine cap= pairs= time_s= kernel_s h2d_s chunks rows runs peak_MB
# and one per k-distance:
#   kdist engine cap= time_s= variant (", streamed CHUNKSxROWS" when cut)
set -u
T=$1
N=${2:-1000000}
"$T" --json -e "gen uniform n=$N d=128 seed=1; eps 3.69;
    run fasted; run fasted; set gpu-mem 128M; run fasted; set gpu-mem 64M; run fasted;
    set gpu-mem all; run exact; run exact; set gpu-mem 600M; run exact; set gpu-mem 256M; run exact;
    set gpu-mem all; kdist 16 engine=fasted; kdist 16 engine=fasted; set gpu-mem 128M;
    kdist 16 engine=fasted" 2>&1 |
    python3 -c '
import json, sys
cap = "all"
for l in sys.stdin:
    l = l.strip()
    if not l.startswith("{"):
        continue
    o = json.loads(l)
    if o.get("type") == "set" and o.get("name") == "gpu-mem":
        cap = o.get("value", cap)
    capm = cap if cap == "all" else "%dM" % (int(cap) // 1000000)
    if o.get("type") == "kdist":
        print("kdist %s cap=%s time_s=%.3f %s" % (o["engine"], capm, o["time_s"], o["variant"]))
    if o.get("type") != "run":
        continue
    c = o.get("counters", {})
    ph = o.get("phases", {})
    print("%s cap=%s pairs=%d time_s=%.3f kernel_s=%.4f h2d_s=%.3f chunks=%d rows=%d runs=%d peak_MB=%.1f" % (
        o["engine"], capm, o["pairs"], o["time_s"], o["kernel_s"], ph.get("h2d", 0),
        c.get("stream_chunks", 0), c.get("stream_chunk_rows", 0), c.get("stream_runs", 1),
        c.get("device_mem_peak", 0) / 1e6))
'
