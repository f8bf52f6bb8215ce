/* Escaping of control characters in human-readable output. */
#include "esc.h"

#include <stdio.h>
#include <string.h>

#include "err.h"

/* Bytes of s[k..] that form one character to escape: 1 for a C0 control
 * or DEL, 2 for a C1 control in UTF-8 (0xC2 0x80..0x9F), else 0. */
static int esc_len(const unsigned char *p, int keep_newline)
{
    if ((*p < 0x20 && !(*p == '\t' || (*p == '\n' && keep_newline))) || *p == 0x7f)
        return 1;
    if (p[0] == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f)
        return 2;
    return 0;
}

int esc_needed(const char *s, int keep_newline)
{
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        if (esc_len(p, keep_newline))
            return 1;
    return 0;
}

char *esc_text(const char *s, int keep_newline)
{
    size_t n = strlen(s);
    /* At most 6 output bytes (\u0080) per 2 input bytes, 4 per 1. */
    char *out = xmalloc(4 * n + 1);
    char *w = out;
    for (const unsigned char *p = (const unsigned char *)s; *p;) {
        int k = esc_len(p, keep_newline);
        if (k == 1)
            w += sprintf(w, "\\x%02x", *p);
        else if (k == 2)
            w += sprintf(w, "\\u%04x", p[1]);
        else
            *w++ = (char)*p;
        p += k ? k : 1;
    }
    *w = '\0';
    return out;
}
