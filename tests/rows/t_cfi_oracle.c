/* The .eh_frame decoder (src/rows/cfi.c) against GNU readelf.
 *
 * For each ELF file (x86-64, read into memory), finds PT_GNU_EH_FRAME and
 * the PT_LOAD holding .eh_frame, loads them with sfb_cfi_load(), and for
 * every FDE readelf --debug-dump=frames-interp prints, checks that the
 * search table finds it with the same range, then compares
 * sfb_cfi_table_row() with every row readelf prints (at the row's first
 * and last PC): the CFA rule and every register column, in readelf's
 * notation (u, s, c-N, v+N, a register name, exp, vexp).  An FDE readelf
 * prints no rows for (no instructions) is compared with its CIE's row.
 * Prints the counts: files, FDEs, rows compared, disagreements (each
 * disagreement also on its own line).
 *
 * Every DWARF expression rule met is also evaluated (with every register
 * and word readable), so that an operation the evaluator lacks shows.
 *
 * usage: t_cfi_oracle [ELF...]   (default: the system's libc, ld.so,
 * libstdc++, libgcc_s and libm, libgcrypt and libunwind if installed,
 * and this process's vDSO written to a
 * file; t_cfi_oracle.sh passes objects built from the project's sources
 * without SFrame). */
#include <elf.h>
#include <stdio.h>
#include <sys/auxv.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rows/cfi.h"
#include "check.h"

static const char *const default_files[] = {
	"/lib/x86_64-linux-gnu/libc.so.6",
	"/lib64/ld-linux-x86-64.so.2",
	"/usr/lib/x86_64-linux-gnu/libstdc++.so.6",
	"/lib/x86_64-linux-gnu/libgcc_s.so.1",
	"/lib/x86_64-linux-gnu/libm.so.6",
	/* When installed: hand-written assembly whose CFA goes from an
	 * expression back to a register; .eh_frame in the writable segment. */
	"/usr/lib/x86_64-linux-gnu/libgcrypt.so.20",
	"/usr/lib/x86_64-linux-gnu/libunwind.so.8",
	"/usr/lib/x86_64-linux-gnu/libunwind.so.1",
};

/* readelf's names of the DWARF registers 0..35, x86-64 and AArch64. */
static const char *const names_aarch64[SFB_CFI_REGS] = {
	"x0", "x1", "x2", "x3", "x4", "x5", "x6", "x7", "x8", "x9", "x10", "x11", "x12",
	"x13", "x14", "x15", "x16", "x17", "x18", "x19", "x20", "x21", "x22", "x23", "x24",
	"x25", "x26", "x27", "x28", "x29", "x30", "sp",
};
static const char *const names_x86_64[SFB_CFI_REGS] = {
	"rax", "rdx", "rcx", "rbx", "rsi", "rdi", "rbp", "rsp",
	"r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15", "rip",
	"xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7",
	"xmm8", "xmm9", "xmm10", "xmm11", "xmm12", "xmm13", "xmm14", "xmm15",
	"st0", "st1", "st2",
};

static const char *const *regnames = names_x86_64;

static int regno(const char *name)
{
	for (int i = 0; i < SFB_CFI_REGS; i++)
		if (regnames[i] && !strcmp(name, regnames[i]))
			return i;
	return -1;
}

static unsigned long n_files, n_fdes, n_rows, n_cells, n_skipped, n_bad, n_exprs;

static void disagree(const char *file, unsigned long long fde, unsigned long long pc,
		     const char *fmt, const char *a, const char *b)
{
	n_bad++;
	if (n_bad <= 50)
		printf("# disagreement: %s FDE %#llx pc %#llx: %s: decoder %s, readelf %s\n",
		       file, fde, pc, fmt, a, b);
}

