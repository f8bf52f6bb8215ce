/* Command-line words, options, number parsing and execution. */
#include "cmd.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dist.h"
#include "engine.h"
#include "err.h"
#include "out.h"
#include "store.h"

int cmd_split(const char *line, char ***argv, char **storage)
{
    size_t len = strlen(line);
    size_t maxw = len / 2 + 2;
    /* ~ and ~/ at the start of a word or of a key=value's value read as
     * $HOME, as in a shell; room for one $HOME per '~'. */
    const char *home = getenv("HOME");
    size_t hl = home ? strlen(home) : 0, extra = 0;
    for (const char *t = line; *t; t++)
        extra += *t == '~' ? hl : 0;
    /* One block: the argv array, then the words' characters. */
    char *block = xmalloc(maxw * sizeof(char *) + len + extra + 1);
    char **av = (char **)block;
    char *w = block + maxw * sizeof(char *);
    int argc = 0;
    const char *p = line;

    for (;;) {
        while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
            p++;
        if (!*p || *p == '#')
            break;
        av[argc++] = w;
        while (*p && !(*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')) {
            if (*p == '\'') {
                const char *q = strchr(p + 1, '\'');
                if (!q) {
                    free(block);
                    return err_set(TCJ_EINVAL, "unterminated ' quote");
                }
                memcpy(w, p + 1, (size_t)(q - p - 1));
                w += q - p - 1;
                p = q + 1;
            } else if (*p == '"') {
                p++;
                while (*p && *p != '"') {
                    if (*p == '\\' && (p[1] == '"' || p[1] == '\\'))
                        p++;
                    *w++ = *p++;
                }
                if (!*p) {
                    free(block);
                    return err_set(TCJ_EINVAL, "unterminated \" quote");
                }
                p++;
            } else if (*p == '\\') {
                if (!p[1]) {
                    free(block);
                    return err_set(TCJ_EINVAL, "backslash at the end of the line");
                }
                *w++ = p[1];
                p += 2;
            } else if (*p == '~' && hl &&
                       (p[1] == '/' || p[1] == '\0' || p[1] == ' ' || p[1] == '\t' ||
                        p[1] == '\n' || p[1] == '\r') &&
                       (w == av[argc - 1] ||
                        (w[-1] == '=' &&
                         !memchr(av[argc - 1], '=', (size_t)(w - 1 - av[argc - 1]))))) {
                memcpy(w, home, hl);
                w += hl;
                p++;
            } else {
                *w++ = *p++;
            }
        }
        *w++ = '\0';
    }
    av[argc] = NULL;
    *argv = av;
    *storage = block;
    return argc;
}

int cmd_split_commands(const char *line, char ***cmds, char **storage)
{
    size_t len = strlen(line);
    size_t maxc = len + 2; /* every byte may be a separator */
    char *block = xmalloc(maxc * sizeof(char *) + len + 1);
    char **cv = (char **)block;
    char *w = block + maxc * sizeof(char *);
    int n = 0;
    const char *p = line;
    int word_start = 1;

    cv[n++] = w;
    while (*p) {
        if (*p == '\'' || *p == '"') {
            char q = *p;
            *w++ = *p++;
            while (*p && *p != q) {
                if (q == '"' && *p == '\\' && p[1])
                    *w++ = *p++;
                *w++ = *p++;
            }
            if (*p)
                *w++ = *p++;
            word_start = 0;
        } else if (*p == '\\' && p[1]) {
            *w++ = *p++;
            *w++ = *p++;
            word_start = 0;
        } else if (*p == '#' && word_start) {
            /* A comment runs to the end of its line. */
            while (*p && *p != '\n')
                p++;
        } else if (*p == ';' || *p == '\n') {
            *w++ = '\0';
            cv[n++] = w;
            p++;
            word_start = 1;
        } else {
            word_start = (*p == ' ' || *p == '\t' || *p == '\r');
            *w++ = *p++;
        }
    }
    *w = '\0';
    cv[n] = NULL;
    *cmds = cv;
    *storage = block;
    return n;
}

/* A word is an option when it reads key=value with a plain key, so that a
 * path holding '=' after a '/' stays a positional word. */
static int opt_key_len(const char *word)
{
    const char *eq = strchr(word, '=');
    if (!eq || eq == word || !isalpha((unsigned char)word[0]))
        return -1;
    for (const char *p = word; p < eq; p++)
        if (!isalnum((unsigned char)*p) && *p != '-' && *p != '_')
            return -1;
    return (int)(eq - word);
}

int cmd_is_opt(const char *word)
{
    return opt_key_len(word) > 0;
}

const char *cmd_opt(int argc, char **argv, const char *key)
{
    size_t kl = strlen(key);
    for (int i = 0; i < argc; i++) {
        int n = opt_key_len(argv[i]);
        if (n > 0 && (size_t)n == kl && strncmp(argv[i], key, kl) == 0)
            return argv[i] + kl + 1;
    }
    return NULL;
}

/* The form of c that argv takes: its first positional word's row, else
 * the last (word NULL). NULL when c has no forms. */
static const cmd_form *cmd_form_of(const cmd *c, int argc, char **argv)
{
    if (!c->forms)
        return NULL;
    char *pos[1];
    const int np = cmd_positional(argc, argv, pos, 1);
    const cmd_form *f = c->forms;
    for (; f->word; f++)
        if (np == 1 && strcmp(f->word, pos[0]) == 0)
            break;
    return f;
}

static int opt_listed(const char *const *opts, const char *word, int n)
{
    for (const char *const *o = opts; o && *o; o++)
        if (strlen(*o) == (size_t)n && strncmp(*o, word, (size_t)n) == 0)
            return 1;
    return 0;
}

/* "takes minpts= engine= out=", or "takes no options": what a form of c
 * takes, into buf. */
static const char *opt_takes(const char *const *opts, char *buf, size_t size)
{
    size_t at = (size_t)snprintf(buf, size, "takes");
    if (!opts || !*opts)
        snprintf(buf + at, size - at, " no options");
    for (const char *const *o = opts; o && *o && at < size; o++)
        at += (size_t)snprintf(buf + at, size - at, " %s=", *o);
    return buf;
}

int cmd_check_opts(const cmd *c, int argc, char **argv)
{
    const cmd_form *f = cmd_form_of(c, argc, argv);
    const char *const *opts = f ? f->options : c->options;
    char name[64], takes[256];
    snprintf(name, sizeof name, "%s%s%s", c->name, f && f->word ? " " : "",
             f && f->word ? f->word : "");
    for (int i = 0; i < argc; i++) {
        int n = opt_key_len(argv[i]);
        if (n <= 0)
            continue;
        if (!opt_listed(opts, argv[i], n)) {
            if (!f)
                return err_set(TCJ_EINVAL, "%s: unknown option '%.*s'; Usage: %s", c->name, n,
                               argv[i], c->usage);
            return err_set(TCJ_EINVAL, "%s: unknown option '%.*s'; %s %s", name, n, argv[i], name,
                           opt_takes(opts, takes, sizeof takes));
        }
        for (int j = 0; j < i; j++)
            if (opt_key_len(argv[j]) == n && strncmp(argv[j], argv[i], (size_t)n) == 0)
                return err_set(TCJ_EINVAL, "%s: %.*s= given twice; give it once", name, n, argv[i]);
    }
    return 0;
}

int cmd_take_flag(int *argc, char **argv, const char *word)
{
    int found = 0, k = 0;
    for (int i = 0; i < *argc; i++) {
        if (strcmp(argv[i], word) == 0)
            found = 1;
        else
            argv[k++] = argv[i];
    }
    *argc = k;
    argv[k] = NULL;
    return found;
}

int cmd_positional(int argc, char **argv, char **pos, int max)
{
    int k = 0;
    for (int i = 0; i < argc; i++)
        if (!cmd_is_opt(argv[i]) && k < max)
            pos[k++] = argv[i];
    return k;
}

int cmd_parse_double(const char *word, const char *what, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(word, &end);
    if (end == word || *end || errno == ERANGE || !isfinite(v))
        return err_set(TCJ_EINVAL, "%s: expected a number, got '%s'", what, word);
    *out = v;
    return 0;
}

int cmd_parse_size(const char *word, const char *what, size_t *out)
{
    return dataset_parse_count(what, word, out);
}

int cmd_parse_count(const char *word, const char *what, size_t lo, size_t hi, size_t *out)
{
    size_t v;
    if (cmd_parse_size(word, what, &v) == 0 && v >= lo && v <= hi) {
        *out = v;
        return 0;
    }
    if (hi == SIZE_MAX)
        return err_set(TCJ_EINVAL, "%s: expected an integer of at least %zu, got '%s'", what, lo,
                       word);
    return err_set(TCJ_EINVAL, "%s: expected an integer from %zu to %zu, got '%s'", what, lo, hi,
                   word);
}

/* Where the command being executed comes from, for error lines. */
static const char *loc_file;
static long loc_line;

/* Edit distance (insert, delete, substitute) between short words; words
 * longer than 31 characters count as far from everything. */
int cmd_edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > 31 || lb > 31)
        return 99;
    int row[32];
    for (size_t j = 0; j <= lb; j++)
        row[j] = (int)j;
    for (size_t i = 1; i <= la; i++) {
        int diag = row[0];
        row[0] = (int)i;
        for (size_t j = 1; j <= lb; j++) {
            int up = row[j];
            int sub = diag + (a[i - 1] != b[j - 1]);
            int best = up + 1 < row[j - 1] + 1 ? up + 1 : row[j - 1] + 1;
            row[j] = sub < best ? sub : best;
            diag = up;
        }
    }
    return row[lb];
}

