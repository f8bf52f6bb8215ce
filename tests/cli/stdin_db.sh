#!/bin/sh
# Errors of commands read from stdin name the line, as a script's do; a
# --db FILE in a directory that does not exist is refused in one line and
# no directory is created.
# usage: tests/cli/stdin_db.sh PATH/TO/tcjoin   (exit 0 pass, 1 fail)
set -u
bin=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
printf 'gen uniform n=50 d=2 seed=1\nbogus\neps x\n' |
    "$bin" --db "$tmp/s.db" >"$tmp/out" 2>"$tmp/err"
status=$?
want="tcjoin: error: stdin:2: unknown command 'bogus' (try help)
tcjoin: error: stdin:3: eps: expected a positive number, got 'x'"
if [ "$(cat "$tmp/err")" != "$want" ]; then
    echo "stdin errors:"; cat "$tmp/err"; echo "expected:"; echo "$want"; fail=1
fi
[ $status -eq 1 ] || { echo "stdin with errors: exit $status, expected 1"; fail=1; }

"$bin" --db "$tmp/no/such/dir/x.db" -e 'eps 1' >"$tmp/out" 2>"$tmp/err"
status=$?
if [ -e "$tmp/no" ]; then
    echo "--db created $tmp/no"; fail=1
fi
if [ "$(wc -l <"$tmp/err")" -ne 1 ] || ! grep -q "session log unavailable: $tmp/no/such/dir/x.db: its directory does not exist" "$tmp/err"; then
    echo "--db in a missing directory:"; cat "$tmp/err"; fail=1
fi
grep -q '^eps 1$' "$tmp/out" || { echo "the commands did not run unlogged"; cat "$tmp/out"; fail=1; }
[ $status -eq 1 ] || { echo "--db refused: exit $status, expected 1"; fail=1; }
# The default place still gets its directories.
XDG_DATA_HOME="$tmp/xdg" TCJOIN_DB= "$bin" -e 'eps 1' >/dev/null 2>"$tmp/err" ||
    { echo "default log:"; cat "$tmp/err"; fail=1; }
[ -f "$tmp/xdg/tcjoin/sessions.db" ] || { echo "the default log was not created"; fail=1; }
[ $fail -eq 0 ] && echo "stdin_db: ok"
exit $fail
