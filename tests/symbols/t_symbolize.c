/* Symbolizer tests: every answer is checked against ground truth from the
 * program itself (function addresses), dladdr() and dl_iterate_phdr(). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "backtrace.h"
#include "check.h"

#define SCRATCH SFRAME_SYMBOLIZE_SCRATCH

static volatile int sink;

__attribute__((noinline)) static int local_fn(int x)
{
	for (int i = 0; i < x; i++)
		sink += i * x;
	return sink;
}

static uintptr_t captured_ra;

__attribute__((noinline)) static void capture(void)
{
	captured_ra = (uintptr_t)__builtin_return_address(0);
}

__attribute__((noinline)) static int calls_capture(void)
{
	capture();
	return ++sink;
}

/* Symbols as hand-written assembly leaves them: a function without .size,
 * a global label without .type, and a local label (ignored: on AArch64
 * such labels are the "$x" mapping symbols). */
__asm__(".text\n.p2align 4\n"
	".globl sfb_t_nosize\n.type sfb_t_nosize, %function\n"
	"sfb_t_nosize:\n.skip 16\n"
	".globl sfb_t_notype\nsfb_t_notype:\n.skip 16\n"
	"sfb_t_local_label:\n.skip 16\n");
extern char sfb_t_nosize[], sfb_t_notype[];

/* Ends: a function without a size, a sized one after it followed by a
 * gap no symbol covers, then a function starting right after the gap. */
__asm__(".text\n.p2align 4\n"
	".globl sfb_t_before\n.type sfb_t_before, %function\n"
	"sfb_t_before:\n.skip 16\n"
	".globl sfb_t_sized\n.type sfb_t_sized, %function\n"
	"sfb_t_sized:\n.skip 8\n.size sfb_t_sized, 8\n.skip 8\n"
	".globl sfb_t_after\n.type sfb_t_after, %function\n"
	"sfb_t_after:\n.skip 16\n.size sfb_t_after, 16\n");
extern char sfb_t_before[], sfb_t_sized[], sfb_t_after[];

/* Through volatile pointers, so the compiler cannot clone or fold them. */
static int (*volatile local_fn_p)(int) = local_fn;
static int (*volatile calls_capture_p)(void) = calls_capture;

static char exe[PATH_MAX];
static char helper_path[PATH_MAX];

/* Load bias and name of the object containing pc, per dl_iterate_phdr. */
struct phdr_q {
	uintptr_t pc, bias;
	int found;
};

static int phdr_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	struct phdr_q *q = data;
	(void)size;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
		if (ph->p_type == PT_LOAD && q->pc >= lo && q->pc < lo + ph->p_memsz) {
			q->bias = info->dlpi_addr;
			q->found = 1;
			return 1;
		}
	}
	return 0;
}

static uintptr_t bias_of(uintptr_t pc)
{
	struct phdr_q q = { pc, 0, 0 };
	dl_iterate_phdr(phdr_cb, &q);
	return q.found ? q.bias : (uintptr_t)-1;
}

static int sym(uintptr_t pc, struct sframe_symbol *s)
{
	static char scratch[SCRATCH];
	return sframe_symbolize(pc, s, scratch, sizeof scratch);
}

static char *read_file(const char *path, size_t *len)
{
	int fd = open(path, O_RDONLY);
	size_t cap = 1 << 16, n = 0;
	char *p = malloc(cap);
	ssize_t r;
	if (fd < 0 || !p)
		return NULL;
	while ((r = read(fd, p + n, cap - n)) > 0) {
		n += (size_t)r;
		if (n == cap)
			p = realloc(p, cap *= 2);
	}
	close(fd);
	*len = n;
	return p;
}

static int write_file(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t r = write(fd, p, n);
		if (r <= 0)
			return -1;
		p += r;
		n -= (size_t)r;
	}
	return 0;
}

/* A private copy of the helper object at a fresh path; returns the fd. */
static int copy_helper(char *path)
{
	size_t n;
	char *data = read_file(helper_path, &n);
	strcpy(path, "/tmp/sfb_symbolize_XXXXXX");
	int fd = mkstemp(path);
	if (fd < 0 || !data || write_file(fd, data, n) != 0)
		return -1;
	free(data);
	return fd;
}

