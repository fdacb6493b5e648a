/* Ground truth for the walker tests on a glibc without _dl_find_object
 * (< 2.35): they ask it which object holds an address; here the answer
 * comes from dl_iterate_phdr() instead (the loader's lock: the tests ask
 * in normal context).  Force-included (-include) into the test programs
 * of tests/port/run.sh's glibc 2.31 build, never into the library.
 * Only the programs that link sframebt may use the macros below. */
#if !defined(SFB_DLFO_COMPAT_H) && !defined(__ASSEMBLER__)
#define SFB_DLFO_COMPAT_H
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <stddef.h>
#include <stdint.h>

#include "loaded_object.h"

#ifndef DLFO_STRUCT_HAS_EH_DBASE
struct dl_find_object {
	unsigned long long dlfo_flags;
	void *dlfo_map_start, *dlfo_map_end;
	struct link_map *dlfo_link_map;
	void *dlfo_eh_frame;
};

__attribute__((unused)) static int compat_dl_find_object(void *addr, struct dl_find_object *r)
{
	struct loaded_object o;
	if (!loaded_object_of(addr, &o))
		return -1;
	*r = (struct dl_find_object){ .dlfo_map_start = (void *)o.lo, .dlfo_map_end = (void *)o.hi };
	for (struct link_map *lm = _r_debug.r_map; lm; lm = lm->l_next)
		if (lm->l_addr == o.bias && lm->l_name == o.name)
			r->dlfo_link_map = lm;
	return 0;
}
#define _dl_find_object compat_dl_find_object

/* Without _dl_find_object, sframebt finds an object loaded or unloaded
 * since its last normal-context refresh only after the next one
 * (sframe_backtrace_warmup(): src/objects/discover.c).  The tests walk through
 * objects right after dlopen(), so here every dlopen() and dlclose() is
 * followed by one, as a program on such a libc does. */
int sframe_backtrace_warmup(void);
__attribute__((unused)) static void *compat_dlopen(const char *path, int flags)
{
	void *h = (dlopen)(path, flags);
	sframe_backtrace_warmup();
	return h;
}
__attribute__((unused)) static int compat_dlclose(void *h)
{
	int r = (dlclose)(h);
	sframe_backtrace_warmup();
	return r;
}
#define dlopen compat_dlopen
#define dlclose compat_dlclose
#endif
#endif
