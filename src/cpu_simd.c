/* Choosing the CPU kernels' instruction set at run time. */
#include "cpu_simd.h"

#include <string.h>

static const char *const cs_names[CPU_SIMD_NISA] = {"auto", "scalar", "avx2", "avx512"};
static const cpu_simd_ops *const cs_table[CPU_SIMD_NISA] = {NULL, &cpu_simd_scalar, &cpu_simd_avx2,
                                                            &cpu_simd_avx512};

int cpu_simd_parse(const char *name)
{
    for (int i = 0; i < CPU_SIMD_NISA; i++)
        if (name && strcmp(name, cs_names[i]) == 0)
            return i;
    return -1;
}

const char *cpu_simd_name(cpu_simd_isa isa)
{
    return isa >= 0 && isa < CPU_SIMD_NISA ? cs_names[isa] : "?";
}

int cpu_simd_has(cpu_simd_isa isa)
{
    if (isa <= CPU_SIMD_AUTO || isa >= CPU_SIMD_NISA || !cs_table[isa]->f64)
        return 0;
#if defined(__x86_64__) && defined(__GNUC__)
    /* The OS must save the wide registers too: __builtin_cpu_supports
     * reads CPUID and XCR0 (libgcc's cpu model), so both are covered. */
    /* the counting step uses popcnt, which every such CPU has */
    if (isa == CPU_SIMD_AVX2)
        return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("popcnt");
    if (isa == CPU_SIMD_AVX512)
        return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("popcnt");
#endif
    return isa == CPU_SIMD_SCALAR;
}

const cpu_simd_ops *cpu_simd_get(cpu_simd_isa want)
{
    if (want <= CPU_SIMD_AUTO || want >= CPU_SIMD_NISA)
        want = CPU_SIMD_NISA - 1;
    for (int i = want; i > CPU_SIMD_SCALAR; i--)
        if (cpu_simd_has((cpu_simd_isa)i))
            return cs_table[i];
    return &cpu_simd_scalar;
}