static void find_paths(void)
{
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	exe[n > 0 ? n : 0] = '\0';
	const char *b = getenv("SFB_BUILD");
	char *slash = strrchr(exe, '/');
	snprintf(helper_path, sizeof helper_path, "%.*s/libsfb_symbolize_helper.so",
		 slash ? (int)(slash - exe) : 1, slash ? exe : ".");
	if (access(helper_path, R_OK) != 0 && b)
		snprintf(helper_path, sizeof helper_path,
			 "%s/tests/libsfb_symbolize_helper.so", b);
}

/* The symbol found for pc agrees with dladdr (dynsym only): same start,
 * and the same name or an alias of it. */
static int agrees_with_dladdr(uintptr_t pc, const struct sframe_symbol *s,
			      void *handle)
{
	Dl_info di;
	if (!dladdr((void *)pc, &di) || !di.dli_sname || !di.dli_saddr)
		return 0;
	if (strcmp(s->object, di.dli_fname) != 0 ||
	    s->object_base != (uintptr_t)di.dli_fbase ||
	    s->object_offset != pc - (uintptr_t)di.dli_fbase ||
	    pc - s->name_offset != (uintptr_t)di.dli_saddr)
		return 0;
	return strcmp(s->name, di.dli_sname) == 0 ||
	       dlsym(handle, s->name) == di.dli_saddr;
}

static void test_main_program(void)
{
	struct sframe_symbol s;
	uintptr_t f = (uintptr_t)local_fn_p, bias = bias_of(f);

	CHECK(sym(f, &s) == 1 && strcmp(s.name, "local_fn") == 0 &&
	      s.name_offset == 0, "static function at +0: %s+%#lx", s.name,
	      (unsigned long)s.name_offset);
	CHECK(sym(f + 5, &s) == 1 && strcmp(s.name, "local_fn") == 0 &&
	      s.name_offset == 5, "static function at +5: %s+%#lx", s.name,
	      (unsigned long)s.name_offset);
	CHECK(strcmp(s.object, exe) == 0, "main object path %s", s.object);
	CHECK(s.object_base == bias && s.object_offset == f + 5 - bias,
	      "main object base %#lx (dl_iterate_phdr %#lx)",
	      (unsigned long)s.object_base, (unsigned long)bias);

	uintptr_t ns = (uintptr_t)sfb_t_nosize, nt = (uintptr_t)sfb_t_notype;
	CHECK(sym(ns + 3, &s) == 1 && strcmp(s.name, "sfb_t_nosize") == 0 &&
	      s.name_offset == 3, "function without size: %s+%#lx", s.name,
	      (unsigned long)s.name_offset);
	CHECK(sym(nt + 2, &s) == 1 && strcmp(s.name, "sfb_t_notype") == 0 &&
	      s.name_offset == 2, "global untyped label: %s+%#lx", s.name,
	      (unsigned long)s.name_offset);
	CHECK(sym(nt + 20, &s) == 1 && strcmp(s.name, "sfb_t_notype") == 0 &&
	      s.name_offset == 20, "local label ignored: %s+%#lx", s.name,
	      (unsigned long)s.name_offset);

	/* A size bounds its symbol; one without a size ends at the next. */
	uintptr_t sz = (uintptr_t)sfb_t_sized, af = (uintptr_t)sfb_t_after;
	CHECK(sym((uintptr_t)sfb_t_before + 15, &s) == 1 &&
	      strcmp(s.name, "sfb_t_before") == 0 && s.name_offset == 15,
	      "no size, up to the next symbol: %s+%#lx", s.name,
	      (unsigned long)s.name_offset);
	CHECK(sym(sz + 7, &s) == 1 && strcmp(s.name, "sfb_t_sized") == 0,
	      "sized, last byte: %s", s.name);
	CHECK(sym(sz + 8, &s) == 0 && !s.name[0] && sym(sz + 15, &s) == 0 &&
	      s.object_offset == sz + 15 - bias,
	      "past a sized function, no symbol without a size claims it: \"%s\"", s.name);
	char l[PATH_MAX + 256], w[PATH_MAX + 256];
	sframe_format_frame(2, sz + 8, 1, l, sizeof l);
	snprintf(w, sizeof w, "#2 %#lx in sfb_t_sized+0x8 (%s+%#lx)",
		 (unsigned long)(sz + 8), exe, (unsigned long)(sz + 8 - bias));
	CHECK(strcmp(l, w) == 0, "return address at a function's end names the call: %s", l);
	sframe_format_frame(2, sz + 8, 0, l, sizeof l);
	snprintf(w, sizeof w, "#2 %#lx in ?? (%s+%#lx)",
		 (unsigned long)(sz + 8), exe, (unsigned long)(sz + 8 - bias));
	CHECK(strcmp(l, w) == 0, "exact PC at a function's end: no name: %s", l);
	sframe_format_frame(2, af, 1, l, sizeof l);
	snprintf(w, sizeof w, "#2 %#lx in sfb_t_after+0x0 (%s+%#lx)",
		 (unsigned long)af, exe, (unsigned long)(af - bias));
	CHECK(strcmp(l, w) == 0,
	      "return address whose call no symbol covers: named at itself: %s", l);

	calls_capture_p();
	uintptr_t ra = captured_ra, c = (uintptr_t)calls_capture_p;
	CHECK(sym(ra - 1, &s) == 1 &&
	      strncmp(s.name, "calls_capture", 13) == 0 &&
	      s.name_offset == ra - 1 - c,
	      "return address in calls_capture: %s+%#lx", s.name,
	      (unsigned long)s.name_offset);
}

