/* JIT compilers that know nothing of sframebt hand their unwind tables to
 * libgcc: __register_frame(begin) with an .eh_frame section ending in a
 * zero terminator, __deregister_frame(begin) before the code goes
 * (LLVM's MCJIT, ORC and JITLink on Linux; others that throw C++
 * exceptions through generated code).  Interposed here, in the preload
 * object, each section is also registered with sframebt (its range: what
 * its FDEs cover), then passed on to the next definition, libgcc's, which
 * C++ exceptions and _Unwind_Backtrace() still need.  A section sframebt
 * refuses (malformed, overlapping what is registered) is still passed on.
 * Normal context, as libgcc's own. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stddef.h>
#include <stdint.h>

#include "base/entry.h"
#include "objects/jit_registry.h"

/* The most of a section scanned for its terminator. */
#define MAX_EH_FRAME ((size_t)64 << 20)

typedef void (*frame_fn)(void *);

void __register_frame(void *begin) __attribute__((visibility("default")));
void __deregister_frame(void *begin) __attribute__((visibility("default")));

static frame_fn next_definition(const char *name)
{
	return (frame_fn)dlsym(RTLD_NEXT, name);
}

void __register_frame(void *begin)
{
	static frame_fn next;
	if (!next)
		next = next_definition("__register_frame");
	if (begin) {
		SFB_ENTRY;
		sfb_jit_register_eh_frame(begin, MAX_EH_FRAME, NULL);
	}
	if (next)
		next(begin);
}

void __deregister_frame(void *begin)
{
	static frame_fn next;
	if (!next)
		next = next_definition("__deregister_frame");
	/* Ours first: when libgcc's returns, the caller may free the code. */
	if (begin) {
		SFB_ENTRY;
		sfb_jit_unregister_eh_frame(begin);
	}
	if (next)
		next(begin);
}
