/* What run, compare and later commands share: a join spec from the
 * session, progress and cancel wiring to the front end, the run stored in
 * the log, and the summary printed and emitted as a record. */
#ifndef TCJ_RUNNER_H
#define TCJ_RUNNER_H

#include "engine.h"
#include "out.h"
#include "session.h"

/* Progress context: a spec's progress_ctx points at one of these. */
typedef struct runner_progress {
    session *s;
    char what[64];
} runner_progress;
/* A spec's progress function for a runner_progress context: the front
 * end's progress, then its poll (the dashboard reads a cancel key). */
void runner_on_progress(void *ctx, double frac);

/* The default engine: the available one of highest ENGINE_ROLE_DEFAULT
 * rank with these options (today fasted when it can run, else cpu). */
const engine *runner_default_engine(const engine_opts *o);
/* Look up an engine by name; TCJ_EINVAL naming the engines otherwise. */
int runner_find_engine(const char *name, const engine **out);
/* The ground truth: the available engine of highest ENGINE_ROLE_TRUTH
 * rank (today fp64 when it can run, else cpu). */
const engine *runner_reference_engine(const engine_opts *o);
/* An engine= option: the named engine (NULL: the default one), checked to
 * be runnable with these options; 0 or an error with err_msg. */
int runner_engine_opt(const engine_opts *o, const char *name, const engine **out);
/* Fill spec for the session's dataset and eps over all rows in count mode,
 * with cancel and progress wired to the session. TCJ_EINVAL when no
 * dataset or eps. */
int runner_spec(session *s, const engine *e, join_spec *spec, runner_progress *pg);
/* Parse rows=Q0:Q1 into spec->q0/q1. */
int runner_rows(const char *v, size_t n, join_spec *spec);

/* Store a run (ok or failed, rc and err text) and return its id (0 when
 * there is no log). */
int64_t runner_store(session *s, const engine *e, const join_spec *spec, const join_result *res,
                     int rc, const char *error);
/* A clustering (v, v->res) and each join a pass of it ran (res->ran), a
 * run at the session's eps over every row, stored in one transaction: all
 * or none. v->id and v->run_id[k] get their ids (0: not stored, or the
 * pass ran no join). Returns v->id. */
struct dbscan_view;
int64_t runner_store_dbscan(session *s, const engine *e, struct dbscan_view *v);
/* One COUNT-mode run of e on spec with counters requested (`profile`,
 * `ladder`): the reason filled in where none were counted, the counters
 * added to res by metric name, the run stored with them; fills pr, res and
 * *id. Returns the run's error code (msg holds its text). */
struct cupti_prof_result;
int runner_profile_run(session *s, const engine *e, join_spec *spec, int sol,
                       struct cupti_prof_result *pr, join_result *res, int64_t *id, char *msg,
                       size_t msg_size);
/* Derived TFLOPS: padded (d_padded, the paper's count) and unpadded (d). */
void runner_tflops(const join_spec *spec, const join_result *res, double *padded, double *unpadded);
/* The human summary and the "run" record. */
void runner_report(session *s, const engine *e, const join_spec *spec, const join_result *res,
                   int64_t run_id);
struct out_rec;
/* The same; extra (may be NULL) adds fields to the run record. */
void runner_report_ext(session *s, const engine *e, const join_spec *spec, const join_result *res,
                       int64_t run_id, void (*extra)(struct out_rec *r, void *ctx), void *ctx);
/* Add the run's fields (engine, n, d, eps, pairs, phases, ...) to a record. */
struct out_rec;
void runner_rec_fields(struct out_rec *r, session *s, const engine *e, const join_spec *spec,
                       const join_result *res, int64_t run_id);
/* A result's "phases" object, and its "counters" and "counter_units"
 * where the engine reported any (the run record's; kdist's too). */
void runner_rec_phases(struct out_rec *r, const join_result *res);
void runner_rec_counters(struct out_rec *r, const join_result *res);

/* A result kept as its JSON record (store.h, "Result records"; the
 * command's `stored` names the type): members(ctx, r) writes the record's
 * members. runner_record_store keeps it in the session log and returns
 * its id (0: no log; a failed write is a warning line, the result stands);
 * runner_record_emit emits it with "TYPE_id" first. */
typedef void (*runner_members_fn)(void *ctx, out_rec *r);
int64_t runner_record_store(session *s, const char *type, runner_members_fn members, void *ctx);
void runner_record_emit(const char *type, int64_t id, runner_members_fn members, void *ctx);

#endif
