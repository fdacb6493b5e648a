/* dlopen/dlclose churn under heavy sampling.
 *
 * Phase 0 (deterministic): load, walk inside, unload the layout pair
 * walk_churn_x.so / walk_churn_y.so alternately, then the rebuilt pair
 * walk_churn_p.so / walk_churn_q.so.  The loader tends to put the next
 * object at the address, with the span and even the link_map of the one
 * just unloaded; a walker that trusted a cached description of the old
 * object would apply its rows to the new one.  In half the rounds a walk
 * through a companion object, loaded for the whole phase, follows, so
 * that the unloaded object is the thread's second recent object, not its
 * first, when the next one takes its range.  Every walk must be the
 * exact chain; the output says whether such a reuse actually happened.
 *
 * Phase 1 (SFB_CHURN_SECONDS, default 30): two loader threads dlopen and
 * dlclose eight different objects (walk_churn_{a,b,c,d,x,y,p,q}.so), calling
 * into each a chain that spins (and sometimes calls back into a function
 * of the program that takes a NULL-context walk), while two more threads
 * spin in known chains of the program.  All four are sampled by
 * per-thread CPU timers (SIGPROF every 500 us of CPU, as far as the
 * kernel's tick allows) and by the main thread firing a queued real-time
 * signal (pthread_sigqueue, SIGRTMIN: no merging) at a random one about
 * every 50 us.
 * Every sample must be the expected chain or a prefix of it ended by a
 * reported stop reason: never a wrong PC; a sample whose frame 0 is in
 * libc or ld.so (no .sframe) must get back to the chain through their
 * .eh_frame.  The callback walks
 * (normal context, every object loaded) must be the exact chain.  No
 * crash (reported with the faulting PC); no hang (alarm). */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <sys/syscall.h>
#include <ucontext.h>

#include "walk/walk_common.h"
#include "uc_regs.h"

#define NF 40
#define NVAR 8
static const char var_letters[NVAR + 1] = "abcdxypq";
static char lib_path[NVAR][PATH_MAX];

typedef int (*churn_cb)(int);
typedef int (*entry_fn)(int, int, int, churn_cb);
int main(void);

/* ---- Chains of the spinning threads ---------------------------------------- */

LEAF(s0_l3, 3000)
LEVEL(s0_l2, s0_l3, 300)
LEVEL(s0_l1, s0_l2, 300)

LEAF(s1_l4, 3000)
VLA_LEVEL(s1_l3, s1_l4, 300)
BIG_LEVEL(s1_l2, s1_l3, 300)
LEVEL(s1_l1, s1_l2, 300)

/* ---- Per-thread state ------------------------------------------------------- */

enum { K_SPIN, K_LOAD };

#define MAXDYN 4
struct wthr {
	int kind, idx;
	pthread_t th;
	timer_t timer;
	volatile int stop;
	_Atomic int ready;
	int chain[10], len;        /* spinner: its chain; loader: when idle */
	/* Loader: the object being called.  Written only while pub == 0; the
	 * handler runs on this thread, so a signal fence orders them. */
	volatile int pub;
	struct wfn dyn[MAXDYN];
	int ndyn;
	int lchain[10], llen;
	int cur_var;
	/* Counters, written by the handler (on this thread) or the thread. */
	unsigned long total, cnt[V_NVERDICT], in_lib, sys_ok, sys_bad, unknown;
	unsigned long trunc_stop[16];
	unsigned long loads, cb_walks, cb_bad, per_var[NVAR];
};

static __thread struct wthr *self;
static int id_cb, id_loader_call, id_loader_main, id_phase0, id_main;
static int spin_per_rep = 20000, reps = 8;

/* First wrong samples, for the report. */
struct wrong {
	int thread, kind, n, stop, bad, var, pub;
	struct sframe_bt_frame f[NF];
	struct wfn dyn[MAXDYN];
	int ndyn;
	int chain[10], len;
};
#define MAXWRONG 8
static struct wrong wrongs[MAXWRONG];
static _Atomic int nwrong;

