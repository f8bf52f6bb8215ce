/* File pair sinks: written through the engine and through put(), read back
 * and checked; errors name the file. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "check.h"
#include "engine.h"
#include "err.h"
#include "sink.h"

extern const engine engine_cpu;

static const uint32_t bi[] = {0, 5, 4000000000u, 7};
static const uint32_t bj[] = {0, 2, 1, 4000000001u};
static const double bd[] = {0, 2.25, 1e-300, 3};

static char *path_in_tmp(const char *name)
{
    static char p[512];
    snprintf(p, sizeof p, "%s/%s", t_tmpdir(), name);
    return p;
}

static void write_sample(const char *path, sink_format fmt)
{
    sink_file *f = NULL;
    if (sink_file_open(path, fmt, 0, NULL, &f) != 0)
        return;
    pair_sink s = sink_file_pair_sink(f);
    pair_batch b1 = {.k = 2, .i = bi, .j = bj, .d2 = bd};
    pair_batch b2 = {.k = 2, .i = bi + 2, .j = bj + 2, .d2 = bd + 2};
    s.put(s.ctx, &b1);
    s.put(s.ctx, &b2);
    sink_file_close(f, 1);
}

static long file_size(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return -1;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fclose(f);
    return n;
}

TEST(sink_u32_u64_read_back)
{
    char *p = path_in_tmp("pairs.u32");
    write_sample(p, SINK_U32);
    CHECK_EQ_INT(file_size(p), 4 * 8);
    FILE *f = fopen(p, "rb");
    CHECK(f);
    uint32_t v[8];
    CHECK_EQ_INT(fread(v, 4, 8, f), 8);
    fclose(f);
    for (int k = 0; k < 4; k++)
        CHECK(v[2 * k] == bi[k] && v[2 * k + 1] == bj[k]);

    p = path_in_tmp("pairs.u64");
    write_sample(p, SINK_U64);
    CHECK_EQ_INT(file_size(p), 4 * 16);
    f = fopen(p, "rb");
    CHECK(f);
    uint64_t w[8];
    CHECK_EQ_INT(fread(w, 8, 8, f), 8);
    fclose(f);
    for (int k = 0; k < 4; k++)
        CHECK(w[2 * k] == bi[k] && w[2 * k + 1] == bj[k]);
}

TEST(sink_csv_read_back)
{
    char *p = path_in_tmp("pairs.csv");
    write_sample(p, SINK_CSV);
    FILE *f = fopen(p, "r");
    CHECK(f);
    char line[256];
    CHECK(fgets(line, sizeof line, f));
    CHECK(strcmp(line, "i,j,dist\n") == 0);
    for (int k = 0; k < 4; k++) {
        CHECK(fgets(line, sizeof line, f));
        char *end;
        unsigned long i = strtoul(line, &end, 10);
        CHECK(*end == ',');
        unsigned long j = strtoul(end + 1, &end, 10);
        CHECK(*end == ',');
        double d = strtod(end + 1, &end);
        CHECK(*end == '\n');
        CHECK(i == bi[k] && j == bj[k]);
        CHECK(d == sqrt(bd[k])); /* 17 digits: the double comes back exactly */
    }
    CHECK(!fgets(line, sizeof line, f));
    fclose(f);
}

/* A join streamed to a file: as many records as the count says, each a
 * pair within eps. */
