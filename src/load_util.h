/* Shared pieces of the loaders (src/load_*.c): opening a file, typed binary
 * values converted straight into the final double array, and a row sink that
 * grows the array, refuses or drops rows with NaN/Inf and remembers where the
 * first one was. Internal to the loaders; not part of the public interface. */
#ifndef TCJ_LOAD_UTIL_H
#define TCJ_LOAD_UTIL_H

#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include <time.h>

#include "dataset.h"
#include "load_types.h"

/* Read cnt values of type from f at its current position into dst, in
 * chunks. byte is the file offset of the first value, for the message. */
int ld_read_values(FILE *f, const char *path, int type, int be, size_t cnt, double *dst,
                   uint64_t byte);

/* What a file was when its load began: a file that changes while it is
 * read (truncated, emptied, grown, rewritten) would give part of one
 * version and part of another, so it is refused. Only regular files:
 * pipes, FIFOs and devices have no size to compare. */
typedef struct ld_stamp {
    int regular;
    uint64_t size;
    struct timespec mtime;
    dev_t dev;
    ino_t ino;
} ld_stamp;

/* Open for reading; *size gets the file size and *stamp (may be NULL)
 * what ld_unchanged compares against. Errors name the path. */
FILE *ld_open(const char *path, uint64_t *size, ld_stamp *stamp);
/* After the last read: rc when the file is as *before says (f's open file,
 * else what path names now; a cancel is kept as it is), else TCJ_EIO
 * "FILE: changed while it was read (size A -> B bytes); load it again",
 * which replaces rc (a change explains the errors it causes). */
int ld_unchanged(FILE *f, const char *path, const ld_stamp *before, int rc);
/* Tests only: fn(ctx) runs once, as the next load keeps its first row, so
 * a test can change the file in the middle of a load. */
void ld_row_hook_for_tests(void (*fn)(void *ctx), void *ctx);
/* fseeko with an error naming the path. */
int ld_seek(FILE *f, const char *path, uint64_t byte);

/* Number of records to read after skipping opt->offset of total. */
size_t ld_take(const load_opts *opt, size_t total);

/* ---- sizes from headers and options: every loader checks them here ----
 * A header field (or an option) that gives a count is untrusted: these
 * refuse zero, 64-bit wrap-around, sizes the file cannot hold and sizes
 * memory cannot hold, each with one line naming the file, the field and the
 * byte offset of the field. All return 0 or TCJ_EINVAL / TCJ_ENOMEM. */

/* *out = a * b, or an error "FILE: byte B: FIELD: A x B overflows". */
int ld_mul(const char *path, const char *field, uint64_t byte, uint64_t a, uint64_t b,
           uint64_t *out);
/* A header gives n points of d values of es bytes each, stored from file
 * byte data of a file holding have bytes from there. Refuses d = 0, n = 0,
 * n·d·es wrapping and n·d·es > have; *bytes gets n·d·es. */
int ld_check_dims(const char *path, const char *field, uint64_t byte, uint64_t n, uint64_t d,
                  size_t es, uint64_t data, uint64_t have, uint64_t *bytes);
/* Points to read of total after offset/limit; refuses none left and take·d
 * values of the type the loader keeps (keep, ld_keep_type) beyond
 * available memory (ld_mem_check). */
int ld_check_take(const char *path, const load_opts *opt, uint64_t total, uint64_t d, dtype_id keep,
                  size_t *take);

/* Bytes of memory this process can still get: MemAvailable from
 * /proc/meminfo (else sysconf), capped by a cgroup limit; UINT64_MAX when
 * unknown. */
uint64_t ld_mem_available(void);
/* Tests only: cap what ld_mem_available reports at bytes (0: no cap), so a
 * refusal for size can be tested without a machine that size. */
void ld_mem_cap_for_tests(uint64_t bytes);
/* Refuse n x d values of type t (its bytes each, as the dataset keeps
 * them) plus extra bytes beyond available memory: "WHAT: needs 17.2 GB of
 * memory for N x D f16 values; 2.1 GB available". what is a file name or a
 * command. TCJ_ENOMEM. */
int ld_mem_check(const char *what, uint64_t n, uint64_t d, dtype_id t, uint64_t extra);
/* Text from a file or an option for an error line: at most max bytes of s,
 * control characters as \xNN so the message stays one line. Returns one of
 * 4 rotating thread-local buffers (several may appear in one err_set). */
const char *ld_esc(const char *s, size_t max);
/* TCJ_ECANCEL "load FILE: cancelled" once *cancel is set (Ctrl-C), else 0. */
int ld_cancel_check(const volatile int *cancel, const char *path);

