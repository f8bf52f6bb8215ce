/* A dataset: |D| points of dimension d, row-major, in host memory, kept in
 * the element type it was loaded in (u8, f16, f32, f64: src/dtype.h).
 * Original values are kept; each engine converts blocks of rows to its own
 * precision (dataset_rows_f64), so no FP64 copy of the whole dataset is
 * made unless the data are FP64. */
#ifndef TCJ_DATASET_H
#define TCJ_DATASET_H

#include <stddef.h>
#include <stdint.h>

#include "dtype.h"

typedef struct dataset {
    char *name;   /* short display name: file basename or generator spec */
    char *path;   /* absolute source path, NULL for generated data */
    char *format; /* loader or generator name: "fvecs", "npy", "csv", "synth", ... */
    size_t n, d;
    dtype_id type; /* element type of v (0: f64) */
    void *v;       /* n*d values of type, row i at byte i*d*bytes; owned */
    uint64_t hash; /* content hash of n, d and the values as FP64 (dataset_hash) */
    /* The hash of its rows as a set, whatever their order: a reordered
     * copy's (src/dataset_order.h) is its source's; 0: hash. */
    uint64_t set_hash;
} dataset;

static inline uint64_t dataset_set_hash(const dataset *ds)
{
    return ds->set_hash ? ds->set_hash : ds->hash;
}

/* What a cache of one fact per dataset compares (src/center_exact.c,
 * src/int8_plan.c, src/exact_predict.c, src/sweep.c): the rows as a set
 * (dataset_set_hash), n and d, so a reordered copy of the rows finds its
 * source's facts (a k-distance's refinement and the curve's later joins
 * run over such copies). Facts kept this way are the set's, or a sample's
 * that stands for the set (the centring and path decisions). */
typedef struct dataset_key {
    uint64_t hash;
    size_t n, d;
} dataset_key;

static inline dataset_key dataset_key_of(const dataset *ds)
{
    dataset_key k = {dataset_set_hash(ds), ds->n, ds->d};
    return k;
}

static inline int dataset_key_is(const dataset_key *k, const dataset *ds)
{
    return k->hash == dataset_set_hash(ds) && k->n == ds->n && k->d == ds->d;
}

/* Values per block for whole-dataset scans: 64 KB of FP64. */
#define DATASET_BLOCK_VALUES 8192

static inline const dtype *dataset_dtype(const dataset *ds)
{
    return dtype_get(ds->type);
}
/* Bytes of the values as kept: n * d * the type's bytes. */
size_t dataset_bytes(const dataset *ds);
/* Rows [i0, i0 + count) widened to FP64 into dst (count * d values). */
void dataset_rows_f64(const dataset *ds, size_t i0, size_t count, double *dst);
/* Values [k0, k0 + m) in row-major order widened to FP64 into dst. */
void dataset_values_f64(const dataset *ds, size_t k0, size_t m, double *dst);
/* Row i as FP64: a pointer into v for FP64 data, else buf (d values)
 * filled and returned. */
const double *dataset_row_f64(const dataset *ds, size_t i, double *buf);
/* Value k (row k / d, column k % d) as FP64; for messages and samples, not
 * for scans. */
double dataset_value(const dataset *ds, size_t k);
/* Rows per block of a scan (at least 1): DATASET_BLOCK_VALUES / d. */
size_t dataset_block_rows(const dataset *ds);
/* Fill ds (name, path and format untouched) with n x d values x stored in
 * type t (each rounded to t: exact for values t holds) and their hash. */
void dataset_set_f64(dataset *ds, const double *x, size_t n, size_t d, dtype_id t);

/* How to read a file. load_opts_init (or a NULL opts to dataset_load) means
 * detect everything; note header is -1 for detection, so a plain {0} reads
 * text without a header line. */
typedef struct load_opts {
    const char *format;         /* force a loader by name, NULL to detect */
    size_t offset;              /* skip this many points */
    size_t limit;               /* take at most this many points, 0 = all */
    const char *cols;           /* delimited text: columns to keep, "1-16", "0,2,5", "-id" ... */
    int header;                 /* delimited text: -1 detect, 0 no, 1 yes */
    char delim;                 /* delimited text: 0 detect, else ',' '\t' ' ' ... */
    const char *dtype;          /* raw binary: "f32", "f64", "f16", "u8", "i32", ... */
    size_t dim;                 /* raw binary: values per point */
    const char *h5name;         /* HDF5: dataset name, default "train" */
    int drop_nonfinite;         /* drop rows with NaN/Inf instead of refusing the file */
    const volatile int *cancel; /* set (by Ctrl-C) to stop reading: TCJ_ECANCEL; may be NULL */
} load_opts;

/* A kind's parameter as given: key=value, read against the kind's row
 * when the dataset is generated (src/gen.h). */
typedef struct gen_opt {
    const char *key; /* the parameter's name, from the generator table */
    const char *val; /* the caller's text: must outlive the options */
} gen_opt;

#define GEN_OPTS_MAX 8 /* distinct parameters given at once */

/* Parameters of a generated dataset. */
typedef struct gen_opts {
    const char *kind; /* a row of the generator table: "uniform", "expo", "gauss", ... */
    size_t n, d;
    uint64_t seed;
    dtype_id dtype;            /* values rounded to and kept in: f32 (default) or f64 */
    gen_opt opt[GEN_OPTS_MAX]; /* the kind's parameters given (gen_opts_set); the rest
                                * take the row's defaults */
    int nopt;
    const volatile int *cancel; /* set (by Ctrl-C) to stop: TCJ_ECANCEL; may be NULL */
} gen_opts;

