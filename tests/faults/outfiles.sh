#!/bin/sh
# Output files (export FILE, run out=, curve csv=): an existing file or a
# symbolic link is refused without force (and a link is replaced, never
# followed, with it); the open session log's files are refused even with
# force, by any name (-wal, -shm, a symbolic or hard link); no temporary
# file is left behind; control characters in file names and data fields
# reach the terminal escaped.
. "$(dirname "$0")/lib.sh"
db=$dir/s.db
out=$dir/o
mkdir "$out"
setup='gen uniform n=300 d=3 seed=2; eps 0.2'
"$bin" --db "$db" -e "$setup; run cpu; run cpu-fp16" >/dev/null 2>&1 || fail "creating the log"
runs=$("$fdb" count "$db" runs)

# tc EXPECTED_STATUS LABEL CMDS: run tcjoin on the log, check the status.
tc() {
    want=$1 label=$2
    shift 2
    "$bin" --db "$db" -e "$*" >"$dir/stdout" 2>"$dir/stderr"
    status=$?
    [ $status -eq "$want" ] || fail "$label: exit $status, expected $want: $(cat "$dir/stderr")"
}
said() { # PATTERN LABEL: stderr holds it
    grep -q -- "$1" "$dir/stderr" || fail "$2: no /$1/ in: $(cat "$dir/stderr")"
}

tc 0 "export" "export runs csv $out/r.csv"
head -n 1 "$out/r.csv" | grep -q '^run_id,' || fail "export wrote no CSV header"
echo "precious" >"$out/r.csv"
tc 1 "export over a file" "export runs csv $out/r.csv"
said "$out/r.csv: exists; add force to overwrite it" "export over a file"
[ "$(cat "$out/r.csv")" = precious ] || fail "export over a file changed it without force"
tc 0 "export force" "export runs csv $out/r.csv force"
head -n 1 "$out/r.csv" | grep -q '^run_id,' || fail "export force did not replace the file"

echo "keep me" >"$out/target"
ln -s target "$out/link"
tc 1 "export onto a link" "export run 1 json $out/link"
said "is a symbolic link; add force" "export onto a link"
tc 0 "export force onto a link" "export run 1 json $out/link force"
[ -L "$out/link" ] && fail "force followed the link instead of replacing it"
[ "$(cat "$out/target")" = "keep me" ] || fail "the link's target was written"
echo "existing files and links: refused without force, replaced (not followed) with it"

ln -s "$db" "$out/dblink"
ln "$db" "$out/dbhard"
for f in "$db" "$db-wal" "$db-shm" "$out/dblink" "$out/dbhard"; do
    tc 1 "export onto $f" "export runs csv $f force"
    said "$f: is the open session log" "export onto $f"
done
tc 1 "run out= onto the log" "$setup; run cpu mode=pairs out=$db-wal force"
said "is the open session log" "run out= onto the log"
tc 1 "curve csv= onto the log" "$setup; curve 0 0.3 bins=4 csv=$db force"
said "is the open session log" "curve csv= onto the log"
[ "$("$fdb" check "$db")" = ok ] || fail "the log is damaged"
echo "the session log's files (db, -wal, -shm, symbolic and hard links): refused even with force"

echo "precious" >"$out/pairs.bin"
echo "precious" >"$out/counts.txt"
echo "precious" >"$out/curve.csv"
before=$("$fdb" count "$db" runs)
tc 1 "run out= over a file" "$setup; run cpu mode=pairs out=$out/pairs.bin"
said "exists; add force" "run out= over a file"
tc 1 "perpoint out= over a file" "$setup; run cpu mode=perpoint out=$out/counts.txt"
said "exists; add force" "perpoint out= over a file"
tc 1 "curve csv= over a file" "$setup; curve 0 0.3 bins=4 csv=$out/curve.csv"
said "exists; add force" "curve csv= over a file"
[ "$("$fdb" count "$db" runs)" = "$before" ] || fail "a refused output file still ran the join"
for f in pairs.bin counts.txt curve.csv; do
    [ "$(cat "$out/$f")" = precious ] || fail "$f changed without force"
