/* The format table (src/format_table.c), the one place a tensor-core
 * format's facts are written. Test plan:
 * 1. each row's range against its own rounding function (the largest
 *    finite value and the smallest subnormal round to themselves, nothing
 *    past the largest rounds to a larger finite value, a quarter of the
 *    smallest subnormal rounds to 0), and its bits against the spacing of
 *    the rounding at 1;
 * 2. the rows derived from it: both engines exist, point back at the row
 *    and state its facts; the range table and the emulation read the row;
 * 3. docs/ENGINES.md's recipe row compiles as a row of the table (the
 *    Makefile extracts it to recipe_row.inc) and equals the table's row of
 *    that name, field by field, so the recipe cannot go stale. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "cpu_emul.h"
#include "engine.h"
#include "fmt8.h"
#include "fmt_fit.h"
#include "fmt_round.h"
#include "format.h"
#include "fp16.h"

static const tc_format recipe[] = {
#include "recipe_row.inc"
};

TEST(rows_agree_with_their_rounding)
{
    int n = 0;
    for (const tc_format *f = tc_formats; f->name; f++, n++) {
        CHECK_MSG(f->storage_bits == 8 || f->storage_bits == 16 || f->storage_bits == 32, "%s",
                  f->name);
        CHECK_MSG(f->bits >= 2 && f->bits <= 24 && f->bits <= f->storage_bits, "%s", f->name);
        if (f->integer) {
            /* integers: no rounding, no float range */
            CHECK_MSG(!f->round && f->max == 0 && !f->scaled && !f->is_unsigned, "%s", f->name);
            continue;
        }
        CHECK_MSG(f->round && f->max > 0 && f->min_sub > 0 && f->min_sub < 1, "%s", f->name);
        CHECK_MSG(f->round(f->max) == (float)f->max, "%s: round(max) = %a", f->name,
                  f->round(f->max));
        CHECK_MSG(f->round(f->min_sub) == (float)f->min_sub, "%s: round(min_sub)", f->name);
        CHECK_MSG(f->round(f->min_sub / 4) == 0, "%s: min_sub is not the smallest", f->name);
        /* 1.5 max: Inf, or the largest value where the format saturates */
        const float past = f->round(1.5 * f->max);
        CHECK_MSG(!isfinite(past) || past == (float)f->max, "%s: %a past max", f->name, past);
        CHECK_MSG(!f->saturates_at || f->saturates_at == f->max, "%s", f->name);
        /* bits: 1 + 2^(1-bits) is the next value after 1 */
        CHECK_MSG(f->round(1 + ldexp(1, 1 - f->bits)) == 1 + ldexpf(1, 1 - f->bits), "%s", f->name);
        CHECK_MSG(f->round(1 + ldexp(1, -f->bits) * 0.99) == 1, "%s: bits %d", f->name, f->bits);
        /* no sign: negative values are not representable */
        CHECK_MSG(!f->is_unsigned || !(f->round(-1.0) == -1.0f), "%s", f->name);
        CHECK_MSG(f->is_unsigned || f->round(-1.0) == -1.0f, "%s", f->name);
    }
    CHECK(n >= 8);
    CHECK(tc_format_find("fp16") == &tc_formats[0]);
    CHECK(tc_format_find("no-such-format") == NULL && tc_format_find(NULL) == NULL);
}

TEST(engines_and_tables_come_from_the_rows)
{
    for (const tc_format *f = tc_formats; f->name; f++) {
        char cpu[64];
        snprintf(cpu, sizeof cpu, "cpu-%s", f->name);
        const engine *g = engine_find(f->engine), *c = engine_find(cpu);
        CHECK_MSG(g && c, "%s: engines %s and %s", f->name, f->engine, cpu);
        if (!g || !c)
            continue;
        const engine *both[2] = {g, c};
        for (int k = 0; k < 2; k++) {
            const engine *e = both[k];
            CHECK_MSG(e->tcf == f && e->gpu == (k == 0), "%s", e->name);
            CHECK_MSG(e->in_bits == f->bits && e->lab && strcmp(e->lab, f->name) == 0 &&
                          e->lab_bits == f->storage_bits && e->shifts == f->is_unsigned &&
                          e->center_auto == f->center_auto &&
                          strcmp(e->precision, f->precision) == 0,
                      "%s", e->name);
            CHECK_MSG(e->dist == ENGINE_DIST_FP32 && !e->exact, "%s", e->name);
            /* signed float formats centre; unsigned ones shift; integers neither */
            const int plain = f->is_unsigned || f->integer;
            CHECK_MSG(plain ? e->centers == 0 : e->centers >= 1, "%s", e->name);
        }
        CHECK_MSG(strcmp(g->summary, f->summary) == 0 && strcmp(c->summary, f->cpu_summary) == 0,
                  "%s", f->name);
        CHECK_MSG(c->centers == (f->is_unsigned || f->integer ? 0
                                 : f->center_local            ? 2
                                                              : 1),
                  "%s", cpu);
        CHECK_MSG(g->rank[ENGINE_ROLE_DEFAULT] == f->rank_default, "%s", g->name);
        CHECK_MSG(!g->kdist == !!f->integer, "%s: k-distance", g->name);
        /* the range table is the format table, less the integer rows */
        CHECK(fmt_fit_find(f->name) == (f->max > 0 ? f : NULL));
    }
    /* the emulation's absolute rounding is half the smallest subnormal */
    CHECK(cpu_emul_abs_err(tc_format_find("fp8-e4m3")) == 0x1p-10);
    CHECK(cpu_emul_abs_err(tc_format_find("ue4m4")) == 0x1p-11);
}

static int same_str(const char *a, const char *b)
{
    return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

TEST(recipe_row_is_the_tables_row)
{
    CHECK_EQ_INT((int)(sizeof recipe / sizeof recipe[0]), 1);
    const tc_format *r = &recipe[0], *f = tc_format_find(r->name);
    CHECK_MSG(f != NULL, "the recipe's %s is not a row of tc_formats", r->name);
    if (!f)
        return;
    CHECK(same_str(r->name, f->name) && same_str(r->engine, f->engine) &&
          same_str(r->kern, f->kern) && same_str(r->precision, f->precision));
    CHECK_MSG(same_str(r->summary, f->summary) && same_str(r->cpu_summary, f->cpu_summary),
              "the recipe's summaries differ from the table's");
    CHECK(r->max == f->max && r->min_sub == f->min_sub && r->is_unsigned == f->is_unsigned &&
          r->scaled == f->scaled);
    CHECK(r->bits == f->bits && r->storage_bits == f->storage_bits && r->round == f->round &&
          r->saturates_at == f->saturates_at);
    CHECK(r->rank_default == f->rank_default && r->center_auto == f->center_auto &&
          r->center_local == f->center_local && r->integer == f->integer);
}