/* Facts reported by `info`. */
typedef struct dataset_info {
    double min, max;       /* over all values */
    double absmax;         /* largest |v| */
    size_t fp16_overflow;  /* values with |v| > 65504 (become Inf in FP16) */
    size_t fp16_underflow; /* nonzero values with |v| < 2^-24 (flush to 0) */
    size_t fp16_subnormal; /* nonzero values with 2^-24 <= |v| < 2^-14 */
    size_t duplicates;     /* points equal to an earlier point */
    double max_norm2;      /* largest squared norm, against FP32/FP16 range */
} dataset_info;

/* Load a file; on success *out owns its memory. Returns 0 or a TCJ_E* code
 * with err_msg() naming the file and the line or byte offset: TCJ_EINVAL for
 * bad contents (sizes checked before any allocation), TCJ_ENOMEM when the
 * points need more memory than is available (the message says how much),
 * TCJ_ECANCEL when opt->cancel was set. HDF5 is read by a child process, so
 * a crash inside libhdf5 becomes an error naming the file. */
int dataset_load(const char *path, const load_opts *opt, dataset *out);
/* Generate a dataset; the same options give the same values on any machine.
 * TCJ_EINVAL for an unknown kind, a parameter the kind does not take or a
 * bad value (one line), TCJ_ENOMEM (naming the command and the size) when
 * it would not fit in available memory, TCJ_ECANCEL when opt->cancel was
 * set. */
int dataset_generate(const gen_opts *opt, dataset *out);
/* 0, or TCJ_ENOMEM with the line set when two rows widened to FP64 do not
 * fit in memory (src/mem.h). */
int dataset_info_compute(const dataset *ds, dataset_info *info);
uint64_t dataset_hash(const dataset *ds);
/* dataset_hash that stops with TCJ_ECANCEL when *cancel is set (NULL: never). */
int dataset_hash_checked(const dataset *ds, const volatile int *cancel, uint64_t *out);
/* dataset_hash_checked that also gives, in the same pass, the index of the
 * first value that is not finite (n * d: none): for callers that take
 * values unchecked (libtcjoin's wrapped arrays). */
int dataset_hash_scan(const dataset *ds, const volatile int *cancel, uint64_t *out,
                      size_t *nonfinite);
/* The same pass without the hash: *first the index of the first value
 * that is not finite (n * d: none); TCJ_ECANCEL when *cancel is set. */
int dataset_nonfinite(const dataset *ds, const volatile int *cancel, size_t *first);
void dataset_free(dataset *ds);

/* Loader table: one row per format, one file per loader (src/load_*.c). */
typedef struct loader {
    const char *name;       /* format name used in load format=NAME */
    const char *extensions; /* space-separated, e.g. ".fvecs .fvec" */
    const char *help;
    /* Return 1 if the first bytes look like this format (used when the
     * extension says nothing). May be NULL. */
    int (*probe)(const unsigned char *head, size_t len);
    /* Read the file; fill n, d, type, v. offset/limit are applied by the loader
     * so large files are read without two copies. */
    int (*load)(const char *path, const load_opts *opt, dataset *out);
} loader;

extern const loader *const loader_table[]; /* NULL-terminated */
const loader *loader_find(const char *name);

/* The key=value words of `load` and of a generated dataset, parsed in one
 * place so the command, its completion and the man page agree. String values
 * are kept as pointers: val must outlive the options. Returns 0, or
 * TCJ_EINVAL with err_msg naming the key and what was expected.
 *   load:  format=NAME offset=N limit=N cols=SPEC header=auto|yes|no|1|0
 *          delim=,|tab|space|;|CHAR dtype=T dim=N dataset=NAME (alias h5name=) drop-nonfinite=0|1
 *   gen:   kind=KIND n=N d=N seed=N dtype=f32|f64 and the kind's own (lambda=X
 *          clusters=N sigma=X halos=H alpha=A noise=F radius=R; src/gen_table.c) */
/* A whole number as the command line reads one: 1e6, 2.5e5, 100k, 2M and
 * 1.5G name the integers they say; 0, or TCJ_EINVAL with "KEY: expected a
 * non-negative integer, got 'VAL'" (`gen`'s words and cmd_parse_size). */
int dataset_parse_count(const char *key, const char *val, size_t *out);
void load_opts_init(load_opts *o); /* all zero, header -1 (detect) */
int load_opts_set(load_opts *o, const char *key, const char *val);
extern const char *const load_opt_names[]; /* NULL-terminated keys */
/* All zero, kind uniform, dtype f32; a kind's parameters take its row's
 * defaults (src/gen_table.c). gen_opts_set reads kind, n, d, seed and
 * dtype, and keeps any other key some kind takes (its value checked
 * against that kind's row); a key no kind takes is refused. */
void gen_opts_init(gen_opts *o);
int gen_opts_set(gen_opts *o, const char *key, const char *val);
extern const char *const gen_opt_names[]; /* NULL-terminated: kind first, then n d seed,
                                           * every kind's parameters and dtype
                                           * (src/gen_table.c) */

#endif
