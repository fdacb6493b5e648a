/* Public entry points of the walker (the symbolizer's are in symbolize.c). */
#include <stdatomic.h>
#include <string.h>

#include "backtrace.h"
#include "api/api.h"
#include "base/entry.h"
#include "base/memread.h"
#include "base/names.h"
#include "objects/objcache.h"
#include "rows/cfi_cache.h"
#include "walk/walk.h"

static _Atomic unsigned default_flags;

void sframe_backtrace_set_default_flags(unsigned flags)
{
	atomic_store_explicit(&default_flags, flags, memory_order_relaxed);
}

unsigned sfb_default_flags(void)
{
	return atomic_load_explicit(&default_flags, memory_order_relaxed);
}

void sframe_backtrace_set_stack(const void *lo, size_t size)
{
	uintptr_t l = (uintptr_t)lo;
	bool some = lo && size && l + size > l;
	sfb_mem_declare_stack(some ? l : 0, some ? l + size : 0);
}

const char *sframe_bt_stop_name(int stop)
{
	static const char *const names[] = {
		[SFRAME_BT_STOP_NONE] = "none",
		[SFRAME_BT_STOP_OUTERMOST] = "outermost",
		[SFRAME_BT_STOP_BUFFER_FULL] = "buffer-full",
		[SFRAME_BT_STOP_NO_OBJECT] = "no-object",
		[SFRAME_BT_STOP_NO_UNWIND_INFO] = "no-unwind-info",
		[SFRAME_BT_STOP_BAD_CFA] = "bad-cfa",
		[SFRAME_BT_STOP_UNREADABLE] = "unreadable",
		[SFRAME_BT_STOP_BAD_RA] = "bad-return-address",
		[SFRAME_BT_STOP_UNSAFE_RULE] = "unsafe-rule",
		[SFRAME_BT_STOP_BAD_CONTEXT] = "bad-context",
		[SFRAME_BT_STOP_BAD_SECTION] = "bad-section",
		[SFRAME_BT_STOP_CACHE_FULL] = "cache-full",
		[SFRAME_BT_STOP_BAD_EH_FRAME] = "bad-eh-frame",
		[SFRAME_BT_STOP_EH_FRAME_UNINDEXED] = "eh-frame-unindexed",
	};
	return SFB_NAME_OF(names, stop);
}

/* The caller's registers, from this function's own frame (the library is
 * built with frame pointers; arch_*.c reads the frame).  Must be inlined
 * into each public entry so that "caller" is the user. */
#define CALLER_REGS(r)                                                        \
	sfb_arch_caller_regs(__builtin_frame_address(0), __builtin_dwarf_cfa(), \
			     __builtin_return_address(0), &(r))

static int walk_ucontext(const void *uc, struct sframe_bt_frame *frames, void **pcs,
			 int size, unsigned flags, struct sframe_bt_status *st)
{
	struct sfb_regs r;
	if (!uc) {
		st->stop = SFRAME_BT_STOP_BAD_CONTEXT;
		st->stop_pc = 0;
		return 0;
	}
	sfb_arch_from_ucontext(uc, &r);
	return sfb_walk(&r, true, frames, pcs, size,
			flags | atomic_load_explicit(&default_flags, memory_order_relaxed), st);
}

__attribute__((noinline)) int sframe_backtrace(void **buf, int size)
{
	SFB_ENTRY;
	if (!buf || size <= 0)
		return 0;
	struct sframe_bt_status st;
	struct sfb_regs r;
	CALLER_REGS(r);
	return sfb_walk(&r, false, NULL, buf, size,
			atomic_load_explicit(&default_flags, memory_order_relaxed), &st);
}

int sframe_backtrace_ucontext(const void *uc, void **buf, int size)
{
	SFB_ENTRY;
	if (!buf || size <= 0)
		return 0;
	struct sframe_bt_status st;
	return walk_ucontext(uc, NULL, buf, size, 0, &st);
}

__attribute__((noinline)) int sframe_backtrace_ex(const void *uc,
						  struct sframe_bt_frame *frames,
						  int size, unsigned flags,
						  struct sframe_bt_status *status)
{
	SFB_ENTRY;
	struct sframe_bt_status local;
	struct sframe_bt_status *st = status ? status : &local;
	memset(st, 0, sizeof *st);
	if (!frames || size <= 0) {
		st->stop = SFRAME_BT_STOP_BUFFER_FULL;
		return 0;
	}
	int n;
	if (uc) {
		n = walk_ucontext(uc, frames, NULL, size, flags, st);
	} else {
		struct sfb_regs r;
		CALLER_REGS(r);
		n = sfb_walk(&r, false, frames, NULL, size,
			     flags | atomic_load_explicit(&default_flags, memory_order_relaxed),
			     st);
	}
	return n;
}

int sframe_backtrace_warmup(void)
{
	SFB_ENTRY;
	sfb_cfi_cache_prefault();
	return sfb_objcache_warmup();
}

int sframe_backtrace_keep_loaded(const void *addr)
{
	SFB_ENTRY;
	return sfb_objcache_keep_loaded((uintptr_t)addr);
}
