/* curve_plan_choose (src/cluster/curve_plan.c), the pure function that
 * picks DBSCAN's curve's route, on each shape of input: an engine that
 * consumes pairs on the device or not, one process or several ranks, each
 * setting of curve-route, minPts 1, few points (K capped at n - 1), little
 * memory (K capped, none below the core rank); and the setting's words.
 * Expected plans are written out from the rules in curve_plan.h, case by
 * case. */
#include "check.h"

#include <stdint.h>
#include <string.h>

#include "cluster_types.h"
#include "curve_plan.h"
#include "err.h"

static curve_plan_in in_of(size_t n, size_t minpts, int consume, int nranks, int route, size_t room)
{
    curve_plan_in in = {.n = n,
                        .minpts = minpts,
                        .consume = consume,
                        .nranks = nranks,
                        .route = route,
                        .knn_room = room};
    return in;
}

/* The plan for in equals the one written out. */
static void expect(curve_plan_in in, curve_core_from core, size_t knn, int dev, int ranks,
                   const char *what)
{
    curve_plan p;
    CHECK_MSG(curve_plan_choose(&in, &p) == 0, "%s: %s", what, err_msg());
    CHECK_MSG(p.core == core && p.knn == knn && p.rounds_device == dev && p.merge_device == dev &&
                  p.ranks == ranks && p.why && *p.why,
              "%s: core %d knn %zu device %d/%d ranks %d (want %d %zu %d %d)", what, (int)p.core,
              p.knn, p.rounds_device, p.merge_device, p.ranks, (int)core, knn, dev, ranks);
}

TEST(device_engine_one_process)
{
    /* auto and device: everything on the device, the K nearest kept */
    expect(in_of(1000000, 10, 1, 1, CURVE_ROUTE_AUTO, SIZE_MAX), CURVE_CORE_DEVICE,
           CURVE_CORE_MAX_K, 1, 0, "gpu auto");
    expect(in_of(1000000, 10, 1, 1, CURVE_ROUTE_DEVICE, SIZE_MAX), CURVE_CORE_DEVICE,
           CURVE_CORE_MAX_K, 1, 0, "gpu device");
    /* host: the reference route, the K nearest through the host sink */
    expect(in_of(1000000, 10, 1, 1, CURVE_ROUTE_HOST, SIZE_MAX), CURVE_CORE_SINK, CURVE_CORE_MAX_K,
           0, 0, "gpu host");
}

TEST(host_engine_one_process)
{
    expect(in_of(5000, 5, 0, 1, CURVE_ROUTE_AUTO, SIZE_MAX), CURVE_CORE_SINK, CURVE_CORE_MAX_K, 0,
           0, "cpu auto");
    expect(in_of(5000, 5, 0, 1, CURVE_ROUTE_HOST, SIZE_MAX), CURVE_CORE_SINK, CURVE_CORE_MAX_K, 0,
           0, "cpu host");
    curve_plan p;
    CHECK(curve_plan_choose(&(curve_plan_in){5000, 5, 0, 1, CURVE_ROUTE_DEVICE, SIZE_MAX}, &p) ==
          TCJ_EUNSUP);
    CHECK_STR_CONTAINS(err_msg(), "no device route");
}

TEST(several_ranks)
{
    /* each rank's sink sees its share: no K nearest, the k-distance */
    expect(in_of(200000, 10, 1, 4, CURVE_ROUTE_AUTO, SIZE_MAX), CURVE_CORE_KDIST, 0, 0, 1,
           "ranks auto");
    expect(in_of(200000, 10, 0, 2, CURVE_ROUTE_HOST, SIZE_MAX), CURVE_CORE_KDIST, 0, 0, 1,
           "ranks host");
    curve_plan p;
    CHECK(curve_plan_choose(&(curve_plan_in){200000, 10, 1, 2, CURVE_ROUTE_DEVICE, SIZE_MAX}, &p) ==
          TCJ_EUNSUP);
    CHECK_STR_CONTAINS(err_msg(), "ranks");
}

TEST(shapes)
{
    /* minPts 1: no core distances to find, no lists */
    expect(in_of(1000, 1, 1, 1, CURVE_ROUTE_AUTO, SIZE_MAX), CURVE_CORE_NONE, 0, 1, 0, "minpts 1");
    expect(in_of(1000, 1, 0, 1, CURVE_ROUTE_AUTO, SIZE_MAX), CURVE_CORE_NONE, 0, 0, 0,
           "minpts 1 cpu");
    /* few points: K at most n - 1 */
    expect(in_of(20, 5, 1, 1, CURVE_ROUTE_AUTO, SIZE_MAX), CURVE_CORE_DEVICE, 19, 1, 0, "n 20");
    expect(in_of(2, 2, 0, 1, CURVE_ROUTE_AUTO, SIZE_MAX), CURVE_CORE_SINK, 1, 0, 0, "n 2");
    /* little memory: K what fits, none below the core rank k = minPts - 1,
     * the host then without lists from the k-distance */
    expect(in_of(1000000, 10, 1, 1, CURVE_ROUTE_AUTO, 12), CURVE_CORE_DEVICE, 12, 1, 0, "room 12");
    expect(in_of(1000000, 10, 1, 1, CURVE_ROUTE_AUTO, 9), CURVE_CORE_DEVICE, 9, 1, 0, "room 9");
    expect(in_of(1000000, 10, 1, 1, CURVE_ROUTE_AUTO, 8), CURVE_CORE_DEVICE, 0, 1, 0, "room 8");
    expect(in_of(1000000, 10, 0, 1, CURVE_ROUTE_AUTO, 8), CURVE_CORE_KDIST, 0, 0, 0, "room 8 cpu");
    expect(in_of(1000000, 10, 1, 1, CURVE_ROUTE_HOST, 0), CURVE_CORE_KDIST, 0, 0, 0, "room 0 host");
    /* a core rank above what any K holds (minPts 100 > 65) */
    expect(in_of(1000000, 100, 1, 1, CURVE_ROUTE_AUTO, SIZE_MAX), CURVE_CORE_DEVICE, 0, 1, 0,
           "minpts 100");
    expect(in_of(1000000, 100, 0, 1, CURVE_ROUTE_AUTO, SIZE_MAX), CURVE_CORE_KDIST, 0, 0, 0,
           "minpts 100 cpu");
}

TEST(route_words)
{
    for (int r = CURVE_ROUTE_AUTO; r <= CURVE_ROUTE_HOST; r++) {
        int back = -1;
        CHECK(curve_route_parse(curve_route_name(r), &back) == 0 && back == r);
    }
    int r = 7;
    CHECK(curve_route_parse("gpu", &r) == TCJ_EINVAL && r == 7);
    CHECK_STR_CONTAINS(err_msg(), "auto, device or host");
    CHECK(strcmp(curve_route_name(99), "?") == 0);
}
