/* Escaping of control characters in human-readable output. */
#include "esc.h"

#include <stdio.h>
#include <string.h>

#include "err.h"

int esc_utf8(const unsigned char *p)
{
    int n = p[0] >= 0xf0 && p[0] <= 0xf4 ? 4 : p[0] >= 0xe0 ? 3 : p[0] >= 0xc2 ? 2 : 0;
    if (p[0] >= 0xf5 || !n)
        return 0;
    for (int i = 1; i < n; i++)
        if ((p[i] & 0xc0) != 0x80)
            return 0;
    /* overlong, surrogate and beyond-U+10FFFF forms; C1 controls */
    if ((p[0] == 0xe0 && p[1] < 0xa0) || (p[0] == 0xed && p[1] >= 0xa0) ||
        (p[0] == 0xf0 && p[1] < 0x90) || (p[0] == 0xf4 && p[1] >= 0x90) ||
        (p[0] == 0xc2 && p[1] <= 0x9f))
        return 0;
    return n;
}

/* Bytes of s[k..] that form one character to escape: 1 for a C0 control,
 * DEL, or a byte of 0x80 and above that is not part of a UTF-8 character
 * (a raw 8-bit C1 control such as 0x9b, CSI, which some terminals act on,
 * or any invalid byte); 2 for a C1 control in UTF-8 (0xC2 0x80..0x9F);
 * else 0. */
static int esc_len(const unsigned char *p, int keep_newline)
{
    if ((*p < 0x20 && !(*p == '\t' || (*p == '\n' && keep_newline))) || *p == 0x7f)
        return 1;
    if (p[0] == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f)
        return 2;
    if (*p >= 0x80 && !esc_utf8(p))
        return 1;
    return 0;
}

/* Bytes to copy as they are at p: a whole UTF-8 character, else 1. */
static int esc_keep(const unsigned char *p)
{
    int n = *p >= 0x80 ? esc_utf8(p) : 1;
    return n ? n : 1;
}

int esc_needed(const char *s, int keep_newline)
{
    for (const unsigned char *p = (const unsigned char *)s; *p;) {
        if (esc_len(p, keep_newline))
            return 1;
        p += esc_keep(p);
    }
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
        if (k == 1) {
            w += sprintf(w, "\\x%02x", *p);
        } else if (k == 2) {
            w += sprintf(w, "\\u%04x", p[1]);
        } else {
            k = esc_keep(p);
            memcpy(w, p, (size_t)k);
            w += k;
        }
        p += k;
    }
    *w = '\0';
    return out;
}
