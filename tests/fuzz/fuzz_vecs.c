/* TEXMEX fvecs / bvecs / ivecs. The input is the file; its length picks
 * the format and an offset/limit, so one corpus serves all three. */
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const ext[3] = {".fvecs", ".bvecs", ".ivecs"};
    load_opts o;
    load_opts_init(&o);
    o.offset = size / 3 % 3;
    o.limit = size / 9 % 4;
    fuzz_load(fuzz_file(data, size, ext[size % 3]), &o);
    return 0;
}
