/* ann-benchmarks HDF5 files through libhdf5: a 2-D float, double or integer
 * dataset ("train" unless load_opts.h5name names another, e.g. "test"); a
 * 1-D one loads as n x 1.
 *
 * libhdf5 crashes (SIGSEGV) and leaks on some malformed files, so it runs
 * only in a child process: the child opens the file, checks the dims
 * against overflow, the dataset's storage size and available memory, then
 * reads blocks of about 4 MiB aligned to the dataset's chunks, in the type
 * the dataset is kept in, and writes them down a pipe straight into the
 * parent's final array. Beside that array the load holds a block, and in
 * the child one chunk when a chunk is wider than a block. The parent never
 * calls libhdf5; it checks what the child says once more, and a child that
 * dies becomes one line naming the file. */
#include <errno.h>
#include <hdf5.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "err.h"
#include "load_util.h"
#include "mem.h"

int hdf5_probe(const unsigned char *head, size_t len)
{
    return len >= 8 && !memcmp(head, "\x89HDF\r\n\x1a\n", 8);
}

/* One message from the child: the first gives the shape (rows = points to
 * come, text the kept type's name) or an error; each later one announces
 * a piece, columns col to col + cols of the next rows rows, whose rows x
 * cols values of the kept type follow it row by row, or an error. The
 * pieces of a band of rows come from column 0 to d. */
typedef struct h5_msg {
    int32_t rc;
    uint64_t n, d, rows, col, cols;
    char text[512];
} h5_msg;

#define H5_MAX_RATIO 4096

typedef struct h5_names {
    char buf[400];
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
    int k = snprintf(nm->buf + nm->len, sizeof nm->buf - nm->len, "%s%s", nm->len ? ", " : "",
                     ld_esc(name, 60));
    if (k > 0 && nm->len + (size_t)k < sizeof nm->buf)
        nm->len += (size_t)k;
    return 0;
}

static int write_full(int fd, const void *p, size_t len)
{
    const char *c = p;
    while (len) {
        ssize_t k = write(fd, c, len);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return -1;
        c += k;
        len -= (size_t)k;
    }
    return 0;
}

static void send_error(int fd, int rc)
{
    h5_msg m;
    memset(&m, 0, sizeof m);
    m.rc = rc ? rc : TCJ_EINVAL;
    snprintf(m.text, sizeof m.text, "%s", err_msg());
    write_full(fd, &m, sizeof m);
}

/* Where the file says the values lie, against the file: every byte of
 * raw data (a contiguous dataset's want bytes, each chunk) within the
 * file's size and outside its superblock and the dataset's own object
 * header. A damaged layout message pointing at metadata made H5Dread serve
 * the range from libhdf5's metadata cache and read past it on the heap:
 * garbage loaded as data, exit 0 (ASan: a heap over-read in H5Dread). */
static int h5_check_range(const char *path, const char *shown, haddr_t addr, uint64_t len,
                          uint64_t fsize, uint64_t super, haddr_t oh, uint64_t ohlen)
{
    if (addr == HADDR_UNDEF || len == 0)
        return 0;
    uint64_t end;
    if (__builtin_add_overflow((uint64_t)addr, len, &end) || end > fsize)
        return err_set(TCJ_EINVAL,
                       "%s: dataset '%s' says its values lie at bytes %llu to %llu, beyond the "
                       "file's %llu bytes",
                       path, shown, (unsigned long long)addr, (unsigned long long)end,
                       (unsigned long long)fsize);
    if (addr < super)
        return err_set(TCJ_EINVAL,
                       "%s: dataset '%s' says its values lie at bytes %llu to %llu, inside the "
                       "file's superblock (bytes 0 to %llu)",
                       path, shown, (unsigned long long)addr, (unsigned long long)end,
                       (unsigned long long)super);
    if (oh != HADDR_UNDEF && addr < oh + ohlen && end > oh)
        return err_set(TCJ_EINVAL,
                       "%s: dataset '%s' says its values lie at bytes %llu to %llu, over its own "
                       "header (bytes %llu to %llu)",
                       path, shown, (unsigned long long)addr, (unsigned long long)end,
                       (unsigned long long)oh, (unsigned long long)(oh + ohlen));
    return 0;
}

