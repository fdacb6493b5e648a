/* The index over a bare .eh_frame (rows/eh_index.h) against the linker's
 * own: libc's .eh_frame, indexed by sfb_eh_index_build() as if it had no
 * .eh_frame_hdr, must give every PC of every FDE the row libc's
 * .eh_frame_hdr search table gives it (cfi.h).  Then at the bound: a
 * table of 256 entries, looked up in a signal handler, gives each PC the
 * same row or SFB_EH_INDEX_E_LEFT_OUT, never another row and never
 * silence; a section cut short, and garbage, are refused or indexed in
 * part, never read out of bounds. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <gnu/libc-version.h>
#include <link.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "arch/arch.h"
#include "check.h"
#include "rows/cfi.h"
#include "rows/eh_index.h"

struct libc_eh {
	uintptr_t bias, hdr_at, seg_end;
	size_t hdr_len;
	const char *path;
};

static int find_libc(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	struct libc_eh *l = arg;
	/* A function of libc no sanitizer intercepts (ASan has its own
	 * printf, and its library would be found instead). */
	uintptr_t want = (uintptr_t)&gnu_get_libc_version;
	const ElfW(Phdr) *hdr = NULL;
	bool holds = false;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *p = &info->dlpi_phdr[i];
		if (p->p_type == PT_LOAD && want - (info->dlpi_addr + p->p_vaddr) < p->p_memsz)
			holds = true;
		if (p->p_type == PT_GNU_EH_FRAME)
			hdr = p;
	}
	if (!holds || !hdr)
		return 0;
	l->bias = info->dlpi_addr;
	l->hdr_at = info->dlpi_addr + hdr->p_vaddr;
	l->hdr_len = hdr->p_memsz;
	l->path = info->dlpi_name;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *p = &info->dlpi_phdr[i];
		if (p->p_type == PT_LOAD && hdr->p_vaddr - p->p_vaddr < p->p_filesz)
			l->seg_end = info->dlpi_addr + p->p_vaddr + p->p_filesz;
	}
	return 1;
}

/* .eh_frame's size, from the file's section headers. */
static size_t eh_frame_size(const char *path, uint64_t vaddr)
{
	int fd = open(path, O_RDONLY);
	ElfW(Ehdr) eh;
	size_t size = 0;
	if (fd < 0 || pread(fd, &eh, sizeof eh, 0) != sizeof eh)
		goto out;
	for (unsigned i = 0; i < eh.e_shnum; i++) {
		ElfW(Shdr) sh;
		if (pread(fd, &sh, sizeof sh, (off_t)(eh.e_shoff + i * sizeof sh)) != sizeof sh)
			break;
		if (sh.sh_addr == vaddr && sh.sh_type != SHT_NOBITS)
			size = sh.sh_size;
	}
out:
	if (fd >= 0)
		close(fd);
	return size;
}

static struct sfb_cfi_section truth;
static struct sfb_eh_index_entry big[1 << 16], small[256];
static struct sfb_eh_index full, bound;

/* Table entry i of libc's own search table: its initial location. */
static uint64_t truth_pc(uint32_t i)
{
	int32_t v;
	memcpy(&v, truth.hdr.p + truth.table_off + 8 * (uint64_t)i, 4);
	return truth.hdr_addr + (int64_t)v;
}

/* The same row: expr_len, how far expressions may be read, is the
 * readable rest of the segment for one and the section for the other. */
static bool same_row(const struct sfb_row *a, const struct sfb_row *b)
{
	struct sfb_row c = *b;
	c.expr_len = a->expr_len;
	return !memcmp(a, &c, sizeof *a);
}

/* Each FDE's first PC, and a PC a few bytes in: the same answer and row
 * from ix as from the linker's table, or (left_out_ok) LEFT_OUT. */
struct tally {
	unsigned same, left_out, wrong;
};

static struct tally compare(const struct sfb_eh_index *ix, bool left_out_ok)
{
	struct tally t = { 0, 0, 0 };
	for (uint32_t i = 0; i < truth.fde_count; i++) {
		for (unsigned d = 0; d < 2; d++) {
			uint64_t pc = truth_pc(i) + d * 3;
			struct sfb_row a, b;
			memset(&a, 0, sizeof a);
			memset(&b, 0, sizeof b);
			int ea = sfb_cfi_lookup(&truth, pc, SFB_DWARF_FP, &a);
			int eb = sfb_eh_index_lookup(ix, pc, SFB_DWARF_FP, &b);
			if (ea == eb && (ea || same_row(&a, &b)))
				t.same++;
			else if (left_out_ok && eb == SFB_EH_INDEX_E_LEFT_OUT)
				t.left_out++;
			else
				t.wrong++;
		}
	}
	return t;
}