static void test_helper(void *h)
{
	struct sframe_symbol s;
	uintptr_t e = (uintptr_t)dlsym(h, "sfb_helper_exported");
	void *(*get_static)(void) = (void *(*)(void))dlsym(h, "sfb_helper_static_addr");
	uintptr_t st = get_static ? (uintptr_t)get_static() : 0;
	Dl_info di;

	CHECK(e && sym(e, &s) == 1 && strcmp(s.name, "sfb_helper_exported") == 0 &&
	      s.name_offset == 0 && agrees_with_dladdr(e, &s, h),
	      "exported .so function at +0: %s (%s)", s.name, s.object);
	CHECK(e && sym(e + 3, &s) == 1 && s.name_offset == 3 &&
	      agrees_with_dladdr(e + 3, &s, h), "exported .so function at +3");
	CHECK(strcmp(s.object, helper_path) == 0 &&
	      s.object_base == bias_of(e), "helper path and base: %s", s.object);
	CHECK(st && sym(st + 2, &s) == 1 && strcmp(s.name, "helper_static") == 0 &&
	      s.name_offset == 2, "static .so function from .symtab: %s+%#lx",
	      s.name, (unsigned long)s.name_offset);
	CHECK(dladdr((void *)(st + 2), &di) &&
	      (!di.dli_sname || strcmp(di.dli_sname, "helper_static") != 0),
	      "(dladdr cannot name it: %s)", di.dli_sname ? di.dli_sname : "NULL");
}

static void test_libc(void)
{
	static const char *const fns[] = { "getpid", "abort", "qsort", "fopen",
					   "malloc", "exit", "pthread_create",
					   "dlopen", "write", "open" };
	void *libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
	int ok = 0, n = 0;
	for (size_t i = 0; i < sizeof fns / sizeof *fns; i++) {
		uintptr_t a = libc ? (uintptr_t)dlsym(libc, fns[i]) : 0;
		for (int k = 0; a && k < 2; k++, n++) {
			struct sframe_symbol s;
			int r = sym(a + k, &s);
			if (r == 1 && agrees_with_dladdr(a + k, &s, libc))
				ok++;
			else
				printf("# %s+%d -> %s+%#lx (%s)\n", fns[i], k,
				       s.name, (unsigned long)s.name_offset,
				       s.object);
		}
	}
	CHECK(n > 0 && ok == n, "libc functions agree with dladdr (%d/%d)", ok, n);
	if (libc)
		dlclose(libc);
}

