/* Line programs, and the lookup itself: steps 4 and 5 of
 * sfb_lines_lookup() (lines.h); inlines.c does steps 1 to 3. */
#include "symbols/lines_int.h"

#include <string.h>

#include "base/dwarf.h"

/* ---- The line table's header ------------------------------------------- */

#define MAX_ENTRY_FORMATS 16 /* content descriptions of a DWARF 5 entry */

struct lhdr {
	uint64_t off, end;      /* the table's header and the end of its program */
	uint64_t program;       /* the program's first opcode */
	uint64_t entries;       /* v2-4: include_directories; v5: directory_entry_format_count */
	uint16_t version;
	uint8_t addr_size, offset_size;
	uint8_t min_inst, max_ops, line_range, opcode_base;
	int8_t line_base;
	bool default_is_stmt;
	uint8_t std_len[256];   /* operands of each standard opcode */
};

static int get(struct sfb_dview *v, uint64_t *off, unsigned w, uint64_t *x)
{
	return sfb_dview_u(v, off, w, x);
}

static int line_header(struct lk *k, uint64_t off, uint8_t unit_addr_size, struct lhdr *h)
{
	struct sfb_dview *v = &k->line;
	uint64_t len, x, hlen;
	int err;
	memset(h, 0, sizeof *h);
	h->off = off;
	h->offset_size = 4;
	h->addr_size = unit_addr_size;
	if ((err = get(v, &off, 4, &len)))
		return err;
	if (len == SFB_DW_LENGTH_64) {
		h->offset_size = 8;
		if ((err = get(v, &off, 8, &len)))
			return err;
	} else if (len >= 0xfffffff0u) {
		return SFB_LINES_E_FORMAT;
	}
	if (len > sfb_dview_size(v) - off)
		return SFB_DSEC_E_TRUNCATED;
	h->end = off + len;
	if ((err = get(v, &off, 2, &x)))
		return err;
	if (x < 2 || x > 5)
		return SFB_LINES_E_VERSION;
	h->version = (uint16_t)x;
	if (h->version >= 5) {
		uint64_t asz, ssz;
		if ((err = get(v, &off, 1, &asz)) || (err = get(v, &off, 1, &ssz)))
			return err;
		if ((asz != 4 && asz != 8) || ssz != 0)
			return SFB_LINES_E_FORMAT;
		h->addr_size = (uint8_t)asz;
	}
	if ((err = get(v, &off, h->offset_size, &hlen)))
		return err;
	if (hlen > h->end - off)
		return SFB_LINES_E_FORMAT;
	h->program = off + hlen;
	h->max_ops = 1;
	uint64_t mi, mo = 1, ds, lb, lr, ob;
	if ((err = get(v, &off, 1, &mi)) ||
	    (h->version >= 4 && (err = get(v, &off, 1, &mo))) ||
	    (err = get(v, &off, 1, &ds)) || (err = get(v, &off, 1, &lb)) ||
	    (err = get(v, &off, 1, &lr)) || (err = get(v, &off, 1, &ob)))
		return err;
	if (lr == 0 || mo == 0 || ob == 0)
		return SFB_LINES_E_FORMAT;
	h->min_inst = (uint8_t)mi;
	h->max_ops = (uint8_t)mo;
	h->default_is_stmt = ds != 0;
	h->line_base = (int8_t)lb;
	h->line_range = (uint8_t)lr;
	h->opcode_base = (uint8_t)ob;
	for (unsigned i = 1; i < ob; i++) {
		if ((err = get(v, &off, 1, &x)))
			return err;
		h->std_len[i] = (uint8_t)x;
	}
	if (off > h->program)
		return SFB_LINES_E_FORMAT;
	h->entries = off;
	return 0;
}

/* ---- Step 4: the row ---------------------------------------------------- */

struct row {
	uint64_t addr, file, line, column;
	uint32_t op_index;
};

/* Advance the address by OPS operations (DWARF 5, 6.2.5.1). */
static void advance(const struct lhdr *h, struct row *r, uint64_t ops)
{
	if (h->max_ops == 1) {
		r->addr += h->min_inst * ops;
		return;
	}
	uint64_t t = r->op_index + ops;
	r->addr += h->min_inst * (t / h->max_ops);
	r->op_index = (uint32_t)(t % h->max_ops);
}

