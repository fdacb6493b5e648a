/* The shared object of t_layouts (LAYOUT_LIB): a chain of four functions
 * without frame pointers, each recording its return address, the last
 * calling back into the program. */
#include <stdint.h>

#define RA() ((uintptr_t)__builtin_extract_return_addr(__builtin_return_address(0)))

typedef unsigned next_fn(unsigned);
static volatile unsigned sink;

#define LIB_CHAIN(k, call)                                                          \
	__attribute__((noinline)) static unsigned lib_chain_##k(unsigned x, next_fn *next, \
							       uintptr_t *ras)      \
	{                                                                           \
		volatile unsigned pad[(k) + 2];                                      \
		ras[k] = RA();                                                      \
		pad[0] = x;                                                         \
		unsigned r = call;                                                  \
		sink = pad[(k) + 1];                                                \
		return r + 1;                                                       \
	}
LIB_CHAIN(3, next(pad[0]))
LIB_CHAIN(2, lib_chain_3(pad[0], next, ras))
LIB_CHAIN(1, lib_chain_2(pad[0], next, ras))
LIB_CHAIN(0, lib_chain_1(pad[0], next, ras))

/* ras[4]: its own return address, into main. */
unsigned layout_lib_chain(unsigned x, next_fn *next, uintptr_t *ras)
{
	ras[4] = RA();
	return lib_chain_0(x, next, ras) + 1;
}
