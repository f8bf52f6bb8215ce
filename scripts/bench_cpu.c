/* The CPU's FP64 peak and what the CPU join's kernels reach of it.
 *   bench_cpu [seconds]
 * prints, for each instruction set the CPU has, with one thread per online
 * CPU running at once:
 *   peak    independent FMA chains (vfmadd on zmm or ymm): lanes x 2 flops
 *           per FMA, the number a vendor's peak counts;
 *   form    the direct form s += (a-b)^2 (sub, mul, add: 3 flops, no FMA)
 *           on registers, every chain its own operands: the most this form
 *           can issue on this core;
 *   kernel  the join's kernel (src/cpu_simd_<isa>.c) on a candidate block
 *           that sits in L1, d = 128, 3 flops per dimension and pair;
 * each the best of 3 runs, in GFLOPS, and the kernel as a fraction of the
 * peak and of the form. The engine end to end (blocks, threads, sinks) is
 * timed by scripts/bench_cpu.sh through tcjoin. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cpu_join.h"
#include "cpu_simd.h"

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

#define CHAINS 16  /* zmm: 16 chains and 2 constants fit 32 registers */
#define CHAINS2 12 /* ymm: 12 chains and 2 constants fit 16 registers */
#define FORM2 6    /* ymm form: 6 sums, 6 operands, a and a temporary */

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

/* 16 chains: FMA latency 4 cycles x 2 pipes needs 8; 16 leave room. */
__attribute__((target("avx512f"), noinline)) static double peak_avx512(long it)
{
    __m512d a[CHAINS], m = _mm512_set1_pd(0.999999999), c = _mm512_set1_pd(1e-9);
    for (int i = 0; i < CHAINS; i++)
        a[i] = _mm512_set1_pd(i);
    for (long k = 0; k < it; k++) {
#pragma GCC unroll 16
        for (int i = 0; i < CHAINS; i++)
            a[i] = _mm512_fmadd_pd(a[i], m, c);
    }
    double s = 0;
    for (int i = 0; i < CHAINS; i++)
        s += _mm512_reduce_add_pd(a[i]);
    return s;
}

__attribute__((target("avx2,fma"), noinline)) static double peak_avx2(long it)
{
    __m256d a[CHAINS2], m = _mm256_set1_pd(0.999999999), c = _mm256_set1_pd(1e-9);
    for (int i = 0; i < CHAINS2; i++)
        a[i] = _mm256_set1_pd(i);
    for (long k = 0; k < it; k++) {
#pragma GCC unroll 16
        for (int i = 0; i < CHAINS2; i++)
            a[i] = _mm256_fmadd_pd(a[i], m, c);
    }
    double s = 0;
    for (int i = 0; i < CHAINS2; i++)
        s += a[i][0] + a[i][1] + a[i][2] + a[i][3];
    return s;
}

/* The form on registers: a changes every step (an empty asm hides its
 * value), each chain subtracts its own b, so nothing is hoisted. */
__attribute__((target("avx512f"), noinline)) static double form_avx512(long it)
{
    __m512d s[CHAINS], b[CHAINS], a = _mm512_set1_pd(0.5);
    for (int i = 0; i < CHAINS; i++) {
        s[i] = _mm512_setzero_pd();
        b[i] = _mm512_set1_pd(i * 1e-3);
    }
    for (long k = 0; k < it; k++) {
        __asm__ volatile("" : "+v"(a));
#pragma GCC unroll 16
        for (int i = 0; i < CHAINS; i++) {
            __m512d u = _mm512_sub_pd(a, b[i]);
            s[i] = _mm512_add_pd(s[i], _mm512_mul_pd(u, u));
        }
    }
    double r = 0;
    for (int i = 0; i < CHAINS; i++)
        r += _mm512_reduce_add_pd(s[i]);
    return r;
}

__attribute__((target("avx2"), noinline)) static double form_avx2(long it)
{
    __m256d s[FORM2], b[FORM2], a = _mm256_set1_pd(0.5);
    for (int i = 0; i < FORM2; i++) {
        s[i] = _mm256_setzero_pd();
        b[i] = _mm256_set1_pd(i * 1e-3);
    }
    for (long k = 0; k < it; k++) {
        __asm__ volatile("" : "+x"(a));
#pragma GCC unroll 16
        for (int i = 0; i < FORM2; i++) {
            __m256d u = _mm256_sub_pd(a, b[i]);
            s[i] = _mm256_add_pd(s[i], _mm256_mul_pd(u, u));
        }
    }
    double r = 0;
    for (int i = 0; i < FORM2; i++)
        r += s[i][0] + s[i][1] + s[i][2] + s[i][3];
    return r;
}
#endif

typedef struct job {
    int what; /* 0 peak, 1 form, 2 kernel */
    cpu_simd_isa isa;
    long it;
    double flops, sink;
    double cpu_s; /* the thread's own CPU time */
} job;

/* CPU time of the calling thread: on a machine shared with other work the
 * wall clock also counts the time other processes held our core. */