/* Run the program until a row's range holds PC: *out is that row, the
 * last row of its address before the next address. */
static int line_row(struct lk *k, const struct lhdr *h, uint64_t pc, struct row *out, bool *found)
{
	struct sfb_dview *v = &k->line;
	struct row r, prev = { 0 };
	bool have_prev = false;
	uint64_t off = h->program, x;
	int64_t s;
	int err;
	*found = false;
	memset(&r, 0, sizeof r);
	r.file = 1;
	r.line = 1;
	while (off < h->end) {
		uint64_t at = off, op;
		bool emit = false, end_seq = false;
		if ((err = get(v, &off, 1, &op)))
			return err;
		if (op >= h->opcode_base) {
			uint64_t adj = op - h->opcode_base;
			advance(h, &r, adj / h->line_range);
			r.line += (uint64_t)(int64_t)(h->line_base + (int)(adj % h->line_range));
			emit = true;
		} else if (op == 0) {
			uint64_t len, sub;
			if ((err = sfb_dview_uleb(v, &off, &len)))
				return err;
			if (len == 0 || len > h->end - off)
				return SFB_LINES_E_FORMAT;
			uint64_t next = off + len;
			if ((err = get(v, &off, 1, &sub)))
				return err;
			switch (sub) {
			case DW_LNE_end_sequence:
				emit = end_seq = true;
				break;
			case DW_LNE_set_address:
				if (len - 1 != 4 && len - 1 != 8)
					return SFB_LINES_E_FORMAT;
				if ((err = get(v, &off, (unsigned)(len - 1), &r.addr)))
					return err;
				r.op_index = 0;
				break;
			default: /* define_file, set_discriminator, vendors' */
				break;
			}
			off = next;
		} else {
			switch (op) {
			case DW_LNS_copy:
				emit = true;
				break;
			case DW_LNS_advance_pc:
				if ((err = sfb_dview_uleb(v, &off, &x)))
					return err;
				advance(h, &r, x);
				break;
			case DW_LNS_advance_line:
				if ((err = sfb_dview_sleb(v, &off, &s)))
					return err;
				r.line += (uint64_t)s;
				break;
			case DW_LNS_set_file:
				if ((err = sfb_dview_uleb(v, &off, &r.file)))
					return err;
				break;
			case DW_LNS_set_column:
				if ((err = sfb_dview_uleb(v, &off, &r.column)))
					return err;
				break;
			case DW_LNS_const_add_pc:
				advance(h, &r, (255u - h->opcode_base) / h->line_range);
				break;
			case DW_LNS_fixed_advance_pc:
				if ((err = get(v, &off, 2, &x)))
					return err;
				r.addr += x;
				r.op_index = 0;
				break;
			case DW_LNS_negate_stmt: case DW_LNS_set_basic_block:
			case DW_LNS_set_prologue_end: case DW_LNS_set_epilogue_begin:
				break;
			default: /* set_isa, and opcodes newer than this reader: skip their operands */
				for (unsigned i = 0; i < h->std_len[op]; i++)
					if ((err = sfb_dview_uleb(v, &off, &x)))
						return err;
			}
		}
		k->program_bytes += off - at;
		if (k->program_bytes > SFB_LINES_MAX_PROGRAM)
			return SFB_LINES_E_BUDGET_PROGRAM;
		if (!emit)
			continue;
		if (have_prev && prev.addr <= pc && pc < r.addr) {
			*out = prev;
			*found = true;
			return 0;
		}
		prev = r;
		have_prev = !end_seq;
		if (end_seq) {
			memset(&r, 0, sizeof r);
			r.file = 1;
			r.line = 1;
		}
	}
	return 0;
}

/* ---- Step 5: the files ---------------------------------------------------- */

/* A file the frames name, by its index in the line table. */
struct want {
	uint64_t file, dir;
	struct val path, dirname;
	bool have_file, have_dir;
};

/* The entry formats of a DWARF 5 directory or file table at *off. */
struct formats {
	unsigned n;
	uint64_t type[MAX_ENTRY_FORMATS], form[MAX_ENTRY_FORMATS];
};

