/* The script language: a line split at ';' and newlines (quotes, escapes,
 * comments), each command into words, looked up, its key=value options
 * checked and parsed (load's and gen's real option parsers), errors
 * reported. Nothing is executed beyond parsing (tests/fuzz/stubs.c). */
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "err.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *line = malloc(size + 1);
    memcpy(line, data, size);
    line[size] = 0;
    static session s;
    memset(&s, 0, sizeof s);
    s.batch = 1;
    cmd_exec(&s, line);
    /* the word splitter alone, on the whole input, and its inverse view */
    char **argv, *storage;
    int argc = cmd_split(line, &argv, &storage);
    if (argc >= 0) {
        for (int i = 0; i < argc; i++) {
            size_t v;
            double x;
            cmd_parse_size(argv[i], "n", &v);
            cmd_parse_double(argv[i], "x", &x);
        }
        if (argv[argc] != NULL)
            abort();
        free(storage);
    } else if (!err_msg()[0] || strchr(err_msg(), '\n')) {
        abort();
    }
    free(line);
    return 0;
}
