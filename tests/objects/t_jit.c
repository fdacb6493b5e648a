/* Registered code (backtrace.h, "JIT code"): machine code copied into an
 * anonymous mapping, main -> jit_mid -> jit_leaf -> callback, registered
 * with each row source (.eh_frame, .eh_frame + .eh_frame_hdr, SFrame V1,
 * V2, V3, the frame-pointer rule); the callback walks and every JIT
 * frame and the caller's must be there, to the outermost frame.  Then
 * refused registrations (each error code, nothing changed), names, rows
 * without a CFA rule (registered, the walk stopping at them), and
 * registering and unregistering under walks from another thread and
 * from signal handlers on the unregistering thread, which run the JIT
 * code and walk through it.  x86-64 only: the
 * code is x86-64's. */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "backtrace.h"
#include "check.h"
#include "objects/jit_registry.h"
#include "rows/sframe_builder.h"

#if defined(__x86_64__)

/* jit_mid: push %rbp; mov %rsp,%rbp; call jit_leaf; pop %rbp; ret
 * jit_leaf (CFI): sub $8,%rsp; call *%rdi; add $8,%rsp; ret
 * jit_leaf (frame pointer): push %rbp; mov %rsp,%rbp; call *%rdi; pop %rbp; ret */
#define MID 0
#define MID_SIZE 11
#define MID_RA 9
#define LEAF 16
#define LEAF_SIZE 11
#define LEAF_RA 22
#define CODE_SIZE 32
static const uint8_t code_cfi[CODE_SIZE] = {
	0x55, 0x48, 0x89, 0xe5, 0xe8, 0x07, 0, 0, 0, 0x5d, 0xc3, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc,
	0x48, 0x83, 0xec, 0x08, 0xff, 0xd7, 0x48, 0x83, 0xc4, 0x08, 0xc3, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc,
};
static const uint8_t code_fp[CODE_SIZE] = {
	0x55, 0x48, 0x89, 0xe5, 0xe8, 0x07, 0, 0, 0, 0x5d, 0xc3, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc,
	0x55, 0x48, 0x89, 0xe5, 0xff, 0xd7, 0x5d, 0xc3, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc,
};
#define FP_LEAF_RA 22

typedef void (*jit_fn)(void (*cb)(void));

/* ---- .eh_frame and .eh_frame_hdr, written from the DWARF spec ------------ */

struct buf {
	uint8_t *p;
	size_t n;
};

static void put(struct buf *b, const void *v, size_t n)
{
	memcpy(b->p + b->n, v, n);
	b->n += n;
}
static void put1(struct buf *b, uint8_t v)
{
	put(b, &v, 1);
}
static void put4(struct buf *b, uint32_t v)
{
	put(b, &v, 4);
}
static void pad4(struct buf *b, size_t rec)
{
	while ((b->n - rec) % 8)
		put1(b, 0); /* DW_CFA_nop */
}

static const uint8_t mid_cfa[] = { 0x41, 0x0e, 16, 0x86, 2, 0x43, 0x0d, 6, 0x46, 0x0c, 7, 8 };
static const uint8_t leaf_cfa[] = { 0x44, 0x0e, 16, 0x46, 0x0e, 8 };

/* CIE (zR, pcrel sdata4) then one FDE per function; returns the length,
 * without terminator; fde_at[] receives each FDE's offset. */
static size_t write_eh_frame(uint8_t *out, uintptr_t code, size_t fde_at[2], bool bad_range)
{
	struct buf b = { out, 0 };
	put4(&b, 0);
	put4(&b, 0); /* CIE id */
	put1(&b, 1);
	put(&b, "zR", 3);
	put1(&b, 1);    /* code alignment */
	put1(&b, 0x78); /* data alignment -8 */
	put1(&b, 16);   /* RA column */
	put1(&b, 1);
	put1(&b, 0x1b);
	put(&b, (const uint8_t[]){ 0x0c, 7, 8, 0x90, 1 }, 5);
	pad4(&b, 0);
	uint32_t len = (uint32_t)(b.n - 4);
	memcpy(out, &len, 4);
	for (int f = 0; f < 2; f++) {
		size_t rec = b.n;
		fde_at[f] = rec;
		put4(&b, 0);
		put4(&b, (uint32_t)(b.n - 0));
		uintptr_t fn = code + (f ? LEAF : MID);
		int32_t rel = (int32_t)(fn - (uintptr_t)(out + b.n));
		put4(&b, (uint32_t)rel);
		put4(&b, f ? LEAF_SIZE + (bad_range ? 64 : 0) : MID_SIZE);
		put1(&b, 0);
		if (f)
			put(&b, leaf_cfa, sizeof leaf_cfa);
		else
			put(&b, mid_cfa, sizeof mid_cfa);
		pad4(&b, rec);
		len = (uint32_t)(b.n - rec - 4);
		memcpy(out + rec, &len, 4);
	}
	return b.n;
}

