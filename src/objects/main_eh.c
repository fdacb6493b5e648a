/* The main program's .eh_frame, indexed where it has no search table
 * (main_eh.h). */
#define _GNU_SOURCE
#include "objects/main_eh.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <string.h>
#include <unistd.h>

#include "base/dwarf.h"
#include "base/entry.h"

static struct sfb_eh_index_entry table[SFB_MAIN_EH_FDES];
static struct sfb_eh_index index_of_main;
static _Atomic int state; /* enum sfb_main_eh_state; CLAIMED while indexing */
#define CLAIMED (-1)

struct main_phdrs {
	const ElfW(Phdr) *ph;
	unsigned n;
	uintptr_t bias;
};

/* dl_iterate_phdr() reports the main program first, static or not. */
static int first_object(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	struct main_phdrs *m = arg;
	m->ph = info->dlpi_phdr;
	m->n = info->dlpi_phnum;
	m->bias = info->dlpi_addr;
	return 1;
}

/* Does the program have a search table cfi.h can use?  Only the table's
 * header is looked at: cfi.h validates the rest when the object is
 * described. */
static bool has_search_table(const struct main_phdrs *m)
{
	for (unsigned i = 0; i < m->n; i++) {
		if (m->ph[i].p_type != PT_GNU_EH_FRAME || m->ph[i].p_memsz < 4)
			continue;
		const uint8_t *h = (const uint8_t *)(m->bias + m->ph[i].p_vaddr);
		/* version 1; the count's and the table's encodings not omit */
		return h[0] == 1 && h[2] != DW_EH_PE_omit && h[3] != DW_EH_PE_omit;
	}
	return false;
}

static bool read_at(int fd, void *to, size_t len, uint64_t off)
{
	return off <= INT64_MAX && pread(fd, to, len, (off_t)off) == (ssize_t)len;
}

/* The loaded bytes of the program's .eh_frame, from its file's section
 * headers: *at and *len, or false.  The file must be the program mapped:
 * its program headers are the ones in memory. */
static bool locate_eh_frame(const struct main_phdrs *m, uintptr_t *at, size_t *len)
{
	int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	bool found = false;
	ElfW(Ehdr) eh;
	ElfW(Phdr) ph[64];
	ElfW(Shdr) names;
	if (!read_at(fd, &eh, sizeof eh, 0) || memcmp(eh.e_ident, ELFMAG, SELFMAG) ||
	    eh.e_phentsize != sizeof ph[0] || eh.e_phnum != m->n || m->n > 64 ||
	    eh.e_shentsize != sizeof(ElfW(Shdr)) || eh.e_shstrndx >= eh.e_shnum ||
	    !read_at(fd, ph, m->n * sizeof ph[0], eh.e_phoff) ||
	    memcmp(ph, m->ph, m->n * sizeof ph[0]) ||
	    !read_at(fd, &names, sizeof names, eh.e_shoff + eh.e_shstrndx * sizeof names))
		goto out;
	for (unsigned i = 1; i < eh.e_shnum && !found; i++) {
		ElfW(Shdr) sh;
		char name[sizeof ".eh_frame"];
		if (!read_at(fd, &sh, sizeof sh, eh.e_shoff + (uint64_t)i * sizeof sh))
			break;
		if (!(sh.sh_flags & SHF_ALLOC) || sh.sh_type == SHT_NOBITS ||
		    sh.sh_name >= names.sh_size || names.sh_size - sh.sh_name < sizeof name ||
		    !read_at(fd, name, sizeof name, names.sh_offset + sh.sh_name) ||
		    memcmp(name, ".eh_frame", sizeof name))
			continue;
		/* Its bytes must lie in a readable loaded segment. */
		for (unsigned k = 0; k < m->n; k++) {
			const ElfW(Phdr) *p = &m->ph[k];
			if (p->p_type == PT_LOAD && (p->p_flags & PF_R) &&
			    sh.sh_addr >= p->p_vaddr && sh.sh_size <= p->p_filesz &&
			    sh.sh_addr - p->p_vaddr <= p->p_filesz - sh.sh_size) {
				*at = m->bias + sh.sh_addr;
				*len = sh.sh_size;
				found = true;
			}
		}
		break;
	}
out:
	close(fd);
	return found;
}

void sfb_main_eh_prepare(void)
{
	int expected = SFB_MAIN_EH_PENDING;
	if (!atomic_compare_exchange_strong_explicit(&state, &expected, CLAIMED,
						     memory_order_acquire, memory_order_relaxed))
		return; /* done, or being done by another thread */
	SFB_ENTRY;
	struct main_phdrs m = { 0 };
	int result = SFB_MAIN_EH_NONE;
	uintptr_t at;
	size_t len;
	dl_iterate_phdr(first_object, &m);
	if (m.ph && !has_search_table(&m)) {
		result = SFB_MAIN_EH_FAILED;
		if (locate_eh_frame(&m, &at, &len)) {
			int err = sfb_eh_index_build(&index_of_main, (const void *)at, len, at,
						     table, SFB_MAIN_EH_FDES);
			/* No FDE at all is nothing to index; FDEs none of
			 * which could be indexed, a failure. */
			result = err == SFB_CFI_OK	     ? SFB_MAIN_EH_READY
				 : index_of_main.left_out ? SFB_MAIN_EH_FAILED
							  : SFB_MAIN_EH_NONE;
		}
	}
	atomic_store_explicit(&state, result, memory_order_release);
}

enum sfb_main_eh_state sfb_main_eh_state(void)
{
	int s = atomic_load_explicit(&state, memory_order_acquire);
	return s == CLAIMED ? SFB_MAIN_EH_PENDING : (enum sfb_main_eh_state)s;
}

const struct sfb_eh_index *sfb_main_eh_index(void)
{
	return &index_of_main;
}

/* At load: before the program's first crash or sample, in most programs
 * before main(). */
__attribute__((constructor)) static void main_eh_init(void)
{
	sfb_main_eh_prepare();
}
