#ifndef SFB_WALK_H
#define SFB_WALK_H

#include <stdbool.h>
#include "arch/arch.h"
#include "backtrace.h"

/* Walk from regs (modified).  exact: regs->pc is an exact PC (a ucontext),
 * not a return address.  Fills frames and *st; returns the frame count. */
int sfb_walk(struct sfb_regs *regs, bool exact, struct sframe_bt_frame *frames,
	     void **pcs, int size, unsigned flags, struct sframe_bt_status *st);

#endif
