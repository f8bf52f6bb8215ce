/* A grid index for the CPU engines on low-dimensional data: cells of side
 * a hair over the join radius over the k highest-variance dimensions (as
 * ted-index does on the GPU), rows sorted by cell, and for each cell the
 * candidate rows of its 3^k neighbour cells as a few ranges of positions.
 * A pair within the radius differs by at most one cell along every indexed
 * dimension, so the candidates of a cell hold every partner of its rows:
 * the join over the ranges equals the brute-force one. */
#ifndef TCJ_CPU_GRID_H
#define TCJ_CPU_GRID_H

#include <stddef.h>
#include <stdint.h>

#include "dataset.h"

#define CPU_GRID_MAXK 8 /* 3^8 neighbour cells at most */

typedef struct cpu_grid {
    size_t n, d;
    int k;                           /* dimensions indexed (0: no index) */
    int dim[CPU_GRID_MAXK];          /* which, largest variance first */
    double lo[CPU_GRID_MAXK];        /* smallest coordinate along dim[j] */
    double side[CPU_GRID_MAXK];      /* cell side along dim[j] (>= the radius) */
    long long cnt[CPU_GRID_MAXK];    /* cells along dim[j] */
    long long stride[CPU_GRID_MAXK]; /* key = sum idx_j * stride_j */
    uint32_t *order;                 /* position -> row, n entries, by cell */
    size_t ncell;                    /* non-empty cells */
    long long *key;                  /* their keys, ascending */
    size_t *start;                   /* cell c holds positions [start[c], start[c+1]) */
    size_t max_ranges;               /* most candidate ranges of one cell */
    /* Estimated work in candidate lanes, each candidate range charged a
     * fixed overhead (CPU_GRID_RANGE_COST lanes), against brute force's
     * n * (n rounded up to a group). */
    double cost, cost_brute;
} cpu_grid;

/* Lanes one candidate range costs beyond its rows (a prepare, a call, a
 * partial group): measured on 3-D data, where a lane is a few flops. */
#define CPU_GRID_RANGE_COST 24.0

/* Build the index of ds's rows (read widened to FP64) for pairs within
 * radius r (per coordinate |a_j - b_j| <= r), over at most kmax dimensions:
 * each k from 1 up is tried and the cheapest estimate kept. g->k == 0 when
 * no dimension can be indexed (radius not finite or not positive, a
 * dimension's range not finite, n < 2). Returns 0, or TCJ_ENOMEM with
 * one line (g->k == 0) when its arrays do not fit (src/mem.h); frees
 * nothing of g. */
int cpu_grid_build(const dataset *ds, double r, int kmax, cpu_grid *g);
/* Bytes a row the build holds at its peak (what it checks, src/mem.h). */
uint64_t cpu_grid_row_bytes(void);
/* 1 when the index is estimated to cost at most half of brute force. */
int cpu_grid_prunes(const cpu_grid *g);
/* The candidate ranges of cell c: up to g->max_ranges [begin, end) pairs
 * of positions into rng, ascending and not touching; returns how many. */
size_t cpu_grid_ranges(const cpu_grid *g, size_t c, size_t (*rng)[2]);
/* Rows of src (n rows of row_bytes) into dst in cell order. */
void cpu_grid_gather(const cpu_grid *g, const void *src, size_t row_bytes, void *dst);
void cpu_grid_free(cpu_grid *g);

#endif
