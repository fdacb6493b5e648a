/* Run by t_jit_frame_info.sh under LD_PRELOAD of libsframebt-preload.so:
 * a JIT of one function, registered the ways libgcc offers, unmodified.
 *
 * The function (x86-64 machine code written here: sub $8,%rsp; two nops
 * of 5 and 1 bytes; call *%rdi; add $8,%rsp; ret: the call 10 bytes in, as
 * a return address is taken for one only with room for the longest call
 * before it) and its .eh_frame (one CIE, one FDE, a zero
 * terminator) are registered in turn with __register_frame_info(),
 * __register_frame_info_bases() and __register_frame(), all of which the
 * preload interposes and passes on to libgcc.  Each time the function
 * calls back, and the callback walks with sframebt (from the preload:
 * this program does not link the library) and with libgcc's
 * _Unwind_Backtrace(), the ground truth, which walks through the JIT
 * frame only if libgcc got the registration too.  Both must pass through
 * the JIT frame to the end of the stack, frame for frame alike.  Before
 * registration, and after
 * __deregister_frame_info() (which must return the object libgcc was
 * lent), __deregister_frame_info_bases() and __deregister_frame(), both
 * walks must stop at the JIT frame (sframebt with no-object, after the
 * callback's frame). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unwind.h>

#include "backtrace.h"

void __register_frame_info(const void *begin, void *ob);
void __register_frame_info_bases(const void *begin, void *ob, void *tbase, void *dbase);
void *__deregister_frame_info(const void *begin);
void *__deregister_frame_info_bases(const void *begin);
void __register_frame(void *begin);
void __deregister_frame(void *begin);

static int passed, failed;
#define CHECK(c, ...)                                              \
	do {                                                       \
		if (c)                                             \
			passed++, printf("ok - ");                 \
		else                                               \
			failed++, printf("not ok - ");             \
		printf(__VA_ARGS__);                               \
		printf("\n");                                      \
	} while (0)

static int (*bt_ex)(void *, struct sframe_bt_frame *, int, unsigned, struct sframe_bt_status *);
static const char *(*stop_name)(int);

static uint8_t *code;          /* the JIT function */
#define CODE_SIZE 17
#define RET_OFF 12             /* return address of its call */
static uint8_t *eh;            /* its tables, on the page after it (pcrel
				  sdata4 reaches 2 GiB) */

static void put4(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, 4);
}

static void write_tables(void)
{
	/* CIE: zR, code align 1, data align -8, RA column 16, FDE pointers
	 * pcrel sdata4; CFA = rsp + 8, RA at CFA - 8. */
	static const uint8_t cie[24] = { 20, 0, 0, 0, 0, 0, 0, 0, 1, 'z', 'R', 0, 1, 0x78, 16,
					 1, 0x1b, 0x0c, 7, 8, 0x90, 1, 0, 0 };
	memset(eh, 0, 64);
	memcpy(eh, cie, sizeof cie);
	uint8_t *f = eh + 24;
	put4(f, 20);
	put4(f + 4, 28); /* back to the CIE */
	put4(f + 8, (uint32_t)((uintptr_t)code - (uintptr_t)(f + 8)));
	put4(f + 12, CODE_SIZE);
	/* augmentation length 0; advance 4, CFA offset 16; advance 12, 8 */
	static const uint8_t insns[] = { 0, 0x44, 0x0e, 16, 0x4c, 0x0e, 8, 0 };
	memcpy(f + 16, insns, sizeof insns);
	/* eh[48..52): the zero terminator */
}

static uintptr_t gcc_pcs[64];
static int gcc_n;

static _Unwind_Reason_Code one(struct _Unwind_Context *ctx, void *arg)
{
	(void)arg;
	if (gcc_n < 64)
		gcc_pcs[gcc_n++] = _Unwind_GetIP(ctx);
	return _URC_NO_REASON;
}

/* What the callback saw: sframebt's frames and stop, libgcc's frames. */
static struct sframe_bt_frame sfb[64];
static int sfb_n, sfb_stop;

static __attribute__((noinline)) void callback(void)
{
	struct sframe_bt_status st;
	sfb_n = bt_ex(NULL, sfb, 64, 0, &st);
	sfb_stop = st.stop;
	gcc_n = 0;
	_Unwind_Backtrace(one, NULL);
}