/* Our rule in readelf's notation. */
static void fmt_reg(const struct sfb_cfi_table_row *t, unsigned r, char *buf, size_t n)
{
	const struct sfb_loc *l = &t->reg[r];
	switch (l->kind) {
	case SFB_LOC_SAME:
		snprintf(buf, n, "%s", (t->explicit_regs >> r) & 1 ? "s" : "u");
		break;
	case SFB_LOC_UNDEFINED:
		snprintf(buf, n, "u");
		break;
	case SFB_LOC_EXPR:
		if (l->reg != SFB_REG_CFA)
			snprintf(buf, n, "?base%u", l->reg);
		else
			snprintf(buf, n, "%c%+d", l->deref ? 'c' : 'v', l->off);
		break;
	case SFB_LOC_REGISTER:
		snprintf(buf, n, "r%u (%s)", l->reg,
			 l->reg < SFB_CFI_REGS && regnames[l->reg] ? regnames[l->reg] : "?");
		break;
	case SFB_LOC_DWARF:
		snprintf(buf, n, "%s", l->deref ? "exp" : "vexp");
		break;
	default:
		snprintf(buf, n, "?kind%u", l->kind);
	}
}

static void fmt_cfa(const struct sfb_cfi_table_row *t, char *buf, size_t n)
{
	if (t->cfa.kind == SFB_LOC_DWARF)
		snprintf(buf, n, "exp");
	else if (t->cfa.kind == SFB_LOC_EXPR && t->cfa.reg < SFB_CFI_REGS && regnames[t->cfa.reg])
		snprintf(buf, n, "%s%+d", regnames[t->cfa.reg], t->cfa.off);
	else
		snprintf(buf, n, "?cfa");
}

#define MAXCOLS 64

struct block {
	unsigned long long off, cie, pc_lo, pc_hi;
	bool is_cie, have_header;
	int ncols;
	int col[MAXCOLS];            /* DWARF number, -1: not tracked, -2: ra */
	int nrows;
	int rows_cap;
	unsigned long long *loc;
	char (*cells)[MAXCOLS + 1][24];   /* [row][0] CFA, [row][1+i] column i */
};

struct cie_row {
	unsigned long long off;
	struct block b;
};

static void block_free(struct block *b)
{
	free(b->loc);
	free(b->cells);
	memset(b, 0, sizeof *b);
}

/* Every register has a value and every address a word: an expression
 * fails only on an operation the evaluator does not support. */
static bool any_reg(void *arg, unsigned regno, uint64_t *out)
{
	(void)arg;
	*out = 0x7ffc00000000ull + regno * 0x100;
	return true;
}

static bool any_mem(void *arg, uint64_t addr, uint64_t *out)
{
	(void)arg;
	*out = addr ^ 0x5555;
	return true;
}

static void eval_rule(const char *file, const struct sfb_cfi_section *s,
		      unsigned long long fde_off, unsigned long long pc,
		      const struct sfb_loc *l, bool push_cfa)
{
	static const struct sfb_cfi_eval_ctx cx = { any_reg, any_mem, NULL };
	uint64_t v;
	if (l->kind != SFB_LOC_DWARF)
		return;
	n_exprs++;
	int err = sfb_cfi_eval(s->frame.p, s->frame.len, (uint32_t)l->off, l->reg, &cx, push_cfa,
			       0x7ffc00001000ull, &v);
	if (err)
		disagree(file, fde_off, pc, "expression", sfb_cfi_err_name(err), "(evaluable)");
}

