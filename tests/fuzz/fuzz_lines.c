/* libFuzzer target for the line and inline reader (src/symbols/lines.c,
 * inlines.c, debug_section.c): sfb_lines_lookup() over made-up debug
 * sections, read with pread from a memfd exactly as from a file.
 *
 * Input: a header (struct fuzz_hdr: the PC, each section's size, which
 * sections are SHF_COMPRESSED) and the sections' bytes, one after the
 * other in enum sfb_dsec_id order.  The PC, its neighbours and an address
 * taken from the input's tail are looked up, each on its own in the
 * least scratch (SFB_LINES_SCRATCH), then again through one kept state
 * (sfb_lines_open(), sfb_lines_find()) in a symbolizer's scratch, where a
 * compressed file gets the most streams and their copies; each result
 * must be 0 or a named error, hold at most SFB_LINES_MAX_FRAMES frames,
 * and its strings must end inside their arrays.  ASan catches any access
 * outside the scratch and the result.
 *
 * Seeds (tests/fuzz/corpus-lines/): the debug sections of
 * tests/symbols/lines_prog.c built by gcc -O2 (DWARF 5 and 4, plain and
 * zlib-compressed) and by clang -O2, packed by tests/fuzz/lines_seeds.sh.
 * Build and run: see tests/fuzz/lines_seeds.sh's header. */
#define _GNU_SOURCE
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "symbols/lines.h"
#include "symbols/srcpos.h"

#define FUZZ_NAME "fuzz_lines"
#include "fuzz_target.h"

struct fuzz_hdr {
	uint64_t pc;
	uint32_t size[SFB_DSEC_COUNT];
	uint32_t compressed; /* bit i: section i is SHF_COMPRESSED */
};

static void check(const struct sfb_line_result *r, int rc)
{
	if (!strcmp(sfb_lines_err_name(rc), "unknown"))
		FAIL("unnamed result %d", rc);
	if (rc == 0 && (r->n < 1 || r->n > SFB_LINES_MAX_FRAMES))
		FAIL("%d frames", r->n);
	if (rc != 0 && r->n != 0)
		FAIL("error %s with %d frames", sfb_lines_err_name(rc), r->n);
	for (int i = 0; i < r->n; i++) {
		if (!memchr(r->frame[i].function, 0, sizeof r->frame[i].function))
			FAIL("frame %d: function not terminated", i);
		if (!memchr(r->frame[i].file, 0, sizeof r->frame[i].file))
			FAIL("frame %d: file not terminated", i);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int fd = -1;
	static uint64_t scratch[SFB_LINES_SCRATCH / 8];
	static struct sfb_line_result res;
	struct fuzz_hdr h;
	if (fd < 0 && (fd = memfd_create("fuzz_lines", MFD_CLOEXEC)) < 0)
		FAIL("memfd_create");
	if (size < sizeof h)
		return 0;
	memcpy(&h, data, sizeof h);
	if (ftruncate(fd, 0) || pwrite(fd, data, size, 0) != (ssize_t)size)
		FAIL("memfd write");
	struct sfb_elf_sections secs;
	memset(&secs, 0, sizeof secs);
	uint64_t off = sizeof h;
	for (int i = 0; i < SFB_DSEC_COUNT; i++) {
		uint64_t n = h.size[i];
		if (n > size - off)
			n = size - off;
		secs.sec[i].offset = off;
		secs.sec[i].size = n;
		secs.sec[i].compressed = (h.compressed >> i) & 1;
		off += n;
	}
	uint64_t tail = 0;
	if (size >= sizeof h + 8)
		memcpy(&tail, data + size - 8, 8);
	const uint64_t pcs[] = { h.pc, h.pc + 1, h.pc - 1, tail };
	for (size_t i = 0; i < sizeof pcs / sizeof pcs[0]; i++) {
		int rc = sfb_lines_lookup(fd, &secs, pcs[i], &res, scratch, sizeof scratch);
		check(&res, rc);
	}
	static uint64_t kept[SFB_SRCPOS_ROOMY / 8];
	if (sfb_lines_open(fd, &secs, kept, sizeof kept) == 0)
		for (size_t i = 0; i < sizeof pcs / sizeof pcs[0]; i++)
			check(&res, sfb_lines_find(kept, pcs[i], &res));
	return 0;
}
