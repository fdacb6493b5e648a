/* Helper object for t_first_call: a chain whose innermost function faults
 * (a store through a NULL pointer the compiler cannot see), built with
 * -Wa,--gsframe and without frame pointers (tests/walk.mk.inc).  The
 * library under test first discovers this object inside the SIGSEGV
 * handler. */
#if defined(__clang__)
#define NOINL __attribute__((noinline, used))
#else
#define NOINL __attribute__((noinline, noclone, used))
#endif

int *volatile fclib_null;
volatile unsigned long fclib_sink;

NOINL int fclib_leaf(int x)
{
	for (int i = 0; i < 100; i++)
		fclib_sink += (unsigned long)i;
	*fclib_null = x;
	return x + (int)fclib_sink;
}

NOINL int fclib_mid(int x)
{
	int r = fclib_leaf(x + 1);
	return r * 3;
}
