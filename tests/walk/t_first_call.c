/* The very first call into the library in the whole process happens in a
 * SIGSEGV handler, while another thread loops dlopen()/dlclose() on
 * walk_churn_a.so.  Each round runs in a fork()ed child that has never
 * called the library (the parent never does either), with alarm() as a hang
 * guard.  The handler walks its ucontext and must find exactly the chain
 * from the faulting function to main, ending in libc with no-unwind-info.
 * Even rounds fault in the program; odd rounds fault inside
 * walk_fc_lib.so (dlopen()ed by the child, never seen by the library
 * before the fault), called from the program.  The child reports with its
 * exit status: 0 exact, 2 truncated, 3 wrong, 4 no fault, 5 setup;
 * SIGALRM or a crash shows as a signal. */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <sys/wait.h>
#include <ucontext.h>

#include "sig_install.h"
#include "walk_common.h"
#include "uc_regs.h"

#define NF 32

int main(void);
static int *volatile null_ptr;
static char churn_path[PATH_MAX], fc_path[PATH_MAX];

static _Atomic unsigned long churn_iters;
static volatile int churn_stop;

static void *churn_thread(void *arg)
{
	(void)arg;
	while (!churn_stop) {
		void *h = dlopen(churn_path, RTLD_NOW | RTLD_LOCAL);
		if (!h) {
			sig_puts(1, "# child: dlopen failed\n");
			_exit(5);
		}
		int (*depth)(void) = (int (*)(void))dlsym(h, "churn_depth");
		if (depth)
			w_sink += (unsigned long)depth();
		dlclose(h);
		atomic_fetch_add(&churn_iters, 1);
	}
	return NULL;
}

/* Expected chain (innermost first), for the handler. */
static int chain[8], chain_len;
static struct wfn dyn[2];
static struct wctx ctx;
static int child_idx;

static void segv_handler(int sig, siginfo_t *si, void *ucv)
{
	(void)sig;
	(void)si;
	const ucontext_t *uc = ucv;
	struct sframe_bt_frame f[NF];
	struct sframe_bt_status st;
	/* The first call into the library in this process. */
	int n = sframe_backtrace_ex(uc, f, NF, 0, &st);
	int bad;
	int v = verify_chain(&ctx, f, n, st.stop, NF, chain, chain_len, &bad);
	if (n < 1 || f[0].pc != (uintptr_t)UC_PC(uc))
		v = V_WRONG;
	if (v != V_EXACT) {
		sig_puts(1, "# child ");
		sig_putd(1, child_idx);
		sig_puts(1, ": ");
		sig_puts(1, verdict_name[v]);
		sig_puts(1, " walk, stop ");
		sig_puts(1, sframe_bt_stop_name(st.stop));
		sig_puts(1, ", bad frame ");
		sig_putd(1, bad);
		sig_puts(1, ":");
		for (int i = 0; i < n; i++) {
			sig_puts(1, " ");
			int id = wfn_lookup(&ctx, lookup_pc(&f[i]));
			sig_puts(1, id >= 0 ? wfn_name(&ctx, id) : in_libc(f[i].pc) ? "[libc]" : "?");
			sig_puts(1, "@");
			sig_putx(1, f[i].pc);
		}
		sig_puts(1, "\n");
	}
	_exit(v == V_EXACT ? 0 : v == V_TRUNC ? 2 : 3);
}

NOINL int fc_leaf(int x)
{
	SPIN(10);
	*null_ptr = x;
	return x + (int)w_sink;
}
NOINL int fc_mid(int x)
{
	int r = fc_leaf(x + 1);
	return r * 3;
}
NOINL int fc_top(int x)
{
	int r = fc_mid(x + 2);
	return r + 7;
}
NOINL int fc_top_lib(int (*fn)(int), int x)
{
	int r = fn(x + 2);
	return r + 9;
}

NOINL int child_run(int idx)
{
	child_idx = idx;
	alarm(10);
	sig_install(SIGSEGV, segv_handler, 0);

	int (*lib_mid)(int) = NULL;
	if (idx & 1) {
		void *h = dlopen(fc_path, RTLD_NOW | RTLD_LOCAL);
		void *leaf = h ? dlsym(h, "fclib_leaf") : NULL;
		lib_mid = h ? (int (*)(int))dlsym(h, "fclib_mid") : NULL;
		if (!lib_mid || !leaf || wfn_range(leaf, &dyn[0].lo, &dyn[0].hi) ||
		    wfn_range((void *)lib_mid, &dyn[1].lo, &dyn[1].hi))
			_exit(5);
		dyn[0].name = "fclib_leaf";
		dyn[1].name = "fclib_mid";
		ctx = (struct wctx){ dyn, 2 };
		chain[chain_len++] = WFN_DYN_BASE;
		chain[chain_len++] = WFN_DYN_BASE + 1;
		chain[chain_len++] = WFN(fc_top_lib);
	} else {
		chain[chain_len++] = WFN(fc_leaf);
		chain[chain_len++] = WFN(fc_mid);
		chain[chain_len++] = WFN(fc_top);
	}
	chain[chain_len++] = WFN(child_run);
	chain[chain_len++] = WFN(main);

	pthread_t th;
	if (pthread_create(&th, NULL, churn_thread, NULL) != 0)
		_exit(5);
	/* Fault after a varying number of dlopen/dlclose cycles, and at a
	 * varying point within one. */
	unsigned long want = 1 + (unsigned long)(idx * 7 % 23);
	while (atomic_load(&churn_iters) < want)
		sched_yield();
	SPIN((unsigned long)(idx * 3001 % 50000));
	int r = (idx & 1) ? fc_top_lib(lib_mid, idx) : fc_top(idx);
	w_sink += (unsigned long)r;
	return 4; /* no fault */
}

int main(void)
{
	objs_init();
	build_path("walk_churn_a.so", churn_path, sizeof churn_path);
	build_path("walk_fc_lib.so", fc_path, sizeof fc_path);
	int rounds = (int)env_long("SFB_FIRST_CALL_ROUNDS", 40);
	int ok = 0, results[8] = { 0 };
	double t0 = now_s();
	for (int i = 0; i < rounds; i++) {
		fflush(stdout);
		pid_t pid = fork();
		if (pid < 0) {
			perror("fork");
			return 1;
		}
		if (pid == 0)
			_exit(child_run(i));
		int status;
		if (waitpid(pid, &status, 0) != pid) {
			perror("waitpid");
			return 1;
		}
		int code = WIFEXITED(status) ? WEXITSTATUS(status) : 100 + WTERMSIG(status);
		if (code == 0)
			ok++;
		else
			printf("# child %d (%s): %s %d\n", i, (i & 1) ? "fault in walk_fc_lib.so"
								 : "fault in the program",
			       WIFEXITED(status) ? "exit status" : "killed by signal",
			       WIFEXITED(status) ? code : WTERMSIG(status));
		results[code == 0 ? 0 : code == 2 ? 1 : code == 3 ? 2 : 3]++;
	}
	CHECK(ok == rounds,
	      "first call in a SIGSEGV handler during dlopen churn: %d of %d children walked the "
	      "exact chain (%d truncated, %d wrong, %d other failures)",
	      ok, rounds, results[1], results[2], results[3]);
	printf("# took %.2f s\n", now_s() - t0);
	CHECK_DONE();
}
