/* Control characters made visible: file names and data fields may hold
 * bytes that a terminal would act on (ESC sequences, carriage return,
 * backspace, BEL). Human-readable output passes through esc_text so they
 * are printed as \xNN instead. */
#ifndef TCJ_ESC_H
#define TCJ_ESC_H

/* A copy of s with every C0 control except newline and tab, DEL, every
 * byte that is not part of a valid UTF-8 character (a raw 8-bit C1 control
 * such as 0x9b, CSI) replaced by \xNN, and the C1 controls written as
 * UTF-8 (U+0080..U+009F) by \u0080..\u009f. keep_newline 0 escapes newline too (one-line
 * messages). Caller frees. */
char *esc_text(const char *s, int keep_newline);
/* Whether s holds anything esc_text would change. */
int esc_needed(const char *s, int keep_newline);
/* The length (2 to 4) of the valid UTF-8 character at p that is not a C1
 * control, else 0 (an ASCII byte, an invalid or cut sequence). */
int esc_utf8(const unsigned char *p);

#endif
