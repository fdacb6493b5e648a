// A CPU-bound workload for the source-position checks of
// tests/tools/t_sframe_prof.sh, built with -g -O2: most of its time is
// spent in Mixer<T>::step() and rotate(), always inlined (rotate() into
// step(), step() into churn()), so that its samples' PCs lie two inlined
// levels deep, and in sum_squares(), inlined nowhere.
//
//   lines [ROUNDS]
#include <cstdlib>

namespace hashing {

static volatile unsigned sink;

template <typename T> struct Mixer {
	T state;

	static inline __attribute__((always_inline)) T rotate(T x, unsigned k)
	{
		return x << (k & 31) | x >> ((32 - k) & 31);
	}

	inline __attribute__((always_inline)) void step(unsigned i)
	{
		state ^= rotate(state * 2654435761u + i, i % 13);
		state += state >> 7;
	}
};

template <typename T> __attribute__((noinline)) T churn(Mixer<T> &m, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		m.step(i);
	return m.state;
}

__attribute__((noinline)) unsigned sum_squares(unsigned n)
{
	unsigned s = 0;
	for (unsigned i = 0; i < n; i++) {
		s += i * i;
		sink = s;
	}
	return s;
}

} // namespace hashing

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? std::atoi(argv[1]) : 100;
	// From argv: no copy of churn() specialised for a constant.
	unsigned n = 20000u * (unsigned)(argc + 99);
	hashing::Mixer<unsigned> m{1};
	for (int r = 0; r < rounds; r++)
		hashing::sink = hashing::churn(m, n) + hashing::sum_squares(n / 2);
	return 0;
}
