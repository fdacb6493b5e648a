/* Async-signal-safe symbolization: PC -> object, function, offsets
 * (docs/DESIGN.md, "Symbols": where names come from, in which order).
 *
 * This runs in signal handlers, often while the process is crashing, so it
 * uses no malloc, no stdio, no locks, and no static mutable state but the
 * debug directory a constructor publishes once; the only other memory is
 * the caller's scratch buffer and the stack.  File contents are untrusted:
 * every offset and size is bounds-checked and the work is capped.
 * In-memory tables are checked against the object's loaded segments,
 * because a crashing process may have corrupted them. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backtrace.h"
#include "base/bytes.h"
#include "objects/discover.h"
#include "objects/elf_phdrs.h"
#include "base/entry.h"
#include "base/textbuf.h"

/* Scratch layout: [path | name | work].  The work area is reused for the
 * formatted line once the lookup is done, so it must hold one. */
#define PATH_CAP 1024
#define NAME_CAP 1024
#define WORK_OFF (PATH_CAP + NAME_CAP)
#define LINE_CAP (PATH_CAP + NAME_CAP + 128)
_Static_assert(WORK_OFF + LINE_CAP <= SFRAME_SYMBOLIZE_SCRATCH, "scratch");

#define MAX_SEGS 16
#define MAX_DYN 1024         /* dynamic entries scanned */
#define MAX_SECTIONS 65536   /* section headers scanned */
#define MAX_SYMS (1u << 22)  /* symbols scanned per table (~100 MB .symtab) */

#ifdef __s390x__
typedef uint64_t hash_word; /* s390x's SysV .hash has 64-bit words */
#else
typedef uint32_t hash_word;
#endif

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define HOST_DATA ELFDATA2LSB
#else
#define HOST_DATA ELFDATA2MSB
#endif

struct seg {
	uint64_t lo, hi; /* link-time addresses */
	uint32_t flags;  /* PF_R, PF_X */
};

struct obj {
	uintptr_t bias, start, end;
	const Elf64_Dyn *dyn;
	const char *name;             /* l_name: "" for the main program */
	const unsigned char *ehdr;    /* ELF header in memory, or NULL */
	struct seg seg[MAX_SEGS];
	int nseg;
};

/* Where a symbol table's names are: in memory or in the open file. */
struct strtab {
	const char *mem;
	int fd;
	uint64_t off, size;
};

/* The best symbol for one target offset.  floor is the highest start of
 * any code symbol at or below the target: a symbol without a size claims
 * addresses only up to the next symbol, so it names the target only if
 * it starts at floor. */
struct best {
	int found, contains, bind, rank; /* rank < 0: not computed yet */
	uint64_t value, floor;
	uint32_t name;
	struct strtab tab;
};

static int find_object(uintptr_t pc, struct obj *o)
{
	struct sfb_found r;
	if (sfb_discover((void *)pc, &r) != 0)
		return 0;
	o->bias = sfb_found_bias(&r);
	o->start = (uintptr_t)r.dlfo_map_start;
	o->end = (uintptr_t)r.dlfo_map_end;
	o->dyn = sfb_found_dyn(&r);
	o->name = sfb_found_name(&r);
	return o->start < o->end;
}

/* Is [addr, addr+len) inside one readable loaded segment?  The object's
 * span is not enough: glibc leaves PROT_NONE holes between segments. */
static int mem_ok(const struct obj *o, uintptr_t addr, uint64_t len)
{
	uint64_t a = addr - o->bias;
	for (int i = 0; i < o->nseg; i++) {
		const struct seg *s = &o->seg[i];
		if ((s->flags & PF_R) && a >= s->lo && a <= s->hi &&
		    len <= s->hi - a)
			return 1;
	}
	return 0;
}

static int in_text(const struct obj *o, uint64_t v)
{
	for (int i = 0; i < o->nseg; i++)
		if ((o->seg[i].flags & PF_X) && v >= o->seg[i].lo &&
		    v < o->seg[i].hi)
			return 1;
	return 0;
}

/* Learn the loaded segments from the program headers in memory.  They are
 * trusted only inside the first page, which is mapped because it holds
 * the ELF header.  Without them, fall back to the whole span, unexecutable
 * so that untyped symbols are ignored. */