static void record_wrong(struct wthr *t, const struct sframe_bt_frame *f, int n, int stop,
			 int bad, const int *chain, int len)
{
	int k = atomic_fetch_add(&nwrong, 1);
	if (k >= MAXWRONG)
		return;
	struct wrong *w = &wrongs[k];
	w->thread = t->idx;
	w->kind = t->kind;
	w->n = n;
	w->stop = stop;
	w->bad = bad;
	w->var = t->cur_var;
	w->pub = t->pub;
	memcpy(w->f, f, sizeof(struct sframe_bt_frame) * (size_t)n);
	memcpy(w->dyn, t->dyn, sizeof w->dyn);
	w->ndyn = t->ndyn;
	memcpy(w->chain, chain, sizeof(int) * (size_t)len);
	w->len = len;
}

static void sample_handler(int sig, siginfo_t *si, void *ucv)
{
	(void)sig;
	(void)si;
	struct wthr *t = self;
	if (!t)
		return;
	const ucontext_t *uc = ucv;
	struct sframe_bt_frame f[NF];
	struct sframe_bt_status st;
	int n = sframe_backtrace_ex(uc, f, NF, 0, &st);
	t->total++;
	struct wctx ctx = { NULL, 0 };
	const int *chain = t->chain;
	int len = t->len;
	if (t->kind == K_LOAD && t->pub) {
		ctx.dyn = t->dyn;
		ctx.ndyn = t->ndyn;
		chain = t->lchain;
		len = t->llen;
	}
	int bad = -1;
	int v = verify_chain(&ctx, f, n, st.stop, NF, chain, len, &bad);
	if (n < 1 || f[0].pc != (uintptr_t)UC_PC(uc))
		v = V_WRONG;
	if (v == V_OTHER) {
		/* Frame 0 in libc or ld.so (dlopen, dlclose, ...): walked with
		 * their .eh_frame back into the program, through the thread's
		 * outermost chain function, down to its end in libc. */
		if (in_sys(f[0].pc)) {
			int k = 1, outer = 0;
			while (k < n && in_sys(lookup_pc(&f[k])))
				k++;
			for (int j = k; j < n && len > 0; j++)
				outer |= wfn_lookup(&ctx, lookup_pc(&f[j])) == chain[len - 1];
			if (k < n && outer && st.stop == SFRAME_BT_STOP_OUTERMOST &&
			    in_libc(lookup_pc(&f[n - 1])))
				t->sys_ok++;
			/* Or stopped, with a reason, at the first frame outside
			 * libc and ld.so: crt code (__do_global_dtors_aux calling
			 * __cxa_finalize in dlclose()) has no unwind info. */
			else if (k >= n - 1 && st.stop != SFRAME_BT_STOP_NONE &&
				 st.stop != SFRAME_BT_STOP_BUFFER_FULL &&
				 st.stop != SFRAME_BT_STOP_OUTERMOST)
				t->sys_ok++;
			else
				t->sys_bad++, v = V_WRONG;
		} else {
			t->unknown++;
		}
	}
	if (v != V_OTHER && ctx.ndyn && wfn_lookup(&ctx, f[0].pc) >= WFN_DYN_BASE)
		t->in_lib++;
	if (v == V_TRUNC && st.stop >= 0 && st.stop < 16)
		t->trunc_stop[st.stop]++;
	t->cnt[v]++;
	if (v == V_WRONG)
		record_wrong(t, f, n, st.stop, bad, chain, len);
}

/* ---- Spinners ----------------------------------------------------------------- */

static void thread_setup(struct wthr *t)
{
	self = t;
	t->timer = start_thread_cpu_timer(500000);
	atomic_store(&t->ready, 1);
}

static void thread_teardown(struct wthr *t)
{
	stop_thread_cpu_timer(t->timer);
}

NOINL void *spin_entry0(void *arg)
{
	struct wthr *t = arg;
	thread_setup(t);
	int r = 0;
	while (!t->stop) {
		r += s0_l1(r);
		SPIN(50);
	}
	thread_teardown(t);
	return (void *)(long)r;
}

NOINL void *spin_entry1(void *arg)
{
	struct wthr *t = arg;
	thread_setup(t);
	int r = 0;
	while (!t->stop) {
		r += s1_l1(r);
		SPIN(50);
	}
	thread_teardown(t);
	return (void *)(long)r;
}