static int read_formats(struct lk *k, uint64_t *off, struct formats *f)
{
	uint64_t n;
	int err;
	if ((err = get(&k->line, off, 1, &n)))
		return err;
	if (n > MAX_ENTRY_FORMATS)
		return SFB_LINES_E_FORMAT;
	f->n = (unsigned)n;
	for (unsigned i = 0; i < f->n; i++)
		if ((err = sfb_dview_uleb(&k->line, off, &f->type[i])) ||
		    (err = sfb_dview_uleb(&k->line, off, &f->form[i])))
			return err;
	return 0;
}

/* One DWARF 5 entry at *off: its path and directory index. */
static int read_entry(struct lk *k, const struct lhdr *h, const struct formats *f, uint64_t *off,
		      struct val *path, uint64_t *dir)
{
	struct form_ctx fc = { h->version, h->addr_size, h->offset_size, 0 };
	path->cls = VAL_NONE;
	*dir = 0;
	for (unsigned i = 0; i < f->n; i++) {
		struct val x;
		int err = lk_form(k, &k->line, &fc, off, f->form[i], 0, &x);
		if (err)
			return err;
		if (f->type[i] == DW_LNCT_path)
			*path = x;
		else if (f->type[i] == DW_LNCT_directory_index && x.cls == VAL_CONST)
			*dir = x.v;
	}
	return 0;
}

/* Whether want[] asks for directory (DIRS) or file (!DIRS) INDEX; the
 * path of each that does is PATH, its directory DIR. */
static void match(struct want *w, int n, bool dirs, uint64_t index, const struct val *path,
		  uint64_t dir)
{
	for (int i = 0; i < n; i++) {
		if (dirs && w[i].have_file && w[i].dir == index && !w[i].have_dir) {
			w[i].dirname = *path;
			w[i].have_dir = true;
		} else if (!dirs && w[i].file == index && !w[i].have_file) {
			w[i].path = *path;
			w[i].dir = dir;
			w[i].have_file = true;
		}
	}
}

/* One pass over the directory (DIRS) or file table, matching want[]. */
static int line_entries(struct lk *k, const struct lhdr *h, bool dirs, struct want *w, int n)
{
	uint64_t off = h->entries, count, x;
	uint32_t seen = 0;
	int err;
	if (h->version >= 5) {
		struct formats f;
		for (int t = 0; t < 2; t++) {
			if ((err = read_formats(k, &off, &f)) ||
			    (err = sfb_dview_uleb(&k->line, &off, &count)))
				return err;
			for (uint64_t i = 0; i < count; i++) {
				struct val path;
				uint64_t dir;
				if (++seen > SFB_LINES_MAX_FILES)
					return SFB_LINES_E_BUDGET_FILES;
				SFB_NOTE_MAX(k->n_files, seen);
				if ((err = read_entry(k, h, &f, &off, &path, &dir)))
					return err;
				if ((t == 0) == dirs)
					match(w, n, dirs, i, &path, dir);
			}
			if (dirs)
				return 0;
		}
		return 0;
	}
	/* DWARF 2-4: include_directories, then file_names, each ended by an
	 * empty string; both counted from 1. */
	for (int t = 0; t < 2; t++) {
		for (uint64_t i = 1;; i++) {
			struct val path = { VAL_STR, SFB_DSEC_LINE, off };
			uint64_t first, dir = 0, at = off;
			if (++seen > SFB_LINES_MAX_FILES)
				return SFB_LINES_E_BUDGET_FILES;
			SFB_NOTE_MAX(k->n_files, seen);
			if ((err = get(&k->line, &at, 1, &first)))
				return err;
			if (first == 0) {
				off = at;
				break;
			}
			if ((err = sfb_dview_str(&k->line, &off, NULL, 0)))
				return err;
			if (t == 1 && ((err = sfb_dview_uleb(&k->line, &off, &dir)) ||
				       (err = sfb_dview_uleb(&k->line, &off, &x)) ||
				       (err = sfb_dview_uleb(&k->line, &off, &x))))
				return err;
			if ((t == 0) == dirs)
				match(w, n, dirs, i, &path, dir);
		}
		if (dirs)
			return 0;
	}
	return 0;
}

