/* NumPy .npy: the input is the file (header dict, shape, Fortran order). */
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    load_opts o;
    load_opts_init(&o);
    o.offset = size % 3;
    fuzz_load(fuzz_file(data, size, ".npy"), &o);
    return 0;
}
