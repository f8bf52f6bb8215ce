/* The FASTED kernel choice and the switch table (kernels/fasted_choose.c),
 * CPU only: a pure function of switches, mode, format and device. */
#include <string.h>

#include "check.h"
#include "kernels.h"

/* A format as an instance file describes it: all-on, no-swizzle and the
 * paper's pair compiled; a wgmma kernel of 197632 bytes. */
static const kern_variant fake_variants[] = {
    {0, 128, 128, 2, 98432},
    {FASTED_OFF_SWIZZLE, 128, 128, 2, 98432},
    {FASTED_OFF_ASYNC_COPY | FASTED_OFF_PIPELINE, 128, 128, 2, 32896},
};
static const kern_format fake = {.name = "fake",
                                 .elem_bytes = 2,
                                 .min_cc = 80,
                                 .wg_smem = 197632,
                                 .variants = fake_variants,
                                 .nvariants = 3};
static const kern_caps h200 = {90, 1, 232448}, a100 = {80, 0, 166912};

TEST(choose_wgmma_when_all_on_on_hopper)
{
    fasted_choice c;
    CHECK_EQ_INT(fasted_choose(0, KJOIN_COUNT, &fake, &h200, 0, &c), 0);
    CHECK_EQ_INT(c.kind, FASTED_KIND_WGMMA);
    CHECK_EQ_INT(c.smem, 197632);
    CHECK_EQ_INT(c.order, 1);
    CHECK(strcmp(c.variant, "wgmma") == 0);
    /* a histogram that does not fit beside the wgmma ring: mma.sync */
    const kern_caps small = {90, 1, 220000};
    CHECK_EQ_INT(fasted_choose(0, KJOIN_HIST, &fake, &small, 4096, &c), 0);
    CHECK_EQ_INT(c.kind, FASTED_KIND_MMA);
    CHECK_EQ_INT(c.smem, 98432 + 4097 * 8);
    CHECK(strcmp(c.variant, "mma.sync all-on") == 0);
    /* a small one fits */
    CHECK_EQ_INT(fasted_choose(0, KJOIN_HIST, &fake, &h200, 16, &c), 0);
    CHECK_EQ_INT(c.kind, FASTED_KIND_WGMMA);
    CHECK_EQ_INT(c.smem, 197632 + 17 * 8);
}

TEST(choose_mma_sync_elsewhere)
{
    fasted_choice c;
    CHECK_EQ_INT(fasted_choose(0, KJOIN_PAIRS, &fake, &a100, 0, &c), 0);
    CHECK_EQ_INT(c.kind, FASTED_KIND_MMA);
    CHECK(c.v == &fake_variants[0]);
    CHECK(strcmp(c.variant, "mma.sync all-on") == 0);
    /* wgmma off on a Hopper is the mma.sync all-on kernel */
    CHECK_EQ_INT(fasted_choose(FASTED_OFF_WGMMA, KJOIN_COUNT, &fake, &h200, 0, &c), 0);
    CHECK_EQ_INT(c.kind, FASTED_KIND_MMA);
    CHECK(c.v == &fake_variants[0]);
    /* a format without a wgmma kernel */
    kern_format nowg = fake;
    nowg.wg_smem = 0;
    CHECK_EQ_INT(fasted_choose(0, KJOIN_COUNT, &nowg, &h200, 0, &c), 0);
    CHECK_EQ_INT(c.kind, FASTED_KIND_MMA);
}

TEST(choose_teaching_variants)
{
    fasted_choice c;
    CHECK_EQ_INT(fasted_choose(FASTED_OFF_SWIZZLE, KJOIN_COUNT, &fake, &h200, 0, &c), 0);
    CHECK(c.v == &fake_variants[1]);
    CHECK(strcmp(c.variant, "no-swizzle") == 0);
    /* ordering off: the all-on kernel, tiles taken row by row */
    CHECK_EQ_INT(fasted_choose(FASTED_OFF_ORDER, KJOIN_COUNT, &fake, &h200, 0, &c), 0);
    CHECK(c.v == &fake_variants[0]);
    CHECK_EQ_INT(c.order, 0);
    CHECK(strcmp(c.variant, "no-order") == 0);
    /* the paper's pair */
    CHECK_EQ_INT(fasted_choose(FASTED_OFF_ASYNC_COPY | FASTED_OFF_PIPELINE, KJOIN_COUNT, &fake,
                               &a100, 0, &c),
                 0);
    CHECK(c.v == &fake_variants[2]);
    CHECK(strcmp(c.variant, "no-async-copy+pipeline") == 0);
}