/* ---- Loaders ---------------------------------------------------------------- */

/* Called from churn_leaf in the loaded object: a NULL-context walk from
 * normal context (which the sampling signals may interrupt: walks nest). */
NOINL int churn_walk_cb(int x)
{
	struct wthr *t = self;
	struct sframe_bt_frame f[NF];
	struct sframe_bt_status st;
	int n = sframe_backtrace_ex(NULL, f, NF, 0, &st);
	/* Frame 0 is the return address into this function: make it the
	 * exact PC of the call for verify_chain(). */
	if (n > 0) {
		f[0].pc -= 1;
		f[0].exact = 1;
	}
	struct wctx ctx = { t->dyn, t->ndyn };
	int bad;
	int v = verify_chain(&ctx, f, n, st.stop, NF, t->lchain, t->llen, &bad);
	t->cb_walks++;
	if (v != V_EXACT) {
		t->cb_bad++;
		if (n > 0) {
			f[0].pc += 1;
			f[0].exact = 0;
		}
		record_wrong(t, f, n, st.stop, bad, t->lchain, t->llen);
	}
	return x + n;
}

NOINL int loader_call(entry_fn entry, int x, churn_cb cb)
{
	int r = entry(x, reps, spin_per_rep, cb);
	return r + 1;
}

/* Load variant v, fill the thread's chain for it.  Returns the handle. */
static void *load_variant(struct wthr *t, int v, entry_fn *entry, const int *tail, int ntail)
{
	void *h = dlopen(lib_path[v], RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		printf("not ok - dlopen %s: %s\n", lib_path[v], dlerror());
		exit(1);
	}
	static const char *const names[] = { "churn_leaf", "churn_mid2", "churn_mid",
					     "churn_entry" };
	t->ndyn = 0;
	t->llen = 0;
	t->lchain[t->llen++] = id_cb;
	for (int i = 0; i < 4; i++) {
		void *fn = dlsym(h, names[i]);
		if (!fn)
			continue; /* churn_mid2 exists in depth-3 variants only */
		struct wfn *d = &t->dyn[t->ndyn];
		d->name = names[i];
		if (wfn_range(fn, &d->lo, &d->hi)) {
			printf("not ok - no symbol size for %s in %s\n", names[i], lib_path[v]);
			exit(1);
		}
		t->lchain[t->llen++] = WFN_DYN_BASE + t->ndyn;
		t->ndyn++;
	}
	for (int i = 0; i < ntail; i++)
		t->lchain[t->llen++] = tail[i];
	t->cur_var = v;
	*entry = (entry_fn)dlsym(h, "churn_entry");
	return h;
}

NOINL void *loader_main(void *arg)
{
	struct wthr *t = arg;
	thread_setup(t);
	uint64_t rs = 0x9e3779b97f4a7c15ull * (uint64_t)(t->idx + 1);
	int r = 0;
	while (!t->stop) {
		int v = (int)(rnd_next(&rs) % NVAR);
		entry_fn entry;
		int tail[] = { id_loader_call, id_loader_main };
		void *h = load_variant(t, v, &entry, tail, 2);
		int with_cb = (rnd_next(&rs) & 3) == 0;
		atomic_signal_fence(memory_order_seq_cst);
		t->pub = 1;
		atomic_signal_fence(memory_order_seq_cst);
		r += loader_call(entry, r, with_cb ? churn_walk_cb : NULL);
		atomic_signal_fence(memory_order_seq_cst);
		t->pub = 0;
		atomic_signal_fence(memory_order_seq_cst);
		dlclose(h);
		t->loads++;
		t->per_var[v]++;
	}
	thread_teardown(t);
	return (void *)(long)r;
}

static void print_wrongs(int max);

/* ---- Phase 0: reuse of an unloaded object's address -------------------------- */

/* What the cache's fingerprint compares besides the build-id, read the
 * same way: the program headers and the first 32 bytes of the section. */
struct layout {
	unsigned char phdrs[1024], head[32];
	size_t phdrs_len;
};