static int index_of(uintptr_t pc, const uintptr_t *pcs, int n)
{
	for (int i = 0; i < n; i++)
		if (pcs[i] == pc)
			return i;
	return -1;
}

/* Call the JIT function and judge both walks: through it to the end when
 * registered, stopping at it when not. */
static void run(const char *how, int registered)
{
	((void (*)(void (*)(void)))(void *)code)(callback);
	uintptr_t jit_ra = (uintptr_t)code + RET_OFF;
	uintptr_t pcs[64];
	for (int i = 0; i < sfb_n; i++)
		pcs[i] = sfb[i].pc;
	/* libgcc's last frame may be _start's return address, 0: not a frame. */
	while (gcc_n > 0 && gcc_pcs[gcc_n - 1] == 0)
		gcc_n--;
	int s = index_of(jit_ra, pcs, sfb_n), g = index_of(jit_ra, gcc_pcs, gcc_n);
	for (int i = 0; i < sfb_n; i++)
		printf("# %s: %2d %#lx%s\n", how, i, (unsigned long)pcs[i],
		       pcs[i] == jit_ra ? " (JIT code)" : "");
	if (registered) {
		int same = s >= 0 && g >= 0 && sfb_n - s == gcc_n - g;
		for (int k = 0; same && s + k < sfb_n; k++)
			same = pcs[s + k] == gcc_pcs[g + k];
		CHECK(s >= 0 && s + 2 < sfb_n && sfb_stop == SFRAME_BT_STOP_OUTERMOST,
		      "%s: sframebt walks through the JIT frame to the end (%d frames, JIT at %d, %s)",
		      how, sfb_n, s, stop_name(sfb_stop));
		CHECK(same, "%s: from the JIT frame on, the same %d frames as _Unwind_Backtrace (%d)",
		      how, sfb_n - s, gcc_n - g);
	} else {
		/* The PC it finds no object for is not a frame. */
		CHECK(s < 0 && sfb_n == 1 && sfb_stop == SFRAME_BT_STOP_NO_OBJECT,
		      "%s: unregistered, sframebt stops at the JIT frame (%d frames, %s)", how,
		      sfb_n, stop_name(sfb_stop));
		CHECK(g >= 0 && g == gcc_n - 1,
		      "%s: unregistered, libgcc stops there too (ground truth: passed on)", how);
	}
}

int main(void)
{
	bt_ex = (int (*)(void *, struct sframe_bt_frame *, int, unsigned,
			 struct sframe_bt_status *))dlsym(RTLD_DEFAULT, "sframe_backtrace_ex");
	stop_name = (const char *(*)(int))dlsym(RTLD_DEFAULT, "sframe_bt_stop_name");
	if (!bt_ex || !stop_name) {
		printf("not ok - sframebt's functions come from the preload\n");
		return 1;
	}
	code = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (code == MAP_FAILED)
		return 1;
	eh = code + 4096;
	static const uint8_t fn[CODE_SIZE] = { 0x48, 0x83, 0xec, 0x08, 0x0f, 0x1f, 0x44, 0x00, 0x00,
					       0x90, 0xff, 0xd7, 0x48, 0x83, 0xc4, 0x08, 0xc3 };
	memcpy(code, fn, sizeof fn);
	if (mprotect(code, 4096, PROT_READ | PROT_EXEC))
		return 1;
	write_tables();

	static void *ob[32]; /* libgcc's struct object, lent */
	run("before registration", 0);

	__register_frame_info(eh, ob);
	run("__register_frame_info", 1);
	void *back = __deregister_frame_info(eh);
	CHECK(back == ob, "__deregister_frame_info returns the object libgcc was lent");
	run("after __deregister_frame_info", 0);

	__register_frame_info_bases(eh, ob, NULL, NULL);
	run("__register_frame_info_bases", 1);
	back = __deregister_frame_info_bases(eh);
	CHECK(back == ob, "__deregister_frame_info_bases returns the object");
	run("after __deregister_frame_info_bases", 0);

	__register_frame(eh);
	run("__register_frame", 1);
	__deregister_frame(eh);
	run("after __deregister_frame", 0);

	printf("%d passed, %d failed\n", passed, failed);
	return failed != 0;
}
