/* The command table: name, usage, help, argument counts, option names and
 * handler. It is the single source of dispatch, `help`, completion and the
 * man page check. A new command is one new file (src/cli/cmd_NAME.c) defining a
 * `const cmd cmd_NAME` and one row in src/cli/cmd_table.c. */
#ifndef TCJ_CMD_H
#define TCJ_CMD_H

#include "session.h"

/* One form of a command, chosen by its first positional word, and the
 * options that form takes. A command's forms end with the row whose word
 * is NULL: the form without any of the words above it. */
typedef struct cmd_form {
    const char *word;
    const char *const *options; /* NULL-terminated; NULL for none */
} cmd_form;

typedef struct cmd {
    const char *name;
    const char *usage;          /* "load FILE [format=F] [limit=N] ..." */
    const char *summary;        /* one line */
    const char *help;           /* full text, may be several lines */
    int min_args, max_args;     /* positional+option words after the name; -1 = any */
    const char *const *options; /* NULL-terminated option names (key of key=value) */
    const cmd_form *forms;      /* NULL: every option goes with every form */
    /* Returns 0 or a TCJ_E* code with err_msg() set; never draws. */
    int (*run)(session *s, int argc, char **argv);
    /* NULL, or the record types (NULL-terminated) the command keeps in
     * the session log as their JSON (store.h, "Result records"), which
     * show TYPE ID and export TYPE ID json FILE read back. */
    const char *const *stored;
} cmd;

extern const cmd *const cmd_table[]; /* NULL-terminated */
const cmd *cmd_find(const char *name);
/* The command within two edits of name (a typo), or NULL. */
const cmd *cmd_nearest(const char *name);
/* The group a command is listed under in `help` ("data", "eps", "join",
 * "accuracy", "log", "GPU", "session"): the table's second column. */
const char *cmd_group(const cmd *c);
/* Whether some command keeps records of this type (its `stored`). */
int cmd_stored_type(const char *type);
extern const char *const cmd_group_names[]; /* NULL-terminated, in help's order */

/* Split a line into words (quotes and backslash escapes honoured). Returns
 * the word count, or -1 with err_msg for an unterminated quote. Words are
 * written into a copy owned by *storage (free it). */
int cmd_split(const char *line, char ***argv, char **storage);

/* key=value options among argv[0..argc): the value of the first word whose
 * key matches, or NULL. */
const char *cmd_opt(int argc, char **argv, const char *key);
/* Check every key=value word against the options of the form argv takes
 * (c->forms, else c->options): TCJ_EINVAL for an unknown or a repeated
 * key, with one line in err_msg naming it and what the form takes. */
int cmd_check_opts(const cmd *c, int argc, char **argv);
/* Parse helpers that leave "what was expected" in err_msg. */
int cmd_parse_double(const char *word, const char *what, double *out);
int cmd_parse_size(const char *word, const char *what, size_t *out);
/* cmd_parse_size for a count that must lie in [lo, hi]: one line for a bad
 * word and for one out of range alike, "WHAT: expected an integer from LO
 * to HI, got 'WORD'" ("of at least LO" where hi is SIZE_MAX). */
int cmd_parse_count(const char *word, const char *what, size_t lo, size_t hi, size_t *out);

/* Execute one line: look up, check options, run, log to the store. The
 * line may hold several commands separated by ';' or newlines ('#' starts
 * a comment at the start of a word). Returns the last error code, 0 if all
 * succeeded; each error is printed as one line. */
int cmd_exec(session *s, const char *line);
/* A command's row in the session log: begun before it runs, so its runs
 * can point at it (s->command_id) and a killed process leaves it marked
 * unfinished; ended with its outcome. cmd_exec brackets every command so;
 * libtcjoin's joins that are no command line (src/cli/api_graph.c) too. */
void cmd_log_begin(session *s, const char *text);
void cmd_log_end(session *s, int rc, double seconds);

/* A write to the session log failed (err_msg says why): the command
 * prints that line after its own output and fails (exit status 1 in batch
 * mode). Handlers call it instead of dropping a store error. */
void cmd_store_failed(void);
/* Make `gen KIND n=N d=D seed=1` the current dataset through gen (its
 * lines and records), unless that generated set already is (ablate,
 * ladder). 0 or gen's error. */
int cmd_gen_current(session *s, const char *kind, size_t n, size_t d);

/* Split a line into commands at unquoted ';' and newlines, dropping
 * comments. Returns the count; *cmds is NULL-terminated and lives in
 * *storage (free it). Commands may be empty. */
int cmd_split_commands(const char *line, char ***cmds, char **storage);
/* Edit distance (insert, delete, substitute) between short words, for
 * "did you mean" (commands, engines); 99 for words over 31 characters. */
int cmd_edit_distance(const char *a, const char *b);

/* A cancellation says what was cancelled, as "run cpu: cancelled" does: an
 * engine's bare ERR_CANCELLED becomes err_cancelled's "NAME: cancelled"
 * (NAME the command's first word, buf holding it); any other message is
 * returned as it is. */
const char *cmd_cancel_text(const char *command, const char *msg, char *buf, size_t size);

/* Name errors after a script's file and line ("run.tcj:3: ..."); file NULL
 * for none. The file name must outlive the calls. */
void cmd_set_location(const char *file, long line);
/* 1 if the word reads key=value with a plain key (letters, digits, - _). */
int cmd_is_opt(const char *word);
/* A bare word such as `force` among argv[0..argc): 1 when present, and it
 * is removed (argc lowered, argv[argc] NULL), else 0. */
int cmd_take_flag(int *argc, char **argv, const char *word);
/* The positional (non key=value) words, at most max, into pos; the count. */
int cmd_positional(int argc, char **argv, char **pos, int max);

#endif
