/* MNIST idx: the input is the file (type byte, dimension count and sizes). */
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    load_opts o;
    load_opts_init(&o);
    o.limit = size % 4;
    fuzz_load(fuzz_file(data, size, ".idx"), &o);
    return 0;
}
