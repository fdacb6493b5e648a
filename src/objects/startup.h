/* Which objects were loaded at start-up, and so are never unloaded.
 *
 * glibc unloads only objects that dlopen() loaded: the main program, its
 * DT_NEEDED closure, LD_PRELOAD objects, the vdso and ld.so stay until
 * exit.  The walker trusts their descriptions for good (objcache.h, the
 * kept objects) instead of confirming each one with _dl_find_object() on
 * every walk, the largest cost of a sample in a library that is not kept.
 * How they are told apart with public interfaces only: docs/DESIGN.md,
 * Discovery. */
#ifndef SFB_STARTUP_H
#define SFB_STARTUP_H

#include <stdint.h>

struct sfb_range {
	uintptr_t start, end; /* the object's mapping, as _dl_find_object() gives it */
};

/* The objects of the base namespace loaded at start-up other than the
 * main program (which objcache.h keeps anyway), in link-map order, at
 * most max of them (the rest are left out: they are then confirmed
 * like any other object).  Normal context only: it holds the loader's
 * lock through dl_iterate_phdr().  Returns how many were written. */
unsigned sfb_startup_objects(struct sfb_range *out, unsigned max);

#endif
