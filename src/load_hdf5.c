/* ann-benchmarks HDF5 files through libhdf5: a 2-D float, double or integer
 * dataset ("train" unless load_opts.h5name names another, e.g. "test"); a
 * 1-D one loads as n x 1.
 *
 * libhdf5 crashes (SIGSEGV) and leaks on some malformed files, so it runs
 * only in a child process: the child opens the file, checks the dims
 * against overflow, the dataset's storage size and available memory, then
 * converts blocks of rows to double and writes them down a pipe straight
 * into the parent's final array. The parent never calls libhdf5; it checks
 * what the child says once more, and a child that dies becomes one line
 * naming the file. */
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
 * come) or an error; each later one announces rows x d doubles that follow
 * it, or an error. */
typedef struct h5_msg {
    int32_t rc;
    uint64_t n, d, rows;
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
    double *buf = NULL;
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
    /* blocks of about 4 MiB of doubles, or one row: a row of d = 2^28 is
     * 2.1 GB of doubles, checked before the shape is sent */
    size_t block = (size_t)(1 << 19) / d + 1;
    if (block > take)
        block = take;
    if (!(buf = mem_alloc(path, "a block of FP64 rows", block * d, sizeof(double), 0))) {
        rc = TCJ_ENOMEM;
        goto out;
    }
    h5_msg m;
    memset(&m, 0, sizeof m);
    m.n = n;
    m.d = d;
    m.rows = take;
    snprintf(m.text, sizeof m.text, "%s", keep->name);
    if (write_full(fd, &m, sizeof m))
        goto out;
    for (size_t k = 0; k < take; k += block) {
        size_t rows = take - k < block ? take - k : block;
        hsize_t start[2] = {opt->offset + k, 0}, count[2] = {rows, d};
        H5Sselect_hyperslab(space, H5S_SELECT_SET, start, NULL, count, NULL);
        hid_t mspace = H5Screate_simple(rank, count, NULL);
        herr_t r = H5Dread(dset, H5T_NATIVE_DOUBLE, mspace, space, H5P_DEFAULT, buf);
        H5Sclose(mspace);
        if (r < 0) {
            rc = err_set(TCJ_EIO, "%s: reading rows %zu to %zu of '%s' failed", path,
                         opt->offset + k, opt->offset + k + rows, shown);
            goto out;
        }
        m.rows = rows;
        if (write_full(fd, &m, sizeof m) || write_full(fd, buf, rows * d * sizeof(double)))
            goto out;
    }
out:
    if (rc)
        send_error(fd, rc);
    free(buf);
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

/* Read len bytes: 0, 1 when the pipe ends first or fails (the child died),
 * TCJ_ECANCEL once *cancel is set (polled every 100 ms while the child
 * works). */
static int read_full(int fd, void *p, size_t len, const volatile int *cancel, const char *path)
{
    char *c = p;
    size_t got = 0;
    while (got < len) {
        int rc = ld_cancel_check(cancel, path);
        if (rc)
            return rc;
        struct pollfd pf = {.fd = fd, .events = POLLIN};
        int r = poll(&pf, 1, 100);
        if (r < 0 && errno != EINTR)
            return 1;
        if (r <= 0)
            continue;
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

/* The child's rows come as doubles: the parent reads a bounded block
 * (about 4 MB, or one row, and no more rows than it takes) at a time,
 * whatever a message announces. */
static size_t block_rows(size_t d, size_t take)
{
    const size_t r = (size_t)(1 << 19) / d + 1;
    return r < take ? r : take;
}

uint64_t load_hdf5_row_bytes(uint64_t d, uint64_t take)
{
    uint64_t bytes;
    if (d == 0 || d > SIZE_MAX || take > SIZE_MAX || d > UINT64_MAX / sizeof(double) ||
        __builtin_mul_overflow((uint64_t)block_rows((size_t)d, (size_t)take) + 1,
                               d * sizeof(double), &bytes))
        return UINT64_MAX;
    return bytes;
}

/* The parent's side (also run in-process by tests/fuzz/fuzz_hdf5_pipe.c):
 * what the child wrote to fd, decoded into out. */
int load_hdf5_parent(const char *path, const load_opts *opt, int fd, dataset *out)
{
    h5_msg m;
    int rc = read_full(fd, &m, sizeof m, opt->cancel, path);
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
    size_t d = (size_t)m.d;
    /* Everything the parent allocates is checked at once, before any of
     * it: the array (checked alone above), the sink's FP64 row and the
     * block below. At d = 2^28 the two rows are 4 GB for a 268 MB array
     * of u8, and a check of each alone would take the first. */
    const size_t bufrows = block_rows(d, take);
    /* UINT64_MAX when it overflows: ld_mem_check then says "more than 2^63 bytes" */
    if ((rc = ld_mem_check(path, take, d, t ? t->id : DTYPE_F64, load_hdf5_row_bytes(d, take))) !=
        0)
        return rc;
    ld_sink s;
    if ((rc = ld_sink_init(&s, path, d, take, opt, t ? t->id : DTYPE_F64)) != 0)
        return rc;
    double *buf = mem_alloc(path, "a block of FP64 rows", bufrows * d, sizeof *buf, 0);
    if (!buf) {
        ld_sink_free(&s);
        return TCJ_ENOMEM;
    }
    for (size_t k = 0; k < take && !rc;) {
        rc = read_full(fd, &m, sizeof m, opt->cancel, path);
        if (!rc && m.rc) {
            rc = child_error(path, &m);
        } else if (!rc && (m.rows == 0 || m.rows > take - k)) {
            rc = err_set(TCJ_EIO, "%s: the HDF5 reader sent %llu rows where %zu were left", path,
                         (unsigned long long)m.rows, take - k);
        } else if (!rc) {
            for (size_t left = (size_t)m.rows; left && !rc;) {
                const size_t r = left < bufrows ? left : bufrows;
                if (!(rc = read_full(fd, buf, r * d * sizeof(double), opt->cancel, path))) {
                    /* The child's word on the type is checked too: every
                     * value must be one the type holds. */
                    for (size_t v = 0; v < r * d && !rc; v++)
                        if (!s.t->holds(buf[v]))
                            rc = err_set(TCJ_EIO,
                                         "%s: the HDF5 reader sent %g, which its type %s cannot "
                                         "hold",
                                         path, buf[v], s.t->name);
                    for (size_t i = 0; i < r && !rc; i++)
                        ld_commit_point(&s, buf + i * d, opt->offset + k + i, UINT64_MAX, 0);
                    k += r;
                    left -= r;
                }
            }
        }
    }
    free(buf);
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
