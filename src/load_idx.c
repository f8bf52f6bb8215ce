/* MNIST idx files: bytes 0 0, a type byte (0x08 u8, 0x09 i8, 0x0B i16,
 * 0x0C i32, 0x0D f32, 0x0E f64), the number of dimensions, then that many
 * big-endian uint32 sizes and the big-endian values. The first dimension is
 * n; the others flatten into d (28x28 images become d = 784). */
#include "err.h"
#include "load_util.h"

static int idx_type(unsigned char code)
{
    switch (code) {
    case 0x08:
        return LD_U8;
    case 0x09:
        return LD_I8;
    case 0x0B:
        return LD_I16;
    case 0x0C:
        return LD_I32;
    case 0x0D:
        return LD_F32;
    case 0x0E:
        return LD_F64;
    default:
        return -1;
    }
}

int idx_probe(const unsigned char *head, size_t len)
{
    return len >= 8 && head[0] == 0 && head[1] == 0 && idx_type(head[2]) >= 0 && head[3] >= 1 &&
           head[3] <= 4;
}

int load_idx(const char *path, const load_opts *opt, dataset *out)
{
    uint64_t size;
    ld_stamp stamp;
    FILE *f = ld_open(path, &size, &stamp);
    if (!f)
        return TCJ_EIO;
    unsigned char h[4 + 4 * 255];
    int rc = 0;
    if (size == 0) {
        fclose(f);
        return err_set(TCJ_EINVAL, "%s: empty file, no points", path);
    }
    if (fread(h, 1, 4, f) != 4 || h[0] || h[1] || idx_type(h[2]) < 0 || h[3] == 0) {
        fclose(f);
        return err_set(TCJ_EINVAL,
                       "%s: byte 0: not an idx file (magic 00 00 TYPE NDIM with "
                       "TYPE 08 09 0B 0C 0D 0E)",
                       path);
    }
    int type = idx_type(h[2]), nd = h[3];
    if (fread(h + 4, 4, nd, f) != (size_t)nd) {
        fclose(f);
        return err_set(TCJ_EINVAL, "%s: byte 4: file ends inside the %d dimension sizes", path, nd);
    }
    uint64_t dims[255], n, d = 1;
    for (int i = 0; i < nd; i++) {
        const unsigned char *p = h + 4 + 4 * i;
        dims[i] = (uint64_t)p[0] << 24 | (uint64_t)p[1] << 16 | (uint64_t)p[2] << 8 | p[3];
        if (i && !rc)
            rc = ld_mul(path, "dimension sizes", 4, d, dims[i], &d);
    }
    n = dims[0];
    size_t es = ld_type_size(type);
    uint64_t data = 4 + 4 * (uint64_t)nd, want = 0, have = size - data;
    if (!rc)
        rc = ld_check_dims(path, "dimension sizes", 4, n, d, es, data, UINT64_MAX, &want);
    if (!rc && want != have)
        rc = err_set(TCJ_EINVAL,
                     "%s: header says %llu x %llu %s = %llu bytes of data, file has "
                     "%llu (from byte %llu)",
                     path, (unsigned long long)n, (unsigned long long)d, ld_type_name(type),
                     (unsigned long long)want, (unsigned long long)have, (unsigned long long)data);
    size_t take = 0;
    if (!rc)
        rc = ld_check_take(path, opt, n, d, ld_keep_type(type), &take);
    if (rc) {
        fclose(f);
        return rc;
    }
    ld_sink s;
    if ((rc = ld_sink_init(&s, path, (size_t)d, take, opt, ld_keep_type(type))) != 0) {
        fclose(f);
        return rc;
    }
    rc = ld_seek(f, path, data + opt->offset * d * es);
    for (size_t k = 0; k < take && !rc; k++) {
        size_t r = opt->offset + k;
        uint64_t at = data + r * d * es;
        double *row;
        if ((rc = ld_row(&s, &row)) != 0)
            break;
        rc = ld_read_values(f, path, type, 1, d, row, at);
        if (!rc)
            ld_commit_point(&s, row, r, at, es);
    }
    rc = ld_unchanged(f, path, &stamp, rc);
    fclose(f);
    if (rc) {
        ld_sink_free(&s);
        return rc;
    }
    return ld_finish(&s, out);
}
