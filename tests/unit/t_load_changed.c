/* A file that changes while it loads is refused, by every loader, with
 * one line: "FILE: changed while it was read (size A -> B bytes); load it
 * again". Test plan:
 *   each loader (csv, raw, npy, fvecs, idx, hdf5): a hook run as the
 *   first row is kept (ld_row_hook_for_tests) truncates the file on a row
 *   boundary or appends whole rows to it, so the data read are still well
 *   formed (before the check, a partial or mixed dataset and status 0);
 *   the sizes in the line are the file's own, from stat;
 *   a same-size rewrite (mtime alone changes) is refused too;
 *   an unchanged file loads, and a pipe (no size to compare) loads. */
#include <fcntl.h>
#include <hdf5.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "dataset.h"
#include "err.h"
#include "load_util.h"

/* What the hook does to the file: cut it to keep bytes, or append the
 * bytes of add, or rewrite byte at with c (same size). */
typedef struct change {
    const char *path;
    long long keep;
    const void *add;
    size_t add_len;
    long long at;
    char c;
    int ran;
} change;

static void apply(void *ctx)
{
    change *ch = ctx;
    ch->ran = 1;
    if (ch->keep >= 0 && truncate(ch->path, (off_t)ch->keep) != 0)
        return;
    if (ch->add || ch->at >= 0) {
        /* a new mtime needs the clock to move past the file's (coarse,
         * a jiffy on Linux) */
        nanosleep(&(struct timespec){0, 20000000}, NULL);
        int fd = open(ch->path, O_WRONLY | (ch->add ? O_APPEND : 0));
        if (fd < 0)
            return;
        if (ch->add && write(fd, ch->add, ch->add_len) != (ssize_t)ch->add_len)
            ch->ran = -1;
        if (!ch->add && pwrite(fd, &ch->c, 1, (off_t)ch->at) != 1)
            ch->ran = -1;
        close(fd);
    }
}

static long long file_size(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? (long long)st.st_size : -1;
}

/* Load path with ch applied mid-load: refused with the exact line. */
static int refused(const char *path, const load_opts *o, change *ch, char *why, size_t len)
{
    long long before = file_size(path);
    ch->path = path;
    ld_row_hook_for_tests(apply, ch);
    dataset ds;
    int rc = dataset_load(path, o, &ds);
    ld_row_hook_for_tests(NULL, NULL);
    long long after = file_size(path);
    char want[1024];
    snprintf(want, sizeof want,
             "%s: changed while it was read (size %lld -> %lld bytes); load it "
             "again",
             path, before, after);
    if (rc == 0) {
        snprintf(why, len, "loaded %zu rows of a file that changed (hook ran: %d)", ds.n, ch->ran);
        dataset_free(&ds);
        return 0;
    }
    if (ch->ran != 1 || rc != TCJ_EIO || strcmp(err_msg(), want) != 0) {
        snprintf(why, len, "hook %d, rc %d, '%s', expected '%s'", ch->ran, rc, err_msg(), want);
        return 0;
    }
    return 1;
}

#define CHECK_REFUSED(path, o, ch)                                                                 \
    do {                                                                                           \
        char why_[2048];                                                                           \
        CHECK_MSG(refused(path, o, ch, why_, sizeof why_), "%s", why_);                            \
    } while (0)

/* rows lines of "i,i+0.5,-i\n" (each at least 8 bytes: 3000 rows pass
 * stdio's first read) */
static const char *csv_file(const char *name, int rows, long long *half)
{
    size_t cap = (size_t)rows * 40, n = 0;
    char *t = malloc(cap);
    for (int i = 0; i < rows; i++) {
        if (i == rows / 2)
            *half = (long long)n;
        n += (size_t)snprintf(t + n, cap - n, "%d,%d.5,%d\n", i, i, -i);
    }
    const char *p = t_write(name, t, n);
    free(t);
    return p;
}

static void *f32_rows(int rows, int d, size_t *len)
{
    float *v = malloc((size_t)rows * d * sizeof *v);
    for (int i = 0; i < rows * d; i++)
        v[i] = (float)i / 8;
    *len = (size_t)rows * d * sizeof *v;
    return v;
}

TEST(csv_truncated_on_a_row)
{
    long long half = 0;
    const char *p = csv_file("cut.csv", 3000, &half);
    change ch = {.keep = half, .at = -1};
    CHECK_REFUSED(p, NULL, &ch);
}

TEST(csv_emptied)
{
    long long half = 0;
    const char *p = csv_file("empty.csv", 3000, &half);
    change ch = {.keep = 0, .at = -1};
    CHECK_REFUSED(p, NULL, &ch);
}

TEST(csv_rewritten_same_size)
{
    long long half = 0;
    const char *p = csv_file("same.csv", 3000, &half);
    change ch = {.keep = -1, .at = half, .c = '7'};
    CHECK_REFUSED(p, NULL, &ch);
}

