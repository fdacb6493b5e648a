/* The demangler's contract (src/symbols/demangle.h), beyond what
 * t_demangle.sh compares with c++filt: names printed as expected, -1 for
 * what is not a mangled name, a buffer never written past its size (a
 * canary after it), each budget at its bound (a name that needs exactly
 * the budget works, one that needs one more is refused), and the stack a
 * call takes: names run in a signal handler on an alternate stack filled
 * with a pattern first, the bytes overwritten counted. */
#define _GNU_SOURCE
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "check.h"
#include "symbols/demangle.h"

/* The most stack one call may take, in an optimized build without
 * sanitizers (the library's; ASan's redzones and -O0's spills make
 * frames several times larger). */
#define STACK_BUDGET (16 * 1024)
#if defined(__SANITIZE_ADDRESS__)
#define STACK_HELD 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define STACK_HELD 0
#endif
#endif
#if !defined(STACK_HELD) && defined(__OPTIMIZE__)
#define STACK_HELD 1
#elif !defined(STACK_HELD)
#define STACK_HELD 0
#endif

static char out[1 << 16];

static int dm(const char *name, struct sfb_demangle_usage *u)
{
	return sfb_demangle_usage(name, out, sizeof out, u);
}

static void check_known(void)
{
	static const struct {
		const char *in, *want;
	} t[] = {
		{"_ZN3foo3barEv", "foo::bar()"},
		{"_ZNSt6vectorIiSaIiEE9push_backERKi",
		 "std::vector<int, std::allocator<int> >::push_back(int const&)"},
		{"_ZNKSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEE4sizeEv",
		 "std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >::size() const"},
		{"_ZNSsC1EPKcRKSaIcE",
		 "std::basic_string<char, std::char_traits<char>, std::allocator<char> >::basic_string(char const*, std::allocator<char> const&)"},
		{"_ZNSs4_Rep10_M_destroyERKSaIcE", "std::string::_Rep::_M_destroy(std::allocator<char> const&)"},
		{"_Z1fPFivEPA3_iM1AKFvvE", "f(int (*)(), int (*) [3], void (A::*)() const)"},
		{"_ZZ4mainENKUlvE_clEv", "main::{lambda()#1}::operator()() const"},
		{"_ZN12_GLOBAL__N_13fooEv", "(anonymous namespace)::foo()"},
		{"_ZN3fooB5cxx11Ev", "foo[abi:cxx11]()"},
		{"_Z3foov.cold", "foo() [clone .cold]"},
		{"_Z3foov.isra.0.constprop.1", "foo() [clone .isra.0] [clone .constprop.1]"},
		{"_ZTV3Foo", "vtable for Foo"},
		{"_ZTI3Foo", "typeinfo for Foo"},
		{"_ZTS3Foo", "typeinfo name for Foo"},
		{"_ZThn8_N3Foo3barEv", "non-virtual thunk to Foo::bar()"},
		{"_ZTv0_n24_N3Foo3barEv", "virtual thunk to Foo::bar()"},
		{"_ZGVZ3foovE1x", "guard variable for foo()::x"},
		{"_ZTH1x", "TLS init function for x"},
		{"_ZTW1x", "TLS wrapper function for x"},
		{"_ZN1AcviEv", "A::operator int()"},
		{"_ZN1AlsEi", "A::operator<<(int)"},
		{"_Z1fDn", "f(decltype(nullptr))"},
		{"_Z1fOi", "f(int&&)"},
		{"_ZN3foo3barIJiEEEvDpT_", "void foo::bar<int>(int)"},
		{"_ZN3fooUt_E", "foo::{unnamed type#1}"},
		{"_ZN3std2rt10lang_start17h0123456789abcdefE", "std::rt::lang_start"},
		{"_ZN4core3ptr35drop_in_place$LT$std..io..Error$GT$17h0123456789abcdefE",
		 "core::ptr::drop_in_place<std::io::Error>"},
		{"_RNvCs1234_7mycrate3foo", "mycrate::foo"},
		{"_ZNSaIcEC1Ev@GLIBCXX_3.4", "std::allocator<char>::allocator()@GLIBCXX_3.4"},
		{"_Z3foov@@V1", "foo()@@V1"},
		{"_Z1fDF16_DF32xDF16b", "f(_Float16, _Float32x, std::bfloat16_t)"},
		{"_RNvNtCskK7mfDs1mzF_1mu11ncode_cta3gu9gre_6ka8l", "m::\xc3\xbc" "n\xc3\xaf" "code::gr\xc3\xbc\xc3\x9f" "e"},
	};
	for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
		int n = dm(t[i].in, NULL);
		CHECK(n == (int)strlen(t[i].want) && strcmp(out, t[i].want) == 0, "%s -> \"%s\"",
		      t[i].in, n < 0 ? "(refused)" : out);
	}
}

