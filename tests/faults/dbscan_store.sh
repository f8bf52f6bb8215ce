#!/bin/sh
# A DBSCAN is stored all or nothing: the runs of its passes, its dbscans
# row and its size bins in one transaction. A write refused part-way (a
# trigger stands in for a full disk or a lock held past the wait) leaves
# no pass run without its dbscans row and no dbscans row naming a run that
# is not there; once nothing refuses, the row names every pass's run.
. "$(dirname "$0")/lib.sh"
fsql=$build/tests/f_sql
[ -x "$fsql" ] || fail "no helper at $fsql (make tests)"
db=$dir/s.db
setup='gen uniform n=3000 d=2 seed=5; eps 0.03'
"$bin" --db "$db" -e "$setup; run cpu" >/dev/null 2>&1 || fail "creating the log"

sql() { "$fsql" "$db" "$1" || fail "f_sql: $1"; }
# counts: "runs dbscans dbscan_sizes"
counts() {
    echo "$(sql 'SELECT count(*) FROM runs') $(sql 'SELECT count(*) FROM dbscans')" \
        "$(sql 'SELECT count(*) FROM dbscan_sizes')"
}
# dbscan LABEL: one dbscan in a new session; stderr kept
dbscan() {
    "$bin" --db "$db" -e "$setup; dbscan" >"$dir/out" 2>"$dir/err"
    grep -q '^dbscan [0-9]*: eps' "$dir/out" ||
        fail "$1: the clustering did not run: $(cat "$dir/out" "$dir/err")"
}

# refused TABLE WHAT: a trigger refuses every insert into TABLE; one
# dbscan then stores nothing at all, and says why
refused() {
    sql "CREATE TRIGGER t_refuse BEFORE INSERT ON $1 BEGIN SELECT RAISE(ABORT, 'refused'); END"
    before=$(counts)
    dbscan "$2 refused"
    after=$(counts)
    [ "$after" = "$before" ] ||
        fail "refused $2 left part of the clustering (runs dbscans sizes): $before -> $after"
    grep -q 'refused' "$dir/err" "$dir/out" || fail "the refusal was not reported: $(cat "$dir/err")"
    sql "DROP TRIGGER t_refuse"
    echo "$2 refused: nothing stored ($after)"
}

# 1. The dbscans row is refused after the passes' runs went in.
refused dbscans "the dbscans row"
# 2. The size bins are refused after the pass runs and the dbscans row
#    went in (the last writes of the transaction).
refused dbscan_sizes "the size bins"

# 3. Nothing refuses: one dbscans row, size bins, and a run for each pass
#    it names, all new.
before_runs=$(sql 'SELECT count(*) FROM runs')
dbscan "stored"
[ "$(sql 'SELECT count(*) FROM dbscans')" = 1 ] || fail "no dbscans row stored"
named=$(sql "SELECT (run_core IS NOT NULL) + (run_union IS NOT NULL) + (run_border IS NOT NULL)
             FROM dbscans")
present=$(sql "SELECT count(*) FROM runs r, dbscans b
               WHERE r.id IN (b.run_core, b.run_union, b.run_border) AND r.id > $before_runs")
added=$(($(sql 'SELECT count(*) FROM runs') - before_runs))
[ "$named" -ge 1 ] || fail "the dbscans row names $named pass runs"
[ "$present" = "$named" ] && [ "$added" = "$named" ] ||
    fail "the dbscans row names $named runs, $present of them present, $added runs added"
[ "$(sql 'SELECT count(*) FROM dbscan_sizes')" -ge 1 ] || fail "no size bins stored"
[ "$("$fdb" check "$db")" = ok ] || fail "the log is damaged"
echo "stored: one dbscans row naming its $named pass runs"
