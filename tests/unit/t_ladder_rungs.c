/* The teaching ladder's rung table and its checks (kernels/ladder_rungs.c),
 * without a GPU.
 *
 * Test plan:
 *  1. the table: ids 1..N in order, each rung after the first names an
 *     earlier one as prev, the own rungs (1..KERN_LADDER_OWN) have no
 *     engine and a file under kernels/ladder/, the rest an engine row;
 *     kern_ladder_find agrees with the table.
 *  2. every own rung passes kern_ladder_check without a device.
 *  3. broken copies of real rungs (a warp tile that does not divide the
 *     block tile, too many threads, a thread tile that does not divide,
 *     threads that do not cover the tiles, no stage) are rejected with
 *     KERN_EINVAL and the expected one-line message.
 *  4. kern_ladder_smem equals a recomputation from each kernel file's
 *     layout for a few rungs.
 *  5. with a fake device of too low a compute capability or too little
 *     shared memory a block, the check fails and names the device. */
#include <string.h>

#include "check.h"
#include "kernels.h"

static int check(const kern_ladder_rung *r, const kern_device *dv, char *why, size_t size)
{
    why[0] = 0;
    return kern_ladder_check(r, dv, why, size);
}

TEST(ladder_table_is_ordered)
{
    const int n = kern_ladder_count();
    CHECK(n > KERN_LADDER_OWN);
    for (int k = 0; k < n; k++) {
        const kern_ladder_rung *r = &kern_ladder_rungs[k];
        CHECK_EQ_INT(r->id, k + 1);
        CHECK(kern_ladder_find(r->id) == r);
        CHECK(r->name && r->idea && r->file && r->unit && r->blas);
        if (r->id == 1)
            CHECK_EQ_INT(r->prev, 0);
        else
            CHECK_MSG(r->prev >= 1 && r->prev < r->id, "rung %d: prev %d is not an earlier rung",
                      r->id, r->prev);
        if (r->id <= KERN_LADDER_OWN) {
            CHECK_MSG(!r->engine, "own rung %d has an engine", r->id);
            CHECK_STR_CONTAINS(r->file, "kernels/ladder/r");
        } else {
            CHECK_MSG(r->engine != NULL, "rung %d past the own ones has no engine", r->id);
        }
    }
    CHECK_EQ_INT(kern_ladder_rungs[n].id, 0);
    CHECK(kern_ladder_find(0) == NULL);
    CHECK(kern_ladder_find(n + 1) == NULL);
}

TEST(ladder_own_rungs_pass_the_check)
{
    char why[256];
    for (int id = 1; id <= KERN_LADDER_OWN; id++) {
        const int rc = check(kern_ladder_find(id), NULL, why, sizeof why);
        CHECK_MSG(rc == 0, "rung %d: %s", id, why);
    }
}

/* A copy of rung id broken by f, which must be rejected with msg. */
static void expect_bad(int id, void (*f)(kern_ladder_rung *), const char *msg)
{
    kern_ladder_rung r = *kern_ladder_find(id);
    f(&r);
    char why[256];
    CHECK_EQ_INT(check(&r, NULL, why, sizeof why), KERN_EINVAL);
    CHECK_STR_CONTAINS(why, msg);
    CHECK(strchr(why, '\n') == NULL);
}

static void wm48(kern_ladder_rung *r)
{
    r->wm = 48;
}
static void threads2048(kern_ladder_rung *r)
{
    r->threads = 2048;
}
static void tm3(kern_ladder_rung *r)
{
    r->tm = 3;
}
static void threads256(kern_ladder_rung *r)
{
    r->threads = 256;
}
static void nostage(kern_ladder_rung *r)
{
    r->stages = 0;
}
static void wm24(kern_ladder_rung *r)
{
    r->wm = 24;
    r->bm = 48;
}

TEST(ladder_broken_rungs_are_rejected)
{
    expect_bad(9, wm48,
               "ladder rung 9 (fasted-tiles): warp tile 48x64 does not divide block "
               "tile 128x128");
    expect_bad(4, threads2048,
               "ladder rung 4 (reg-tile): threads a block must be a multiple of "
               "32 in [32, 1024]");
    expect_bad(4, tm3,
               "ladder rung 4 (reg-tile): thread tile 3x8 does not divide block tile "
               "128x128");
    expect_bad(6, threads256,
               "ladder rung 6 (mma-ldmatrix): the tiles need 128 threads a "
               "block, the rung launches 256");
    expect_bad(8, nostage, "ladder rung 8 (cp-async): at least one shared-memory stage");
    expect_bad(7, wm24,
               "ladder rung 7 (swizzle): warp tile 24x32 and k slice 64 must be "
               "multiples of 16");
}

