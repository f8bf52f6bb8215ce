/* ann-benchmarks HDF5 files through libhdf5: a 2-D float, double or integer
 * dataset ("train" unless load_opts.h5name names another, e.g. "test"); a
 * 1-D one loads as n x 1. HDF5 converts to double while reading, in blocks
 * of rows, straight into the final array. */
#include <hdf5.h>
#include <string.h>

#include "err.h"
#include "load_util.h"

int hdf5_probe(const unsigned char *head, size_t len)
{
    return len >= 8 && !memcmp(head, "\x89HDF\r\n\x1a\n", 8);
}

typedef struct h5_names {
    char buf[512];
    size_t len;
} h5_names;

/* The link-iteration API was versioned in HDF5 1.12. */
#if H5_VERSION_GE(1, 12, 0)
typedef H5L_info2_t h5_link_info;
#define h5_iterate H5Literate2
#else
typedef H5L_info_t h5_link_info;
#define h5_iterate H5Literate
#endif

static herr_t h5_collect(hid_t g, const char *name, const h5_link_info *info, void *data)
{
    h5_names *nm = data;
    int k =
        snprintf(nm->buf + nm->len, sizeof nm->buf - nm->len, "%s%s", nm->len ? ", " : "", name);
    if (k > 0 && nm->len + (size_t)k < sizeof nm->buf)
        nm->len += (size_t)k;
    return 0;
}

int load_hdf5(const char *path, const load_opts *opt, dataset *out)
{
    const char *name = opt->h5name && *opt->h5name ? opt->h5name : "train";
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    uint64_t size;
    FILE *probe = ld_open(path, &size);
    if (!probe)
        return TCJ_EIO;
    fclose(probe);
    if (size == 0)
        return err_set(TCJ_EINVAL, "%s: empty file, no points", path);
    hid_t file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (file < 0)
        return err_set(TCJ_EINVAL, "%s: not a readable HDF5 file", path);
    int rc = 0;
    hid_t dset = -1, space = -1, mspace = -1, dtype = -1;
    if (H5Lexists(file, name, H5P_DEFAULT) <= 0) {
        h5_names nm = {.len = 0};
        nm.buf[0] = 0;
        h5_iterate(file, H5_INDEX_NAME, H5_ITER_INC, NULL, h5_collect, &nm);
        rc = err_set(TCJ_EINVAL,
                     "%s: no dataset '%s' (the file has: %s); choose one with "
                     "dataset=NAME",
                     path, name, nm.len ? nm.buf : "nothing");
        goto done;
    }
    dset = H5Dopen2(file, name, H5P_DEFAULT);
    if (dset < 0) {
        rc = err_set(TCJ_EINVAL, "%s: '%s' is not a dataset", path, name);
        goto done;
    }
    dtype = H5Dget_type(dset);
    H5T_class_t cls = H5Tget_class(dtype);
    if (cls != H5T_FLOAT && cls != H5T_INTEGER) {
        rc = err_set(TCJ_EINVAL, "%s: dataset '%s' is not numeric (float or integer)", path, name);
        goto done;
    }
    space = H5Dget_space(dset);
    int rank = H5Sget_simple_extent_ndims(space);
    hsize_t dims[2] = {0, 1};
    if (rank < 1 || rank > 2) {
        rc = err_set(TCJ_EINVAL, "%s: dataset '%s' has %d dimensions, expected 2 (n x d)", path,
                     name, rank);
        goto done;
    }
    H5Sget_simple_extent_dims(space, dims, NULL);
    size_t n = (size_t)dims[0], d = rank == 2 ? (size_t)dims[1] : 1;
    size_t take = ld_take(opt, n);
    ld_sink s;
    ld_sink_init(&s, path, d, take, opt->drop_nonfinite);
    /* blocks of about 4 MiB of doubles */
    size_t block = d ? (size_t)(1 << 19) / d + 1 : take;
    for (size_t k = 0; k < take && !rc && d; k += block) {
        size_t m = take - k < block ? take - k : block;
        hsize_t start[2] = {opt->offset + k, 0}, count[2] = {m, d};
        hsize_t mdims[2] = {m, d};
        H5Sselect_hyperslab(space, H5S_SELECT_SET, start, NULL, count, NULL);
        mspace = H5Screate_simple(rank, mdims, NULL);
        if (H5Dread(dset, H5T_NATIVE_DOUBLE, mspace, space, H5P_DEFAULT, s.x + k * d) < 0)
            rc = err_set(TCJ_EIO, "%s: reading rows %zu to %zu of '%s' failed", path,
                         opt->offset + k, opt->offset + k + m, name);
        H5Sclose(mspace);
        mspace = -1;
    }
    for (size_t i = 0; i < take && !rc; i++)
        ld_commit_point(&s, s.x + i * d, opt->offset + i, UINT64_MAX, 0);
    if (rc)
        ld_sink_free(&s);
    else
        rc = ld_finish(&s, out);
done:
    if (space >= 0)
        H5Sclose(space);
    if (dtype >= 0)
        H5Tclose(dtype);
    if (dset >= 0)
        H5Dclose(dset);
    H5Fclose(file);
    return rc;
}
