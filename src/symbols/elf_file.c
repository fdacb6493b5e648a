/* Symbols from ELF files on disk: the loaded object's own file (its
 * .symtab, which stripping removes) and its detached debug file, found
 * by build-id or through .gnu_debuglink (debuglink.c).  Read with
 * pread() into the caller's work area; the file is untrusted: every
 * offset and count is checked and capped. */
#define _GNU_SOURCE
#include <elf.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/bytes.h"
#include "base/textbuf.h"
#include "objects/elf_phdrs.h"
#include "symbols/symtab.h"

#define MAX_SECTIONS 65536 /* section headers scanned */

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define HOST_DATA ELFDATA2LSB
#else
#define HOST_DATA ELFDATA2MSB
#endif

static int read_shdr(int fd, const Elf64_Ehdr *eh, uint64_t i, Elf64_Shdr *sh)
{
	return pread(fd, sh, sizeof *sh, (off_t)(eh->e_shoff + i * sizeof *sh)) ==
	       (ssize_t)sizeof *sh;
}

/* The file's ELF header, if it is one this host can read, and its number
 * of section headers (capped). */
int sfb_read_ehdr(int fd, Elf64_Ehdr *eh, uint64_t *shnum)
{
	Elf64_Shdr sh;
	if (pread(fd, eh, sizeof *eh, 0) != (ssize_t)sizeof *eh ||
	    memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 ||
	    eh->e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh->e_ident[EI_DATA] != HOST_DATA ||
	    eh->e_shentsize != sizeof(Elf64_Shdr) || eh->e_shoff == 0 ||
	    eh->e_shoff > INT64_MAX - (uint64_t)MAX_SECTIONS * sizeof sh)
		return 0;
	*shnum = eh->e_shnum;
	if (*shnum == 0 && read_shdr(fd, eh, 0, &sh))
		*shnum = sh.sh_size; /* extended numbering */
	if (*shnum > MAX_SECTIONS)
		*shnum = MAX_SECTIONS;
	return 1;
}

/* The first section of type `type` at index `from` or later, into *sh;
 * its index, or 0 if there is none. */
uint64_t sfb_find_section(int fd, const Elf64_Ehdr *eh, uint64_t shnum, uint64_t from,
			  uint32_t type, Elf64_Shdr *sh, char *work, size_t wsize)
{
	uint64_t per = wsize / sizeof *sh;
	for (uint64_t i = from; i < shnum; i += per) {
		uint64_t k = shnum - i < per ? shnum - i : per;
		if (pread(fd, work, k * sizeof *sh,
			  (off_t)(eh->e_shoff + i * sizeof *sh)) !=
		    (ssize_t)(k * sizeof *sh))
			return 0;
		for (uint64_t j = 0; j < k; j++) {
			memcpy(sh, work + j * sizeof *sh, sizeof *sh);
			if (sh->sh_type == type)
				return i + j;
		}
	}
	return 0;
}

/* Considers every function symbol of the file's .symtab; 0 if it has
 * none. */
int sfb_scan_symtab(const struct sfb_obj *o, int fd, const Elf64_Ehdr *eh, uint64_t shnum,
		    struct sfb_targets *ts, char *work, size_t wsize)
{
	Elf64_Shdr sh, str;
	if (!sfb_find_section(fd, eh, shnum, 1, SHT_SYMTAB, &sh, work, wsize))
		return 0;
	if (sh.sh_entsize != sizeof(Elf64_Sym) || sh.sh_link >= shnum ||
	    !read_shdr(fd, eh, sh.sh_link, &str) || str.sh_type != SHT_STRTAB ||
	    str.sh_offset > INT64_MAX - str.sh_size ||
	    sh.sh_offset > INT64_MAX - sh.sh_size)
		return 1;

