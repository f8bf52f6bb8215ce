/* Memory that data sizes: every allocation a file's header, an option or a
 * dataset's shape (n, d) sizes goes through here, loaders and engines
 * alike, so a size beyond what the process can get is one line
 * (TCJ_ENOMEM, "WHAT: needs 34.4 GB of memory for ...; 21.9 GB available")
 * and never an abort. Fixed small allocations keep xmalloc (err.h). */
#ifndef TCJ_MEM_H
#define TCJ_MEM_H

#include <stddef.h>
#include <stdint.h>

/* Bytes of memory this process can still get: MemAvailable from
 * /proc/meminfo (else sysconf), capped by a cgroup limit and by
 * RLIMIT_AS less what is mapped; UINT64_MAX when unknown. */
uint64_t mem_available(void);
/* Tests only: cap what mem_available reports at bytes (0: no cap). */
void mem_cap_for_tests(uint64_t bytes);
/* 0, or TCJ_ENOMEM with one line when cnt x size bytes (plus extra) do not
 * fit in mem_available: "WHAT: needs B of memory for FOR; A available". */
int mem_check(const char *what, const char *for_what, uint64_t cnt, uint64_t size, uint64_t extra);
/* cnt x size bytes (zeroed when zero), checked as mem_check does, or NULL
 * with the line set; malloc failing (ulimit -v) gives the same line. The
 * caller frees. */
void *mem_alloc(const char *what, const char *for_what, size_t cnt, size_t size, int zero);

/* Freed host memory kept by the process for the next run's arrays
 * (glibc's mallopt: blocks up to 256 MB from the heap, whose free top is
 * given back above 512 MB), not mapped afresh and faulted in page by page
 * each run: for a run's dozen arrays of 60,000 points, page faults cost a
 * round some fifty times what kept memory costs on the build machine
 * (more in the H200 host's sandbox). mem_check gives what is kept back
 * (malloc_trim) before
 * it refuses. The malloc tunables in the environment (GLIBC_TUNABLES,
 * MALLOC_*_) take precedence: then nothing is changed. Called once, at
 * the start of main. */
void mem_keep_freed(void);
/* The opposite, for a process that reads once and ends (load_hdf5's
 * reader, forked from the session): blocks from 1 MiB are mapped on their
 * own and freed memory goes back at once, so a buffer grown by doubling
 * (libhdf5's deflate, to a chunk's size) holds about its last size, not
 * also each size it passed (544 MB for a 256 MiB chunk, 323 MB so). The
 * same environment settings take precedence. */
void mem_free_promptly(void);

/* b bytes for a message: "412 bytes", "34.4 GB" (powers of 1000); buf
 * holds at least 32 characters and is returned. */
const char *mem_bytes_str(uint64_t b, char *buf);

#endif
