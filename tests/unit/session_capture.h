/* A fresh batch session and one command line run in it with its output
 * captured (the unit tests of commands: t_cmd, t_said). */
#ifndef TCJ_TEST_SESSION_CAPTURE_H
#define TCJ_TEST_SESSION_CAPTURE_H

#include <string.h>

#include "cmd.h"
#include "out.h"
#include "session.h"
#include "settings.h"

/* The line's output; valid until the next call. */
static inline char *exec_capture(session *s, const char *line)
{
    static out_buf b;
    out_buf_free(&b);
    out_set_sink(out_buf_sink, &b);
    cmd_exec(s, line);
    out_reset_sink();
    return b.data ? b.data : (char *)"";
}

static inline void new_session(session *s)
{
    memset(s, 0, sizeof *s);
    settings_default(s);
    s->batch = 1;
}

#endif