static void load_segments(struct obj *o)
{
	unsigned n = 0;
	const Elf64_Phdr *phdrs = sfb_loaded_phdrs(o->start, o->end, &n);
	o->nseg = 0;
	o->ehdr = phdrs ? (const unsigned char *)o->start : NULL;
	for (unsigned i = 0; phdrs && i < n && o->nseg < MAX_SEGS; i++) {
		Elf64_Phdr ph;
		memcpy(&ph, &phdrs[i], sizeof ph);
		uint64_t lo = ph.p_vaddr, hi = lo + ph.p_memsz;
		if (ph.p_type != PT_LOAD || hi < lo || lo + o->bias < o->start ||
		    hi + o->bias > o->end)
			continue;
		o->seg[o->nseg++] = (struct seg){ lo, hi, ph.p_flags };
	}
	if (o->nseg == 0)
		o->seg[o->nseg++] = (struct seg){ o->start - o->bias,
						  o->end - o->bias, PF_R };
}

/* Reads up to n bytes of name `name`; returns how many. */
static size_t name_bytes(const struct strtab *t, uint32_t name, char *buf,
			 size_t n)
{
	if (name >= t->size)
		return 0;
	if (n > t->size - name)
		n = t->size - name;
	if (t->mem) {
		memcpy(buf, t->mem + name, n);
		return n;
	}
	ssize_t r = pread(t->fd, buf, n, (off_t)(t->off + name));
	return r > 0 ? (size_t)r : 0;
}

/* Among aliases at one address prefer the public spelling: global over
 * local, then fewer leading underscores (getpid over __getpid). */
static int rank(const struct strtab *t, uint32_t name, int bind)
{
	char p[3];
	size_t n = name_bytes(t, name, p, sizeof p), u = 0;
	while (u < n && p[u] == '_')
		u++;
	return (bind != STB_LOCAL) * 4 + 3 - (int)u;
}

static int is_code(const struct obj *o, const Elf64_Sym *s)
{
	int type = ELF64_ST_TYPE(s->st_info);
	if (s->st_shndx == SHN_UNDEF || s->st_name == 0)
		return 0;
	if (type == STT_FUNC || type == STT_GNU_IFUNC)
		return 1;
	/* Untyped symbols are mostly data, labels and (on AArch64) local
	 * "$x" mapping symbols: keep only global ones in code. */
	return type == STT_NOTYPE && ELF64_ST_BIND(s->st_info) != STB_LOCAL &&
	       s->st_shndx != SHN_ABS && in_text(o, s->st_value);
}

/* Best: one whose [value, value+size) holds the target, else one
 * without a size starting at the floor; aliases are ordered by rank().  A
 * symbol's size bounds it, and one without a size ends where the next
 * symbol starts: an address past a function's end (after a call to a
 * noreturn function, or in the padding) that no symbol covers gets no
 * name, as "??" plus the object offset serves better than a wrong one. */
static void consider(struct best *b, const struct obj *o, const Elf64_Sym *s,
		     const struct strtab *t, uint64_t target)
{
	if (s->st_value > target || !is_code(o, s))
		return;
	if (s->st_value > b->floor)
		b->floor = s->st_value;
	int contains = target - s->st_value < s->st_size;
	if (!contains && s->st_size)
		return;
	int bind = ELF64_ST_BIND(s->st_info), r = -1;
	if (b->found) {
		if (contains != b->contains) {
			if (!contains)
				return;
		} else if (s->st_value != b->value) {
			if (s->st_value < b->value)
				return;
		} else {
			if (b->rank < 0)
				b->rank = rank(&b->tab, b->name, b->bind);
			r = rank(t, s->st_name, bind);
			if (r <= b->rank)
				return;
		}
	}
	*b = (struct best){ 1, contains, bind, r, s->st_value, b->floor, s->st_name, *t };
}

/* Does b name its target: a sized symbol holding it, or one without a
 * size that no other symbol follows below the target? */
static int names_target(const struct best *b)
{
	return b->found && (b->contains || b->value == b->floor);
}

/* Every symbol goes to the lookup of each target. */
struct targets {
	uint64_t at[2];
	struct best best[2];
	int n;
};

static void consider_all(struct targets *ts, const struct obj *o, const Elf64_Sym *s,
			 const struct strtab *t)
{
	for (int i = 0; i < ts->n; i++)
		consider(&ts->best[i], o, s, t, ts->at[i]);
}

/* glibc relocates most d_ptr values in place, but not e.g. the vDSO's. */
static uintptr_t dyn_ptr(const struct obj *o, uint64_t v)
{
	return v >= o->start && v < o->end ? v : v + o->bias;
}