static void object_layout(uintptr_t start, struct layout *l)
{
	const ElfW(Ehdr) *eh = (const void *)start;
	const ElfW(Phdr) *ph = (const void *)(start + eh->e_phoff);
	memset(l, 0, sizeof *l);
	l->phdrs_len = eh->e_phnum * sizeof *ph;
	if (l->phdrs_len > sizeof l->phdrs)
		l->phdrs_len = sizeof l->phdrs;
	memcpy(l->phdrs, ph, l->phdrs_len);
	for (unsigned i = 0; i < eh->e_phnum; i++)
		if (ph[i].p_type == 0x6474e554 /* PT_GNU_SFRAME */ && ph[i].p_memsz >= 32)
			memcpy(l->head, (const void *)(start + ph[i].p_vaddr), 32);
}

NOINL void phase0(void)
{
	static struct wthr t; /* the main thread acts as a loader, unsampled */
	t.idx = -1;
	t.kind = K_LOAD;
	self = &t;
	/* x/y: the same span, different sections; p/q: a rebuilt object
	 * (the same layout and section head, one row changed). */
	static const int pair[2][2] = { { 4, 5 }, { 6, 7 } };
	struct dl_find_object prev;
	int have_prev = 0, same_span = 0, same_all = 0, rounds = 20, pq_same = 0;
	static struct layout p_layout;
	/* A companion object, loaded for the whole phase and walked through
	 * after the x/y or p/q object in rounds i & 2: the unloaded object's
	 * range is then the thread's second recent object when the next one
	 * takes it, and in the other rounds its first. */
	int comp_tail[] = { id_loader_call, id_phase0, id_main };
	entry_fn comp_entry;
	void *comp = load_variant(&t, 0, &comp_entry, comp_tail, 3);
	unsigned long comp_walks = 0;
	for (int i = 0; i < 4 * rounds; i++) {
		int v = pair[i / (2 * rounds)][i & 1];
		entry_fn entry;
		int tail[] = { id_loader_call, id_phase0, id_main };
		void *h = load_variant(&t, v, &entry, tail, 3);
		struct dl_find_object r;
		if (_dl_find_object((void *)entry, &r) != 0) {
			printf("not ok - _dl_find_object on a loaded object\n");
			exit(1);
		}
		if (have_prev && r.dlfo_map_start == prev.dlfo_map_start &&
		    r.dlfo_map_end == prev.dlfo_map_end) {
			same_span++;
			same_all += r.dlfo_link_map == prev.dlfo_link_map;
		}
		prev = r;
		have_prev = 1;
		/* p, then q: does only the build-id tell them apart? */
		struct layout l;
		object_layout((uintptr_t)r.dlfo_map_start, &l);
		if (v == pair[1][0])
			p_layout = l;
		else if (v == pair[1][1])
			pq_same += p_layout.phdrs_len == l.phdrs_len &&
				   !memcmp(&p_layout, &l, sizeof l);
		int saved_reps = reps;
		reps = 2;
		loader_call(entry, i, churn_walk_cb);
		if (i & 2) {
			/* dlopen() again: the same object, its chain for t. */
			void *again = load_variant(&t, 0, &comp_entry, comp_tail, 3);
			loader_call(comp_entry, i, churn_walk_cb);
			comp_walks += 2;
			dlclose(again);
		}
		reps = saved_reps;
		dlclose(h);
	}
	dlclose(comp);
	self = NULL;
	printf("# phase 0: %d of %d reloads reused the previous object's span, %d also its "
	       "link_map\n",
	       same_span, 4 * rounds - 1, same_all);
	CHECK(t.cb_walks == (unsigned long)(4 * rounds * 2) + comp_walks && t.cb_bad == 0,
	      "phase 0: %lu walks inside alternately loaded x/y, then p/q objects, and a "
	      "companion object, %lu not exact",
	      t.cb_walks, t.cb_bad);
	if (same_all == 0)
		printf("# phase 0: no address/link_map reuse happened: stale-cache case not "
		       "exercised\n");
	printf("# phase 0: %d of %d q loads had p's program headers and section head%s\n",
	       pq_same, rounds, pq_same ? "" : ": rebuilt-object case not exercised");
	print_wrongs(2);
}

/* ---- Main ---------------------------------------------------------------------- */

/* A crash anywhere (the walker runs in signal handlers) is reported as a
 * failed check with the faulting PC, then the process ends. */