/* Append S to DST (CAP bytes, holding a string). */
static void append(char *dst, size_t cap, const char *s)
{
	size_t n = strlen(dst), m = strlen(s);
	if (n + 1 >= cap)
		return;
	if (m > cap - 1 - n)
		m = cap - 1 - n;
	memcpy(dst + n, s, m);
	dst[n + m] = 0;
}

/* W's path, joined to its directory and, when that is relative, to the
 * unit's directory, into DST; TMP: SFB_LINES_FILE_CAP bytes. */
static int file_path(struct lk *k, const struct unit *u, const struct lhdr *h,
		     const struct want *w, char *dst, char *tmp)
{
	int err;
	dst[0] = 0;
	if (!w->have_file)
		return 0;
	if ((err = lk_string(k, u, &w->path, tmp, SFB_LINES_FILE_CAP)))
		return err;
	if (tmp[0] == '/') {
		append(dst, SFB_LINES_FILE_CAP, tmp);
		return 0;
	}
	/* DWARF 2-4's directory 0 is the unit's directory; DWARF 5 names it. */
	bool dir_is_comp = h->version < 5 && w->dir == 0;
	if (!dir_is_comp && w->have_dir) {
		if ((err = lk_string(k, u, &w->dirname, dst, SFB_LINES_FILE_CAP)))
			return err;
	}
	if (dst[0] != '/' && u->comp_dir.cls != VAL_NONE) {
		/* dst := comp_dir / dst */
		char dir[SFB_LINES_FILE_CAP];
		memcpy(dir, dst, SFB_LINES_FILE_CAP);
		if ((err = lk_string(k, u, &u->comp_dir, dst, SFB_LINES_FILE_CAP)))
			return err;
		if (dir[0]) {
			append(dst, SFB_LINES_FILE_CAP, "/");
			append(dst, SFB_LINES_FILE_CAP, dir);
		}
	}
	if (dst[0])
		append(dst, SFB_LINES_FILE_CAP, "/");
	append(dst, SFB_LINES_FILE_CAP, tmp);
	return 0;
}

/* ---- The lookup ------------------------------------------------------------- */

/* The scratch, in this order: struct lk, the abbreviation index, the
 * inflaters and their stream records (only when a section is
 * compressed), the views.  The views share what is left in these
 * proportions (of VIEW_PARTS). */
enum {
	PART_INFO = 6, PART_ABBREV = 12, PART_ADDR = 1, PART_RANGES = 3, PART_STROFF = 1,
	PART_LINE = 6, PART_STR = 3,
	VIEW_PARTS = PART_INFO + PART_ABBREV + PART_ADDR + PART_RANGES + PART_STROFF +
		     PART_LINE + PART_STR
};
#define ALIGN_UP(x) (((x) + 15) & ~(size_t)15)
#define FIXED_SCRATCH (ALIGN_UP(sizeof(struct lk)) + ALIGN_UP(ABBREV_INDEX * sizeof(uint32_t)))
_Static_assert(FIXED_SCRATCH + ALIGN_UP(SFB_DSEC_ZSTATE) + VIEW_PARTS * 240 <= SFB_LINES_SCRATCH,
	       "SFB_LINES_SCRATCH leaves each view part at least 240 bytes");
/* The records of streams beyond those struct sfb_dsecs holds, taken from
 * the scratch only where it has room for more (a symbolizer's). */
#define STREAM_RECORDS ALIGN_UP(SFB_DSEC_MAX_STREAMS * sizeof(struct sfb_dstream))

/* The inflaters MORE further SFB_DSEC_ZSTATE bytes give, beyond the one in
 * SFB_LINES_SCRATCH: the first pays for that one's copy, then each two
 * another and its copy. */
static int streams_in(size_t more)
{
	return 1 + (more > 1 ? (int)((more - 1) / 2) : 0);
}

