/* libtcjoin's typed calls (include/tcjoin.h): each is the workbench's
 * command of its name on the caller's data, its numbers read from the
 * command's record and its per-point arrays (session_put) copied out. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "err.h"

/* An engine's name as one word of a command line. */
static int api_engine_word(tcj_ctx *c, const char *engine, const char *key, char *buf, size_t size)
{
    buf[0] = '\0';
    if (!engine || !*engine)
        return 0;
    for (const char *p = engine; *p; p++)
        if (!(('a' <= *p && *p <= 'z') || ('A' <= *p && *p <= 'Z') || ('0' <= *p && *p <= '9') ||
              *p == '-' || *p == '_' || *p == '.'))
            return api_fail(c, TCJ_EINVAL, "engine: '%s' is no engine name", engine);
    snprintf(buf, size, " %s%s", key, engine);
    return 0;
}

/* A command on x at eps, then its array name copied into out (n values of
 * the type asked for). */
static int api_take(tcj_ctx *c, const char *name, session_type t, void *out)
{
    const void *data;
    tcj_atype at;
    size_t n;
    if (tcj_array(c, name, &data, &at, &n) || (int)at != (int)t)
        return api_fail(c, TCJ_EINVAL, "the command gave no %s", name);
    memcpy(out, data, n * session_type_bytes(t));
    return 0;
}

/* What every typed call checks first: the data and the output array, eps
 * where the command joins at one (NAN: none), the engine's word (" KEY"
 * and the name in ew, empty for the default). */
static int api_prologue(tcj_ctx *c, tcj_data *x, const void *out, const char *what, double eps,
                        const char *engine, const char *key, char *ew, size_t size)
{
    if (!x)
        return api_fail(c, TCJ_EINVAL, "%s: no data (tcj_data_wrap)", what);
    if (!out)
        return api_fail(c, TCJ_EINVAL, "%s: no output array", what);
    if (!isnan(eps) && (!(eps > 0) || !isfinite(eps)))
        return api_fail(c, TCJ_EINVAL, "%s: eps must be a positive number, got %g", what, eps);
    return api_engine_word(c, engine, key, ew, size);
}

int tcj_count(tcj_ctx *c, tcj_data *x, double eps, const char *engine, uint64_t *pairs)
{
    char ew[96], line[160];
    int rc;
    if ((rc = api_prologue(c, x, pairs, "count", eps, engine, "", ew, sizeof ew)))
        return rc;
    snprintf(line, sizeof line, "run%s mode=count", ew);
    api_begin(c, x, eps);
    if (!(rc = api_exec_locked(c, line)))
        rc = api_take(c, "pairs", SESSION_U64, pairs); /* beyond 2^53: not through a double */
    return api_end(c, rc);
}

int tcj_perpoint(tcj_ctx *c, tcj_data *x, double eps, const char *engine, uint64_t *counts)
{
    char ew[96], line[160];
    int rc;
    if ((rc = api_prologue(c, x, counts, "perpoint", eps, engine, "", ew, sizeof ew)))
        return rc;
    snprintf(line, sizeof line, "run%s mode=perpoint", ew);
    api_begin(c, x, eps);
    if (!(rc = api_exec_locked(c, line)))
        rc = api_take(c, "counts", SESSION_U64, counts);
    return api_end(c, rc);
}

int tcj_kdist(tcj_ctx *c, tcj_data *x, int k, const char *engine, double *dist)
{
    char ew[96], line[160];
    int rc;
    if ((rc = api_prologue(c, x, dist, "kdist", NAN, engine, "engine=", ew, sizeof ew)))
        return rc;
    snprintf(line, sizeof line, "kdist %d%s", k, ew);
    api_begin(c, x, 0);
    if (!(rc = api_exec_locked(c, line)) && !(rc = api_take(c, "kdist_d2", SESSION_F64, dist)))
        for (size_t i = 0; i < x->ds.n; i++)
            dist[i] = sqrt(dist[i]);
    return api_end(c, rc);
}

