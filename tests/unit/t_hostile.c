/* Hostile inputs: the headers that crashed, hung or aborted the
 * loaders, files and generators beyond memory, devices, and Ctrl-C. Each
 * hostile file must give one line naming the file, within a second, from
 * the library and from `tcjoin -e 'load FILE'` (exit status 1, the session
 * going on); Ctrl-C must stop gen and load within a second (batch: exit
 * 130; the line REPL: the next command runs). The files are crafted here in
 * t_tmpdir(); the byte layouts follow the format descriptions at the top of
 * src/load_npy.c, load_idx.c, load_vecs.c. */
#include <errno.h>
#include <fcntl.h>
#include <hdf5.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "dataset.h"
#include "err.h"
#include "center.h"
#include "engine.h"
#include "kdist.h"
#include "esc.h"
#include "fmt_fit.h"
#include "load_util.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* .npy v1 with this dict, padded to 64 bytes, then len data bytes. */
static const char *npy_file(const char *name, const char *dict, size_t len)
{
    unsigned char b[4096];
    size_t hl = (10 + strlen(dict) + 1 + 63) / 64 * 64 - 10, n = 0;
    memcpy(b, "\x93NUMPY\x01\x00", 8);
    b[8] = (unsigned char)hl;
    b[9] = (unsigned char)(hl >> 8);
    memcpy(b + 10, dict, strlen(dict));
    for (n = 10 + strlen(dict); n < 10 + hl - 1; n++)
        b[n] = ' ';
    b[n++] = '\n';
    memset(b + n, 0, len);
    return t_write(name, b, n + len);
}

/* idx: 00 00 08 (u8) NDIM, big-endian sizes, then len zero bytes. */
static const char *idx_file(const char *name, const uint32_t *dims, int nd, size_t len)
{
    unsigned char b[4096] = {0, 0, 0x08, (unsigned char)nd};
    size_t n = 4;
    for (int i = 0; i < nd; i++) {
        b[n++] = (unsigned char)(dims[i] >> 24);
        b[n++] = (unsigned char)(dims[i] >> 16);
        b[n++] = (unsigned char)(dims[i] >> 8);
        b[n++] = (unsigned char)dims[i];
    }
    memset(b + n, 0, len);
    return t_write(name, b, n + len);
}

/* An HDF5 file whose "train" is f32 rows x cols, chunked, never written:
 * libhdf5 allocates no storage for it, whatever the dims say. */
