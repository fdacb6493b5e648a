/* Test helper: the object holding an address, as dl_iterate_phdr()
 * describes it (the loader's lock: normal context only). */
#ifndef SFB_LOADED_OBJECT_H
#define SFB_LOADED_OBJECT_H

#include <link.h>
#include <stdbool.h>
#include <stdint.h>

struct loaded_object {
	/* From the page of its lowest PT_LOAD segment to the end of its
	 * highest, as loaded. */
	uintptr_t lo, hi;
	uintptr_t bias;   /* dlpi_addr */
	const char *name; /* dlpi_name */
};

struct loaded_object_query {
	uintptr_t addr;
	struct loaded_object *o;
	bool found;
};

static inline int loaded_object_one(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	struct loaded_object_query *q = arg;
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
	*q->o = (struct loaded_object){ lo, hi, info->dlpi_addr, info->dlpi_name };
	q->found = true;
	return 1;
}

/* False if no object holds addr. */
static inline bool loaded_object_of(const void *addr, struct loaded_object *o)
{
	struct loaded_object_query q = { (uintptr_t)addr, o, false };
	dl_iterate_phdr(loaded_object_one, &q);
	return q.found;
}

#endif
