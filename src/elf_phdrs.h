/* The program headers of a loaded object, read from its memory.
 *
 * ld.so maps an object's ELF header at the start of its first mapping, and
 * the program headers of every ordinary object follow it in the same page.
 * They are trusted only there: a header claiming more, or anything but
 * 64-bit ELF, gives NULL.  The caller makes sure the first page is
 * readable (objcache.c probes it once per object). */
#ifndef SFB_ELF_PHDRS_H
#define SFB_ELF_PHDRS_H

#include <elf.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include "bytes.h"

#define SFB_FIRST_PAGE 4096u

static inline const Elf64_Phdr *sfb_loaded_phdrs(uintptr_t start, uintptr_t end,
						 unsigned *n)
{
	const Elf64_Ehdr *eh = (const void *)start;
	if (end - start < SFB_FIRST_PAGE || memcmp(eh->e_ident, ELFMAG, SELFMAG) ||
	    eh->e_ident[EI_CLASS] != ELFCLASS64 || eh->e_phentsize != sizeof(Elf64_Phdr) ||
	    eh->e_phoff < sizeof *eh || eh->e_phoff > SFB_FIRST_PAGE ||
	    (uint64_t)eh->e_phnum * sizeof(Elf64_Phdr) > SFB_FIRST_PAGE - eh->e_phoff)
		return NULL;
	*n = eh->e_phnum;
	return (const void *)(start + eh->e_phoff);
}

/* Where the object's GNU build-id lies, as an offset from start, and its
 * length; false if it has none in the first page.  ld.so's layout puts
 * the note there, right after the program headers (linkers emit it first
 * among the allocated sections); elsewhere it is not trusted to stay
 * readable, like anything past the first page.  Read through the bounds-
 * checked accessor over that page: a note's sizes are the object's word. */
static inline bool sfb_loaded_build_id(uintptr_t start, uintptr_t bias, const Elf64_Phdr *ph,
				       unsigned n, uint16_t *off, uint32_t *len)
{
	for (unsigned i = 0; i < n; i++) {
		/* Wraps to a huge offset for a segment below start. */
		uint64_t at = bias + ph[i].p_vaddr - start;
		if (ph[i].p_type != PT_NOTE || at > SFB_FIRST_PAGE ||
		    ph[i].p_memsz > SFB_FIRST_PAGE - at)
			continue;
		const struct sfb_bytes seg = { (const uint8_t *)start + at, ph[i].p_memsz, false };
		uint64_t align = ph[i].p_align == 8 ? 8 : 4, note = 0;
		uint64_t namesz, descsz, type, name;
		while (sfb_get(&seg, note, 4, &namesz) && sfb_get(&seg, note + 4, 4, &descsz) &&
		       sfb_get(&seg, note + 8, 4, &type)) {
			uint64_t desc = note + 12 + ((namesz + align - 1) & ~(align - 1));
			uint64_t next = desc + ((descsz + align - 1) & ~(align - 1));
			if (next > seg.len)
				break;
			/* "GNU\0", read as a little-endian word. */
			if (type == NT_GNU_BUILD_ID && namesz == 4 && descsz > 0 &&
			    sfb_get(&seg, note + 12, 4, &name) && name == 0x00554e47u) {
				*off = (uint16_t)(at + desc);
				*len = (uint32_t)descsz;
				return true;
			}
			note = next;
		}
	}
	return false;
}

#endif
