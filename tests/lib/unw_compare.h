/* Test helper: one sample's whole stack walked twice from the same
 * ucontext, by sframebt and by libunwind (local unwinding, -lunwind), and
 * the rule by which the two walks are equal.
 *
 * Define UNW_CMP_NF, the frames a walk keeps, before including this file.
 * The walks run in signal handlers: the functions that record them
 * allocate nothing, take no lock and use no stdio. */
#ifndef SFB_UNW_COMPARE_H
#define SFB_UNW_COMPARE_H

#ifndef UNW_CMP_NF
#error "define UNW_CMP_NF (frames a walk keeps) before including unw_compare.h"
#endif
#ifndef UNW_LOCAL_ONLY
#define UNW_LOCAL_ONLY
#endif
#include <libunwind.h>
#include <stdint.h>

#include "backtrace.h"

/* Both walks of one sample. */
struct unw_stacks {
	int n_sfb, n_unw;
	int unw_end;  /* last unw_step() result: 0 end of stack, < 0 error */
	int unw_init; /* unw_init_local2() result */
	struct sframe_bt_status st;
	uintptr_t sfb_pc[UNW_CMP_NF], sfb_cfa[UNW_CMP_NF];
	uint8_t sfb_src[UNW_CMP_NF], sfb_exact[UNW_CMP_NF];
	uintptr_t unw_pc[UNW_CMP_NF], unw_sp[UNW_CMP_NF];
};

/* Both unwinders describe objects lazily: each gets the chance to do so
 * in normal context first, before the walks in signal handlers (neither
 * needs it). */
static inline void unw_cmp_warmup(void)
{
	sframe_backtrace_warmup();
	unw_context_t uc;
	unw_cursor_t c;
	unw_getcontext(&uc);
	unw_init_local(&c, &uc);
	while (unw_step(&c) > 0)
		;
}

/* sframebt's walk of the interrupted context uc into f (UNW_CMP_NF
 * frames); unw_cmp_keep_sfb() copies the frames into w, apart so that a
 * timed walk times the walk alone. */
static inline void unw_cmp_walk_sfb(struct unw_stacks *w, const void *uc,
				    struct sframe_bt_frame *f)
{
	w->n_sfb = sframe_backtrace_ex(uc, f, UNW_CMP_NF, 0, &w->st);
}

static inline void unw_cmp_keep_sfb(struct unw_stacks *w, const struct sframe_bt_frame *f)
{
	for (int k = 0; k < w->n_sfb; k++) {
		w->sfb_pc[k] = f[k].pc;
		w->sfb_cfa[k] = f[k].cfa;
		w->sfb_src[k] = f[k].source;
		w->sfb_exact[k] = f[k].exact;
	}
}

/* libunwind's walk of the interrupted context uc: unw_init_local2() with
 * UNW_INIT_SIGNAL_FRAME (a local walk from a signal handler, which
 * libunwind supports), each frame's IP and SP, until unw_step() says the
 * stack ended (0), fails (< 0) or UNW_CMP_NF frames are kept.
 *
 * A return address of 0 ends the stack, as it ends sframebt's walk
 * (outermost): fiber and coroutine libraries push one above their entry
 * function (ruby's coroutine_initialize(), for one), where a thread's
 * stack has _start's or clone3's undefined return address.  libunwind
 * 1.6 reports it as a frame with IP 0 and steps on from it through
 * whatever lies above; its walk is taken to end at the frame before. */
static inline void unw_cmp_walk_unw(struct unw_stacks *w, void *uc)
{
	unw_cursor_t c;
	w->n_unw = 0;
	w->unw_end = 1;
	w->unw_init = unw_init_local2(&c, (unw_context_t *)uc, UNW_INIT_SIGNAL_FRAME);
	if (w->unw_init < 0)
		return;
	while (w->n_unw < UNW_CMP_NF) {
		unw_word_t ip = 0, sp = 0;
		unw_get_reg(&c, UNW_REG_IP, &ip);
		unw_get_reg(&c, UNW_REG_SP, &sp);
		if (ip == 0 && w->n_unw > 0) {
			w->unw_end = 0;
			break;
		}
		/* A step that left IP and SP as they were made no progress
		 * (libunwind's AArch64 fallback, past a frame no CFI covers,
		 * gives that frame again): the end. */
		if (w->n_unw > 0 && ip == w->unw_pc[w->n_unw - 1] &&
		    sp == w->unw_sp[w->n_unw - 1]) {
			w->unw_end = 0;
			break;
		}
		w->unw_pc[w->n_unw] = ip;
		w->unw_sp[w->n_unw] = sp;
		w->n_unw++;
		w->unw_end = unw_step(&c);
		if (w->unw_end <= 0)
			break;
	}
}

/* A frame's CFA less its caller's SP: s390x's CFA lies above the caller's
 * register save area. */
#if defined(__s390x__)
#define UNW_CMP_CFA_ABOVE_SP 160u
#else
#define UNW_CMP_CFA_ABOVE_SP 0u
#endif

/* How two walks differ: the first rule of unw_cmp() they break. */
enum unw_cmp_diff {
	UNW_CMP_EQUAL = 0,
	UNW_CMP_NO_START,       /* unw_init_local2() failed */
	UNW_CMP_PC,             /* a frame's PC */
	UNW_CMP_CFA,            /* a frame's CFA */
	UNW_CMP_SFB_EARLIER,    /* sframebt has fewer frames */
	UNW_CMP_UNW_EARLIER,    /* libunwind has fewer frames */
	UNW_CMP_SFB_NOT_OUTER,  /* same frames, sframebt's stop not outermost */
	UNW_CMP_UNW_ERROR,      /* same frames, libunwind's last step an error */
};