TEST(sink_from_engine)
{
    size_t n = 300, d = 3;
    double *x = malloc(n * d * sizeof *x);
    uint64_t st = 99;
    for (size_t k = 0; k < n * d; k++) {
        st = st * 6364136223846793005ull + 1442695040888963407ull;
        x[k] = (double)(st >> 11) * 0x1p-53;
    }
    dataset ds = {.n = n, .d = d, .v = x};
    engine_opts o;
    engine_opts_default(&o);
    o.batch_pairs = 100;
    join_spec s;
    memset(&s, 0, sizeof s);
    s.ds = &ds;
    s.eps = 0.3;
    s.q1 = n;
    s.opts = &o;
    s.mode = JOIN_COUNT;
    join_result r;
    CHECK_EQ_INT(engine_run(&engine_cpu, &s, &r), 0);
    uint64_t want = r.pairs;

    char *p = path_in_tmp("join.u32");
    sink_file *f;
    CHECK_EQ_INT(sink_file_open(p, SINK_U32, 0, NULL, &f), 0);
    s.mode = JOIN_PAIRS;
    s.sink = sink_file_pair_sink(f);
    CHECK_EQ_INT(engine_run(&engine_cpu, &s, &r), 0);
    CHECK_EQ_INT(sink_file_pairs(f), want);
    CHECK_EQ_INT(sink_file_close(f, 1), 0);
    CHECK_EQ_INT(file_size(p), (long)(want * 8));
    FILE *in = fopen(p, "rb");
    CHECK(in);
    uint32_t v[2];
    uint64_t got = 0, self = 0;
    while (fread(v, 4, 2, in) == 2) {
        double d2 = 0;
        for (size_t k = 0; k < d; k++)
            d2 += (x[v[0] * d + k] - x[v[1] * d + k]) * (x[v[0] * d + k] - x[v[1] * d + k]);
        CHECK(d2 <= 0.3 * 0.3);
        self += v[0] == v[1];
        got++;
    }
    fclose(in);
    CHECK_EQ_INT(got, want);
    CHECK_EQ_INT(self, n);
    free(x);
}

TEST(sink_errors_name_the_file)
{
    sink_file *f = NULL;
    CHECK_EQ_INT(sink_file_open("/nonexistent-dir/pairs.bin", SINK_U32, 0, NULL, &f), TCJ_EIO);
    CHECK_STR_CONTAINS(err_msg(), "/nonexistent-dir/pairs.bin");
    sink_format fmt;
    CHECK_EQ_INT(sink_format_parse("u16", &fmt), TCJ_EINVAL);
    CHECK_STR_CONTAINS(err_msg(), "u16");
    CHECK_EQ_INT(sink_format_parse("csv", &fmt), 0);
    CHECK_EQ_INT(fmt, SINK_CSV);
    CHECK(strcmp(sink_format_name(SINK_U64), "u64") == 0);

    /* A full device: the write error surfaces at put (buffer spilled) or
     * at close, naming the file. */
    FILE *probe = fopen("/dev/full", "wb");
    if (!probe)
        return;
    fclose(probe);
    CHECK_EQ_INT(sink_file_open("/dev/full", SINK_U64, 0, NULL, &f), 0);
    pair_sink s = sink_file_pair_sink(f);
    uint32_t *i = calloc(100000, sizeof *i);
    double *d2 = calloc(100000, sizeof *d2);
    pair_batch b = {.k = 100000, .i = i, .j = i, .d2 = d2};
    int rc = s.put(s.ctx, &b);
    if (rc == 0)
        rc = sink_file_close(f, 1);
    else
        sink_file_close(f, 1);
    CHECK_EQ_INT(rc, TCJ_EIO);
    CHECK_STR_CONTAINS(err_msg(), "/dev/full");
    free(i);
    free(d2);
}

/* ---- the output file rules (src/ofile.c), through the pair sink ---- */

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

static void put_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

/* The first line of a file (static buffer), "" when unreadable. */
static const char *first_line(const char *path)
{
    static char buf[256];
    buf[0] = '\0';
    FILE *f = fopen(path, "r");
    if (f) {
        if (!fgets(buf, sizeof buf, f))
            buf[0] = '\0';
        fclose(f);
    }
    return buf;
}

/* Files in dir whose name holds part. */
static int count_named(const char *dir, const char *part)
{
    DIR *d = opendir(dir);
    int n = 0;
    struct dirent *e;
    while (d && (e = readdir(d)))
        n += strstr(e->d_name, part) != NULL;
    if (d)
        closedir(d);
    return n;
}