static double thread_cpu(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void run_job_body(job *j);

static void *run_job(void *arg)
{
    job *j = arg;
    double t0 = thread_cpu();
    run_job_body(j);
    j->cpu_s = thread_cpu() - t0;
    return NULL;
}

#define KD 128 /* dimensions of the kernel test */
#define KQ 64  /* query rows */

static void run_job_body(job *j)
{
    const cpu_simd_ops *ops = cpu_simd_get(j->isa);
    if (j->what == 2) {
        /* 32 candidates x 128 dims: 32 KiB, in L1 with the query rows. */
        const size_t nc = 32;
        double *x = aligned_alloc(64, KQ * KD * sizeof *x);
        double *p = aligned_alloc(64, nc * KD * sizeof *p);
        double *out = aligned_alloc(64, CPU_SIMD_MAX_ROWS * nc * sizeof *out);
        for (size_t i = 0; i < KQ * KD; i++)
            x[i] = (double)(i % 97) * 1e-2;
        cpu_join_transpose(p, x, sizeof *x, KD, 0, nc);
        for (long r = 0; r < j->it; r++)
            for (size_t q = 0; q < KQ; q += ops->f64_rows) {
                ops->f64(x + q * KD, ops->f64_rows, KD, p, nc, 1e300, out, nc, NULL);
                j->sink += out[0];
            }
        j->flops = 3.0 * KD * (double)nc * KQ * (double)j->it;
        free(x);
        free(p);
        free(out);
        return;
    }
#if defined(__x86_64__) && defined(__GNUC__)
    if (j->isa == CPU_SIMD_AVX512) {
        j->sink = j->what ? form_avx512(j->it) : peak_avx512(j->it);
        j->flops = (double)j->it * CHAINS * 8 * (j->what ? 3 : 2);
    } else {
        j->sink = j->what ? form_avx2(j->it) : peak_avx2(j->it);
        j->flops = (double)j->it * (j->what ? FORM2 * 4 * 3 : CHAINS2 * 4 * 2);
    }
#endif
}

/* GFLOPS of nthr threads running the same job at once, best of 5: each
 * thread's flops over its own CPU time, summed (the rate of nthr cores
 * that are all ours); *wall gets the best by the wall clock. */
static double measure(int what, cpu_simd_isa isa, int nthr, long it, double *wall)
{
    double best = 0, bw = 0;
    for (int rep = 0; rep < 5; rep++) {
        job jobs[256];
        pthread_t tid[256];
        double t0 = now();
        for (int t = 0; t < nthr; t++) {
            jobs[t] = (job){.what = what, .isa = isa, .it = it};
            pthread_create(&tid[t], NULL, run_job, &jobs[t]);
        }
        double g = 0, flops = 0;
        for (int t = 0; t < nthr; t++) {
            pthread_join(tid[t], NULL);
            g += jobs[t].flops / jobs[t].cpu_s / 1e9;
            flops += jobs[t].flops;
        }
        double gw = flops / (now() - t0) / 1e9;
        best = g > best ? g : best;
        bw = gw > bw ? gw : bw;
    }
    if (wall)
        *wall = bw;
    return best;
}

int main(int argc, char **argv)
{
    double secs = argc > 1 ? atof(argv[1]) : 0.5;
    long nc = sysconf(_SC_NPROCESSORS_ONLN);
    int nthr = nc > 0 && nc < 256 ? (int)nc : 1;
    printf("cpu: %s, %d threads\n", cpu_join_model(), nthr);
    printf("GFLOPS per CPU-second of each thread, summed over the threads (wall-clock "
           "figures in brackets)\n\n");
    printf("| path | peak FMA GFLOPS | form (a-b)^2 GFLOPS | kernel GFLOPS | kernel / peak | "
           "kernel / form |\n|---|---|---|---|---|---|\n");
    for (int isa = CPU_SIMD_SCALAR; isa < CPU_SIMD_NISA; isa++) {
        if (!cpu_simd_has((cpu_simd_isa)isa))
            continue;
        /* Size the runs from a short one. */
        double gk = measure(2, (cpu_simd_isa)isa, 1, 20, NULL);
        long itk = (long)(secs * gk * 1e9 / (3.0 * KD * 32 * KQ)) + 1;
        double kw, pw = 0, fw = 0;
        double kern = measure(2, (cpu_simd_isa)isa, nthr, itk, &kw);
        double peak = 0, form = 0;
        if (isa != CPU_SIMD_SCALAR) {
            double gp = measure(0, (cpu_simd_isa)isa, 1, 100000, NULL);
            long itp = (long)(secs * gp * 1e9 / (CHAINS * 16.0)) + 1;
            peak = measure(0, (cpu_simd_isa)isa, nthr, itp, &pw);
            form = measure(1, (cpu_simd_isa)isa, nthr, itp, &fw);
        }
        if (peak > 0)
            printf("| %s | %.1f (%.1f) | %.1f (%.1f) | %.1f (%.1f) | %.0f%% | %.0f%% |\n",
                   cpu_simd_name(isa), peak, pw, form, fw, kern, kw, 100 * kern / peak,
                   100 * kern / form);
        else
            printf("| %s | - | - | %.1f (%.1f) | - | - |\n", cpu_simd_name(isa), kern, kw);
    }
    return 0;
}
