/* What the entry points keep for the other public parts of the library
 * (the crash report walks with sfb_walk() itself, under the same flags). */
#ifndef SFB_API_H
#define SFB_API_H

/* The flags sframe_backtrace_set_default_flags() set, or 0. */
unsigned sfb_default_flags(void) __attribute__((visibility("hidden")));

#endif
