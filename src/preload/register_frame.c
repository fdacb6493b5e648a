/* JIT compilers that know nothing of sframebt hand their unwind tables to
 * libgcc: __register_frame(begin) with an .eh_frame section ending in a
 * zero terminator, __deregister_frame(begin) before the code goes
 * (LLVM's MCJIT, ORC and JITLink on Linux; others that throw C++
 * exceptions through generated code), or the older crtbegin-style pair
 * __register_frame_info(begin, object) (or its _bases form, with text and
 * data bases) and __deregister_frame_info(begin) (or _bases), where the
 * caller lends libgcc the storage of its bookkeeping.  Interposed here, in
 * the preload objects, each section is also registered with sframebt (its
 * range: what its FDEs cover; keyed by begin, whichever function
 * registered it), then passed on to the next definition, libgcc's, which
 * C++ exceptions and _Unwind_Backtrace() still need.  A section sframebt
 * refuses (malformed, overlapping what is registered, FDEs whose
 * addresses are relative to the text or data bases, which x86-64 and
 * AArch64 compilers never emit) is still passed on; so is one registered
 * twice (libgcc's __register_frame() may call __register_frame_info()
 * through the interposer: the second registration is refused, the first
 * stays).  The table forms (__register_frame_info_table*(), a vector of
 * FDE pointers) are passed on untouched: sframebt does not see that code.
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
typedef void (*info_fn)(const void *, void *);
typedef void (*info_bases_fn)(const void *, void *, void *, void *);
typedef void *(*dereg_info_fn)(const void *);

#define EXPORT __attribute__((visibility("default")))
void __register_frame(void *begin) EXPORT;
void __deregister_frame(void *begin) EXPORT;
void __register_frame_info(const void *begin, void *ob) EXPORT;
void __register_frame_info_bases(const void *begin, void *ob, void *tbase, void *dbase) EXPORT;
void *__deregister_frame_info(const void *begin) EXPORT;
void *__deregister_frame_info_bases(const void *begin) EXPORT;

static void *next_definition(const char *name)
{
	return dlsym(RTLD_NEXT, name);
}

static void register_section(const void *begin)
{
	if (begin) {
		SFB_ENTRY;
		sfb_jit_register_eh_frame(begin, MAX_EH_FRAME, NULL);
	}
}

/* Ours first: when libgcc's returns, the caller may free the code. */
static void unregister_section(const void *begin)
{
	if (begin) {
		SFB_ENTRY;
		sfb_jit_unregister_eh_frame(begin);
	}
}

void __register_frame(void *begin)
{
	static frame_fn next;
	if (!next)
		next = (frame_fn)next_definition("__register_frame");
	register_section(begin);
	if (next)
		next(begin);
}

void __deregister_frame(void *begin)
{
	static frame_fn next;
	if (!next)
		next = (frame_fn)next_definition("__deregister_frame");
	unregister_section(begin);
	if (next)
		next(begin);
}

void __register_frame_info(const void *begin, void *ob)
{
	static info_fn next;
	if (!next)
		next = (info_fn)next_definition("__register_frame_info");
	register_section(begin);
	if (next)
		next(begin, ob);
}

void __register_frame_info_bases(const void *begin, void *ob, void *tbase, void *dbase)
{
	static info_bases_fn next;
	if (!next)
		next = (info_bases_fn)next_definition("__register_frame_info_bases");
	register_section(begin);
	if (next)
		next(begin, ob, tbase, dbase);
}

void *__deregister_frame_info(const void *begin)
{
	static dereg_info_fn next;
	if (!next)
		next = (dereg_info_fn)next_definition("__deregister_frame_info");
	unregister_section(begin);
	return next ? next(begin) : NULL;
}

void *__deregister_frame_info_bases(const void *begin)
{
	static dereg_info_fn next;
	if (!next)
		next = (dereg_info_fn)next_definition("__deregister_frame_info_bases");
	unregister_section(begin);
	return next ? next(begin) : NULL;
}
