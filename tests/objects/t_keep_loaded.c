/* sframe_backtrace_keep_loaded(): an object kept loaded is walked without
 * glibc's lookup, and really stays loaded.
 *
 * A walk confirms every object it enters (other than the main program)
 * with _dl_find_object(), because dlclose() may have removed it since it
 * was described.  This program defines _dl_find_object() itself, counting
 * the calls and passing them on to glibc's (the library, linked in
 * statically, binds to the program's definition), and walks from a
 * callback at the bottom of a chain in a dlopen()ed object
 * (walk_churn_b.so: entry -> mid -> mid2 -> leaf -> callback).  Ground
 * truth: the chain's functions by their symbol sizes; whether an object
 * is still loaded, by dlopen(RTLD_NOLOAD).  Checked:
 * - before keeping: the exact chain, with at least one lookup;
 * - after keeping: the exact chain with no lookup, also after the
 *   program's dlclose() of it, which leaves it loaded;
 * - libc, kept without asking: a walk to the end (which stops there)
 *   makes no lookup the second time;
 * - no object, the main program, an object of another namespace
 *   (dlmopen()), and the table's size: what is refused is not made to
 *   stay (it unloads on dlclose()). */
#include "walk/walk_common.h"

#include <stdatomic.h>

#include <sys/wait.h>

#include "objects/objcache.h"
#include "objects/startup.h"

/* ---- Counting glibc's lookups -------------------------------------------- */

static int (*real_find_object)(void *, struct dl_find_object *);
static _Atomic unsigned long lookups;

/* Found on first use: the library's constructor (objcache.c) asks before
 * any of this program's could have. */
int _dl_find_object(void *pc, struct dl_find_object *r)
{
	if (!real_find_object)
		real_find_object = (int (*)(void *, struct dl_find_object *))dlsym(
			RTLD_NEXT, "_dl_find_object");
	atomic_fetch_add(&lookups, 1);
	return real_find_object ? real_find_object(pc, r) : -1;
}

/* ---- The chain ----------------------------------------------------------- */

typedef int (*churn_cb)(int);
typedef int (*entry_fn)(int, int, int, churn_cb);

#define MAXF 16
static struct {
	struct sframe_bt_frame f[MAXF];
	struct sframe_bt_status st;
	int n, size;
	unsigned long lookups;
} last;

NOINL int walk_cb(int x)
{
	unsigned long before = atomic_load(&lookups);
	last.n = sframe_backtrace_ex(NULL, last.f, last.size, 0, &last.st);
	last.lookups = atomic_load(&lookups) - before;
	return x + 1;
}

/* The chain's functions, innermost first, as ranges. */
static struct wobj want[MAXF];
static int nwant;

static void want_fn(const void *fn)
{
	uintptr_t lo = 0, hi = 0;
	if (!fn || wfn_range(fn, &lo, &hi)) {
		printf("not ok - ground truth: no symbol size for %p\n", fn);
		exit(1);
	}
	want[nwant++] = (struct wobj){ lo, hi };
}

NOINL int run_chain(entry_fn entry);

/* The chain through the object of handle h, as walk_cb() sees it. */
static void want_chain(void *h, entry_fn entry)
{
	nwant = 0;
	want_fn((void *)walk_cb);
	want_fn(dlsym(h, "churn_leaf"));
	want_fn(dlsym(h, "churn_mid2"));
	want_fn(dlsym(h, "churn_mid"));
	want_fn((void *)entry);
	want_fn((void *)run_chain);
}

NOINL int run_chain(entry_fn entry)
{
	last.n = -1;
	return entry(1, 1, 0, walk_cb) + 1;
}

/* Walk from the callback, the buffer exactly the chain (so that the walk
 * ends there and never looks at libc): true if every frame is exact. */
static bool chain_walk(entry_fn entry, unsigned long *nlookups)
{
	last.size = nwant;
	run_chain(entry);
	*nlookups = last.lookups;
	if (last.n != nwant || last.st.stop != SFRAME_BT_STOP_BUFFER_FULL)
		return false;
	for (int i = 0; i < nwant; i++)
		if (last.f[i].exact || !in_obj(&want[i], lookup_pc(&last.f[i])))
			return false;
	return true;
}

static bool still_loaded(const char *path)
{
	void *h = dlopen(path, RTLD_LAZY | RTLD_NOLOAD);
	if (h)
		dlclose(h);
	return h != NULL;
}

/* ---- libc, kept without asking -------------------------------------------
 * Every thread's outermost frames lie in libc (walked with its .eh_frame):
 * a walk that is not cut short passes through it, and would confirm libc
 * each time.  libc cannot be unloaded while the library is bound to it,
 * so it is kept as soon as it is described: a second walk from here to
 * the end (_start, outermost) makes no lookup at all. */

