/* Shared pieces of the loaders (src/load_*.c): opening a file, typed binary
 * values converted straight into the final double array, and a row sink that
 * grows the array, refuses or drops rows with NaN/Inf and remembers where the
 * first one was. Internal to the loaders; not part of the public interface. */
#ifndef TCJ_LOAD_UTIL_H
#define TCJ_LOAD_UTIL_H

#include <stdint.h>
#include <stdio.h>

#include "dataset.h"

/* Element types of binary formats. */
enum ld_type {
    LD_U8,
    LD_I8,
    LD_U16,
    LD_I16,
    LD_U32,
    LD_I32,
    LD_U64,
    LD_I64,
    LD_F16,
    LD_F32,
    LD_F64
};

size_t ld_type_size(int type);
const char *ld_type_name(int type); /* "u8", "f32", ... */
/* Parse "f32", "f32be", "u8", ...; returns the type or -1. *be set to 1 for a
 * "be" suffix, 0 otherwise ("le" suffix accepted). */
int ld_type_parse(const char *s, int *be);
/* Convert cnt packed values at src to doubles. */
void ld_convert(int type, int be, const unsigned char *src, size_t cnt, double *dst);
/* Read cnt values of type from f at its current position into dst, in
 * chunks. byte is the file offset of the first value, for the message. */
int ld_read_values(FILE *f, const char *path, int type, int be, size_t cnt, double *dst,
                   uint64_t byte);

/* Open for reading; *size gets the file size. Errors name the path. */
FILE *ld_open(const char *path, uint64_t *size);
/* fseeko with an error naming the path. */
int ld_seek(FILE *f, const char *path, uint64_t byte);

/* Number of records to read after skipping opt->offset of total. */
size_t ld_take(const load_opts *opt, size_t total);

/* A growing array of rows of d doubles. */
typedef struct ld_sink {
    const char *path;
    size_t d;
    double *x;
    size_t n, cap; /* rows kept, rows allocated */
    int drop;      /* drop rows with NaN/Inf instead of refusing */
    size_t bad_values, bad_rows;
    int row_bad;     /* ld_note_bad called for the row being filled */
    char first[160]; /* where the first NaN/Inf is */
} ld_sink;

void ld_sink_init(ld_sink *s, const char *path, size_t d, size_t cap, int drop);
/* Storage for the next row (grows the array). */
double *ld_row(ld_sink *s);
/* Text loaders: a NaN/Inf was parsed into the current row at this position. */
void ld_note_bad(ld_sink *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Keep the row returned by ld_row unless ld_note_bad flagged it and rows are dropped. */
void ld_commit(ld_sink *s);
/* Binary loaders: check the row at `row` (ld_row's pointer, or any row of the
 * array at or after the next free slot), keep or drop it. Value j of the row
 * lies at file byte base + j*stride; base UINT64_MAX when bytes are unknown. */
void ld_commit_point(ld_sink *s, const double *row, size_t point, uint64_t base, uint64_t stride);
/* Refuse NaN/Inf (the count and the first position), else hand the array to
 * out (n, d, x). Frees on error. */
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
int idx_probe(const unsigned char *head, size_t len);

#endif