static void check_refused(void)
{
	static const char *const bad[] = {
		"", "main", "_Z", "_Z1", "_Z999foo", "_ZNK", "_Z3fooIiE_", "_Z3foo.",
		"_ZN3fooE_", "_ZSt", "_Z1fS0_", "_Z1fT_", "_R", "_RNvC", "_Rx", "_RNvCs_3fooX",
		"_ZN3foo17h0000000000000000E_", "_GLOBAL__", "__Z3foov", "_Z1fPFvvE(",
		"_Z1fILiEEvv", "_ZN3foo@", "@_Z3foov", "main@V",
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		memset(out, 'x', 8);
		int n = dm(bad[i], NULL);
		CHECK(n == -1 && out[0] == 0, "\"%s\" refused (%d)", bad[i], n);
	}
	CHECK(sfb_demangle(NULL, out, sizeof out) == -1, "NULL name refused");
	CHECK(sfb_demangle("_Z1fv", NULL, 10) == -1, "NULL buffer refused");
	char one = 'x';
	CHECK(sfb_demangle("_Z1fv", &one, 0) == -1 && one == 'x', "size 0: -1, nothing written");
}

/* Every size from 0 to what the name needs: -1 and an empty string until
 * it fits, and never a byte written at OUT[size] or after. */
static void check_sizes(const char *name)
{
	char want[4096], buf[4096 + 64];
	int need = sfb_demangle(name, want, sizeof want);
	int ok = need > 0;
	for (int size = 0; ok && size <= need + 1; size++) {
		memset(buf, 0x5a, sizeof buf);
		int n = sfb_demangle(name, buf, (size_t)size);
		int fits = size > need;
		if (fits ? n != need || strcmp(buf, want) != 0 : n != -1 || (size > 0 && buf[0] != 0))
			ok = 0;
		for (size_t i = (size_t)size; i < (size_t)size + 64; i++)
			if ((unsigned char)buf[i] != 0x5a)
				ok = 0;
		if (!ok)
			printf("# %s at size %d: %d\n", name, size, n);
	}
	CHECK(ok, "%s: -1 below %d bytes, nothing written past the size", name, need + 1);
}

static char *repeat(char *p, const char *s, int n)
{
	size_t len = strlen(s);
	for (int i = 0; i < n; i++, p += len)
		memcpy(p, s, len);
	*p = 0;
	return p;
}

/* "_Z1f" + N times UNIT: a function with N parameters. */
static const char *params(const char *unit, int n)
{
	static char b[SFB_DEMANGLE_MAX_INPUT + 64];
	char *p = b + sizeof "_Z1f" - 1;
	memcpy(b, "_Z1f", 4);
	if ((size_t)n * strlen(unit) + 4 >= sizeof b)
		n = 0;
	repeat(p, unit, n);
	return b;
}

/* f(int*...*): N pointers deep. */
static const char *pointers(int n)
{
	static char b[256];
	char *p = repeat(b + 4, "P", n);
	memcpy(b, "_Z1f", 4);
	memcpy(p, "i", 2);
	return b;
}

/* a::a::...::a, N parts. */
static const char *nested(int n)
{
	static char b[512];
	b[0] = '_', b[1] = 'Z', b[2] = 'N';
	char *p = repeat(b + 3, "1a", n);
	memcpy(p, "E", 2);
	return b;
}

/* The largest N for which GEN(N) demangles; *U what it used, *FAIL what
 * N + 1 used. */
static int largest(const char *(*gen)(int), int limit, struct sfb_demangle_usage *u,
		   struct sfb_demangle_usage *fail)
{
	int n = 0;
	struct sfb_demangle_usage cur;
	for (int i = 1; i < limit; i++) {
		if (dm(gen(i), &cur) < 0) {
			*fail = cur;
			return n;
		}
		n = i;
		*u = cur;
	}
	return n;
}

static const char *int_params(int n) { return params("i", n); }
static const char *ptr_params(int n) { return params("Pi", n); }

