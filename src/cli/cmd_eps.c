/* eps VALUE: the search radius for run and compare. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "cmd.h"
#include "err.h"
#include "out.h"

static int eps_run(session *s, int argc, char **argv)
{
    if (argc == 0) {
        if (!s->have_eps)
            return err_set(TCJ_EINVAL, "eps is not set (eps VALUE)");
        char cur[40];
        out_fmt_double(cur, sizeof cur, s->eps);
        out_printf("eps %s\n", cur);
        return 0;
    }
    char *end;
    errno = 0;
    double v = strtod(argv[0], &end);
    if (end == argv[0] || *end || errno == ERANGE || !isfinite(v) || !(v > 0))
        return err_set(TCJ_EINVAL, "eps: expected a positive number, got '%s'", argv[0]);
    s->eps = v;
    s->have_eps = 1;
    char num[40];
    out_fmt_double(num, sizeof num, v);
    out_printf("eps %s\n", num);
    out_rec *r = out_rec_begin("eps");
    out_rec_dbl(r, "eps", v);
    out_rec_end(r);
    return 0;
}

const cmd cmd_eps = {
    .name = "eps",
    .usage = "eps [VALUE]",
    .summary = "set or show the search radius",
    .help = "Set the radius of the join: run and compare find all pairs at Euclidean\n"
            "distance <= VALUE. VALUE must be a positive finite number. Without VALUE,\n"
            "show the current radius.",
    .min_args = 0,
    .max_args = 1,
    .options = NULL,
    .run = eps_run,
};
