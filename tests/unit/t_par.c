/* src/par.c: par_zero clears every byte it is given and no byte beyond,
 * below PAR_MIN (the caller's thread) and above it (par_for's ranges,
 * whose ends fall anywhere in a page), checked byte by byte against the
 * guard bytes around the buffer. par_threads, whose workers are kept
 * between calls: every share of every call runs once, on threads of its
 * own (a barrier of all of them passes), from one caller after another
 * with changing counts, from several callers at once, from inside a
 * share, and in a forked child, which has none of its parent's workers.
 * par_fault_in: bytes kept, pages made resident. */
#include "check.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "par.h"

static void check_zero(size_t bytes, size_t off)
{
    const size_t guard = 64;
    unsigned char *buf = malloc(bytes + 2 * guard + off);
    CHECK(buf != NULL);
    if (!buf)
        return;
    memset(buf, 0xab, bytes + 2 * guard + off);
    unsigned char *p = buf + guard + off;
    par_zero(p, bytes);
    size_t bad = 0, first = (size_t)-1;
    for (size_t i = 0; i < bytes; i++)
        if (p[i] != 0 && bad++ == 0)
            first = i;
    CHECK_MSG(bad == 0, "%zu bytes at offset %zu: %zu not zeroed, the first at %zu", bytes, off,
              bad, first);
    for (size_t i = 0; i < guard + off; i++)
        CHECK_MSG(buf[i] == 0xab, "%zu bytes: byte %zu before the buffer changed", bytes, i);
    for (size_t i = 0; i < guard; i++)
        CHECK_MSG(p[bytes + i] == 0xab, "%zu bytes: byte %zu after the buffer changed", bytes, i);
    free(buf);
}

TEST(zero_every_byte_and_no_other)
{
    check_zero(0, 0);
    check_zero(1, 3);
    check_zero(PAR_MIN - 1, 5);                     /* the caller's thread */
    check_zero(PAR_MIN, 0);                         /* par_for's ranges from here */
    check_zero(3 * PAR_MIN + 12345, 7);             /* ranges not a multiple of a page */
    check_zero(PAR_MAX_THREADS * 4096 * 33 + 1, 1); /* an odd last range */
}

/* par_fault_in leaves every byte as it was and makes the pages resident:
 * ranges of fresh pages (an anonymous mapping, none touched: mincore says
 * so first), of pages all resident (a no-op), and a range half touched,
 * with odd starts and ends; each byte of each range checked against the
 * pattern written before (the touched ones) or zero (the fresh ones). */
static int all_resident(const unsigned char *p, size_t bytes)
{
    const size_t pg = (size_t)sysconf(_SC_PAGESIZE);
    const uintptr_t a = (uintptr_t)p & ~(uintptr_t)(pg - 1);
    const size_t pages = ((uintptr_t)p + bytes - a + pg - 1) / pg;
    unsigned char *v = malloc(pages);
    int ok = v && mincore((void *)a, pages * pg, v) == 0;
    for (size_t k = 0; ok && k < pages; k++)
        ok = v[k] & 1;
    free(v);
    return ok;
}

