/* HDF5, the parent's side in-process: all that runs in load's own process
 * for an HDF5 file is the decoding of what its child sends down the pipe
 * (the shape, pieces of rows, an error line; src/load_hdf5.c). Here the
 * input after byte 0 is that stream, read from a file by
 * load_hdf5_parent, as fast as the other loaders' harnesses. Byte 0 gives
 * the options the child ran with: bits 0-1 limit (0: all), bits 2-3
 * offset, bit 4 drop-nonfinite. The file is named "input.hdf5" in the
 * messages, as the child's error lines in the seeds name it. A failure
 * must be one line naming the file without control characters, the stream's end (the child's death)
 * 1 and no line, a success rows of finite values within the promise.
 *
 * The parent allocates the array the shape message announces, within
 * available memory, before the rows come (the child checked the shape
 * against the file's storage). Outside a sanitizer a false announcement
 * costs untouched pages; under ASan writing the shadow of, say, 15 GB
 * takes seconds and passes -rss_limit_mb, so inputs announcing more than
 * 256 MiB that memory could hold are skipped: those beyond memory, which
 * must be refused before any allocation, still run. What the parent
 * allocates is the array in the announced type (rows x d values of it)
 * and a 64 KiB scratch buffer; the loader checks the array before it
 * allocates. */
#include <fcntl.h>
#include <stddef.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dtype.h"
#include "err.h"
#include "fuzz.h"
#include "load_util.h"

/* What the child writes first (src/load_hdf5.c's h5_msg): its rc, n, d,
 * rows, col, cols (0 here) and the element type's name. */
typedef struct shape {
    int32_t rc;
    uint64_t n, d, rows, col, cols;
    char text[512];
} shape;

/* 1 when the input's shape message makes the parent allocate more than
 * 256 MiB (rows x d values of the announced type, f64 when it names none)
 * that available memory would allow. */
static int big_but_possible(const uint8_t *data, size_t size)
{
    shape s;
    uint64_t bytes;
    if (size < offsetof(shape, text))
        return 0;
    memset(&s, 0, sizeof s);
    memcpy(&s, data, size < sizeof s ? size : sizeof s);
    s.text[sizeof s.text - 1] = 0;
    const dtype *t = dtype_find(s.text);
    const uint64_t vb = t ? t->bytes : sizeof(double);
    if (s.rc || s.d == 0 || __builtin_mul_overflow(s.rows, s.d, &bytes) ||
        __builtin_mul_overflow(bytes, vb, &bytes))
        return 0;
    return bytes > (256u << 20) && bytes <= ld_mem_available();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 || big_but_possible(data + 1, size - 1))
        return 0;
    load_opts o;
    load_opts_init(&o);
    o.limit = data[0] & 3;
    o.offset = data[0] >> 2 & 3;
    o.drop_nonfinite = data[0] >> 4 & 1;
    static const char path[] = "input.hdf5";
    int fd = open(fuzz_file(data + 1, size - 1, ".pipe"), O_RDONLY);
    if (fd < 0)
        abort();
    dataset ds;
    memset(&ds, 0, sizeof ds);
    err_clear();
    int rc = load_hdf5_parent(path, &o, fd, &ds);
    close(fd);
    if (rc == 1)
        return 0;
    if (rc) {
        const char *m = err_msg();
        int ctl = 0;
        for (const char *c = m; *c; c++)
            ctl |= (unsigned char)*c < 0x20 || *c == 0x7f;
        if (rc > 0 || !m[0] || ctl || !strstr(m, path)) {
            fprintf(stderr, "fuzz: a failure without one line naming the file: rc %d '%s'\n", rc,
                    m);
            abort();
        }
        return 0;
    }
    if (ds.d < 1 || (o.limit && ds.n > o.limit) || (ds.n && !ds.v)) {
        fprintf(stderr, "fuzz: a decoded stream breaks its invariants: n %zu d %zu\n", ds.n, ds.d);
        abort();
    }
    /* every value is read back (ASan checks the extent) and finite */
    for (size_t i = 0; i < ds.n * ds.d; i++)
        if (!isfinite(dataset_value(&ds, i))) {
            fprintf(stderr, "fuzz: value %zu is not finite\n", i);
            abort();
        }
    dataset_free(&ds);
    return 0;
}
