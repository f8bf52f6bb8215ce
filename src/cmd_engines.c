/* engines: the engine table, with whether each can run here. */
#include "cmd.h"
#include "err.h"
#include "kernels.h"
#include "out.h"

int cmd_engines_list(session *s)
{
    int ndev = kern_device_count();
    out_printf("CUDA devices: %d%s\n", ndev,
               kern_built_with_cuda() ? "" : " (this build has no CUDA)");
    out_rec *r = out_rec_begin("engines");
    out_rec_int(r, "cuda_devices", ndev);
    out_rec_bool(r, "built_with_cuda", kern_built_with_cuda());
    out_rec_arr(r, "engines");
    for (const engine *const *t = engine_table; *t; t++) {
        const engine *e = *t;
        err_clear();
        int rc = engine_available(e);
        out_printf("  %-10s %-8s %-14s %s\n", e->name, e->precision,
                   rc ? "not available" : "available", e->summary);
        if (rc)
            out_printf("  %-10s %-8s %-14s (%s)\n", "", "", "", err_msg());
        out_rec_obj(r, NULL);
        out_rec_str(r, "name", e->name);
        out_rec_str(r, "precision", e->precision);
        out_rec_bool(r, "gpu", e->gpu);
        out_rec_bool(r, "available", rc == 0);
        out_rec_str(r, "why", rc ? err_msg() : NULL);
        out_rec_close(r);
    }
    out_rec_end(r);
    err_clear();
    return 0;
}

static int engines_run(session *s, int argc, char **argv)
{
    return cmd_engines_list(s);
}

const cmd cmd_engines = {
    .name = "engines",
    .usage = "engines",
    .summary = "list the engines and whether each can run here",
    .help = "List every engine (name, precision, one line about it) and whether it can run\n"
            "on this machine, with the number of CUDA devices. Same as help engines.",
    .min_args = 0,
    .max_args = 0,
    .options = NULL,
    .run = engines_run,
};
