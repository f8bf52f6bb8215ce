#!/bin/sh
# SASS instruction counts of each compiled FASTED variant's count kernel,
# as C (src/teach_gen.h, teach_sass), for `explain NAME sass`.
# usage: gen_sass_counts.sh SYMBOL OBJ...          (runs cuobjdump -sass)
#        gen_sass_counts.sh SYMBOL --dump FILE     (a saved cuobjdump -sass text)
# cuobjdump: $CUOBJDUMP, else on PATH, else $CUDA_HOME/bin. Names are
# demangled with cu++filt (or c++filt). A kernel maps to a variant by its
# name: a configuration struct (cfg_all_on, cfg_no_swizzle -> no-swizzle)
# or today's template fasted_kernel<WM, WN, STAGES, MINB, SMEM, ASYNC, SWZ,
# ALIGN, PAIRS> by which arguments differ from all-on; fasted_wg_kernel is
# the Hopper kernel. PAIRS kernels (last template argument true) are left out.
# Without cuobjdump the table is empty and says why.
set -u
sym=$1
shift
cudahome=${CUDA_HOME:-/usr/local/cuda}
dump=$(mktemp)
status=""
if [ "${1:-}" = "--dump" ]; then
    cat "$2" >"$dump" || status="cannot read $2"
else
    cob=${CUOBJDUMP:-$(command -v cuobjdump 2>/dev/null || true)}
    [ -z "$cob" ] && [ -x "$cudahome/bin/cuobjdump" ] && cob="$cudahome/bin/cuobjdump"
    if [ -z "$cob" ]; then
        status="not computed in this build: cuobjdump (CUDA toolkit) not found at build time"
    else
        for o in "$@"; do "$cob" -sass "$o" 2>/dev/null; done >"$dump"
    fi
fi
filt=$(command -v cu++filt 2>/dev/null || true)
[ -z "$filt" ] && [ -x "$cudahome/bin/cu++filt" ] && filt="$cudahome/bin/cu++filt"
[ -z "$filt" ] && filt=$(command -v c++filt 2>/dev/null || true)
[ -z "$filt" ] && filt=cat
# Demangle each function name once (the demangler reads one per line),
# then read the dump with the names replaced.
names=$(mktemp)
trap 'rm -f "$dump" "$names" "$names.d"' EXIT
awk '/Function :/ { sub(/.*Function : */, ""); print }' "$dump" | sort -u >"$names"
$filt <"$names" >"$names.d"
paste "$names" "$names.d" | awk -F '\t' '
    FNR == NR { map[$1] = $2; next }
    /Function :/ { n = $0; sub(/.*Function : */, "", n); if (n in map) n = map[n]; print "Function : " n; next }
    { print }' - "$dump" | awk -v sym="$sym" -v status="$status" '