/* Chunks looked at one by one up to this many (H5Dget_chunk_info by
 * index); a dataset of more chunks is read on libhdf5's word. */
#define H5_CHECK_CHUNKS 4096

static int h5_check_extent(const char *path, const char *shown, hid_t file, hid_t dset, hid_t dcpl,
                           uint64_t want)
{
    struct stat st;
    if (stat(path, &st) != 0 || dcpl < 0)
        return 0;
    H5F_info2_t fi;
    H5O_info_t oi;
    uint64_t super = H5Fget_info2(file, &fi) >= 0 ? fi.super.super_size : 0;
    haddr_t oh = HADDR_UNDEF;
    uint64_t ohlen = 0;
    if (H5Oget_info2(dset, &oi, H5O_INFO_BASIC | H5O_INFO_HDR) >= 0) {
        oh = oi.addr;
        ohlen = oi.hdr.space.total;
    }
    const uint64_t fsize = (uint64_t)st.st_size;
    H5D_layout_t layout = H5Pget_layout(dcpl);
    if (layout == H5D_CONTIGUOUS)
        return h5_check_range(path, shown, H5Dget_offset(dset), want, fsize, super, oh, ohlen);
    if (layout != H5D_CHUNKED)
        return 0;
    hsize_t nchunks = 0;
    if (H5Dget_num_chunks(dset, H5S_ALL, &nchunks) < 0 || nchunks > H5_CHECK_CHUNKS)
        return 0;
    for (hsize_t i = 0; i < nchunks; i++) {
        haddr_t a = HADDR_UNDEF;
        hsize_t size = 0;
        if (H5Dget_chunk_info(dset, H5S_ALL, i, NULL, NULL, &a, &size) < 0)
            return err_set(TCJ_EINVAL, "%s: dataset '%s': chunk %llu cannot be located", path,
                           shown, (unsigned long long)i);
        int rc = h5_check_range(path, shown, a, size, fsize, super, oh, ohlen);
        if (rc)
            return rc;
    }
    return 0;
}

/* What the child reads at a time: about this many bytes of values as
 * H5Dread delivers them. */
#define H5_BLOCK_BYTES ((uint64_t)1 << 22)

/* How the child walks the rows it sends: bands of rows, each sent as
 * pieces of columns from left to right. A band's height is a multiple of
 * the chunk's rows and bands start at its multiples; a piece is a multiple
 * of the chunk's columns unless one chunk is wider than a block, then it
 * stays within one chunk. So each chunk is decompressed once, and only a
 * chunk read in several pieces needs the chunk cache (one chunk). Reading
 * whole rows instead held a row of d doubles (2.1 GB at d = 2^28) and, for
 * chunks wider than the cache, decompressed each chunk once per read. */
typedef struct h5_plan {
    uint64_t d;    /* columns */
    uint64_t ms;   /* bytes of one value as read */
    uint64_t cc;   /* columns of a chunk (1 unchunked) */
    uint64_t band; /* rows of a full band: a multiple of the chunk's rows */
} h5_plan;

static h5_plan h5_plan_make(uint64_t d, uint64_t ms, uint64_t cr, uint64_t cc)
{
    h5_plan p = {.d = d, .ms = ms, .cc = cc ? cc : 1};
    const uint64_t fit = H5_BLOCK_BYTES / (d * ms);
    cr = cr ? cr : 1;
    p.band = fit < cr ? cr : fit / cr * cr;
    return p;
}

/* Rows of the band that starts at row a, read up to row end. */
static uint64_t h5_band_rows(const h5_plan *p, uint64_t a, uint64_t end)
{
    const uint64_t next = a / p->band * p->band;
    if (p->band >= end - next)
        return end - a;
    return next + p->band - a;
}

