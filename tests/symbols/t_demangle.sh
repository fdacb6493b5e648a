#!/bin/sh
# The demangler against c++filt -i, the oracle: every mangled name of the
# .dynsym of libstdc++ and of libLLVM-14 (about 44,000), the Rust names of
# tests/symbols/rust_names.txt (legacy and v0), those of librustc_driver
# when a Rust toolchain is installed, and names c++filt leaves as they
# are.  tests/symbols/demangle_driver.c prints sfb_demangle()'s result per
# name (the name itself when refused, as c++filt does).  At least 99.9%
# must be identical, per library and overall; the first mismatches are
# shown.
. tests/lib/check.sh
for f in tests/lib/install-deps.sh tests/install-deps.sh; do
	[ -f "$f" ] && . "./$f" && break
done
install_deps binutils libllvm14

driver=$B/tests/demangle_driver
if [ ! -x "$driver" ]; then
	driver=$tmp/demangle_driver
	${CC:-cc} -std=gnu11 -O2 -Isrc tests/symbols/demangle_driver.c \
		src/symbols/demangle.c src/symbols/demangle_rust.c -o "$driver" ||
		{ notok "demangle_driver builds"; exit 1; }
fi

total=0
same_all=0

# enough N SAME MIN: N >= MIN names, at least 99.9% of them the same.
enough() {
	[ "$1" -ge "$3" ] && [ $(($2 * 1000)) -ge $(($1 * 999)) ]
}

# compare LABEL FILE MIN: FILE's names through c++filt and the driver;
# at least 99.9% identical (all if MIN is "all"), and at least MIN names
# when MIN is a number.
compare() {
	label=$1 names=$2 min=$3
	c++filt -i <"$names" >"$tmp/want"
	"$driver" <"$names" >"$tmp/got"
	n=$(wc -l <"$names")
	same=$(paste -d '\n' "$tmp/want" "$tmp/got" | paste - - | awk -F '\t' '$1 == $2' | wc -l)
	total=$((total + n))
	same_all=$((same_all + same))
	if [ "$min" = all ]; then
		check "$label: $same of $n identical to c++filt -i" [ "$same" -eq "$n" ]
	else
		check "$label: $same of $n identical to c++filt -i ($(awk "BEGIN { printf \"%.3f\", 100 * $same / ($n ? $n : 1) }")%)" \
			enough "$n" "$same" "$min"
	fi
	paste "$names" "$tmp/want" "$tmp/got" | awk -F '\t' '$2 != $3' | head -5 |
		while IFS="$(printf '\t')" read -r m w g; do
			echo "# $m"
			echo "#   c++filt: $w"
			echo "#   ours:    $g"
		done
}

# dynsym LIB: its defined dynamic symbols that are mangled names.
dynsym() {
	nm -D --defined-only "$1" | awk 'NF >= 3 { print $3 }' | sed 's/@.*//' |
		grep '^_[ZR]' | sort -u
}

libstdcxx=$(ls /usr/lib/*/libstdc++.so.6 2>/dev/null | head -1)
libllvm=$(ls /usr/lib/llvm-14/lib/libLLVM-14.so.1 /usr/lib/*/libLLVM-14.so.1 2>/dev/null | head -1)
for lib in "$libstdcxx" "$libllvm"; do
	if [ -z "$lib" ] || [ ! -f "$lib" ]; then
		notok "libstdc++.so.6 and libLLVM-14.so.1 installed (${lib:-missing})"
		continue
	fi
	dynsym "$lib" >"$tmp/names"
	compare "$(basename "$lib")" "$tmp/names" 5000
done
check "overall: $same_all of $total identical" enough "$total" "$same_all" 10000

compare "Rust names (tests/symbols/rust_names.txt)" tests/symbols/rust_names.txt all

rustc_driver=$(ls "$HOME"/.rustup/toolchains/*/lib/librustc_driver-*.so 2>/dev/null | head -1)
if [ -n "$rustc_driver" ]; then
	dynsym "$rustc_driver" >"$tmp/names"
	compare "$(basename "$rustc_driver")" "$tmp/names" 1000
else
	echo "# no Rust toolchain: librustc_driver's names not compared"
fi

# Not mangled, or not well, or with a symbol version: as c++filt prints
# them.
printf '%s\n' main _start _Z _ZN _ZN3foo _Z3foo. _R _RNv __Z3foov _GLOBAL__ \
	_ZN3foo17h0000000000000000E _Z1fS0_ _ZTV _ZdlPv _ZnwmSt11align_val_t \
	_ZNSaIcEC1Ev@GLIBCXX_3.4 _Z3foov@@V1 main@GLIBC_2.2.5 _ZN3foo@ _Z1fILiEEvv >"$tmp/names"
compare "names not mangled, malformed or versioned" "$tmp/names" all
