/* Pair sinks that write a file: the pair output of `run ... pairs=FILE`.
 * Formats: binary uint32 pairs (i, j), binary uint64 pairs (i, j), both in
 * the host's byte order (little-endian on x86-64 and arm64), or CSV text
 * with a header line "i,j,dist" and dist = sqrt(d2) to 17 digits. */
#ifndef TCJ_SINK_H
#define TCJ_SINK_H

#include <stdint.h>

#include "engine.h"

typedef enum sink_format {
    SINK_U32,
    SINK_U64,
    SINK_CSV,
} sink_format;

typedef struct sink_file sink_file;

/* "u32", "u64" or "csv"; returns 0 or TCJ_EINVAL with a message. */
int sink_format_parse(const char *name, sink_format *fmt);
const char *sink_format_name(sink_format fmt);

/* Start writing pairs to path through src/ofile.c: an existing file is
 * refused unless force; the session log's files (log_path, may be NULL)
 * always; the pairs go to a temporary file in the same directory, renamed
 * into place by sink_file_close(f, 1). On success *out is the caller's.
 * Errors name the file. */
int sink_file_open(const char *path, sink_format fmt, int force, const char *log_path,
                   sink_file **out);
/* The pair_sink to put in a join_spec; put() returns TCJ_EIO naming the file
 * when a write fails. */
pair_sink sink_file_pair_sink(sink_file *f);
uint64_t sink_file_pairs(const sink_file *f);
/* Flush, close and free. keep: rename the finished file into place;
 * otherwise (the run failed or was cancelled) remove it. Returns 0, or
 * TCJ_EIO naming the file if any write failed (then nothing is left at
 * path but what was there before). f may be NULL. */
int sink_file_close(sink_file *f, int keep);

#endif