static void check_budgets(void)
{
	struct sfb_demangle_usage u = {0}, f = {0};
	char name[SFB_DEMANGLE_MAX_INPUT + 2];

	/* Input: 1024 bytes are read, 1025 are not (a name of one long
	 * identifier, _Z<length><identifier>). */
	int idlen = SFB_DEMANGLE_MAX_INPUT - 6;
	snprintf(name, sizeof name, "_Z%d", idlen);
	memset(name + 6, 'a', (size_t)idlen);
	name[SFB_DEMANGLE_MAX_INPUT] = 0;
	int n1 = sfb_demangle(name, out, sizeof out);
	snprintf(name, sizeof name, "_Z%d", idlen + 1);
	memset(name + 6, 'a', (size_t)idlen + 1);
	name[SFB_DEMANGLE_MAX_INPUT + 1] = 0;
	int n2 = sfb_demangle(name, out, sizeof out);
	CHECK(n1 > 0 && n2 == -1, "input budget: %d bytes demangled (%d), %d refused (%d)",
	      SFB_DEMANGLE_MAX_INPUT, n1, SFB_DEMANGLE_MAX_INPUT + 1, n2);

	/* Parse depth: f(int**...*), each pointer a level. */
	int n = largest(pointers, 200, &u, &f);
	CHECK(u.parse_depth == SFB_DEMANGLE_MAX_PARSE_DEPTH &&
		      f.parse_depth == SFB_DEMANGLE_MAX_PARSE_DEPTH && f.print_depth == 0,
	      "parse depth budget %d: %d pointers demangled at depth %u, %d refused while parsing",
	      SFB_DEMANGLE_MAX_PARSE_DEPTH, n, u.parse_depth, n + 1);

	/* Print depth: a::a::...::a, each part a level of printing. */
	n = largest(nested, 200, &u, &f);
	CHECK(u.print_depth == SFB_DEMANGLE_MAX_PRINT_DEPTH &&
		      f.print_depth == SFB_DEMANGLE_MAX_PRINT_DEPTH && f.parse_depth < SFB_DEMANGLE_MAX_PARSE_DEPTH,
	      "print depth budget %d: %d parts demangled at depth %u, %d refused while printing",
	      SFB_DEMANGLE_MAX_PRINT_DEPTH, n, u.print_depth, n + 1);

	/* Nodes: each int parameter takes two. */
	n = largest(int_params, 1000, &u, &f);
	CHECK(u.nodes == SFB_DEMANGLE_MAX_NODES && f.nodes == SFB_DEMANGLE_MAX_NODES,
	      "node budget %d: %d parameters demangled with %u nodes, %d refused", SFB_DEMANGLE_MAX_NODES, n,
	      u.nodes, n + 1);

	/* Substitutions: each int* parameter is one. */
	n = largest(ptr_params, 500, &u, &f);
	CHECK(u.subs == SFB_DEMANGLE_MAX_SUBS && f.subs == SFB_DEMANGLE_MAX_SUBS,
	      "substitution budget %d: %d pointer parameters demangled with %u, %d refused",
	      SFB_DEMANGLE_MAX_SUBS, n, u.subs, n + 1);

	/* Steps: the same 24-part class printed over and over through a
	 * substitution (SM_, the 24th, is a::...::a), then int (2 steps) and int*
	 * (3 steps) parameters to reach the budget exactly. */
	char *p = name + 4;
	memcpy(name, "_Z1f", 4);
	p = repeat(p, "N", 1);
	p = repeat(p, "1a", 24);
	p = repeat(p, "E", 1);
	struct sfb_demangle_usage base;
	dm(name, &base);
	unsigned per_ref;
	{
		char two[SFB_DEMANGLE_MAX_INPUT + 2];
		memcpy(two, name, (size_t)(p - name));
		strcpy(two + (p - name), "SM_");
		struct sfb_demangle_usage one;
		dm(two, &one);
		per_ref = one.steps - base.steps;
	}
	unsigned refs = (SFB_DEMANGLE_MAX_STEPS - base.steps) / per_ref - 1;
	p = repeat(p, "SM_", (int)refs);
	unsigned left = SFB_DEMANGLE_MAX_STEPS - base.steps - refs * per_ref;
	/* LEFT = 2a + 3b */
	int b3 = left % 2, a2 = (int)(left - 3u * (unsigned)b3) / 2;
	p = repeat(p, "Pi", b3);
	p = repeat(p, "i", a2);
	int ok_n = dm(name, &u);
	repeat(p, "i", 1);
	int bad_n = dm(name, &f);
	CHECK(ok_n > 0 && u.steps == SFB_DEMANGLE_MAX_STEPS && bad_n == -1 &&
		      f.steps == SFB_DEMANGLE_MAX_STEPS + 1,
	      "step budget %d: a %zu-byte name printing %d bytes in %u steps, one parameter more refused",
	      SFB_DEMANGLE_MAX_STEPS, strlen(name) - 1, ok_n, u.steps);
}