static char *sub_dir(const char *name)
{
    static char p[512];
    snprintf(p, sizeof p, "%s/%s", t_tmpdir(), name);
    mkdir(p, 0700);
    return p;
}

static void put_pairs(sink_file *f)
{
    pair_sink s = sink_file_pair_sink(f);
    pair_batch b1 = {.k = 4, .i = bi, .j = bj, .d2 = bd};
    s.put(s.ctx, &b1);
}

TEST(sink_appears_whole_or_not_at_all)
{
    char dir[512], p[600];
    snprintf(dir, sizeof dir, "%s", sub_dir("whole"));
    snprintf(p, sizeof p, "%s/pairs.csv", dir);
    sink_file *f = NULL;
    CHECK_EQ_INT(sink_file_open(p, SINK_CSV, 0, NULL, &f), 0);
    put_pairs(f);
    /* While it is written only the temporary file NAME.tcjoin-partial-XXXXXX exists (src/ofile.c).
     */
    CHECK(access(p, F_OK) != 0);
    CHECK_EQ_INT(count_named(dir, ".tcjoin-"), 1);
    CHECK_EQ_INT(sink_file_close(f, 1), 0);
    CHECK(strcmp(first_line(p), "i,j,dist\n") == 0);
    CHECK_EQ_INT(count_named(dir, ".tcjoin-"), 0);

    /* A failed run (keep 0) leaves the old file and no temporary one. */
    CHECK_EQ_INT(sink_file_open(p, SINK_U32, 1, NULL, &f), 0);
    put_pairs(f);
    CHECK_EQ_INT(sink_file_close(f, 0), 0);
    CHECK(strcmp(first_line(p), "i,j,dist\n") == 0);
    CHECK_EQ_INT(count_named(dir, ".tcjoin-"), 0);
    /* A new file gets the permissions of any new file (umask), not 0600. */
    struct stat sb;
    mode_t mask = umask(022);
    CHECK_EQ_INT(sink_file_open(p, SINK_U32, 1, NULL, &f), 0);
    CHECK_EQ_INT(sink_file_close(f, 1), 0);
    umask(mask);
    CHECK(stat(p, &sb) == 0);
    CHECK_EQ_INT(sb.st_mode & 0777, 0644);
}

TEST(sink_refuses_existing_file_and_link_without_force)
{
    char dir[512], p[600], target[600], link[600];
    snprintf(dir, sizeof dir, "%s", sub_dir("existing"));
    snprintf(p, sizeof p, "%s/old.bin", dir);
    put_text(p, "old\n");
    sink_file *f = NULL;
    CHECK_EQ_INT(sink_file_open(p, SINK_U32, 0, NULL, &f), TCJ_EINVAL);
    CHECK_STR_CONTAINS(err_msg(), p);
    CHECK_STR_CONTAINS(err_msg(), "exists; add force");
    CHECK(strcmp(first_line(p), "old\n") == 0);
    CHECK_EQ_INT(sink_file_open(p, SINK_CSV, 1, NULL, &f), 0);
    CHECK_EQ_INT(sink_file_close(f, 1), 0);
    CHECK(strcmp(first_line(p), "i,j,dist\n") == 0);

    snprintf(target, sizeof target, "%s/target", dir);
    snprintf(link, sizeof link, "%s/link", dir);
    put_text(target, "keep\n");
    CHECK(symlink("target", link) == 0);
    CHECK_EQ_INT(sink_file_open(link, SINK_CSV, 0, NULL, &f), TCJ_EINVAL);
    CHECK_STR_CONTAINS(err_msg(), "symbolic link");
    CHECK_EQ_INT(sink_file_open(link, SINK_CSV, 1, NULL, &f), 0);
    CHECK_EQ_INT(sink_file_close(f, 1), 0);
    struct stat sb;
    CHECK(lstat(link, &sb) == 0 && S_ISREG(sb.st_mode));
    CHECK(strcmp(first_line(target), "keep\n") == 0);
    /* A dangling link counts as a link too: nothing is created through it. */
    char dang[600];
    snprintf(dang, sizeof dang, "%s/dangling", dir);
    CHECK(symlink("nowhere", dang) == 0);
    CHECK_EQ_INT(sink_file_open(dang, SINK_CSV, 0, NULL, &f), TCJ_EINVAL);
    char nowhere[600];
    snprintf(nowhere, sizeof nowhere, "%s/nowhere", dir);
    CHECK(access(nowhere, F_OK) != 0);
}