int tcj_dbscan(tcj_ctx *c, tcj_data *x, double eps, size_t min_samples, const char *engine,
               int32_t *labels, uint8_t *core, size_t *clusters)
{
    char ew[96], line[160];
    int rc;
    if ((rc = api_prologue(c, x, labels, "dbscan", eps, engine, "engine=", ew, sizeof ew)))
        return rc;
    snprintf(line, sizeof line, "dbscan minpts=%zu%s", min_samples, ew);
    api_begin(c, x, eps);
    if (!(rc = api_exec_locked(c, line)) && !(rc = api_take(c, "labels", SESSION_I32, labels)) &&
        core)
        rc = api_take(c, "core", SESSION_U8, core);
    if (!rc && clusters) {
        int32_t top = -1;
        for (size_t i = 0; i < x->ds.n; i++)
            top = labels[i] > top ? labels[i] : top;
        *clusters = (size_t)(top + 1);
    }
    return api_end(c, rc);
}

int tcj_hdbscan(tcj_ctx *c, tcj_data *x, const char *options, const char *engine, int32_t *labels,
                double *probabilities, double *scores)
{
    char ew[96];
    int rc;
    if ((rc = api_prologue(c, x, labels, "hdbscan", NAN, engine, "engine=", ew, sizeof ew)))
        return rc;
    if (options && strchr(options, ';'))
        return api_fail(c, TCJ_EINVAL, "hdbscan: options are one command's words (no ';')");
    char *line = xmalloc(strlen(options ? options : "") + 128);
    sprintf(line, "hdbscan %s%s", options ? options : "", ew);
    api_begin(c, x, 0);
    if (!(rc = api_exec_locked(c, line)) && !(rc = api_take(c, "labels", SESSION_I32, labels)) &&
        probabilities)
        rc = api_take(c, "probabilities", SESSION_F64, probabilities);
    if (!rc && scores)
        rc = api_take(c, "outlier_scores", SESSION_F64, scores);
    free(line);
    return api_end(c, rc);
}

int tcj_sweep(tcj_ctx *c, tcj_data *x, double target, const char *engine, double *eps,
              double *selectivity)
{
    char ew[96], line[160];
    int rc;
    if ((rc = api_prologue(c, x, eps, "sweep", NAN, engine, "engine=", ew, sizeof ew)))
        return rc;
    snprintf(line, sizeof line, "sweep %.17g use%s", target, ew);
    api_begin(c, x, 0);
    double sel;
    if (!(rc = api_exec_locked(c, line)) &&
        !(rc = api_rec_number(c, "sweep", "selectivity", &sel))) {
        *eps = c->s.eps;
        if (selectivity)
            *selectivity = sel;
    }
    return api_end(c, rc);
}

/* The first record of type in the last call, as its own string in the
 * records' buffer (valid until the next call on c). */
static int api_record(tcj_ctx *c, const char *type, const char **json)
{
    char tkey[64];
    snprintf(tkey, sizeof tkey, "{\"type\":\"%s\"", type);
    for (char *line = c->recs.data; line && *line;) {
        char *end = strchr(line, '\n');
        if (!strncmp(line, tkey, strlen(tkey))) {
            if (end)
                *end = '\0'; /* the later records are not this call's answer */
            *json = line;
            return 0;
        }
        line = end ? end + 1 : line + strlen(line);
    }
    return api_fail(c, TCJ_EINVAL, "the command gave no %s record", type);
}

int tcj_curve(tcj_ctx *c, tcj_data *x, size_t min_samples, double max_eps, const char *engine,
              const char **json)
{
    char ew[96], line[192];
    int rc;
    if ((rc = api_prologue(c, x, json, "curve", max_eps, engine, "engine=", ew, sizeof ew)))
        return rc;
    snprintf(line, sizeof line, "dbscan curve minpts=%zu max=%.17g%s", min_samples, max_eps, ew);
    api_begin(c, x, 0);
    if (!(rc = api_exec_locked(c, line)))
        rc = api_record(c, "dbscan_curve", json);
    return api_end(c, rc);
}

int tcj_compare(tcj_ctx *c, tcj_data *x, double eps, const char *engine_a, const char *engine_b,
                const char **json)
{
    char ea[96], eb[96], line[256];
    int rc;
    if (!engine_a || !engine_b)
        return api_fail(c, TCJ_EINVAL, "compare: two engines are named");
    if ((rc = api_prologue(c, x, json, "compare", eps, engine_a, "", ea, sizeof ea)) ||
        (rc = api_engine_word(c, engine_b, "", eb, sizeof eb)))
        return rc;
    snprintf(line, sizeof line, "compare%s%s", ea, eb);
    api_begin(c, x, eps);
    if (!(rc = api_exec_locked(c, line)))
        rc = api_record(c, "compare", json);
    return api_end(c, rc);
}