/* Columns of the piece of an r-row band that starts at column c. */
static uint64_t h5_piece_cols(const h5_plan *p, uint64_t r, uint64_t c)
{
    uint64_t w = H5_BLOCK_BYTES / (r * p->ms);
    if (w == 0)
        w = 1;
    if (w >= p->cc)
        w = w / p->cc * p->cc;
    else if (w > p->cc - c % p->cc)
        w = p->cc - c % p->cc;
    return w < p->d - c ? w : p->d - c;
}

/* The type H5Dread converts to: the kept type itself where libhdf5 has it
 * and converts to it exactly (u8, IEEE f32, f64); else doubles, which the
 * child narrows to the kept type after checking that each is held (f16, a
 * float of another layout). *direct is 1 for the former. */
static hid_t h5_mem_type(const dtype *keep, hid_t dtype, int *direct)
{
    *direct = 1;
    if (keep->id == DTYPE_U8)
        return H5T_NATIVE_UCHAR;
    if (keep->id == DTYPE_F32 &&
        (H5Tequal(dtype, H5T_IEEE_F32LE) > 0 || H5Tequal(dtype, H5T_IEEE_F32BE) > 0))
        return H5T_NATIVE_FLOAT;
    *direct = keep->id == DTYPE_F64;
    return H5T_NATIVE_DOUBLE;
}

/* The dataset opened again with a chunk cache of cache bytes (0: none):
 * the cache can be sized only when a dataset is opened. */
static hid_t h5_reopen(const char *path, const char *shown, hid_t file, const char *name,
                       size_t cache)
{
    hid_t dapl = H5Pcreate(H5P_DATASET_ACCESS);
    if (dapl < 0 || H5Pset_chunk_cache(dapl, H5D_CHUNK_CACHE_NSLOTS_DEFAULT, cache, 1.0) < 0) {
        if (dapl >= 0)
            H5Pclose(dapl);
        err_set(TCJ_EIO, "%s: dataset '%s': cannot set a chunk cache of %zu bytes", path, shown,
                cache);
        return -1;
    }
    hid_t dset = H5Dopen2(file, name, dapl);
    H5Pclose(dapl);
    if (dset < 0)
        err_set(TCJ_EIO, "%s: dataset '%s' cannot be opened again to read it", path, shown);
    return dset;
}

/* libhdf5's innermost error, the one that says why (a failed allocation,
 * a checksum): the first entry of the stack walked upward. */
static herr_t h5_first_error(unsigned k, const H5E_error2_t *e, void *data)
{
    char *why = data;
    if (k == 0 && e->desc)
        snprintf(why, 160, "%s", ld_esc(e->desc, 120));
    return 0;
}

/* Why the last libhdf5 call failed, for the end of a line: "" or
 * " (libhdf5: REASON)", in a buffer the next call reuses. */
static const char *h5_why(void)
{
    static _Thread_local char out[200];
    char why[160] = "";
    H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, h5_first_error, why);
    snprintf(out, sizeof out, "%s%s%s", why[0] ? " (libhdf5: " : "", why, why[0] ? ")" : "");
    return out;
}

/* The child's side (also run in-process by tests/fuzz/fuzz_hdf5_child.c):
 * returns 0 when every row was sent, 1 after an error was sent. */