/* An unknown command, with the nearest one when a typo explains it, as
 * unknown engines get. */
static int cmd_unknown(const char *name)
{
    const cmd *near = cmd_nearest(name);
    if (near)
        return err_set(TCJ_EINVAL, "unknown command '%s'; did you mean %s? (try help)", name,
                       near->name);
    return err_set(TCJ_EINVAL, "unknown command '%s' (try help)", name);
}

void cmd_set_location(const char *file, long line)
{
    loc_file = file;
    loc_line = line;
}

const char *cmd_cancel_text(const char *command, const char *msg, char *buf, size_t size)
{
    if (strcmp(msg, ERR_CANCELLED) != 0 || !command)
        return msg;
    size_t n = strcspn(command, " \t");
    err_cancelled("%.*s", (int)n, command);
    snprintf(buf, size, "%s", err_msg());
    return buf;
}

/* The stderr line, and in --json mode a record on stdout too. A command
 * the user stopped is said as cancelled, not as an error: nothing failed. */
static void cmd_report(const char *command, const char *msg, int rc)
{
    int cancel = rc == TCJ_ECANCEL;
    char named[128];
    if (cancel)
        msg = cmd_cancel_text(command, msg, named, sizeof named);
    (cancel ? out_cancel_record : out_error_record)(msg, command, loc_file ? loc_line : 0);
    void (*say)(const char *, ...) = cancel ? out_cancelled : out_error;
    if (loc_file)
        say("%s:%ld: %s", loc_file, loc_line, msg);
    else
        say("%s", msg);
}

