/* What every public entry point (and the library's constructor) does
 * first.  SFB_ENTRY saves errno and restores it on every return path, so
 * that a call from a signal handler leaves the interrupted code's errno
 * as it was; nothing inside the library saves errno again. */
#ifndef SFB_ENTRY_H
#define SFB_ENTRY_H

#include <errno.h>

static inline void sfb_restore_errno(const int *saved)
{
	errno = *saved;
}

#define SFB_ENTRY int sfb_saved_errno_ __attribute__((cleanup(sfb_restore_errno), unused)) = errno

#endif