TEST(ladder_smem_matches_the_layouts)
{
    /* r02: 32 + 32 FP32 rows of a 32-value slice plus one float of padding */
    CHECK_EQ_INT(kern_ladder_smem(kern_ladder_find(2)), (32 + 32) * 33 * 4);
    /* r04: 128 + 128 rows x 16 FP32, k-major */
    CHECK_EQ_INT(kern_ladder_smem(kern_ladder_find(4)), 256 * 16 * 4);
    /* r05: 64 + 64 FP16 rows of 32, then four warps' 16x16 FP32 staging tiles */
    CHECK_EQ_INT(kern_ladder_smem(kern_ladder_find(5)), 128 * 32 * 2 + 4 * 16 * 16 * 4);
    /* r06: one stage of 64 + 64 FP16 rows of 64 */
    CHECK_EQ_INT(kern_ladder_smem(kern_ladder_find(6)), 128 * 64 * 2);
    /* r09: three stages of 128 + 128 FP16 rows of 64 (96 KiB: two blocks fit an SM) */
    CHECK_EQ_INT(kern_ladder_smem(kern_ladder_find(9)), 3 * 256 * 64 * 2);
    CHECK_EQ_INT(kern_ladder_smem(kern_ladder_find(1)), 0);
    CHECK_EQ_INT(kern_ladder_smem(kern_ladder_find(KERN_LADDER_OWN + 1)), 0);
}

static kern_device fake(const char *name, int major, int minor, size_t smem)
{
    kern_device dv;
    memset(&dv, 0, sizeof dv);
    snprintf(dv.name, sizeof dv.name, "%s", name);
    dv.major = major;
    dv.minor = minor;
    dv.sms = 80;
    dv.smem_per_block_optin = smem;
    return dv;
}

TEST(ladder_check_names_the_device)
{
    char why[256];
    const kern_device volta = fake("Fake Volta", 7, 0, 96 * 1024);
    CHECK_EQ_INT(check(kern_ladder_find(6), &volta, why, sizeof why), KERN_ENODEV);
    CHECK_STR_CONTAINS(why, "ladder rung 6 (mma-ldmatrix): needs compute capability 8.0, "
                            "Fake Volta has 7.0");
    /* every own rung is built as sm_80/sm_90 code only, WMMA and the
     * CUDA-core rungs too: refused in one line, not a "no kernel image" */
    CHECK_EQ_INT(check(kern_ladder_find(5), &volta, why, sizeof why), KERN_ENODEV);
    CHECK_EQ_INT(check(kern_ladder_find(1), &volta, why, sizeof why), KERN_ENODEV);
    CHECK_STR_CONTAINS(why, "ladder rung 1 (naive): needs compute capability 8.0");

    const kern_device tiny = fake("Tiny Ampere", 8, 6, 48 * 1024);
    CHECK_EQ_INT(check(kern_ladder_find(9), &tiny, why, sizeof why), KERN_EINVAL);
    CHECK_STR_CONTAINS(why, "ladder rung 9 (fasted-tiles): 98304 bytes of shared memory a block, "
                            "Tiny Ampere allows 49152");
    CHECK_EQ_INT(check(kern_ladder_find(8), &tiny, why, sizeof why), 0); /* exactly 48 KiB */
    CHECK_EQ_INT(check(kern_ladder_find(KERN_LADDER_OWN + 1), &tiny, why, sizeof why), KERN_ENODEV);
    CHECK_STR_CONTAINS(why, "Tiny Ampere");

    const kern_device hopper = fake("Fake Hopper", 9, 0, 227 * 1024);
    for (int id = 1; id <= KERN_LADDER_OWN; id++) {
        const int rc = check(kern_ladder_find(id), &hopper, why, sizeof why);
        CHECK_MSG(rc == 0, "rung %d: %s", id, why);
    }
}