static void test_vdso(void)
{
	void *h = dlopen("linux-vdso.so.1", RTLD_LAZY | RTLD_NOLOAD);
	const char *name = "__vdso_clock_gettime";
#if defined(__aarch64__) || defined(__s390x__)
	name = "__kernel_clock_gettime";
#endif
	uintptr_t a = h ? (uintptr_t)dlsym(h, name) : 0;
	struct sframe_symbol s;
	if (!a) {
		printf("ok - vDSO not available (skipped)\n");
		return;
	}
	CHECK(sym(a, &s) == 1 && s.name_offset == 0 &&
	      dlsym(h, s.name) == (void *)a && strcmp(s.object, "linux-vdso.so.1") == 0,
	      "vDSO (unrelocated dynamic section): %s in %s", s.name, s.object);
	dlclose(h);
}

/* Deleted and replaced files: names only from the in-memory .dynsym. */
static void test_deleted_and_replaced(void)
{
	char path[64], line[512];
	struct sframe_symbol s;
	int fd = copy_helper(path);
	void *h = fd >= 0 ? dlopen(path, RTLD_NOW | RTLD_LOCAL) : NULL;
	if (fd >= 0)
		close(fd);
	unlink(path);
	CHECK(h != NULL, "dlopen copy %s", path);
	if (!h)
		return;
	uintptr_t e = (uintptr_t)dlsym(h, "sfb_helper_exported");
	void *(*get_static)(void) = (void *(*)(void))dlsym(h, "sfb_helper_static_addr");
	uintptr_t st = (uintptr_t)get_static();
	errno = 4242;
	CHECK(sym(e + 1, &s) == 1 && strcmp(s.name, "sfb_helper_exported") == 0 &&
	      s.name_offset == 1 && strcmp(s.object, path) == 0 &&
	      s.object_base == bias_of(e) && errno == 4242,
	      "deleted file: exported name from .dynsym (DT_HASH), errno kept");
	int r = sym(st, &s);
	CHECK(s.object_offset == st - bias_of(st) && strcmp(s.object, path) == 0 &&
	      (r == 0 || dlsym(h, s.name) != NULL),
	      "deleted file: static function gives object+offset (%s)",
	      r ? s.name : "no name");
	CHECK(sframe_format_frame(0, st, 0, line, sizeof line) > 0 &&
	      strstr(line, path) != NULL, "deleted file line: %s", line);

	/* Now another file renamed over the path, as a package upgrade
	 * does: its .symtab must not be used. */
	fd = copy_helper(path);
	h = fd >= 0 ? dlopen(path, RTLD_NOW | RTLD_LOCAL) : NULL;
	size_t n;
	char *other = read_file(exe, &n), tmp[64];
	if (fd >= 0)
		close(fd);
	strcpy(tmp, "/tmp/sfb_symbolize_XXXXXX");
	fd = mkstemp(tmp);
	CHECK(h && other && fd >= 0 && write_file(fd, other, n) == 0 &&
	      rename(tmp, path) == 0, "replaced %s with another ELF file", path);
	close(fd);
	free(other);
	if (h) {
		get_static = (void *(*)(void))dlsym(h, "sfb_helper_static_addr");
		st = (uintptr_t)get_static();
		r = sym(st, &s);
		CHECK(strcmp(s.object, path) == 0 &&
		      (r == 0 || (strcmp(s.name, "local_fn") != 0 &&
				  dlsym(h, s.name) != NULL)),
		      "replaced file: its .symtab is ignored (%s)",
		      r ? s.name : "no name");
	}
	unlink(path);
}

/* A file whose ELF header matches the loaded object but whose section
 * headers and symbols are garbage: bounded work, no crash, sane output. */
