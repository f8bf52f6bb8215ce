/* Host memory: the dataset kept in the type it was loaded in.
 * Loading or generating f32 data peaks at about its own bytes, not an FP64
 * copy's; the element table widens exactly; the content hash is the FP64
 * values' whatever the type; and every CPU engine gives identical results
 * on copies of the same values held as u8, f16, f32 and f64. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "dataset.h"
#include "engine.h"
#include "err.h"
#include "same_types.h"

/* ---- peak RSS ---- */

/* A /proc/self/status field in bytes (kB there), 0 when missing. */
static size_t status_bytes(const char *field)
{
    FILE *f = fopen("/proc/self/status", "r");
    if (!f)
        return 0;
    char line[256];
    size_t v = 0, k = strlen(field);
    while (fgets(line, sizeof line, f))
        if (!strncmp(line, field, k) && line[k] == ':') {
            v = strtoull(line + k + 1, NULL, 10) * 1024;
            break;
        }
    fclose(f);
    return v;
}

/* How far two reads of the RSS may disagree with nothing mapped between
 * them. Linux keeps a process's RSS in per-CPU counters (percpu_counter,
 * 6.2+; before, per-thread caches synced every 64 faults) and reads their
 * sum approximately: up to the batch, max(32, 2 x CPUs) pages, on each
 * CPU, for each of the three counters (anon, file, shmem). Under load (a
 * parallel make test) VmHWM just reset can read that much above VmRSS. */
static size_t rss_slack(void)
{
    long cpus = sysconf(_SC_NPROCESSORS_CONF), page = sysconf(_SC_PAGESIZE);
    if (cpus < 1)
        cpus = 1;
    if (page < 1)
        page = 4096;
    const long batch = 2 * cpus > 32 ? 2 * cpus : 32;
    return (size_t)(3 * batch * cpus * page);
}

/* Reset VmHWM to the current RSS (Linux 4.0+: "5" to clear_refs); 0 when
 * it cannot be reset, and the peak cannot be measured from here. */
static int hwm_reset(void)
{
    FILE *f = fopen("/proc/self/clear_refs", "w");
    if (!f)
        return 0;
    int ok = fputs("5", f) >= 0;
    ok = (fclose(f) == 0) && ok;
    return ok && status_bytes("VmHWM") <= status_bytes("VmRSS") + rss_slack();
}

#if defined(__SANITIZE_ADDRESS__)
#define T_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define T_ASAN 1
#endif
#endif

/* What loading or generating may hold beyond 1.5x the values, derived from
 * the code: the loaders' row buffer (d doubles) and read chunk (64 KB on
 * the stack), stdio's buffer (4 KB), the hash's and the generator's blocks
 * (DATASET_BLOCK_VALUES doubles, 64 KB each), the name and path strings;
 * under 300 KB together. 1 MiB leaves room for malloc's bookkeeping and
 * for pages of the binary touched for the first time. */
#define T_FIXED_ALLOWANCE ((size_t)1 << 20)
#define T_N 200000
#define T_D 32

static const char *write_fvecs(void)
{
    static char path[512];
    snprintf(path, sizeof path, "%s/rss.fvecs", t_tmpdir());
    FILE *f = fopen(path, "wb");
    if (!f)
        return NULL;
    uint64_t z = 12345;
    float row[T_D];
    int32_t d = T_D;
    for (size_t i = 0; i < T_N; i++) {
        for (int k = 0; k < T_D; k++) {
            z = z * 6364136223846793005ULL + 1442695040888963407ULL;
            row[k] = (float)(z >> 40) / (float)(1 << 24);
        }
        fwrite(&d, 4, 1, f);
        fwrite(row, 4, T_D, f);
    }
    fclose(f);
    return path;
}

