#!/bin/sh
# The docs check, run by tests/run.sh: what README.md, docs/*.md (not
# docs/history/, the archive) and man/tcjoin.1 name must exist.
# 1. paths: every repository path they name (src/..., kernels/..., tests/...,
#    scripts/..., docs/..., store/..., ui/..., include/..., man/..., python/...) exists;
#    globs (*), ellipses and placeholder words (NAME, FORMAT, ENGINE, KIND,
#    DIR, FILE) are skipped. A bare source file name (x.c, x.h, x.cu,
#    x.cuh, x.cpp) names a file somewhere in those folders.
# 2. commands and settings: every command of the command table
#    (src/cli/cmd_table.c's CMD_ROWS, each row's `.name` in its
#    src/cli/cmd_*.c) has a ".B NAME" entry in man/tcjoin.1, and every row of
#    src/cli/settings.c's settings_table a ".B set NAME" entry.
# 3. symbols: every identifier written in backticks that holds an
#    underscore (all lowercase or all uppercase: `engine_run`,
#    `kern_join_args.pair_dev`, `PAIRS_DBSCAN`) occurs as a word in the
#    sources (src/ kernels/ store/ ui/ include/ tests/ scripts/ python/, the Makefile)
#    or as a file's name; a backticked span that is one name, a member or a
#    call (`kd`, `engine.consume(spec, c, res)`) has each name in the
#    program's code (not counting the scripts' shell variables). JSON keys,
#    metric names and settings pass because the code writes them.
#    Mixed-case names (MPI_Bcast, epi_NAME) and fragments (`_rel_max`,
#    `store_`) are skipped; names of other projects and examples are listed
#    in $elsewhere below. docs/ARCHITECTURE.md and docs/ENGINES.md, the
#    maps, have every name with an underscore checked, backticks or not.
# 4. tables: every table of docs/BENCHMARKS.md follows, within its section
#    (since the last heading), a paragraph holding a date (YYYY-MM-DD) and a
#    command (text in backticks).
# 5. the map: every source file under src/ and kernels/ (src/*.[ch],
#    src/*.cpp, src/*/*.[ch], kernels/*.[ch], kernels/*.cu, kernels/*.cuh)
#    is named in docs/ARCHITECTURE.md, by its path or by its bare name (the
#    map writes a bare name after a path of its folder); kernels/ladder/'s
#    files are named by the folder, kernels/ladder/. The unnamed are listed.
# 6. environment: every TCJOIN_ variable the program reads (each
#    getenv("TCJOIN_...") in src/ kernels/ store/ ui/) has a ".B NAME" entry
#    in man/tcjoin.1's ENVIRONMENT section (a mention elsewhere, such as
#    SEVERAL HOSTS, does not count).
# Prints each finding; exit 0 when there is none.
# usage: tests/docs.sh              check the docs
#        tests/docs.sh --self-test  plant a stale path, a stale symbol, an
#        undated table, a command and a setting missing from the man page,
#        a source file missing from the map, and a variable whose entry
#        left ENVIRONMENT for another section, and fail unless the check
#        fails on each
# DOCS_PLANT=FILE checks FILE as one more doc (1, 3); DOCS_BENCH=FILE and
# DOCS_MAN=FILE stand in for docs/BENCHMARKS.md and man/tcjoin.1;
# DOCS_REQUIRE="PATH..." adds source files the map must name (5);
# DOCS_ONLY=DIGITS runs those parts only (the self-test's speed).
cd "$(dirname "$0")/.." || exit 2
export LC_ALL=C