static void test_corrupt_symtab(void)
{
	char path[64], tmp[64];
	size_t n;
	int fd = copy_helper(path);
	void *h = fd >= 0 ? dlopen(path, RTLD_NOW | RTLD_LOCAL) : NULL;
	char *orig = read_file(helper_path, &n), *bad = malloc(n);
	if (fd >= 0)
		close(fd);
	if (!h || !orig || !bad || n < sizeof(ElfW(Ehdr))) {
		CHECK(0, "corrupt-symtab setup");
		return;
	}
	void *(*get_static)(void) = (void *(*)(void))dlsym(h, "sfb_helper_static_addr");
	uintptr_t pcs[2] = { (uintptr_t)get_static(),
			     (uintptr_t)dlsym(h, "sfb_helper_exported") };
	ElfW(Ehdr) eh;
	memcpy(&eh, orig, sizeof eh);
	uint64_t shtab = eh.e_shoff, shlen = (uint64_t)eh.e_shnum * eh.e_shentsize;
	uint64_t symoff = sizeof eh, symlen = n - sizeof eh - 8;
	for (int i = 0; shtab + shlen <= n && i < eh.e_shnum; i++) {
		ElfW(Shdr) sh;
		memcpy(&sh, orig + shtab + i * sizeof sh, sizeof sh);
		if (sh.sh_type == SHT_SYMTAB && sh.sh_offset + sh.sh_size <= n - 8) {
			symoff = sh.sh_offset;
			symlen = sh.sh_size;
		}
	}
	unsigned seed = 12345;
	long named = 0;
	int sane = 1, kept = 1, runs = 0;
	for (int it = 0; it < 300; it++) {
		memcpy(bad, orig, n);
		for (int k = 0; k < 8; k++) {
			seed = seed * 1103515245 + 12345;
			uint64_t r = seed >> 8, at;
			if (k % 4 == 0 && shtab + shlen <= n) /* a section header field */
				at = shtab + (r % (shlen / 8)) * 8;
			else if (k % 4 == 1) /* a symbol */
				at = symoff + r % symlen;
			else
				at = sizeof eh + r % (n - sizeof eh - 8);
			uint64_t v = (r & 3) == 0 ? ~0ull : (r & 3) == 1 ? 1ull << 62 : r * 2654435761u;
			memcpy(bad + at, &v, (r & 4) ? 8 : 1);
		}
		strcpy(tmp, "/tmp/sfb_symbolize_XXXXXX");
		fd = mkstemp(tmp);
		if (fd < 0 || write_file(fd, bad, n) != 0 || rename(tmp, path) != 0)
			break;
		close(fd);
		for (int i = 0; i < 2; i++, runs++) {
			struct sframe_symbol s;
			errno = 4242;
			int got = sym(pcs[i], &s);
			kept &= errno == 4242;
			named += got;
			sane &= strcmp(s.object, path) == 0 &&
				s.object_offset == pcs[i] - bias_of(pcs[i]) &&
				(got == 0 ? !s.name[0] : strlen(s.name) < 1024);
		}
	}
	CHECK(runs == 600 && sane && kept,
	      "300 corrupted .symtab files: sane results, errno kept (%d runs, %ld named)",
	      runs, named);
	unlink(path);
	free(orig);
	free(bad);
}

static void test_memfd(void)
{
	size_t n;
	char *data = read_file(helper_path, &n), path[64], line[256], want[256];
	struct sframe_symbol s;
	int fd = memfd_create("sfb_helper", 0);
	CHECK(fd >= 0 && data && write_file(fd, data, n) == 0, "memfd with helper");
	free(data);
	snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (h) {
		void *(*get_static)(void) = (void *(*)(void))dlsym(h, "sfb_helper_static_addr");
		uintptr_t st = (uintptr_t)get_static();
		CHECK(sym(st + 1, &s) == 1 && strcmp(s.name, "helper_static") == 0 &&
		      s.name_offset == 1 && strcmp(s.object, path) == 0,
		      "memfd-loaded object: %s+%#lx in %s", s.name,
		      (unsigned long)s.name_offset, s.object);
	} else {
		printf("ok - dlopen of memfd not possible (skipped): %s\n", dlerror());
	}

	/* JIT-style code in a memfd mapping that no loader knows about. */
	void *p = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_SHARED, fd, 0);
	CHECK(p != MAP_FAILED, "mmap memfd PROT_EXEC");
	if (p != MAP_FAILED) {
		uintptr_t pc = (uintptr_t)p + 16;
		CHECK(sym(pc, &s) == 0 && !s.object[0] && !s.name[0] &&
		      s.object_base == 0, "memfd mapping: no object, no name");
		sframe_format_frame(4, pc, 1, line, sizeof line);
		snprintf(want, sizeof want, "#4 %#lx in ?? (?\?)", (unsigned long)pc);
		CHECK(strcmp(line, want) == 0, "memfd mapping line: %s", line);
		munmap(p, 4096);
	}
	close(fd);
}