static int layout(struct lk **kp, const struct sfb_elf_sections *secs, int fd, void *scratch,
		  size_t size)
{
	uint8_t *p = scratch, *end = p + size;
	struct lk *k = (struct lk *)p;
	memset(k, 0, sizeof *k);
	p += ALIGN_UP(sizeof *k);
	k->abbrev_index = (uint32_t *)p;
	k->abbrev_table = UINT64_MAX;
	p += ALIGN_UP(ABBREV_INDEX * sizeof(uint32_t));
	/* One inflater in SFB_LINES_SCRATCH; with more room, copies of the
	 * inflaters and more of them (fewer restarts from a section's start
	 * when a lookup, or a later one, reads back, or goes back to a
	 * section another has been read since). */
	void *z = NULL;
	struct sfb_dstream *streams = NULL;
	int nz = 0, ncp = 0;
	if (sfb_dsec_any_compressed(secs)) {
		/* Further SFB_DSEC_ZSTATE bytes: first the inflater's copy
		 * (debug_section.h), then more inflaters, each with its copy. */
		size_t more = (size - SFB_LINES_SCRATCH) / SFB_DSEC_ZSTATE;
		if (streams_in(more) > SFB_DSEC_HELD_STREAMS)
			more = (size - SFB_LINES_SCRATCH - STREAM_RECORDS) / SFB_DSEC_ZSTATE;
		ncp = more > 0;
		nz = streams_in(more);
		if (nz > SFB_DSEC_MAX_STREAMS)
			nz = SFB_DSEC_MAX_STREAMS;
		if (ncp)
			ncp = nz;
		z = p;
		p += (size_t)(nz + ncp) * SFB_DSEC_ZSTATE;
		if (nz > SFB_DSEC_HELD_STREAMS) {
			streams = (struct sfb_dstream *)p;
			p += STREAM_RECORDS;
		}
	}
	int err = sfb_dsec_open(&k->d, fd, secs, z, streams, nz);
	if (err)
		return err;
	for (int i = 0; i < ncp; i++)
		sfb_dsec_checkpoint_room(&k->d, i, (uint8_t *)z + (size_t)(nz + i) * SFB_DSEC_ZSTATE);
	size_t part = (size_t)(end - p) / VIEW_PARTS;
	struct { struct sfb_dview *v; int id; unsigned parts; } views[] = {
		{ &k->info, SFB_DSEC_INFO, PART_INFO },
		{ &k->abbrev, SFB_DSEC_ABBREV, PART_ABBREV },
		{ &k->addr, SFB_DSEC_ADDR, PART_ADDR },
		{ &k->ranges, SFB_DSEC_RNGLISTS, PART_RANGES },
		{ &k->stroff, SFB_DSEC_STR_OFFSETS, PART_STROFF },
		{ &k->line, SFB_DSEC_LINE, PART_LINE },
		{ &k->str, SFB_DSEC_STR, PART_STR },
	};
	for (size_t i = 0; i < sizeof views / sizeof views[0]; i++) {
		sfb_dview_init(views[i].v, &k->d, views[i].id, p, part * views[i].parts);
		p += part * views[i].parts;
	}
	*kp = k;
	return 0;
}

int sfb_lines_open(int fd, const struct sfb_elf_sections *secs, void *scratch, size_t size)
{
	struct lk *k;
	if (!scratch || size < SFB_LINES_SCRATCH || ((uintptr_t)scratch & 7))
		return SFB_DSEC_E_SCRATCH;
	if (!secs->sec[SFB_DSEC_INFO].size || !secs->sec[SFB_DSEC_ABBREV].size ||
	    !secs->sec[SFB_DSEC_LINE].size)
		return SFB_DSEC_E_NO_SECTION;
	return layout(&k, secs, fd, scratch, size);
}

int sfb_lines_lookup(int fd, const struct sfb_elf_sections *secs, uint64_t vaddr,
		     struct sfb_line_result *out, void *scratch, size_t size)
{
	out->n = 0;
	out->truncated = false;
	out->inline_err = 0;
	int err = sfb_lines_open(fd, secs, scratch, size);
	return err ? err : sfb_lines_find(scratch, vaddr, out);
}

