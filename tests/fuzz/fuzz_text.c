/* Delimited text: the input is the file; its length picks one of the
 * column selections, header and delimiter settings people use. */
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const cols[] = {NULL, "1-", "-0", "-last", "0,2", "1-3,-2", "last", "x"};
    static const char delims[] = {0, 0, ',', '\t', ' ', ';'};
    load_opts o;
    load_opts_init(&o);
    o.cols = cols[size % 8];
    o.delim = delims[size / 8 % 6];
    o.header = (int)(size / 48 % 3) - 1;
    o.offset = size / 144 % 2;
    o.drop_nonfinite = (int)(size / 288 % 2);
    fuzz_load(fuzz_file(data, size, ".csv"), &o);
    return 0;
}