/* Compare the decoder's row at pc with readelf's row i of b. */
static void compare_row(const char *file, const struct sfb_cfi_section *s,
			const struct sfb_cfi_fde *f, unsigned long long fde_off,
			const struct block *b, int i, unsigned long long pc,
			unsigned long long lo, unsigned long long hi)
{
	struct sfb_cfi_table_row t;
	char ours[32];
	int err = sfb_cfi_table_row(s, f, pc, &t);
	if (err) {
		disagree(file, fde_off, pc, "table_row", sfb_cfi_err_name(err), "a row");
		return;
	}
	n_rows++;
	if (lo && (t.pc_lo != lo || t.pc_hi != hi)) {
		char a[64], e[64];
		snprintf(a, sizeof a, "[%#llx,%#llx)", (unsigned long long)t.pc_lo,
			 (unsigned long long)t.pc_hi);
		snprintf(e, sizeof e, "[%#llx,%#llx)", lo, hi);
		disagree(file, fde_off, pc, "row range", a, e);
	}
	eval_rule(file, s, fde_off, pc, &t.cfa, false);
	for (unsigned r = 0; r < SFB_CFI_REGS; r++)
		eval_rule(file, s, fde_off, pc, &t.reg[r], true);
	fmt_cfa(&t, ours, sizeof ours);
	if (strcmp(ours, b->cells[i][0]))
		disagree(file, fde_off, pc, "CFA", ours, b->cells[i][0]);
	uint64_t seen = 0;
	for (int c = 0; c < b->ncols; c++) {
		int r = b->col[c] == -2 ? (int)t.ra_column : b->col[c];
		if (r < 0 || r >= SFB_CFI_REGS) {
			n_skipped++;
			continue;
		}
		seen |= (uint64_t)1 << r;
		fmt_reg(&t, (unsigned)r, ours, sizeof ours);
		n_cells++;
		if (strcmp(ours, b->cells[i][1 + c])) {
			char what[32];
			snprintf(what, sizeof what, "register %d", r);
			disagree(file, fde_off, pc, what, ours, b->cells[i][1 + c]);
		}
	}
	/* Every rule the decoder has is in a column readelf prints. */
	uint64_t extra = t.explicit_regs & ~seen;
	if (extra) {
		char a[32];
		snprintf(a, sizeof a, "%#llx", (unsigned long long)extra);
		disagree(file, fde_off, pc, "rules for registers readelf has no column for", a,
			 "none");
	}
}

static void check_fde(const char *file, const struct sfb_cfi_section *s,
		      const struct block *b, const struct block *cie)
{
	struct sfb_cfi_fde f;
	n_fdes++;
	if (b->pc_lo == b->pc_hi)
		return; /* an empty range: nothing to look up */
	int err = sfb_cfi_find(s, b->pc_lo, &f);
	if (err) {
		disagree(file, b->off, b->pc_lo, "find", sfb_cfi_err_name(err), "an FDE");
		return;
	}
	if (f.pc_begin != b->pc_lo || f.pc_end != b->pc_hi) {
		char a[64], e[64];
		snprintf(a, sizeof a, "%#llx..%#llx", (unsigned long long)f.pc_begin,
			 (unsigned long long)f.pc_end);
		snprintf(e, sizeof e, "%#llx..%#llx", b->pc_lo, b->pc_hi);
		disagree(file, b->off, b->pc_lo, "FDE range", a, e);
		return;
	}
	if (b->nrows == 0) {
		/* No instructions: the CIE's row holds for the whole FDE. */
		if (cie && cie->nrows == 1) {
			compare_row(file, s, &f, b->off, cie, 0, b->pc_lo, b->pc_lo, b->pc_hi);
			compare_row(file, s, &f, b->off, cie, 0, b->pc_hi - 1, 0, 0);
		}
		return;
	}
	for (int i = 0; i < b->nrows; i++) {
		unsigned long long lo = b->loc[i];
		unsigned long long hi = i + 1 < b->nrows ? b->loc[i + 1] : b->pc_hi;
		if (hi > b->pc_hi)
			hi = b->pc_hi;
		if (lo < b->pc_lo || lo >= hi)
			continue; /* a row for no PC */
		compare_row(file, s, &f, b->off, b, i, lo, lo, hi);
		if (hi - 1 != lo)
			compare_row(file, s, &f, b->off, b, i, hi - 1, 0, 0);
	}
}

/* AArch64's RA_SIGN_STATE, which readelf's frames-interp view leaves
 * out: replayed from its raw view (negate_ra_state toggles it,
 * remember/restore_state keep it) and compared with the decoder's at
 * every row start of every FDE with a negate_ra_state; the CIE's 'B' too. */
static unsigned long n_ra_rows;