TEST(rss_of_an_f32_load_and_gen)
{
#ifdef T_ASAN
    t_skip("AddressSanitizer holds freed blocks and copies on realloc: RSS is not the program's");
#endif
    const char *path = write_fvecs();
    CHECK(path);
    const size_t bytes = (size_t)T_N * T_D * sizeof(float);
    const size_t bound = bytes + bytes / 2 + T_FIXED_ALLOWANCE;
    if (!hwm_reset())
        t_skip("cannot reset VmHWM (/proc/self/clear_refs)");
    const size_t before = status_bytes("VmHWM");
    dataset ds;
    CHECK_MSG(dataset_load(path, NULL, &ds) == 0, "%s", err_msg());
    const size_t grew = status_bytes("VmHWM") - before;
    CHECK(ds.type == DTYPE_F32 && dataset_bytes(&ds) == bytes);
    /* The values were touched: the measurement sees them (an FP64 copy
     * would be 2x bytes, beyond the bound). */
    CHECK_MSG(grew >= bytes / 2 && grew <= bound, "load: VmHWM grew %zu bytes for %zu of values",
              grew, bytes);
    const uint64_t h = ds.hash;
    dataset_free(&ds);

    gen_opts o;
    gen_opts_init(&o);
    o.n = T_N;
    o.d = T_D;
    CHECK(hwm_reset());
    const size_t before2 = status_bytes("VmHWM");
    CHECK(dataset_generate(&o, &ds) == 0);
    const size_t grew2 = status_bytes("VmHWM") - before2;
    CHECK(ds.type == DTYPE_F32 && dataset_bytes(&ds) == bytes);
    CHECK_MSG(grew2 >= bytes / 2 && grew2 <= bound, "gen: VmHWM grew %zu bytes for %zu of values",
              grew2, bytes);
    CHECK(ds.hash != h);
    dataset_free(&ds);
}

/* ---- the element table ---- */

TEST(element_table_widens_exactly)
{
    static const double held[] = {0, 1, 2, 7, 100, 255};
    for (int t = 0; t < DTYPE_COUNT; t++) {
        const dtype *e = dtype_get((dtype_id)t);
        CHECK(e->id == (dtype_id)t && dtype_find(e->name) == e);
        unsigned char store[6 * 8];
        double back[6];
        float back32[6];
        e->from_f64(held, 6, store);
        e->to_f64(store, 6, back);
        e->to_f32(store, 6, back32);
        for (int i = 0; i < 6; i++) {
            CHECK(e->holds(held[i]));
            CHECK(back[i] == held[i] && back32[i] == (float)held[i]);
        }
    }
    CHECK(dtype_find("i32") == NULL);
    CHECK(!dtype_get(DTYPE_U8)->holds(0.5) && !dtype_get(DTYPE_U8)->holds(256));
    CHECK(!dtype_get(DTYPE_U8)->holds(-1) && dtype_get(DTYPE_F16)->holds(-1));
    CHECK(dtype_get(DTYPE_F16)->holds(2048) && !dtype_get(DTYPE_F16)->holds(2049));
    CHECK(dtype_get(DTYPE_F32)->holds(16777216) && !dtype_get(DTYPE_F32)->holds(16777217));
    CHECK(!dtype_get(DTYPE_F32)->holds(0.1) && dtype_get(DTYPE_F64)->holds(0.1));
    CHECK(dtype_get(DTYPE_F16)->bytes == 2 && dtype_get(DTYPE_U8)->bytes == 1);
}

/* ---- the same values in four types ---- */

TEST(hash_is_the_values_whatever_the_type)
{
    double *x = values(300, 5, 0, 9);
    dataset ds[DTYPE_COUNT];
    memset(ds, 0, sizeof ds);
    for (int t = 0; t < DTYPE_COUNT; t++)
        dataset_set_f64(&ds[t], x, 300, 5, (dtype_id)t);
    for (int t = 0; t < DTYPE_COUNT; t++) {
        CHECK(ds[t].hash == ds[DTYPE_F64].hash);
        CHECK(dataset_bytes(&ds[t]) == 1500 * dtype_get((dtype_id)t)->bytes);
        double row[5];
        dataset_rows_f64(&ds[t], 299, 1, row);
        CHECK(!memcmp(row, x + 299 * 5, sizeof row));
        CHECK(dataset_value(&ds[t], 1234) == x[1234]);
    }
    for (int t = 0; t < DTYPE_COUNT; t++)
        dataset_free(&ds[t]);
    free(x);
}

TEST(engines_same_on_every_type_integers)
{
    /* 600 points of d = 6 in [0, 255]: every type holds them, and the
     * integer engines (cpu-int8) accept them. eps 90: some tens of
     * neighbours a point (the box is 255 wide). */
    double *x = values(600, 6, 0, 3);
    same_everywhere(x, 600, 6, 90.0, 0xf, 0);
    free(x);
}

TEST(engines_same_on_every_type_fractions)
{
    /* 5000 points of d = 3 on a 2^-10 grid: f16, f32 and f64 hold them;
     * n >= 4096 and low d: the CPU grid index is built from the typed
     * rows. eps 0.06: a few tens of neighbours a point. */
    double *x = values(5000, 3, 1, 4);
    same_everywhere(x, 5000, 3, 0.06, (1 << DTYPE_F64) | (1 << DTYPE_F32) | (1 << DTYPE_F16), 0);
    free(x);
}