if [ "${1:-}" = "--self-test" ]; then
    t=$(mktemp -d) || exit 2
    trap 'rm -rf "$t"' EXIT
    bad=0
    expect_fail() { # expect_fail WHAT TEXT VAR=VALUE...: the check fails, naming TEXT
        what=$1 text=$2
        shift 2
        if env "$@" sh tests/docs.sh >"$t/out" 2>&1; then
            echo "docs self-test: $what: the check passed"
            bad=1
        elif ! grep -qF -- "$text" "$t/out"; then
            echo "docs self-test: $what: the check failed without naming $text:"
            cat "$t/out"
            bad=1
        fi
    }
    # shellcheck disable=SC2016
    printf 'The join lives in `src/no_such_file.c`.\n' >"$t/path.md"
    expect_fail "a stale path" src/no_such_file.c DOCS_ONLY=1 DOCS_PLANT="$t/path.md"
    # shellcheck disable=SC2016
    printf 'Called as `no_such_function()`.\n' >"$t/sym.md"
    expect_fail "a stale symbol" no_such_function DOCS_ONLY=3 DOCS_PLANT="$t/sym.md"
    cp docs/BENCHMARKS.md "$t/bench.md"
    printf '\n## Planted\n\nNo date here.\n\n| a | b |\n|---|---|\n| 1 | 2 |\n' >>"$t/bench.md"
    expect_fail "an undated table" Planted DOCS_ONLY=4 DOCS_BENCH="$t/bench.md"
    grep -v '^\.B quit$' man/tcjoin.1 >"$t/quit.1"
    expect_fail "a command missing from the man page" "command quit" DOCS_ONLY=2 DOCS_MAN="$t/quit.1"
    grep -v '^\.B set threads ' man/tcjoin.1 >"$t/threads.1"
    expect_fail "a setting missing from the man page" "setting threads" DOCS_ONLY=2 DOCS_MAN="$t/threads.1"
    expect_fail "a source file missing from the map" src/no_such_module.c DOCS_ONLY=5 DOCS_REQUIRE=src/no_such_module.c
    # TCJOIN_DB_WAIT's entry moved from ENVIRONMENT to FILES
    awk '/^\.SH ENVIRONMENT/ { env = 1 } /^\.SH EXIT STATUS/ { env = 0 }
         env && $0 == ".B TCJOIN_DB_WAIT" { print ".B TCJOIN_DB_WAIT_GONE"; next }
         { print } /^\.SH FILES/ { print ".TP"; print ".B TCJOIN_DB_WAIT"; print "Moved." }' \
        man/tcjoin.1 >"$t/env.1"
    expect_fail "a variable missing from ENVIRONMENT" "variable TCJOIN_DB_WAIT" DOCS_ONLY=6 DOCS_MAN="$t/env.1"
    [ $bad -eq 0 ] && echo "docs self-test: the check fails on each planted name"
    exit $bad
fi

only=${DOCS_ONLY:-123456}
man=${DOCS_MAN:-man/tcjoin.1}
bench=${DOCS_BENCH:-docs/BENCHMARKS.md}
docs="README.md $(ls docs/*.md) ${DOCS_PLANT:-}"
tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT
bad=0
fail() {
    echo "$*" | sed 's/^/docs: /'
    bad=1
}
part() { case $only in *$1*) return 0 ;; esac; return 1; }

# Names written in the docs that belong to other projects, or stand for a
# kind of name (an example of a record key, the next migration).
elsewhere="ball_tree fmaf_rz ess_base_forward_signals odls_base_sigkill_timeout
pmix_mca_pcompress_zlib OPAL_PREFIX LD_LIBRARY_PATH dev1_items dev1_power_w
migration_10 migration_k cfg_no_async_copy_pipeline prog.c"

# The man page as text: \- is -, fonts dropped.
sed -e 's/\\-/-/g' -e 's/\\f[BIRP]//g' -e 's/\\(em/-/g' "$man" >"$tmp/man.txt"

echo "$elsewhere" | tr ' ' '\n' | grep . >"$tmp/elsewhere"

# The repository's files.
find src kernels store ui include tests scripts man docs python Makefile README.md \
    -type f 2>/dev/null | grep -vx tests/docs.sh >"$tmp/files"

