/* Raw binary: byte 0 picks dtype and byte order, byte 1 the dim (0 to 255,
 * 0 refused by load_opts_set as by the command), the rest is the file. */
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const types[] = {"f16",   "f32",   "f64",   "u8",   "i8",  "u16",
                                        "i16",   "u32",   "i32",   "u64",  "i64", "f32be",
                                        "f64be", "u16be", "i32be", "f16be"};
    if (size < 2)
        return 0;
    load_opts o;
    load_opts_init(&o);
    o.format = "raw";
    o.dtype = types[data[0] % 16];
    o.dim = data[1] ? data[1] : ((size_t)1 << 62) + data[0]; /* a size that wraps around */
    o.offset = data[0] >> 6;
    fuzz_load(fuzz_file(data + 2, size - 2, ".bin"), &o);
    return 0;
}
