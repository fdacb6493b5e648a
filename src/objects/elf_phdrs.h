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
#include "base/bytes.h"

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

/* The first GNU build-id note (non-empty) among the ELF notes in `notes`,
 * whose entries are aligned to `align` (4 or 8): its descriptor's offset
 * in notes and its length.  Every read goes through the checked accessor:
 * a note's sizes are the file's or the object's word. */
static inline bool sfb_note_build_id(const struct sfb_bytes *notes, uint64_t align,
				     uint64_t *desc_off, uint64_t *desc_len)
{
	uint64_t note = 0, namesz, descsz, type, name;
	while (sfb_get(notes, note, 4, &namesz) && sfb_get(notes, note + 4, 4, &descsz) &&
	       sfb_get(notes, note + 8, 4, &type)) {
		uint64_t desc = note + 12 + ((namesz + align - 1) & ~(align - 1));
		uint64_t next = desc + ((descsz + align - 1) & ~(align - 1));
		if (next > notes->len)
			break;
		/* "GNU\0", read as a little-endian word. */
		if (type == NT_GNU_BUILD_ID && namesz == 4 && descsz > 0 &&
		    sfb_get(notes, note + 12, 4, &name) && name == 0x00554e47u) {
			*desc_off = desc;
			*desc_len = descsz;
			return true;
		}
		note = next;
	}
	return false;
}

/* Where the object's GNU build-id lies, as an offset from start, and its
 * length; false if it has none in the first page.  ld.so's layout puts
 * the note there, right after the program headers (linkers emit it first
 * among the allocated sections); elsewhere it is not trusted to stay
 * readable, like anything past the first page. */
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
		uint64_t desc, size;
		if (sfb_note_build_id(&seg, ph[i].p_align == 8 ? 8 : 4, &desc, &size)) {
			*off = (uint16_t)(at + desc);
			*len = (uint32_t)size;
			return true;
		}
	}
	return false;
}

#endif
