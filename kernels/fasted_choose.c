/* What host and kernels agree on about the FASTED kernels, in plain C so
 * the host build without CUDA has it too and a CPU-only test can check it:
 * the switch table, the variant names derived from it, the device-feature
 * predicates on a compute capability, and the kernel choice. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "kernels.h"

const kern_switch kern_fasted_switches[] = {
    {FASTED_OFF_ORDER, "order"},           {FASTED_OFF_SMEM_BUFFER, "smem-buffer"},
    {FASTED_OFF_ASYNC_COPY, "async-copy"}, {FASTED_OFF_PIPELINE, "pipeline"},
    {FASTED_OFF_RESIDENCY, "residency"},   {FASTED_OFF_WARP_TILE, "warp-tile"},
    {FASTED_OFF_SWIZZLE, "swizzle"},       {FASTED_OFF_ALIGN, "align"},
    {FASTED_OFF_WGMMA, "wgmma"},           {0, NULL},
};

/* The paper turns memcpy_async off together with its pipeline: the one
 * compiled pair. */
#define FASTED_PAIR_OFF (FASTED_OFF_ASYNC_COPY | FASTED_OFF_PIPELINE)

static int fasted_mask_ok(unsigned off)
{
    return (off & ~FASTED_OFF_ALL) == 0 && ((off & (off - 1)) == 0 || off == FASTED_PAIR_OFF);
}

static char fasted_names[FASTED_OFF_ALL + 1][64];
static pthread_once_t fasted_names_once = PTHREAD_ONCE_INIT;

static void fasted_names_init(void)
{
    for (unsigned off = 0; off <= FASTED_OFF_ALL; off++) {
        char *b = fasted_names[off];
        if (!fasted_mask_ok(off)) {
            snprintf(b, sizeof fasted_names[0], "invalid");
            continue;
        }
        if (off == 0) {
            snprintf(b, sizeof fasted_names[0], "all-on");
            continue;
        }
        /* wgmma off alone is the paper's kernel with every switch on: the
         * name the run reports */
        if (off == FASTED_OFF_WGMMA) {
            snprintf(b, sizeof fasted_names[0], "mma.sync all-on");
            continue;
        }
        size_t k = (size_t)snprintf(b, sizeof fasted_names[0], "no-");
        for (const kern_switch *s = kern_fasted_switches; s->name; s++)
            if (off & s->bit)
                k += (size_t)snprintf(b + k, sizeof fasted_names[0] - k, "%s%s", k > 3 ? "+" : "",
                                      s->name);
    }
}

const char *kern_fasted_variant_name(unsigned off)
{
    pthread_once(&fasted_names_once, fasted_names_init);
    return off <= FASTED_OFF_ALL ? fasted_names[off] : "invalid";
}

int kern_cc_has_f64_mma(int cc)
{
    /* A100 (8.0), Hopper (9.x), data-centre Blackwell (10.x, 11.x). */
    return cc == 80 || (cc >= 90 && cc < 120);
}

int kern_cc_has_fp8_mma(int cc)
{
    return cc >= 89;
}

int kern_cc_has_wgmma(int cc)
{
    return cc == 90;
}

int fasted_choose(unsigned off, int mode, const kern_format *fmt, const kern_caps *caps,
                  size_t hist_nbins, fasted_choice *out)
{
    memset(out, 0, sizeof *out);
    if (!fmt) {
        snprintf(out->why, sizeof out->why, "no number format (this build has no CUDA)");
        return KERN_ENODEV;
    }
    if (!fasted_mask_ok(off)) {
        snprintf(out->why, sizeof out->why,
                 "only one FASTED switch can be off at a time (each one-off set is a compiled "
                 "variant; async-copy and pipeline may be off together, as in the paper)");
        return KERN_EINVAL;
    }
    if (caps->cc < fmt->min_cc) {
        snprintf(out->why, sizeof out->why,
                 "%s needs a GPU of compute capability %d.%d or newer (this one is %d.%d)",
                 fmt->name, fmt->min_cc / 10, fmt->min_cc % 10, caps->cc / 10, caps->cc % 10);
        return KERN_ENODEV;
    }
    const size_t hist = mode == KJOIN_HIST ? (hist_nbins + 1) * 8 : 0;
    out->order = !(off & FASTED_OFF_ORDER);
    if (off == 0 && fmt->wg_smem && caps->wgmma && fmt->wg_smem + hist <= caps->smem_optin) {
        out->kind = FASTED_KIND_WGMMA;
        out->smem = fmt->wg_smem + hist;
        snprintf(out->variant, sizeof out->variant, "wgmma");
        return 0;
    }
    const unsigned moff = off & ~(unsigned)(FASTED_OFF_ORDER | FASTED_OFF_WGMMA);
    for (int k = 0; k < fmt->nvariants; k++) {
        const kern_variant *v = &fmt->variants[k];
        if (v->off != moff)
            continue;
        out->kind = FASTED_KIND_MMA;
        out->v = v;
        out->smem = v->smem + hist;
        if (out->smem > caps->smem_optin) {
            snprintf(out->why, sizeof out->why,
                     "%zu histogram bins need %zu bytes of shared memory per block; this GPU "
                     "allows %zu (use fewer bins)",
                     hist_nbins, out->smem, caps->smem_optin);
            return KERN_EINVAL;
        }
        snprintf(out->variant, sizeof out->variant, "%s",
                 off == 0 ? "mma.sync all-on" : kern_fasted_variant_name(off));
        return 0;
    }
    snprintf(out->why, sizeof out->why,
             "%s has no compiled %s variant (the teaching switches are compiled for fp16 only)",
             fmt->name, kern_fasted_variant_name(off));
    return KERN_EINVAL;
}
