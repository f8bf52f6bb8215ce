/* A point's list of cheapest edges (src/cluster/curve_list.h). */
#include "curve_list.h"

void curve_list_put(curve_list *l, const curve_edge *e)
{
    curve_edge *h = l->e;
    for (uint32_t k = 0; k < l->len; k++)
        if (h[k].a == e->a && h[k].b == e->b)
            return;
    uint32_t k;
    if (l->len < CURVE_LIST) {
        k = l->len++;
        while (k > 0 && curve_edge_before(&h[(k - 1) / 2], e)) {
            h[k] = h[(k - 1) / 2];
            k = (k - 1) / 2;
        }
        h[k] = *e;
        return;
    }
    if (!curve_edge_before(e, &h[0]))
        return;
    k = 0;
    for (;;) { /* the new top sifted down */
        uint32_t c = 2 * k + 1;
        if (c >= CURVE_LIST)
            break;
        if (c + 1 < CURVE_LIST && curve_edge_before(&h[c], &h[c + 1]))
            c++;
        if (!curve_edge_before(e, &h[c]))
            break;
        h[k] = h[c];
        k = c;
    }
    h[k] = *e;
}

void curve_list_merge(const curve_list *in, curve_list *out)
{
    for (uint32_t k = 0; k < in->len && k < CURVE_LIST; k++)
        curve_list_put(out, &in->e[k]);
}
