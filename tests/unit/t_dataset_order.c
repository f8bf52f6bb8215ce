/* dataset_order_first (src/dataset_order.c) against the rows read one by
 * one: the listed rows first in their order, the others after in theirs,
 * at[] naming each; the hash alike for the same order and different for
 * another order, another list or the dataset itself; f32 and f64 rows;
 * the copy on one thread and on par_for's ranges (split from any size). */
#include "check.h"

#include <stdlib.h>

#include "dataset.h"
#include "dataset_order.h"
#include "par.h"

static int same_row(const dataset *a, size_t i, const dataset *b, size_t j)
{
    double x[8], y[8];
    dataset_rows_f64(a, i, 1, x);
    dataset_rows_f64(b, j, 1, y);
    return memcmp(x, y, a->d * sizeof *x) == 0;
}

TEST(listed_rows_first_then_the_others_in_order)
{
    const size_t n = 97, d = 5;
    double *x = malloc(n * d * sizeof *x);
    uint64_t st = 3;
    for (size_t k = 0; k < n * d; k++)
        x[k] = t_unit(&st);
    for (int type = 0; type < 4; type++) {
        par_for_tests(type >= 2 ? 1 : 0);
        dataset ds;
        memset(&ds, 0, sizeof ds);
        dataset_set_f64(&ds, x, n, d, type & 1 ? DTYPE_F32 : DTYPE_F64);
        const size_t first[] = {96, 0, 41, 40, 7}, m = 5;
        uint32_t at[97];
        dataset g;
        CHECK(dataset_order_first(&ds, first, m, &g, at) == 0);
        CHECK(g.n == n && g.d == d && g.type == ds.type);
        size_t k = 0, bad = 0;
        for (; k < m; k++)
            bad += at[k] != first[k] || !same_row(&g, k, &ds, first[k]);
        for (size_t i = 0; i < n; i++) {
            int listed = 0;
            for (size_t q = 0; q < m; q++)
                listed |= first[q] == i;
            if (!listed) {
                bad += at[k] != i || !same_row(&g, k, &ds, i);
                k++;
            }
        }
        CHECK_MSG(bad == 0 && k == n, "%zu rows misplaced", bad);
        dataset h, o;
        const size_t other[] = {0, 96, 41, 40, 7};
        CHECK(dataset_order_first(&ds, first, m, &h, NULL) == 0);
        CHECK(dataset_order_first(&ds, other, m, &o, NULL) == 0);
        CHECK(h.hash == g.hash && o.hash != g.hash && g.hash != ds.hash);
        dataset_order_free(&h);
        /* one row fewer listed: the same rows may follow, another content */
        CHECK(dataset_order_first(&ds, first, m - 1, &h, NULL) == 0);
        CHECK(h.hash != g.hash);
        dataset_order_free(&g);
        dataset_order_free(&h);
        dataset_order_free(&o);
        free(ds.v);
    }
    par_for_tests(0);
    free(x);
}