/* Parse steps: conversion operators whose template arguments are
 * parsed again when they turn out not to be their type's; nested, the
 * work doubles with each (a fuzzer's find).  The largest that parses
 * stays within the budget, the next stops at the budget plus one. */
static const char *conversions(int n)
{
	static char b[SFB_DEMANGLE_MAX_INPUT + 1];
	char *p = repeat(b, "_ZN1A", 1);
	p = repeat(p, "cvT_IZN1A", n);
	p = repeat(p, "cvT_IbEE", 1);
	repeat(p, "EE", n);
	return b;
}

static void check_parse_steps(void)
{
	struct sfb_demangle_usage u = {0}, f = {0};
	int n = 0;
	for (int i = 1; i < 60; i++) {
		struct sfb_demangle_usage cur;
		dm(conversions(i), &cur);
		if (cur.parse_steps > SFB_DEMANGLE_MAX_PARSE_STEPS) {
			f = cur;
			break;
		}
		n = i;
		u = cur;
	}
	CHECK(u.parse_steps <= SFB_DEMANGLE_MAX_PARSE_STEPS && f.parse_steps == SFB_DEMANGLE_MAX_PARSE_STEPS + 1 &&
		      dm(conversions(n + 1), NULL) == -1,
	      "parse step budget %d: %d nested conversions parsed in %u steps, %d stopped at %u",
	      SFB_DEMANGLE_MAX_PARSE_STEPS, n, u.parse_steps, n + 1, f.parse_steps);
}

/* ---- Stack ---- */

#define ALT_SIZE (256 * 1024)
static uint8_t *alt;
static const char *const *stack_names;
static size_t stack_count;
static volatile int handler_done;

static void on_signal(int sig)
{
	(void)sig;
	static char buf[8192];
	for (size_t i = 0; i < stack_count; i++)
		sfb_demangle(stack_names[i], buf, sizeof buf);
	handler_done = 1;
}

/* Bytes of the alternate stack a handler demangling NAMES overwrote. */
static size_t stack_used(const char *const *names, size_t count)
{
	memset(alt, 0xa5, ALT_SIZE);
	stack_names = names;
	stack_count = count;
	handler_done = 0;
	raise(SIGUSR1);
	size_t i = 0;
	while (i < ALT_SIZE && alt[i] == 0xa5)
		i++;
	return ALT_SIZE - i;
}

/* Names that go as deep as the budgets let them, along the paths that
 * take the most stack: HEAD, K times UNIT, MID, K times CLOSE, for every
 * K up to the input budget. */
static size_t deep_names(char names[][SFB_DEMANGLE_MAX_INPUT + 1], size_t max)
{
	static const struct {
		const char *head, *unit, *mid, *close;
	} t[] = {
		{"_Z1f", "P", "i", ""},
		{"_Z1f", "PF", "v", "vE"},		/* functions returning functions */
		{"_Z1f", "PFv", "i", "E"},		/* ... taking functions */
		{"_Z1f", "A1_", "i", ""},		/* arrays */
		{"_Z1f", "PA1_", "i", ""},
		{"_ZN", "1a", "", "E"},			/* qualified names */
		{"_Z1f", "N1aI", "i", "EE"},		/* templates in templates */
		{"_ZN", "1aIN", "1b", "EE"},
		{"_Z", "Z", "1fv", "E1gv"},		/* local names */
		{"_Z1f", "IXadL_Z1f", "v", "EEE"},	/* encodings in expressions */
		{"_Z1fIX", "pl", "Li1ELi2E", "Li3E"},	/* expressions */
		{"_Z1f", "M1AKF", "v", "vE"},		/* pointers to members */
		{"_Z1f", "RKP", "i", ""},		/* qualifiers */
		{"_Z1f", "IJ", "i", "E"},		/* argument packs */
		{"_Z1f", "DTcl", "1g", "E"},		/* decltype */
		{"_R", "NvNv", "Cs_3foo", ""},		/* Rust paths */
		{"_R", "INv", "Cs_1a", "E"},		/* Rust generics */
		{"_RNvC", "", "s_3foo", ""},
	};
	size_t n = 0;
	for (size_t i = 0; i < sizeof t / sizeof t[0] && n < max; i++) {
		size_t unit = strlen(t[i].unit) + strlen(t[i].close);
		for (int k = 1; k < 400 && n < max; k++) {
			if (strlen(t[i].head) + strlen(t[i].mid) + unit * (size_t)k > SFB_DEMANGLE_MAX_INPUT)
				break;
			char *p = repeat(names[n], t[i].head, 1);
			p = repeat(p, t[i].unit, k);
			p = repeat(p, t[i].mid, 1);
			repeat(p, t[i].close, k);
			n++;
		}
	}
	return n;
}

