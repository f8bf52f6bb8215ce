#!/bin/sh
# docs/PYTHON.md's C example, compiled against include/tcjoin.h and the
# build's libtcjoin.so and run: a 40 x 25 lattice of spacing 0.25 at eps
# 0.3 has 1,000 self-pairs and 2 x (39 x 25 + 40 x 24) = 3,870 lattice
# neighbours (the diagonal, 0.354, is beyond eps), 4,870 pairs; at minPts
# 5 the inner points are core and join every point into one cluster.
# Exit 0 pass, 1 fail.
# usage: tests/cli/api_example.sh PATH/TO/tcjoin
set -u
build=$(cd "$(dirname "$1")" && pwd)
here=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
[ -e "$build/libtcjoin.so" ] || { echo "no $build/libtcjoin.so"; exit 1; }
sed -n '/^<!-- c-example -->/,/^<!-- \/c-example -->/p' "$here/docs/PYTHON.md" |
    grep -v '^<!--\|^```' >"$tmp/prog.c"
# the sanitized build's library wants its runtime in the program too
san=""
nm -D "$build/libtcjoin.so" 2>/dev/null | grep -q __asan_init && san="-fsanitize=address,undefined"
${CC:-cc} -std=c11 -Wall -Wextra -Werror $san -I"$here/include" -o "$tmp/prog" "$tmp/prog.c" \
    -L"$build" -ltcjoin -Wl,-rpath,"$build" || exit 1
"$tmp/prog" >"$tmp/out" 2>&1 || { cat "$tmp/out"; exit 1; }
printf 'pairs 4870\nclusters 1\n' | diff -u - "$tmp/out"
