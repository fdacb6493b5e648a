/* Symbols of loaded objects: the object holding a PC (discovery), its
 * loaded segments, its .dynsym and its build-id, all read in memory.  A
 * crashing process may have corrupted any of it: every table is checked
 * against the object's readable loaded segments before it is read. */
#define _GNU_SOURCE
#include <elf.h>
#include <link.h>
#include <string.h>

#include "objects/discover.h"
#include "objects/elf_phdrs.h"
#include "symbols/symtab.h"

#define MAX_DYN 1024 /* dynamic entries scanned */

#ifdef __s390x__
typedef uint64_t hash_word; /* s390x's SysV .hash has 64-bit words */
#else
typedef uint32_t hash_word;
#endif

int sfb_find_object(uintptr_t pc, struct sfb_obj *o)
{
	struct sfb_found r;
	if (sfb_discover((void *)pc, &r) != 0)
		return 0;
	o->bias = sfb_found_bias(&r);
	o->start = (uintptr_t)r.dlfo_map_start;
	o->end = (uintptr_t)r.dlfo_map_end;
	o->dyn = sfb_found_dyn(&r);
	o->name = sfb_found_name(&r);
	return o->start < o->end;
}

/* Is [addr, addr+len) inside one readable loaded segment?  The object's
 * span is not enough: glibc leaves PROT_NONE holes between segments. */
static int mem_ok(const struct sfb_obj *o, uintptr_t addr, uint64_t len)
{
	uint64_t a = addr - o->bias;
	for (int i = 0; i < o->nseg; i++) {
		const struct sfb_seg *s = &o->seg[i];
		if ((s->flags & PF_R) && a >= s->lo && a <= s->hi &&
		    len <= s->hi - a)
			return 1;
	}
	return 0;
}

/* Learn the loaded segments from the program headers in memory.  They are
 * trusted only inside the first page, which is mapped because it holds
 * the ELF header.  Without them, fall back to the whole span, unexecutable
 * so that untyped symbols are ignored. */
void sfb_load_segments(struct sfb_obj *o)
{
	unsigned n = 0;
	const Elf64_Phdr *phdrs = sfb_loaded_phdrs(o->start, o->end, &n);
	o->nseg = 0;
	o->ehdr = phdrs ? (const unsigned char *)o->start : NULL;
	for (unsigned i = 0; phdrs && i < n && o->nseg < SFB_MAX_SEGS; i++) {
		Elf64_Phdr ph;
		memcpy(&ph, &phdrs[i], sizeof ph);
		uint64_t lo = ph.p_vaddr, hi = lo + ph.p_memsz;
		if (ph.p_type != PT_LOAD || hi < lo || lo + o->bias < o->start ||
		    hi + o->bias > o->end)
			continue;
		o->seg[o->nseg++] = (struct sfb_seg){ lo, hi, ph.p_flags };
	}
	if (o->nseg == 0)
		o->seg[o->nseg++] = (struct sfb_seg){ o->start - o->bias,
						      o->end - o->bias, PF_R };
}

/* glibc relocates most d_ptr values in place, but not e.g. the vDSO's. */
static uintptr_t dyn_ptr(const struct sfb_obj *o, uint64_t v)
{
	return v >= o->start && v < o->end ? v : v + o->bias;
}

static uint32_t load32(uintptr_t p)
{
	uint32_t v;
	memcpy(&v, (const void *)p, 4);
	return v;
}

/* .dynsym has no size of its own: the hash table says how many symbols. */
static uint64_t dynsym_count(const struct sfb_obj *o, uintptr_t hash, uintptr_t gnu)
{
	if (hash) { /* nchain, the second word */
		hash_word nchain;
		if (!mem_ok(o, hash, 2 * sizeof nchain))
			return 0;
		memcpy(&nchain, (const void *)(hash + sizeof nchain), sizeof nchain);
		return nchain;
	}
	if (!gnu || !mem_ok(o, gnu, 16))
		return 0;
	uint64_t nbuckets = load32(gnu), symoff = load32(gnu + 4);
	uintptr_t buckets = gnu + 16 + (uint64_t)load32(gnu + 8) * 8;
	if (buckets < gnu || !mem_ok(o, buckets, nbuckets * 4))
		return 0;
	uint64_t last = 0;
	for (uint64_t i = 0; i < nbuckets; i++)
		if (load32(buckets + i * 4) > last)
			last = load32(buckets + i * 4);
	if (last < symoff)
		return symoff;
	/* Walk the last chain to its end bit. */
	uintptr_t chain = buckets + nbuckets * 4 + (last - symoff) * 4;
	for (uint64_t n = 0; n < SFB_MAX_SYMS; n++, chain += 4) {
		if (!mem_ok(o, chain, 4))
			return 0;
		if (load32(chain) & 1)
			return last + n + 1;
	}
	return 0;
}

void sfb_scan_dynsym(const struct sfb_obj *o, struct sfb_targets *ts)
{
	uintptr_t symtab = 0, hash = 0, gnu = 0;
	struct sfb_strtab t = { NULL, -1, 0, 0 };
	const Elf64_Dyn *d = o->dyn;
	for (int i = 0;; i++, d++) {
		if (i == MAX_DYN || !mem_ok(o, (uintptr_t)d, sizeof *d))
			return;
		if (d->d_tag == DT_NULL)
			break;
		if (d->d_tag == DT_SYMTAB)
			symtab = dyn_ptr(o, d->d_un.d_ptr);
		else if (d->d_tag == DT_STRTAB)
			t.mem = (const char *)dyn_ptr(o, d->d_un.d_ptr);
		else if (d->d_tag == DT_STRSZ)
			t.size = d->d_un.d_val;
		else if (d->d_tag == DT_HASH)
			hash = dyn_ptr(o, d->d_un.d_ptr);
		else if (d->d_tag == DT_GNU_HASH)
			gnu = dyn_ptr(o, d->d_un.d_ptr);
		else if (d->d_tag == DT_SYMENT &&
			 d->d_un.d_val != sizeof(Elf64_Sym))
			return;
	}
	uint64_t n = dynsym_count(o, hash, gnu);
	if (n > SFB_MAX_SYMS)
		n = SFB_MAX_SYMS;
	if (!symtab || symtab % 8 || !t.mem ||
	    !mem_ok(o, (uintptr_t)t.mem, t.size) ||
	    !mem_ok(o, symtab, n * sizeof(Elf64_Sym)))
		return;
	for (uint64_t i = 0; i < n; i++)
		sfb_consider_all(ts, o, (const Elf64_Sym *)symtab + i, &t);
}

/* The object's build-id, copied out of its first page; its length, or 0. */
uint32_t sfb_loaded_build_id_copy(const struct sfb_obj *o, uint8_t id[SFB_MAX_BUILD_ID])
{
	unsigned n;
	uint16_t off;
	uint32_t len;
	const Elf64_Phdr *ph = o->ehdr ? sfb_loaded_phdrs(o->start, o->end, &n) : NULL;
	if (!ph || !sfb_loaded_build_id(o->start, o->bias, ph, n, &off, &len) ||
	    len > SFB_MAX_BUILD_ID)
		return 0;
	memcpy(id, (const void *)(o->start + off), len);
	return len;
}