int load_hdf5_child(const char *path, const load_opts *opt, int fd)
{
    const char *name = opt->h5name && *opt->h5name ? opt->h5name : "train";
    char shown[256];
    snprintf(shown, sizeof shown, "%s", ld_esc(name, 60)); /* for messages */
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    int rc = 0;
    hid_t file = -1, dset = -1, dtype = -1, space = -1, dcpl = -1;
    void *rbuf = NULL, *sbuf = NULL;
    file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (file < 0) {
        rc = err_set(TCJ_EINVAL, "%s: not a readable HDF5 file", path);
        goto out;
    }
    if (H5Lexists(file, name, H5P_DEFAULT) <= 0) {
        h5_names nm = {.len = 0};
        nm.buf[0] = 0;
        h5_iterate(file, H5_INDEX_NAME, H5_ITER_INC, NULL, h5_collect, &nm);
        rc = err_set(TCJ_EINVAL,
                     "%s: no dataset '%s' (the file has: %s); choose one with dataset=NAME", path,
                     shown, nm.len ? nm.buf : "nothing");
        goto out;
    }
    dset = H5Dopen2(file, name, H5P_DEFAULT);
    if (dset < 0) {
        rc = err_set(TCJ_EINVAL, "%s: '%s' is not a dataset", path, shown);
        goto out;
    }
    dtype = H5Dget_type(dset);
    H5T_class_t cls = H5Tget_class(dtype);
    size_t es = H5Tget_size(dtype);
    if ((cls != H5T_FLOAT && cls != H5T_INTEGER) || es == 0 || es > 16) {
        rc = err_set(TCJ_EINVAL, "%s: dataset '%s' is not numeric (float or integer)", path, shown);
        goto out;
    }
    space = H5Dget_space(dset);
    int rank = H5Sget_simple_extent_ndims(space);
    hsize_t dims[2] = {0, 1};
    if (rank < 1 || rank > 2 || H5Sget_simple_extent_dims(space, dims, NULL) < 0) {
        rc = err_set(TCJ_EINVAL, "%s: dataset '%s' has %d dimensions, expected 2 (n x d)", path,
                     shown, rank);
        goto out;
    }
    uint64_t n = dims[0], d = rank == 2 ? dims[1] : 1;
    char field[300];
    snprintf(field, sizeof field, "dataset '%s' dims", shown);
    /* Unfiltered data takes n·d·es bytes of storage; a chunked dataset that
     * was never written stores none, whatever its dims say. Compressed data
     * is allowed H5_MAX_RATIO times its storage: deflate cannot pass about
     * 1032:1, and a few KB of file must not make the parent fill gigabytes
     * with fill values. The storage libhdf5 reports is what the layout
     * message declares: unless it lies in external files, the file must
     * hold it (fuzz_hdf5_child: 2 KB declaring exabytes). */
    uint64_t stored = H5Dget_storage_size(dset), want = 0;
    dcpl = H5Dget_create_plist(dset);
    struct stat st;
    if ((dcpl < 0 || H5Pget_external_count(dcpl) <= 0) && stat(path, &st) == 0 &&
        (uint64_t)st.st_size < stored)
        stored = (uint64_t)st.st_size;
    int filtered = dcpl < 0 || H5Pget_nfilters(dcpl) != 0;
    size_t take = 0;
    rc = ld_check_dims(path, field, UINT64_MAX, n, d, es, UINT64_MAX,
                       filtered ? UINT64_MAX : stored, &want);
    if (!rc && filtered && want / H5_MAX_RATIO > stored) {
        char a[32], b[32];
        rc = err_set(TCJ_EINVAL,
                     "%s: dataset '%s' dims give %llu x %llu values = %s, but it stores %s "
                     "compressed (more than %d:1 is refused)",
                     path, shown, (unsigned long long)n, (unsigned long long)d,
                     mem_bytes_str(want, a), mem_bytes_str(stored, b), H5_MAX_RATIO);
    }
    /* The type the parent keeps the values in (they come as doubles, which
     * hold every value of these types exactly); memory is counted in it. */
    H5T_sign_t sign = cls == H5T_INTEGER ? H5Tget_sign(dtype) : H5T_SGN_ERROR;
    const struct dtype *keep =
        dtype_get(cls == H5T_FLOAT && es == 4                             ? DTYPE_F32
                  : cls == H5T_FLOAT && es == 2                           ? DTYPE_F16
                  : cls == H5T_INTEGER && es == 1 && sign == H5T_SGN_NONE ? DTYPE_U8
                                                                          : DTYPE_F64);
    if (!rc)
        rc = ld_check_take(path, opt, n, d, keep->id, &take);
    if (!rc && (dcpl < 0 || H5Pget_external_count(dcpl) <= 0))
        rc = h5_check_extent(path, shown, file, dset, dcpl, filtered ? 0 : want);
    if (rc)
        goto out;
    int direct;
    const hid_t memtype = h5_mem_type(keep, dtype, &direct);
    const uint64_t ms = H5Tget_size(memtype);
    hsize_t chunk[2] = {1, 1};
    const int chunked = dcpl >= 0 && H5Pget_layout(dcpl) == H5D_CHUNKED;
    if (chunked && H5Pget_chunk(dcpl, rank, chunk) != rank) {
        rc = err_set(TCJ_EINVAL, "%s: dataset '%s' is chunked, but its chunk shape cannot be read",
                     path, shown);
        goto out;
    }
    const h5_plan plan = h5_plan_make(d, ms, chunk[0], rank == 2 ? chunk[1] : 1);
    /* a chunk read in several pieces stays cached between them */
    size_t cache = 0;
    if (chunked && h5_piece_cols(&plan, plan.band, 0) < plan.cc &&
        (__builtin_mul_overflow((size_t)chunk[0], (size_t)plan.cc, &cache) ||
         __builtin_mul_overflow(cache, es, &cache)))
        cache = SIZE_MAX; /* libhdf5 refuses such a chunk itself */
    H5Dclose(dset);
    if ((dset = h5_reopen(path, shown, file, name, cache)) < 0) {
        rc = TCJ_EIO;
        goto out;
    }
    /* The largest piece: at most a block, or one column of a band of
     * chunk rows taller than a block; allocated before the shape is sent. */
    const uint64_t band = plan.band < take ? plan.band : take;
    uint64_t vals = H5_BLOCK_BYTES / ms > band ? H5_BLOCK_BYTES / ms : band;
    if (vals > (uint64_t)take * d)
        vals = (uint64_t)take * d;
    if (!(rbuf = mem_alloc(path, "a block of values read", vals, ms, 0)) ||
        (!direct && !(sbuf = mem_alloc(path, "a block of values sent", vals, keep->bytes, 0)))) {
        rc = TCJ_ENOMEM;
        goto out;
    }
    if (direct)
        sbuf = rbuf;
    h5_msg m;
    memset(&m, 0, sizeof m);
    m.n = n;
    m.d = d;
    m.rows = take;
    snprintf(m.text, sizeof m.text, "%s", keep->name);
    if (write_full(fd, &m, sizeof m))
        goto out;
    const uint64_t end = (uint64_t)opt->offset + take;
    for (uint64_t a = opt->offset; a < end;) {
        const uint64_t r = h5_band_rows(&plan, a, end);
        for (uint64_t c = 0; c < d;) {
            /* A chunk read in pieces is done when the next piece starts
             * another: closing the dataset drops it from the cache before
             * the next one is decompressed, not after (one chunk held,
             * not two). */
            if (cache && c % plan.cc == 0 && (a != opt->offset || c != 0)) {
                H5Dclose(dset);
                if ((dset = h5_reopen(path, shown, file, name, cache)) < 0) {
                    rc = TCJ_EIO;
                    goto out;
                }
            }
            const uint64_t w = h5_piece_cols(&plan, r, c);
            hsize_t start[2] = {a, c}, count[2] = {r, w};
            hid_t mspace = -1;
            herr_t got = -1;
            if (H5Sselect_hyperslab(space, H5S_SELECT_SET, start, NULL, count, NULL) >= 0 &&
                (mspace = H5Screate_simple(rank, count, NULL)) >= 0)
                got = H5Dread(dset, memtype, mspace, space, H5P_DEFAULT, rbuf);
            /* taken before the next call clears libhdf5's error stack */
            const char *why = got < 0 ? h5_why() : "";
            if (mspace >= 0)
                H5Sclose(mspace);
            if (got < 0) {
                rc = err_set(TCJ_EIO,
                             "%s: reading rows %llu to %llu, columns %llu to %llu of '%s' "
                             "failed%s",
                             path, (unsigned long long)a, (unsigned long long)(a + r),
                             (unsigned long long)c, (unsigned long long)(c + w), shown, why);
                goto out;
            }
            if (!direct) {
                const double *v = rbuf;
                for (uint64_t i = 0; i < r * w; i++)
                    if (!keep->holds(v[i])) {
                        rc = err_set(TCJ_EINVAL,
                                     "%s: dataset '%s' has a %zu-byte float type that is not "
                                     "IEEE %s: point %llu value %llu is %g, which %s cannot hold",
                                     path, shown, es, keep->name, (unsigned long long)(a + i / w),
                                     (unsigned long long)(c + i % w), v[i], keep->name);
                        goto out;
                    }
                keep->from_f64(v, r * w, sbuf);
            }
            m.rows = r;
            m.col = c;
            m.cols = w;
            if (write_full(fd, &m, sizeof m) || write_full(fd, sbuf, r * w * keep->bytes))
                goto out;
            c += w;
        }
        a += r;
    }
out:
    if (rc)
        send_error(fd, rc);
    if (sbuf != rbuf)
        free(sbuf);
    free(rbuf);
    if (dcpl >= 0)
        H5Pclose(dcpl);
    if (space >= 0)
        H5Sclose(space);
    if (dtype >= 0)
        H5Tclose(dtype);
    if (dset >= 0)
        H5Dclose(dset);
    if (file >= 0)
        H5Fclose(file);
    return rc ? 1 : 0;
}