static uint32_t load32(uintptr_t p)
{
	uint32_t v;
	memcpy(&v, (const void *)p, 4);
	return v;
}

/* .dynsym has no size of its own: the hash table says how many symbols. */
static uint64_t dynsym_count(const struct obj *o, uintptr_t hash,
			     uintptr_t gnu)
{
	if (hash) { /* nchain, the second word */
		hash_word nchain;
		if (!mem_ok(o, hash, 2 * sizeof nchain))
			return 0;
		memcpy(&nchain, (const void *)(hash + sizeof nchain), sizeof nchain);
		return nchain;
	}
	if (!gnu || !mem_ok(o, gnu, 16))
		return 0;
	uint64_t nbuckets = load32(gnu), symoff = load32(gnu + 4);
	uintptr_t buckets = gnu + 16 + (uint64_t)load32(gnu + 8) * 8;
	if (buckets < gnu || !mem_ok(o, buckets, nbuckets * 4))
		return 0;
	uint64_t last = 0;
	for (uint64_t i = 0; i < nbuckets; i++)
		if (load32(buckets + i * 4) > last)
			last = load32(buckets + i * 4);
	if (last < symoff)
		return symoff;
	/* Walk the last chain to its end bit. */
	uintptr_t chain = buckets + nbuckets * 4 + (last - symoff) * 4;
	for (uint64_t n = 0; n < MAX_SYMS; n++, chain += 4) {
		if (!mem_ok(o, chain, 4))
			return 0;
		if (load32(chain) & 1)
			return last + n + 1;
	}
	return 0;
}

static void scan_dynsym(const struct obj *o, struct targets *ts)
{
	uintptr_t symtab = 0, hash = 0, gnu = 0;
	struct strtab t = { NULL, -1, 0, 0 };
	const Elf64_Dyn *d = o->dyn;
	for (int i = 0;; i++, d++) {
		if (i == MAX_DYN || !mem_ok(o, (uintptr_t)d, sizeof *d))
			return;
		if (d->d_tag == DT_NULL)
			break;
		if (d->d_tag == DT_SYMTAB)
			symtab = dyn_ptr(o, d->d_un.d_ptr);
		else if (d->d_tag == DT_STRTAB)
			t.mem = (const char *)dyn_ptr(o, d->d_un.d_ptr);
		else if (d->d_tag == DT_STRSZ)
			t.size = d->d_un.d_val;
		else if (d->d_tag == DT_HASH)
			hash = dyn_ptr(o, d->d_un.d_ptr);
		else if (d->d_tag == DT_GNU_HASH)
			gnu = dyn_ptr(o, d->d_un.d_ptr);
		else if (d->d_tag == DT_SYMENT &&
			 d->d_un.d_val != sizeof(Elf64_Sym))
			return;
	}
	uint64_t n = dynsym_count(o, hash, gnu);
	if (n > MAX_SYMS)
		n = MAX_SYMS;
	if (!symtab || symtab % 8 || !t.mem ||
	    !mem_ok(o, (uintptr_t)t.mem, t.size) ||
	    !mem_ok(o, symtab, n * sizeof(Elf64_Sym)))
		return;
	for (uint64_t i = 0; i < n; i++)
		consider_all(ts, o, (const Elf64_Sym *)symtab + i, &t);
}

static int read_shdr(int fd, const Elf64_Ehdr *eh, uint64_t i, Elf64_Shdr *sh)
{
	return pread(fd, sh, sizeof *sh, (off_t)(eh->e_shoff + i * sizeof *sh)) ==
	       (ssize_t)sizeof *sh;
}

/* The file's ELF header, if it is one this host can read, and its number
 * of section headers (capped). */
static int read_ehdr(int fd, Elf64_Ehdr *eh, uint64_t *shnum)
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
static uint64_t find_section(int fd, const Elf64_Ehdr *eh, uint64_t shnum,
			     uint64_t from, uint32_t type, Elf64_Shdr *sh,
			     char *work, size_t wsize)
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
static int scan_symtab(const struct obj *o, int fd, const Elf64_Ehdr *eh,
		       uint64_t shnum, struct targets *ts, char *work, size_t wsize)
{
	Elf64_Shdr sh, str;
	if (!find_section(fd, eh, shnum, 1, SHT_SYMTAB, &sh, work, wsize))
		return 0;
	if (sh.sh_entsize != sizeof(Elf64_Sym) || sh.sh_link >= shnum ||
	    !read_shdr(fd, eh, sh.sh_link, &str) || str.sh_type != SHT_STRTAB ||
	    str.sh_offset > INT64_MAX - str.sh_size ||
	    sh.sh_offset > INT64_MAX - sh.sh_size)
		return 1;

	struct strtab t = { NULL, fd, str.sh_offset, str.sh_size };
	uint64_t n = sh.sh_size / sizeof(Elf64_Sym);
	uint64_t per = wsize / sizeof(Elf64_Sym);
	if (n > MAX_SYMS)
		n = MAX_SYMS;
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
			consider_all(ts, o, &s, &t);
		}
	}
	return 1;
}