done
tc 0 "outputs with force" "$setup; run cpu mode=pairs out=$out/pairs.bin force;
    run cpu mode=perpoint out=$out/counts.txt force; curve 0 0.3 bins=4 csv=$out/curve.csv force"
[ "$(wc -l <"$out/counts.txt")" = 300 ] || fail "perpoint force: $(wc -l <"$out/counts.txt") lines of 300"
head -n 1 "$out/curve.csv" | grep -q '^eps,pairs,selectivity' || fail "curve force: no header"
[ "$(cat "$out/pairs.bin")" != precious ] || fail "pairs force: not replaced"
echo "run out= (pairs, perpoint) and curve csv=: refused before the join, replaced with force"

# The same refusal under /dev/shm and through /proc/self/cwd: those names
# were written in place (appended to, or truncated by export's reopen by
# name, and followed as links) because they start with /dev or /proc.
shm=$(mktemp -d /dev/shm/tcjoin-out.XXXXXX 2>/dev/null) || shm=
for base in ${shm:+"$shm"} "/proc/self/cwd"; do
    if [ "$base" = /proc/self/cwd ]; then where=$out; rel=/proc/self/cwd; cd "$out" || fail "cd"
    else where=$base; rel=$base; fi
    for f in pairs.bin curve.csv r.csv; do echo precious >"$where/$f"; done
    echo "keep me" >"$where/target"
    ln -sf target "$where/link.csv"
    tc 1 "run out= over $rel/pairs.bin" "$setup; run cpu mode=pairs out=$rel/pairs.bin"
    said "exists; add force" "run out= over $rel/pairs.bin"
    tc 1 "curve csv= over $rel/curve.csv" "$setup; curve 0 0.3 bins=4 csv=$rel/curve.csv"
    said "exists; add force" "curve csv= over $rel/curve.csv"
    tc 1 "export over $rel/r.csv" "export runs csv $rel/r.csv"
    said "exists; add force" "export over $rel/r.csv"
    tc 1 "export onto $rel/link.csv" "export runs csv $rel/link.csv"
    said "is a symbolic link; add force" "export onto $rel/link.csv"
    for f in pairs.bin curve.csv r.csv; do
        [ "$(cat "$where/$f")" = precious ] || fail "$rel/$f changed without force"
    done
    tc 0 "export force onto $rel/link.csv" "export runs csv $rel/link.csv force"
    [ -L "$where/link.csv" ] && fail "force followed $rel/link.csv instead of replacing it"
    [ "$(cat "$where/target")" = "keep me" ] || fail "$rel/link.csv's target was written"
    tc 0 "export force over $rel/r.csv" "export runs csv $rel/r.csv force"
    head -n 1 "$where/r.csv" | grep -q '^run_id,' || fail "export force over $rel/r.csv: not replaced"
    rm -f "$where/target" "$where/link.csv" "$where/pairs.bin" "$where/curve.csv"
    [ "$base" = /proc/self/cwd ] && cd - >/dev/null
    echo "$rel: existing files and links refused without force, replaced with it"
done
[ -n "$shm" ] && rm -rf "$shm"
rm -f "$out/r.csv"

leftover=$(ls -A "$out" | grep tcjoin-)
[ -z "$leftover" ] || fail "temporary files left: $leftover"

esc=$(printf '\033')
name="$out/x${esc}[31my.csv"
tc 0 "export to a name with ESC" "export runs csv '$name'"
[ -f "$name" ] || fail "no file with the ESC name"
grep -q "$esc" "$dir/stdout" && fail "a raw ESC reached the terminal: $(od -c "$dir/stdout" | head)"
grep -qF 'x\x1b[31my.csv' "$dir/stdout" || fail "the name is not shown escaped: $(cat "$dir/stdout")"
printf 'a,b\n1,2\n3,4%s[2J\n' "$esc" >"$out/data.csv"
tc 1 "a CSV field with ESC" "load $out/data.csv"
grep -q "$esc" "$dir/stderr" && fail "a raw ESC reached the terminal from a CSV field"
grep -qF '\x1b[2J' "$dir/stderr" || fail "the field is not shown escaped: $(cat "$dir/stderr")"
echo "control characters in file names and CSV fields: printed as \\x1b"