/* The element type a dataset read from values of type is kept in: the
 * narrowest of src/dtype.h's types that holds every value of type exactly
 * (u8, f16, f32, f64 as they are; i8 in f16; u16, i16 in f32; wider
 * integers in f64, as before). */
dtype_id ld_keep_type(int type);

/* A growing array of rows of d values, kept in an element type (the file's
 * own, ld_keep_type); each row is filled as FP64 in a row buffer and
 * stored when committed. */
typedef struct ld_sink {
    const char *path;
    size_t d;
    const dtype *t;             /* element type of x */
    char *x;                    /* rows of d values of t */
    double *row;                /* the row being filled (ld_row), d doubles */
    size_t n, cap;              /* rows kept, rows allocated */
    int drop;                   /* drop rows with NaN/Inf instead of refusing */
    const volatile int *cancel; /* load_opts.cancel: ld_row stops on Ctrl-C */
    size_t bad_values, bad_rows;
    int row_bad;     /* ld_note_bad called for the row being filled */
    char first[160]; /* where the first NaN/Inf is */
} ld_sink;

/* cap rows of d values of type t, already checked by ld_check_take (cap
 * >= 1); drop and cancel come from opt. TCJ_ENOMEM with the line set when
 * the array or the FP64 row buffer cannot be had (src/mem.h); nothing to
 * free then. */
int ld_sink_init(ld_sink *s, const char *path, size_t d, size_t cap, const load_opts *opt,
                 dtype_id t);
/* The same without the FP64 row buffer, for a loader that writes rows in
 * t straight into s->x (ld_commit_stored); ld_row and the commits of FP64
 * rows are not for such a sink. */
int ld_sink_init_stored(ld_sink *s, const char *path, size_t d, size_t cap, const load_opts *opt,
                        dtype_id t);
/* *row = the row buffer (d doubles) for the next row, the array grown
 * within available memory for it; TCJ_ECANCEL on Ctrl-C, TCJ_ENOMEM when
 * memory would run out. */
int ld_row(ld_sink *s, double **row);
/* Text loaders: a NaN/Inf was parsed into the current row at this position. */
void ld_note_bad(ld_sink *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Keep the row returned by ld_row unless ld_note_bad flagged it and rows are dropped. */
void ld_commit(ld_sink *s);
/* Binary loaders: check the row at `row` (ld_row's pointer, or any other
 * d doubles), keep (store in the next free slot) or drop it. Value j of the
 * row lies at file byte base + j*stride; base UINT64_MAX when bytes are
 * unknown. */
void ld_commit_point(ld_sink *s, const double *row, size_t point, uint64_t base, uint64_t stride);
/* A row already written in t at row slot (s->n <= slot < s->cap) of s->x:
 * checked for NaN/Inf ("point P value J"), then kept (moved down to slot
 * s->n) or dropped. Slots are committed in increasing order. */
void ld_commit_stored(ld_sink *s, size_t slot, size_t point);
/* Refuse NaN/Inf (the count and the first position), else hand the array to
 * out (n, d, type, v). Frees on error. */
int ld_finish(ld_sink *s, dataset *out);
void ld_sink_free(ld_sink *s);

/* The loaders and probes behind loader_table (src/load_table.c). */
int load_fvecs(const char *path, const load_opts *opt, dataset *out);
int load_bvecs(const char *path, const load_opts *opt, dataset *out);
int load_ivecs(const char *path, const load_opts *opt, dataset *out);
int load_npy(const char *path, const load_opts *opt, dataset *out);
int load_text(const char *path, const load_opts *opt, dataset *out);
int load_hdf5(const char *path, const load_opts *opt, dataset *out);
int load_raw(const char *path, const load_opts *opt, dataset *out);
int load_idx(const char *path, const load_opts *opt, dataset *out);
int npy_probe(const unsigned char *head, size_t len);
int text_probe(const unsigned char *head, size_t len);
int hdf5_probe(const unsigned char *head, size_t len);
/* What load_hdf5's child process does: read path with libhdf5 and write
 * the shape, then pieces of rows in the kept type, or an error, to fd (see
 * src/load_hdf5.c). In-process only for tests/fuzz/fuzz_hdf5_child.c. */
int load_hdf5_child(const char *path, const load_opts *opt, int fd);
/* What load_hdf5's parent does with that stream, read from fd: check it
 * and fill out. Returns 0, an error with one line set, or 1 when the
 * stream ends early or fails, with no line set (load_hdf5 then says how
 * the child died). In-process only for tests/fuzz/fuzz_hdf5_pipe.c. */
int load_hdf5_parent(const char *path, const load_opts *opt, int fd, dataset *out);
int idx_probe(const unsigned char *head, size_t len);

#endif
