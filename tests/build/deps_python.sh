#!/bin/sh
# scripts/deps.sh asks for python3-sklearn exactly when
# tests/cli/dbscan_sklearn.sh would find no interpreter with scikit-learn
# (the first of $PYTHON, python3 on PATH, /usr/bin/python3). PATH starts
# with a python3 that has no scikit-learn and an apt-get that only records
# that it ran; deps.sh runs with DEPS_DRY_RUN=1 and must never call apt-get.
# Cases: 1. that python3 first on PATH, $PYTHON unset: the verdict follows
# /usr/bin/python3, probed here directly; 2. $PYTHON names an interpreter
# with scikit-learn: nothing to install; 3. $PYTHON names one without and
# /usr/bin/python3 has none: python3-sklearn is asked for (skipped where
# /usr/bin/python3 has scikit-learn: that case is 1's other branch).
# Exit 0 pass, 1 fail.
# usage: sh tests/build/deps_python.sh
set -u
cd "$(dirname "$0")/../.." || exit 1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/bin"
# python3 without scikit-learn: every import fails
printf '#!/bin/sh\nexit 1\n' >"$tmp/bin/python3"
printf '#!/bin/sh\nexit 0\n' >"$tmp/with-sklearn"
printf '#!/bin/sh\necho "$@" >>"%s/apt-get.ran"\nexit 0\n' "$tmp" >"$tmp/bin/apt-get"
chmod +x "$tmp/bin/python3" "$tmp/with-sklearn" "$tmp/bin/apt-get"
fail=0

deps() { # deps [VAR=VALUE...]: deps.sh's dry run with the fake PATH
    env -u PYTHON PATH="$tmp/bin:$PATH" DEPS_DRY_RUN=1 "$@" sh scripts/deps.sh >"$tmp/out" 2>&1
    if [ -e "$tmp/apt-get.ran" ]; then
        echo "not ok: deps.sh ran apt-get in a dry run: $(tr "\n" ";" <"$tmp/apt-get.ran")"
        fail=1
        rm -f "$tmp/apt-get.ran"
    fi
}

check() { # check CASE WANT(yes|no)
    if grep -q 'python3-sklearn' "$tmp/out"; then got=yes; else got=no; fi
    if [ "$got" = "$2" ]; then
        echo "ok: $1: python3-sklearn asked for: $got"
    else
        echo "not ok: $1: python3-sklearn asked for: $got, expected $2"
        sed 's/^/    /' "$tmp/out"
        fail=1
    fi
}

if /usr/bin/python3 -c 'import sklearn, numpy' >/dev/null 2>&1; then sys=yes; else sys=no; fi
deps
[ "$sys" = yes ] && want=no || want=yes
check "python3 on PATH without scikit-learn, /usr/bin/python3 with it: $sys" "$want"

deps PYTHON="$tmp/with-sklearn"
check "PYTHON with scikit-learn" no

if [ "$sys" = no ]; then
    deps PYTHON="$tmp/bin/python3"
    check "no interpreter with scikit-learn" yes
fi
exit $fail
