/* The one wording of a cancellation (src/err.c): "WHO: cancelled", a fact
 * after "; ", TCJ_ECANCEL returned; and the front end's naming of a bare
 * ERR_CANCELLED gives the same wording. */
#include <string.h>

#include "check.h"
#include "cmd.h"
#include "err.h"

TEST(err_cancelled_wording)
{
    err_clear();
    CHECK_EQ_INT(err_cancelled("run %s", "cpu"), TCJ_ECANCEL);
    CHECK(strcmp(err_msg(), "run cpu: cancelled") == 0);
    CHECK_EQ_INT(err_cancelled("curve"), TCJ_ECANCEL);
    CHECK(strcmp(err_msg(), "curve: cancelled") == 0);
    CHECK_EQ_INT(err_cancelled_note(ERR_NOTE_KEPT, "ladder"), TCJ_ECANCEL);
    CHECK(strcmp(err_msg(), "ladder: cancelled; what it finished is kept in the log") == 0);
    CHECK_EQ_INT(err_cancelled_note(NULL, "load %s", "a.csv"), TCJ_ECANCEL);
    CHECK(strcmp(err_msg(), "load a.csv: cancelled") == 0);
}

/* WHO may be the message being replaced (err_msg itself), and a path as
 * long as PATH_MAX keeps the wording at its end. */
TEST(err_cancelled_who_from_the_message)
{
    err_set(TCJ_EIO, "x.db: recording the command");
    err_cancelled_note(ERR_NOTE_LOCKED, "%s", err_msg());
    CHECK(strcmp(err_msg(), "x.db: recording the command: cancelled; the session log was locked by "
                            "another process") == 0);
    static char path[4097];
    memset(path, 'p', sizeof path - 1);
    err_cancelled("load %s", path);
    const char *m = err_msg();
    size_t n = strlen(m);
    CHECK(n > 4096 && strcmp(m + n - 11, ": cancelled") == 0);
    CHECK(strncmp(m, "load ppp", 8) == 0);
}

/* An engine's bare message named by the command's first word, in the
 * same wording; any other message kept. */
TEST(err_cancelled_bare_named_by_the_command)
{
    char b[128];
    CHECK(strcmp(cmd_cancel_text("export runs csv p", ERR_CANCELLED, b, sizeof b),
                 "export: cancelled") == 0);
    err_cancelled("export");
    CHECK(strcmp(b, err_msg()) == 0);
    CHECK(strcmp(cmd_cancel_text("run cpu", "run cpu: cancelled", b, sizeof b),
                 "run cpu: cancelled") == 0);
    CHECK(strcmp(cmd_cancel_text(NULL, ERR_CANCELLED, b, sizeof b), "cancelled") == 0);
}