static void check_ra_state(const char *file, const struct sfb_cfi_section *s)
{
	char cmd[4200], line[4096];
	snprintf(cmd, sizeof cmd, "readelf --debug-dump=frames '%s' 2>/dev/null", file);
	FILE *rp = popen(cmd, "r");
	if (!rp)
		return;
	unsigned long long lo = 0, hi = 0, off = 0, cur = 0, locs[256];
	int states[256], n = -1, st = 0, stack[16], depth = 0, toggles = 0;
	for (bool more = true; more;) {
		more = fgets(line, sizeof line, rp) != NULL;
		unsigned long long a, b, c, d, e, f, to;
		bool hdr = more && sscanf(line, "%llx %llx %llx FDE cie=%llx pc=%llx..%llx", &a, &b,
					  &c, &d, &e, &f) == 6;
		if ((!more || hdr || strstr(line, " CIE")) && n >= 0) {
			/* The FDE just read: its last row, then the checks. */
			if (n < 256) {
				locs[n] = cur;
				states[n++] = st;
			}
			for (int i = 0; toggles && i < n; i++) {
				struct sfb_cfi_fde fd;
				struct sfb_cfi_table_row t;
				if (locs[i] < lo || locs[i] >= hi || (i + 1 < n && locs[i + 1] == locs[i]))
					continue;
				if (sfb_cfi_find(s, locs[i], &fd) || sfb_cfi_table_row(s, &fd, locs[i], &t)) {
					disagree(file, off, locs[i], "RA sign state row", "none", "a row");
					continue;
				}
				n_ra_rows++;
				if (t.ra_signed != states[i])
					disagree(file, off, locs[i], "RA_SIGN_STATE", t.ra_signed ? "1" : "0",
						 states[i] ? "1" : "0");
			}
			n = -1;
		}
		if (hdr) {
			off = a;
			lo = cur = e;
			hi = f;
			n = st = depth = toggles = 0;
			continue;
		}
		if (n < 0)
			continue;
		char *p = strstr(line, " to ");
		if (strstr(line, "DW_CFA_advance_loc") && p && sscanf(p, " to %llx", &to) == 1) {
			if (n < 256) {
				locs[n] = cur;
				states[n++] = st;
			}
			cur = to;
		} else if (strstr(line, "DW_CFA_AARCH64_negate_ra_state")) {
			st ^= 1;
			toggles++;
		} else if (strstr(line, "DW_CFA_remember_state") && depth < 16) {
			stack[depth++] = st;
		} else if (strstr(line, "DW_CFA_restore_state") && depth > 0) {
			st = stack[--depth];
		}
	}
	pclose(rp);
}

/* Read the whole file. */
static unsigned char *slurp(const char *path, size_t *len)
{
	FILE *fp = fopen(path, "rb");
	if (!fp)
		return NULL;
	fseek(fp, 0, SEEK_END);
	long n = ftell(fp);
	fseek(fp, 0, SEEK_SET);
	unsigned char *p = n > 0 ? malloc((size_t)n) : NULL;
	if (p && fread(p, 1, (size_t)n, fp) != (size_t)n) {
		free(p);
		p = NULL;
	}
	fclose(fp);
	*len = (size_t)n;
	return p;
}

