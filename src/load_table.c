/* The loader table: one row per format. Detection order when no format is
 * given: the file name's ending (in table order), then each probe on the
 * first bytes (in table order: text last, as it is the loosest). */
#include <string.h>
#include <strings.h>

#include "load_util.h"

static const loader ld_fvecs = {"fvecs", ".fvecs .fvec",
                                "TEXMEX: int32 d, then d float32, per point", NULL, load_fvecs};
static const loader ld_bvecs = {"bvecs", ".bvecs .bvec", "TEXMEX: int32 d, then d uint8, per point",
                                NULL, load_bvecs};
static const loader ld_ivecs = {"ivecs", ".ivecs .ivec", "TEXMEX: int32 d, then d int32, per point",
                                NULL, load_ivecs};
static const loader ld_npy = {"npy", ".npy",
                              "NumPy .npy v1-v3, f2 f4 f8 u1 i1 u2 i2 u4 i4 u8 i8, either byte "
                              "order, C or Fortran order",
                              npy_probe, load_npy};
static const loader ld_hdf5 = {"hdf5", ".hdf5 .h5 .he5",
                               "HDF5 (ann-benchmarks): dataset=NAME, default train", hdf5_probe,
                               load_hdf5};
static const loader ld_idx = {"idx", "-ubyte .idx .idx1 .idx2 .idx3 .idx4",
                              "MNIST idx: big-endian, first dimension n, the rest flattened",
                              idx_probe, load_idx};
static const loader ld_raw = {"raw", ".f16 .f32 .f64 .u8 .i8 .u16 .i16 .u32 .i32 .u64 .i64 .raw",
                              "raw binary: dtype=T dim=N (T from a .f32-style name)", NULL,
                              load_raw};
static const loader ld_csv = {"csv", ".csv .tsv .txt .dat .ssv .data",
                              "delimited text: , tab ; or spaces; header, # comments, cols=SPEC",
                              text_probe, load_text};

const loader *const loader_table[] = {&ld_fvecs, &ld_bvecs, &ld_ivecs, &ld_npy, &ld_hdf5,
                                      &ld_idx,   &ld_raw,   &ld_csv,   NULL};

const loader *loader_find(const char *name)
{
    for (int i = 0; loader_table[i]; i++)
        if (!strcasecmp(loader_table[i]->name, name))
            return loader_table[i];
    /* other names people type for the text loader */
    if (!strcasecmp(name, "tsv") || !strcasecmp(name, "text") || !strcasecmp(name, "txt"))
        return &ld_csv;
    if (!strcasecmp(name, "h5"))
        return &ld_hdf5;
    return NULL;
}
