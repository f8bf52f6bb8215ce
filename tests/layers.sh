#!/bin/sh
# Layering checks (house rules 9 and 10), run by tests/run.sh:
# 1. no include of a path that climbs out of its folder: headers are found
#    through the Makefile's -I;
# 2. ui/ reads the session log through store.h's functions only: no SQL
#    text, no store_query (the raw statement entry), no sqlite3;
# 3. ui/ reaches the GPUs through src/gpu_status.h: never kernels.h or
#    nvml.h;
# 4. no two modules include each other's headers (module: a .c and its .h
#    of one name), beyond the one listed below;
# 5. the application layer (src/cli/: front ends, commands, runner,
#    settings, the MPI program) sits on top: no file outside it includes
#    one of its headers (store/, ui/, the domain in src/, kernels/);
# 6. the clients (src/cluster/: the clustering algorithms and the
#    k-distance) sit above the engines: nothing in src/ outside src/cluster/
#    and src/cli/, and nothing in kernels/, includes one of their headers
#    (store/ and ui/ may: they store and draw the clients' results).
# Prints each violation; exit 0 when there is none.
cd "$(dirname "$0")/.." || exit 2
bad=0
fail() {
    echo "layers: $*"
    bad=1
}

hits=$(grep -rnE '^[[:space:]]*#[[:space:]]*include[[:space:]]*"\.\./' src store ui kernels tests scripts 2>/dev/null)
[ -z "$hits" ] || fail "includes through ../ (use the Makefile's -I):
$hits"

hits=$(grep -nE '\b(SELECT|INSERT INTO|DELETE FROM|CREATE TABLE|PRAGMA)\b|UPDATE [a-z_]+ SET|store_query|sqlite3' ui/*.c ui/*.h)
[ -z "$hits" ] || fail "SQL in ui/ (add a store.h function returning structs):
$hits"

hits=$(grep -nE '^#include "(kernels|nvml)\.h"' ui/*.c ui/*.h)
[ -z "$hits" ] || fail "ui/ includes kernels.h or nvml.h (use gpu_status.h):
$hits"

# Allowed: store_int is store's private header (one module). Sorted pairs
# "a b".
known="store store_int"
edges=$(for f in src/*.[ch] src/cluster/*.[ch] src/cli/*.[ch] store/*.[ch] ui/*.[ch] kernels/*.[ch]; do
    m=$(basename "${f%.*}")
    sed -n 's/^#include "\([a-z_0-9]*\)\.h".*/\1/p' "$f" | while read -r h; do
        [ "$h" != "$m" ] && echo "$m $h"
    done
done | sort -u)
pairs=$(echo "$edges" | awk '{ e[$1 " " $2] = 1 }
    END { for (k in e) { split(k, a, " "); if ((a[2] " " a[1]) in e && a[1] < a[2]) print a[1] " " a[2] } }' | sort)
new=$(echo "$pairs" | while read -r p; do
    [ -n "$p" ] && ! echo "$known" | grep -qx "$p" && echo "$p"
done)
[ -z "$new" ] || fail "modules that include each other's headers:
$new"

cli=$(cd src/cli && ls *.h | sed 's/\./\\./g' | paste -sd'|' -)
hits=$(grep -nE "^[[:space:]]*#[[:space:]]*include[[:space:]]*\"($cli)\"" src/*.[ch] src/cluster/*.[ch] src/*.cpp store/*.[ch] \
    ui/*.[ch] kernels/*.[ch] kernels/*.cu kernels/*.cuh 2>/dev/null)
[ -z "$hits" ] || fail "the domain, store/, ui/ or kernels/ include src/cli/ (the application layer):
$hits"

cluster=$(cd src/cluster && ls *.h | sed 's/\./\\./g' | paste -sd'|' -)
hits=$(grep -nE "^[[:space:]]*#[[:space:]]*include[[:space:]]*\"($cluster)\"" src/*.[ch] src/*.cpp \
    kernels/*.[ch] kernels/*.cu kernels/*.cuh 2>/dev/null)
[ -z "$hits" ] || fail "the engines (src/) or kernels/ include src/cluster/ (the clients above them):
$hits"

exit $bad