# 1. Paths.
if part 1; then
    sed 's|.*/||' "$tmp/files" | sort -u >"$tmp/basenames"
    for f in $docs "$man"; do
        if [ "$f" = "$man" ]; then src="$tmp/man.txt"; else src=$f; fi
        grep -oE '(^|[^A-Za-z0-9_./-])(src|kernels|tests|scripts|docs|store|ui|include|man|python)/[A-Za-z0-9_./*+-]*' "$src" |
            sed -E 's/^[^a-z]//; s/[.,:;]+$//' | sort -u | while read -r p; do
            case "$p" in *'*'* | *...*) continue ;; esac
            [ -e "$p" ] && continue
            case "$p" in *NAME* | *FORMAT* | *ENGINE* | *KIND* | *DIR* | *FILE*) continue ;; esac
            echo "$f names $p, which does not exist"
        done
        grep -oE '(^|[^A-Za-z0-9_./<-])[A-Za-z0-9_-]+\.(c|h|cu|cuh|cpp)([^A-Za-z0-9_>]|$)' "$src" |
            sed -E 's/^[^A-Za-z0-9_]//; s/[^A-Za-z0-9_]$//' |
            grep -vE '^(cupti_.*|cuda.*|nvml|mpi|hdf5|sqlite3)\.h$' | sort -u |
            comm -23 - "$tmp/basenames" | grep -vxF -f "$tmp/elsewhere" |
            sed "s|^|$f names |; s|\$|, which is no file here|"
    done >"$tmp/paths"
    [ -s "$tmp/paths" ] && fail "$(cat "$tmp/paths")"
fi

