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
#include "walk_common.h"

#include <stdatomic.h>

#include "objcache.h"

/* ---- Counting glibc's lookups -------------------------------------------- */

static int (*real_find_object)(void *, struct dl_find_object *);
static _Atomic unsigned long lookups;

int _dl_find_object(void *pc, struct dl_find_object *r)
{
	atomic_fetch_add(&lookups, 1);
	return real_find_object(pc, r);
}

__attribute__((constructor)) static void find_real(void)
{
	real_find_object = (int (*)(void *, struct dl_find_object *))dlsym(RTLD_NEXT,
									  "_dl_find_object");
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
struct range {
	uintptr_t lo, hi;
};
static struct range want[MAXF];
static int nwant;

static void want_fn(const void *fn)
{
	uintptr_t lo = 0, hi = 0;
	if (!fn || wfn_range(fn, &lo, &hi)) {
		printf("not ok - ground truth: no symbol size for %p\n", fn);
		exit(1);
	}
	want[nwant++] = (struct range){ lo, hi };
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
	for (int i = 0; i < nwant; i++) {
		uintptr_t pc = last.f[i].pc - 1;
		if (last.f[i].exact || pc < want[i].lo || pc >= want[i].hi)
			return false;
	}
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
 * Every thread's outermost frames lie in libc, which has no .sframe here:
 * a walk that is not cut short ends there, and would confirm libc each
 * time only to stop.  libc cannot be unloaded while the library is bound
 * to it, so it is kept as soon as it is described: a second walk from
 * here to the end makes no lookup at all. */

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
	CHECK(n >= 2 && in_libc(f[n - 1].pc - 1) && st.stop == SFRAME_BT_STOP_NO_UNWIND_INFO &&
	      calls == 0,
	      "libc kept without asking: a walk to the end stops in libc with no-unwind-info and "
	      "makes no lookup (%lu calls, %d frames)", calls, n);
	/* libc's puts, past any definition in this program. */
	void *puts_in_libc = dlsym(RTLD_NEXT, "puts");
	unsigned n_before = atomic_load(&sfb_kept.n);
	CHECK(puts_in_libc && in_libc((uintptr_t)puts_in_libc) &&
	      sframe_backtrace_keep_loaded(puts_in_libc) == 0 &&
	      atomic_load(&sfb_kept.n) == n_before,
	      "keep_loaded() of libc: 0, and it takes no entry of its own");
}

/* ---- Refusals ------------------------------------------------------------ */

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

int main(void)
{
	objs_init();
	char lib[PATH_MAX];
	build_path("walk_churn_b.so", lib, sizeof lib);
	void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
	entry_fn entry = h ? (entry_fn)dlsym(h, "churn_entry") : NULL;
	if (!entry || !real_find_object) {
		printf("not ok - dlopen %s: %s\n", lib, h ? "no churn_entry" : dlerror());
		return 1;
	}
	want_fn((void *)walk_cb);
	want_fn(dlsym(h, "churn_leaf"));
	want_fn(dlsym(h, "churn_mid2"));
	want_fn(dlsym(h, "churn_mid"));
	want_fn((void *)entry);
	want_fn((void *)run_chain);

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
	test_refusals(lib);
	CHECK_DONE();
}
