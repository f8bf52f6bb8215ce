#!/bin/sh
# The README's tour ("A short tour"), taken from README.md itself so the two
# never drift, run line by line as written in one batch session. Every line
# must succeed, except that a line whose comment starts "GPU:" may fail on a
# machine without a GPU, and then only with the one line saying it needs one.
# The tour's relative dataset path is resolved as in a checkout beside
# shared/: ../shared/datasets is linked to $TCJOIN_DATASETS.
# usage: tests/cli/tour.sh PATH/TO/tcjoin   (exit 0 pass, 1 fail)
set -u
here=$(cd "$(dirname "$0")/../.." && pwd)
bin=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
data=${TCJOIN_DATASETS:-$(cd "$here/.." && pwd)/shared/datasets}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/repo" "$tmp/shared"
ln -s "$data" "$tmp/shared/datasets"

sed -n '/^## A short tour/,/^## /p' "$here/README.md" |
    sed -n 's/^    tcjoin> //p' >"$tmp/repo/tour.tcj"
lines=$(wc -l <"$tmp/repo/tour.tcj")
if [ "$lines" -lt 10 ]; then
    echo "README.md: expected the tour's 'tcjoin>' lines, found $lines"
    exit 1
fi

(cd "$tmp/repo" && "$bin" --db "$tmp/tour.db" tour.tcj </dev/null >"$tmp/out" 2>"$tmp/err")
status=$?
fail=0
# Errors read "tcjoin: error: tour.tcj:LINE: message".
while IFS= read -r e; do
    n=$(printf '%s\n' "$e" | sed -n 's/^tcjoin: error: tour\.tcj:\([0-9]*\): .*/\1/p')
    line=$(sed -n "${n:-0}p" "$tmp/repo/tour.tcj")
    case "$line" in
    *"# GPU:"*)
        if printf '%s\n' "$e" | grep -Eqi 'needs an? (NVIDIA )?GPU|no CUDA device'; then
            echo "ok (no GPU here): $line"
            continue
        fi ;;
    esac
    echo "tour line ${n:-?} failed: $line"
    echo "  $e"
    fail=1
done <"$tmp/err"
if [ "$fail" -eq 0 ] && [ -s "$tmp/err" ] && [ "$status" -ne 1 ]; then
    echo "exit status $status with GPU lines refused, expected 1"; fail=1
fi
if [ "$fail" -eq 0 ] && [ ! -s "$tmp/err" ] && [ "$status" -ne 0 ]; then
    echo "exit status $status without errors, expected 0"; fail=1
fi
# The tour's sweep must leave an eps for the lines after it.
if ! grep -q '^eps .*(from the sweep' "$tmp/out"; then
    echo "the tour's sweep made no eps current"; fail=1
fi
if [ "$fail" -ne 0 ]; then
    echo "--- output (tail)"; tail -n 30 "$tmp/out"
    exit 1
fi
echo "tour: $lines lines ok"
exit 0
