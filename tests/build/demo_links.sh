#!/bin/sh
# make demo without a GPU builds B-cpu/ and links B/tcjoin and
# B/tcjoin-mpi to it (the README's paths); a later make must replace a link
# with the real program. In a temporary B, with stand-ins for the CPU-only
# programs (newer than every source):
#   1. over links made as make demo makes them, make -q says B/tcjoin and
#      B/tcjoin-mpi are out of date and make -n (also of `tests`) links the
#      real programs to those paths (every target is secondary, so make
#      used to call a link newer than the sources up to date);
#   2. `make demo-links` (the demo's last step) links both programs, and
#      only those B-cpu holds;
#   3. it leaves a real file at B/tcjoin alone.
# MPICC is set to a name make -n never runs, so the MPI rules are there
# with or without MPI. Exit 0 pass, 1 fail.
# usage: sh tests/build/demo_links.sh
set -u
cd "$(dirname "$0")/../.." || exit 1
# make here must not inherit a calling make's flags or a user's settings
unset MAKEFLAGS MFLAGS MAKELEVEL SM CPU_ONLY KOBJ_BUILD NVFLAGS SAN BUILD
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
b=$tmp/b
mkdir -p "$b-cpu"
for f in tcjoin tcjoin-mpi; do printf '#!/bin/sh\n' >"$b-cpu/$f"; chmod +x "$b-cpu/$f"; done
fail=0
mk() { make --no-print-directory CPU_ONLY=1 MPICC=mpicc-never-run BUILD="$b" "$@"; }
say() { # say OK|FAIL TEXT
    if [ "$1" = OK ]; then echo "ok: $2"; else echo "not ok: $2"; fail=1; fi
}

# 1. links as make demo makes them: make must not take them for the programs
mkdir -p "$b"
for f in tcjoin tcjoin-mpi; do ln -s "$b-cpu/$f" "$b/$f"; done
for f in tcjoin tcjoin-mpi; do
    mk -q "$b/$f" >/dev/null 2>&1
    rc=$?
    [ $rc -eq 1 ] && say OK "make -q $f over the link: out of date" ||
        say FAIL "make -q $f over the link: exit $rc, expected 1 (out of date)"
    mk -n "$b/$f" >"$tmp/n" 2>&1
    if grep -q -- "-o $b/$f " "$tmp/n"; then
        say OK "make -n $f links the real program over the link"
    else
        say FAIL "make -n $f: no link line for $b/$f"; tail -n 5 "$tmp/n"
    fi
done
mk -n tests >"$tmp/n" 2>&1
grep -q -- "-o $b/tcjoin " "$tmp/n" && say OK "make -n tests builds b/tcjoin over the link" ||
    say FAIL "make -n tests: no link line for $b/tcjoin"

# 2. the demo's link step links what b-cpu holds, then both
rm -rf "$b" "$b-cpu/tcjoin"
printf '#!/bin/sh\n' >"$tmp/tcjoin"
mk demo-links >"$tmp/out" 2>&1
mv "$tmp/tcjoin" "$b-cpu/tcjoin"
[ -L "$b/tcjoin" ] && say FAIL "demo-links linked b/tcjoin to a missing b-cpu/tcjoin" ||
    say OK "demo-links links only what b-cpu holds"
mk demo-links >"$tmp/out" 2>&1
for f in tcjoin tcjoin-mpi; do
    if [ -L "$b/$f" ] && [ "$(readlink -f "$b/$f")" = "$(readlink -f "$b-cpu/$f")" ]; then
        say OK "demo-links: $f -> b-cpu/$f"
    else
        say FAIL "demo-links: b/$f is not a link to b-cpu/$f"; cat "$tmp/out"
    fi
done

# 3. a real program at b/tcjoin stays
mkdir -p "$b"
rm -f "$b/tcjoin"
echo real >"$b/tcjoin"
mk demo-links >/dev/null 2>&1
if [ ! -L "$b/tcjoin" ] && [ "$(cat "$b/tcjoin")" = real ]; then
    say OK "demo-links leaves a real b/tcjoin alone"
else
    say FAIL "demo-links replaced a real b/tcjoin"
fi
exit $fail
