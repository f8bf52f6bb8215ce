/* FASTED's optimizations as teaching switches (the FASTED paper's Table 5).
 * Each can be turned off alone with `set opt NAME off`; engine_opts.fasted_off
 * holds one bit per switch. The names and bits are kernels/'s switch table
 * (kern_fasted_switches); this module adds the paper's title and the
 * explanation of each. The table is the source of `set`, `explain`,
 * completion and the man page. */
#ifndef TCJ_FASTED_OPTS_H
#define TCJ_FASTED_OPTS_H

typedef struct fasted_switch {
    const char *name;    /* word used in `set opt NAME off` and `explain NAME` */
    unsigned bit;        /* bit in engine_opts.fasted_off (FASTED_OFF_* in kernels.h) */
    const char *title;   /* the paper's name for it */
    const char *explain; /* a few lines: what it does, what turning it off costs */
} fasted_switch;

/* Every switch with its texts, terminated by a row with name NULL. */
const fasted_switch *fasted_switch_table(void);
#define fasted_switches (fasted_switch_table())
const fasted_switch *fasted_switch_find(const char *name);

#endif
