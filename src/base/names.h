/* Names of enumerators, for messages: a table indexed by the value. */
#ifndef SFB_NAMES_H
#define SFB_NAMES_H

#include <stddef.h>

/* names[i], or "unknown" for a value the table does not name (negative,
 * past its end, or a gap in it). */
static inline const char *sfb_name_in(const char *const *names, size_t n, int i)
{
	return i >= 0 && (size_t)i < n && names[i] ? names[i] : "unknown";
}

#define SFB_NAME_OF(names, i) sfb_name_in(names, sizeof(names) / sizeof((names)[0]), i)

#endif
