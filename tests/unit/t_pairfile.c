/* The binary pair file's writer (src/sink_file.c packing whole chunks,
 * src/ofile.c's ofile_write): a file of many chunks and several write-back
 * spans, fed in batches whose sizes share no factor with the chunk, reads
 * back pair for pair; ofile_write after ofile_stream keeps the order; a
 * failed write names the file; a FIFO's waits end at the cancel flag and
 * its reader going away is said so. The expected records are computed here from
 * the pair numbers, independently of the writer. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "engine.h"
#include "err.h"
#include "ofile.h"
#include "sink.h"

/* Pair number k: rows spread over all 32 bits, so that a byte or word
 * out of place shows. */
static uint32_t row_i(uint64_t k)
{
    return (uint32_t)(k * 2654435761u);
}

static uint32_t row_j(uint64_t k)
{
    return (uint32_t)(k ^ 0xa5a5a5a5u) + 7u;
}

/* total pairs through put() in batches of batch pairs (the last shorter). */
static int write_pairs(const char *path, sink_format fmt, size_t total, size_t batch)
{
    sink_file *f = NULL;
    int rc = sink_file_open(path, fmt, 1, NULL, &f);
    if (rc)
        return rc;
    pair_sink s = sink_file_pair_sink(f);
    uint32_t *i = xmalloc(batch * sizeof *i), *j = xmalloc(batch * sizeof *j);
    double *d2 = xcalloc(batch, sizeof *d2);
    for (size_t k0 = 0; k0 < total && rc == 0; k0 += batch) {
        size_t m = total - k0 < batch ? total - k0 : batch;
        for (size_t k = 0; k < m; k++) {
            i[k] = row_i(k0 + k);
            j[k] = row_j(k0 + k);
        }
        pair_batch b = {.k = m, .i = i, .j = j, .d2 = d2};
        rc = s.put(s.ctx, &b);
    }
    if (rc == 0 && sink_file_pairs(f) != total)
        rc = -1;
    int rc2 = sink_file_close(f, rc == 0);
    free(i);
    free(j);
    free(d2);
    return rc ? rc : rc2;
}

/* Records that differ from pair numbers 0..total-1 (total+1 when the file
 * has the wrong length or cannot be read). */
static size_t check_pairs(const char *path, sink_format fmt, size_t total)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return total + 1;
    size_t bad = 0, k = 0;
    if (fmt == SINK_U64) {
        uint64_t v[2];
        for (; fread(v, sizeof v, 1, f) == 1; k++)
            bad += v[0] != row_i(k) || v[1] != row_j(k);
    } else {
        uint32_t v[2];
        for (; fread(v, sizeof v, 1, f) == 1; k++)
            bad += v[0] != row_i(k) || v[1] != row_j(k);
    }
    int extra = fgetc(f) != EOF;
    fclose(f);
    return k != total || extra ? total + 1 : bad;
}

static const char *tmp_path(const char *name)
{
    static char p[512];
    snprintf(p, sizeof p, "%s/%s", t_tmpdir(), name);
    return p;
}

/* u32: 9.5M pairs (76 MB: 19 chunks of 4 MB, more than one 64 MB
 * write-back span) in batches of 1,000,003 pairs. */
TEST(pairfile_u32_many_chunks_reads_back)
{
    const size_t total = 9500000;
    const char *p = tmp_path("many.u32");
    CHECK_EQ_INT(write_pairs(p, SINK_U32, total, 1000003), 0);
    CHECK_EQ_INT(check_pairs(p, SINK_U32, total), 0);
    remove(p);
}

/* u64: 16 bytes a record, batches of 3 and of 262,147 pairs (a chunk holds
 * 262,144), and a file of exactly one chunk. */
TEST(pairfile_u64_batches_across_chunks)
{
    const char *p = tmp_path("many.u64");
    CHECK_EQ_INT(write_pairs(p, SINK_U64, 1000000, 262147), 0);
    CHECK_EQ_INT(check_pairs(p, SINK_U64, 1000000), 0);
    CHECK_EQ_INT(write_pairs(p, SINK_U64, 10001, 3), 0);
    CHECK_EQ_INT(check_pairs(p, SINK_U64, 10001), 0);
    CHECK_EQ_INT(write_pairs(p, SINK_U64, 262144, 262144), 0);
    CHECK_EQ_INT(check_pairs(p, SINK_U64, 262144), 0);
    CHECK_EQ_INT(write_pairs(p, SINK_U64, 0, 1), 0);
    CHECK_EQ_INT(check_pairs(p, SINK_U64, 0), 0);
    remove(p);
}

/* ofile_write on its own and after the stream was opened: the bytes in
 * the order written. */
TEST(ofile_write_keeps_order)
{
    const char *p = tmp_path("order.bin");
    remove(p);
    ofile *o = NULL;
    CHECK_EQ_INT(ofile_open(p, 0, NULL, &o), 0);
    CHECK_EQ_INT(ofile_write(o, "abc", 3), 0);
    CHECK_EQ_INT(ofile_write(o, "", 0), 0);
    CHECK_EQ_INT(ofile_write(o, "de", 2), 0);
    CHECK_EQ_INT(ofile_commit(o), 0);
    FILE *f = fopen(p, "rb");
    char buf[16] = {0};
    CHECK(f && fread(buf, 1, sizeof buf, f) == 5 && memcmp(buf, "abcde", 5) == 0);
    if (f)
        fclose(f);

    CHECK_EQ_INT(ofile_open(p, 1, NULL, &o), 0);
    FILE *st = ofile_stream(o);
    CHECK(st != NULL);
    fputs("xy", st);
    CHECK_EQ_INT(ofile_write(o, "z", 1), 0);
    CHECK_EQ_INT(ofile_commit(o), 0);
    f = fopen(p, "rb");
    memset(buf, 0, sizeof buf);
    CHECK(f && fread(buf, 1, sizeof buf, f) == 3 && memcmp(buf, "xyz", 3) == 0);
    if (f)
        fclose(f);
    remove(p);
}

