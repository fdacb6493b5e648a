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

#ifndef DLFO_STRUCT_HAS_EH_DBASE
struct dl_find_object {
	unsigned long long dlfo_flags;
	void *dlfo_map_start, *dlfo_map_end;
	struct link_map *dlfo_link_map;
	void *dlfo_eh_frame;
};

struct compat_query {
	uintptr_t addr;
	struct dl_find_object *r;
	int found;
};

static int compat_one(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	struct compat_query *q = arg;
	uintptr_t lo = UINTPTR_MAX, hi = 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *p = &info->dlpi_phdr[i];
		if (p->p_type != PT_LOAD)
			continue;
		if (p->p_vaddr < lo)
			lo = p->p_vaddr;
		if (p->p_vaddr + p->p_memsz > hi)
			hi = p->p_vaddr + p->p_memsz;
	}
	if (lo >= hi)
		return 0;
	lo = info->dlpi_addr + (lo & ~(uintptr_t)4095);
	hi += info->dlpi_addr;
	if (q->addr < lo || q->addr >= hi)
		return 0;
	q->r->dlfo_flags = 0;
	q->r->dlfo_map_start = (void *)lo;
	q->r->dlfo_map_end = (void *)hi;
	q->r->dlfo_link_map = NULL;
	for (struct link_map *lm = _r_debug.r_map; lm; lm = lm->l_next)
		if (lm->l_addr == info->dlpi_addr && lm->l_name == info->dlpi_name)
			q->r->dlfo_link_map = lm;
	q->r->dlfo_eh_frame = NULL;
	q->found = 1;
	return 1;
}

__attribute__((unused)) static int compat_dl_find_object(void *addr, struct dl_find_object *r)
{
	struct compat_query q = { (uintptr_t)addr, r, 0 };
	dl_iterate_phdr(compat_one, &q);
	return q.found ? 0 : -1;
}
#define _dl_find_object compat_dl_find_object

/* Without _dl_find_object, sframebt finds an object loaded or unloaded
 * since its last normal-context refresh only after the next one
 * (sframe_backtrace_warmup(): src/discover.c).  The tests walk through
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