/* The first session-log write that failed during the command, reported
 * after the command's own output. */
static char store_err[1024];

void cmd_store_failed(void)
{
    if (!store_err[0])
        snprintf(store_err, sizeof store_err, "%s",
                 err_msg()[0] ? err_msg() : "writing the session log failed");
}

void cmd_log_begin(session *s, const char *text)
{
    s->command_id = 0;
    store_err[0] = '\0';
    if (s->db) {
        const int64_t id = store_command_begin(s->db, s->session_id, text);
        s->command_id = id > 0 ? id : 0;
        if (id < 0)
            cmd_store_failed();
    }
}

void cmd_log_end(session *s, int rc, double seconds)
{
    if (s->db && s->command_id > 0 &&
        store_command_end(s->db, s->command_id, rc, rc ? err_msg() : NULL, seconds))
        cmd_store_failed();
}

/* One command: words, lookup, checks, handler, log. */
static int cmd_exec_here(session *s, const char *line)
{
    char **argv, *storage;
    int argc = cmd_split(line, &argv, &storage);
    if (argc < 0) {
        cmd_report(line, err_msg(), TCJ_EINVAL);
        if (s->batch)
            s->failed = 1;
        return TCJ_EINVAL;
    }
    if (argc == 0) {
        free(storage);
        return 0;
    }

    /* The command as typed, without separators or surrounding blanks. */
    while (*line == ' ' || *line == '\t')
        line++;
    size_t n = strlen(line);
    while (n > 0 && strchr(" \t\r\n", line[n - 1]))
        n--;
    char *text = xmalloc(n + 1);
    memcpy(text, line, n);
    text[n] = '\0';
    cmd_log_begin(s, text);

    double t0 = engine_now();
    int rc;
    err_clear();
    s->cancel = 0;
    const cmd *c = cmd_find(argv[0]);
    if (!c) {
        rc = cmd_unknown(argv[0]);
    } else if (argc - 1 < c->min_args || (c->max_args >= 0 && argc - 1 > c->max_args)) {
        rc = err_set(TCJ_EINVAL, "Usage: %s", c->usage);
    } else if ((rc = cmd_check_opts(c, argc - 1, argv + 1)) == 0) {
        /* tcjoin-mpi: a command only rank 0 runs (its log, help), or one
         * no rank runs there (src/dist.h) */
        int sk = dist ? dist->skip(c->name) : 0;
        rc = sk > 0 ? 0 : sk < 0 ? sk : c->run(s, argc - 1, argv + 1);
    }
    double dt = engine_now() - t0;

    if (rc) {
        cmd_report(text, err_msg()[0] ? err_msg() : "command failed", rc);
        if (s->batch)
            s->failed = 1;
    } else if (store_err[0]) {
        /* What it measured is not in the log: the command did not do all
         * it was asked. */
        rc = err_set(TCJ_ESTORE, "%s", store_err);
    }
    cmd_log_end(s, rc, dt);
    if (store_err[0]) {
        cmd_report(text, store_err, TCJ_ESTORE);
        if (s->batch)
            s->failed = 1;
        if (!rc)
            rc = TCJ_ESTORE;
    }
    s->command_id = 0;
    free(text);
    free(storage);
    return rc;
}

