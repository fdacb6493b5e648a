/* Discovery: which loaded object holds a PC.  Async-signal-safe.
 *
 * One function, sfb_discover(), with one implementation per kind of
 * process, chosen once:
 *   glibc >= 2.35, dynamic  glibc's _dl_find_object() itself: on glibc the
 *                           symbol is an IFUNC whose resolver returns it,
 *                           so a call costs what calling it directly did;
 *   static executable       the program's own headers (__ehdr_start): the
 *                           program is the only object (objects a static
 *                           program dlopen()s are not supported);
 *   glibc < 2.35, musl      a table of loaded objects filled from
 *                           dl_iterate_phdr() in normal context only
 *                           (discover.c states its rules).
 * Every answer gives an object whole: from its first PT_LOAD segment to the
 * end of its last.  glibc's _dl_find_object() describes a main program
 * whose segments leave gaps one segment at a time (the one holding the
 * PC), so sfb_discover() puts the main program's own record in its place
 * (discover.c, sfb_discover_main()).
 * The answer is laid out as glibc's struct dl_find_object up to
 * dlfo_eh_frame, followed by room for the members glibc reserves, then
 * our own; glibc writes dlfo_flags = 0 and never touches what follows its
 * struct.  So the members after it are valid only when SFB_FOUND_OWN is
 * set, and the accessors below answer for both. */
#ifndef SFB_DISCOVER_H
#define SFB_DISCOVER_H

#include <link.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum {
	SFB_FOUND_OWN = 1,   /* filled by discover.c, not by glibc */
	SFB_FOUND_MAIN = 2,  /* the main program */
	SFB_FOUND_STAYS = 4, /* cannot be unloaded (static program, musl) */
};

struct sfb_found {
	unsigned long long dlfo_flags;
	void *dlfo_map_start; /* the object's whole mapping: first PT_LOAD */
	void *dlfo_map_end;   /* to the end of the last */
	struct link_map *dlfo_link_map; /* NULL if not known */
	void *dlfo_eh_frame;
	void *dlfo_reserved[8]; /* glibc's own, never ours */
	/* Only with SFB_FOUND_OWN: */
	uintptr_t ehdr;      /* the ELF header's address, 0 if not mapped */
	uintptr_t bias;      /* load bias (l_addr, dlpi_addr) */
	const ElfW(Dyn) *dyn; /* PT_DYNAMIC in memory, or NULL */
	const char *name;    /* its file's name; "" for the main program */
	const ElfW(Phdr) *phdr; /* its program headers, as the loader recorded them */
	unsigned phnum;
};

/* 0 and *out, or -1: no object we may use holds pc.  The object is given
 * whole, with its program headers where they are known (SFB_FOUND_OWN). */
int sfb_discover(void *pc, struct sfb_found *out) __attribute__((visibility("hidden")));

/* Bring the table up to date with dlopen()/dlclose() (dl_iterate_phdr()'s
 * counters).  Normal context only; nothing to do where the table is not
 * used.  Called by the library's normal-context entry points. */
void sfb_discover_refresh(void) __attribute__((visibility("hidden")));

/* dl_iterate_phdr()'s counters of objects added and removed so far:
 * c[0] adds, c[1] subs.  Normal context only. */
void sfb_discover_counters(unsigned long long c[2]) __attribute__((visibility("hidden")));

static inline uintptr_t sfb_found_ehdr(const struct sfb_found *f)
{
	return f->dlfo_flags & SFB_FOUND_OWN ? f->ehdr : (uintptr_t)f->dlfo_map_start;
}

static inline uintptr_t sfb_found_bias(const struct sfb_found *f)
{
	if (f->dlfo_flags & SFB_FOUND_OWN)
		return f->bias;
	return f->dlfo_link_map ? f->dlfo_link_map->l_addr : 0;
}

static inline const ElfW(Dyn) *sfb_found_dyn(const struct sfb_found *f)
{
	if (f->dlfo_flags & SFB_FOUND_OWN)
		return f->dyn;
	return f->dlfo_link_map ? f->dlfo_link_map->l_ld : NULL;
}

/* The object's program headers and their number, or NULL where only its
 * ELF header (at dlfo_map_start) can say. */
static inline const ElfW(Phdr) *sfb_found_phdrs(const struct sfb_found *f, unsigned *n)
{
	if (!(f->dlfo_flags & SFB_FOUND_OWN) || !f->phdr)
		return NULL;
	*n = f->phnum;
	return f->phdr;
}

static inline const char *sfb_found_name(const struct sfb_found *f)
{
	if (f->dlfo_flags & SFB_FOUND_OWN)
		return f->name ? f->name : "";
	return f->dlfo_link_map && f->dlfo_link_map->l_name ? f->dlfo_link_map->l_name : "";
}

#ifdef __GLIBC__
/* glibc lists the base namespace from _r_debug.r_map, the main program
 * first. */
static inline bool sfb_found_is_main(const struct sfb_found *f)
{
	if (f->dlfo_flags & SFB_FOUND_OWN)
		return f->dlfo_flags & SFB_FOUND_MAIN;
	return f->dlfo_link_map && f->dlfo_link_map == _r_debug.r_map;
}

/* An address inside the dynamic linker, or 0. */
static inline uintptr_t sfb_discover_ldso_anchor(void)
{
	return (uintptr_t)&_r_debug;
}
#else
static inline bool sfb_found_is_main(const struct sfb_found *f)
{
	return f->dlfo_flags & SFB_FOUND_MAIN;
}

/* musl's dynamic linker is libc itself. */
static inline uintptr_t sfb_discover_ldso_anchor(void)
{
	return 0;
}
#endif

#endif