NOINL int walk_to_the_end(struct sframe_bt_frame *f, int size, struct sframe_bt_status *st)
{
	return sframe_backtrace_ex(NULL, f, size, 0, st);
}

static void test_libc_kept(void)
{
	struct sframe_bt_frame f[MAXF * 4];
	struct sframe_bt_status st;
	walk_to_the_end(f, MAXF * 4, &st);
	unsigned long before = atomic_load(&lookups);
	int n = walk_to_the_end(f, MAXF * 4, &st);
	unsigned long calls = atomic_load(&lookups) - before;
	CHECK(n >= 3 && in_libc(f[n - 2].pc - 1) && in_start(f[n - 1].pc - 1) &&
	      st.stop == SFRAME_BT_STOP_OUTERMOST && st.frames_eh_frame >= 2 && calls == 0,
	      "libc kept without asking: a walk to the end goes through libc to _start, outermost, "
	      "and makes no lookup (%lu calls, %d frames, %d by .eh_frame, stop %s)", calls, n,
	      st.frames_eh_frame, sframe_bt_stop_name(st.stop));
	/* libc's puts, past any definition in this program. */
	void *puts_in_libc = dlsym(RTLD_NEXT, "puts");
	unsigned n_before = atomic_load(&sfb_kept.n);
	CHECK(puts_in_libc && in_libc((uintptr_t)puts_in_libc) &&
	      sframe_backtrace_keep_loaded(puts_in_libc) == 0 &&
	      atomic_load(&sfb_kept.n) == n_before,
	      "keep_loaded() of libc: 0, and it takes no entry of its own");
}

/* Copies of one object under other names are other objects to glibc. */
static char tmpdir[PATH_MAX];

static bool copy_file(const char *from, const char *to)
{
	FILE *in = fopen(from, "rb"), *out = fopen(to, "wb");
	bool ok = in && out;
	char buf[65536];
	size_t k;
	while (ok && (k = fread(buf, 1, sizeof buf, in)) > 0)
		ok = fwrite(buf, 1, k, out) == k;
	if (in)
		fclose(in);
	if (out && fclose(out))
		ok = false;
	return ok;
}

/* ---- Objects loaded at start-up -------------------------------------------
 * This program is linked with walk_churn_c.so (DT_NEEDED).  Like every
 * object loaded at start-up it stays till exit, and the library finds such
 * objects when it is loaded (startup.c).  Ground truth: the objects listed
 * before the program dlopen()s anything (none of its constructors does),
 * the main program excepted.  Checked: the library's table holds exactly
 * those; a second walk through walk_churn_c.so's chain makes no lookup;
 * keep_loaded() of it takes no entry; after dlopen()s, among them a copy
 * of walk_churn_c.so under the same name in another directory, the same
 * search finds the same objects (a copy taken for the one a DT_NEEDED
 * entry names would be trusted after its dlclose()); and, in a child run
 * with LD_PRELOAD, the preloaded object is among them (no DT_NEEDED names
 * it: it comes in as listed before one that is). */

static struct wobj at_start[SFB_STARTUP_MAX];
static int n_at_start;

static int list_at_start(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	int *index = arg;
	if ((*index)++ == 0)
		return 0; /* the main program */
	for (int i = 0; i < info->dlpi_phnum; i++) {
		struct wobj o;
		if (info->dlpi_phdr[i].p_type == PT_LOAD &&
		    !obj_of((void *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr), &o)) {
			if (n_at_start < SFB_STARTUP_MAX)
				at_start[n_at_start++] = o;
			break;
		}
	}
	return 0;
}

static bool listed_at_start(uintptr_t start, uintptr_t end)
{
	for (int i = 0; i < n_at_start; i++)
		if (at_start[i].lo == start && at_start[i].hi == end)
			return true;
	return false;
}

/* Do the ranges given (n of them) name exactly the objects listed at start? */
static bool same_as_at_start(const struct sfb_range *r, unsigned n)
{
	if (n != (unsigned)n_at_start)
		return false;
	for (unsigned i = 0; i < n; i++)
		if (!listed_at_start(r[i].start, r[i].end))
			return false;
	return true;
}

static bool table_as_at_start(void)
{
	struct sfb_range r[SFB_STARTUP_MAX];
	unsigned n = atomic_load(&sfb_startup.n);
	for (unsigned i = 0; i < n && i < SFB_STARTUP_MAX; i++) {
		r[i] = sfb_startup.range[i];
		if (i > 0 && r[i].start < r[i - 1].end)
			return false; /* sorted, apart */
	}
	return same_as_at_start(r, n);
}