static void test_anonymous(void)
{
	char line[256], want[256];
	struct sframe_symbol s;
	void *p = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uintptr_t pc = (uintptr_t)p + 100;
	errno = 4242;
	CHECK(sym(pc, &s) == 0 && !s.object[0] && !s.name[0] &&
	      s.object_offset == 0 && errno == 4242, "anonymous mapping: nothing known");
	int n = sframe_format_frame(12, pc, 0, line, sizeof line);
	snprintf(want, sizeof want, "#12 %#lx in ?? (?\?)", (unsigned long)pc);
	CHECK(strcmp(line, want) == 0 && n == (int)strlen(want),
	      "anonymous mapping line: %s", line);
	sframe_format_frame(0, 0, 1, line, sizeof line);
	CHECK(strcmp(line, "#0 0x0 in ?? (?\?)") == 0, "pc 0: %s", line);
	sframe_format_frame(-1, ~(uintptr_t)0, 0, line, sizeof line);
	CHECK(strcmp(line, "#-1 0xffffffffffffffff in ?? (?\?)") == 0,
	      "negative index, max pc: %s", line);
	munmap(p, 4096);
}

static void test_scratch_bounds(void)
{
	static unsigned char buf[SCRATCH + 64];
	struct sframe_symbol s;
	uintptr_t f = (uintptr_t)local_fn_p;
	int intact = 1;

	memset(buf, 0xa5, sizeof buf);
	int r1 = sframe_symbolize(f, &s, (char *)buf, 100);
	int r2 = sframe_symbolize(f, &s, (char *)buf, SCRATCH - 1);
	for (size_t i = 0; i < sizeof buf; i++)
		intact &= buf[i] == 0xa5;
	CHECK(r1 == 0 && r2 == 0 && intact && !s.name[0] && !s.object[0] &&
	      s.object_base == 0, "scratch too small: 0, empty, untouched");
	CHECK(sframe_symbolize(f, &s, NULL, SCRATCH) == 0 && !s.name[0],
	      "NULL scratch");

	/* Exact size, misaligned on purpose. */
	int r = sframe_symbolize(f, &s, (char *)buf + 1, SCRATCH);
	intact = buf[0] == 0xa5;
	for (size_t i = SCRATCH + 1; i < sizeof buf; i++)
		intact &= buf[i] == 0xa5;
	CHECK(r == 1 && strcmp(s.name, "local_fn") == 0 && intact,
	      "exact scratch size, misaligned: no overflow");
}

