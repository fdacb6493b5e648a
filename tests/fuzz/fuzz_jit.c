/* libFuzzer target for the registration of code (src/objects/
 * jit_registry.c): parsing and validating the tables given to
 * sframe_jit_register() and to __register_frame()'s path, and looking
 * PCs up in what was registered.
 *
 * Input: a 16-byte header, then the tables:
 *     u8 kind (enum sframe_jit_kind, or 0: __register_frame()'s path),
 *     u8 unused, u16 hdr_size, i32 start, u32 length, u32 pc_seed
 *     (little-endian; start is relative to the tables' address)
 * The tables are copied into a heap buffer of exactly their size (ASan
 * catches any over-read).  A refused registration must leave nothing
 * registered and name its error; an accepted one must answer for PCs in
 * its range (the object found covers the PC, a row or a stop reason),
 * and for no PC outside it, then unregister once and once only.
 * Registered code is never executed or read, only its range is used.
 *
 * Build and run: make fuzz (tests/fuzz/build.mk).  With -DSFB_FUZZ_MAIN
 * it replays the files named on its command line, and
 *     fuzz_jit -seeds DIR
 * writes the seeds of tests/fuzz/corpus-jit/: two functions' .eh_frame
 * (bare, with terminator for __register_frame()'s path, with
 * .eh_frame_hdr), SFrame V1, V2 and V3, and the frame-pointer rule. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "backtrace.h"
#include "objects/jit_registry.h"
#include "objects/objcache.h"
#include "rows/sframe_format.h"

#define FUZZ_NAME "fuzz_jit"
#define FUZZ_OWN_MAIN
#include "fuzz_target.h"

/* What jit_registry.c takes from the rest of the library. */
const uint8_t sfb_arch_abi = SFB_ABI_AMD64_LE;
uint32_t sfb_objcache_new_epoch(void)
{
	static uint32_t e = 2;
	return e += 2;
}

#define HDR 16

static uint64_t rd(const uint8_t *p, unsigned n)
{
	uint64_t v = 0;
	for (unsigned i = 0; i < n; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

/* The registered range holding pc answers consistently. */
static void probe(uintptr_t pc, uintptr_t start, uintptr_t end)
{
	struct sfb_object o;
	struct sfb_row row;
	int found = sfb_jit_find(pc, &o) == 0;
	if (found != (pc >= start && pc < end))
		FAIL("pc %#lx: found %d, range [%#lx, %#lx)", (unsigned long)pc, found,
		     (unsigned long)start, (unsigned long)end);
	if (!found)
		return;
	if (o.map_start != start || o.map_end != end || o.source != SFB_SRC_JIT)
		FAIL("pc %#lx: described as [%#lx, %#lx)", (unsigned long)pc,
		     (unsigned long)o.map_start, (unsigned long)o.map_end);
	int stop = sfb_jit_row(&o, pc, 0, &row);
	if (stop != 0 && stop != SFRAME_BT_STOP_NO_UNWIND_INFO && stop != SFRAME_BT_STOP_BAD_EH_FRAME)
		FAIL("pc %#lx: stop %d", (unsigned long)pc, stop);
	char name[32];
	uintptr_t s;
	size_t l;
	sfb_jit_name(pc, name, sizeof name, &s, &l);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < HDR + 1)
		return 0;
	unsigned kind = data[0];
	size_t hdr_size = (size_t)rd(data + 2, 2);
	int32_t start_off = (int32_t)(uint32_t)rd(data + 4, 4);
	uint32_t length = (uint32_t)rd(data + 8, 4);
	uint32_t seed = (uint32_t)rd(data + 12, 4);
	size_t n = size - HDR;
	uint8_t *t = malloc(n);
	if (!t)
		return 0;
	memcpy(t, data + HDR, n);

	int err;
	uintptr_t start = 0, end = 0;
	if (kind == 0) {
		uintptr_t range[2] = { 0, 0 };
		err = sfb_jit_register_eh_frame(t, n, range);
		start = range[0];
		end = range[1];
	} else {
		start = (uintptr_t)t + (intptr_t)start_off;
		end = start + length;
		struct sframe_jit_code c = { .start = start, .end = end, .kind = (int)kind,
					     .tables = kind == SFRAME_JIT_FRAME_POINTER ? NULL : t,
					     .tables_size = kind == SFRAME_JIT_FRAME_POINTER ? 0 : n,
					     .hdr_size = hdr_size, .name = "fuzzed" };
		err = sframe_jit_register(&c);
	}
#ifdef SFB_FUZZ_MAIN
	if (getenv("FUZZ_JIT_VERBOSE"))
		fprintf(stderr, "kind %u: %s\n", kind, sframe_jit_err_name(err));
#endif
	if (err) {
		if (sfb_jit_count() != 0 || !strcmp(sframe_jit_err_name(err), "unknown"))
			FAIL("refused (%d) but %zu registered", err, sfb_jit_count());
		free(t);
		return 0;
	}
	if (sfb_jit_count() != 1)
		FAIL("accepted but %zu registered", sfb_jit_count());
	if (start) {
		probe(start, start, end);
		probe(end - 1, start, end);
		probe(start + (end - start) / 2, start, end);
		probe(start - 1, start, end);
		probe(end, start, end);
		for (uint32_t k = 0; k < 16; k++)
			probe(start + (seed * (k + 1)) % (end - start + 16), start, end);
	}
	err = kind == 0 ? sfb_jit_unregister_eh_frame(t) : sframe_jit_unregister(start);
	if (err)
		FAIL("unregistering: %d", err);
	err = kind == 0 ? sfb_jit_unregister_eh_frame(t) : sframe_jit_unregister(start);
	if (err != SFRAME_JIT_E_NOT_REGISTERED || sfb_jit_count() != 0)
		FAIL("unregistered twice: %d", err);
	free(t);
	return 0;
}

#ifdef SFB_FUZZ_MAIN
#include "rows/sframe_builder.h"

#define CODE (-4096) /* the code, relative to the tables */

static uint8_t seed[4096];

static void put4(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, 4);
}

