/* TEXMEX fvecs / bvecs / ivecs (the SIFT/GIST corpus format): each record
 * is a little-endian int32 d followed by d values (float32, uint8, int32).
 * Every record must carry the same d. */
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "load_util.h"

static int vecs_load(const char *path, const load_opts *opt, dataset *out, int type)
{
    uint64_t size;
    ld_stamp stamp;
    FILE *f = ld_open(path, &size, &stamp);
    if (!f)
        return TCJ_EIO;
    unsigned char hb[4];
    if (size == 0) {
        fclose(f);
        return err_set(TCJ_EINVAL, "%s: empty file, no points", path);
    }
    if (fread(hb, 1, 4, f) != 4) {
        fclose(f);
        return err_set(TCJ_EINVAL, "%s: byte 0: file ends inside the first record's dimension",
                       path);
    }
    int32_t d0 = (int32_t)(hb[0] | hb[1] << 8 | hb[2] << 16 | (uint32_t)hb[3] << 24);
    if (d0 <= 0 || d0 > (1 << 24)) {
        fclose(f);
        return err_set(TCJ_EINVAL, "%s: byte 0: record 0 has d=%d, expected 1 to %d", path, (int)d0,
                       1 << 24);
    }
    size_t d = (size_t)d0, es = ld_type_size(type);
    /* at least one whole record must fit: a d of 2^24 in a 100-byte file is
     * refused here, before a buffer is sized from it */
    int rc = ld_check_dims(path, "record 0's d", 0, 1, d, es, 4, size - 4, NULL);
    uint64_t rec = 4 + (uint64_t)d * es;
    size_t take = 0;
    if (!rc)
        rc = ld_check_take(path, opt, (size + rec - 1) / rec, d, ld_keep_type(type), &take);
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
        uint64_t at = (uint64_t)r * rec;
        size_t got = fread(hb, 1, 4, f);
        if (got != 4) {
            rc = err_set(
                TCJ_EINVAL,
                "%s: byte %llu: record %zu is truncated (file ends after %zu of 4 bytes of its d)",
                path, (unsigned long long)at, r, got);
            break;
        }
        int32_t dr = (int32_t)(hb[0] | hb[1] << 8 | hb[2] << 16 | (uint32_t)hb[3] << 24);
        if (dr != d0) {
            rc = err_set(TCJ_EINVAL, "%s: byte %llu: record %zu has d=%d, expected %d", path,
                         (unsigned long long)at, r, (int)dr, (int)d0);
            break;
        }
        if (size - at < rec) {
            rc = err_set(TCJ_EINVAL,
                         "%s: byte %llu: record %zu is truncated: %llu of %llu bytes present", path,
                         (unsigned long long)at, r, (unsigned long long)(size - at),
                         (unsigned long long)rec);
            break;
        }
        double *row;
        if ((rc = ld_row(&s, &row)) != 0)
            break;
        rc = ld_read_values(f, path, type, 0, d, row, at + 4);
        if (!rc)
            ld_commit_point(&s, row, r, at + 4, es);
    }
    rc = ld_unchanged(f, path, &stamp, rc);
    fclose(f);
    if (rc) {
        ld_sink_free(&s);
        return rc;
    }
    return ld_finish(&s, out);
}

int load_fvecs(const char *path, const load_opts *opt, dataset *out)
{
    return vecs_load(path, opt, out, LD_F32);
}

int load_bvecs(const char *path, const load_opts *opt, dataset *out)
{
    return vecs_load(path, opt, out, LD_U8);
}

int load_ivecs(const char *path, const load_opts *opt, dataset *out)
{
    return vecs_load(path, opt, out, LD_I32);
}