static void test_format(void *h)
{
	char line[PATH_MAX + 256], want[PATH_MAX + 256];
	uintptr_t f = (uintptr_t)local_fn_p, bias = bias_of(f);
	uintptr_t ra = captured_ra, c = (uintptr_t)calls_capture_p;
	uintptr_t e = (uintptr_t)dlsym(h, "sfb_helper_exported");

	int n = sframe_format_frame(3, f + 5, 0, line, sizeof line);
	snprintf(want, sizeof want, "#3 %#lx in local_fn+0x5 (%s+%#lx)",
		 (unsigned long)(f + 5), exe, (unsigned long)(f + 5 - bias));
	CHECK(strcmp(line, want) == 0 && n == (int)strlen(want), "format: %s", line);

	/* Return address: name looked up at ra-1, offsets printed for ra. */
	sframe_format_frame(7, ra, 1, line, sizeof line);
	snprintf(want, sizeof want, "#7 %#lx in calls_capture+%#lx (%s+%#lx)",
		 (unsigned long)ra, (unsigned long)(ra - c), exe,
		 (unsigned long)(ra - bias));
	CHECK(strcmp(line, want) == 0, "format return address: %s", line);

	sframe_format_frame(1, e, 0, line, sizeof line);
	snprintf(want, sizeof want, "#1 %#lx in sfb_helper_exported+0x0 (%s+%#lx)",
		 (unsigned long)e, helper_path, (unsigned long)(e - bias_of(e)));
	CHECK(strcmp(line, want) == 0, "format .so function: %s", line);

	/* Truncation. */
	char full[PATH_MAX + 256], small[16];
	sframe_format_frame(3, f + 5, 0, full, sizeof full);
	memset(small, 'Z', sizeof small);
	n = sframe_format_frame(3, f + 5, 0, small, 10);
	CHECK(n == 9 && strlen(small) == 9 && strncmp(small, full, 9) == 0 &&
	      small[10] == 'Z', "truncated to 10: \"%s\"", small);
	memset(small, 'Z', sizeof small);
	n = sframe_format_frame(3, f + 5, 0, small, 1);
	CHECK(n == 0 && small[0] == '\0' && small[1] == 'Z', "line_size 1: \"\"");
	memset(small, 'Z', sizeof small);
	n = sframe_format_frame(3, f + 5, 0, small, 0);
	CHECK(n == 0 && small[0] == 'Z', "line_size 0: nothing written");
	errno = 4242;
	sframe_format_frame(3, f + 5, 0, line, sizeof line);
	CHECK(errno == 4242, "format keeps errno");
}

static size_t read_all(int fd, char *buf, size_t cap)
{
	size_t n = 0;
	ssize_t r;
	while (n + 1 < cap && (r = read(fd, buf + n, cap - 1 - n)) > 0)
		n += (size_t)r;
	buf[n] = '\0';
	return n;
}

static void test_symbols_fd(void)
{
	static char got[8192], want[3 * (PATH_MAX + 256)];
	char l0[PATH_MAX + 256], l1[PATH_MAX + 256], l2[256];
	uintptr_t f = (uintptr_t)local_fn_p, bias = bias_of(f);
	uintptr_t ra = captured_ra, c = (uintptr_t)calls_capture_p;
	void *anon = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	void *frames[3] = { (void *)(f + 5), (void *)ra, (char *)anon + 8 };
	int p[2];

	snprintf(l0, sizeof l0, "#0 %#lx in local_fn+0x5 (%s+%#lx)\n",
		 (unsigned long)(f + 5), exe, (unsigned long)(f + 5 - bias));
	snprintf(l1, sizeof l1, "#1 %#lx in calls_capture+%#lx (%s+%#lx)\n",
		 (unsigned long)ra, (unsigned long)(ra - c), exe,
		 (unsigned long)(ra - bias));
	snprintf(l2, sizeof l2, "#2 %p in ?? (?\?)\n", frames[2]);
	snprintf(want, sizeof want, "%s%s%s", l0, l1, l2);

	CHECK(pipe(p) == 0, "pipe");
	errno = 4242;
	sframe_backtrace_symbols_fd(frames, 3, p[1]);
	CHECK(errno == 4242, "symbols_fd keeps errno");
	sframe_backtrace_symbols_fd(frames, 0, p[1]);
	sframe_backtrace_symbols_fd(NULL, 3, p[1]);
	close(p[1]);
	read_all(p[0], got, sizeof got);
	close(p[0]);
	CHECK(strcmp(got, want) == 0, "symbols_fd output:\n%s", got);

	errno = 4242;
	sframe_backtrace_symbols_fd(frames, 3, -1);
	CHECK(errno == 4242, "symbols_fd to a bad fd: errno kept");
	munmap(anon, 4096);
}

__attribute__((noinline)) static int crash_report_here(int fd)
{
	int n = sframe_write_crash_report(NULL, fd);
	sink++;
	return n;
}

