/* libFuzzer target for the symbolizer's file readers (src/symbols/elf_file.c,
 * src/symbols/perf_map.c, with the symbol choice of src/symbols/pick.c):
 * an ELF file's header, its section headers, its notes (the build-id
 * check a debug file must pass) and its .symtab with the names, read with
 * pread() exactly as sframe_symbolize() reads an object's file or its
 * detached debug file.
 *
 * Input: the file's bytes, written to a memfd.  As a perf map, a few PCs
 * are looked up; a name found must come from a range that starts at or
 * below the PC.  If its ELF header reads,
 * has_build_id() is asked about the build-id named by the input's last
 * 20 bytes (so that a match is reachable), and sfb_scan_symtab() looks up
 * targets taken from the input and from the symbols' own values, for a
 * made-up object whose one executable segment covers [0, 4 GiB).  A
 * symbol found must start at or below its target, and its name is read
 * as symbolize() reads it; a .gnu_debuglink section is read as
 * sfb_open_debug() reads it (src/symbols/debuglink.c); ASan catches any
 * read outside the buffers.
 *
 * Build and run: make fuzz (tests/fuzz/build.mk).  With -DSFB_FUZZ_MAIN the
 * file has its own main(), which runs each file named on the command line
 * once (tests/fuzz/t_fuzz_smoke.sh replays tests/fuzz/corpus-symfile/ so).  The
 * seeds are small ELF files: libcrashdemo.so as built, stripped, and its
 * debug file (objcopy --only-keep-debug), cut to 8 KiB where larger; a
 * small stripped library with a .gnu_debuglink; and a perf map with
 * ranges that wrap around. */
#include "symbols/debuglink.c"
#include "symbols/elf_file.c"
#include "symbols/perf_map.c"
#include "symbols/pick.c"

#include <sys/mman.h>

#define FUZZ_NAME "fuzz_symfile"
#include "fuzz_target.h"

#define WORK (SFRAME_SYMBOLIZE_SCRATCH - SFB_SYM_WORK_OFF)
#define NAME_CAP SFB_SYM_MANGLED_CAP

/* debuglink.c's one need from loaded.c: no object here was loaded. */
uint32_t sfb_loaded_build_id_copy(const struct sfb_obj *o, uint8_t id[SFB_MAX_BUILD_ID])
{
	(void)o, (void)id;
	return 0;
}

/* Both targets of a return address's lookup: the call, then itself. */
static void look_up(const struct sfb_obj *o, int fd, const Elf64_Ehdr *eh,
		    uint64_t shnum, uint64_t target, char *work)
{
	struct sfb_targets ts = { { target, target + 1 }, { { 0 }, { 0 } }, 2 };
	sfb_scan_symtab(o, fd, eh, shnum, &ts, work, WORK);
	for (int i = 0; i < ts.n; i++) {
		const struct sfb_best *b = &ts.best[i];
		if (!sfb_names_target(b))
			continue;
		if (b->value > ts.at[i] || b->floor > ts.at[i] || b->value > b->floor)
			FAIL("symbol at %#llx (floor %#llx) chosen for %#llx",
			     (unsigned long long)b->value, (unsigned long long)b->floor,
			     (unsigned long long)ts.at[i]);
		char *name = malloc(NAME_CAP);
		size_t n = sfb_name_bytes(&b->tab, b->name, name, NAME_CAP - 1);
		if (n > NAME_CAP - 1)
			FAIL("name of %zu bytes", n);
		free(name);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int fd = -1;
	if (fd < 0 && (fd = memfd_create("fuzz_symfile", MFD_CLOEXEC)) < 0)
		FAIL("memfd_create");
	if (ftruncate(fd, 0) != 0 ||
	    (size && pwrite(fd, data, size, 0) != (ssize_t)size))
		FAIL("cannot write the memfd");

	/* The same bytes as a perf map. */
	char *work = malloc(WORK), *name = malloc(NAME_CAP);
	uint64_t target = 0, start;
	memcpy(&target, data, size < 8 ? size : 8);
	uint64_t pcs[] = { target, target & 0xffff, 0x1000, 0 };
	for (size_t i = 0; i < sizeof pcs / sizeof pcs[0]; i++)
		if (sfb_perf_map_lookup(fd, pcs[i], name, NAME_CAP, &start, work, WORK) &&
		    (start > pcs[i] || strlen(name) >= NAME_CAP))
			FAIL("perf map: %#llx named from %#llx", (unsigned long long)pcs[i],
			     (unsigned long long)start);
	free(name);

	Elf64_Ehdr eh;
	uint64_t shnum;
	if (!sfb_read_ehdr(fd, &eh, &shnum)) {
		free(work);
		return 0;
	}
	uint8_t id[20] = { 0 };
	if (size >= sizeof id)
		memcpy(id, data + size - sizeof id, sizeof id);
	(void)sfb_has_build_id(fd, &eh, shnum, id, sizeof id, work, WORK);

	/* The .gnu_debuglink section, as sfb_open_debug() reads an object's:
	 * a name it accepts is 1 to SFB_DEBUGLINK_NAME_MAX bytes, no '/'. */
	char link[SFB_DEBUGLINK_NAME_MAX + 1];
	uint32_t crc;
	if (read_link(fd, &eh, shnum, link, &crc, work, WORK)) {
		size_t n = strnlen(link, sizeof link);
		if (n == 0 || n == sizeof link || memchr(link, '/', n))
			FAIL("debuglink name of %zu bytes", n);
	}

	struct sfb_obj o = { .nseg = 1, .seg = { { 0, 1ull << 32, PF_R | PF_X } } };
	look_up(&o, fd, &eh, shnum, target & 0xffffffff, work);
	look_up(&o, fd, &eh, shnum, 0x1000, work);
	/* Targets at and just inside the first symbols, where matches are. */
	Elf64_Shdr sh;
	if (sfb_find_section(fd, &eh, shnum, 1, SHT_SYMTAB, &sh, work, WORK)) {
		for (uint64_t i = 1; i < 8 && sh.sh_offset <= INT64_MAX; i++) {
			Elf64_Sym s;
			if (pread(fd, &s, sizeof s, (off_t)(sh.sh_offset + i * sizeof s)) !=
			    (ssize_t)sizeof s)
				break;
			look_up(&o, fd, &eh, shnum, s.st_value + (s.st_size > 1), work);
		}
	}
	free(work);
	return 0;
}
