/* Shared by the libFuzzer harnesses (tests/fuzz/fuzz_*.c): each input is
 * written to a file in a private temporary directory (the loaders take a
 * path), and every failure must leave exactly one line in err_msg(). */
#ifndef TCJ_FUZZ_H
#define TCJ_FUZZ_H

#include <stddef.h>
#include <stdint.h>

#include "dataset.h"

/* Write data to a file named "input" + ext in the harness's directory
 * (under /dev/shm when it exists); returns the path. Aborts on failure. */
const char *fuzz_file(const uint8_t *data, size_t size, const char *ext);
/* Load path with opt; a success must hold n >= 2 points of d >= 1 values
 * and a hash that matches them, a failure one line naming the file. Aborts
 * (a finding) otherwise. */
void fuzz_load(const char *path, const load_opts *opt);

#endif
