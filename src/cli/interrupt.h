/* What Ctrl-C left for the front ends: app.c's SIGINT handler sets
 * interrupt_pending (and cancels the command in flight while
 * interrupt_busy says one runs); the line REPL and the dashboard mark a
 * command's execution with interrupt_busy and clear interrupt_pending
 * once they have acted on it. Its own module so the front ends need not
 * include the application that wires them (app.h), nor it them both ways. */
#ifndef TCJ_INTERRUPT_H
#define TCJ_INTERRUPT_H

/* Set by SIGINT; the line REPL clears its line when it sees it at the
 * prompt. During a run SIGINT also sets session.cancel. */
extern volatile int interrupt_pending;
/* Whether a command is executing (SIGINT cancels it) or the prompt waits. */
extern volatile int interrupt_busy;

#endif
