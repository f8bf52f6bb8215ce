#include "sink.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "ofile.h"

#define SINK_BUF (1u << 20)

struct sink_file {
    ofile *of;
    FILE *f;
    char *path;
    sink_format fmt;
    uint64_t pairs;
    int failed; /* errno of the first failed write, 0 if none */
    char *buf;  /* stdio buffer */
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
    int rc = ofile_open(path, force, log_path, &of);
    if (rc)
        return rc;
    FILE *f = ofile_stream(of);
    if (!f) {
        ofile_abort(of);
        return TCJ_EIO;
    }
    sink_file *s = xcalloc(1, sizeof *s);
    s->of = of;
    s->f = f;
    s->path = xstrdup(path);
    s->fmt = fmt;
    s->buf = xmalloc(SINK_BUF);
    setvbuf(f, s->buf, _IOFBF, SINK_BUF);
    if (fmt == SINK_CSV && fputs("i,j,dist\n", f) == EOF)
        s->failed = errno ? errno : EIO;
    *out = s;
    return 0;
}

static int sink_put(void *vctx, const pair_batch *b)
{
    sink_file *s = vctx;
    if (s->failed)
        return err_set(TCJ_EIO, "%s: write failed: %s", s->path, strerror(s->failed));
    FILE *f = s->f;
    int ok = 1;
    errno = 0;
    switch (s->fmt) {
    case SINK_U32:
        for (size_t k = 0; k < b->k && ok; k++) {
            uint32_t p[2] = {b->i[k], b->j[k]};
            ok = fwrite(p, sizeof p, 1, f) == 1;
        }
        break;
    case SINK_U64:
        for (size_t k = 0; k < b->k && ok; k++) {
            uint64_t p[2] = {b->i[k], b->j[k]};
            ok = fwrite(p, sizeof p, 1, f) == 1;
        }
        break;
    case SINK_CSV:
        for (size_t k = 0; k < b->k && ok; k++)
            ok = fprintf(f, "%u,%u,%.17g\n", (unsigned)b->i[k], (unsigned)b->j[k], sqrt(b->d2[k])) >
                 0;
        break;
    }
    if (!ok) {
        s->failed = errno ? errno : EIO;
        return err_set(TCJ_EIO, "%s: write failed: %s", s->path, strerror(s->failed));
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
        ofile_abort(s->of);
        rc = err_set(TCJ_EIO, "%s: write failed: %s", s->path, strerror(s->failed));
    } else if (keep) {
        rc = ofile_commit(s->of);
    } else {
        ofile_abort(s->of);
    }
    /* The stream is closed: its buffer can go. */
    free(s->buf);
    free(s->path);
    free(s);
    return rc;
}
