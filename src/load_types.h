/* The element types a binary file may hold (npy, raw, idx, HDF5 as read
 * by its child): their names and sizes, the dtype= spelling, and the
 * conversion of packed values to doubles. Below the loaders and the load
 * options alike (src/dataset.c parses dtype= through it), so neither
 * includes the other's header. */
#ifndef TCJ_LOAD_TYPES_H
#define TCJ_LOAD_TYPES_H

#include <stddef.h>

/* Element types of binary formats. */
enum ld_type {
    LD_U8,
    LD_I8,
    LD_U16,
    LD_I16,
    LD_U32,
    LD_I32,
    LD_U64,
    LD_I64,
    LD_F16,
    LD_F32,
    LD_F64
};

size_t ld_type_size(int type);
const char *ld_type_name(int type); /* "u8", "f32", ... */
/* Parse "f32", "f32be", "u8", ...; returns the type or -1. *be set to 1 for a
 * "be" suffix, 0 otherwise ("le" suffix accepted). */
int ld_type_parse(const char *s, int *be);
/* Convert cnt packed values at src to doubles. */
void ld_convert(int type, int be, const unsigned char *src, size_t cnt, double *dst);

#endif
