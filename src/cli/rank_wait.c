/* A waiting rank's verdict and line (src/cli/rank_wait.h). */
#include "rank_wait.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"

void rank_wait_names(const char *set, int size, char *buf, size_t len)
{
    enum { SHOWN = 8 };
    int n = 0, last = -1;
    for (int r = 0; r < size; r++)
        if (set[r]) {
            n++;
            last = r;
        }
    size_t at = 0;
    buf[0] = '\0';
    at += (size_t)snprintf(buf, len, "%s", n == 1 ? "rank " : "ranks ");
    int k = 0;
    for (int r = 0; r < size && at < len; r++) {
        if (!set[r])
            continue;
        const char *sep = k == 0 ? "" : (r == last && n <= SHOWN) ? " and " : ", ";
        at += (size_t)snprintf(buf + at, len - at, "%s%d", sep, r);
        if (++k == SHOWN && n > SHOWN) {
            if (at < len)
                snprintf(buf + at, len - at, " and %d more", n - SHOWN);
            return;
        }
    }
}

/* Seconds as said: whole above 10, one decimal below (a test's short
 * bound). */
static void rank_wait_secs(double s, char *buf, size_t len)
{
    snprintf(buf, len, s >= 10 ? "%.0f s" : "%.1f s", s);
}

rank_wait_verdict rank_wait_judge(const rank_wait_view *v, char *line, size_t len, char *named_now)
{
    char *set = xcalloc((size_t)v->size, 1);
    char names[160], secs[32];
    rank_wait_verdict out = RANK_WAIT_ON;
    line[0] = '\0';
    int any = 0;
    double least = -1;

    /* Rank 0 after Ctrl-C: a rank with no sign cannot take the cancel (it
     * may be stopped), so waiting on would hold the job forever. */
    if (v->rank == 0 && v->since_cancel >= 0) {
        for (int r = 1; r < v->size; r++)
            if (v->silent[r] >= RANK_WAIT_CANCEL_SILENT) {
                set[r] = 1;
                any = 1;
                least = least < 0 || v->silent[r] < least ? v->silent[r] : least;
            }
        if (any) {
            rank_wait_names(set, v->size, names, sizeof names);
            rank_wait_secs(least, secs, sizeof secs);
            snprintf(line, len,
                     "no sign from %s for %s after Ctrl-C (stopped or lost?): ending the job",
                     names, secs);
            out = RANK_WAIT_GIVE_UP;
            goto done;
        }
        if (v->since_cancel >= RANK_WAIT_CANCEL_MOST) {
            for (int r = 1; r < v->size; r++)
                if (v->late[r])
                    set[r] = any = 1;
            if (any) {
                rank_wait_names(set, v->size, names, sizeof names);
                rank_wait_secs(v->since_cancel, secs, sizeof secs);
                snprintf(line, len, "%s still at work %s after Ctrl-C: ending the job", names,
                         secs);
                out = RANK_WAIT_GIVE_UP;
                goto done;
            }
        }
    }

    /* One rank speaks: rank 0 of every rank, rank 1 of rank 0 (the one a
     * rank other than 0 hears). */
    if (v->rank == 0 || v->rank == 1) {
        for (int r = 0; r < v->size; r++) {
            if (r == v->rank || v->silent[r] < v->bound || (v->rank == 1 && r != 0) ||
                (v->named && v->named[r]))
                continue;
            set[r] = 1;
            any = 1;
            least = least < 0 || v->silent[r] < least ? v->silent[r] : least;
        }
        if (any) {
            rank_wait_names(set, v->size, names, sizeof names);
            rank_wait_secs(least, secs, sizeof secs);
            snprintf(line, len, "rank %d waits for %s (no answer for %s; stopped or lost?)",
                     v->rank, names, secs);
            if (named_now)
                memcpy(named_now, set, (size_t)v->size);
            out = RANK_WAIT_SILENT;
            goto done;
        }
    }

    /* Ranks that answer but are not there yet: rank 0 names them once. */
    if (v->rank == 0 && !v->said_silent && !v->said_late && v->waited >= v->bound) {
        for (int r = 1; r < v->size; r++)
            if (v->late[r])
                set[r] = any = 1;
        if (any) {
            rank_wait_names(set, v->size, names, sizeof names);
            rank_wait_secs(v->waited, secs, sizeof secs);
            snprintf(line, len, "rank 0 waits for %s (still at work after %s)", names, secs);
            out = RANK_WAIT_LATE;
        }
    }
done:
    free(set);
    return out;
}
