/* Reusing stored runs: a COUNT run of the session log made on this host
 * with the same dataset content (hash), eps, engine and options (the
 * settings that pick the kernel variant: opt switches, ted, index-k,
 * symmetric, threads, device, batch) can stand for a new one, so `compare`
 * does not re-run an engine that just ran. The comparison's own pair pass
 * still runs both engines. */
#ifndef TCJ_REUSE_H
#define TCJ_REUSE_H

#include <stdint.h>

#include "engine.h"
#include "session.h"

typedef struct reuse_run {
    int64_t id;      /* the stored run */
    char at[32];     /* when it was made */
    join_result res; /* its pairs, times by phase, device, variant, precision */
} reuse_run;

/* Look up a run of e on the session's dataset and eps. Returns 1 with *out
 * filled, 0 when there is none (or no log), or a negative TCJ_E* code. */
int reuse_find(session *s, const engine *e, reuse_run *out);

/* One name per phase for the program's life: join_phase names are static
 * strings, a stored name is not. */
const char *reuse_phase_name(const char *name);

/* compare's sides A, B and the reference (e[k] NULL: no such side): a
 * stored run for each, unless fresh. Returns 0 or a negative code. */
#define REUSE_SIDES 3
typedef struct reuse_set {
    reuse_run run[REUSE_SIDES];
    int found[REUSE_SIDES];
} reuse_set;
int reuse_sides(session *s, const engine *const e[REUSE_SIDES], int fresh, reuse_set *out);
/* The stored run standing for side k, or NULL. */
const join_result *reuse_res(const reuse_set *rs, int k);
/* Say which runs were reused (one line each) and how to re-run; nothing
 * when none was. */
void reuse_report(const engine *const e[REUSE_SIDES], const reuse_set *rs);

#endif
