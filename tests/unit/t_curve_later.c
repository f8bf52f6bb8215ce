/* The rows a later join of DBSCAN's curve queries (curve_later_rows,
 * src/cluster/curve_later.c) against the rule written out directly here:
 * a row is in where its core distance is finite and its component's bound
 * is set; a part is mixed where its in rows span two components; a
 * component is open where one of its in rows lies in a mixed part; the
 * largest open component is the first to reach the greatest size in row
 * order; the rows are every open component's but the largest's in
 * ascending order, then the largest's. Random components, bounds, core
 * distances and parts, on both sides of the size up to which it runs on
 * one thread (above it, on the cores). */
#include "check.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "curve_later.h"
#include "later_case.h"

static uint64_t rng = 7;

/* The rule, on one thread, with no shared state: the count, rows, *nbig. */
static size_t later_oracle(const uint32_t *comp, const curve_edge *bound, const double *core,
                           const uint32_t *part, uint32_t nparts, size_t n, size_t *rows,
                           size_t *nbig)
{
    *nbig = 0;
    uint8_t *in = calloc(n, 1), *mixed = calloc(n + nparts, 1), *open = calloc(n, 1);
    for (size_t i = 0; i < n; i++)
        in[i] = core[i] != INFINITY && bound[comp[i]].w != INFINITY;
    int any = 0;
    for (uint32_t p = 0; p < nparts; p++) { /* each part: two components among its in rows */
        uint32_t c0 = UINT32_MAX;
        for (size_t i = 0; i < n && !mixed[p]; i++)
            if (in[i] && part[i] == p) {
                if (c0 == UINT32_MAX)
                    c0 = comp[i];
                else if (comp[i] != c0)
                    mixed[p] = 1;
            }
        any |= mixed[p];
    }
    size_t m = 0;
    if (any) {
        for (size_t i = 0; i < n; i++)
            if (in[i] && mixed[part[i]])
                open[comp[i]] = 1;
        /* the largest: for each component its size, then the one whose
         * count reaches the greatest size at the earliest row */
        size_t *size = calloc(n, sizeof *size), best = 0;
        for (size_t i = 0; i < n; i++)
            if (open[comp[i]])
                size[comp[i]]++;
        for (size_t c = 0; c < n; c++)
            if (size[c] > best)
                best = size[c];
        size_t big = n, *seen = calloc(n, sizeof *seen);
        for (size_t i = 0; i < n && big == n; i++)
            if (open[comp[i]] && ++seen[comp[i]] == best)
                big = comp[i];
        for (size_t i = 0; i < n; i++)
            if (open[comp[i]] && comp[i] != big)
                rows[m++] = i;
        if (m > 0)
            for (size_t i = 0; i < n; i++)
                if (open[comp[i]] && comp[i] == big)
                    rows[m + (*nbig)++] = i;
        free(size);
        free(seen);
    }
    free(in);
    free(mixed);
    free(open);
    return m;
}

static void later_case(size_t n, uint32_t ncomp, uint32_t nparts, uint32_t open_pct,
                       const char *what)
{
    later_case_in c = later_case_make(&rng, n, ncomp, nparts, open_pct);
    const uint32_t *comp = c.comp, *part = c.part;
    const curve_edge *bound = c.bound;
    const double *core = c.core;
    size_t *got = malloc(n * sizeof *got), *want = malloc(n * sizeof *want);
    size_t nb_got = 0, nb_want = 0;
    const size_t m_got = curve_later_rows(comp, bound, core, part, n, got, &nb_got);
    const size_t m_want = later_oracle(comp, bound, core, part, nparts, n, want, &nb_want);
    CHECK_MSG(m_got == m_want && nb_got == nb_want,
              "%s: %zu rows (%zu of the largest), want %zu (%zu)", what, m_got, nb_got, m_want,
              nb_want);
    if (m_got == m_want && nb_got == nb_want) {
        size_t bad = 0;
        for (size_t k = 0; k < m_want + nb_want; k++)
            bad += got[k] != want[k];
        CHECK_MSG(bad == 0, "%s: %zu of %zu rows differ", what, bad, m_want + nb_want);
    }
    later_case_free(&c);
    free(got);
    free(want);
}

/* Sizes on either side of the one-thread limit, one part and several,
 * few components and many, most open and few. */
static void later_cases(void)
{
    static const size_t ns[] = {1, 2, 37, 5000, 65536, 65537, 200000};
    char what[96];
    for (size_t k = 0; k < sizeof ns / sizeof ns[0]; k++)
        for (uint32_t parts = 1; parts <= 64; parts *= 8)
            for (uint32_t pct = 5; pct <= 95; pct += 45) {
                const size_t n = ns[k];
                const uint32_t nc = n < 50 ? (uint32_t)(n / 2 + 1) : (uint32_t)(n / 40);
                snprintf(what, sizeof what, "n %zu, %u parts, %u%% open", n, parts, pct);
                later_case(n, nc, parts, pct, what);
            }
    /* one component holding everything: nothing to query */
    later_case(1000, 1, 1, 100, "one component");
    /* two equal components: the largest is the one reaching the size first */
    later_case(4000, 2, 1, 100, "two components");
}

TEST(later_rows_follow_the_rule)
{
    later_cases();
}