	struct sfb_strtab t = { NULL, fd, str.sh_offset, str.sh_size };
	uint64_t n = sh.sh_size / sizeof(Elf64_Sym);
	uint64_t per = wsize / sizeof(Elf64_Sym);
	if (n > SFB_MAX_SYMS)
		n = SFB_MAX_SYMS;
	for (uint64_t i = 0; i < n; i += per) {
		uint64_t k = n - i < per ? n - i : per;
		ssize_t got = pread(fd, work, k * sizeof(Elf64_Sym),
				    (off_t)(sh.sh_offset + i * sizeof(Elf64_Sym)));
		if (got <= 0)
			return 1;
		k = (uint64_t)got / sizeof(Elf64_Sym);
		for (uint64_t j = 0; j < k; j++) {
			Elf64_Sym s;
			memcpy(&s, work + j * sizeof s, sizeof s);
			sfb_consider_all(ts, o, &s, &t);
		}
	}
	return 1;
}

int sfb_open_object(const struct sfb_obj *o)
{
	/* /proc/self/exe works even when the program file was deleted.  A
	 * name without '/' (the vDSO's) is no file. */
	const char *path = o->name[0] ? o->name : "/proc/self/exe";
	if (!strchr(path, '/'))
		return -1;
	return open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
}

/* ---- Detached debug files ------------------------------------------------ */

/* The GNU convention the distributions' debug packages follow (Debian's
 * -dbg/-dbgsym, Fedora's -debuginfo): the symbols of a stripped object
 * with build-id b0 b1 b2 ... are in DIR/.build-id/b0/b1b2....debug, DIR
 * /usr/lib/debug or $SFRAME_BT_DEBUG_DIR.  The variable is read once, by
 * a constructor (normal context): getenv() is not async-signal-safe.  The
 * copy is published by a release store, so a walk that runs before the
 * constructor (a signal during a late dlopen()) sees the default. */
#define DEBUG_DIR_CAP 256
static char debug_dir_buf[DEBUG_DIR_CAP];
static const char *_Atomic debug_dir;

__attribute__((constructor)) static void read_debug_dir(void)
{
	const char *e = getenv("SFRAME_BT_DEBUG_DIR");
	if (e && e[0] && strlen(e) < DEBUG_DIR_CAP) {
		memcpy(debug_dir_buf, e, strlen(e) + 1);
		atomic_store_explicit(&debug_dir, debug_dir_buf, memory_order_release);
	}
}

const char *sfb_debug_dir(void)
{
	const char *dir = atomic_load_explicit(&debug_dir, memory_order_acquire);
	return dir ? dir : "/usr/lib/debug";
}

int sfb_open_debug_file(const uint8_t *id, uint32_t len)
{
	static const char hex[] = "0123456789abcdef";
	char path[DEBUG_DIR_CAP + sizeof "/.build-id/xx/" + 2 * SFB_MAX_BUILD_ID + sizeof ".debug"];
	struct sfb_text b = { path, 0, sizeof path };
	if (len < 2)
		return -1;
	sfb_put(&b, sfb_debug_dir());
	sfb_put(&b, "/.build-id/");
	for (uint32_t i = 0; i < len; i++) {
		char byte[] = { hex[id[i] >> 4], hex[id[i] & 15], i == 0 ? '/' : '\0', '\0' };
		sfb_put(&b, byte);
	}
	sfb_put(&b, ".debug");
	path[b.len] = '\0';
	return open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
}

/* Does one of the file's SHT_NOTE sections hold the GNU build-id `id`?  A
 * debug file found by its name is used only then: the name is a promise,
 * the note is the proof. */
int sfb_has_build_id(int fd, const Elf64_Ehdr *eh, uint64_t shnum, const uint8_t *id,
		     uint32_t len, char *work, size_t wsize)
{
	Elf64_Shdr sh;
	for (uint64_t i = 1; (i = sfb_find_section(fd, eh, shnum, i, SHT_NOTE, &sh,
						   work, wsize)) != 0; i++) {
		uint64_t size = sh.sh_size < wsize ? sh.sh_size : wsize;
		ssize_t got = sh.sh_offset > INT64_MAX ? -1 :
			      pread(fd, work, size, (off_t)sh.sh_offset);
		if (got <= 0)
			continue;
		const struct sfb_bytes notes = { (const uint8_t *)work, (uint64_t)got, false };
		uint64_t desc, found_len;
		if (sfb_note_build_id(&notes, sh.sh_addralign == 8 ? 8 : 4, &desc, &found_len))
			return found_len == len && memcmp(work + desc, id, len) == 0;
	}
	return 0;
}
