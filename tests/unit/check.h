/* A small unit-test harness. Each tests/unit/t_*.c (and tests/gpu/g_*.c)
 * is one binary; TEST() registers a case; main() in check.c runs them all
 * and prints one line per case:
 *   ok - NAME
 *   not ok - NAME: file:line: what failed
 *   skip - NAME: reason
 * tests/run.sh counts those lines. */
#ifndef TCJ_CHECK_H
#define TCJ_CHECK_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

void t_register(const char *name, void (*fn)(void));
void t_fail(const char *file, int line, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void t_skip(const char *reason) __attribute__((noreturn));
/* Path of ../shared/datasets (or $TCJOIN_DATASETS); the file name appended. */
const char *t_dataset(const char *file);
/* A fresh temporary directory for this binary (removed at exit). */
const char *t_tmpdir(void);
/* t_tmpdir()/name, in one of 32 rotating buffers. */
const char *t_path(const char *name);
/* A file name under t_tmpdir() holding len bytes of data; its path (exits
 * the binary if it cannot be written). */
const char *t_write(const char *name, const void *data, size_t len);
/* The tests' generator, splitmix64: *state advanced, its next value; a
 * seed gives the same values on every machine. */
uint64_t t_splitmix(uint64_t *state);
/* The next value in [0, 1): t_splitmix's top 53 bits. */
double t_unit(uint64_t *state);

#define TEST(name)                                                                                 \
    static void name(void);                                                                        \
    __attribute__((constructor)) static void t_reg_##name(void)                                    \
    {                                                                                              \
        t_register(#name, name);                                                                   \
    }                                                                                              \
    static void name(void)

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            t_fail(__FILE__, __LINE__, "CHECK(%s)", #cond);                                        \
            return;                                                                                \
        }                                                                                          \
    } while (0)

#define CHECK_MSG(cond, ...)                                                                       \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            t_fail(__FILE__, __LINE__, __VA_ARGS__);                                               \
            return;                                                                                \
        }                                                                                          \
    } while (0)

#define CHECK_EQ_INT(a, b)                                                                         \
    do {                                                                                           \
        long long t_a_ = (long long)(a), t_b_ = (long long)(b);                                    \
        if (t_a_ != t_b_) {                                                                        \
            t_fail(__FILE__, __LINE__, "%s == %s: %lld != %lld", #a, #b, t_a_, t_b_);              \
            return;                                                                                \
        }                                                                                          \
    } while (0)

#define CHECK_NEAR(a, b, tol)                                                                      \
    do {                                                                                           \
        double t_a_ = (double)(a), t_b_ = (double)(b);                                             \
        if (!(fabs(t_a_ - t_b_) <= (tol))) {                                                       \
            t_fail(__FILE__, __LINE__, "%s ~ %s: %.17g vs %.17g (tol %g)", #a, #b, t_a_, t_b_,     \
                   (double)(tol));                                                                 \
            return;                                                                                \
        }                                                                                          \
    } while (0)

#define CHECK_STR_CONTAINS(hay, needle)                                                            \
    do {                                                                                           \
        const char *t_h_ = (hay), *t_n_ = (needle);                                                \
        if (!t_h_ || !strstr(t_h_, t_n_)) {                                                        \
            t_fail(__FILE__, __LINE__, "\"%s\" does not contain \"%s\"", t_h_ ? t_h_ : "(null)",   \
                   t_n_);                                                                          \
            return;                                                                                \
        }                                                                                          \
    } while (0)

#endif
