#include "sink.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dist.h"
#include "err.h"
#include "ofile.h"

/* The stdio buffer (CSV) or the chunk binary pairs are packed into and
 * written with one call. */
#define SINK_BUF (4u << 20)

struct sink_file {
    ofile *of;
    FILE *f; /* CSV only */
    char *path;
    sink_format fmt;
    char *base; /* the name asked for (tcjoin-mpi: path is BASE.RANK) */
    uint64_t pairs;
    int failed; /* errno of the first failed write, 0 if none */
    char *buf;  /* stdio buffer (CSV) or packing chunk (binary) */
};

int sink_format_parse(const char *name, sink_format *fmt)
{
    if (strcmp(name, "u32") == 0)
        *fmt = SINK_U32;
    else if (strcmp(name, "u64") == 0)
        *fmt = SINK_U64;
    else if (strcmp(name, "csv") == 0)
        *fmt = SINK_CSV;
    else
        return err_set(TCJ_EINVAL, "unknown pair format '%s' (expected u32, u64 or csv)", name);
    return 0;
}

const char *sink_format_name(sink_format fmt)
{
    switch (fmt) {
    case SINK_U32:
        return "u32";
    case SINK_U64:
        return "u64";
    case SINK_CSV:
        return "csv";
    }
    return "?";
}

int sink_file_open(const char *path, sink_format fmt, int force, const char *log_path,
                   sink_file **out)
{
    ofile *of;
    /* tcjoin-mpi: each rank writes PATH.RANK (src/dist.h) */
    const char *base = path;
    path = dist_rank_path(path);
    int rc = ofile_open(path, force, log_path, &of);
    if (rc)
        return rc;
    /* Binary pairs are packed into whole chunks and written by
     * ofile_write; only CSV's formatted lines go through stdio. */
    FILE *f = NULL;
    if (fmt == SINK_CSV && !(f = ofile_stream(of))) {
        ofile_abort(of);
        return TCJ_EIO;
    }
    sink_file *s = xcalloc(1, sizeof *s);
    s->of = of;
    s->f = f;
    s->path = xstrdup(path);
    s->base = xstrdup(base);
    s->fmt = fmt;
    s->buf = xmalloc(SINK_BUF);
    if (f)
        setvbuf(f, s->buf, _IOFBF, SINK_BUF);
    if (fmt == SINK_CSV && fputs("i,j,dist\n", f) == EOF)
        s->failed = errno ? errno : EIO;
    *out = s;
    return 0;
}

/* Binary pairs: (i, j) interleaved into the chunk, one write a chunk. */
static int sink_put_bin(sink_file *s, const pair_batch *b)
{
    const size_t rec = s->fmt == SINK_U64 ? 16 : 8, per = SINK_BUF / rec;
    for (size_t k0 = 0; k0 < b->k; k0 += per) {
        const size_t m = b->k - k0 < per ? b->k - k0 : per;
        const uint32_t *i = b->i + k0, *j = b->j + k0;
        if (s->fmt == SINK_U64) {
            uint64_t *o = (uint64_t *)(void *)s->buf;
            for (size_t k = 0; k < m; k++) {
                o[2 * k] = i[k];
                o[2 * k + 1] = j[k];
            }
        } else {
            uint32_t *o = (uint32_t *)(void *)s->buf;
            for (size_t k = 0; k < m; k++) {
                o[2 * k] = i[k];
                o[2 * k + 1] = j[k];
            }
        }
        errno = 0;
        int rc = ofile_write(s->of, s->buf, m * rec);
        if (rc) {
            s->failed = errno ? errno : EIO;
            return rc;
        }
    }
    s->pairs += b->k;
    return 0;
}

static int sink_put(void *vctx, const pair_batch *b)
{
    sink_file *s = vctx;
    if (s->failed)
        return ofile_failure(
            s->of, err_set(TCJ_EIO, "%s: write failed: %s", s->path, strerror(s->failed)));
    if (s->fmt != SINK_CSV)
        return sink_put_bin(s, b);
    FILE *f = s->f;
    int ok = 1;
    errno = 0;
    for (size_t k = 0; k < b->k && ok; k++)
        ok = fprintf(f, "%u,%u,%.17g\n", (unsigned)b->i[k], (unsigned)b->j[k], sqrt(b->d2[k])) > 0;
    if (!ok) {
        s->failed = errno ? errno : EIO;
        return ofile_failure(
            s->of, err_set(TCJ_EIO, "%s: write failed: %s", s->path, strerror(s->failed)));
    }
    s->pairs += b->k;
    return 0;
}

pair_sink sink_file_pair_sink(sink_file *f)
{
    pair_sink p = {.put = sink_put, .ctx = f};
    return p;
}

uint64_t sink_file_pairs(const sink_file *f)
{
    return f->pairs;
}

int sink_file_close(sink_file *s, int keep)
{
    if (!s)
        return 0;
    int rc = 0;
    if (s->failed) {
        rc = ofile_failure(s->of,
                           err_set(TCJ_EIO, "%s: write failed: %s", s->path, strerror(s->failed)));
        ofile_abort(s->of);
    } else if (keep) {
        rc = ofile_commit(s->of);
    } else {
        ofile_abort(s->of);
    }
    /* tcjoin-mpi: every rank's file closed, rank 0 writes the manifest */
    if (dist && dist->nranks > 1) {
        int drc = dist->pairs_closed(s->base, sink_format_name(s->fmt), keep && !rc, s->pairs);
        if (!rc)
            rc = drc;
    }
    /* The stream is closed: its buffer can go. */
    free(s->buf);
    free(s->base);
    free(s->path);
    free(s);
    return rc;
}