static void on_crash(int sig, siginfo_t *si, void *ucv)
{
	const ucontext_t *uc = ucv;
	sig_puts(1, "not ok - t_churn crashed: signal ");
	sig_putd(1, sig);
	sig_puts(1, " at pc ");
	sig_putx(1, (uintptr_t)UC_PC(uc));
	sig_puts(1, " addr ");
	sig_putx(1, (uintptr_t)si->si_addr);
	sig_puts(1, "\n");
	signal(sig, SIG_DFL);
	raise(sig);
}

static void on_alarm(int sig)
{
	(void)sig;
	sig_puts(1, "not ok - t_churn hung (alarm)\n");
	_exit(1);
}

static void print_wrongs(int max)
{
	int k = atomic_exchange(&nwrong, 0);
	for (int i = 0; i < k && i < MAXWRONG && i < max; i++) {
		struct wrong *w = &wrongs[i];
		struct wctx ctx = { w->dyn, w->ndyn };
		printf("# wrong sample %d: thread %d (%s), variant %c, in object %d, first bad "
		       "frame %d; expected:",
		       i, w->thread, w->kind == K_SPIN ? "spinner" : "loader",
		       var_letters[w->var], w->pub, w->bad);
		for (int j = 0; j < w->len; j++)
			printf(" %s", wfn_name(&ctx, w->chain[j]));
		printf(" [libc]\n");
		for (int j = 0; j < w->ndyn; j++)
			printf("#   object range %s [%#lx, %#lx)\n", w->dyn[j].name,
			       (unsigned long)w->dyn[j].lo, (unsigned long)w->dyn[j].hi);
		print_walk("walk", &ctx, w->f, w->n, w->stop);
	}
}