/* Present only in a sanitized build: there the child's death must stay a
 * plain death too, not a sanitizer or fuzzer report about libhdf5. */
extern void __sanitizer_set_death_callback(void (*cb)(void)) __attribute__((weak));

static void child_die(void)
{
    _exit(125);
}

/* The file's layout (the child's first word: the file opened, the
 * dataset found, its type and shape) takes milliseconds for a sound file;
 * a damaged one can send libhdf5 round a loop it never leaves (seen: a
 * group's local heap that libhdf5 reads again and again). The reader that
 * has said nothing in this many seconds is stopped. */
#define HDF5_LAYOUT_S 5

/* Read len bytes: 0, 1 when the pipe ends first or fails (the child died),
 * TCJ_ECANCEL once *cancel is set (polled every 100 ms while the child
 * works), 2 when idle_s > 0 and nothing came in idle_s seconds. */
static int read_full(int fd, void *p, size_t len, const volatile int *cancel, const char *path,
                     int idle_s)
{
    char *c = p;
    size_t got = 0;
    long idle = 0; /* empty polls in a row */
    while (got < len) {
        int rc = ld_cancel_check(cancel, path);
        if (rc)
            return rc;
        struct pollfd pf = {.fd = fd, .events = POLLIN};
        int r = poll(&pf, 1, 100);
        if (r < 0 && errno != EINTR)
            return 1;
        if (r == 0 && idle_s > 0 && ++idle >= 10L * idle_s)
            return 2;
        if (r <= 0)
            continue;
        idle = 0;
        ssize_t k = read(fd, c + got, len - got);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return 1;
        got += (size_t)k;
    }
    return 0;
}

