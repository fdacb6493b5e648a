#include "demangle_int.h"
int sfb_dm_rust(const char *s, unsigned len, char *out, size_t size, struct sfb_demangle_usage *u)
{
	(void)s; (void)len; (void)out; (void)size; (void)u;
	return -2;
}
