/* The cluster cut's groups (clu_groups, kernels/kern_cluster.c): the
 * connected pieces of "not proved apart" (clu_apart), numbered in order
 * of each piece's first cluster, checked against a breadth-first search
 * over the same relation: two pairs of near clusters (the case whose
 * renumbering put cluster 3 of {0, 1}, {2, 3} in group 0, so the cut
 * skipped every pair between clusters 2 and 3), a chain whose links come
 * in falling order, and 300 random plans of up to CLU_MAX_K clusters in
 * 1 to 8 dimensions. */
#include "check.h"

#include <stdint.h>
#include <string.h>

#include "kern_cluster.h"

static uint64_t rng = 5;
static double unit(void)
{
    rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
    return (double)(rng >> 11) * 0x1p-53;
}

/* clu_groups against a breadth-first search of the same relation. */
static void check_groups(const char *what, int K, size_t d, double *o, const double *rad,
                         double lim)
{
    clu_plan p;
    memset(&p, 0, sizeof p);
    p.K = K;
    p.o = o;
    int comp[CLU_MAX_K], want[CLU_MAX_K], queue[CLU_MAX_K], g = 0;
    const int G = clu_groups(&p, d, rad, lim, comp);
    for (int c = 0; c < K; c++)
        want[c] = -1;
    for (int c = 0; c < K; c++) {
        if (want[c] >= 0)
            continue;
        int head = 0, tail = 0;
        want[c] = g;
        queue[tail++] = c;
        while (head < tail) {
            const int a = queue[head++];
            for (int b = 0; b < K; b++)
                if (want[b] < 0 && !clu_apart(&p, d, rad, a < b ? a : b, a < b ? b : a, lim)) {
                    want[b] = g;
                    queue[tail++] = b;
                }
        }
        g++;
    }
    CHECK_MSG(G == g, "%s: %d groups, the search finds %d", what, G, g);
    for (int c = 0; c < K; c++)
        CHECK_MSG(comp[c] == want[c], "%s: cluster %d in group %d, the search's %d", what, c,
                  comp[c], want[c]);
}

TEST(two_pairs_of_near_clusters)
{
    double o[] = {0, 1, 100, 101}, rad[] = {0.1, 0.1, 0.1, 0.1};
    check_groups("pairs", 4, 1, o, rad, 2.0);
    clu_plan p;
    memset(&p, 0, sizeof p);
    p.K = 4;
    p.o = o;
    int comp[4];
    CHECK_EQ_INT(clu_groups(&p, 1, rad, 2.0, comp), 2);
    CHECK(comp[0] == 0 && comp[1] == 0 && comp[2] == 1 && comp[3] == 1);
}

TEST(a_chain_linked_from_the_far_end)
{
    /* 0 .. 7 at 0, 10, 20, ...; cluster 7 near 0 too (a ring's last link
     * joins the first piece): one group */
    double o[9], rad[9];
    for (int c = 0; c < 8; c++) {
        o[c] = 10.0 * c;
        rad[c] = 4.0;
    }
    o[8] = -5;
    rad[8] = 1;
    check_groups("chain", 9, 1, o, rad, 1.5);
}

TEST(random_plans)
{
    for (int t = 0; t < 300; t++) {
        const int K = 2 + (int)(unit() * (CLU_MAX_K - 1));
        const size_t d = 1 + (size_t)(unit() * 8);
        double o[CLU_MAX_K * 8], rad[CLU_MAX_K];
        const double span = 10.0 + 90.0 * unit();
        for (int c = 0; c < K; c++) {
            for (size_t k = 0; k < d; k++)
                o[(size_t)c * d + k] = span * unit();
            rad[c] = 3.0 * unit();
        }
        char what[48];
        snprintf(what, sizeof what, "plan %d (K %d, d %zu)", t, K, d);
        check_groups(what, K, d, o, rad, 2.0 * unit());
    }
}