int main(void)
{
	long seconds = env_long("SFB_CHURN_SECONDS", 30);
	objs_init();
	for (int v = 0; v < NVAR; v++) {
		char name[64];
		snprintf(name, sizeof name, "walk_churn_%c.so", var_letters[v]);
		build_path(name, lib_path[v], sizeof lib_path[v]);
	}
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_alarm;
	sigaction(SIGALRM, &sa, NULL);
	alarm((unsigned)seconds + 120);
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = on_crash;
	sa.sa_flags = SA_SIGINFO;
	sigaction(SIGSEGV, &sa, NULL);
	sigaction(SIGBUS, &sa, NULL);
	sigaction(SIGFPE, &sa, NULL);
	sigaction(SIGILL, &sa, NULL);

	id_cb = WFN(churn_walk_cb);
	id_loader_call = WFN(loader_call);
	id_loader_main = WFN(loader_main);
	id_phase0 = WFN(phase0);
	id_main = WFN(main);

	double t0 = now_s();
	phase0();
	printf("# phase 0 took %.2f s\n", now_s() - t0);

	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = sample_handler;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	sigaddset(&sa.sa_mask, SIGPROF);
	sigaddset(&sa.sa_mask, SIGRTMIN);
	sigaction(SIGPROF, &sa, NULL);
	sigaction(SIGRTMIN, &sa, NULL);

	static struct wthr w[4];
	w[0].kind = K_SPIN;
	w[0].len = 0;
	int c0[] = { WFN(s0_l3), WFN(s0_l2), WFN(s0_l1), WFN(spin_entry0) };
	int c1[] = { WFN(s1_l4), WFN(s1_l3), WFN(s1_l2), WFN(s1_l1), WFN(spin_entry1) };
	memcpy(w[0].chain, c0, sizeof c0);
	w[0].len = 4;
	w[1].kind = K_SPIN;
	memcpy(w[1].chain, c1, sizeof c1);
	w[1].len = 5;
	for (int i = 2; i < 4; i++) {
		w[i].kind = K_LOAD;
		w[i].chain[0] = id_loader_main; /* between calls into an object */
		w[i].len = 1;
	}
	void *(*fns[4])(void *) = { spin_entry0, spin_entry1, loader_main, loader_main };
	double t1 = now_s();
	for (int i = 0; i < 4; i++) {
		w[i].idx = i;
		if (pthread_create(&w[i].th, NULL, fns[i], &w[i]) != 0) {
			perror("pthread_create");
			return 1;
		}
	}
	for (int i = 0; i < 4; i++)
		while (!atomic_load(&w[i].ready))
			sched_yield();

	/* The queued-signal sampler. */
	uint64_t rs = 12345;
	unsigned long kills = 0;
	double next_report = t1 + 5;
	int printed_early = 0;
	while (now_s() - t1 < (double)seconds) {
		union sigval sv = { .sival_int = 0 };
		pthread_sigqueue(w[rnd_next(&rs) % 4].th, SIGRTMIN, sv);
		kills++;
		struct timespec ts = { 0, 50000 };
		nanosleep(&ts, NULL);
		if (now_s() > next_report) {
			unsigned long tot = 0, loads = 0, bad = 0;
			for (int i = 0; i < 4; i++)
				tot += w[i].total, loads += w[i].loads,
					bad += w[i].cnt[V_WRONG] + w[i].cb_bad;
			printf("# %.0f s: %lu samples, %lu loads, %lu wrong so far\n", now_s() - t1,
			       tot, loads, bad);
			/* Show the first wrong samples now: a crash may follow. */
			if (bad && !printed_early) {
				print_wrongs(4);
				printed_early = 1;
			}
			fflush(stdout);
			next_report += 5;
		}
	}
	for (int i = 0; i < 4; i++)
		w[i].stop = 1;
	for (int i = 0; i < 4; i++)
		pthread_join(w[i].th, NULL);
	double el = now_s() - t1;

	unsigned long tot = 0, wrong = 0, exact = 0, trunc = 0, in_lib = 0, loads = 0,
		      cbw = 0, cbb = 0, sys_ok = 0, unknown = 0;
	for (int i = 0; i < 4; i++) {
		struct wthr *t = &w[i];
		printf("# thread %d (%s): %lu samples: %lu exact, %lu truncated, %lu wrong, "
		       "%lu in libc/ld.so (stopped there), %lu elsewhere; %lu in an object",
		       i, t->kind == K_SPIN ? "spinner" : "loader", t->total, t->cnt[V_EXACT],
		       t->cnt[V_TRUNC], t->cnt[V_WRONG], t->sys_ok, t->unknown, t->in_lib);
		if (t->kind == K_LOAD) {
			printf("; %lu loads (", t->loads);
			for (int v = 0; v < NVAR; v++)
				printf("%s%c:%lu", v ? " " : "", var_letters[v], t->per_var[v]);
			printf("), %lu callback walks, %lu bad", t->cb_walks, t->cb_bad);
		}
		printf("\n");
		for (int s = 0; s < 16; s++)
			if (t->trunc_stop[s])
				printf("#   truncated by %s: %lu\n", sframe_bt_stop_name(s),
				       t->trunc_stop[s]);
		tot += t->total;
		wrong += t->cnt[V_WRONG];
		exact += t->cnt[V_EXACT];
		trunc += t->cnt[V_TRUNC];
		in_lib += t->in_lib;
		loads += t->loads;
		cbw += t->cb_walks;
		cbb += t->cb_bad;
		sys_ok += t->sys_ok;
		unknown += t->unknown;
	}
	print_wrongs(MAXWRONG);
	printf("# %.1f s: %lu samples (%.0f/s; %lu signals queued), %lu dlopen/dlclose cycles; "
	       "frame 0 in libc/ld.so %lu, elsewhere %lu\n",
	       el, tot, (double)tot / el, kills, loads, sys_ok, unknown);
	CHECK(wrong == 0, "no sample has a wrong frame (%lu of %lu)", wrong, tot);
	CHECK(cbb == 0 && cbw > 0, "walks from normal context inside the objects: %lu, %lu bad",
	      cbw, cbb);
	CHECK(tot > (unsigned long)seconds * 1000 && exact > tot / 2,
	      "enough samples: %lu (%lu exact, %lu truncated)", tot, exact, trunc);
	CHECK(in_lib > (unsigned long)seconds * 20,
	      "samples inside the loaded objects: %lu", in_lib);
	CHECK(loads > (unsigned long)seconds * 20, "dlopen/dlclose cycles: %lu", loads);
	printf("# total %.1f s\n", now_s() - t0);
	CHECK_DONE();
}