static void check_file(const char *file)
{
	size_t len;
	unsigned char *img = slurp(file, &len);
	if (!img) {
		CHECK(0, "%s: readable", file);
		return;
	}
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)img;
	if (len < sizeof *eh || memcmp(eh->e_ident, ELFMAG, SELFMAG) ||
	    eh->e_ident[EI_CLASS] != ELFCLASS64 || eh->e_ident[EI_DATA] != ELFDATA2LSB ||
	    (eh->e_machine != EM_X86_64 && eh->e_machine != EM_AARCH64) ||
	    eh->e_phoff + (uint64_t)eh->e_phnum * sizeof(Elf64_Phdr) > len) {
		CHECK(0, "%s: an x86-64 or AArch64 little-endian ELF64 file", file);
		free(img);
		return;
	}
	regnames = eh->e_machine == EM_AARCH64 ? names_aarch64 : names_x86_64;
	const Elf64_Phdr *ph = (const Elf64_Phdr *)(img + eh->e_phoff);
	const Elf64_Phdr *hdr = NULL;
	for (int i = 0; i < eh->e_phnum; i++)
		if (ph[i].p_type == PT_GNU_EH_FRAME)
			hdr = &ph[i];
	if (!hdr || hdr->p_offset + hdr->p_filesz > len) {
		CHECK(0, "%s: has PT_GNU_EH_FRAME", file);
		free(img);
		return;
	}
	/* .eh_frame is read from the PT_LOAD holding it, which need not be
	 * the header's (libunwind puts it in the writable one): try each,
	 * and keep the one .eh_frame lies in.  sfb_cfi_load() reads only the
	 * header, so a wrong try reads nothing it should not. */
	struct sfb_cfi_section s;
	int err = SFB_CFI_E_HDR;
	for (int i = 0; i < eh->e_phnum; i++) {
		if (ph[i].p_type != PT_LOAD || ph[i].p_offset + ph[i].p_filesz > len)
			continue;
		uint64_t lo = ph[i].p_vaddr, limit = lo + ph[i].p_filesz;
		uintptr_t base = (uintptr_t)img + ph[i].p_offset - ph[i].p_vaddr;
		err = sfb_cfi_load(&s, img + hdr->p_offset, hdr->p_filesz, hdr->p_vaddr, limit, base);
		if (err == SFB_CFI_OK && s.frame_addr >= lo)
			break;
		if (err == SFB_CFI_OK)
			err = SFB_CFI_E_HDR;
	}
	CHECK(err == SFB_CFI_OK, "%s: sfb_cfi_load: %s, %u FDEs in the table", file,
	      sfb_cfi_err_name(err), s.fde_count);
	if (err) {
		free(img);
		return;
	}
	n_files++;

	char cmd[4200];
	snprintf(cmd, sizeof cmd, "readelf --debug-dump=frames-interp '%s' 2>/dev/null", file);
	FILE *rp = popen(cmd, "r");
	if (!rp) {
		CHECK(0, "%s: readelf runs", file);
		free(img);
		return;
	}
	unsigned long before_fdes = n_fdes, before_rows = n_rows, before_bad = n_bad;
	struct block cur = { 0 };
	struct cie_row *cies = NULL;
	size_t ncies = 0;
	bool in_block = false;
	char line[4096];
	/* Finish the block being read: a CIE is kept for its FDEs, an FDE
	 * is checked. */
	#define FINISH()                                                              \
		do {                                                                  \
			if (!in_block)                                                \
				break;                                                \
			if (cur.is_cie) {                                             \
				cies = realloc(cies, (ncies + 1) * sizeof *cies);     \
				cies[ncies].off = cur.off;                            \
				cies[ncies++].b = cur;                                \
				memset(&cur, 0, sizeof cur);                          \
			} else {                                                      \
				const struct block *cb = NULL;                        \
				for (size_t k = 0; k < ncies; k++)                    \
					if (cies[k].off == cur.cie)                   \
						cb = &cies[k].b;                      \
				check_fde(file, &s, &cur, cb);                        \
				block_free(&cur);                                     \
			}                                                             \
			in_block = false;                                             \
		} while (0)
	while (fgets(line, sizeof line, rp)) {
		unsigned long long off, elen, id, cie, lo, hi;
		char *nl = strchr(line, '\n');
		if (nl)
			*nl = 0;
		if (sscanf(line, "%llx %llx %llx FDE cie=%llx pc=%llx..%llx", &off, &elen, &id,
			   &cie, &lo, &hi) == 6) {
			FINISH();
			cur = (struct block){ .off = off, .cie = cie, .pc_lo = lo, .pc_hi = hi };
			in_block = true;
			continue;
		}
		if (sscanf(line, "%llx %llx %llx CIE", &off, &elen, &id) == 3 &&
		    strstr(line, " CIE")) {
			FINISH();
			cur = (struct block){ .off = off, .is_cie = true };
			in_block = true;
			continue;
		}
		if (!in_block)
			continue;
		if (line[0] == 0) {
			FINISH();
			continue;
		}
		char *tok[MAXCOLS + 2];
		int nt = 0;
		/* A register rule prints as "r9 (r9)": one cell. */
		for (char *p = strtok(line, " "); p && nt < MAXCOLS + 2; p = strtok(NULL, " ")) {
			if (p[0] == '(' && nt > 0)
				p[-1] = ' ';
			else
				tok[nt++] = p;
		}
		if (nt >= 2 && !strcmp(tok[0], "LOC") && !strcmp(tok[1], "CFA")) {
			cur.ncols = nt - 2;
			cur.have_header = true;
			for (int c = 0; c < cur.ncols; c++)
				cur.col[c] = !strcmp(tok[2 + c], "ra") ? -2 : regno(tok[2 + c]);
			continue;
		}
		if (nt >= 2 && cur.have_header) {
			if (nt != cur.ncols + 2) {
				disagree(file, cur.off, 0, "readelf row with a column count not its header's",
					 tok[0], "");
				continue;
			}
			if (cur.nrows == cur.rows_cap) {
				cur.rows_cap = cur.rows_cap ? 2 * cur.rows_cap : 16;
				cur.loc = realloc(cur.loc, cur.rows_cap * sizeof *cur.loc);
				cur.cells = realloc(cur.cells, cur.rows_cap * sizeof *cur.cells);
			}
			cur.loc[cur.nrows] = strtoull(tok[0], NULL, 16);
			for (int c = 0; c < nt - 1; c++)
				snprintf(cur.cells[cur.nrows][c], 24, "%s", tok[1 + c]);
			cur.nrows++;
		}
	}
	FINISH();
	#undef FINISH
	if (eh->e_machine == EM_AARCH64)
		check_ra_state(file, &s);
	/* readelf exits 1 on objects without debugging sections, whatever
	 * it printed: its output is checked by the counts instead. */
	pclose(rp);
	for (size_t k = 0; k < ncies; k++)
		block_free(&cies[k].b);
	free(cies);
	CHECK(n_fdes - before_fdes == s.fde_count,
	      "%s: readelf's FDEs (%lu) are the table's (%u)", file, n_fdes - before_fdes,
	      s.fde_count);
	CHECK(n_bad == before_bad && n_rows > before_rows,
	      "%s: %lu FDEs, %lu rows, %lu disagreements", file, n_fdes - before_fdes,
	      n_rows - before_rows, n_bad - before_bad);
	free(img);
}

