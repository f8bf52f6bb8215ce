#!/bin/sh
# Logs tcjoin must not write: one from a newer schema version, a damaged
# one (garbage over a table's root page), a file that is not a database.
# Each is refused with one line, batch mode exits 1, and the file is left
# byte for byte as it was.
. "$(dirname "$0")/lib.sh"
cmds='gen uniform n=100 d=2; eps 0.2; run cpu'

# refused FILE PATTERN WHAT: tcjoin on FILE exits 1 with PATTERN, FILE unchanged.
refused() {
    before=$(file_sum "$1")
    "$bin" --db "$1" -e "$cmds" >"$dir/out" 2>"$dir/err"
    status=$?
    [ $status -eq 1 ] || fail "$3: exit $status, expected 1"
    grep -q "session log unavailable: $1: .*$2" "$dir/err" || fail "$3: no line /$2/: $(cat "$dir/err")"
    [ "$(file_sum "$1")" = "$before" ] || fail "$3: the file was written to"
    # The commands still ran, unlogged.
    grep -q '^run 0: cpu' "$dir/out" || fail "$3: the commands did not run: $(cat "$dir/out")"
    echo "$3: refused, untouched: $(head -n 1 "$dir/err")"
}

db=$dir/newer.db
"$bin" --db "$db" -e "$cmds" >/dev/null 2>&1 || fail "creating a log"
"$fdb" version "$db" 999 || fail "setting the version"
[ ! -s "$db-wal" ] || fail "a WAL is left beside the log"
refused "$db" "schema version 999 is newer than this tcjoin" "newer schema"

db=$dir/damaged.db
"$bin" --db "$db" -e "$cmds; $cmds; $cmds" >/dev/null 2>&1 || fail "creating a log"
# Page 2 is the root page of the first table (sessions): garbage over it.
dd if=/dev/urandom of="$db" bs=4096 seek=1 count=1 conv=notrunc 2>/dev/null
refused "$db" "damaged" "damaged log"

db=$dir/notes.txt
i=0
while [ $i -lt 200 ]; do echo "not a database, just notes"; i=$((i + 1)); done >"$db"
refused "$db" "damaged or not a database" "text file"
