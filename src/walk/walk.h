#ifndef SFB_WALK_H
#define SFB_WALK_H

#include <stdbool.h>
#include "arch/arch.h"
#include "backtrace.h"

/* Walk from regs (modified).  exact: regs->pc is an exact PC (a ucontext),
 * not a return address.  Writes up to size frames to frames[], or only
 * their PCs to pcs[] when frames is NULL, and why the walk stopped and
 * its counts by source to *st; returns the frame count.  flags:
 * SFRAME_BT_* (backtrace.h). */
int sfb_walk(struct sfb_regs *regs, bool exact, struct sframe_bt_frame *frames,
	     void **pcs, int size, unsigned flags, struct sframe_bt_status *st);

#endif