/* .eh_frame_hdr after an .eh_frame at frame: version 1, eh_frame_ptr
 * pcrel sdata4, count udata4, table datarel sdata4. */
static size_t write_hdr(uint8_t *out, const uint8_t *frame, uintptr_t code,
			const size_t fde_at[2])
{
	struct buf b = { out, 0 };
	put(&b, (const uint8_t[]){ 1, 0x1b, 0x03, 0x3b }, 4);
	put4(&b, (uint32_t)(int32_t)((uintptr_t)frame - (uintptr_t)(out + 4)));
	put4(&b, 2);
	for (int f = 0; f < 2; f++) {
		put4(&b, (uint32_t)(int32_t)(code + (f ? LEAF : MID) - (uintptr_t)out));
		put4(&b, (uint32_t)(int32_t)((uintptr_t)frame + fde_at[f] - (uintptr_t)out));
	}
	return b.n;
}

/* SFrame for the CFI code, any version. */
static size_t write_sframe(uint8_t *out, size_t cap, unsigned version, uintptr_t code)
{
	static struct sb b;
	sb_init(&b, version, SFB_ABI_AMD64_LE, SFB_F_FDE_SORTED, (uintptr_t)out);
	sb_fde(&b, code + MID, MID_SIZE, SB_INFO(SFB_FRE_TYPE_ADDR1, 0, 0), 0, 0);
	SB_FRE(&b, 0, SB_CFA_SP, 1, 8);
	SB_FRE(&b, 1, SB_CFA_SP, 1, 16, -16);
	SB_FRE(&b, 4, SB_CFA_FP, 1, 16, -16);
	SB_FRE(&b, 10, SB_CFA_SP, 1, 8);
	sb_fde(&b, code + LEAF, LEAF_SIZE, SB_INFO(SFB_FRE_TYPE_ADDR1, 0, 0), 0, 0);
	SB_FRE(&b, 0, SB_CFA_SP, 1, 8);
	SB_FRE(&b, 4, SB_CFA_SP, 1, 16);
	SB_FRE(&b, 10, SB_CFA_SP, 1, 8);
	return sb_finish(&b, out, cap);
}

/* ---- Walking through the code ------------------------------------------ */

static uint8_t *page; /* code at page, tables at page + 4096 */
#define TABLES (page + 4096)

static struct sframe_bt_frame frames[64];
static struct sframe_bt_status status;
static int nframes;

static __attribute__((noinline)) void callback(void)
{
	nframes = sframe_backtrace_ex(NULL, frames, 64, 0, &status);
}

static __attribute__((noinline)) void run_jit(void)
{
	((jit_fn)(uintptr_t)page)(callback);
	__asm__ volatile("" ::: "memory");
}

static int find_pc(uintptr_t pc)
{
	for (int i = 0; i < nframes; i++)
		if (frames[i].pc == pc)
			return i;
	return -1;
}

/* Did the walk go callback -> leaf -> mid -> run_jit, to the end? */
static void check_walk(const char *what, unsigned leaf_ra, int source)
{
	nframes = 0;
	run_jit();
	int leaf = find_pc((uintptr_t)page + leaf_ra), mid = find_pc((uintptr_t)page + MID_RA);
	bool caller = mid >= 0 && mid + 1 < nframes &&
		      frames[mid + 1].pc - (uintptr_t)run_jit < 64;
	CHECK(leaf >= 0 && mid == leaf + 1 && caller && status.stop == SFRAME_BT_STOP_OUTERMOST,
	      "%s: callback -> jit_leaf -> jit_mid -> run_jit, whole (%d frames, stop %s)", what,
	      nframes, sframe_bt_stop_name(status.stop));
	if (leaf >= 0 && mid >= 0)
		CHECK(frames[leaf + 1].source == source && frames[mid + 1].source == source,
		      "%s: JIT frames' rules from source %d (%d, %d)", what, source,
		      frames[leaf + 1].source, frames[mid + 1].source);
}

