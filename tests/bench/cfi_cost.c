/* cfi_cost.c - what interpreting CFI costs: every FDE of libc and ld.so
 * looked up at 4 PCs each (its first instruction, and a quarter, half and
 * three quarters into it) through sfb_cfi_lookup(), which finds the FDE in
 * .eh_frame_hdr's table, parses it and its CIE and interprets their CFA
 * instructions up to the PC (run()).  Nothing is kept between lookups, so
 * each is what a frame costs the first time its PC is seen.
 *
 * Not part of `make bench`'s runs (its figures are in docs/SPEED.md, "The
 * layout refactor's cost"); built by `make B=DIR DIR/bench/cfi_cost`, and
 * measured with
 *   valgrind --tool=callgrind --collect-atstart=no DIR/bench/cfi_cost
 *   callgrind_annotate --inclusive=yes callgrind.out.PID.1
 * Collection is switched on around the measured pass only (a first pass,
 * not collected, reads the sections' pages), which is dumped as
 * "cfi:lookups:ROWS"; the whole dump is the lookups' cost, run()'s
 * inclusive cost the interpreter's.  Without valgrind it prints the
 * number of objects, FDEs and rows, and exits non-zero if any lookup
 * failed. */
#define _GNU_SOURCE
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rows/cfi.h"

#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#else
#define CALLGRIND_TOGGLE_COLLECT
#define CALLGRIND_DUMP_STATS_AT(s) ((void)(s))
#endif

#define MAX_OBJS 2
#define PCS_PER_FDE 4
#define FP_REG 6 /* x86-64's rbp; the row's fp is only copied */

static struct sfb_cfi_section objs[MAX_OBJS];
static const char *names[MAX_OBJS];
static int nobjs;

struct probe {
	uint8_t obj;
	uint64_t pc;
};
static struct probe *probes;
static size_t nprobes, cap;

static int find_objs(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	(void)arg;
	const char *n = info->dlpi_name;
	if (nobjs == MAX_OBJS || !(strstr(n, "/libc.so") || strstr(n, "/ld-linux")))
		return 0;
	const ElfW(Phdr) *hdr = NULL;
	uint64_t limit = 0;
	for (int i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_GNU_EH_FRAME)
			hdr = &info->dlpi_phdr[i];
	if (!hdr)
		return 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *p = &info->dlpi_phdr[i];
		if (p->p_type == PT_LOAD && hdr->p_vaddr >= p->p_vaddr &&
		    hdr->p_vaddr < p->p_vaddr + p->p_memsz)
			limit = info->dlpi_addr + p->p_vaddr + p->p_memsz;
	}
	uint64_t h = info->dlpi_addr + hdr->p_vaddr;
	if (sfb_cfi_load(&objs[nobjs], (const void *)(uintptr_t)h, hdr->p_memsz, h, limit, 0) ==
	    SFB_CFI_OK)
		names[nobjs++] = n;
	return 0;
}

static void add_probe(int obj, uint64_t pc)
{
	if (nprobes == cap) {
		cap = cap ? 2 * cap : 65536;
		probes = realloc(probes, cap * sizeof *probes);
		if (!probes) {
			perror("cfi_cost");
			exit(2);
		}
	}
	probes[nprobes++] = (struct probe){ (uint8_t)obj, pc };
}

/* Table entry i's initial location (datarel sdata4, as sfb_cfi_load()
 * requires). */
static uint64_t entry_pc(const struct sfb_cfi_section *s, uint32_t i)
{
	int32_t a;
	memcpy(&a, (const uint8_t *)s->hdr.p + s->table_off + 8 * (uint64_t)i, 4);
	return s->hdr_addr + (uint64_t)(int64_t)a;
}

static unsigned long pass(unsigned long *sink)
{
	unsigned long failed = 0;
	for (size_t i = 0; i < nprobes; i++) {
		struct sfb_row row;
		if (sfb_cfi_lookup(&objs[probes[i].obj], probes[i].pc, FP_REG, &row) != SFB_CFI_OK)
			failed++;
		else
			*sink += (unsigned long)row.cfa.off + row.nregs;
	}
	return failed;
}

int main(void)
{
	dl_iterate_phdr(find_objs, NULL);
	if (nobjs != MAX_OBJS) {
		fprintf(stderr, "cfi_cost: found %d of libc and ld.so with CFI\n", nobjs);
		return 2;
	}
	unsigned long fdes = 0;
	for (int o = 0; o < nobjs; o++)
		for (uint32_t i = 0; i < objs[o].fde_count; i++) {
			struct sfb_cfi_fde fde;
			if (sfb_cfi_find(&objs[o], entry_pc(&objs[o], i), &fde) != SFB_CFI_OK ||
			    fde.pc_end <= fde.pc_begin)
				continue;
			fdes++;
			for (int k = 0; k < PCS_PER_FDE; k++)
				add_probe(o, fde.pc_begin + (fde.pc_end - fde.pc_begin) * k / PCS_PER_FDE);
		}
	unsigned long sink = 0;
	unsigned long failed = pass(&sink);
	CALLGRIND_TOGGLE_COLLECT;
	unsigned long failed2 = pass(&sink);
	CALLGRIND_TOGGLE_COLLECT;
	char name[64];
	snprintf(name, sizeof name, "cfi:lookups:%zu", nprobes);
	CALLGRIND_DUMP_STATS_AT(name);
	for (int o = 0; o < nobjs; o++)
		printf("%s: %u FDEs in the table\n", names[o], objs[o].fde_count);
	printf("%lu FDEs, %zu rows looked up, %lu failed (sink %lu)\n", fdes, nprobes, failed,
	       sink & 1);
	return failed || failed2 != failed;
}