TEST(sink_never_writes_the_session_log)
{
    char dir[512], log[600], name[700];
    snprintf(dir, sizeof dir, "%s", sub_dir("log"));
    snprintf(log, sizeof log, "%s/sessions.db", dir);
    static const char *const suffix[] = {"", "-wal", "-shm"};
    for (int k = 0; k < 3; k++) {
        snprintf(name, sizeof name, "%s%s", log, suffix[k]);
        put_text(name, "log\n");
    }
    sink_file *f = NULL;
    for (int k = 0; k < 3; k++) {
        snprintf(name, sizeof name, "%s%s", log, suffix[k]);
        CHECK_EQ_INT(sink_file_open(name, SINK_U32, 1, log, &f), TCJ_EINVAL);
        CHECK_STR_CONTAINS(err_msg(), "is the open session log");
        CHECK(strcmp(first_line(name), "log\n") == 0);
    }
    /* Other names for the same files: by device and inode, not by name. */
    snprintf(name, sizeof name, "%s/hard", dir);
    CHECK(link(log, name) == 0);
    CHECK_EQ_INT(sink_file_open(name, SINK_U32, 1, log, &f), TCJ_EINVAL);
    snprintf(name, sizeof name, "%s/soft", dir);
    CHECK(symlink("sessions.db-wal", name) == 0);
    CHECK_EQ_INT(sink_file_open(name, SINK_U32, 1, log, &f), TCJ_EINVAL);
    snprintf(name, sizeof name, "%s/../log/./sessions.db-shm", dir);
    CHECK_EQ_INT(sink_file_open(name, SINK_U32, 1, log, &f), TCJ_EINVAL);
    /* Another file beside it is fine. */
    snprintf(name, sizeof name, "%s/pairs.bin", dir);
    CHECK_EQ_INT(sink_file_open(name, SINK_U32, 0, log, &f), 0);
    CHECK_EQ_INT(sink_file_close(f, 1), 0);
    CHECK_EQ_INT(count_named(dir, ".tcjoin-"), 0);
}

TEST(sink_writes_devices_in_place)
{
    /* /dev/null exists but is nothing to replace: no force needed, and it
     * stays a device (a rename over it would have removed it). */
    sink_file *f = NULL;
    CHECK_EQ_INT(sink_file_open("/dev/null", SINK_CSV, 0, NULL, &f), 0);
    put_pairs(f);
    CHECK_EQ_INT(sink_file_close(f, 1), 0);
    struct stat sb;
    CHECK(stat("/dev/null", &sb) == 0 && S_ISCHR(sb.st_mode));
    /* /dev/stdout of a process whose stdout is a file: appended to. */
    char dir[512], p[600];
    snprintf(dir, sizeof dir, "%s", sub_dir("stdout"));
    snprintf(p, sizeof p, "%s/redirected", dir);
    put_text(p, "before\n");
    int fd = open(p, O_WRONLY | O_APPEND);
    CHECK(fd >= 0);
    char name[64];
    snprintf(name, sizeof name, "/proc/self/fd/%d", fd);
    CHECK_EQ_INT(sink_file_open(name, SINK_CSV, 0, NULL, &f), 0);
    CHECK_EQ_INT(sink_file_close(f, 1), 0);
    close(fd);
    CHECK(strcmp(first_line(p), "before\n") == 0);
    CHECK(lstat(p, &sb) == 0 && sb.st_size == (off_t)strlen("before\ni,j,dist\n"));
    CHECK_EQ_INT(count_named(dir, ".tcjoin-"), 0);
}
