/* src/par.c: par_zero clears every byte it is given and no byte beyond,
 * below PAR_MIN (the caller's thread) and above it (par_for's ranges,
 * whose ends fall anywhere in a page), checked byte by byte against the
 * guard bytes around the buffer. */
#include "check.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "par.h"

static void check_zero(size_t bytes, size_t off)
{
    const size_t guard = 64;
    unsigned char *buf = malloc(bytes + 2 * guard + off);
    CHECK(buf != NULL);
    if (!buf)
        return;
    memset(buf, 0xab, bytes + 2 * guard + off);
    unsigned char *p = buf + guard + off;
    par_zero(p, bytes);
    size_t bad = 0, first = (size_t)-1;
    for (size_t i = 0; i < bytes; i++)
        if (p[i] != 0 && bad++ == 0)
            first = i;
    CHECK_MSG(bad == 0, "%zu bytes at offset %zu: %zu not zeroed, the first at %zu", bytes, off,
              bad, first);
    for (size_t i = 0; i < guard + off; i++)
        CHECK_MSG(buf[i] == 0xab, "%zu bytes: byte %zu before the buffer changed", bytes, i);
    for (size_t i = 0; i < guard; i++)
        CHECK_MSG(p[bytes + i] == 0xab, "%zu bytes: byte %zu after the buffer changed", bytes, i);
    free(buf);
}

TEST(zero_every_byte_and_no_other)
{
    check_zero(0, 0);
    check_zero(1, 3);
    check_zero(PAR_MIN - 1, 5);                     /* the caller's thread */
    check_zero(PAR_MIN, 0);                         /* par_for's ranges from here */
    check_zero(3 * PAR_MIN + 12345, 7);             /* ranges not a multiple of a page */
    check_zero(PAR_MAX_THREADS * 4096 * 33 + 1, 1); /* an odd last range */
}