static void test_startup_objects(const char *copy_of)
{
	CHECK(table_as_at_start() && n_at_start >= 3,
	      "start-up objects: the table holds the %d objects listed at start (libc, ld.so, "
	      "walk_churn_c.so, ...), the main program excepted (%u entries)",
	      n_at_start, atomic_load(&sfb_startup.n));

	void *c = dlopen("walk_churn_c.so", RTLD_LAZY | RTLD_NOLOAD);
	entry_fn entry = c ? (entry_fn)dlsym(c, "churn_entry") : NULL;
	struct wobj obj;
	if (!entry || obj_of((void *)entry, &obj) || !listed_at_start(obj.lo, obj.hi)) {
		CHECK(0, "walk_churn_c.so loaded at start-up, with churn_entry");
		return;
	}
	want_chain(c, entry);
	unsigned long first = 0, second = 0;
	bool exact = chain_walk(entry, &first) && chain_walk(entry, &second);
	CHECK(exact && second == 0,
	      "start-up object: the exact chain through walk_churn_c.so, the second time with "
	      "no lookup (%lu, then %lu calls)", first, second);
	unsigned n_kept = atomic_load(&sfb_kept.n);
	CHECK(sframe_backtrace_keep_loaded(dlsym(c, "churn_leaf")) == 0 &&
	      atomic_load(&sfb_kept.n) == n_kept,
	      "keep_loaded() of a start-up object: 0, and it takes no entry of its own");
	dlclose(c);

	/* A copy under the same name elsewhere: another object to glibc. */
	char dir[] = "/tmp/sfb-startup-XXXXXX", path[PATH_MAX];
	void *copy = NULL;
	if (mkdtemp(dir)) {
		snprintf(path, sizeof path, "%s/walk_churn_c.so", dir);
		if (copy_file(copy_of, path))
			copy = dlopen(path, RTLD_NOW | RTLD_LOCAL);
		unlink(path);
		rmdir(dir);
	}
	void *copy_fn = copy ? dlsym(copy, "churn_entry") : NULL;
	CHECK(copy_fn && copy_fn != (void *)entry,
	      "a copy of walk_churn_c.so from another directory is another object");
	struct sfb_range r[SFB_STARTUP_MAX];
	unsigned n = sfb_startup_objects(r, SFB_STARTUP_MAX);
	CHECK(same_as_at_start(r, n),
	      "searched again after dlopen()s (walk_churn_b.so, the copy): the same %d objects "
	      "(%u found)", n_at_start, n);
	if (copy)
		dlclose(copy);
}

/* Run this program again with LD_PRELOAD; the child checks the table. */
static void test_preloaded(const char *self, const char *preload)
{
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		setenv("LD_PRELOAD", preload, 1);
		execl(self, self, "preloaded", preload, (char *)NULL);
		_exit(127);
	}
	int status = 0;
	CHECK(pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
	      WEXITSTATUS(status) == 0,
	      "child with LD_PRELOAD=%s: its checks passed (status %d)", preload, status);
}

static int preloaded_child(const char *preload)
{
	void *h = dlopen(preload, RTLD_LAZY | RTLD_NOLOAD);
	struct wobj o;
	CHECK(h && !obj_of(dlsym(h, "churn_entry"), &o) && listed_at_start(o.lo, o.hi),
	      "child: %s is loaded at start-up", preload);
	CHECK(table_as_at_start(),
	      "child: the table holds the %d objects listed at start, the preloaded one among "
	      "them (%u entries)", n_at_start, atomic_load(&sfb_startup.n));
	CHECK_DONE();
}

/* ---- Refusals ------------------------------------------------------------ */