static void install(const uint8_t *code)
{
	mprotect(page, 4096, PROT_READ | PROT_WRITE);
	memcpy(page, code, CODE_SIZE);
	mprotect(page, 4096, PROT_READ | PROT_EXEC);
}

static struct sframe_jit_code eh_code(size_t *len)
{
	size_t fde_at[2];
	*len = write_eh_frame(TABLES, (uintptr_t)page, fde_at, false);
	return (struct sframe_jit_code){ .start = (uintptr_t)page,
					 .end = (uintptr_t)page + CODE_SIZE,
					 .kind = SFRAME_JIT_EH_FRAME,
					 .tables = TABLES,
					 .tables_size = *len };
}

static void test_sources(void)
{
	install(code_cfi);
	nframes = 0;
	run_jit();
	CHECK(status.stop == SFRAME_BT_STOP_NO_OBJECT || status.stop == SFRAME_BT_STOP_BAD_RA ||
		      find_pc((uintptr_t)page + MID_RA) < 0,
	      "unregistered code: the walk stops in it (%s)", sframe_bt_stop_name(status.stop));

	size_t len;
	struct sframe_jit_code c = eh_code(&len);
	CHECK(sframe_jit_register(&c) == 0, "register .eh_frame");
	check_walk(".eh_frame", LEAF_RA, SFRAME_BT_FROM_EH_FRAME);
	CHECK(sframe_jit_unregister(c.start) == 0, "unregister .eh_frame");

	size_t fde_at[2];
	len = write_eh_frame(TABLES, (uintptr_t)page, fde_at, false);
	memset(TABLES + len, 0, 4); /* terminator, as __register_frame() has it */
	size_t hlen = write_hdr(TABLES + len + 4, TABLES, (uintptr_t)page, fde_at);
	c.kind = SFRAME_JIT_EH_FRAME_HDR;
	c.tables_size = len + 4 + hlen;
	c.hdr_size = hlen;
	int err = sframe_jit_register(&c);
	CHECK(err == 0, "register .eh_frame + .eh_frame_hdr (%s)", sframe_jit_err_name(err));
	check_walk(".eh_frame_hdr", LEAF_RA, SFRAME_BT_FROM_EH_FRAME);
	CHECK(sframe_jit_unregister(c.start) == 0, "unregister .eh_frame + .eh_frame_hdr");

	for (unsigned v = 1; v <= 3; v++) {
		size_t n = write_sframe(TABLES, 4096, v, (uintptr_t)page);
		struct sframe_jit_code s = { .start = (uintptr_t)page,
					     .end = (uintptr_t)page + CODE_SIZE,
					     .kind = SFRAME_JIT_SFRAME,
					     .tables = TABLES,
					     .tables_size = n };
		int err = sframe_jit_register(&s);
		CHECK(n && err == 0, "register SFrame V%u (%s)", v, sframe_jit_err_name(err));
		char what[32];
		snprintf(what, sizeof what, "SFrame V%u", v);
		check_walk(what, LEAF_RA, SFRAME_BT_FROM_SFRAME);
		CHECK(sframe_jit_unregister(s.start) == 0, "unregister SFrame V%u", v);
	}

	install(code_fp);
	struct sframe_jit_code f = { .start = (uintptr_t)page, .end = (uintptr_t)page + CODE_SIZE,
				     .kind = SFRAME_JIT_FRAME_POINTER };
	CHECK(sframe_jit_register(&f) == 0, "register the frame-pointer rule");
	check_walk("frame pointer", FP_LEAF_RA, SFRAME_BT_FROM_FRAME_POINTER);
	CHECK(sframe_jit_unregister(f.start) == 0, "unregister the frame-pointer rule");
	install(code_cfi);
	CHECK(sfb_jit_count() == 0, "nothing left registered");
}

/* ---- Refusals ------------------------------------------------------------ */