TEST(fault_in_keeps_bytes_and_makes_pages_resident)
{
    const size_t pg = (size_t)sysconf(_SC_PAGESIZE), len = 3 * PAR_MIN;
    unsigned char *m =
        mmap(NULL, 3 * len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(m != MAP_FAILED);
    if (m == MAP_FAILED)
        return;
    unsigned char *fresh = m + 123, *kept = m + len + 7, *half = m + 2 * len + pg - 5;
    const size_t nf = len - 1000, nk = 5 * pg + 3, nh = len - pg;
    CHECK_MSG(!all_resident(fresh, nf), "a fresh mapping's pages are resident already");
    for (size_t i = 0; i < nk; i++)
        kept[i] = (unsigned char)(i * 7 + 1);
    for (size_t i = 0; i < nh / 2; i++)
        half[i] = (unsigned char)(i * 13 + 5);
    void *const p[] = {fresh, kept, half};
    const size_t bytes[] = {nf, nk, nh};
    par_fault_in(p, bytes, 3);
    CHECK_MSG(all_resident(fresh, nf) && all_resident(kept, nk) && all_resident(half, nh),
              "pages left out");
    size_t bad = 0;
    for (size_t i = 0; i < nf; i++)
        bad += fresh[i] != 0;
    for (size_t i = 0; i < nk; i++)
        bad += kept[i] != (unsigned char)(i * 7 + 1);
    for (size_t i = 0; i < nh; i++)
        bad += half[i] != (i < nh / 2 ? (unsigned char)(i * 13 + 5) : 0);
    CHECK_MSG(bad == 0, "%zu bytes changed", bad);
    /* a small range below PAR_MIN (the caller's thread) */
    unsigned char *small = m + len - 900;
    void *const q[] = {small};
    const size_t qb[] = {800};
    par_fault_in(q, qb, 1);
    CHECK(all_resident(small, 800));
    munmap(m, 3 * len);
}

/* A call's shares: each counts its own runs, and all wait at a barrier
 * of nt (which only threads of their own can pass). */
typedef struct shares {
    atomic_int runs[PAR_MAX_THREADS];
    pthread_barrier_t bar;
    int nested; /* each share makes a call of its own */
    atomic_int inner;
} shares;

static void inner_share(void *ctx, int t)
{
    (void)t;
    atomic_fetch_add(&((shares *)ctx)->inner, 1);
}

static void share(void *ctx, int t)
{
    shares *s = ctx;
    atomic_fetch_add(&s->runs[t], 1);
    pthread_barrier_wait(&s->bar);
    if (s->nested)
        par_threads(3, inner_share, s);
}

/* One call of nt shares; the number of shares that did not run exactly
 * once (and inner calls short of 3 a share) returned. */
static int one_call(int nt, int nested)
{
    shares s;
    memset(&s, 0, sizeof s);
    s.nested = nested;
    pthread_barrier_init(&s.bar, NULL, (unsigned)nt);
    par_threads(nt, share, &s);
    pthread_barrier_destroy(&s.bar);
    int bad = 0;
    for (int t = 0; t < PAR_MAX_THREADS; t++)
        bad += atomic_load(&s.runs[t]) != (t < nt);
    if (nested && atomic_load(&s.inner) != 3 * nt)
        bad++;
    return bad;
}

TEST(threads_every_share_once_call_after_call)
{
    int bad = 0;
    for (int r = 0; r < 200; r++) {
        const int nt = 1 + (r * 7) % PAR_MAX_THREADS;
        bad += one_call(nt, 0);
    }
    CHECK_MSG(bad == 0, "%d shares ran other than once in 200 calls", bad);
    CHECK_MSG(one_call(PAR_MAX_THREADS, 1) == 0, "a call made from inside a share");
}

static void *caller(void *p)
{
    atomic_int *bad = p;
    for (int r = 0; r < 50; r++)
        atomic_fetch_add(bad, one_call(2 + r % (PAR_MAX_THREADS - 1), 0));
    return NULL;
}

TEST(threads_several_callers_at_once)
{
    atomic_int bad = 0;
    pthread_t th[4];
    int started[4];
    for (int k = 0; k < 4; k++)
        started[k] = pthread_create(&th[k], NULL, caller, &bad) == 0;
    for (int k = 0; k < 4; k++)
        if (started[k])
            pthread_join(th[k], NULL);
        else
            caller(&bad);
    CHECK_MSG(atomic_load(&bad) == 0, "%d shares ran other than once", atomic_load(&bad));
}

TEST(threads_in_a_forked_child)
{
    CHECK(one_call(PAR_MAX_THREADS, 0) == 0); /* the parent's workers started */
    const pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0)
        _exit(one_call(PAR_MAX_THREADS, 0) == 0 && one_call(5, 1) == 0 ? 0 : 1);
    int st = 0;
    CHECK(pid > 0 && waitpid(pid, &st, 0) == pid);
    CHECK_MSG(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the child's calls (status %d)", st);
    CHECK(one_call(PAR_MAX_THREADS, 0) == 0); /* and the parent's after it */
}