/* A full device: the first chunk's write fails with the file's name, and
 * the sink keeps failing. */
TEST(pairfile_write_error_names_the_file)
{
    FILE *probe = fopen("/dev/full", "wb");
    if (!probe)
        t_skip("skipped: no /dev/full");
    fclose(probe);
    ofile *o = NULL;
    CHECK_EQ_INT(ofile_open("/dev/full", 0, NULL, &o), 0);
    CHECK_EQ_INT(ofile_write(o, "abc", 3), TCJ_EIO);
    CHECK_STR_CONTAINS(err_msg(), "/dev/full");
    CHECK_STR_CONTAINS(err_msg(), "write failed");
    ofile_abort(o);
    CHECK_EQ_INT(write_pairs("/dev/full", SINK_U32, 10, 10), TCJ_EIO);
    CHECK_STR_CONTAINS(err_msg(), "/dev/full");
}

/* A FIFO at tmp_path(name), made anew; NULL when none can be made here. */
static const char *fifo_path(const char *name)
{
    const char *p = tmp_path(name);
    remove(p);
    return mkfifo(p, 0600) == 0 ? p : NULL;
}

/* A FIFO nobody opens: the open waits for a reader until the cancel flag
 * is set, then gives the bare cancel the command names. */
TEST(ofile_fifo_without_reader_ends_at_cancel)
{
    const char *p = fifo_path("noreader.fifo");
    if (!p)
        t_skip("skipped: cannot make a FIFO here");
    static volatile int cancel = 1;
    ofile_set_cancel(&cancel);
    ofile *o = NULL;
    int rc = ofile_open(p, 0, NULL, &o);
    ofile_set_cancel(NULL);
    CHECK_EQ_INT(rc, TCJ_ECANCEL);
    CHECK(o == NULL);
    CHECK(strcmp(err_msg(), ERR_CANCELLED) == 0);
    remove(p);
}

/* A reader that opened the FIFO and reads nothing: once the pipe is full
 * the write waits, and the cancel flag ends it, through ofile_write and
 * through the stream (ofile_commit says it). */
TEST(ofile_fifo_stalled_reader_ends_at_cancel)
{
    const char *p = fifo_path("stalled.fifo");
    if (!p)
        t_skip("skipped: cannot make a FIFO here");
    int rd = open(p, O_RDONLY | O_NONBLOCK);
    CHECK(rd >= 0);
    static volatile int cancel;
    cancel = 0;
    ofile_set_cancel(&cancel);
    size_t n = 4u << 20; /* far more than a pipe holds */
    char *buf = xcalloc(n, 1);
    ofile *o = NULL;
    CHECK_EQ_INT(ofile_open(p, 0, NULL, &o), 0);
    cancel = 1;
    int rc = ofile_write(o, buf, n);
    ofile_abort(o);
    CHECK_EQ_INT(rc, TCJ_ECANCEL);
    CHECK(strcmp(err_msg(), ERR_CANCELLED) == 0);

    cancel = 0;
    CHECK_EQ_INT(ofile_open(p, 0, NULL, &o), 0);
    FILE *f = ofile_stream(o);
    CHECK(f != NULL);
    cancel = 1;
    fwrite(buf, 1, n, f);
    rc = ofile_commit(o);
    ofile_set_cancel(NULL);
    free(buf);
    close(rd);
    CHECK_EQ_INT(rc, TCJ_ECANCEL);
    remove(p);
}

/* The reader went away: with SIGPIPE ignored (as tcjoin does), one error
 * naming the file, from ofile_write, from the stream's writer
 * (ofile_failure) and from ofile_commit. */
TEST(ofile_fifo_reader_gone_names_the_file)
{
    const char *p = fifo_path("gone.fifo");
    if (!p)
        t_skip("skipped: cannot make a FIFO here");
    void (*was)(int) = signal(SIGPIPE, SIG_IGN);
    char want[600];
    snprintf(want, sizeof want, "%s: the reader closed the pipe", p);
    int rd = open(p, O_RDONLY | O_NONBLOCK);
    CHECK(rd >= 0);
    ofile *o = NULL;
    CHECK_EQ_INT(ofile_open(p, 0, NULL, &o), 0);
    close(rd);
    CHECK_EQ_INT(ofile_write(o, "abc", 3), TCJ_EIO);
    CHECK(strcmp(err_msg(), want) == 0);
    ofile_abort(o);

    rd = open(p, O_RDONLY | O_NONBLOCK);
    CHECK(rd >= 0);
    CHECK_EQ_INT(ofile_open(p, 0, NULL, &o), 0);
    close(rd);
    FILE *f = ofile_stream(o);
    CHECK(f != NULL);
    fputs("abc", f);
    CHECK(fflush(f) == EOF);
    CHECK_EQ_INT(ofile_failure(o, err_set(TCJ_EIO, "a writer's own message")), TCJ_EIO);
    CHECK(strcmp(err_msg(), want) == 0);
    err_clear();
    CHECK_EQ_INT(ofile_commit(o), TCJ_EIO);
    CHECK(strcmp(err_msg(), want) == 0);
    signal(SIGPIPE, was);
    remove(p);
}
