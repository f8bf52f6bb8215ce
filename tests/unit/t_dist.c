/* src/dist.c: the queue's range sizes and the per-rank file names of
 * tcjoin-mpi, without MPI (a table of hooks stands in for src/cli/mpi_run.c). */
#include <string.h>

#include "check.h"
#include "dist.h"

/* Every split of a list by dist_chunk covers it exactly, in ranges within
 * the floor and the share, about 9 R of them. */
TEST(chunks_cover_the_list_guided)
{
    const size_t totals[] = {1, 7, 100, 1500, 100000, 10000019};
    for (int ranks = 1; ranks <= 64; ranks *= 2)
        for (size_t t = 0; t < sizeof totals / sizeof totals[0]; t++) {
            size_t total = totals[t], left = total, n = 0;
            size_t floor = total / (64 * (size_t)ranks) ? total / (64 * (size_t)ranks) : 1;
            while (left) {
                size_t c = dist_chunk(left, total, ranks);
                CHECK(c >= 1 && c <= left);
                /* the share of what is left, or the floor, or the rest */
                CHECK(c == left || c == floor || c == left / (2 * (size_t)ranks));
                CHECK(c >= (floor < left ? floor : left));
                left -= c;
                n++;
            }
            /* 2R ln 32 ranges down to the floor, then at most 2R of it,
             * where the floor is not rounded up to one item */
            if (total >= 4096 * (size_t)ranks)
                CHECK_MSG(n <= 10 * (size_t)ranks + 2, "total %zu ranks %d: %zu ranges", total,
                          ranks, n);
            CHECK(n <= total);
        }
}

static dist_ops fake;

TEST(rank_files)
{
    /* one process: the path as given, every file its own */
    CHECK(strcmp(dist_rank_path("p.bin"), "p.bin") == 0);
    CHECK(dist_own_file("counts.txt"));
    fake.nranks = 3;
    fake.rank = 2;
    dist = &fake;
    const char *p = dist_rank_path("out/p.bin");
    CHECK(strcmp(p, "out/p.bin.2") == 0);
    CHECK(dist_own_file("out/p.bin.2"));
    /* rank 0's files (counts, CSV) are not another rank's */
    CHECK(!dist_own_file("counts.txt"));
    CHECK(!dist_own_file("out/p.bin"));
    fake.rank = 0;
    CHECK(strcmp(dist_rank_path("p.bin"), "p.bin.0") == 0);
    CHECK(dist_own_file("counts.txt"));
    dist = NULL;
}
