#include "fuzz.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "err.h"

const char *fuzz_file(const uint8_t *data, size_t size, const char *ext)
{
    static char dir[256], path[300];
    if (!dir[0]) {
        snprintf(dir, sizeof dir, "%s/tcjoin-fuzz-XXXXXX",
                 access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp");
        if (!mkdtemp(dir))
            abort();
    }
    snprintf(path, sizeof path, "%s/input%s", dir, ext);
    FILE *f = fopen(path, "wb");
    if (!f || (size && fwrite(data, 1, size, f) != size))
        abort();
    fclose(f);
    return path;
}

void fuzz_load(const char *path, const load_opts *opt)
{
    dataset ds;
    err_clear();
    int rc = dataset_load(path, opt, &ds);
    if (rc) {
        const char *m = err_msg();
        if (!m[0] || strchr(m, '\n') || !strstr(m, path)) {
            fprintf(stderr, "fuzz: a failure without one line naming the file: rc %d '%s'\n", rc,
                    m);
            abort();
        }
        return;
    }
    if (ds.n < 2 || ds.d < 1 || !ds.v || ds.hash != dataset_hash(&ds)) {
        fprintf(stderr, "fuzz: a loaded dataset breaks its invariants: n %zu d %zu\n", ds.n, ds.d);
        abort();
    }
    /* every value must be readable (ASan checks the extent) */
    volatile double s = 0;
    for (size_t i = 0; i < ds.n * ds.d; i++)
        s += dataset_value(&ds, i);
    (void)s;
    dataset_free(&ds);
}
