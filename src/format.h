/* Tensor-core number formats: one row per format in tc_formats
 * (src/format_table.c), the only place a format's facts are written. What
 * is derived from it:
 * - the engine rows: the GPU engine (`fasted`, `bf16`, ...) and its CPU
 *   twin `cpu-<name>`, generated at build time into engine_table.c by
 *   scripts/gen_formats.c (engine.in_bits, .lab, .lab_bits, .centers,
 *   .center_auto, .shifts, .precision, .summary, .format, .rank and .tcf);
 * - the CPU emulation's format (src/cpu_emul.h: cpu_emul_format is this
 *   struct, its run reads engine.tcf);
 * - the range table of `info` and the FP8 scale (src/fmt_fit.h:
 *   fmt_fit_formats is this table; rows with max 0 are not range formats);
 * - `info`'s and `precisions`' lists (the rows in order).
 * docs/ENGINES.md shows adding a row; tests/unit/t_format_table.c checks the
 * table and that the recipe's row compiles and equals the real one. */
#ifndef TCJ_FORMAT_H
#define TCJ_FORMAT_H

typedef struct tc_format {
    /* The range of the stored values (the first five fields keep the order
     * of the range table, so its positional rows stay valid):
     * name, largest finite value and smallest positive (subnormal) value
     * (max 0: not a float format, int8), no sign bit (negative data are
     * refused unless `set shift on` translates each column by its
     * minimum: src/shift.h), and whether the engines scale the data by a
     * power of two into the range first (FP8: src/fmt_fit.h). */
    const char *name;
    double max;
    double min_sub;
    int is_unsigned;
    int scaled;
    /* Significand bits, implicit bit included (11 fp16 and tf32, 8 bf16):
     * integer coordinates up to 2^bits are held exactly (engine.in_bits). */
    int bits;
    /* Bits each value is stored in (engine.lab_bits). */
    int storage_bits;
    /* One coordinate rounded from FP64 to the format, widened to float
     * exactly (the CPU emulation; to nearest, ties to even). Pure. */
    float (*round)(double x);
    /* The value the format saturates at (0: none; data beyond it get no
     * CPU grid index: their error is not bounded by the rounding). */
    double saturates_at;

    /* The engines. */
    const char *engine;    /* the GPU engine's name; its CPU twin is cpu-<name> */
    const char *kern;      /* the kernels' format: KERN_FORMAT(kern), kernels/fmt_*.cu */
    const char *precision; /* label stored with each run: "bf16-32" */
    const char *summary;   /* the GPU engine's line in `engines` and the man page */
    const char *cpu_summary;
    int rank_default; /* ENGINE_ROLE_DEFAULT rank of the GPU engine (fasted 2) */
    /* `set center default` means auto for both engines (FP8: their error
     * grows fastest with the norms). */
    int center_auto;
    /* The CPU twin also does `set center local` (src/cpu_emul_local.c). */
    int center_local;
    /* Integer data (int8): the engines plan the kernel format from the
     * data (src/int8_plan.h) and run their own functions (src/engine_int8.c,
     * src/engine_cpu_int8.c); no centring, no k-distance. */
    int integer;
} tc_format;

/* Terminated by a row with name NULL. */
extern const tc_format tc_formats[];
/* The row named name (NULL: none). */
const tc_format *tc_format_find(const char *name);

#endif
