/* Raw binary: n*dim values of one type, no header (KITTI Velodyne scans are
 * f32 with dim=4: x, y, z, reflectance). load_opts.dtype is one of f16 f32
 * f64 u8 i8 u16 i16 u32 i32 u64 i64, little-endian unless suffixed "be";
 * a file named *.f32, *.f64, *.u8, ... gives the dtype itself. dim is
 * required. */
#include <string.h>

#include "err.h"
#include "load_util.h"

/* dtype from a name ending in ".f32" and the like, -1 if none. */
static int raw_type_from_name(const char *path, int *be)
{
    const char *dot = strrchr(path, '.');
    return dot && !strchr(dot, '/') ? ld_type_parse(dot + 1, be) : -1;
}

int load_raw(const char *path, const load_opts *opt, dataset *out)
{
    int be = 0, type;
    if (opt->dtype) {
        type = ld_type_parse(opt->dtype, &be);
        if (type < 0)
            return err_set(TCJ_EINVAL,
                           "%s: unknown dtype '%s' (f16 f32 f64 u8 i8 u16 i16 u32 "
                           "i32 u64 i64, add 'be' for big-endian)",
                           path, ld_esc(opt->dtype, 20));
    } else if ((type = raw_type_from_name(path, &be)) < 0)
        return err_set(TCJ_EINVAL,
                       "%s: raw binary needs dtype=T (f16 f32 f64 u8 i8 u16 i16 u32 "
                       "i32 u64 i64) and dim=N",
                       path);
    if (!opt->dim)
        return err_set(TCJ_EINVAL, "%s: raw binary needs dim=N, the number of %s values per point",
                       path, ld_type_name(type));
    uint64_t size;
    ld_stamp stamp;
    FILE *f = ld_open(path, &size, &stamp);
    if (!f)
        return TCJ_EIO;
    size_t d = opt->dim, es = ld_type_size(type);
    if (size == 0) {
        fclose(f);
        return err_set(TCJ_EINVAL, "%s: empty file, no points", path);
    }
    /* one point must fit: dim=2^62 would wrap d*es to 0 */
    uint64_t rec;
    int rc = ld_check_dims(path, "option dim", UINT64_MAX, 1, d, es, 0, size, &rec);
    if (!rc && size % rec)
        rc = err_set(TCJ_EINVAL,
                     "%s: %llu bytes is not a whole number of points of %zu %s "
                     "(%llu bytes each): %llu trailing bytes from byte %llu",
                     path, (unsigned long long)size, d, ld_type_name(type), (unsigned long long)rec,
                     (unsigned long long)(size % rec), (unsigned long long)(size - size % rec));
    size_t take = 0;
    if (!rc)
        rc = ld_check_take(path, opt, size / rec, d, ld_keep_type(type), &take);
    if (rc) {
        fclose(f);
        return rc;
    }
    ld_sink s;
    if ((rc = ld_sink_init(&s, path, d, take, opt, ld_keep_type(type))) != 0) {
        fclose(f);
        return rc;
    }
    rc = ld_seek(f, path, (uint64_t)opt->offset * rec);
    for (size_t k = 0; k < take && !rc; k++) {
        size_t r = opt->offset + k;
        double *row;
        if ((rc = ld_row(&s, &row)) != 0)
            break;
        rc = ld_read_values(f, path, type, be, d, row, r * rec);
        if (!rc)
            ld_commit_point(&s, row, r, r * rec, es);
    }
    rc = ld_unchanged(f, path, &stamp, rc);
    fclose(f);
    if (rc) {
        ld_sink_free(&s);
        return rc;
    }
    return ld_finish(&s, out);
}
