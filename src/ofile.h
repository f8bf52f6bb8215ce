/* Files a command writes where the user says (export FILE, out=, csv=).
 * An existing file is not replaced unless the command was given `force`;
 * the session log's own files (the database, -wal, -shm, -journal, found by
 * device and inode, so a symbolic or hard link to them counts, and by name
 * beside the log, so one SQLite has not made yet counts too) are never
 * written; and the data goes to a temporary file in the same directory,
 * NAME.tcjoin-partial-PID-XXXXXX (visible, so one a kill -9 leaves is
 * found beside NAME), that is renamed into place only when everything was
 * written, so a failed or cancelled write leaves the old file (or none)
 * and no partial one. The next output to that directory removes the
 * temporary files whose writer is dead (no process PID, no lock on the
 * file) and says how many it removed. An
 * existing device or FIFO (/dev/null) and the names of open descriptors
 * (/dev/stdout, /dev/fd/N, /proc/self/fd/N) are written directly; any
 * other path, under /dev/shm or through /proc/self/cwd too, follows the
 * rules above. A FIFO's open waits for its reader, and a write for a slow
 * one, in steps that end at Ctrl-C (the flag of ofile_set_cancel):
 * TCJ_ECANCEL with the bare ERR_CANCELLED, which the command names; a
 * reader that went away is TCJ_EIO "FILE: the reader closed the pipe".
 * Every command that writes a file opens it here (`run out=`, `curve
 * csv=`, `export` through store_export_f). */
#ifndef TCJ_OFILE_H
#define TCJ_OFILE_H

#include <stddef.h>
#include <stdio.h>

typedef struct ofile ofile;

/* The flag (Ctrl-C) that ends a wait for a FIFO's reader; NULL: none. */
void ofile_set_cancel(const volatile int *flag);

/* Check path and create its temporary file. log_path: the open session
 * log (NULL: none). Errors name the file and what to do (TCJ_EIO or
 * TCJ_EINVAL). *out is the caller's: ofile_commit or ofile_abort it. */
int ofile_open(const char *path, int force, const char *log_path, ofile **out);
/* The same checks, for a command that writes only after its work (`dbscan
 * out=`): the temporary file is made by the first ofile_stream,
 * ofile_write or ofile_commit, so a kill during the work leaves none; the
 * directory is proved writable now. ofile_tmp_path is NULL until then. */
int ofile_open_late(const char *path, int force, const char *log_path, ofile **out);
/* The stream to write (opened on first use). */
FILE *ofile_stream(ofile *f);
/* Append n bytes with write(2), all of them, for writers that pack large
 * chunks themselves (the binary pair formats: no stdio call per record);
 * through the stream instead once ofile_stream was called. A regular
 * file starts its write-back as each chunk goes out, so that commit's
 * fsync finds little left to wait for. TCJ_EIO naming the file, or what
 * ended a FIFO's writes (above). */
int ofile_write(ofile *f, const void *p, size_t n);
/* For a writer that found its stream failed (ferror) and set rc with
 * its own message: TCJ_ECANCEL or "FILE: the reader closed the pipe"
 * when that is what ended the writes, else rc as it is. */
int ofile_failure(const ofile *f, int rc);
/* The file being written, for code that opens a file by name itself. */
const char *ofile_tmp_path(const ofile *f);
/* Flush, close and rename into place; on any failure the temporary file
 * is removed and TCJ_EIO names the file (a FIFO's: as ofile_write). Frees
 * f. */
int ofile_commit(ofile *f);
/* Close and remove the temporary file (the target is left as it was).
 * Frees f; f may be NULL. */
void ofile_abort(ofile *f);

#endif
