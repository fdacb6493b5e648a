# Base: checked reads of untrusted bytes (stack memory, section bytes),
# publication of shared records, errno kept at entry, enumerator names,
# line building, the inflater and the Zstandard decoder (compressed debug
# sections) and the deflater (gzipped profiles).  Depends on nothing else
# in src/.
LIB_SRCS += src/base/memread.c
LIB_SRCS += src/base/inflate.c src/base/zstd.c src/base/deflate.c