static struct tally in_handler;

static void on_usr1(int sig)
{
	(void)sig;
	in_handler = compare(&bound, true);
}

int main(void)
{
	struct libc_eh l = { 0 };
	dl_iterate_phdr(find_libc, &l);
	CHECK(l.hdr_at && sfb_cfi_load(&truth, (const void *)l.hdr_at, l.hdr_len, l.hdr_at,
				       l.seg_end, 0) == SFB_CFI_OK,
	      "libc's .eh_frame_hdr (%s): %u FDEs in its table", l.path, truth.fde_count);
	size_t len = eh_frame_size(l.path, truth.frame_addr - l.bias);
	CHECK(len > 0, ".eh_frame of %zu bytes at %#lx", len, (unsigned long)truth.frame_addr);
	const void *frame = (const void *)truth.frame_addr;

	int err = sfb_eh_index_build(&full, frame, len, truth.frame_addr, big, 1 << 16);
	CHECK(err == SFB_CFI_OK && full.left_out == 0 && full.cfi.fde_count == truth.fde_count,
	      "indexed whole: %u entries of %u FDEs, %u left out (err %d)", full.cfi.fde_count,
	      full.fdes, full.left_out, err);
	struct tally t = compare(&full, false);
	CHECK(t.wrong == 0 && t.same == 2 * truth.fde_count,
	      "every FDE's PCs: the row libc's own table gives (%u same, %u not)", t.same,
	      t.wrong);

	/* At the bound, looked up in a signal handler. */
	err = sfb_eh_index_build(&bound, frame, len, truth.frame_addr, small, 256);
	CHECK(err == SFB_CFI_OK && bound.cfi.fde_count == 256 &&
		      bound.left_out == full.cfi.fde_count - 256,
	      "a table of 256: %u entries, %u FDEs left out and counted", bound.cfi.fde_count,
	      bound.left_out);
	signal(SIGUSR1, on_usr1);
	raise(SIGUSR1);
	CHECK(in_handler.wrong == 0 && in_handler.same >= 256 && in_handler.left_out > 0 &&
		      in_handler.same + in_handler.left_out == 2 * truth.fde_count,
	      "in a signal handler: %u PCs the same row, %u left-out, %u wrong", in_handler.same,
	      in_handler.left_out, in_handler.wrong);

	/* Cut short in the middle of an entry: what was read is indexed. */
	struct sfb_eh_index cut;
	err = sfb_eh_index_build(&cut, frame, len / 2 + 3, truth.frame_addr, big, 1 << 16);
	t = compare(&cut, true);
	CHECK(err == SFB_CFI_OK && cut.left_out > 0 && t.wrong == 0 && t.left_out > 0,
	      "cut short: %u entries, %u left out; %u PCs the same, %u left-out, %u wrong",
	      cut.cfi.fde_count, cut.left_out, t.same, t.left_out, t.wrong);

	/* Garbage: libc's section with bytes changed at random, every read
	 * checked whatever it says. */
	static uint8_t junk[1 << 16];
	srand(7);
	unsigned usable = 0;
	for (int round = 0; round < 200; round++) {
		memcpy(junk, frame, len < sizeof junk ? len : sizeof junk);
		for (int k = 0; k < 1 + round; k++)
			junk[(size_t)rand() % sizeof junk] = (uint8_t)rand();
		struct sfb_eh_index g;
		if (sfb_eh_index_build(&g, junk, sizeof junk, (uintptr_t)junk, small, 256) ==
		    SFB_CFI_OK) {
			usable++;
			struct sfb_row r;
			for (int k = 0; k < 256; k++)
				(void)sfb_eh_index_lookup(&g, truth_pc((uint32_t)rand() % truth.fde_count) -
								      truth.frame_addr + (uintptr_t)junk,
							  SFB_DWARF_FP, &r);
		}
	}
	CHECK(1, "200 sections of garbage indexed and looked up without a fault (%u indexed)",
	      usable);
	CHECK_DONE();
}
