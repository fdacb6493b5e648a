/* A program for t_lines.sh: static inline functions called from several
 * places and from each other, so that -O2 inlines them in chains. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct acc {
	long sum;
	unsigned n;
};

static inline long square(long x)
{
	return x * x;
}

static inline void add(struct acc *a, long x)
{
	a->sum += square(x);
	a->n++;
}

static inline long mix(long a, long b)
{
	long r = a ^ (b << 3);
	if (r & 1)
		r += square(b);
	return r;
}

static long __attribute__((noinline)) fold(const long *v, int n)
{
	struct acc a = { 0, 0 };
	for (int i = 0; i < n; i++) {
		add(&a, v[i]);
		if (v[i] > 10)
			add(&a, mix(v[i], a.sum));
	}
	return a.sum + a.n;
}

static int cmp(const void *x, const void *y)
{
	long a = *(const long *)x, b = *(const long *)y;
	return (a > b) - (a < b);
}

static inline void fill(long *v, int n, long seed)
{
	for (int i = 0; i < n; i++) {
		seed = mix(seed, i) * 6364136223846793005L + 1;
		v[i] = (seed >> 33) % 100;
	}
}

int main(int argc, char **argv)
{
	long v[64];
	int n = argc > 1 ? atoi(argv[1]) : 64;
	if (n > 64 || n < 0)
		n = 64;
	fill(v, n, argc);
	qsort(v, (size_t)n, sizeof v[0], cmp);
	char buf[64];
	snprintf(buf, sizeof buf, "%ld", fold(v, n));
	printf("%s %zu\n", buf, strlen(buf));
	return 0;
}
