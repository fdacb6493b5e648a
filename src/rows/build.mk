# Row sources: SFrame sections and DWARF CFI (.eh_frame), each decoded into
# the one row type of row.h.
LIB_SRCS += src/rows/sframe_decode.c src/rows/cfi.c src/rows/eh_index.c src/rows/cfi_cache.c