static void expect(const struct sframe_jit_code *c, int want, const char *what)
{
	int err = sframe_jit_register(c);
	CHECK(err == want && sfb_jit_count() == 0,
	      "%s: %s (want %s), nothing registered", what, sframe_jit_err_name(err),
	      sframe_jit_err_name(want));
	if (err == 0)
		sframe_jit_unregister(c->start);
}

static void test_refusals(void)
{
	size_t len;
	struct sframe_jit_code c = eh_code(&len), t;
	expect(NULL, SFRAME_JIT_E_ARG, "NULL");
	t = c;
	t.end = t.start;
	expect(&t, SFRAME_JIT_E_ARG, "empty range");
	t = c;
	t.kind = 9;
	expect(&t, SFRAME_JIT_E_ARG, "unknown kind");
	t = c;
	t.tables = NULL;
	expect(&t, SFRAME_JIT_E_ARG, "no tables");
	t = c;
	t.end = t.start + 8; /* the FDEs reach past it */
	expect(&t, SFRAME_JIT_E_OUTSIDE, "FDEs outside the range");
	size_t fde_at[2];
	len = write_eh_frame(TABLES, (uintptr_t)page, fde_at, true);
	t = c;
	t.tables_size = len;
	expect(&t, SFRAME_JIT_E_OUTSIDE, "an FDE's range past the code");
	len = write_eh_frame(TABLES, (uintptr_t)page, fde_at, false);
	TABLES[9] = 'Q'; /* unknown augmentation */
	expect(&c, SFRAME_JIT_E_TABLES, "malformed CIE");
	len = write_eh_frame(TABLES, (uintptr_t)page, fde_at, false);
	t = c;
	t.tables_size = len - 3;
	expect(&t, SFRAME_JIT_E_TABLES, "truncated .eh_frame");
	size_t n = write_sframe(TABLES, 4096, 2, (uintptr_t)page);
	TABLES[0] ^= 0xff;
	t = (struct sframe_jit_code){ .start = c.start, .end = c.end, .kind = SFRAME_JIT_SFRAME,
				      .tables = TABLES, .tables_size = n };
	expect(&t, SFRAME_JIT_E_TABLES, "SFrame with a bad magic");
	n = write_sframe(TABLES, 4096, 2, (uintptr_t)page);
	t.end = t.start + 12;
	expect(&t, SFRAME_JIT_E_OUTSIDE, "SFrame FDEs outside the range");
	t = (struct sframe_jit_code){ .start = c.start, .end = c.end,
				      .kind = SFRAME_JIT_FRAME_POINTER,
				      .names = (const struct sframe_jit_name[]){
					      { c.start, 64, "too_long" } },
				      .n_names = 1 };
	expect(&t, SFRAME_JIT_E_OUTSIDE, "a name outside the range");

	write_eh_frame(TABLES, (uintptr_t)page, fde_at, false);
	CHECK(sframe_jit_register(&c) == 0, "register");
	t = (struct sframe_jit_code){ .start = c.start + 8, .end = c.start + 100,
				      .kind = SFRAME_JIT_FRAME_POINTER };
	int err = sframe_jit_register(&t);
	CHECK(err == SFRAME_JIT_E_OVERLAP && sfb_jit_count() == 1, "overlap: %s",
	      sframe_jit_err_name(err));
	t.start = c.start - 8;
	t.end = c.start + 1;
	CHECK(sframe_jit_register(&t) == SFRAME_JIT_E_OVERLAP, "overlap from below");
	t.end = c.start;
	CHECK(sframe_jit_register(&t) == 0, "adjacent below: registered");
	CHECK(sframe_jit_unregister(t.start) == 0, "adjacent below: unregistered");
	CHECK(sframe_jit_unregister(c.start + 1) == SFRAME_JIT_E_NOT_REGISTERED,
	      "unregister inside a range: not registered");
	CHECK(sframe_jit_unregister(c.start) == 0, "unregister");
	CHECK(sframe_jit_unregister(c.start) == SFRAME_JIT_E_NOT_REGISTERED,
	      "unregister twice: not registered");
	nframes = 0;
	run_jit();
	CHECK(find_pc((uintptr_t)page + MID_RA) < 0, "after unregistering, no JIT frame");
	CHECK(strcmp(sframe_jit_err_name(SFRAME_JIT_E_BUSY), "busy") == 0 &&
		      strcmp(sframe_jit_err_name(99), "unknown") == 0,
	      "error names");
}