/* The vDSO, written to a file for readelf: the image ends with its
 * section headers. */
static void check_vdso(void)
{
	const unsigned char *v = (const unsigned char *)getauxval(AT_SYSINFO_EHDR);
	if (!v) {
		printf("# no vDSO\n");
		return;
	}
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)v;
	size_t len = eh->e_shoff + (size_t)eh->e_shnum * eh->e_shentsize;
	const char *dir = getenv("SFB_BUILD");
	if (!dir)
		dir = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	char path[4096];
	snprintf(path, sizeof path, "%s/vdso-%d.so", dir, (int)getpid());
	FILE *fp = fopen(path, "wb");
	if (!fp || fwrite(v, 1, len, fp) != len) {
		CHECK(0, "vDSO written to %s", path);
		if (fp)
			fclose(fp);
		return;
	}
	fclose(fp);
	check_file(path);
	remove(path);
}

int main(int argc, char **argv)
{
	if (system("readelf --version >/dev/null 2>&1") != 0) {
		CHECK(0, "readelf is installed");
		CHECK_DONE();
	}
	if (argc > 1) {
		for (int i = 1; i < argc; i++)
			check_file(argv[i]);
	} else {
		for (size_t i = 0; i < sizeof default_files / sizeof *default_files; i++)
			if (access(default_files[i], R_OK) == 0)
				check_file(default_files[i]);
		check_vdso();
	}
	printf("# files %lu, FDEs %lu, rows compared %lu (%lu register cells, %lu columns of "
	       "untracked registers skipped, %lu expressions evaluated, %lu AArch64 rows' "
	       "RA_SIGN_STATE), disagreements %lu\n",
	       n_files, n_fdes, n_rows, n_cells, n_skipped, n_exprs, n_ra_rows, n_bad);
	CHECK(n_bad == 0 && n_files > 0, "oracle: %lu files, %lu FDEs, %lu rows, %lu disagreements",
	      n_files, n_fdes, n_rows, n_bad);
	CHECK_DONE();
}
