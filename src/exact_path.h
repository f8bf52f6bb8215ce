/* `set exact-path auto|pass|grid|clusters|tiles`: how the `exact` engine
 * computes a join (src/engine_exact.c). pass: FASTED's FP16 pass with the
 * band refined in FP64; grid: the FP64 grid join (kernels/fp64_grid.cu);
 * clusters: the pass over the rows clustered, each group of clusters not
 * proved farther apart than eps joined alone and centred on its own origin
 * (kernels.h, kern_cluster_run; a smaller band and less pair work on
 * clustered rows); tiles: the pass over the rows in a k-d order, only the
 * pairs of 256-row blocks whose bounding boxes are within eps joined
 * (kernels.h, kern_tiles_run; d from 4 to 16, where the rows spread over
 * few dimensions against eps); auto: the grid where the data are
 * low-dimensional and the predicted band is large (exact_path_choose,
 * src/exact_predict.h), else at d <= 16 the tiles where the run joins at
 * most 60% of the block pairs, else the clusters where the run joins at
 * most half the pairs, else the pass. All give fp64's results; the
 * setting lives in engine_opts.exact_path. */
#ifndef TCJ_EXACT_PATH_H
#define TCJ_EXACT_PATH_H

#include <stddef.h>

enum {
    EXACT_PATH_AUTO = 0,
    EXACT_PATH_PASS = 1,
    EXACT_PATH_GRID = 2,
    EXACT_PATH_CLUSTERS = 3,
    EXACT_PATH_TILES = 4
};

/* "auto", "pass", "grid", "clusters", "tiles" ("?" for anything else). */
const char *exact_path_name(int path);
/* The path a name gives into *path; a bad name leaves *path as it was
 * and err_msg one line naming the values expected. (The settings row is
 * src/cli/settings.c's.) */
int exact_path_parse(const char *name, int *path);

#endif
