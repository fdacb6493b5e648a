# Symbols: PC to name, from dynamic symbols, symbol tables, detached debug
# files and perf maps; names demangled (Itanium C++, Rust legacy and v0).
LIB_SRCS += src/symbols/symbolize.c src/symbols/demangle.c src/symbols/demangle_rust.c \
	src/symbols/names.c