/* ---- Names ---------------------------------------------------------------- */

static void test_names(void)
{
	struct sframe_jit_name names[] = {
		{ (uintptr_t)page + LEAF, LEAF_SIZE, "jit_leaf" },
		{ (uintptr_t)page + MID, MID_SIZE, "jit_mid" },
	};
	struct sframe_jit_code c = { .start = (uintptr_t)page, .end = (uintptr_t)page + CODE_SIZE,
				     .kind = SFRAME_JIT_FRAME_POINTER, .name = "jit_module",
				     .names = names, .n_names = 2 };
	CHECK(sframe_jit_register(&c) == 0, "register with names");
	char out[16];
	uintptr_t start = 0;
	size_t size = 0;
	CHECK(sfb_jit_name((uintptr_t)page + MID_RA, out, sizeof out, &start, &size) &&
		      !strcmp(out, "jit_mid") && start == (uintptr_t)page && size == MID_SIZE,
	      "name in the table: %s", out);
	CHECK(sfb_jit_name((uintptr_t)page + LEAF + 3, out, sizeof out, &start, &size) &&
		      !strcmp(out, "jit_leaf"),
	      "second name: %s", out);
	CHECK(sfb_jit_name((uintptr_t)page + 13, out, sizeof out, &start, &size) &&
		      !strcmp(out, "jit_module") && size == CODE_SIZE,
	      "between functions: the range's name: %s", out);
	CHECK(sfb_jit_name((uintptr_t)page + MID, out, 4, &start, &size) && !strcmp(out, "jit"),
	      "truncated to the buffer: %s", out);
	/* sframe_symbolize() names registered code before any perf map. */
	static char scratch[SFRAME_SYMBOLIZE_SCRATCH];
	struct sframe_symbol sym;
	CHECK(sframe_symbolize((uintptr_t)page + MID + 5, &sym, scratch, sizeof scratch) == 1 &&
		      !strcmp(sym.name, "jit_mid") && sym.name_offset == 5 &&
		      !strcmp(sym.object, "[jit]"),
	      "sframe_symbolize: %s+%#zx in %s", sym.name, (size_t)sym.name_offset, sym.object);
	CHECK(sframe_jit_unregister(c.start) == 0 &&
		      !sfb_jit_name((uintptr_t)page + MID, out, sizeof out, &start, &size),
	      "no name once unregistered");
}

/* ---- Rows without a CFA rule --------------------------------------------- */

/* As LuaJIT registers its machine code: a CIE without initial
 * instructions, FDEs of nops.  Registered; a walk keeps the JIT frame
 * and stops there with bad-eh-frame (not no-object, which would lose
 * the frame). */
static void test_no_cfa_rule(void)
{
	size_t fde_at[2];
	size_t len = write_eh_frame(TABLES, (uintptr_t)page, fde_at, false);
	/* The CIE's instructions follow its 17 bytes of header, an FDE's
	 * its 17 (length, CIE pointer, address, size, augmentation). */
	memset(TABLES + 17, 0, 5);
	memset(TABLES + fde_at[0] + 17, 0, sizeof mid_cfa);
	memset(TABLES + fde_at[1] + 17, 0, sizeof leaf_cfa);
	struct sframe_jit_code c = { .start = (uintptr_t)page,
				     .end = (uintptr_t)page + CODE_SIZE,
				     .kind = SFRAME_JIT_EH_FRAME,
				     .tables = TABLES,
				     .tables_size = len };
	int err = sframe_jit_register(&c);
	CHECK(err == 0, "rows without a CFA rule: registered (%s)", sframe_jit_err_name(err));
	nframes = 0;
	run_jit();
	int leaf = find_pc((uintptr_t)page + LEAF_RA);
	CHECK(leaf >= 0 && leaf == nframes - 1 && status.stop == SFRAME_BT_STOP_BAD_EH_FRAME,
	      "rows without a CFA rule: the walk keeps the JIT frame and stops there (frame %d "
	      "of %d, %s)",
	      leaf, nframes, sframe_bt_stop_name(status.stop));
	CHECK(sframe_jit_unregister(c.start) == 0 && sfb_jit_count() == 0,
	      "rows without a CFA rule: unregistered");
}

