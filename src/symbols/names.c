/* The public demangler (backtrace.h: sframe_demangle): the demangler of
 * demangle.c behind the library's entry rule, which keeps errno. */
#include "backtrace.h"
#include "base/entry.h"
#include "symbols/demangle.h"

SFRAMEBT_API int sframe_demangle(const char *mangled, char *out, size_t size)
{
	SFB_ENTRY;
	return sfb_demangle(mangled, out, size);
}
