# Symbols: PC to name, from dynamic symbols, symbol tables, detached debug
# files and perf maps.
LIB_SRCS += src/symbols/symbolize.c