/* CIE, then FDEs for [CODE, +11) and [CODE + 16, +11); the length. */
static size_t eh_frame(uint8_t *t)
{
	static const uint8_t cie[24] = { 20, 0, 0, 0, 0, 0, 0, 0, 1, 'z', 'R', 0, 1, 0x78, 16,
					 1, 0x1b, 0x0c, 7, 8, 0x90, 1, 0, 0 };
	static const uint8_t ins[2][16] = {
		{ 0x41, 0x0e, 16, 0x86, 2, 0x43, 0x0d, 6, 0x46, 0x0c, 7, 8 },
		{ 0x44, 0x0e, 16, 0x46, 0x0e, 8 },
	};
	memcpy(t, cie, 24);
	for (int f = 0; f < 2; f++) {
		uint8_t *p = t + 24 + 32 * f;
		put4(p, 28);
		put4(p + 4, (uint32_t)(p + 4 - t));
		put4(p + 8, (uint32_t)(CODE + 16 * f - (int)(p + 8 - t)));
		put4(p + 12, 11);
		p[16] = 0;
		memcpy(p + 17, ins[f], 15);
	}
	return 24 + 64;
}

static void write_seed(const char *dir, const char *name, unsigned kind, size_t hdr_size,
		       size_t len)
{
	uint8_t *h = seed;
	h[0] = (uint8_t)kind;
	h[1] = 0;
	h[2] = (uint8_t)hdr_size;
	h[3] = (uint8_t)(hdr_size >> 8);
	put4(h + 4, (uint32_t)CODE);
	put4(h + 8, 32);
	put4(h + 12, 7);
	char path[512];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	FILE *f = fopen(path, "wb");
	if (!f || fwrite(seed, 1, HDR + len, f) != HDR + len)
		FAIL("cannot write %s", path);
	fclose(f);
}

static void write_seeds(const char *dir)
{
	uint8_t *t = seed + HDR;
	size_t n = eh_frame(t);
	write_seed(dir, "eh-frame", SFRAME_JIT_EH_FRAME, 0, n);
	memset(t + n, 0, 4);
	write_seed(dir, "register-frame", 0, 0, n + 4);
	uint8_t *hdr = t + n + 4;
	static const uint8_t head[4] = { 1, 0x1b, 0x03, 0x3b };
	memcpy(hdr, head, 4);
	put4(hdr + 4, (uint32_t)(int32_t)(t - (hdr + 4)));
	put4(hdr + 8, 2);
	for (int f = 0; f < 2; f++) {
		put4(hdr + 12 + 8 * f, (uint32_t)(CODE + 16 * f - (int)(hdr - t)));
		put4(hdr + 16 + 8 * f, (uint32_t)(24 + 32 * f - (int)(hdr - t)));
	}
	write_seed(dir, "eh-frame-hdr", SFRAME_JIT_EH_FRAME_HDR, 28, n + 4 + 28);
	for (unsigned v = 1; v <= 3; v++) {
		static struct sb b;
		sb_init(&b, v, SFB_ABI_AMD64_LE, SFB_F_FDE_SORTED, 0x100000);
		sb_fde(&b, 0x100000 + CODE, 11, SB_INFO(SFB_FRE_TYPE_ADDR1, 0, 0), 0, 0);
		SB_FRE(&b, 0, SB_CFA_SP, 1, 8);
		SB_FRE(&b, 1, SB_CFA_SP, 1, 16, -16);
		SB_FRE(&b, 4, SB_CFA_FP, 1, 16, -16);
		SB_FRE(&b, 10, SB_CFA_SP, 1, 8);
		sb_fde(&b, 0x100000 + CODE + 16, 11, SB_INFO(SFB_FRE_TYPE_ADDR1, 0, 0), 0, 0);
		SB_FRE(&b, 0, SB_CFA_SP, 1, 8);
		SB_FRE(&b, 4, SB_CFA_SP, 1, 16);
		size_t len = sb_finish(&b, t, sizeof seed - HDR);
		char name[16];
		snprintf(name, sizeof name, "sframe-v%u", v);
		write_seed(dir, name, SFRAME_JIT_SFRAME, 0, len);
	}
	write_seed(dir, "frame-pointer", SFRAME_JIT_FRAME_POINTER, 0, 1);
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "-seeds")) {
		write_seeds(argv[2]);
		return 0;
	}
	return fuzz_replay(argc, argv, 1);
}
#endif
