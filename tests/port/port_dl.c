/* The dlopen()ed half of t_port_walk's chain: port_dl_entry -> port_dl2 ->
 * the program's callback, each recording where it returns to. */
#include <stdint.h>

#define NOINLINE __attribute__((noinline))
#define BARRIER() __asm__ volatile("" ::: "memory")

typedef int (*port_cb)(int);

NOINLINE int port_dl2(port_cb cb, int x, volatile uintptr_t *ra)
{
	ra[1] = (uintptr_t)__builtin_return_address(0);
	int r = cb(x + 1);
	BARRIER();
	return r + 1;
}

int port_dl_entry(port_cb cb, int x, volatile uintptr_t *ra)
{
	ra[0] = (uintptr_t)__builtin_return_address(0);
	int r = port_dl2(cb, x + 1, ra);
	BARRIER();
	return r + 1;
}