static const char *h5_unwritten(const char *name, hsize_t rows, hsize_t cols, int deflate)
{
    const char *p = t_path(name);
    hid_t f = H5Fcreate(p, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    hsize_t dims[2] = {rows, cols}, chunk[2] = {1024, cols};
    hid_t sp = H5Screate_simple(2, dims, NULL);
    hid_t pl = H5Pcreate(H5P_DATASET_CREATE);
    H5Pset_chunk(pl, 2, chunk);
    if (deflate)
        H5Pset_deflate(pl, 6);
    hid_t ds = H5Dcreate2(f, "train", H5T_IEEE_F32LE, sp, H5P_DEFAULT, pl, H5P_DEFAULT);
    if (f < 0 || sp < 0 || ds < 0)
        return NULL;
    H5Dclose(ds);
    H5Pclose(pl);
    H5Sclose(sp);
    H5Fclose(f);
    return p;
}

typedef struct hostile {
    const char *path;
    const char *opts; /* the load options, as typed */
    load_opts o;
    const char *want; /* what the one line must say */
} hostile;

/* The table of those inputs, one row per input. */
static int hostile_files(hostile *h)
{
    int k = 0;
    /* Fortran order, n·d·8 = (2^61+1)·4·8 wraps to 32: the 32 bytes present */
    h[k++] = (hostile){npy_file("wrap.npy",
                                "{'descr': '<f8', 'fortran_order': True, 'shape': "
                                "(2305843009213693953, 4), }",
                                32),
                       "",
                       {.header = -1},
                       "byte 59: shape: 9223372036854775812 x 8 does not fit in 64 bits"};
    h[k++] = (hostile){h5_unwritten("wrap.hdf5", ((hsize_t)1 << 61) + 1, 8, 0),
                       "",
                       {.header = -1},
                       "dataset 'train' dims: 2305843009213693953 x 8 does not fit in 64 bits"};
    static const float four[4] = {1, 2, 3, 4};
    h[k++] = (hostile){t_write("dim.raw", four, sizeof four),
                       "dtype=f32 dim=4611686018427387904",
                       {.header = -1, .dtype = "f32", .dim = (size_t)1 << 62},
                       "dim.raw: option dim: 4611686018427387904 x 4 does not fit in 64 bits"};
    static const unsigned char fv[12] = {0, 0, 0, 1, 0, 0, 128, 63, 0, 0, 0, 64}; /* d = 2^24 */
    h[k++] = (hostile){t_write("d24.fvecs", fv, sizeof fv),
                       "offset=5",
                       {.header = -1, .offset = 5},
                       "byte 0: record 0's d gives 1 x 16777216 values of 4 bytes = 67.1 MB, but "
                       "8 bytes are left from byte 4"};
    h[k++] = (hostile){npy_file("n0.npy",
                                "{'descr': '<f4', 'fortran_order': False, 'shape': "
                                "(0, 1099511627776), }",
                                0),
                       "",
                       {.header = -1},
                       "byte 60: shape gives n = 0: no points"};
    static const uint32_t i0[3] = {0, 65536, 65536};
    h[k++] = (hostile){idx_file("n0.idx", i0, 3, 0),
                       "",
                       {.header = -1},
                       "byte 4: dimension sizes gives n = 0: no points"};
    h[k++] = (hostile){h5_unwritten("huge.hdf5", 10000000000ull, 128, 0),
                       "",
                       {.header = -1},
                       "dataset 'train' dims gives 10000000000 x 128 values of 4 bytes = 5.1 TB, "
                       "but 0 bytes are stored"};
    /* the same, compressed: no storage bound but the ratio's */
    h[k++] = (hostile){h5_unwritten("hugez.hdf5", 10000000000ull, 128, 1),
                       "",
                       {.header = -1},
                       "dataset 'train' dims give 10000000000 x 128 values = 5.1 TB, but it "
                       "stores 0 bytes compressed (more than 4096:1 is refused)"};
    static const uint32_t d0[2] = {0xffffffffu, 0};
    h[k++] = (hostile){
        idx_file("d0.idx", d0, 2, 0), "", {.header = -1}, "byte 4: dimension sizes gives d = 0"};
    h[k++] = (hostile){npy_file("d0.npy",
                                "{'descr': '<f4', 'fortran_order': False, 'shape': "
                                "(18446744073709551615, 0), }",
                                0),
                       "",
                       {.header = -1},
                       "byte 60: shape gives d = 0"};
    return k;
}

TEST(issue_table_one_line_each)
{
    hostile h[16];
    int k = hostile_files(h);
    for (int i = 0; i < k; i++) {
        CHECK_MSG(h[i].path, "row %d: could not craft the file", i);
        dataset ds;
        double t0 = now();
        int rc = dataset_load(h[i].path, &h[i].o, &ds);
        double dt = now() - t0;
        CHECK_MSG(rc == TCJ_EINVAL, "%s: rc %d: %s", h[i].path, rc, err_msg());
        CHECK_STR_CONTAINS(err_msg(), h[i].path);
        CHECK_STR_CONTAINS(err_msg(), h[i].want);
        CHECK_MSG(!strchr(err_msg(), '\n'), "%s: more than one line", err_msg());
        CHECK_MSG(dt < 1.0, "%s: %.2f s to refuse", h[i].path, dt);
    }
}

/* A libhdf5 crash, as the parent sees it: the reading child dies of
 * SIGSEGV. The hunter thread finds the child the moment it is forked (the
 * kernel's list of our children) and sends the signal; libhdf5's start-up
 * alone keeps the child alive for milliseconds, far longer than that. */
static volatile int hunt_done;

static void *hunter(void *arg)
{
    char path[96];
    snprintf(path, sizeof path, "/proc/%d/task/%d/children", (int)getpid(), (int)getpid());
    while (!hunt_done) {
        FILE *f = fopen(path, "r");
        int child;
        if (!f)
            return NULL;
        int k = fscanf(f, "%d", &child);
        fclose(f);
        if (k == 1) {
            kill(child, SIGSEGV);
            *(int *)arg = 1;
            return NULL;
        }
    }
    return NULL;
}

TEST(hdf5_child_crash_is_one_line)
{
    /* 8 MB: the child blocks on the pipe while the parent reads, so it
     * lives long enough for the hunter even on a loaded machine */
    enum { N = 1 << 18, D = 8 };
    const char *p = t_path("ok.hdf5");
    hid_t f = H5Fcreate(p, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    float *v = calloc((size_t)N * D, sizeof *v);
    CHECK(v);
    hsize_t dims[2] = {N, D};
    hid_t sp = H5Screate_simple(2, dims, NULL);
    hid_t ds = H5Dcreate2(f, "train", H5T_IEEE_F32LE, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    H5Dwrite(ds, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, v);
    H5Dclose(ds);
    H5Sclose(sp);
    H5Fclose(f);
    free(v);
    dataset d;
    load_opts o = {.header = -1};
    /* The hunter sees the child and signals it; when a descheduled
     * hunter's signal reaches a child that has already sent everything,
     * the load succeeds (rightly: the parent has the whole file) and the
     * hunt is run again. */
    int rc = 0, hit = 0, tries = 0;
    for (; tries < 8 && rc == 0; tries++) {
        hit = 0;
        hunt_done = 0;
        pthread_t t;
        CHECK(pthread_create(&t, NULL, hunter, &hit) == 0);
        rc = dataset_load(p, &o, &d);
        hunt_done = 1;
        pthread_join(t, NULL);
        if (!hit)
            t_skip("the child was not seen in /proc (no CONFIG_PROC_CHILDREN?)");
        if (rc == 0)
            dataset_free(&d);
    }
    if (rc == 0)
        t_skip("in 8 tries every child finished before the hunter's signal");
    CHECK_MSG(rc == TCJ_EINVAL, "rc %d: %s", rc, err_msg());
    CHECK_STR_CONTAINS(err_msg(),
                       "ok.hdf5: the HDF5 library crashed reading this file (signal 11, ");
    CHECK(!strchr(err_msg(), '\n'));
    /* the parent is intact: the same file loads */
    CHECK_MSG(dataset_load(p, &o, &d) == 0, "%s", err_msg());
    CHECK_EQ_INT(d.n, N);
    CHECK_EQ_INT(d.d, D);
    dataset_free(&d);
}

/* A file of the repository, from build/tests/t_hostile's place. */
static const char *repo_file(const char *rel)
{
    static char path[1200];
    char self[1024];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0)
        return rel;
    self[n] = 0;
    *strrchr(self, '/') = 0;
    snprintf(path, sizeof path, "%s/../../%s", self, rel);
    return path;
}

/* build/tests/t_hostile -> build/tcjoin */
static const char *tcjoin_bin(void)
{
    static char path[1100];
    char self[1024];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0)
        return NULL;
    self[n] = 0;
    char *slash = strrchr(self, '/');
    *slash = 0;
    snprintf(path, sizeof path, "%s/../tcjoin", self);
    return access(path, X_OK) == 0 ? path : NULL;
}

typedef struct proc {
    pid_t pid;
    int out; /* stdout and stderr, or the pty master */
    char buf[16384];
    size_t len;
} proc;

/* Start tcjoin with args; its stdout and stderr into one pipe (or a pty
 * when tty, for the line REPL). */
static int unpoisoned; /* see BIG_GEN */

static int spawn(proc *p, const char *const *args, int tty)
{
    int fds[2] = {-1, -1};
    memset(p, 0, sizeof *p);
    if (tty) {
        fds[0] = posix_openpt(O_RDWR | O_NOCTTY);
        if (fds[0] < 0 || grantpt(fds[0]) || unlockpt(fds[0]))
            return -1;
    } else if (pipe(fds))
        return -1;
    char db[600];
    snprintf(db, sizeof db, "%s/hostile.db", t_tmpdir());
    p->pid = fork();
    if (p->pid == 0) {
        int w;
        if (tty) {
            setsid();
            w = open(ptsname(fds[0]), O_RDWR);
            struct termios t;
            tcgetattr(w, &t);
            t.c_lflag &= ~(tcflag_t)ECHO;
            tcsetattr(w, TCSANOW, &t);
            dup2(w, 0);
        } else {
            w = fds[1];
            int nul = open("/dev/null", O_RDONLY);
            dup2(nul, 0);
        }
        dup2(w, 1);
        dup2(w, 2);
        const char *asan = getenv("ASAN_OPTIONS");
        char opts[1024];
        snprintf(opts, sizeof opts, "%s%spoison_heap=0", asan ? asan : "", asan ? ":" : "");
        if (unpoisoned)
            setenv("ASAN_OPTIONS", opts, 1);
        const char *argv[16] = {tcjoin_bin(), "--db", db};
        int a = 3;
        for (int i = 0; args[i] && a < 15; i++)
            argv[a++] = args[i];
        argv[a] = NULL;
        execv(argv[0], (char **)argv);
        _exit(127);
    }
    if (!tty)
        close(fds[1]);
    p->out = fds[0];
    return p->pid > 0 ? 0 : -1;
}

/* Read output until it holds want or secs pass; 1 if found. */
static int wait_for(proc *p, const char *want, double secs)
{
    double end = now() + secs;
    for (;;) {
        p->buf[p->len] = 0;
        if (want && strstr(p->buf, want))
            return 1;
        double left = end - now();
        if (left <= 0)
            return 0;
        struct pollfd pf = {.fd = p->out, .events = POLLIN};
        if (poll(&pf, 1, (int)(left * 1000) + 1) <= 0)
            continue;
        ssize_t k = read(p->out, p->buf + p->len, sizeof p->buf - 1 - p->len);
        if (k <= 0)
            return want == NULL;
        p->len += (size_t)k;
    }
}

/* Exit status within secs (the rest of the output read), -1 if still running. */
static int finish(proc *p, double secs)
{
    double end = now() + secs;
    int st;
    for (;;) {
        wait_for(p, NULL, 0.05);
        pid_t r = waitpid(p->pid, &st, WNOHANG);
        if (r == p->pid)
            break;
        if (now() > end) {
            kill(p->pid, SIGKILL);
            waitpid(p->pid, &st, 0);
            close(p->out);
            return -1;
        }
    }
    wait_for(p, NULL, 0.1);
    close(p->out);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static int count_lines(const char *s)
{
    int n = 0;
    for (; *s; s++)
        n += *s == '\n';
    return n;
}

TEST(issue_table_batch_exit_1)
{
    const char *bin = tcjoin_bin();
    if (!bin)
        t_skip("no tcjoin binary beside the tests");
    hostile h[16];
    int k = hostile_files(h);
    for (int i = 0; i < k; i++) {
        CHECK(h[i].path);
        char cmd[1024];
        snprintf(cmd, sizeof cmd, "load '%s' %s", h[i].path, h[i].opts);
        const char *args[] = {"-e", cmd, NULL};
        proc p;
        CHECK(spawn(&p, args, 0) == 0);
        int st = finish(&p, 10);
        CHECK_MSG(st == 1, "%s: exit %d, expected 1: %s", cmd, st, p.buf);
        CHECK_MSG(count_lines(p.buf) == 1, "%s: expected one line, got: %s", cmd, p.buf);
        CHECK_STR_CONTAINS(p.buf, h[i].want);
    }
}

TEST(session_goes_on_after_hostile_load)
{
    const char *bin = tcjoin_bin();
    if (!bin)
        t_skip("no tcjoin binary beside the tests");
    hostile h[16];
    hostile_files(h);
    proc p;
    const char *args[] = {"--plain", NULL};
    CHECK(spawn(&p, args, 1) == 0);
    CHECK_MSG(wait_for(&p, "tcjoin> ", 10), "no prompt: %s", p.buf);
    char line[1024];
    snprintf(line, sizeof line, "load %s\ngen uniform n=10 d=2\nquit\n", h[0].path);
    CHECK(write(p.out, line, strlen(line)) == (ssize_t)strlen(line));
    CHECK_MSG(wait_for(&p, "dataset uniform-n10-d2-s1", 10), "the session did not go on: %s",
              p.buf);
    CHECK_STR_CONTAINS(p.buf, "does not fit in 64 bits");
    CHECK_EQ_INT(finish(&p, 10), 0);
}

TEST(beyond_memory_says_how_much)
{
    /* a sparse file of 2^40 bytes: 2^38 f32 values, 1.1 TB kept as f32 */
    const char *path = t_path("big.f32");
    int fd = open(path, O_CREAT | O_TRUNC | O_WRONLY, 0600);
    CHECK(fd >= 0);
    if (ftruncate(fd, (off_t)1 << 40) != 0) {
        close(fd);
        t_skip("this file system cannot hold a sparse 1 TB file");
    }
    close(fd);
    dataset ds;
    load_opts o = {.header = -1, .dim = 4};
    double t0 = now();
    CHECK(dataset_load(path, &o, &ds) == TCJ_ENOMEM);
    CHECK(now() - t0 < 1);
    CHECK_STR_CONTAINS(err_msg(), "big.f32: needs 1.1 TB of memory for 68719476736 x 4 f32 "
                                  "values; ");
    CHECK_STR_CONTAINS(err_msg(), " available");
    unlink(path);

    gen_opts g;
    gen_opts_init(&g);
    g.n = 1000000000000ull;
    g.d = 16;
    CHECK(dataset_generate(&g, &ds) == TCJ_ENOMEM);
    /* f32 values: 4 bytes each */
    CHECK_STR_CONTAINS(err_msg(), "gen uniform: needs 64.0 TB of memory for n=1000000000000 x "
                                  "d=16;");
    /* 1e11 points and centres of 16: 6.4 TB of f32 values and 12.8 TB of
     * FP64 centres, beyond any machine this runs on */
    g.kind = "gauss";
    g.n = 100000000000ull;
    CHECK(gen_opts_set(&g, "clusters", "100000000000") == 0);
    t0 = now();
    CHECK(dataset_generate(&g, &ds) == TCJ_ENOMEM);
    CHECK(now() - t0 < 1);
    CHECK_STR_CONTAINS(err_msg(), "gen gauss: needs 19.2 TB of memory for n=100000000000 x d=16 "
                                  "and clusters x d centres;");
}

TEST(devices_are_refused_fast)
{
    dataset ds;
    load_opts o = {.header = -1, .format = "csv"};
    double t0 = now();
    CHECK(dataset_load("/dev/zero", &o, &ds) == TCJ_EINVAL);
    CHECK_STR_CONTAINS(err_msg(), "/dev/zero:1: byte 0: a NUL byte: not a text file");
    CHECK(dataset_load("/dev/zero", NULL, &ds) == TCJ_EINVAL);
    CHECK_STR_CONTAINS(err_msg(), "/dev/zero: cannot tell the format");
    o = (load_opts){.header = -1, .format = "raw", .dtype = "f32", .dim = 4};
    CHECK(dataset_load("/dev/zero", &o, &ds) == TCJ_EINVAL);
    CHECK(now() - t0 < 1);
    /* a line with no end: refused at 256 MiB, not read until memory runs out */
    o = (load_opts){.header = -1, .format = "csv"};
    int fds[2];
    CHECK(pipe(fds) == 0);
    pid_t pid = fork();
    if (pid == 0) {
        close(fds[0]);
        static char ones[65536];
        memset(ones, '1', sizeof ones);
        while (write(fds[1], ones, sizeof ones) > 0)
            ;
        _exit(0);
    }
    close(fds[1]);
    char dev[64];
    snprintf(dev, sizeof dev, "/proc/self/fd/%d", fds[0]);
    int rc = dataset_load(dev, &o, &ds);
    close(fds[0]);
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    CHECK(rc == TCJ_EINVAL);
    CHECK_STR_CONTAINS(err_msg(), ":1: line longer than 256 MiB at byte 268435456");
}

TEST(cancel_flag_stops_load_and_gen)
{
    static volatile int cancel = 1;
    dataset ds;
    gen_opts g;
    gen_opts_init(&g);
    g.n = 100000;
    g.d = 4;
    g.cancel = &cancel;
    CHECK(dataset_generate(&g, &ds) == TCJ_ECANCEL);
    CHECK(strcmp(err_msg(), "gen uniform: cancelled") == 0);
    const char *kinds[] = {"sift5k.fvecs", "letter.csv", "olivetti_400x4096_u8.npy"};
    for (int i = 0; i < 3; i++) {
        load_opts o = {.header = -1, .cancel = &cancel};
        CHECK(dataset_load(t_dataset(kinds[i]), &o, &ds) == TCJ_ECANCEL);
        CHECK_STR_CONTAINS(err_msg(), ": cancelled");
        CHECK(strncmp(err_msg(), "load ", 5) == 0);
    }
}

/* The long commands Ctrl-C must stop: the issue's sizes. Under
 * AddressSanitizer malloc and free write the shadow of a whole allocation
 * (1 byte per 8: 480 MB for 3.84 GB), seconds on a busy machine outside any
 * loop that could look at Ctrl-C; these runs are about timing, not memory
 * errors (every other test covers those), so the sanitized tcjoin runs
 * them with poison_heap=0, and its leak check at exit gets 5 s. */
#define BIG_GEN "gen gauss n=3e7 d=16"
#define BIG_FILE ((off_t)2 << 30)
#define BUSY_MB 300
#if defined(__SANITIZE_ADDRESS__)
#define EXIT_SECS 5.0
#else
#define EXIT_SECS 1.0
#endif

/* Wait until the process holds mb MiB (the long command is under way, past
 * start-up, however slow a loaded machine makes it); 1 if it does. */
static int wait_rss(pid_t pid, long mb, double secs)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/statm", (int)pid);
    double end = now() + secs;
    while (now() < end) {
        FILE *f = fopen(path, "r");
        long size = 0, res = 0;
        if (!f)
            return 0;
        int k = fscanf(f, "%ld %ld", &size, &res);
        fclose(f);
        if (k == 2 && res * (sysconf(_SC_PAGESIZE) >> 10) >= mb * 1024)
            return 1;
        usleep(10 * 1000);
    }
    return 0;
}

/* Ctrl-C during a long command: batch mode exits 130 within a second. */
static void sigint_batch(const char *cmd)
{
    proc p;
    const char *args[] = {"-e", cmd, NULL};
    CHECK(spawn(&p, args, 0) == 0);
    if (!wait_rss(p.pid, BUSY_MB, 30)) {
        kill(p.pid, SIGKILL);
        finish(&p, 5);
        CHECK_MSG(0, "%s: did not get going: %s", cmd, p.buf);
    }
    double t0 = now();
    kill(p.pid, SIGINT);
    int stopped = wait_for(&p, "cancelled", 5);
    double dt = now() - t0;
    int st = finish(&p, 5);
    double dx = now() - t0;
    CHECK_MSG(stopped && dt < 1.0, "%s: %.2f s to stop after Ctrl-C: %s", cmd, dt, p.buf);
    CHECK_MSG(st == 130, "%s: exit %d after Ctrl-C, expected 130: %s", cmd, st, p.buf);
    CHECK_MSG(dx < EXIT_SECS, "%s: %.2f s to exit after Ctrl-C", cmd, dx);
    CHECK_STR_CONTAINS(p.buf, "cancelled");
}

TEST(sigint_stops_gen_and_load_in_batch)
{
    if (!tcjoin_bin())
        t_skip("no tcjoin binary beside the tests");
    unpoisoned = 1;
    sigint_batch(BIG_GEN);
    /* f32 zeros in a sparse file (2 GB, 256 MB sanitized): reading and
     * converting takes seconds */
    const char *path = t_path("zeros.f32");
    int fd = open(path, O_CREAT | O_TRUNC | O_WRONLY, 0600);
    CHECK(fd >= 0 && ftruncate(fd, BIG_FILE) == 0);
    close(fd);
    char cmd[700];
    snprintf(cmd, sizeof cmd, "load %s dim=16", path);
    sigint_batch(cmd);
    unlink(path);
    unpoisoned = 0;
}

TEST(sigint_in_repl_goes_on)
{
    if (!tcjoin_bin())
        t_skip("no tcjoin binary beside the tests");
    proc p;
    const char *args[] = {"--plain", NULL};
    unpoisoned = 1;
    CHECK(spawn(&p, args, 1) == 0);
    unpoisoned = 0;
    CHECK_MSG(wait_for(&p, "tcjoin> ", 10), "no prompt: %s", p.buf);
    const char *gen = BIG_GEN "\n";
    CHECK(write(p.out, gen, strlen(gen)) == (ssize_t)strlen(gen));
    if (!wait_rss(p.pid, BUSY_MB, 30)) {
        kill(p.pid, SIGKILL);
        finish(&p, 5);
        CHECK_MSG(0, "gen did not get going: %s", p.buf);
    }
    double t0 = now();
    kill(p.pid, SIGINT);
    CHECK_MSG(wait_for(&p, "cancelled", 5), "no cancel: %s", p.buf);
    double dt = now() - t0;
    CHECK_MSG(dt < 1.0, "%.2f s to stop after Ctrl-C", dt);
    const char *more = "gen uniform n=10 d=2\nquit\n";
    CHECK(write(p.out, more, strlen(more)) == (ssize_t)strlen(more));
    CHECK_MSG(wait_for(&p, "dataset uniform-n10-d2-s1", 10), "the REPL did not go on: %s", p.buf);
    CHECK_EQ_INT(finish(&p, 10), 0);
}

/* A real libhdf5 crash, found by tests/fuzz/fuzz_hdf5_child: a damaged
 * chunk layout message makes H5Dopen2 divide by zero (SIGFPE in
 * H5D__chunk_set_info) when opening "test". */
TEST(libhdf5_sigfpe_is_one_line)
{
    const char *p = repo_file("tests/fuzz/corpus/hdf5/libhdf5-sigfpe-chunk");
    if (access(p, R_OK) != 0)
        t_skip("tests/fuzz/corpus not beside the build");
    dataset d;
    load_opts o = {.header = -1, .h5name = "test"};
    CHECK(dataset_load(p, &o, &d) == TCJ_EINVAL);
    CHECK_STR_CONTAINS(err_msg(), "libhdf5-sigfpe-chunk: the HDF5 library crashed reading this "
                                  "file (signal 8, ");
    CHECK(!strchr(err_msg(), '\n'));
    /* its "train" is intact and loads, in the same process */
    o.h5name = NULL;
    CHECK_MSG(dataset_load(p, &o, &d) == 0, "%s", err_msg());
    CHECK_EQ_INT(d.n, 5);
    CHECK_EQ_INT(d.d, 3);
    dataset_free(&d);
    if (!tcjoin_bin())
        return;
    char cmd[1400];
    snprintf(cmd, sizeof cmd, "load '%s' dataset=test", p);
    const char *args[] = {"-e", cmd, NULL};
    proc pr;
    CHECK(spawn(&pr, args, 0) == 0);
    CHECK_EQ_INT(finish(&pr, 10), 1);
    CHECK_MSG(count_lines(pr.buf) == 1, "expected one line: %s", pr.buf);
    CHECK_STR_CONTAINS(pr.buf, "Floating point exception");
}

/* Another, found the same way: libhdf5 does not check a failed malloc of a
 * size read from the file and copies into NULL (SIGSEGV in
 * H5F__accum_read under H5C_protect) when opening "test". */
TEST(libhdf5_sigsegv_is_one_line)
{
    const char *p = repo_file("tests/fuzz/corpus/hdf5/libhdf5-segv-accum-read");
    if (access(p, R_OK) != 0)
        t_skip("tests/fuzz/corpus not beside the build");
    dataset d;
    load_opts o = {.header = -1, .h5name = "test"};
    CHECK(dataset_load(p, &o, &d) == TCJ_EINVAL);
    CHECK_STR_CONTAINS(err_msg(), "libhdf5-segv-accum-read: the HDF5 library crashed reading this "
                                  "file (signal 11, ");
    CHECK(!strchr(err_msg(), '\n'));
}

/* A damaged file that sends libhdf5 round a loop it never leaves (found by
 * tests/fuzz/fuzz_hdf5: H5Lexists reading a group's local heap again and
 * again, both "train" and "test"): the reader says nothing, and the parent
 * stops it after HDF5_LAYOUT_S (5 s) with one line.
 * The bound on the time: the 5 s and the 100 ms poll, and the kill and
 * wait of a child that spins (milliseconds): under 8 s leaves a loaded
 * machine some room without passing a reader that is not stopped. */
TEST(libhdf5_loop_is_stopped_in_one_line)
{
    const char *p = repo_file("tests/fixtures/hdf5/libhdf5-loop-local-heap");
    if (access(p, R_OK) != 0)
        t_skip("tests/fixtures not beside the build");
    dataset d;
    load_opts o = {.header = -1, .h5name = "test"};
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    CHECK(dataset_load(p, &o, &d) == TCJ_EINVAL);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    const double s = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    CHECK_STR_CONTAINS(err_msg(), "libhdf5-loop-local-heap: the HDF5 library read the file's "
                                  "layout for 5 s without an answer");
    CHECK(!strchr(err_msg(), '\n'));
    CHECK_MSG(s >= 4.9 && s < 8, "stopped after %.2f s", s);
    if (!tcjoin_bin())
        return;
    char cmd[1400];
    snprintf(cmd, sizeof cmd, "load '%s' dataset=train", p);
    const char *args[] = {"-e", cmd, NULL};
    proc pr;
    CHECK(spawn(&pr, args, 0) == 0);
    CHECK_EQ_INT(finish(&pr, 20), 1);
    CHECK_MSG(count_lines(pr.buf) == 1, "expected one line: %s", pr.buf);
    CHECK_STR_CONTAINS(pr.buf, "without an answer");
}

/* Ours, found by tests/fuzz/fuzz_hdf5_child: 2.2 KB of file whose "test"
 * declares 4278190078 x 419889406 doubles and as much storage. libhdf5
 * reports the declared storage, so with limit=1 (one row of 3.4 GB, within
 * memory) the child and the parent each allocated 3.4 GB before the read
 * failed. The storage is now bounded by the file's size. */
TEST(hdf5_storage_beyond_the_file_is_refused)
{
    const char *p = repo_file("tests/fuzz/corpus/hdf5/storage-beyond-file");
    if (access(p, R_OK) != 0)
        t_skip("tests/fuzz/corpus not beside the build");
    dataset d;
    load_opts o = {.header = -1, .h5name = "test", .limit = 1};
    CHECK(dataset_load(p, &o, &d) == TCJ_EINVAL);
    CHECK_STR_CONTAINS(err_msg(), "storage-beyond-file: dataset 'test' dims gives 4278190078 x "
                                  "419889406 values of 8 bytes = 14.4 EB, but 2.2 KB are stored");
    /* its "train" loads */
    o.h5name = NULL;
    o.limit = 0;
    CHECK_MSG(dataset_load(p, &o, &d) == 0, "%s", err_msg());
    CHECK_EQ_INT(d.n, 5);
    CHECK_EQ_INT(d.d, 3);
    dataset_free(&d);
}

/* ---- inputs that ended the process or never ended ---- */

TEST(gen_expo_tiny_lambda_ends)
{
    /* lambda = 1e-300: a draw of -ln(1-u)/lambda is never <= 1, so the
     * rejection loop never ended (and the first Ctrl-C was never seen). The
     * truncated law tends to uniform on [0, 1]: 20,000 values have mean
     * 1/2 within 5 sigma, sigma = sqrt(1/12 / 20000) = 0.00204. lambda =
     * 0.5 (inverted too): mean 1/lambda - 1/(e^lambda - 1) = 0.45850, and
     * the law's sd is below the uniform's, so the same 0.0102. */
    const char *const lambdas[2] = {"1e-300", "0.5"};
    const double means[2] = {0.5, 1 / 0.5 - 1 / expm1(0.5)};
    for (int i = 0; i < 2; i++) {
        gen_opts g;
        gen_opts_init(&g);
        g.kind = "expo";
        CHECK(gen_opts_set(&g, "lambda", lambdas[i]) == 0);
        g.n = 10000;
        g.d = 2;
        g.dtype = DTYPE_F64;
        dataset ds;
        double t0 = now();
        CHECK(dataset_generate(&g, &ds) == 0);
        CHECK(now() - t0 < 1);
        const double *v = ds.v;
        double sum = 0, lo = 1, hi = 0;
        for (size_t k = 0; k < ds.n * ds.d; k++) {
            sum += v[k];
            lo = fmin(lo, v[k]);
            hi = fmax(hi, v[k]);
        }
        CHECK(lo >= 0 && hi <= 1);
        CHECK_MSG(fabs(sum / (double)(ds.n * ds.d) - means[i]) < 0.0102,
                  "lambda %s: mean %.5f, expected %.5f", lambdas[i], sum / (double)(ds.n * ds.d),
                  means[i]);
        dataset_free(&ds);
    }
}

TEST(gen_more_clusters_than_points_refused)
{
    /* 1e9 centres for 100 points took 70 s and 15.6 GB */
    gen_opts g;
    gen_opts_init(&g);
    g.kind = "gauss";
    g.n = 100;
    g.d = 2;
    CHECK(gen_opts_set(&g, "clusters", "1000000000") == 0);
    dataset ds;
    double t0 = now();
    CHECK(dataset_generate(&g, &ds) == TCJ_EINVAL);
    CHECK(now() - t0 < 0.1);
    CHECK_STR_CONTAINS(err_msg(), "gen gauss: clusters=1000000000 is more than the n=100 points");
    CHECK(gen_opts_set(&g, "clusters", "100") == 0); /* as many as the points is allowed */
    CHECK(dataset_generate(&g, &ds) == 0);
    dataset_free(&ds);
}

TEST(subnormal_values_fit_at_once)
{
    /* the 18-byte CSV of subnormals: FP8's scale came from (int)floor(log2
     * (max / vmax)) with max / vmax = Inf (undefined; INT_MIN on x86), then
     * 2^31 steps of a loop: 73 s of `info` */
    static const double v[4] = {0x1p-1070, 4e-320, 1e-310, 2e-320};
    dataset ds;
    memset(&ds, 0, sizeof ds);
    ds.name = xstrdup("sub");
    ds.n = 2;
    ds.d = 2;
    ds.type = DTYPE_F64;
    ds.v = xmalloc(sizeof v);
    memcpy(ds.v, v, sizeof v);
    for (const fmt_fit_format *f = fmt_fit_formats; f->name; f++) {
        fmt_fit fit;
        double t0 = now();
        fmt_fit_compute(&ds, f, &fit);
        CHECK_MSG(now() - t0 < 0.5, "%s: %.1f s", f->name, now() - t0);
        if (!f->scaled)
            continue;
        /* the largest s with 1e-310 2^s <= max, from its definition */
        CHECK_MSG(ldexp(1e-310, fit.scale) <= f->max && ldexp(1e-310, fit.scale + 1) > f->max,
                  "%s: scale %d", f->name, fit.scale);
        CHECK_EQ_INT((int)fit.overflow, 0);
    }
    dataset_free(&ds);
    /* and end to end: `info` on the file */
    const char *bin = tcjoin_bin();
    if (!bin)
        return;
    static const char text[] = "0x1p-1070,4e-320\n1e-310,2e-320\n";
    const char *csv = t_write("sub.csv", text, strlen(text));
    char cmd[700];
    snprintf(cmd, sizeof cmd, "load '%s'; info", csv);
    const char *args[] = {"-e", cmd, NULL};
    proc p;
    CHECK(spawn(&p, args, 0) == 0);
    CHECK_EQ_INT(finish(&p, 5), 0);
    CHECK_STR_CONTAINS(p.buf, "fp8-e4m3  centred, scale 2^");
}

/* tcjoin SCRIPT: exit status within secs, one line of output holding want. */
static void script_refused(const char *script, const char *want, double secs)
{
    const char *args[] = {script, NULL};
    proc p;
    CHECK(spawn(&p, args, 0) == 0);
    double t0 = now();
    int st = finish(&p, 10);
    CHECK_MSG(st == 1, "%s: exit %d, expected 1: %s", script, st, p.buf);
    CHECK_MSG(now() - t0 < secs, "%s: %.1f s", script, now() - t0);
    CHECK_MSG(count_lines(p.buf) == 1, "%s: expected one line, got: %s", script, p.buf);
    CHECK_STR_CONTAINS(p.buf, want);
}

TEST(unreadable_scripts_are_one_line)
{
    if (!tcjoin_bin())
        t_skip("no tcjoin binary beside the tests");
    /* a directory: getline failed at once and tcjoin exited 0, silently */
    const char *d = t_path("script.d");
    mkdir(d, 0700);
    char want[700];
    snprintf(want, sizeof want, "%s:1: cannot read the script: Is a directory", d);
    script_refused(d, want, 2);
    /* /dev/zero: the line grew until memory ran out (with ulimit -v,
     * getline's ENOMEM ended the session silently, exit 0) */
    script_refused("/dev/zero", "/dev/zero:1: line longer than 1 MiB; not a script", 5);
}

/* n = 2 rows of d = 2^28 u8 in HDF5, deflated (526 KB): the rows are
 * 537 MB, but what d sizes beside them is several times that (a row of
 * FP64 2.1 GB, the means with their sums 4 x 2.1 GB, a candidate block
 * 16 x 2 GB). */
static const char *h5_wide(const char *name)
{
    const char *p = t_path(name);
    if (access(p, R_OK) == 0)
        return p;
    const hsize_t d = (hsize_t)1 << 28;
    hsize_t dims[2] = {2, d}, chunk[2] = {1, (hsize_t)1 << 22};
    hid_t f = H5Fcreate(p, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    hid_t sp = H5Screate_simple(2, dims, NULL);
    hid_t pl = H5Pcreate(H5P_DATASET_CREATE);
    H5Pset_chunk(pl, 2, chunk);
    H5Pset_deflate(pl, 1);
    hid_t ds = H5Dcreate2(f, "train", H5T_STD_U8LE, sp, H5P_DEFAULT, pl, H5P_DEFAULT);
    unsigned char *v = calloc(2 * d, 1);
    v[5] = 1;
    herr_t w = H5Dwrite(ds, H5T_NATIVE_UCHAR, H5S_ALL, H5S_ALL, H5P_DEFAULT, v);
    free(v);
    H5Dclose(ds);
    H5Pclose(pl);
    H5Sclose(sp);
    H5Fclose(f);
    return f < 0 || w < 0 ? NULL : p;
}

TEST(d_sized_memory_is_one_line)
{
    /* The load holds the rows and no FP64 row beside them (t_load's
     * hdf5_wide_rows_load_within_the_data loads such rows under a limit):
     * below the rows it is one line that counts them alone, at once. */
    const char *path = h5_wide("wide.hdf5");
    CHECK(path);
    ld_mem_cap_for_tests((uint64_t)256 << 20);
    dataset ds;
    load_opts o = {.header = -1};
    double t0 = now();
    CHECK(dataset_load(path, &o, &ds) == TCJ_ENOMEM);
    CHECK(now() - t0 < 5);
    CHECK_STR_CONTAINS(err_msg(), "wide.hdf5: needs 536.9 MB of memory for 2 x 268435456 u8 "
                                  "values; 268.4 MB available");
    CHECK(!strchr(err_msg(), '\n'));

    /* 1 GB available: the rows (537 MB) fit, what d sizes beside them does
     * not; each must be one line, not "out of memory allocating" and an
     * abort (exit 134 from `info` and `run cpu`). The same shape in memory
     * (pages never touched: zeros), as if loaded. */
    ld_mem_cap_for_tests((uint64_t)1 << 30);
    memset(&ds, 0, sizeof ds);
    ds.name = xstrdup("wide");
    ds.n = 2;
    ds.d = (size_t)1 << 28;
    ds.type = DTYPE_U8;
    ds.v = calloc(ds.n * ds.d, 1);
    CHECK(ds.v);
    dataset_info in;
    CHECK(dataset_info_compute(&ds, &in) == TCJ_ENOMEM);
    CHECK_STR_CONTAINS(err_msg(), "wide: needs 4.3 GB of memory for two rows widened to FP64;");
    CHECK(center_means(&ds, NULL) == NULL);
    CHECK_STR_CONTAINS(err_msg(), "wide: needs 8.6 GB of memory for the column means");
    engine_opts eo;
    engine_opts_default(&eo);
    join_spec s;
    memset(&s, 0, sizeof s);
    s.ds = &ds;
    s.eps = 1;
    s.q1 = ds.n;
    s.mode = JOIN_COUNT;
    s.opts = &eo;
    join_result r;
    /* cpu joins such rows row against row with no scratch the size of d:
     * the two zero rows are every pair within eps (4, self-pairs in) */
    CHECK_EQ_INT(engine_run(engine_find("cpu"), &s, &r), 0);
    CHECK(r.pairs == 4);
    /* the engines that copy the rows in their own format, and the CPU
     * k-distance's scratch (a block of 16 candidates: 34 GB) */
    const char *const copying[] = {"cpu-fp16", "cpu-bf16", "cpu-exact"};
    for (int k = 0; k < 3; k++) {
        CHECK_EQ_INT(engine_run(engine_find(copying[k]), &s, &r), TCJ_ENOMEM);
        CHECK_MSG(strstr(err_msg(), "wide: needs ") && !strchr(err_msg(), '\n'), "%s: %s",
                  copying[k], err_msg());
    }
    double kd[2];
    kdist_spec ks = {.ds = &ds, .q0 = 0, .q1 = 2, .k = 1, .opts = &eo, .out = kd};
    CHECK_EQ_INT(kdist_run(engine_find("cpu"), &ks, &r), TCJ_ENOMEM);
    CHECK_STR_CONTAINS(err_msg(), "wide: needs ");
    CHECK_STR_CONTAINS(err_msg(), "the k-distance's scratch;");
    ld_mem_cap_for_tests(0);
    dataset_free(&ds);
}

TEST(raw_c1_byte_never_reaches_the_terminal)
{
    /* 0x9b is CSI in 8 bits (some terminals act on "\x9b2J" as ESC [ 2 J);
     * it passed esc_text and ld_esc, which knew only C0, DEL and C1 in
     * UTF-8. Valid UTF-8 stays as it is. */
    char *e = esc_text("a\x9b"
                       "2Jb \xc3\xa9\xe2\x82\xac \xc2\x9b \xe2\x82 \xff",
                       0);
    const char *want = "a\\x9b2Jb \xc3\xa9\xe2\x82\xac \\u009b \\xe2\\x82 \\xff";
    CHECK_MSG(!strcmp(e, want), "esc_text gave '%s', expected '%s'", e, want);
    free(e);
    CHECK_MSG(!strcmp(ld_esc("x\x9b[31my \xc3\xa9", 40), "x\\x9b[31my \xc3\xa9"), "ld_esc: '%s'",
              ld_esc("x\x9b[31my \xc3\xa9", 40));
    /* the text loader's header=no message printed its field raw */
    static const char text[] = "na\x9b[2Jme,b\n1,2\n3,4\n";
    const char *csv = t_write("c1.csv", text, strlen(text));
    dataset ds;
    load_opts o = {.header = 0};
    CHECK(dataset_load(csv, &o, &ds) == TCJ_EINVAL);
    CHECK_STR_CONTAINS(err_msg(), "got 'na\\x9b[2Jme': the first line is a header");
    const char *bin = tcjoin_bin();
    if (!bin)
        return;
    char cmd[700];
    snprintf(cmd, sizeof cmd, "load '%s' header=no", csv);
    const char *args[] = {"-e", cmd, NULL};
    proc p;
    CHECK(spawn(&p, args, 0) == 0);
    CHECK_EQ_INT(finish(&p, 5), 1);
    CHECK_MSG(!strchr(p.buf, '\x9b'), "a raw 0x9b reached the terminal: %s", p.buf);
    CHECK_STR_CONTAINS(p.buf, "na\\x9b[2Jme");
}

TEST(hdf5_values_at_metadata_are_refused)
{
    /* A layout message pointing its values at the superblock: H5Dread
     * served the bytes from libhdf5's metadata cache (reading past it on
     * the heap under ASan) and the file's own header loaded as data, exit
     * 0. The file is a contiguous 4 x 8 u8 "train" whose address field is
     * rewritten to 0. */
    const char *p = t_path("overread.hdf5");
    hid_t f = H5Fcreate(p, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    hsize_t dims[2] = {4, 8};
    hid_t sp = H5Screate_simple(2, dims, NULL);
    hid_t ds = H5Dcreate2(f, "train", H5T_STD_U8LE, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    unsigned char v[32];
    for (int i = 0; i < 32; i++)
        v[i] = (unsigned char)(i + 1);
    CHECK(H5Dwrite(ds, H5T_NATIVE_UCHAR, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) >= 0);
    haddr_t addr = H5Dget_offset(ds);
    H5Dclose(ds);
    H5Sclose(sp);
    H5Fclose(f);
    CHECK(addr != HADDR_UNDEF);
    /* the layout message: address then size, 8 bytes each, little-endian */
    unsigned char key[16] = {0}, b[8192];
    for (int i = 0; i < 8; i++)
        key[i] = (unsigned char)((uint64_t)addr >> (8 * i));
    key[8] = 32;
    FILE *fp = fopen(p, "rb");
    size_t len = fread(b, 1, sizeof b, fp);
    fclose(fp);
    int hits = 0;
    for (size_t i = 0; i + 16 <= len; i++)
        if (!memcmp(b + i, key, 16)) {
            memset(b + i, 0, 8);
            hits++;
        }
    CHECK_EQ_INT(hits, 1);
    t_write("overread.hdf5", b, len);
    dataset out;
    load_opts o = {.header = -1};
    CHECK(dataset_load(p, &o, &out) == TCJ_EINVAL);
    CHECK_STR_CONTAINS(err_msg(), "overread.hdf5: dataset 'train' says its values lie at bytes 0 "
                                  "to 32, inside the file's superblock");
}

TEST(gen_counts_its_fp64_block)
{
    /* d = 2^28: the values (f32) are 2.15 GB, the FP64 block of one row
     * 2.15 GB beside them; under 2 GB available the 4.3 GB are refused at once
     * (the block was outside the check: an abort where memory ran out) */
    ld_mem_cap_for_tests((uint64_t)2 << 30);
    gen_opts g;
    gen_opts_init(&g);
    g.n = 2;
    g.d = (size_t)1 << 28;
    dataset ds;
    double t0 = now();
    CHECK(dataset_generate(&g, &ds) == TCJ_ENOMEM);
    CHECK(now() - t0 < 1);
    CHECK_STR_CONTAINS(err_msg(), "gen uniform: needs 4.3 GB of memory for n=2 x d=268435456;");
    ld_mem_cap_for_tests(0);
}

/* Found by tests/fuzz/fuzz_hdf5_pipe (CI, 2026-11-26): the child's shape
 * announced 1 x 2^20 u8 (1 MiB kept) and the parent held two FP64 rows
 * beside it (8 MiB each), each allocation checked alone. The parent now
 * reads the child's pieces straight into the array in the kept type: what
 * it needs is the array, and one byte less is refused before any
 * allocation. The stream's first message is src/load_hdf5.c's h5_msg: rc,
 * n, d, rows, col, cols and the type's name. */
TEST(hdf5_parent_needs_only_the_array)
{
    struct {
        int32_t rc;
        uint64_t n, d, rows, col, cols;
        char text[512];
    } m;
    memset(&m, 0, sizeof m);
    m.n = m.rows = 1;
    m.d = (uint64_t)1 << 20;
    strcpy(m.text, "u8");
    const char *p = t_path("shape.pipe");
    FILE *f = fopen(p, "wb");
    CHECK(f && fwrite(&m, sizeof m, 1, f) == 1);
    fclose(f);
    load_opts o;
    load_opts_init(&o);
    dataset ds;
    memset(&ds, 0, sizeof ds);
    for (int fits = 0; fits < 2; fits++) {
        ld_mem_cap_for_tests(fits ? m.d : m.d - 1);
        int fd = open(p, O_RDONLY);
        CHECK(fd >= 0);
        err_clear();
        int rc = load_hdf5_parent("input.hdf5", &o, fd, &ds);
        close(fd);
        if (fits) {
            /* all allocated, then the stream ends: the child's death */
            CHECK_EQ_INT(rc, 1);
        } else {
            CHECK_EQ_INT(rc, TCJ_ENOMEM);
            CHECK_STR_CONTAINS(err_msg(), "input.hdf5: needs 1.0 MB of memory for 1 x 1048576 u8 "
                                          "values; 1.0 MB available");
        }
    }
    ld_mem_cap_for_tests(0);
}
