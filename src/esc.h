/* Control characters made visible: file names and data fields may hold
 * bytes that a terminal would act on (ESC sequences, carriage return,
 * backspace, BEL). Human-readable output passes through esc_text so they
 * are printed as \xNN instead. */
#ifndef TCJ_ESC_H
#define TCJ_ESC_H

/* A copy of s with every C0 control except newline and tab, DEL, and the
 * C1 controls (U+0080..U+009F written as UTF-8) replaced by \xNN (the C1
 * ones as \u0080..\u009f). keep_newline 0 escapes newline too (one-line
 * messages). Caller frees. */
char *esc_text(const char *s, int keep_newline);
/* Whether s holds anything esc_text would change. */
int esc_needed(const char *s, int keep_newline);

#endif