TEST(choose_refusals)
{
    fasted_choice c;
    /* two switches that are no compiled pair */
    CHECK_EQ_INT(
        fasted_choose(FASTED_OFF_ORDER | FASTED_OFF_SWIZZLE, KJOIN_COUNT, &fake, &h200, 0, &c),
        KERN_EINVAL);
    CHECK(strstr(c.why, "one FASTED switch") != NULL);
    /* a variant the format does not compile */
    CHECK_EQ_INT(fasted_choose(FASTED_OFF_ALIGN, KJOIN_COUNT, &fake, &h200, 0, &c), KERN_EINVAL);
    CHECK(strstr(c.why, "fake has no compiled no-align variant") != NULL);
    /* a device too old for the format */
    const kern_caps turing = {75, 0, 65536};
    CHECK_EQ_INT(fasted_choose(0, KJOIN_COUNT, &fake, &turing, 0, &c), KERN_ENODEV);
    CHECK(strstr(c.why, "compute capability 8.0") != NULL);
    /* a histogram no block can hold */
    CHECK_EQ_INT(fasted_choose(0, KJOIN_HIST, &fake, &a100, 9000, &c), KERN_EINVAL);
    CHECK(strstr(c.why, "9000 histogram bins") != NULL);
    /* no format (a build without CUDA) */
    CHECK_EQ_INT(fasted_choose(0, KJOIN_COUNT, NULL, &h200, 0, &c), KERN_ENODEV);
    /* unknown bits */
    CHECK_EQ_INT(fasted_choose(1u << 12, KJOIN_COUNT, &fake, &h200, 0, &c), KERN_EINVAL);
}

TEST(switch_table_and_names)
{
    unsigned seen = 0;
    int n = 0;
    for (const kern_switch *s = kern_fasted_switches; s->name; s++, n++) {
        CHECK_MSG((s->bit & (s->bit - 1)) == 0 && s->bit, "%s: one bit", s->name);
        CHECK_MSG(!(seen & s->bit), "%s: bit used twice", s->name);
        seen |= s->bit;
        char want[64];
        snprintf(want, sizeof want, "no-%s", s->name);
        if (s->bit == FASTED_OFF_WGMMA)
            snprintf(want, sizeof want, "mma.sync all-on");
        CHECK(strcmp(kern_fasted_variant_name(s->bit), want) == 0);
        for (const kern_switch *t = kern_fasted_switches; t < s; t++)
            CHECK(strcmp(t->name, s->name) != 0);
    }
    CHECK_EQ_INT(seen, FASTED_OFF_ALL);
    CHECK_EQ_INT(n, 9);
    CHECK(strcmp(kern_fasted_variant_name(0), "all-on") == 0);
    CHECK(strcmp(kern_fasted_variant_name(FASTED_OFF_ORDER | FASTED_OFF_ALIGN), "invalid") == 0);
    CHECK(strcmp(kern_fasted_variant_name(1u << 20), "invalid") == 0);
}

TEST(device_feature_predicates)
{
    CHECK(kern_cc_has_f64_mma(80) && kern_cc_has_f64_mma(90) && kern_cc_has_f64_mma(100));
    CHECK(!kern_cc_has_f64_mma(86) && !kern_cc_has_f64_mma(89) && !kern_cc_has_f64_mma(120));
    CHECK(kern_cc_has_fp8_mma(89) && kern_cc_has_fp8_mma(90) && !kern_cc_has_fp8_mma(86));
    CHECK(kern_cc_has_wgmma(90) && !kern_cc_has_wgmma(89) && !kern_cc_has_wgmma(100));
}

/* The compiled formats' tables, where this build has CUDA: every
 * single-switch variant of fp16 (and the pair) is compiled, all-on first,
 * and each configuration's block tile and residency are the paper's. */
TEST(compiled_fp16_variants)
{
    const kern_format *f = KERN_FORMAT(fp16);
    if (!f)
        t_skip("skipped: built without CUDA");
    CHECK(strcmp(f->name, "fp16") == 0);
    CHECK_EQ_INT(f->elem_bytes, 2);
    CHECK_EQ_INT(f->variants[0].off, 0);
    CHECK_EQ_INT(f->nvariants, 9);
    const kern_caps caps = {86, 0, 101376};
    for (const kern_switch *s = kern_fasted_switches; s->name; s++) {
        fasted_choice c;
        CHECK_MSG(fasted_choose(s->bit, KJOIN_COUNT, f, &caps, 0, &c) == 0, "%s: %s", s->name,
                  c.why);
        const int minb = s->bit == FASTED_OFF_RESIDENCY ? 1 : 2;
        const int bm = s->bit == FASTED_OFF_WARP_TILE ? 64 : 128;
        CHECK_EQ_INT(c.v->minb, minb);
        CHECK_EQ_INT(c.v->bm, bm);
        CHECK(c.smem <= caps.smem_optin);
    }
}
