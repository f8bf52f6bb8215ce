/* The teaching ladder's kernel sources, embedded at build time
 * (scripts/gen_ladder_src.sh) for `ladder source`, `ladder diff` and
 * `ladder why`, with or without CUDA. */
#ifndef TCJ_LADDER_SRC_H
#define TCJ_LADDER_SRC_H

typedef struct ladder_src_file {
    const char *path; /* "kernels/ladder/r07_swizzle.cu" */
    const char *text; /* the whole file */
} ladder_src_file;

extern const ladder_src_file ladder_src_files[]; /* terminated by a NULL path */

/* The embedded text of path, or NULL. */
const char *ladder_src_find(const char *path);

#endif
