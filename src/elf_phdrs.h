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
#include <stdint.h>
#include <string.h>

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

#endif
