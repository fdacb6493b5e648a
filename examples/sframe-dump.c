/* sframe-dump: print the decoded SFrame table of an ELF file.
 *
 *   sframe-dump FILE            the table, one row per FRE, for a person
 *   sframe-dump --canon FILE    the canonical form the readelf comparison
 *                               test uses (tests/rows/t_readelf.sh)
 *   sframe-dump --lookup PC FILE   the row sframebt uses for PC
 *
 * Reads any ELF64 file of either byte order (x86-64, AArch64, s390x), finds
 * its .sframe section and validates it with sframebt's decoder; an invalid
 * section is reported with the decoder's reason and exit status 2. */
#include <elf.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rows/sframe_decode.h"
#include "rows/sframe_format.h"

#ifndef SHT_GNU_SFRAME
#define SHT_GNU_SFRAME 0x6ffffff4
#endif

static uint8_t *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	size_t cap = 1 << 16, n = 0;
	uint8_t *buf = malloc(cap);
	for (size_t got; buf && (got = fread(buf + n, 1, cap - n, f)) > 0;) {
		n += got;
		if (n == cap)
			buf = realloc(buf, cap *= 2);
	}
	fclose(f);
	*len = n;
	return buf;
}

static uint64_t rd(const uint8_t *p, unsigned w, int big)
{
	uint64_t v = 0;
	for (unsigned i = 0; i < w; i++)
		v |= (uint64_t)p[big ? i : w - 1 - i] << (8 * (w - 1 - i));
	return v;
}

/* Locate .sframe in an ELF64 image: returns its bytes and sh_addr. */
static int find_sframe(const uint8_t *img, size_t len, const uint8_t **sec,
		       size_t *sec_len, uint64_t *addr)
{
	if (len < sizeof(Elf64_Ehdr) || memcmp(img, ELFMAG, SELFMAG) ||
	    img[EI_CLASS] != ELFCLASS64)
		return -1;
	int big = img[EI_DATA] == ELFDATA2MSB;
	uint64_t shoff = rd(img + 0x28, 8, big);
	unsigned shentsize = rd(img + 0x3a, 2, big), shnum = rd(img + 0x3c, 2, big);
	unsigned shstrndx = rd(img + 0x3e, 2, big);
	if (shentsize < sizeof(Elf64_Shdr) || shoff > len ||
	    (len - shoff) / shentsize < shnum || shstrndx >= shnum)
		return -1;
	const uint8_t *strsh = img + shoff + (uint64_t)shstrndx * shentsize;
	uint64_t stroff = rd(strsh + 0x18, 8, big), strsize = rd(strsh + 0x20, 8, big);
	for (unsigned i = 0; i < shnum; i++) {
		const uint8_t *sh = img + shoff + (uint64_t)i * shentsize;
		uint32_t name = rd(sh, 4, big), type = rd(sh + 4, 4, big);
		uint64_t off = rd(sh + 0x18, 8, big), size = rd(sh + 0x20, 8, big);
		int named = stroff <= len && name < strsize && stroff + name + 8 <= len &&
			    !memcmp(img + stroff + name, ".sframe", 8);
		if (type != SHT_GNU_SFRAME && !named)
			continue;
		if (off > len || size > len - off)
			return -1;
		*sec = img + off;
		*sec_len = size;
		*addr = rd(sh + 0x10, 8, big);
		return 0;
	}
	return -1;
}

static const char *reg_name(const struct sfb_section *s, unsigned reg, char *buf)
{
	if ((int)reg == sfb_abi_sp_reg(s->abi))
		return "sp";
	if ((int)reg == sfb_abi_fp_reg(s->abi))
		return "fp";
	sprintf(buf, "r%u", reg);
	return buf;
}

/* Canonical tokens: the spelling of binutils 2.47's SFrame dumper, which
 * tests/fixtures/readelf-canon.awk maps every readelf version onto. */
