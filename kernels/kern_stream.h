/* What the two cuts of kern_stream_run share (kernels/kern_stream.c: the
 * driver and the row chunks; kernels/kern_stream_slab.c: the slabs of the
 * engines that take no cross run) and the k-distance's cut
 * (kernels/kern_stream_kd.c), and the layouts' runs (kernels/
 * kern_stream_clu.c: the cluster cut's; kernels/kern_tiles.c: the tile
 * cut's): the renumbering of a run's rows into the dataset's, progress
 * over the runs, the sum of their results, and the dataset a kept plan is
 * of (kernels/kern_cluster.c's too). Only those six files include it. */
#ifndef TCJ_KERN_STREAM_H
#define TCJ_KERN_STREAM_H

#include "kernels.h"

/* Where one run's rows are in the dataset. With map: row v is map[v].
 * Without: rows below c0 (all rows when c0 is 0) from a0 on, rows from
 * c0 on from b0 on. */
typedef struct stream_map {
    size_t a0, b0, c0;
    const uint32_t *map;
} stream_map;

static inline uint32_t stream_row(const stream_map *m, uint32_t v)
{
    if (m->map)
        return m->map[v];
    return (uint32_t)(m->c0 && v >= m->c0 ? m->b0 + (v - m->c0) : m->a0 + v);
}

/* The run's pair callback and progress, wrapping the caller's. */
typedef struct stream_ctx {
    const kern_join_args *a;
    stream_map m;
    uint32_t *ti, *tj; /* renumbered rows of a batch */
    size_t tcap;
    unsigned long long emitted; /* batches handed to the caller's sink */
    double done, work, total;   /* progress: work of the runs finished, this run's, all */
    double shown;               /* the largest fraction reported */
    int one_way;                /* the engine runs cross runs unsymmetric */
    int failed;                 /* host memory for the renumbering ran out */
} stream_ctx;

/* Outputs of a whole streamed attempt, kept apart from the caller's until
 * it succeeds (an attempt that fails for memory is thrown away). */
typedef struct stream_out {
    uint64_t *counts, *hist, below; /* the whole run's */
    uint64_t *rc, *rh, rb;          /* one run's */
} stream_out;

/* o's arrays for a's mode: the whole run's (n rows or the bins) and one
 * run's (run_rows rows or the bins), zeroed. 0, or KERN_ENOMEM with a
 * message naming what (o freed). */
int stream_out_open(const kern_join_args *a, stream_out *o, size_t run_rows, const char *what);
/* ok: o's whole-run outputs copied into a's; o freed either way. */
void stream_out_close(const kern_join_args *a, stream_out *o, int ok);
/* Add one run's result x into the whole's r (first: r becomes x, keeping
 * r's cut fields); chunk_runs counts the runs. */
void stream_merge(kern_join_result *r, const kern_join_result *x, int first);
/* The dataset a plan kept across runs was made of (the cluster cut's and
 * the tile cut's): its rows' pointer, shape, content hash and stored type;
 * a run of other rows, or of the same rows changed, is another dataset. */
typedef struct stream_data_id {
    const void *x;
    size_t n, d, x_bytes;
    uint64_t hash;
    int x_type;
} stream_data_id;

static inline stream_data_id stream_data_of(const kern_join_args *a)
{
    stream_data_id id = {a->x, a->n, a->d, a->x_bytes, a->hash, a->x_type};
    return id;
}

static inline int stream_data_is(const stream_data_id *id, const kern_join_args *a)
{
    return id->x == a->x && id->n == a->n && id->d == a->d && id->hash == a->hash &&
           id->x_bytes == a->x_bytes && id->x_type == a->x_type;
}

/* A run's content hash: the dataset's, mixed with which rows it holds
 * (two numbers that name the run within its cut of R rows). */
uint64_t stream_hash(uint64_t h, size_t a, size_t b, size_t R);
/* A fresh attempt at a cut of B chunks of R rows whose runs weigh total:
 * r, progress and o's whole-run arrays reset, device caches released. */
void stream_begin(const kern_join_args *a, stream_ctx *c, stream_out *o, kern_join_result *r,
                  size_t B, size_t R, double total);
/* fn over one run s of a cut (c->m and c->work set): outputs and
 * callbacks wired through o and c, added into o's whole-run arrays and r
 * (kernels/kern_stream.c). */
int stream_call(kern_join_fn fn, const kern_join_args *a, kern_join_args *s, stream_ctx *c,
                stream_out *o, kern_join_result *r, kern_join_result *x);

/* fn over the layout run s: a's rows laid out (the caller sets s->n,
 * rows and the layout's other fields, hash and scale; q0, q1, c0 and xc
 * set here), its outputs and pairs renumbered to a's rows into a's and r
 * (kernels/kern_stream_clu.c: the cluster cut's and the tile cut's run).
 * what names the cut in a memory message. */
int stream_layout(kern_join_fn fn, const kern_join_args *a, kern_join_args *s, const char *what,
                  kern_join_result *r);

/* The slab cut (kernels/kern_stream_slab.c), after fn refused a cross run
 * (KERN_ECROSS): every run of slabs of the sorted rows, halved until they
 * fit. o's whole-run arrays (counts: n, rc: at least n) are allocated by
 * the caller. On failure the message names the cut that was tried. */
int stream_slabs(kern_join_fn fn, const kern_join_args *a, stream_ctx *c, stream_out *o,
                 kern_join_result *r);

#endif
