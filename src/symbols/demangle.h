/* The demangler: Itanium C++ ABI names (_Z...) and Rust names (legacy
 * _ZN...17h<hash>E and v0 _R...) printed as binutils' `c++filt -i` prints
 * them, into a caller's buffer.
 *
 * Async-signal-safe: no allocation, no lock, no system call, no library
 * function but the string functions POSIX lists as async-signal-safe
 * (strlen, memmove, which the compiler may call for a loop).  The whole
 * state lives on the stack, under 16 KiB with the recursion the budgets
 * below allow (tests/symbols/t_demangle.c measures it), and every loop
 * and recursion has a budget.  A name that would exceed one is refused,
 * as is one that is not mangled: the caller then prints the name as it
 * is.  The most the 43,919 mangled names of libstdc++'s and libLLVM-14's
 * .dynsym need: 170 nodes, 60 substitutions, parse depth 23, print depth
 * 29, 1,075 steps. */
#ifndef SFB_DEMANGLE_H
#define SFB_DEMANGLE_H

#include <stddef.h>

/* Longest name looked at, in bytes: c++filt refuses longer ones too. */
#define SFB_DEMANGLE_MAX_INPUT 1024
/* Parse tree: nodes, substitution candidates. */
#define SFB_DEMANGLE_MAX_NODES 512
#define SFB_DEMANGLE_MAX_SUBS 160
/* Nesting of the grammar's recursive rules (types, expressions, template
 * argument lists, encodings) while parsing, and of tree nodes while
 * printing. */
#define SFB_DEMANGLE_MAX_PARSE_DEPTH 40
#define SFB_DEMANGLE_MAX_PRINT_DEPTH 48
/* Tree nodes visited while printing: substitutions and template
 * parameters let a short name print a long text many times over. */
#define SFB_DEMANGLE_MAX_STEPS 8192
/* Recursive rules entered while parsing: a conversion operator's
 * template arguments are parsed twice when they turn out not to be its
 * type's, and nested ones would take exponential time. */
#define SFB_DEMANGLE_MAX_PARSE_STEPS 4096

/* How much of each budget one call used (the greatest depth reached, the
 * nodes and steps taken), for tests that probe the budgets. */
struct sfb_demangle_usage {
	unsigned nodes, subs, parse_depth, print_depth, steps, parse_steps;
};

/* Demangle MANGLED into OUT (SIZE bytes, NUL-terminated).  Returns the
 * length written without the NUL, or -1 if MANGLED is not a mangled name
 * this demangler knows, breaks a budget, or does not fit in SIZE bytes;
 * OUT is then an empty string if SIZE > 0.  Nothing is written past
 * OUT[SIZE - 1]. */
__attribute__((visibility("hidden"))) int sfb_demangle(const char *mangled, char *out,
						      size_t size);

/* sfb_demangle(), reporting what it used in *USAGE (if not NULL). */
__attribute__((visibility("hidden"))) int
sfb_demangle_usage(const char *mangled, char *out, size_t size, struct sfb_demangle_usage *usage);

#endif
