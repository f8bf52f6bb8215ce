/* Red flags of a DBSCAN result and the advice printed with each
 * (docs/CLUSTERING.md, "Red flags"). The advice names only commands that
 * run at the result's minPts and says a direction only where it follows
 * from the result: eps too small (no core point, most points noise), eps
 * too large (nearly all points core, one cluster holding most points),
 * minPts toward the 2·d rule only where that rule differs from it.
 * Library code: nothing here prints. */
#ifndef TCJ_DBSCAN_ADVICE_H
#define TCJ_DBSCAN_ADVICE_H

#include <stddef.h>

struct dbscan_result;

enum {
    DBSCAN_FLAG_NO_CORE = 1,      /* no core point: every point is noise */
    DBSCAN_FLAG_ALL_CORE = 2,     /* at least 95% of the points are core */
    DBSCAN_FLAG_ONE_CLUSTER = 4,  /* one cluster holds more than half the points */
    DBSCAN_FLAG_MOSTLY_NOISE = 8, /* more than half the points are noise */
};
#define DBSCAN_NFLAGS 4
/* Short names ("no-core", "all-core", "one-cluster", "mostly-noise"). */
extern const char *const dbscan_flag_names[DBSCAN_NFLAGS];

/* The flags of a result: bit per flag. */
unsigned dbscan_flags(const struct dbscan_result *r);

/* minPts by the 2·d rule (Sander et al. 1998), which is meant for low d:
 * 2·min(d, 10), at least 10, so 10 to 20. */
size_t dbscan_minpts_rule(size_t d);

/* The one-line text of flag bit k (0 .. DBSCAN_NFLAGS-1), advice
 * included, into buf (at most size bytes, always terminated); d: the
 * dataset's dimension. Fits in DBSCAN_FLAG_TEXT bytes. */
#define DBSCAN_FLAG_TEXT 320
void dbscan_flag_text(int k, const struct dbscan_result *r, size_t minpts, size_t d, char *buf,
                      size_t size);

#endif
