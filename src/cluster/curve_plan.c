/* The curve's route (src/cluster/curve_plan.h). */
#include "curve_plan.h"

#include <string.h>

#include "cluster_types.h"
#include "err.h"

static const char *const curve_route_names[] = {"auto", "device", "host"};

const char *curve_route_name(int route)
{
    return route >= 0 && route <= CURVE_ROUTE_HOST ? curve_route_names[route] : "?";
}

int curve_route_parse(const char *s, int *route)
{
    for (int r = 0; r <= CURVE_ROUTE_HOST; r++)
        if (strcmp(s, curve_route_names[r]) == 0) {
            *route = r;
            return 0;
        }
    return err_set(TCJ_EINVAL, "curve-route: expected auto, device or host, got '%s'", s);
}

/* The K nearest the core join keeps: CURVE_CORE_MAX_K, at most n - 1 and
 * what memory allows; none where that is below the core rank k (the
 * lists must reach past each row's core distance). */
static size_t plan_knn(const curve_plan_in *in)
{
    const size_t k = in->minpts - 1;
    size_t K = CURVE_CORE_MAX_K;
    if (in->n > 0 && K > in->n - 1)
        K = in->n - 1;
    if (K > in->knn_room)
        K = in->knn_room;
    return k > 0 && K >= k ? K : 0;
}

int curve_plan_choose(const curve_plan_in *in, curve_plan *p)
{
    memset(p, 0, sizeof *p);
    p->ranks = in->nranks > 1;
    const int device = in->consume && !p->ranks;
    if (in->route == CURVE_ROUTE_DEVICE && !device)
        return err_set(TCJ_EUNSUP, "dbscan curve: curve-route device: %s",
                       p->ranks ? "several ranks share each join (the pairs stay on the host)"
                                : "the engine has no device route (use auto or host)");
    const int host = in->route == CURVE_ROUTE_HOST || !device;
    /* Several ranks: each rank's sink sees its share of the pairs, which
     * keeps no row's K nearest whole: the k-distance, shared by rows. */
    p->knn = p->ranks ? 0 : plan_knn(in);
    if (in->minpts <= 1)
        p->core = CURVE_CORE_NONE;
    else if (!host)
        p->core = CURVE_CORE_DEVICE;
    else
        p->core = p->knn ? CURVE_CORE_SINK : CURVE_CORE_KDIST;
    p->rounds_device = p->merge_device = !host;
    p->why = p->ranks                        ? "ranks: host sinks, lists reduced"
             : in->route == CURVE_ROUTE_HOST ? "host (set curve-route)"
             : !device                       ? "host: the engine has no device route"
                                             : "device";
    return 0;
}