/* Why the child ended without finishing, as one line naming the file. */
static int child_death(const char *path, pid_t *pid)
{
    int st = 0;
    while (waitpid(*pid, &st, 0) < 0 && errno == EINTR)
        ;
    *pid = -1;
    if (WIFSIGNALED(st))
        return err_set(TCJ_EINVAL,
                       "%s: the HDF5 library crashed reading this file (signal %d, %s); the "
                       "file is damaged or uses a feature libhdf5 mishandles",
                       path, WTERMSIG(st), strsignal(WTERMSIG(st)));
    return err_set(TCJ_EIO, "%s: the HDF5 reader stopped early (exit status %d)", path,
                   WIFEXITED(st) ? WEXITSTATUS(st) : -1);
}

/* The child's error line, checked like its numbers: its own line names
 * the file and holds no control character (err_msg, ld_esc); any other
 * text (memory libhdf5 broke) is shown escaped after the file's name. */
static int child_error(const char *path, h5_msg *m)
{
    int rc = m->rc >= TCJ_EUNSUP && m->rc < 0 ? m->rc : TCJ_EINVAL;
    m->text[sizeof m->text - 1] = 0;
    size_t k = strlen(path);
    int plain = !strncmp(m->text, path, k) && m->text[k] == ':';
    for (const char *c = m->text; *c && plain; c++)
        plain = (unsigned char)*c >= 0x20 && *c != 0x7f;
    if (plain)
        return err_set(rc, "%s", m->text);
    return err_set(rc, "%s: the HDF5 reader failed with a garbled message: '%s'", path,
                   ld_esc(m->text, 200));
}