function cstr(s) { gsub(/\\/, "&&", s); gsub(/"/, "\\\"", s); return "\"" s "\"" }
function archnum(a,   t) { t = a; sub(/^sm_/, "", t); return t + 0 + (t ~ /a$/ ? 0.5 : 0) }
function variant(f,   c, a, n, i, off, args) {
    if (f ~ /fasted_wg_kernel<false>/ || f ~ /fasted_wg_kernel<fmt_fp16, *false>/) return "wgmma"
    if (f ~ /fasted_wg_kernel/) return ""
    # kernels/fasted_mma.cuh: fasted_mma_kernel<FORMAT, CONFIG, PAIRS>; the
    # teaching variants are fasted (fp16) configurations
    if (match(f, /fasted_mma_kernel<[^>]*>/)) {
        args = substr(f, RSTART + 18, RLENGTH - 19)
        n = split(args, a, /, */)
        if (n != 3 || a[1] != "fmt_fp16" || a[3] == "true") return ""
        c = a[2]
        if (c in cfgmap) return cfgmap[c]
        gsub(/_/, "-", c)
        return c
    }
    if (match(f, /cfg_[A-Za-z0-9_]+/)) {
        if (f ~ /, *true>/) return ""
        c = substr(f, RSTART + 4, RLENGTH - 4)
        if (c in cfgmap) return cfgmap[c]
        gsub(/_/, "-", c)
        return c
    }
    if (!match(f, /fasted_kernel<[^>]*>/)) return ""
    args = substr(f, RSTART + 14, RLENGTH - 15)
    n = split(args, a, /, */)
    if (n != 9 || a[9] == "true") return ""
    off = ""
    if (a[3] + 0 < 2 && a[6] == "false") { off = off "+async-copy+pipeline" }
    else {
        if (a[6] == "false") off = off "+async-copy"
        if (a[3] + 0 < 2) off = off "+pipeline"
    }
    if (a[5] == "false") off = off "+smem-buffer"
    if (a[4] + 0 < 2) off = off "+residency"
    if (a[1] + 0 < 64) off = off "+warp-tile"
    if (a[7] == "false") off = off "+swizzle"
    if (a[8] == "false") off = off "+align"
    if (off == "") return "all-on"
    return "no-" substr(off, 2)
}
function finish() {
    if (cur == "") return
    if (!(cur in seen)) { seen[cur] = 1; order[++nv] = cur }
    if (!(cur in arch) || archnum(curarch) > archnum(arch[cur])) {
        arch[cur] = curarch; fn[cur] = curfn
        for (k = 1; k <= 8; k++) cnt[cur, k] = c[k]
    }
    cur = ""
}
BEGIN {
    # configuration structs whose variant name is not the plain spelling
    cfgmap["all_on"] = "all-on"
    cfgmap["no_async_copy_pipeline"] = "no-async-copy+pipeline"
    cfgmap["no_async_pipeline"] = "no-async-copy+pipeline"
    cfgmap["no_wgmma"] = "mma.sync all-on"
}
/code for sm_/ { finish(); curarch = $0; sub(/.*code for /, "", curarch); sub(/[ \t].*/, "", curarch); next }
/Function :/ {
    finish()
    curfn = $0; sub(/.*Function : */, "", curfn)
    cur = variant(curfn)
    for (k = 1; k <= 8; k++) c[k] = 0
    next
}
cur != "" && /^[ \t]*\/\*[0-9a-f]+\*\/[ \t]/ {
    s = $0; sub(/^[ \t]*\/\*[0-9a-f]+\*\/[ \t]+/, "", s); sub(/^@!?U?P[0-9T]+[ \t]+/, "", s)
    m = s; sub(/[ \t;].*/, "", m); base = m; sub(/\..*/, "", base)
    if (base == "") next
    c[8]++
    if (base == "HMMA") c[1]++
    else if (base == "HGMMA") c[2]++
    else if (base == "LDSM") c[3]++
    else if (base == "LDGSTS") c[4]++
    else if (base == "LDS") c[5]++
    else if (base == "STS") c[6]++
    else if (base == "UTMALDG") c[7]++
}
END {
    finish()
    if (status == "" && nv == 0) status = "no FASTED kernels found in the kernel objects (built without CUDA?)"
    print "/* Generated by scripts/gen_sass_counts.sh. Do not edit. */"
    print "#include \"teach_gen.h\""
    print ""
    print "static const teach_sass_row " sym "_rows[] = {"
    # all-on first, then the others in the order met
    for (pass = 0; pass < 2; pass++)
        for (i = 1; i <= nv; i++) {
            v = order[i]
            if ((pass == 0) != (v == "all-on")) continue
            printf "    {%s, %s, %s, %d, %d, %d, %d, %d, %d, %d, %d},\n", cstr(v), cstr(fn[v]), cstr(arch[v]),
                cnt[v, 1], cnt[v, 2], cnt[v, 3], cnt[v, 4], cnt[v, 5], cnt[v, 6], cnt[v, 7], cnt[v, 8]
        }
    print "    {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},"
    print "};"
    print "const teach_sass " sym " = {" cstr(status) ", " sym "_rows, " nv + 0 "};"
}'
