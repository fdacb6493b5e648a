// A C++ program for t_lines.sh: member functions, templates and
// namespaces inlined into each other, so that names come through
// DW_AT_specification and DW_AT_abstract_origin and carry linkage names.
#include <algorithm>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

namespace shapes {

struct Point {
	long x, y;
	long norm() const { return x * x + y * y; }
	Point operator+(const Point &o) const { return Point{ x + o.x, y + o.y }; }
};

template <typename T> class Bag {
	std::vector<T> items_;

public:
	void put(const T &t) { items_.push_back(t); }
	template <typename F> long fold(F f) const
	{
		long s = 0;
		for (const T &t : items_)
			s += f(t);
		return s;
	}
	size_t size() const { return items_.size(); }
};

} // namespace shapes

static long __attribute__((noinline)) total(const shapes::Bag<shapes::Point> &b)
{
	return b.fold([](const shapes::Point &p) { return p.norm() + (p + p).norm(); });
}

int main(int argc, char **argv)
{
	shapes::Bag<shapes::Point> bag;
	std::map<std::string, long> names;
	for (long i = 0; i < 100 + argc; i++) {
		bag.put(shapes::Point{ i, i * 3 % 7 });
		names[std::to_string(i % 13)] += i;
	}
	std::vector<long> v;
	for (auto &kv : names)
		v.push_back(kv.second);
	std::sort(v.begin(), v.end());
	std::printf("%ld %zu %ld %s\n", total(bag), bag.size(), v.empty() ? 0 : v.back(), argv[0]);
	return 0;
}
