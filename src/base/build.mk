# Base: checked reads of untrusted bytes (stack memory, section bytes),
# publication of shared records, errno kept at entry, enumerator names,
# line building.  Depends on nothing else in src/.
LIB_SRCS += src/base/memread.c
LIB_SRCS += src/base/deflate.c src/base/inflate.c # inflate.c: the CRC-32