/* tcjoin-mpi (src/dist.h): rank 0 sends each command to the other ranks,
 * which run it too; the ranks' outcomes are compared after it. */
static int cmd_exec_one(session *s, const char *line)
{
    if (!dist)
        return cmd_exec_here(s, line);
    dist->command_begin(line);
    return dist->command_end(s, cmd_exec_here(s, line));
}

int cmd_exec(session *s, const char *line)
{
    char **cmds, *storage;
    int n = cmd_split_commands(line, &cmds, &storage);
    int rc = 0;
    for (int i = 0; i < n && !s->quit; i++) {
        int r = cmd_exec_one(s, cmds[i]);
        if (r)
            rc = r;
    }
    free(storage);
    return rc;
}

int cmd_gen_current(session *s, const char *kind, size_t n, size_t d)
{
    char want[96];
    snprintf(want, sizeof want, "%s-n%zu-d%zu-s1", kind, n, d);
    if (s->have_ds && s->ds.name && strcmp(s->ds.name, want) == 0 && !s->ds.path)
        return 0;
    char k[24], an[32], ad[32];
    snprintf(k, sizeof k, "%s", kind);
    snprintf(an, sizeof an, "n=%zu", n);
    snprintf(ad, sizeof ad, "d=%zu", d);
    char *gv[] = {k, an, ad, "seed=1", NULL};
    return cmd_find("gen")->run(s, 4, gv);
}