/* A piece's rows shorter than this many bytes are read many at a time
 * into a scratch buffer of this size and spread from there: one read a
 * row would cost a system call for a few values (chunks one column wide). */
#define H5_SCRATCH_BYTES ((size_t)1 << 16)

/* Columns col to col + cols of rows rows, stored from slot base of s's
 * array, read from fd; *scratch is allocated the first time it is used. */
static int read_piece(int fd, ld_sink *s, size_t base, size_t rows, size_t col, size_t cols,
                      char **scratch, const volatile int *cancel, const char *path)
{
    const size_t tb = s->t->bytes, rb = cols * tb, d = s->d;
    char *at = s->x + (base * d + col) * tb;
    if (cols == d)
        return read_full(fd, at, rows * rb, cancel, path, 0);
    if (rb >= H5_SCRATCH_BYTES) {
        for (size_t i = 0; i < rows; i++) {
            int rc = read_full(fd, at + i * d * tb, rb, cancel, path, 0);
            if (rc)
                return rc;
        }
        return 0;
    }
    if (!*scratch)
        *scratch = xmalloc(H5_SCRATCH_BYTES);
    const size_t per = H5_SCRATCH_BYTES / rb;
    for (size_t i = 0; i < rows; i += per) {
        const size_t r = rows - i < per ? rows - i : per;
        int rc = read_full(fd, *scratch, r * rb, cancel, path, 0);
        if (rc)
            return rc;
        for (size_t j = 0; j < r; j++)
            memcpy(at + (i + j) * d * tb, *scratch + j * rb, rb);
    }
    return 0;
}

/* The parent's side (also run in-process by tests/fuzz/fuzz_hdf5_pipe.c):
 * what the child wrote to fd, decoded into out. Each piece comes in the
 * kept type and is read into its place in the array (short rows through a
 * small scratch buffer): beside the array the parent holds nothing the
 * size of d. */
