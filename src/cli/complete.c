/* Completion candidates from the command, engine, setting and switch
 * tables. */
#include "complete.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cmd.h"
#include "dataset.h"
#include "engine.h"
#include "err.h"
#include "fasted_opts.h"
#include "gen.h"
#include "lab.h"
#include "settings.h"

typedef struct clist {
    char **v;
    int n, cap;
    const char *prefix; /* only words starting with it are kept */
    size_t plen;
} clist;

static void cl_add(clist *c, const char *head, const char *word)
{
    size_t hl = head ? strlen(head) : 0;
    char *s = xmalloc(hl + strlen(word) + 1);
    memcpy(s, head ? head : "", hl);
    strcpy(s + hl, word);
    if (strncmp(s, c->prefix, c->plen) != 0) {
        free(s);
        return;
    }
    if (c->n + 2 > c->cap) {
        c->cap = c->cap ? 2 * c->cap : 16;
        c->v = xrealloc(c->v, (size_t)c->cap * sizeof *c->v);
    }
    c->v[c->n++] = s;
}

/* Add each of "a|b|c" (with head before each). */
static void cl_choices(clist *c, const char *head, const char *choices)
{
    char buf[256];
    const char *p = choices;
    while (*p) {
        size_t k = strcspn(p, "|");
        if (k < sizeof buf) {
            memcpy(buf, p, k);
            buf[k] = '\0';
            cl_add(c, head, buf);
        }
        p += k;
        if (*p == '|')
            p++;
    }
}

static void cl_engines(clist *c)
{
    for (const engine *const *e = engine_table; *e; e++)
        cl_add(c, NULL, (*e)->name);
}

/* Paths: the part of word after its last '/' is matched in the directory
 * before it; directories get a trailing '/'. head precedes each result. */
static void cl_files(clist *c, const char *head, const char *word)
{
    const char *slash = strrchr(word, '/');
    char dir[1024];
    size_t dl = slash ? (size_t)(slash - word + 1) : 0;
    if (dl >= sizeof dir)
        return;
    memcpy(dir, word, dl);
    dir[dl] = '\0';
    const char *base = word + dl;
    DIR *d = opendir(dl ? dir : ".");
    if (!d)
        return;
    struct dirent *de;
    char path[2048], cand[2056];
    while ((de = readdir(d))) {
        if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
            continue;
        if (de->d_name[0] == '.' && base[0] != '.')
            continue;
        if (strncmp(de->d_name, base, strlen(base)) != 0)
            continue;
        snprintf(path, sizeof path, "%s%s", dl ? dir : "", de->d_name);
        struct stat st;
        int isdir = stat(path, &st) == 0 && S_ISDIR(st.st_mode);
        snprintf(cand, sizeof cand, "%s%s", path, isdir ? "/" : "");
        cl_add(c, head, cand);
    }
    closedir(d);
}

