/* The route DBSCAN's curve takes (src/cluster/dbscan_curve.c), chosen by a
 * pure function of the input's shape, the engine's capability, the ranks
 * and the setting `set curve-route`, so that each choice is tested on the
 * CPU (tests/unit/t_curve_plan.c). The steps themselves fall back at run
 * time, each to the next of its route (a device that cannot hold the
 * state: the host's), with the same results: every route gives the same
 * curve, value for value. docs/CLUSTERING.md says what each costs. */
#ifndef TCJ_CURVE_PLAN_H
#define TCJ_CURVE_PLAN_H

#include <stddef.h>

/* `set curve-route`: auto (the device where the engine can, else the
 * host), device (the same, refused where the engine has no device route),
 * host (every join through the host sink and every merging on the host:
 * the reference the device route is compared with). */
enum { CURVE_ROUTE_AUTO, CURVE_ROUTE_DEVICE, CURVE_ROUTE_HOST };
const char *curve_route_name(int route);
/* 0, or TCJ_EINVAL with one line naming the values. */
int curve_route_parse(const char *s, int *route);

/* Where the core distances come from first; at run time each falls back
 * to the next (device, sink, kdist) where it cannot. */
typedef enum curve_core_from {
    CURVE_CORE_NONE,   /* minPts 1: every point core at any eps */
    CURVE_CORE_DEVICE, /* the join at max consumed on the device (PAIRS_CURVE_CORE) */
    CURVE_CORE_SINK,   /* the join at max through a host sink keeping each row's K nearest */
    CURVE_CORE_KDIST,  /* the engine's k-distance (the same values up to max) */
} curve_core_from;

typedef struct curve_plan_in {
    size_t n, minpts;
    int consume;     /* the engine consumes pairs where it computes them (engine.consume) */
    int nranks;      /* processes sharing each join (1: one) */
    int route;       /* CURVE_ROUTE_* */
    size_t knn_room; /* the most nearest rows a row that memory allows the core join to keep */
} curve_plan_in;

typedef struct curve_plan {
    curve_core_from core;
    /* each row's K nearest kept by the core join: the first round's lists
     * from them, without a join (0: none; the first round joins) */
    size_t knn;
    int rounds_device; /* the rounds' pairs consumed where they are computed */
    int merge_device;  /* the merging where the lists are */
    int ranks;         /* the lists and reachabilities reduced over the ranks after a join */
    const char *why;   /* the route in a few words (static) */
} curve_plan;

/* The plan for in. 0, or TCJ_EUNSUP with one line where the route is
 * `device` and the engine has none here (no device route, several ranks). */
int curve_plan_choose(const curve_plan_in *in, curve_plan *p);

#endif