static int open_object(const struct obj *o)
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
#define MAX_BUILD_ID 64
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

/* The object's build-id, copied out of its first page; its length, or 0. */
static uint32_t loaded_build_id(const struct obj *o, uint8_t id[MAX_BUILD_ID])
{
	unsigned n;
	uint16_t off;
	uint32_t len;
	const Elf64_Phdr *ph = o->ehdr ? sfb_loaded_phdrs(o->start, o->end, &n) : NULL;
	if (!ph || !sfb_loaded_build_id(o->start, o->bias, ph, n, &off, &len) ||
	    len > MAX_BUILD_ID)
		return 0;
	memcpy(id, (const void *)(o->start + off), len);
	return len;
}

static int open_debug_file(const uint8_t *id, uint32_t len)
{
	static const char hex[] = "0123456789abcdef";
	const char *dir = atomic_load_explicit(&debug_dir, memory_order_acquire);
	char path[DEBUG_DIR_CAP + sizeof "/.build-id/xx/" + 2 * MAX_BUILD_ID + sizeof ".debug"];
	struct sfb_text b = { path, 0, sizeof path };
	if (len < 2)
		return -1;
	sfb_put(&b, dir ? dir : "/usr/lib/debug");
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
static int has_build_id(int fd, const Elf64_Ehdr *eh, uint64_t shnum,
			const uint8_t *id, uint32_t len, char *work, size_t wsize)
{
	Elf64_Shdr sh;
	for (uint64_t i = 1; (i = find_section(fd, eh, shnum, i, SHT_NOTE, &sh,
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

/* ---- JIT code: perf maps ------------------------------------------------- */

/* A JIT compiler that supports perf names its code in /tmp/perf-PID.map:
 * lines "START SIZE NAME", START and SIZE in hexadecimal, appended as code
 * is made, so a later line for an address wins.  Read only if it is a
 * regular file of this user and not a link (/tmp is shared), and only its
 * first PERF_MAP_MAX bytes. */
#define PERF_MAP_MAX (64u << 20)

static int open_perf_map(char *path)
{
	struct sfb_text b = { path, 0, PATH_CAP };
	sfb_put(&b, "/tmp/perf-");
	sfb_put_dec(&b, (long)getpid());
	sfb_put(&b, ".map");
	path[b.len] = '\0';
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY | O_NOFOLLOW);
	if (fd >= 0 && (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid())) {
		close(fd);
		fd = -1;
	}
	return fd;
}

static int parse_hex(const char **p, const char *end, uint64_t *v)
{
	const char *s = *p;
	uint64_t x = 0;
	if (end - s > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		s += 2;
	const char *first = s;
	for (; s < end; s++) {
		int d = *s >= '0' && *s <= '9' ? *s - '0'
		      : *s >= 'a' && *s <= 'f' ? *s - 'a' + 10
		      : *s >= 'A' && *s <= 'F' ? *s - 'A' + 10 : -1;
		if (d < 0)
			break;
		if (x >> 60)
			return 0;
		x = x * 16 + (uint64_t)d;
	}
	*p = s;
	*v = x;
	return s > first;
}

/* One line [p, end), without its newline: if it names a range holding
 * pc, its name (truncated) goes to name and its start to *start. */
static int perf_map_line(const char *p, const char *end, uint64_t pc, char *name,
			 uint64_t *start)
{
	uint64_t a, n;
	if (!parse_hex(&p, end, &a) || p == end || *p++ != ' ' ||
	    !parse_hex(&p, end, &n) || p == end || *p++ != ' ' || a + n < a ||
	    pc - a >= n || p == end)
		return 0;
	size_t len = (size_t)(end - p) < NAME_CAP - 1 ? (size_t)(end - p) : NAME_CAP - 1;
	memcpy(name, p, len);
	name[len] = '\0';
	*start = a;
	return 1;
}

/* The last line of the map whose range holds pc: 1 and its name and start,
 * or 0.  Read in pieces of the work area; a line longer than that is
 * skipped. */
static int perf_map_lookup(int fd, uint64_t pc, char *name, uint64_t *start, char *work,
			   size_t wsize)
{
	int found = 0, skipping = 0;
	for (uint64_t off = 0; off < PERF_MAP_MAX;) {
		ssize_t got = pread(fd, work, wsize, (off_t)off);
		if (got <= 0)
			break;
		const char *p = work, *end = work + got, *last = memrchr(work, '\n', (size_t)got);
		if (!last) {
			/* The unterminated last line, or a piece of a long one. */
			if ((size_t)got < wsize && !skipping)
				found |= perf_map_line(p, end, pc, name, start);
			skipping = 1;
			off += (uint64_t)got;
			continue;
		}
		while (p <= last) {
			const char *nl = memchr(p, '\n', (size_t)(last - p) + 1);
			if (!skipping)
				found |= perf_map_line(p, nl, pc, name, start);
			skipping = 0;
			p = nl + 1;
		}
		off += (uint64_t)(last + 1 - work);
	}
	return found;
}

/* A PC in no loaded object: JIT code, named by the perf map if any. */
static int symbolize_jit(uintptr_t pc, struct sframe_symbol *out, char *scratch, size_t size)
{
	char *path = scratch, *name = scratch + PATH_CAP;
	uint64_t start;
	int fd = open_perf_map(path);
	if (fd < 0)
		return 0;
	int found = perf_map_lookup(fd, pc, name, &start, scratch + WORK_OFF, size - WORK_OFF);
	close(fd);
	if (!found || !name[0])
		return 0;
	out->object = path;
	out->object_base = 0;
	out->object_offset = pc;
	out->name = name;
	out->name_offset = pc - start;
	return 1;
}

/* The name of pc, or, for a return address (return_address != 0), of the
 * call before it: pc - 1 first, since a call to a noreturn function may
 * end its function and leave pc past the end; then pc itself, which a
 * signal handler's return address (the sigreturn trampoline's first
 * instruction) needs.  Offsets are pc's either way.  One pass over each
 * symbol table serves both targets. */
static int symbolize(uintptr_t pc, int return_address, struct sframe_symbol *out,
		     char *scratch, size_t size)
{
	struct obj o;
	char *path = scratch, *name = scratch + PATH_CAP;
	char *work = scratch + WORK_OFF;
	size_t wsize = size - WORK_OFF;
	uintptr_t adj = return_address && pc ? 1 : 0;
	if (!find_object(pc - adj, &o)) {
		if (!symbolize_jit(pc - adj, out, scratch, size))
			return 0;
		out->object_offset += adj;
		out->name_offset += adj;
		return 1;
	}

	size_t n = 0;
	if (o.name[0]) {
		while (n < PATH_CAP - 1 && o.name[n])
			n++;
		memcpy(path, o.name, n);
	} else {
		ssize_t r = readlink("/proc/self/exe", path, PATH_CAP - 1);
		n = r > 0 ? (size_t)r : 0;
	}
	path[n] = '\0';
	out->object = path;
	out->object_base = o.bias;
	out->object_offset = pc - o.bias;

	struct targets ts = { { pc - adj - o.bias, pc - o.bias }, { { 0 }, { 0 } }, adj ? 2 : 1 };
	uint64_t shnum;
	Elf64_Ehdr eh;
	load_segments(&o);
	scan_dynsym(&o, &ts);
	/* The path may now name another file (a package upgrade replaced
	 * it): use its symbols only if its header is the loaded one. */
	int fd = open_object(&o), dfd = -1, had_symtab = 0;
	if (fd >= 0 && read_ehdr(fd, &eh, &shnum) &&
	    (!o.ehdr || memcmp(o.ehdr, &eh, sizeof eh) == 0))
		had_symtab = scan_symtab(&o, fd, &eh, shnum, &ts, work, wsize);
	uint8_t id[MAX_BUILD_ID];
	uint32_t idlen = had_symtab ? 0 : loaded_build_id(&o, id);
	if (idlen && (dfd = open_debug_file(id, idlen)) >= 0 &&
	    read_ehdr(dfd, &eh, &shnum) &&
	    has_build_id(dfd, &eh, shnum, id, idlen, work, wsize))
		scan_symtab(&o, dfd, &eh, shnum, &ts, work, wsize);
	const struct best *b = &ts.best[0];
	if (!names_target(b) && ts.n > 1)
		b = &ts.best[1];
	n = names_target(b) ? name_bytes(&b->tab, b->name, name, NAME_CAP - 1) : 0;
	if (fd >= 0)
		close(fd);
	if (dfd >= 0)
		close(dfd);
	name[n] = '\0'; /* truncates; an embedded NUL ends it earlier */
	if (!name[0])
		return 0;
	out->name = name;
	out->name_offset = pc - o.bias - b->value;
	return 1;
}

SFRAMEBT_API int sframe_symbolize(uintptr_t pc, struct sframe_symbol *out,
				  char *scratch, size_t scratch_size)
{
	SFB_ENTRY;
	if (!out)
		return 0;
	*out = (struct sframe_symbol){ "", 0, 0, "", 0 };
	if (!scratch || scratch_size < SFRAME_SYMBOLIZE_SCRATCH)
		return 0;
	return symbolize(pc, 0, out, scratch, scratch_size);
}

/* ---- Formatting ---------------------------------------------------------- */

/* Formats into line and returns the length.  line may be scratch's work
 * area (from WORK_OFF on): the lookup is over before the line is built. */
static size_t format(int index, uintptr_t pc, int return_address, char *line,
		     size_t cap, char *scratch)
{
	struct sframe_symbol s = { "", 0, 0, "", 0 };
	struct sfb_text b = { line, 0, cap };
	symbolize(pc, return_address, &s, scratch, SFRAME_SYMBOLIZE_SCRATCH);
	sfb_put(&b, "#");
	sfb_put_dec(&b, index);
	sfb_put(&b, " ");
	sfb_put_hex(&b, pc);
	sfb_put(&b, " in ");
	if (s.name[0]) {
		sfb_put(&b, s.name);
		sfb_put(&b, "+");
		sfb_put_hex(&b, s.name_offset);
	} else {
		sfb_put(&b, "??");
	}
	sfb_put(&b, " (");
	if (s.object[0]) {
		sfb_put(&b, s.object);
		sfb_put(&b, "+");
		sfb_put_hex(&b, s.object_offset);
	} else {
		sfb_put(&b, "??");
	}
	sfb_put(&b, ")");
	if (cap)
		line[b.len] = '\0';
	return b.len;
}

SFRAMEBT_API int sframe_format_frame(int index, uintptr_t pc,
				     int return_address, char *line,
				     size_t line_size)
{
	SFB_ENTRY;
	char scratch[SFRAME_SYMBOLIZE_SCRATCH];
	return line ? (int)format(index, pc, return_address, line, line_size, scratch) : 0;
}

/* One write per line keeps lines whole when several threads report. */
static void write_frame(int fd, int index, uintptr_t pc, int return_address,
			char *scratch)
{
	char *line = scratch + WORK_OFF;
	size_t n = format(index, pc, return_address, line, LINE_CAP - 1,
			  scratch);
	line[n++] = '\n';
	sfb_write_all(fd, line, n);
}

SFRAMEBT_API void sframe_backtrace_symbols_fd(void *const *buf, int n, int fd)
{
	SFB_ENTRY;
	char scratch[SFRAME_SYMBOLIZE_SCRATCH];
	for (int i = 0; buf && i < n; i++)
		write_frame(fd, i, (uintptr_t)buf[i], i > 0, scratch);
}

SFRAMEBT_API int sframe_write_crash_report(const void *ucontext, int fd)
{
	SFB_ENTRY;
	struct sframe_bt_frame frames[128];
	struct sframe_bt_status st = { 0 };
	char scratch[SFRAME_SYMBOLIZE_SCRATCH];
	int n = sframe_backtrace_ex(ucontext, frames, 128, 0, &st);
	if (n < 0)
		n = 0;
	/* Without a context the walk starts here, in this function: the
	 * report starts at our caller. */
	int first = !ucontext && n > 0, i;
	for (i = first; i < n; i++)
		write_frame(fd, i - first, frames[i].pc, !frames[i].exact,
			    scratch);

	const char *why = sframe_bt_stop_name(st.stop);
	struct sfb_text b = { scratch + WORK_OFF, 0, LINE_CAP - 1 };
	sfb_put(&b, "# stopped: ");
	sfb_put(&b, why ? why : "?");
	if (st.stop_pc) {
		sfb_put(&b, " at ");
		sfb_put_hex(&b, st.stop_pc);
	}
	b.p[b.len++] = '\n';
	sfb_write_all(fd, b.p, b.len);
	return n - first;
}