/* Values of an option key, "@file" for a path, NULL for free form. */
static const char *opt_values(const char *cmdname, const char *key)
{
    if (!strcmp(key, "out") || !strcmp(key, "csv"))
        return "@file";
    if (!strcmp(key, "method"))
        return "hist|bisect";
    if (!strcmp(key, "mode"))
        return "count|perpoint|pairs";
    if (!strcmp(key, "format") && strcmp(cmdname, "load") != 0)
        return "bin32|bin64|csv";
    if (!strcmp(key, "format"))
        return "@loader";
    if (!strcmp(key, "header"))
        return "yes|no|auto";
    if (!strcmp(key, "drop-nonfinite"))
        return "yes|no";
    if (!strcmp(key, "delim"))
        return ",|tab|space";
    if (!strcmp(key, "dtype"))
        return "f16|f32|f64|u8|i8|u16|i16|u32|i32";
    if (!strcmp(key, "engine") || !strcmp(key, "ref"))
        return "@engine";
    return NULL;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void cl_option_value(clist *c, const char *cmdname, const char *word)
{
    const char *eq = strchr(word, '=');
    size_t kl = (size_t)(eq - word);
    char key[64], head[72];
    if (kl >= sizeof key)
        return;
    memcpy(key, word, kl);
    key[kl] = '\0';
    snprintf(head, sizeof head, "%s=", key);
    const char *vals = opt_values(cmdname, key);
    if (!vals)
        return;
    if (!strcmp(vals, "@file")) {
        cl_files(c, head, eq + 1);
    } else if (!strcmp(vals, "@engine")) {
        for (const engine *const *e = engine_table; *e; e++)
            cl_add(c, head, (*e)->name);
    } else if (!strcmp(vals, "@loader")) {
        for (const loader *const *l = loader_table; *l; l++)
            cl_add(c, head, (*l)->name);
    } else {
        cl_choices(c, head, vals);
    }
}

static void cl_setting_value(clist *c, const char *name, int k, const char *word)
{
    const setting *t = setting_find(name);
    if (!t || k >= t->nvals || k > 1 || !t->complete[k])
        return;
    const char *spec = t->complete[k];
    if (!strcmp(spec, "@file")) {
        cl_files(c, NULL, word);
    } else if (!strcmp(spec, "@switch")) {
        for (const fasted_switch *w = fasted_switches; w->name; w++)
            cl_add(c, NULL, w->name);
        cl_add(c, NULL, "all");
    } else {
        cl_choices(c, NULL, spec);
    }
}

int complete_line(const char *line, size_t cursor, char ***out, size_t *start)
{
    size_t len = strlen(line);
    if (cursor > len)
        cursor = len;
    /* The command being typed starts after the last ';' before the cursor. */
    size_t cs = cursor;
    while (cs > 0 && line[cs - 1] != ';')
        cs--;
    size_t ws = cursor;
    while (ws > cs && line[ws - 1] != ' ' && line[ws - 1] != '\t')
        ws--;
    *start = ws;

    char *word = xmalloc(cursor - ws + 1);
    memcpy(word, line + ws, cursor - ws);
    word[cursor - ws] = '\0';

    /* Earlier words of this command (plain whitespace split). */
    char *prev = xmalloc(ws - cs + 1);
    memcpy(prev, line + cs, ws - cs);
    prev[ws - cs] = '\0';
    char *words[16];
    int nw = 0, npos = 0;
    for (char *tok = strtok(prev, " \t"); tok && nw < 16; tok = strtok(NULL, " \t")) {
        words[nw++] = tok;
        if (nw > 1 && !cmd_is_opt(tok))
            npos++;
    }

    clist c = {NULL, 0, 0, word, strlen(word)};
    if (nw == 0) {
        for (const cmd *const *t = cmd_table; *t; t++)
            cl_add(&c, NULL, (*t)->name);
    } else {
        const char *name = words[0];
        const cmd *cm = cmd_find(name);
        if (strchr(word, '=') && cmd_is_opt(word)) {
            cl_option_value(&c, name, word);
        } else if (cm) {
            int pos = npos + 1; /* positional index of the word being typed */
            if (!strcmp(name, "run") || !strcmp(name, "profile")) {
                if (pos == 1)
                    cl_engines(&c);
            } else if (!strcmp(name, "compare")) {
                if (pos <= 2)
                    cl_engines(&c);
            } else if (!strcmp(name, "dbscan")) {
                /* dbscan [curve [use]|compare A B] */
                int cmp = nw > 1 && !strcmp(words[1], "compare");
                int crv = nw > 1 && !strcmp(words[1], "curve");
                if (pos == 1)
                    cl_choices(&c, NULL, "curve|compare");
                else if (cmp && pos <= 3)
                    cl_engines(&c);
                else if (crv && pos == 2)
                    cl_add(&c, NULL, "use");
            } else if (!strcmp(name, "precisions")) {
                const char *fmts[LAB_MAX_FORMATS];
                size_t nf = lab_format_names(fmts, LAB_MAX_FORMATS);
                for (size_t k = 0; k < nf; k++)
                    cl_add(&c, NULL, fmts[k]);
                cl_add(&c, NULL, "cpu");
            } else if (!strcmp(name, "set")) {
                if (pos == 1)
                    for (const setting *t = settings_table; t->name; t++)
                        cl_add(&c, NULL, t->name);
                else
                    cl_setting_value(&c, words[1], pos - 2, word);
            } else if (!strcmp(name, "load")) {
                if (pos == 1)
                    cl_files(&c, NULL, word);
            } else if (!strcmp(name, "gen")) {
                for (int k = 0; pos == 1 && gen_table[k]; k++)
                    cl_add(&c, NULL, gen_table[k]->name);
            } else if (!strcmp(name, "help")) {
                if (pos == 1) {
                    for (const cmd *const *t = cmd_table; *t; t++)
                        cl_add(&c, NULL, (*t)->name);
                    cl_add(&c, NULL, "engines");
                    cl_add(&c, NULL, "settings");
                }
            } else if (!strcmp(name, "explain")) {
                if (pos == 1)
                    for (const fasted_switch *w = fasted_switches; w->name; w++)
                        cl_add(&c, NULL, w->name);
            } else if (!strcmp(name, "show")) {
                if (pos == 1) {
                    cl_add(&c, NULL, "run");
                    cl_add(&c, NULL, "compare");
                    cl_add(&c, NULL, "lab");
                    cl_add(&c, NULL, "dbscan");
                }
            } else if (!strcmp(name, "export")) {
                int runs = nw > 1 && !strcmp(words[1], "runs");
                if (pos == 1)
                    cl_choices(&c, NULL, "runs|run|kdist|lab|dbscan|ladder");
                else if ((runs && pos == 2) || (!runs && pos == 3))
                    cl_choices(&c, NULL, "csv|json");
                else if ((runs && pos == 3) || (!runs && pos == 4))
                    cl_files(&c, NULL, word);
            }
            /* Option keys of this command. */
            for (const char *const *o = cm->options; o && *o; o++) {
                char key[64];
                snprintf(key, sizeof key, "%s=", *o);
                cl_add(&c, NULL, key);
            }
        }
    }
    free(prev);
    free(word);

    if (c.n > 1)
        qsort(c.v, (size_t)c.n, sizeof *c.v, cmp_str);
    int k = 0;
    for (int i = 0; i < c.n; i++) {
        if (k > 0 && !strcmp(c.v[k - 1], c.v[i]))
            free(c.v[i]);
        else
            c.v[k++] = c.v[i];
    }
    if (!c.v)
        c.v = xmalloc(sizeof *c.v);
    c.v[k] = NULL;
    *out = c.v;
    return k;
}

void complete_free(char **cands)
{
    if (!cands)
        return;
    for (char **p = cands; *p; p++)
        free(*p);
    free(cands);
}