int sfb_lines_find(void *scratch, uint64_t vaddr, struct sfb_line_result *out)
{
	struct lk *k = scratch;
	struct unit u;
	struct lhdr h;
	struct row row = { 0 };
	bool have_row = false;
	int err;
	out->n = 0;
	out->truncated = false;
	out->inline_err = 0;
	/* A new lookup: its own budgets; the windows and the inflater's
	 * stream stay, so that a later address reads on from an earlier. */
	k->out = out;
	k->dies = k->abbrevs = k->units = 0;
	k->program_bytes = 0;
	k->n_aranges = k->n_depth = k->n_attrs = k->n_ranges = k->n_hops = k->n_files = 0;
	k->nchain = 0;
	k->truncated = false;
	k->abbrev_table = UINT64_MAX;
	if (k->line.id != SFB_DSEC_LINE) /* a lookup that ended in step 1 */
		sfb_dview_init(&k->line, &k->d, SFB_DSEC_LINE, k->line.buf, k->line.cap);
	k->d.inflated = 0;
	k->d.loads = k->d.restarts = k->d.preads = 0;

	/* 1-3: the unit, the chain of entries holding vaddr, their names. */
	if ((err = lk_find_unit(k, vaddr, &u)))
		goto done;
	int ierr = lk_find_chain(k, &u, vaddr);
	if (!ierr)
		ierr = lk_find_names(k, &u);
	if (ierr)
		k->nchain = 0;
	out->inline_err = ierr;
	out->truncated = k->truncated;

	/* 4: the row. */
	if (u.stmt_list.cls == VAL_SECOFF || u.stmt_list.cls == VAL_CONST) {
		if ((err = line_header(k, u.stmt_list.v, u.addr_size, &h)) ||
		    (err = line_row(k, &h, vaddr, &row, &have_row)))
			goto done;
	}
	if (!have_row && !k->nchain) {
		err = SFB_LINES_E_NOT_FOUND;
		goto done;
	}

	/* 5: the files (the row's, then each call site's) and the names. */
	int n = k->nchain ? k->nchain : 1;
	struct want w[SFB_LINES_MAX_FRAMES];
	memset(w, 0, sizeof w);
	for (int i = 0; i < n; i++) {
		struct sfb_line_frame *f = &out->frame[i];
		memset(f, 0, sizeof *f);
		if (i == 0) {
			w[i].file = have_row ? row.file : UINT64_MAX;
			f->line = (uint32_t)row.line;
			f->column = (uint32_t)row.column;
		} else {
			const struct link *l = &k->chain[n - i];
			w[i].file = l->call_file;
			f->line = (uint32_t)l->call_line;
			f->column = (uint32_t)l->call_column;
		}
	}
	out->n = n;
	if (have_row || k->nchain) {
		if (u.stmt_list.cls != VAL_NONE &&
		    !(err = line_header(k, u.stmt_list.v, u.addr_size, &h)) &&
		    !(err = line_entries(k, &h, false, w, n)))
			err = line_entries(k, &h, true, w, n);
		for (int i = 0; !err && i < n; i++) {
			/* The abbreviation window is free once the names are known. */
			char *tmp = (char *)k->abbrev.buf;
			err = file_path(k, &u, &h, &w[i], out->frame[i].file, tmp);
		}
		for (int i = 0; !err && i < k->nchain; i++)
			err = lk_string(k, &u, &k->chain[k->nchain - 1 - i].name,
					out->frame[i].function, SFB_LINES_NAME_CAP);
		k->abbrev_table = UINT64_MAX;
		k->abbrev.len = 0;
	}
done:
	out->units = k->units;
	out->dies = k->dies;
	out->abbrevs = k->abbrevs;
	out->program_bytes = k->program_bytes;
	out->aranges = k->n_aranges;
	out->depth = k->n_depth;
	out->attrs = k->n_attrs;
	out->ranges = k->n_ranges;
	out->hops = k->n_hops;
	out->files = k->n_files;
	out->inflated = k->d.inflated;
	out->restarts = k->d.restarts;
	out->loads = k->d.loads;
	if (err)
		out->n = 0;
	return err;
}

const char *sfb_lines_err_name(int err)
{
	static const char *const names[] = {
		"not-found", "version", "format", "form", "abbrev", "ref", "unit-budget",
		"arange-budget", "die-budget", "depth-budget", "abbrev-budget", "range-budget",
		"program-budget", "file-budget",
	};
	if (err <= SFB_LINES_E_NOT_FOUND && err >= SFB_LINES_E_LAST_)
		return names[SFB_LINES_E_NOT_FOUND - err];
	return sfb_dsec_err_name(err);
}