# 2. Commands and settings in the man page.
if part 2; then
    sed -n 's/^[[:space:]]*X(\([a-z_0-9]*\),.*/\1/p' src/cli/cmd_table.c >"$tmp/rows"
    awk 'FNR == 1 { cur = "" }
         match($0, /^const cmd cmd_[a-z_0-9]+ = \{/) { cur = substr($0, 15); sub(/ .*/, "", cur); next }
         cur != "" && match($0, /\.name = "[^"]+"/) { print cur, substr($0, RSTART + 9, RLENGTH - 10); cur = "" }' \
        src/cli/cmd_*.c >"$tmp/names"
    ncmd=0
    while read -r row; do
        name=$(awk -v r="$row" '$1 == r { print $2 }' "$tmp/names")
        if [ -z "$name" ]; then
            fail "the command table's row $row has no .name in src/cli/cmd_*.c"
            continue
        fi
        ncmd=$((ncmd + 1))
        grep -qE "^\\.B $name( |\$)" "$tmp/man.txt" ||
            fail "command $name (src/cli/cmd_table.c) has no '.B $name' entry in $man"
    done <"$tmp/rows"
    [ $ncmd -ge 10 ] || fail "found $ncmd commands in src/cli/cmd_table.c's CMD_ROWS (expected a table of them)"
    awk '/^const setting settings_table\[\] = \{/ { on = 1; next } on && /^\};/ { on = 0 }
         on && match($0, /^[[:space:]]*\{"[a-z0-9-]+",/) { s = substr($0, RSTART, RLENGTH); sub(/^[^"]*"/, "", s); sub(/".*/, "", s); print s }' \
        src/cli/settings.c >"$tmp/settings"
    nset=0
    while read -r s; do
        nset=$((nset + 1))
        grep -qE "^\\.B set $s( |\$)" "$tmp/man.txt" ||
            fail "setting $s (src/cli/settings.c) has no '.B set $s' entry in $man"
    done <"$tmp/settings"
    [ $nset -ge 5 ] || fail "found $nset settings in src/cli/settings.c's settings_table (expected a table of them)"
fi

# 3. Symbols.
if part 3; then
    words() { tr '\n' '\0' | xargs -0 cat | tr -c 'A-Za-z0-9_' '\n' | sort -u; }
    # The program's code (src/ kernels/ store/ ui/ tests/ python/), the
    # files' names and $elsewhere; then with the scripts and the Makefile (a
    # shell variable of a script is no symbol of the program's, but an
    # environment variable or a script's entry may be named).
    {
        sed 's|.*/||; s|\.[^.]*$||' "$tmp/files"
        grep -E '^(src|kernels|store|ui|include|tests|python)/' "$tmp/files" | words
        echo "$elsewhere" | tr ' ' '\n'
    } | sort -u >"$tmp/code"
    grep -E '^(scripts/|Makefile)' "$tmp/files" | words | sort -u -m - "$tmp/code" >"$tmp/words"
    for f in $docs; do
        awk '{ s = $0; while (match(s, /`[^`]+`/)) { print substr(s, RSTART + 1, RLENGTH - 2); s = substr(s, RSTART + RLENGTH) } }' \
            "$f" >"$tmp/spans"
        {
            {
                grep -oE '[A-Za-z_][A-Za-z0-9_]*' "$tmp/spans" | grep '_'
                case "$f" in
                docs/ARCHITECTURE.md | docs/ENGINES.md)
                    sed 's|https*://[^ )]*||g' "$f" | grep -oE '[A-Za-z_][A-Za-z0-9_]*' | grep '_' ;;
                esac
            } | grep -E '^([a-z][a-z0-9_]*[a-z0-9]|[A-Z][A-Z0-9_]*[A-Z0-9])$' | sort -u |
                comm -23 - "$tmp/words"
            grep -E '^[a-z][A-Za-z0-9_.]*(\(.*\))?$' "$tmp/spans" | sed 's/(.*//' | tr '.' '\n' |
                grep -E '^[a-z][a-z0-9_]*[a-z0-9]$' | sort -u | comm -23 - "$tmp/code"
        } | sort -u | sed "s|^|$f names |; s|\$|, which is nowhere in the sources|"
    done >"$tmp/symbols"
    [ -s "$tmp/symbols" ] && fail "$(cat "$tmp/symbols")"
fi

# 4. Every table of the benchmarks after a dated command in its section.
if part 4; then
    awk -v doc="$bench" '
    function para_end() { if (para ~ /[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]/ && para ~ /`[^`]+`/) dated = 1; para = "" }
    /^#+ / { para_end(); dated = 0; sec = $0; prev = ""; next }
    /^\|/ {
        para_end()
        if ($0 ~ /^\|[ :|-]+$/ && prev ~ /^\|/ && !dated)
            printf "%s:%d: the table under \"%s\" follows no line with a date (YYYY-MM-DD) and a command in backticks\n", doc, NR - 1, sec
        prev = $0; next
    }
    /^$/ || /^<!--/ { para_end(); prev = $0; next }
    { para = para " " $0; prev = $0 }
    ' "$bench" >"$tmp/tables"
    [ -s "$tmp/tables" ] && fail "$(cat "$tmp/tables")"
fi

# 5. The map names every source file.
if part 5; then
    map=docs/ARCHITECTURE.md
    for f in src/*.[ch] src/*.cpp src/*/*.[ch] kernels/*.[ch] kernels/*.cu kernels/*.cuh \
        kernels/ladder/*; do
        [ -f "$f" ] && echo "$f"
    done >"$tmp/sources"
    for f in ${DOCS_REQUIRE:-}; do echo "$f"; done >>"$tmp/sources"
    # The map's words that end as a source file does: paths and bare names.
    tr -c 'A-Za-z0-9_./+-' '\n' <"$map" | sed 's/\.*$//' |
        grep -E '\.(c|h|cu|cuh|cpp)$' | sort -u >"$tmp/named"
    ladder=0
    grep -q 'kernels/ladder/' "$map" && ladder=1
    awk -v ladder=$ladder 'NR == FNR { named[$0] = 1; next }
        { b = $0; sub(/.*\//, "", b) }
        named[$0] || named[b] || (ladder && $0 ~ /^kernels\/ladder\//) { next }
        { print }' "$tmp/named" "$tmp/sources" >"$tmp/unnamed"
    [ -s "$tmp/unnamed" ] &&
        fail "$(sed "s|^|$map does not name |; s|\$|, a source file: add it to the row of its concern|" "$tmp/unnamed")"
fi

# 6. Every TCJOIN_ variable the program reads in the man page's ENVIRONMENT.
if part 6; then
    grep -rnoE 'getenv\("TCJOIN_[A-Z0-9_]+"\)' src kernels store ui |
        sed -E 's/^([^:]*):([0-9]+):getenv\("([A-Z0-9_]+)"\)$/\3 \1:\2/' | sort -u -k1,1 >"$tmp/envs"
    awk '/^\.SH / { on = ($0 ~ /^\.SH ENVIRONMENT/) } on' "$tmp/man.txt" >"$tmp/envsec"
    nenv=0
    while read -r name at; do
        nenv=$((nenv + 1))
        grep -qE "^\\.B $name( |\$)" "$tmp/envsec" ||
            fail "variable $name (read at $at) has no '.B $name' entry in $man's ENVIRONMENT section"
    done <"$tmp/envs"
    [ $nenv -ge 3 ] || fail "found $nenv TCJOIN_ variables read in src/ kernels/ store/ ui/ (expected getenv calls)"
fi

exit $bad
