/* HDF5: the input is the file, read the way `load` reads it, in a child
 * process. A crash of libhdf5 in the child must come back as one line; the
 * harness (the parent) must never crash. Coverage of the child is not seen
 * by libFuzzer, so this harness is a robustness check of the isolation and
 * of the parent's checks more than a guided search inside libhdf5. */
#include "fuzz.h"

/* libhdf5 in the child asks malloc for sizes read from the file: a NULL,
 * as outside the sanitizer, not a report (run.sh also lifts libFuzzer's
 * malloc limit for this harness; the parent stays under -rss_limit_mb). */
const char *__asan_default_options(void)
{
    return "allocator_may_return_null=1";
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    load_opts o;
    load_opts_init(&o);
    o.h5name = size % 2 ? "train" : "test";
    fuzz_load(fuzz_file(data, size, ".hdf5"), &o);
    return 0;
}