int load_hdf5_parent(const char *path, const load_opts *opt, int fd, dataset *out)
{
    h5_msg m;
    int rc = read_full(fd, &m, sizeof m, opt->cancel, path, HDF5_LAYOUT_S);
    if (rc == 2)
        return err_set(TCJ_EINVAL,
                       "%s: the HDF5 library read the file's layout for %d s without an answer "
                       "(a damaged file); the reader is stopped",
                       path, HDF5_LAYOUT_S);
    if (rc)
        return rc;
    if (m.rc)
        return child_error(path, &m);
    /* the child's word is checked again: its memory may be what libhdf5
     * broke */
    size_t take = 0;
    if (m.d == 0 || m.d > SIZE_MAX || m.rows == 0 || m.rows > m.n || opt->offset > m.n - m.rows)
        return err_set(TCJ_EIO, "%s: the HDF5 reader sent a shape it cannot have (%llu x %llu)",
                       path, (unsigned long long)m.n, (unsigned long long)m.d);
    /* The type named by the child; anything else (a broken child): f64. */
    m.text[sizeof m.text - 1] = 0;
    const dtype *t = dtype_find(m.text);
    if ((rc = ld_check_take(path, opt, m.n, m.d, t ? t->id : DTYPE_F64, &take)) != 0)
        return rc;
    if (take != m.rows)
        return err_set(TCJ_EIO, "%s: the HDF5 reader sent %llu rows, %zu expected", path,
                       (unsigned long long)m.rows, take);
    const size_t d = (size_t)m.d;
    ld_sink s;
    if ((rc = ld_sink_init_stored(&s, path, d, take, opt, t ? t->id : DTYPE_F64)) != 0)
        return rc;
    /* k rows done; a band of rows rows, stored from slot base, filled up
     * to column col */
    size_t k = 0, rows = 0, base = 0, col = 0;
    char *scratch = NULL;
    while (k < take && !rc) {
        if ((rc = read_full(fd, &m, sizeof m, opt->cancel, path, 0)) != 0)
            break;
        if (m.rc) {
            rc = child_error(path, &m);
            break;
        }
        if (col == 0) {
            if (m.rows == 0 || m.rows > take - k) {
                rc = err_set(TCJ_EIO, "%s: the HDF5 reader sent %llu rows where %zu were left",
                             path, (unsigned long long)m.rows, take - k);
                break;
            }
            rows = (size_t)m.rows;
            base = s.n;
        } else if (m.rows != rows) {
            rc = err_set(TCJ_EIO, "%s: the HDF5 reader sent a piece of %llu rows in a band of %zu",
                         path, (unsigned long long)m.rows, rows);
            break;
        }
        if (m.col != col || m.cols == 0 || m.cols > d - col) {
            rc = err_set(TCJ_EIO,
                         "%s: the HDF5 reader sent %llu columns from column %llu where column %zu "
                         "of %zu was next",
                         path, (unsigned long long)m.cols, (unsigned long long)m.col, col, d);
            break;
        }
        rc = read_piece(fd, &s, base, rows, col, (size_t)m.cols, &scratch, opt->cancel, path);
        col += rc ? 0 : (size_t)m.cols;
        if (!rc && col == d) {
            for (size_t i = 0; i < rows; i++)
                ld_commit_stored(&s, base + i, opt->offset + k + i);
            k += rows;
            col = 0;
        }
    }
    free(scratch);
    if (rc) {
        ld_sink_free(&s);
        return rc;
    }
    return ld_finish(&s, out);
}

int load_hdf5(const char *path, const load_opts *opt, dataset *out)
{
    uint64_t size;
    ld_stamp stamp;
    FILE *probe = ld_open(path, &size, &stamp);
    if (!probe)
        return TCJ_EIO;
    fclose(probe);
    if (size == 0)
        return err_set(TCJ_EINVAL, "%s: empty file, no points", path);
    int fds[2];
    if (pipe(fds) != 0)
        return err_set(TCJ_EIO, "%s: cannot start the HDF5 reader: %s", path, strerror(errno));
    fflush(NULL);
    /* a crash must kill the child plainly (no sanitizer or fuzzer handler
     * writing reports for libhdf5), and Ctrl-C ends it. The signals stay
     * blocked across fork until the child has reset their handlers, so
     * one sent at once (a kill) still finds the default action. */
    static const int sigs[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGINT, SIGPIPE};
    sigset_t block, old;
    sigemptyset(&block);
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
        sigaddset(&block, sigs[i]);
    pthread_sigmask(SIG_BLOCK, &block, &old);
    pid_t parent = getpid(), pid = fork();
    if (pid != 0)
        pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        return err_set(TCJ_EIO, "%s: cannot start the HDF5 reader: %s", path, strerror(errno));
    }
    if (pid == 0) {
        for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
            signal(sigs[i], SIG_DFL);
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        if (__sanitizer_set_death_callback)
            __sanitizer_set_death_callback(child_die);
        /* a reader stuck in libhdf5 must not outlive a killed parent */
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent)
            _exit(1);
        close(fds[0]);
        mem_free_promptly();
        _exit(load_hdf5_child(path, opt, fds[1]));
    }
    close(fds[1]);
    int rc = load_hdf5_parent(path, opt, fds[0], out);
    if (rc == 1)
        rc = child_death(path, &pid);
    close(fds[0]);
    if (pid > 0) {
        /* after an error or a cancel the child may still be working */
        kill(pid, SIGKILL);
        while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
            ;
    }
    /* The child read the file by name: what the name holds now. */
    const int read_rc = rc;
    rc = ld_unchanged(NULL, path, &stamp, rc);
    if (rc && !read_rc)
        dataset_free(out);
    return rc;
}