static void canon_loc(const struct sfb_section *s, const struct sfb_loc *l,
		      int flex, char *out)
{
	char rb[16];
	if (l->kind != SFB_LOC_EXPR) {
		strcpy(out, "u");
		return;
	}
	const char *base = l->reg == SFB_REG_CFA ? "c" : reg_name(s, l->reg, rb);
	if (!flex && l->reg != SFB_REG_CFA && !l->deref && l->off == 0)
		sprintf(out, "%s", base); /* s390x V2: value in register */
	else if (flex && l->deref)
		sprintf(out, "(%s%+d)", base, l->off);
	else
		sprintf(out, "%s%+d", base, l->off);
}

static void canon_row(const struct sfb_section *s, const struct sfb_row *row,
		      uint64_t start)
{
	char cfa[48], fp[48], ra[48], rb[16];
	int flex = !!(row->flags & SFB_ROW_FLEX);
	printf("fre %016" PRIx64, start);
	if (row->flags & SFB_ROW_OUTERMOST) {
		printf(" RA-undefined\n");
		return;
	}
	if (flex)
		canon_loc(s, &row->cfa, 1, cfa);
	else /* readelf prints default-FDE CFAs as "%s+%d", even when negative */
		sprintf(cfa, "%s+%d", reg_name(s, row->cfa.reg, rb), row->cfa.off);
	canon_loc(s, &row->fp, flex, fp);
	if (row->flags & SFB_ROW_RA_PADDING)
		strcpy(ra, "U");
	else if (row->flags & SFB_ROW_RA_FIXED)
		strcpy(ra, "f");
	else
		canon_loc(s, &row->ra, flex, ra);
	if (row->flags & SFB_ROW_MANGLED_RA)
		strcat(ra, "[s]");
	printf(" %s %s %s\n", cfa, fp, ra);
}

static void print_flags(uint8_t flags, int version)
{
	const char *sep = "";
	printf("flags ");
	if (!flags)
		printf("NONE");
	if (flags & SFB_F_FDE_SORTED)
		printf("%sSFRAME_F_FDE_SORTED", sep), sep = ",";
	if ((flags & SFB_F_FRAME_POINTER) && version <= 2)
		printf("%sSFRAME_F_FRAME_POINTER", sep), sep = ",";
	if (flags & SFB_F_FDE_FUNC_START_PCREL)
		printf("%sSFRAME_F_FDE_FUNC_START_PCREL", sep), sep = ",";
	printf("\n");
}

static void dump_canon(const struct sfb_section *s)
{
	printf("version %u\n", s->version);
	print_flags(s->flags, s->version);
	if (s->fixed_fp)
		printf("fixed-fp %d\n", s->fixed_fp);
	if (s->fixed_ra)
		printf("fixed-ra %d\n", s->fixed_ra);
	printf("fdes %u\nfres %u\n", s->num_fdes, s->num_fres);
	for (uint32_t i = 0; i < s->num_fdes; i++) {
		struct sfb_fde f;
		sfb_fde_get(s, i, &f);
		printf("fde %u pc=0x%" PRIx64 " size=%u", i, f.start, f.size);
		if (f.signal || f.fde_type == SFB_FDE_TYPE_FLEX)
			printf(" attr=%s%s", f.signal ? "S" : "",
			       f.fde_type == SFB_FDE_TYPE_FLEX ? "F" : "");
		if (f.pauth_b && (s->abi == SFB_ABI_AARCH64_LE || s->abi == SFB_ABI_AARCH64_BE))
			printf(" pauth=B");
		printf("%s\n", f.pcmask ? " mask" : "");
		for (uint32_t j = 0; j < f.num_fres; j++) {
			struct sfb_row row;
			sfb_fre_row(s, &f, j, &row);
			canon_row(s, &row, row.pc_lo);
		}
	}
}

/* The human form: what each rule means. */
static void human_loc(const struct sfb_section *s, const struct sfb_loc *l, char *out)
{
	char rb[16];
	if (l->kind == SFB_LOC_SAME) {
		strcpy(out, "same");
		return;
	}
	if (l->kind == SFB_LOC_UNDEFINED) {
		strcpy(out, "undef");
		return;
	}
	const char *base = l->reg == SFB_REG_CFA ? "CFA" : reg_name(s, l->reg, rb);
	sprintf(out, l->deref ? "*(%s%+d)" : "%s%+d", base, l->off);
}

