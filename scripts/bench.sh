#!/bin/sh
# make bench: the performance numbers (targets live here, never in tests).
# With a CUDA device: builds the GPU benchmark drivers and runs
# scripts/gpu-check (GPU tests, sanitizer, SASS, FASTED targets and
# Figure 8 against cuBLAS in the same run), then the FP64 engines' benchmarks
# (scripts/bench_ted). Without one: the eps-search benchmark on the CPU, and
# a line saying how to run the GPU part on a machine that has a device.
# Then, either way, the CPU benchmarks (scripts/bench_cpu.sh: FP64 peak,
# the CPU kernels' GFLOPS, the grid index against brute force).
#   sh scripts/bench.sh [BUILD]
set -u
cd "$(dirname "$0")/.." || exit 2
B=${1:-build}
gpus=$("$B/tcjoin" --db /dev/null -e engines 2>/dev/null | sed -n 's/^CUDA devices: \([0-9]*\).*/\1/p')
if [ "${gpus:-0}" -gt 0 ]; then
    BUILD=$B sh scripts/gpu-check-build "${SM:-90}" || exit 1
    sh scripts/bench_ted "$B" "$B/bench" --build-only || exit 1
    BUILD=$B bash scripts/gpu-check
    sh scripts/bench_ted "$B" "$B/bench"
else
    echo "bench: no CUDA device here: CPU benchmarks only."
    echo "bench: for the GPU numbers build here with 'sh scripts/gpu-pack',"
    echo "bench: carry build-gpu to a GPU machine and run 'bash scripts/gpu-check' there."
    LIMIT=${LIMIT:-5000} GEN_N=${GEN_N:-5000} sh scripts/bench_sweep.sh "$B"
fi
sh scripts/bench_cpu.sh "$B"
