// A CPU-bound C++ workload for tests/tools/t_sframe_prof.sh: its hot
// functions are templates in namespaces, so that their symbols are mangled
// and the profile's names must be demangled to match.
#include <cstdint>
#include <cstdlib>
#include <vector>

namespace physics {
namespace detail {

template <typename T> struct Integrator {
	std::vector<T> state;
	explicit Integrator(size_t n) : state(n, T(1)) {}

	// noinline keeps each a frame of its own at -O2.
	__attribute__((noinline)) T step(T dt)
	{
		T sum = 0;
		for (auto &x : state) {
			x = x + dt * (T(1) - x / T(3));
			sum += x;
		}
		return sum;
	}
};

template <typename T> __attribute__((noinline)) T simulate(Integrator<T> &in, int steps)
{
	T acc = 0;
	for (int i = 0; i < steps; i++)
		acc += in.step(T(0.001));
	return acc;
}

} // namespace detail
} // namespace physics

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? std::atoi(argv[1]) : 200;
	physics::detail::Integrator<double> d(4096);
	physics::detail::Integrator<float> f(4096);
	volatile double sink = 0;
	for (int r = 0; r < rounds; r++) {
		sink = sink + physics::detail::simulate(d, 20);
		sink = sink + physics::detail::simulate(f, 20);
	}
	return sink < 0;
}
