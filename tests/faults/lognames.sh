#!/bin/sh
# The session log's companion files by name: LOG-journal (which SQLite
# deletes or replays when it next opens the log), -wal and -shm are
# refused as outputs (export, run out=, dbscan out=, curve csv=) even
# with force and before SQLite has made them, under any spelling of their
# directory and beside the real log when --db names a link to it; one
# line names the file and why; nothing is written there and the log opens
# afterwards with everything in it.
. "$(dirname "$0")/lib.sh"
db=$dir/s.db
setup='gen uniform n=300 d=3 seed=2; eps 0.2'
"$bin" --db "$db" -e "$setup; run cpu" >/dev/null 2>&1 || fail "creating the log"
runs=$("$fdb" count "$db" runs)

# refused LABEL FILE CMDS: exit 1, one line naming FILE, FILE not made
refused() {
    label=$1 file=$2
    shift 2
    "$bin" --db "${logarg:-$db}" -e "$*" >"$dir/stdout" 2>"$dir/stderr"
    status=$?
    [ $status -eq 1 ] || fail "$label: exit $status, expected 1: $(cat "$dir/stderr")"
    grep -q -- "$file: is the open session log" "$dir/stderr" ||
        fail "$label: no line naming $file: $(cat "$dir/stderr")"
    [ -e "$file" ] && fail "$label: $file was written"
    return 0
}

[ -e "$db-journal" ] && fail "the log has a -journal file before the test"
refused "export to -journal" "$db-journal" "export runs csv $db-journal"
grep -q -- "-journal file" "$dir/stderr" || fail "the line does not say why: $(cat "$dir/stderr")"
refused "export force to -journal" "$db-journal" "export runs json $db-journal force"
refused "run out= to -journal" "$db-journal" "$setup; run cpu mode=pairs out=$db-journal force"
refused "dbscan out= to -journal" "$db-journal" "$setup; dbscan out=$db-journal force"
refused "curve csv= to -journal" "$db-journal" "$setup; curve 0 0.3 bins=4 csv=$db-journal force"
refused "another spelling" "$dir/./s.db-journal" "export runs csv $dir/./s.db-journal force"
mkdir "$dir/sub"
ln -s "$dir" "$dir/sub/up"
refused "through a linked directory" "$dir/sub/up/s.db-journal" \
    "export runs csv $dir/sub/up/s.db-journal force"
(cd "$dir" && "$bin" --db s.db -e "export runs csv s.db-journal force" >"$dir/stdout" \
    2>"$dir/stderr")
[ $? -eq 1 ] && [ ! -e "$dir/s.db-journal" ] || fail "a relative name: $(cat "$dir/stderr")"
echo "LOG-journal refused (export, run out=, dbscan out=, curve csv=; force; other spellings)"

# --db through a link: SQLite keeps its files beside the real log.
ln -s "$db" "$dir/sub/link.db"
logarg=$dir/sub/link.db refused "--db a link" "$db-journal" "export runs csv $db-journal force"
logarg=$dir/sub/link.db refused "--db a link, its name" "$dir/sub/link.db-journal" \
    "export runs csv $dir/sub/link.db-journal force"
echo "--db through a symbolic link: the real log's -journal refused"

# Every run is still there and the log opens and writes.
[ "$("$fdb" check "$db")" = ok ] || fail "the log is damaged"
"$bin" --db "$db" -e "$setup; run cpu" >"$dir/out" 2>&1 || fail "the log is not usable: $(cat "$dir/out")"
[ "$("$fdb" count "$db" runs)" -gt "$runs" ] || fail "runs were lost"
# A name that only starts like the log's is an ordinary output.
"$bin" --db "$db" -e "export runs csv $db-journal.csv" >"$dir/out" 2>&1 ||
    fail "$db-journal.csv refused: $(cat "$dir/out")"
echo "the log intact; $db-journal.csv is an ordinary name"
