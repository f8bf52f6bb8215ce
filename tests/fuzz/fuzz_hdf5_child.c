/* HDF5 in-process: what load_hdf5's child runs (load_hdf5_child), fed the
 * input as a file, its output thrown away. libFuzzer sees the coverage of
 * our checks and of libhdf5 here, so it can steer; a crash it finds inside
 * libhdf5 is one the child process isolates (fuzz_hdf5 and
 * tests/unit/t_hostile.c check that), kept as a regression input. libhdf5
 * keeps caches that look like leaks, so leak detection is off here, and
 * it asks malloc for sizes read from the file (289 PB in one seed): a NULL
 * it handles, as it gets outside the sanitizer. With FUZZ_HDF5_STREAM=FILE
 * the output goes to FILE instead, the last input's alone: what the child
 * sends the parent, the seeds of fuzz_hdf5_pipe. */
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include "fuzz.h"
#include "load_util.h"

const char *__asan_default_options(void)
{
    return "detect_leaks=0:allocator_may_return_null=1";
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int sink = -1;
    const char *keep = getenv("FUZZ_HDF5_STREAM");
    if (sink < 0 && (sink = keep ? open(keep, O_WRONLY | O_CREAT | O_TRUNC, 0644)
                                 : open("/dev/null", O_WRONLY)) < 0)
        abort();
    if (keep && (ftruncate(sink, 0) || lseek(sink, 0, SEEK_SET)))
        abort();
    load_opts o;
    load_opts_init(&o);
    o.h5name = size % 2 ? "train" : "test";
    o.limit = size / 2 % 4;
    load_hdf5_child(fuzz_file(data, size, ".hdf5"), &o, sink);
    return 0;
}