static void test_crash_report(void)
{
	static char got[65536];
	int p[2];
	CHECK(pipe(p) == 0, "pipe");
	fcntl(p[1], F_SETPIPE_SZ, 1 << 20);
	errno = 4242;
	int n = crash_report_here(p[1]);
	CHECK(errno == 4242, "crash report keeps errno");
	close(p[1]);
	read_all(p[0], got, sizeof got);
	close(p[0]);

	/* Frame lines, then the stop line, the thread and the modules (no
	 * registers without a context). */
	int lines = 0, has_main = 0;
	char *stop = got;
	/* Frame lines, each followed by its source lines ("    at ..."). */
	for (char *q = got; q && ((*q == '#' && q[1] >= '0' && q[1] <= '9') ||
				  strncmp(q, "    ", 4) == 0); q = strchr(q, '\n'), q = q ? q + 1 : q) {
		lines += *q == '#';
		stop = strchr(q, '\n') ? strchr(q, '\n') + 1 : NULL;
	}
	has_main = strstr(got, " in main+0x") != NULL;
	CHECK(n > 0 && lines == n && strncmp(got, "#0 0x", 5) == 0 && stop &&
	      strncmp(stop, "# stopped: ", 11) == 0 && strstr(stop, "\n# thread: ") &&
	      strstr(stop, "\n# modules:\n") && !strstr(stop, "# registers:"),
	      "crash report: %d frames, the stop line, the thread, the modules", n);
	CHECK(strstr(got, " in crash_report_here+0x") != NULL && has_main,
	      "crash report starts at the caller and reaches main:\n%s", got);
}

/* Reentrant and free of shared state: threads and a signal handler. */
static char handler_line[512];

static void on_usr1(int sig)
{
	(void)sig;
	sframe_format_frame(0, (uintptr_t)local_fn_p + 5, 0, handler_line,
			    sizeof handler_line);
}

static void *thread_main(void *arg)
{
	char scratch[SCRATCH];
	struct sframe_symbol s;
	uintptr_t f = (uintptr_t)local_fn_p, e = (uintptr_t)arg;
	long bad = 0;
	for (int i = 0; i < 300; i++) {
		if (sframe_symbolize(f + i % 4, &s, scratch, sizeof scratch) != 1 ||
		    strcmp(s.name, "local_fn") || s.name_offset != (uintptr_t)(i % 4))
			bad++;
		if (sframe_symbolize(e, &s, scratch, sizeof scratch) != 1 ||
		    strcmp(s.name, "sfb_helper_exported"))
			bad++;
	}
	return (void *)bad;
}

static void test_concurrency(void *h)
{
	pthread_t t[4];
	long bad = 0;
	void *e = dlsym(h, "sfb_helper_exported");
	for (int i = 0; i < 4; i++)
		pthread_create(&t[i], NULL, thread_main, e);
	for (int i = 0; i < 4; i++) {
		void *r;
		pthread_join(t[i], &r);
		bad += (long)r;
	}
	CHECK(bad == 0, "4 threads symbolizing concurrently (%ld wrong)", bad);

	char want[512];
	sframe_format_frame(0, (uintptr_t)local_fn_p + 5, 0, want, sizeof want);
	signal(SIGUSR1, on_usr1);
	raise(SIGUSR1);
	CHECK(strcmp(handler_line, want) == 0, "from a signal handler: %s",
	      handler_line);
}

int main(void)
{
	find_paths();
	void *h = dlopen(helper_path, RTLD_NOW | RTLD_LOCAL);
	CHECK(h != NULL, "dlopen %s: %s", helper_path, h ? "ok" : dlerror());
	if (!h)
		CHECK_DONE();

	test_main_program();
	test_helper(h);
	test_libc();
	test_vdso();
	test_deleted_and_replaced();
	test_corrupt_symtab();
	test_memfd();
	test_anonymous();
	test_scratch_bounds();
	test_format(h);
	test_symbols_fd();
	test_concurrency(h);
	test_crash_report();
	CHECK_DONE();
}