static void test_refusals(const char *lib)
{
	CHECK(sframe_backtrace_keep_loaded((void *)16) == -1, "an address in no object: -1");
	CHECK(sframe_backtrace_keep_loaded((void *)run_chain) == 0, "the main program: 0");

	/* Another namespace: libm (not built with the sanitizers, whose
	 * runtime a new namespace lacks), loaded both here and there, so that
	 * opening it by name from the library finds the other one. */
	void *here = dlopen("libm.so.6", RTLD_NOW | RTLD_LOCAL);
	void *other = dlmopen(LM_ID_NEWLM, "libm.so.6", RTLD_NOW | RTLD_LOCAL);
	void *fn = other ? dlsym(other, "cos") : NULL;
	CHECK(here && fn && fn != dlsym(here, "cos"),
	      "libm.so.6 in this namespace and in a new one: %s", fn ? "ok" : dlerror());
	if (fn) {
		Lmid_t ns = LM_ID_BASE;
		struct link_map *lm = NULL;
		dlinfo(other, RTLD_DI_LMID, &ns);
		dlinfo(other, RTLD_DI_LINKMAP, &lm);
		char name[PATH_MAX];
		snprintf(name, sizeof name, "%s", lm ? lm->l_name : "");
		CHECK(sframe_backtrace_keep_loaded(fn) == -1,
		      "an object in another namespace: -1");
		dlclose(other);
		void *again = dlmopen(ns, name, RTLD_LAZY | RTLD_NOLOAD);
		CHECK(again == NULL, "... and it still unloads on dlclose()");
		if (again)
			dlclose(again);
	}
	if (here)
		dlclose(here);

	/* The table: SFB_KEPT_MAX entries, the main program's among them. */
	snprintf(tmpdir, sizeof tmpdir, "/tmp/sfb-keep-XXXXXX");
	if (!mkdtemp(tmpdir)) {
		CHECK(0, "mkdtemp");
		return;
	}
	unsigned n0 = atomic_load(&sfb_kept.n);
	int room = SFB_KEPT_MAX - (int)n0, kept = 0, refused = 0, refused_stayed = 0;
	for (int i = 0; i < room + 2; i++) {
		char path[PATH_MAX + 32];
		snprintf(path, sizeof path, "%s/copy%02d.so", tmpdir, i);
		if (!copy_file(lib, path)) {
			CHECK(0, "copy %s to %s", lib, path);
			break;
		}
		void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
		void *f = h ? dlsym(h, "churn_mid") : NULL;
		if (!f) {
			CHECK(0, "dlopen %s: %s", path, dlerror());
			break;
		}
		if (sframe_backtrace_keep_loaded(f) == 0) {
			kept++;
			dlclose(h);
		} else {
			refused++;
			dlclose(h);
			refused_stayed += still_loaded(path);
		}
		unlink(path);
	}
	rmdir(tmpdir);
	CHECK(kept == room && refused == 2,
	      "table of %d: %d more kept, then refused (%d kept, %d refused)", SFB_KEPT_MAX, room,
	      kept, refused);
	CHECK(refused_stayed == 0, "a refused object still unloads on dlclose() (%d stayed)",
	      refused_stayed);
}

int main(int argc, char **argv)
{
	objs_init();
	int index = 0;
	dl_iterate_phdr(list_at_start, &index);
	if (argc == 3 && !strcmp(argv[1], "preloaded"))
		return preloaded_child(argv[2]);
	char lib[PATH_MAX], linked[PATH_MAX], preload[PATH_MAX], self[PATH_MAX];
	build_path("walk_churn_b.so", lib, sizeof lib);
	build_path("walk_churn_c.so", linked, sizeof linked);
	build_path("walk_churn_d.so", preload, sizeof preload);
	ssize_t k = readlink("/proc/self/exe", self, sizeof self - 1);
	self[k > 0 ? k : 0] = 0;
	void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
	entry_fn entry = h ? (entry_fn)dlsym(h, "churn_entry") : NULL;
	if (!entry || !real_find_object) {
		printf("not ok - dlopen %s: %s\n", lib, h ? "no churn_entry" : dlerror());
		return 1;
	}
	want_chain(h, entry);

	unsigned long n;
	bool exact = chain_walk(entry, &n) && chain_walk(entry, &n);
	CHECK(exact && n >= 1,
	      "not kept: the exact chain through %s, confirmed by glibc's lookup (%lu calls)",
	      lib, n);
	CHECK(sframe_backtrace_keep_loaded((void *)entry) == 0, "keep_loaded(%s): 0", lib);
	CHECK(sframe_backtrace_keep_loaded(dlsym(h, "churn_leaf")) == 0,
	      "kept again (another address in it): 0");
	unsigned kept_n = atomic_load(&sfb_kept.n);
	exact = chain_walk(entry, &n);
	CHECK(exact && n == 0, "kept: the exact chain, with no lookup (%lu calls)", n);
	dlclose(h);
	CHECK(still_loaded(lib), "kept: still loaded after the program's dlclose()");
	exact = chain_walk(entry, &n);
	CHECK(exact && n == 0, "kept, after dlclose(): the exact chain, no lookup (%lu calls)", n);
	CHECK(atomic_load(&sfb_kept.n) == kept_n, "kept twice: one entry");

	test_libc_kept();
	test_startup_objects(linked);
	test_preloaded(self, preload);
	test_refusals(lib);
	CHECK_DONE();
}
