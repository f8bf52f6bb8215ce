/* The generator table: one row per kind, each defined in its family's file
 * (src/gen.h says what a row holds). gen_opt_names, every key=value word
 * of `gen`, is kept beside it by hand (a C initialiser cannot gather the
 * rows' parameters); tests/unit/t_gen.c checks the two agree. */
#include <stdio.h>
#include <string.h>

#include "gen.h"

const gen_kind *const gen_table[] = {&gen_uniform, &gen_expo, &gen_gauss,
                                     &gen_ints,    &gen_halo, NULL};

const char *const gen_opt_names[] = {"kind",     "n",      "d",          "seed",  "lambda",
                                     "clusters", "sigma",  "background", "halos", "alpha",
                                     "noise",    "radius", "dtype",      NULL};

const gen_kind *gen_kind_find(const char *name)
{
    for (int i = 0; name && gen_table[i]; i++)
        if (!strcmp(gen_table[i]->name, name))
            return gen_table[i];
    return NULL;
}

const char *gen_kind_names(const char *sep)
{
    static char buf[256];
    buf[0] = '\0';
    for (int i = 0; gen_table[i]; i++)
        snprintf(buf + strlen(buf), sizeof buf - strlen(buf), "%s%s", i ? sep : "",
                 gen_table[i]->name);
    return buf;
}

const gen_param *gen_param_find(const gen_kind *k, const char *name)
{
    if (!k) {
        const gen_param *p = NULL;
        for (int i = 0; !p && gen_table[i]; i++)
            p = gen_param_find(gen_table[i], name);
        return p;
    }
    for (int i = 0; i < k->nparams; i++)
        if (!strcmp(k->params[i].name, name))
            return &k->params[i];
    return NULL;
}