static void check_stack(void)
{
	/* memcheck runs a handler on a stack of its own making and marks the
	 * alternate stack unaddressable below the handler's frames: the
	 * pattern cannot be read back there. */
	if (getenv("SFB_VALGRIND")) {
		printf("# stack use not measured under valgrind\n");
		return;
	}
	alt = mmap(NULL, ALT_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (alt == MAP_FAILED) {
		CHECK(0, "mmap of the alternate stack");
		return;
	}
	stack_t ss = {.ss_sp = alt, .ss_size = ALT_SIZE};
	struct sigaction sa = {.sa_handler = on_signal, .sa_flags = SA_ONSTACK};
	sigemptyset(&sa.sa_mask);
	if (sigaltstack(&ss, NULL) != 0 || sigaction(SIGUSR1, &sa, NULL) != 0) {
		CHECK(0, "sigaltstack/sigaction");
		return;
	}
	/* The signal frame and the handler's own use, without a name. */
	size_t frame = stack_used(NULL, 0);
	static char names[6000][SFB_DEMANGLE_MAX_INPUT + 1];
	size_t count = deep_names(names, 6000);
	static const char *ptrs[6000];
	size_t worst = 0, worst_i = 0;
	for (size_t i = 0; i < count; i++) {
		ptrs[i] = names[i];
		size_t used = stack_used(&ptrs[i], 1);
		if (used > worst) {
			worst = used;
			worst_i = i;
		}
	}
	CHECK(handler_done && (!STACK_HELD || worst - frame <= STACK_BUDGET),
	      "stack: %zu bytes at most over %zu deep names (%.40s...), %zu with the signal frame; budget %d%s",
	      worst - frame, count, names[worst_i], worst, STACK_BUDGET,
	      STACK_HELD ? "" : " (not held to it: sanitizers or -O0)");
	if (!STACK_HELD)
		return;
	/* The same names on an alternate stack of 16 KiB above a guard page:
	 * they fit, with the signal frame. */
	uint8_t *small = mmap(NULL, 4096 + STACK_BUDGET + frame, PROT_READ | PROT_WRITE,
			      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (small == MAP_FAILED || mprotect(small, 4096, PROT_NONE) != 0) {
		CHECK(0, "guarded alternate stack");
		return;
	}
	stack_t ss2 = {.ss_sp = small + 4096, .ss_size = STACK_BUDGET + frame};
	sigaltstack(&ss2, NULL);
	stack_names = ptrs;
	stack_count = count;
	handler_done = 0;
	raise(SIGUSR1);
	CHECK(handler_done, "all %zu deep names demangled on a %d-byte stack (+%zu for the signal frame) above a guard page",
	      count, STACK_BUDGET, frame);
}

int main(void)
{
	check_known();
	check_refused();
	check_sizes("_ZNSt6vectorIiSaIiEE9push_backERKi");
	check_sizes("_Z1fPFivEPA3_iM1AKFvvE");
	check_sizes("_Z1fIvIEEvv"); /* ", " written, then trimmed (an empty pack) */
	check_sizes("_ZN3std2rt10lang_start17h0123456789abcdefE");
	check_sizes("_RNvNtCskK7mfDs1mzF_1mu11ncode_cta3gu9gre_6ka8l");
	check_budgets();
	check_parse_steps();
	check_stack();
	CHECK_DONE();
}