TEST(raw_grown)
{
    size_t len, more;
    void *v = f32_rows(100, 4, &len), *w = f32_rows(10, 4, &more);
    const char *p = t_write("grow.f32", v, len);
    load_opts o = {.header = -1, .dim = 4};
    change ch = {.keep = -1, .add = w, .add_len = more, .at = -1};
    CHECK_REFUSED(p, &o, &ch);
    free(v);
    free(w);
}

TEST(npy_grown)
{
    char head[128] = "\x93NUMPY\x01\x00";
    const char *dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (100, 4), }";
    size_t hl = 10 + strlen(dict) + 1, pad = (64 - hl % 64) % 64, hlen = strlen(dict) + pad + 1;
    head[8] = (char)hlen;
    head[9] = 0;
    memcpy(head + 10, dict, strlen(dict));
    memset(head + 10 + strlen(dict), ' ', pad);
    head[10 + hlen - 1] = '\n';
    size_t len, more;
    void *v = f32_rows(100, 4, &len), *w = f32_rows(10, 4, &more);
    char *file = malloc(10 + hlen + len);
    memcpy(file, head, 10 + hlen);
    memcpy(file + 10 + hlen, v, len);
    const char *p = t_write("grow.npy", file, 10 + hlen + len);
    change ch = {.keep = -1, .add = w, .add_len = more, .at = -1};
    CHECK_REFUSED(p, NULL, &ch);
    free(file);
    free(v);
    free(w);
}

TEST(fvecs_grown)
{
    unsigned char rec[4 + 16];
    int32_t d = 4;
    memcpy(rec, &d, 4);
    unsigned char *file = malloc(100 * sizeof rec);
    for (int i = 0; i < 100; i++) {
        for (int j = 0; j < 4; j++) {
            float x = (float)(i + j);
            memcpy(rec + 4 + 4 * j, &x, 4);
        }
        memcpy(file + i * sizeof rec, rec, sizeof rec);
    }
    const char *p = t_write("grow.fvecs", file, 100 * sizeof rec);
    change ch = {.keep = -1, .add = file, .add_len = 10 * sizeof rec, .at = -1};
    CHECK_REFUSED(p, NULL, &ch);
    free(file);
}

TEST(idx_grown)
{
    /* 00 00 08 (u8) 02 dims, 100 x 4 */
    unsigned char file[12 + 400];
    const unsigned char head[12] = {0, 0, 8, 2, 0, 0, 0, 100, 0, 0, 0, 4};
    memcpy(file, head, 12);
    for (int i = 0; i < 400; i++)
        file[12 + i] = (unsigned char)i;
    const char *p = t_write("grow.idx", file, sizeof file);
    change ch = {.keep = -1, .add = file + 12, .add_len = 40, .at = -1};
    CHECK_REFUSED(p, NULL, &ch);
}

TEST(hdf5_grown)
{
    const char *p = t_path("grow.h5");
    hid_t f = H5Fcreate(p, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    CHECK(f >= 0);
    size_t len;
    float *v = f32_rows(100, 4, &len);
    hsize_t dims[2] = {100, 4};
    hid_t sp = H5Screate_simple(2, dims, NULL);
    hid_t ds = H5Dcreate2(f, "train", H5T_IEEE_F32LE, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    CHECK(ds >= 0);
    H5Dwrite(ds, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, v);
    H5Dclose(ds);
    H5Sclose(sp);
    H5Fclose(f);
    change ch = {.keep = -1, .add = v, .add_len = 64, .at = -1};
    CHECK_REFUSED(p, NULL, &ch);
    free(v);
}

/* Without a change, the same files load; a pipe (no size) loads too. */
TEST(unchanged_and_pipe_load)
{
    long long half = 0;
    const char *p = csv_file("still.csv", 3000, &half);
    dataset ds;
    CHECK_MSG(dataset_load(p, NULL, &ds) == 0, "%s", err_msg());
    CHECK_EQ_INT(ds.n, 3000);
    CHECK(dataset_value(&ds, 3 * 2999 + 1) == 2999.5);
    dataset_free(&ds);
    int fds[2];
    CHECK(pipe(fds) == 0);
    const char *text = "1,2\n3,4\n5,6\n";
    CHECK(write(fds[1], text, strlen(text)) == (ssize_t)strlen(text));
    close(fds[1]);
    char name[64];
    snprintf(name, sizeof name, "/dev/fd/%d", fds[0]);
    load_opts o = {.header = -1, .format = "csv"};
    int rc = dataset_load(name, &o, &ds);
    close(fds[0]);
    CHECK_MSG(rc == 0, "%s", err_msg());
    CHECK_EQ_INT(ds.n, 3);
    CHECK(dataset_value(&ds, 5) == 6);
    dataset_free(&ds);
}