/* The reason as printed; NULL for UNW_CMP_EQUAL. */
static inline const char *unw_cmp_reason(enum unw_cmp_diff d)
{
	static const char *const r[] = {
		[UNW_CMP_EQUAL] = NULL,
		[UNW_CMP_NO_START] = "libunwind could not start",
		[UNW_CMP_PC] = "different PC",
		[UNW_CMP_CFA] = "different CFA",
		[UNW_CMP_SFB_EARLIER] = "sframebt stopped earlier",
		[UNW_CMP_UNW_EARLIER] = "libunwind stopped earlier",
		[UNW_CMP_SFB_NOT_OUTER] = "sframebt did not reach the outermost frame",
		[UNW_CMP_UNW_ERROR] = "libunwind ended with an error",
	};
	return r[d];
}

/* Equal means: the same number of frames, the same PCs (frame 0 the
 * interrupted PC, then return addresses as both report them), the same
 * CFAs (libunwind's SP of frame k+1 is frame k's CFA, less s390x's
 * register save area; the last frame's CFA has nothing to be checked
 * against), and both walks ended at the end of
 * the stack: sframebt's stop outermost, libunwind's last unw_step() 0 (the
 * final frame, _start or clone3, whose CFI marks the return address
 * undefined, is reported by both).  Two walks that both kept UNW_CMP_NF
 * frames are equal if those frames are.  *at is the first frame that
 * differs, -1 where no frame does. */
static inline enum unw_cmp_diff unw_cmp(const struct unw_stacks *w, int *at)
{
	*at = -1;
	if (w->unw_init < 0)
		return UNW_CMP_NO_START;
	int n = w->n_sfb < w->n_unw ? w->n_sfb : w->n_unw;
	for (int k = 0; k < n; k++)
		if (w->sfb_pc[k] != w->unw_pc[k]) {
			*at = k;
			return UNW_CMP_PC;
		}
	for (int k = 0; k + 1 < n; k++)
		if (w->sfb_cfa[k] != w->unw_sp[k + 1] + UNW_CMP_CFA_ABOVE_SP) {
			*at = k;
			return UNW_CMP_CFA;
		}
	/* Frame 0 in a PLT stub, for which ld writes no CFI on AArch64 and
	 * s390x: libunwind ends there; sframebt takes the caller from the
	 * link register (the architecture's stub row, t_cross's "libc plt")
	 * and goes on.  Equal as far as libunwind went. */
	if (w->n_unw == 1 && w->unw_end == 0 && w->n_sfb > 1 &&
	    w->sfb_src[1] == SFRAME_BT_FROM_LINK_REGISTER)
		return UNW_CMP_EQUAL;
	/* A frame in code that no CFI describes (AArch64's _init and _fini,
	 * s390x's crtstuff destructors at exit): sframebt stops there,
	 * no-unwind-info, every frame before it equal; whatever libunwind
	 * gives past it is its guess, not ground truth. */
	if (w->st.stop == SFRAME_BT_STOP_NO_UNWIND_INFO && w->n_sfb <= w->n_unw)
		return UNW_CMP_EQUAL;
	/* A PC in code no object holds (a JIT's, which nothing registered:
	 * guile's, PyPy's, LuaJIT's traces): sframebt stops there, no-object, the PC
	 * in stop_pc (a frame of its own only as frame 0); libunwind reports
	 * it and ends, or guesses on by frame pointers.  Equal when libunwind
	 * has that PC where sframebt stopped. */
	if (w->st.stop == SFRAME_BT_STOP_NO_OBJECT && w->n_sfb <= w->n_unw &&
	    ((w->n_sfb < w->n_unw && w->unw_pc[w->n_sfb] == w->st.stop_pc) ||
	     (w->n_sfb == 1 && w->sfb_pc[0] == w->st.stop_pc)))
		return UNW_CMP_EQUAL;
	if (w->n_sfb < w->n_unw) {
		*at = n;
		return UNW_CMP_SFB_EARLIER;
	}
	if (w->n_sfb > w->n_unw) {
		*at = n;
		return UNW_CMP_UNW_EARLIER;
	}
	if (w->st.stop != SFRAME_BT_STOP_OUTERMOST && w->n_sfb < UNW_CMP_NF)
		return UNW_CMP_SFB_NOT_OUTER;
	if (w->unw_end != 0 && w->n_unw < UNW_CMP_NF)
		return UNW_CMP_UNW_ERROR;
	return UNW_CMP_EQUAL;
}

/* libunwind's CFA of frame k, as printed beside its frames: from the SP of
 * frame k+1, 0 for the last frame. */
static inline uintptr_t unw_cmp_unw_cfa(const struct unw_stacks *w, int k)
{
	return k + 1 < w->n_unw ? w->unw_sp[k + 1] + UNW_CMP_CFA_ABOVE_SP : 0;
}

/* The name of a frame's source (enum sframe_bt_source), as printed. */
static inline const char *unw_cmp_src_name(int s)
{
	static const char *const n[] = { "context", "sframe", "fp", "signal", "lr", "eh_frame" };
	return s >= 0 && s < 6 ? n[s] : "?";
}

#endif
