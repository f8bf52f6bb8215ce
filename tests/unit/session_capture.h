/* A fresh batch session and one command line run in it with its output
 * captured (the unit tests of commands: t_cmd, t_said, t_cpu_settings,
 * t_kdist, t_lab). */
#ifndef TCJ_TEST_SESSION_CAPTURE_H
#define TCJ_TEST_SESSION_CAPTURE_H

#include <string.h>

#include "cmd.h"
#include "out.h"
#include "session.h"
#include "settings.h"

/* The line's output, as JSON records where json is set (else text); valid
 * until the next call. */
static inline char *exec_capture_as(session *s, const char *line, int json)
{
    static out_buf b;
    out_buf_free(&b);
    out_set_json(json);
    out_set_sink(out_buf_sink, &b);
    cmd_exec(s, line);
    out_reset_sink();
    out_set_json(0);
    return b.data ? b.data : (char *)"";
}

/* The line's output as text; valid until the next call. */
static inline char *exec_capture(session *s, const char *line)
{
    return exec_capture_as(s, line, 0);
}

static inline void new_session(session *s)
{
    memset(s, 0, sizeof *s);
    settings_default(s);
    s->batch = 1;
}

#endif
