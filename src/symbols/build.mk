# Symbols: PC to name, from dynamic symbols, symbol tables, detached debug
# files and perf maps (symbolize.c chains them: symbols/symtab.h); names
# demangled (Itanium C++, Rust legacy and v0).
LIB_SRCS += src/symbols/symbolize.c src/symbols/pick.c src/symbols/loaded.c \
	src/symbols/elf_file.c src/symbols/debuglink.c src/symbols/perf_map.c \
	src/symbols/demangle.c src/symbols/demangle_rust.c src/symbols/names.c
# file:line and inlined frames: .debug_line, .debug_info and what they
# reference, read with pread, compressed sections through base/inflate.c.
LIB_SRCS += src/symbols/lines.c src/symbols/inlines.c src/symbols/debug_section.c \
	src/symbols/srcpos.c