static void human_row(const struct sfb_section *s, const struct sfb_row *row)
{
	char cfa[48], fp[48], ra[48];
	human_loc(s, &row->cfa, cfa);
	human_loc(s, &row->fp, fp);
	human_loc(s, &row->ra, ra);
	printf("  %#10" PRIx64 "  CFA=%-12s RA=%-12s FP=%-12s%s%s%s\n", row->pc_lo,
	       cfa, ra, fp, row->flags & SFB_ROW_OUTERMOST ? " outermost" : "",
	       row->flags & SFB_ROW_MANGLED_RA ? " ra-signed" : "",
	       row->flags & SFB_ROW_SIGNAL ? " signal" : "");
}

static const char *abi_name(uint8_t abi)
{
	switch (abi) {
	case SFB_ABI_AMD64_LE: return "amd64";
	case SFB_ABI_AARCH64_LE: return "aarch64";
	case SFB_ABI_AARCH64_BE: return "aarch64-be";
	case SFB_ABI_S390X_BE: return "s390x";
	}
	return "?";
}

static void dump_human(const struct sfb_section *s)
{
	printf("SFrame V%u, %s, %s, %u FDEs, %u FREs, fixed RA %d, fixed FP %d\n",
	       s->version, abi_name(s->abi), s->b.swap ? "foreign byte order" : "host byte order",
	       s->num_fdes, s->num_fres, s->fixed_ra, s->fixed_fp);
	for (uint32_t i = 0; i < s->num_fdes; i++) {
		struct sfb_fde f;
		sfb_fde_get(s, i, &f);
		printf("%#" PRIx64 "..%#" PRIx64 " (%u bytes)%s%s%s\n", f.start,
		       f.start + f.size, f.size, f.pcmask ? " plt-mask" : "",
		       f.fde_type == SFB_FDE_TYPE_FLEX ? " flexible" : "",
		       f.num_fres == 0 ? " outermost" : "");
		for (uint32_t j = 0; j < f.num_fres; j++) {
			struct sfb_row row;
			sfb_fre_row(s, &f, j, &row);
			human_row(s, &row);
		}
	}
}

int main(int argc, char **argv)
{
	int canon = 0;
	const char *lookup = NULL;
	int i = 1;
	for (; i < argc && argv[i][0] == '-'; i++) {
		if (!strcmp(argv[i], "--canon"))
			canon = 1;
		else if (!strcmp(argv[i], "--lookup") && i + 1 < argc)
			lookup = argv[++i];
		else
			break;
	}
	if (i != argc - 1) {
		fprintf(stderr, "usage: sframe-dump [--canon | --lookup PC] ELF-FILE\n");
		return 64;
	}
	size_t len;
	uint8_t *img = slurp(argv[i], &len);
	const uint8_t *sec;
	size_t sec_len;
	uint64_t addr;
	if (!img || find_sframe(img, len, &sec, &sec_len, &addr)) {
		fprintf(stderr, "sframe-dump: %s: no readable .sframe section\n", argv[i]);
		return 1;
	}
	struct sfb_section s;
	uint32_t *order = malloc(sizeof(uint32_t) * (sec_len / 16 + 1));
	int err = sfb_section_load(&s, sec, sec_len, addr, order, sec_len / 16 + 1);
	if (err) {
		fprintf(stderr, "sframe-dump: %s: invalid .sframe: %s (%d)\n", argv[i],
			sfb_err_name(err), err);
		return 2;
	}
	if (lookup) {
		struct sfb_row row;
		uint64_t pc = strtoull(lookup, NULL, 0);
		err = sfb_lookup(&s, pc, &row);
		if (err) {
			printf("%#" PRIx64 ": %s\n", pc, sfb_err_name(err));
			return 3;
		}
		printf("%#" PRIx64 " in function %#" PRIx64 "+%u, row %#" PRIx64 "..%#" PRIx64 ":\n",
		       pc, row.func_start, row.func_size, row.pc_lo, row.pc_hi);
		human_row(&s, &row);
	} else if (canon) {
		dump_canon(&s);
	} else {
		dump_human(&s);
	}
	free(order);
	free(img);
	return 0;
}