/* ---- Churn under walks ----------------------------------------------------- */

static atomic_bool stop_walkers;
static atomic_long walks, whole_walks, handler_walks;

/* Another thread walks through the JIT code all along. */
static void *walker(void *arg)
{
	(void)arg;
	while (!atomic_load(&stop_walkers)) {
		run_jit();
		atomic_fetch_add(&walks, 1);
		if (find_pc((uintptr_t)page + MID_RA) >= 0)
			atomic_fetch_add(&whole_walks, 1);
	}
	return NULL;
}

static atomic_long handler_jit_walks;

/* A walk through the JIT code from a signal handler on the unregistering
 * thread: its read sections open while that thread may be waiting for
 * readers. */
static __attribute__((noinline)) void handler_callback(void)
{
	struct sframe_bt_frame f[32];
	struct sframe_bt_status st;
	int n = sframe_backtrace_ex(NULL, f, 32, 0, &st);
	for (int i = 0; i < n; i++)
		if (f[i].pc == (uintptr_t)page + MID_RA)
			atomic_fetch_add(&handler_jit_walks, 1);
}

static void on_prof(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)si;
	(void)uc;
	((jit_fn)(uintptr_t)page)(handler_callback);
	atomic_fetch_add(&handler_walks, 1);
}

static void test_churn(void)
{
	/* The walker's own frames are in `frames`: this thread does not
	 * walk through the code, only (in its handler) through itself. */
	size_t len;
	struct sframe_jit_code c = eh_code(&len);
	struct sframe_jit_code other = { .start = (uintptr_t)page + 2048,
					 .end = (uintptr_t)page + 4096,
					 .kind = SFRAME_JIT_FRAME_POINTER };
	struct sigaction sa = { .sa_sigaction = on_prof, .sa_flags = SA_SIGINFO | SA_RESTART };
	sigaction(SIGPROF, &sa, NULL);
	/* Signals to this thread only, every 50 us. */
	struct sigevent sev = { .sigev_notify = SIGEV_THREAD_ID, .sigev_signo = SIGPROF };
#ifdef sigev_notify_thread_id
	sev.sigev_notify_thread_id = gettid();
#else
	sev._sigev_un._tid = gettid();
#endif
	timer_t timer;
	timer_create(CLOCK_MONOTONIC, &sev, &timer);
	long every = under_valgrind() ? 5000000 : 50000;
	struct itimerspec its = { { 0, every }, { 0, every } };
	timer_settime(timer, 0, &its, NULL);
	pthread_t t;
	pthread_create(&t, NULL, walker, NULL);
	/* Valgrind runs one thread at a time, and a wait for readers lasts
	 * until it schedules them. */
	int rounds = under_valgrind() ? 300 : 20000, bad = 0;
	for (int i = 0; i < rounds; i++) {
		bad += sframe_jit_register(&c) != 0;
		bad += sframe_jit_register(&other) != 0;
		bad += sframe_jit_unregister(other.start) != 0;
		bad += sframe_jit_unregister(c.start) != 0;
	}
	timer_delete(timer);
	atomic_store(&stop_walkers, true);
	pthread_join(t, NULL);
	signal(SIGPROF, SIG_IGN);
	CHECK(bad == 0 && sfb_jit_count() == 0,
	      "%d rounds of register/unregister under walks: all succeeded", rounds);
	printf("# %ld walks through the code (%ld whole) on another thread; %ld signal handlers "
	       "on this one ran the code and walked (%ld through it)\n",
	       atomic_load(&walks), atomic_load(&whole_walks), atomic_load(&handler_walks),
	       atomic_load(&handler_jit_walks));
	CHECK(atomic_load(&walks) > 0, "the other thread walked meanwhile");
}

int main(void)
{
	page = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (page == MAP_FAILED)
		return 1;
	test_sources();
	test_refusals();
	test_names();
	test_no_cfa_rule();
	test_churn();
	CHECK_DONE();
}

#else
int main(void)
{
	printf("ok - # SKIP the JIT code is x86-64's\n");
	return 0;
}
#endif
