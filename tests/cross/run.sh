#!/bin/sh
# make test-cross: the walker on AArch64 and s390x, built with the cross
# compilers and run under qemu-user (tests/cross/t_cross.c), from this
# x86-64 machine.  Builds, each with its own binutils (tests/fixtures/
# toolchains.sh fetches trixie's and sid's privately):
#   aarch64-v1        host binutils 2.40          SFrame V1
#   aarch64-v2        trixie 2.44                 SFrame V2
#   aarch64-v3        sid 2.47                    SFrame V3
#   aarch64-v3-pac    sid, -mbranch-protection=pac-ret        (key A)
#   aarch64-v1-pacb   2.40, -mbranch-protection=pac-ret+b-key (key B)
#   s390x-v3          sid (the first binutils with s390x SFrame)
# qemu-aarch64 runs with -cpu max, so return addresses really are signed.
# Then Debian's own arm64 and s390x programs, sampled under qemu and
# compared with libunwind (tests/cross/world.sh).
# First the plain cross builds with this machine's binutils (make
# test-build and make install for each architecture), then the variants.
# Usage: tests/cross/run.sh BUILD_DIR [VARIANT...]
# Prints "ok - " / "not ok - " lines and "N passed, N failed".
set -u
B=${1:-build}
shift 2>/dev/null
VARIANTS=${*:-"aarch64-v1 aarch64-v2 aarch64-v3 aarch64-v3-pac aarch64-v1-pacb s390x-v3"}
ARCHES=$(for v in $VARIANTS; do echo "${v%%-*}"; done | sort -u)
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top" || exit 1

. tests/lib/install-deps.sh
install_deps gcc-aarch64-linux-gnu gcc-s390x-linux-gnu libc6-dev-arm64-cross \
	libc6-dev-s390x-cross g++-aarch64-linux-gnu g++-s390x-linux-gnu qemu-user make \
	file openssl >/dev/null
mkdir -p "$B/cross"
TC=${SFB_TC:-${SFRAME_TOOLCHAINS:-$HOME/.cache/sframebt-toolchains}}
bash -c '. tests/fixtures/toolchains.sh
	for v in '"$(echo "$VARIANTS" | tr ' ' '\n' | sed -n 's/^\(aarch64\|s390x\)-v\([23]\).*/\1:\2/p' | sort -u | tr '\n' ' ')"'; do
		a=${v%:*}; case ${v#*:} in 2) s=trixie ;; 3) s=sid ;; esac
		tc_setup_binutils $a $s
	done' >/dev/null 2>"$B/cross/toolchains.log" || {
	echo "not ok - fetching the trixie/sid cross binutils (see $B/cross/toolchains.log)"
	echo "0 passed, 1 failed"
	exit 1
}

pass=0 fail=0
count() {
	p=$(grep -c '^ok - ' "$1") f=$(grep -c '^not ok - ' "$1")
	pass=$((pass + p)) fail=$((fail + f))
}
ok() { echo "ok - $*"; pass=$((pass + 1)); }
notok() { echo "not ok - $*"; fail=$((fail + 1)); }

# The plain cross builds, with this machine's binutils: the library, the
# examples and every test program warning-free (-Werror), and installed.
for arch in $ARCHES; do
	d=$B/cross/build-$arch
	if make -s -j2 B="$d" CC="$arch-linux-gnu-gcc" test-build >"$d.log" 2>&1; then
		ok "$arch: make CC=$arch-linux-gnu-gcc builds the library, examples and tests"
	else
		notok "$arch: make CC=$arch-linux-gnu-gcc test-build (see $d.log)"
	fi
	rm -rf "$d.inst"
	if make -s B="$d" CC="$arch-linux-gnu-gcc" install PREFIX="$d.inst" >>"$d.log" 2>&1 &&
	   file -L "$d.inst/lib/libsframebt.so" | grep -q "$(case $arch in
		aarch64) echo 'ARM aarch64' ;; s390x) echo 'IBM S/390' ;; esac)"; then
		ok "$arch: make install PREFIX=dir installs the $arch library"
	else
		notok "$arch: make install (see $d.log)"
	fi
	# The library's own code carries SFrame where the assembler writes
	# it: binutils 2.40 does for AArch64, not for s390x (see below).
	if [ "$arch" = aarch64 ]; then
		if grep -q '\.sframe' "$d.inst/lib/libsframebt.so"; then
			ok "$arch: libsframebt.so carries .sframe"
		else
			notok "$arch: libsframebt.so has no .sframe"
		fi
	fi
done
for v in $VARIANTS; do
	arch=${v%%-*} rest=${v#*-} ver=${rest%%-*} opt=${rest#"$ver"}
	cc="$arch-linux-gnu-gcc"
	case $ver in
	v2) cc="$cc -B$TC/bin/$arch-trixie/" ;;
	v3) cc="$cc -B$TC/bin/$arch-sid/" ;;
	esac
	flags="-O2 -g"
	case $opt in
	-pac) flags="$flags -mbranch-protection=pac-ret" ;;
	-pacb) flags="$flags -mbranch-protection=pac-ret+b-key" ;;
	esac
	defs=
	[ "$ver" = v3 ] && defs=-DCROSS_V3
	d=$B/cross/$v
	mkdir -p "$d"
	log=$d/build.log
	if ! make -s B="$d" CC="$cc" CFLAGS="$flags" lib >"$log" 2>&1 ||
	   ! $cc -std=gnu11 -Wall -Wextra -Werror $flags -fomit-frame-pointer \
		-fno-optimize-sibling-calls -Wa,--gsframe -fPIC -shared -fno-semantic-interposition \
		tests/cross/cross_lib.c -o "$d/cross_lib.so" >>"$log" 2>&1 ||
	   ! $cc -std=gnu11 -Wall -Wextra -Werror $flags -fno-omit-frame-pointer \
		-fno-optimize-sibling-calls -fno-asynchronous-unwind-tables -fno-unwind-tables \
		-fPIC -shared tests/cross/cross_fp.c -o "$d/cross_fp.so" >>"$log" 2>&1 ||
	   ! $cc -std=gnu11 -Wall -Wextra -Werror $flags -fomit-frame-pointer \
		-fno-optimize-sibling-calls -fPIC -shared -fno-semantic-interposition \
		tests/cross/cross_cfi.c -o "$d/cross_cfi.so" >>"$log" 2>&1 ||
	   ! $cc -std=gnu11 -Wall -Wextra -Werror $flags $defs -fomit-frame-pointer \
		-fno-optimize-sibling-calls -Wa,--gsframe -rdynamic -I. -Isrc -Itests -Itests/lib \
		tests/cross/t_cross.c -o "$d/t_cross" "$d/libsframebt.a" -ldl -lpthread >>"$log" 2>&1; then
		echo "not ok - $v: build (see $log)"
		fail=$((fail + 1))
		continue
	fi
	if grep -q '\.sframe' "$d/libsframebt.so"; then
		ok "$v: libsframebt.so carries .sframe"
	else
		notok "$v: libsframebt.so has no .sframe"
	fi
	case $arch in
	aarch64) run="qemu-aarch64 -cpu max -L /usr/aarch64-linux-gnu" ;;
	s390x) run="qemu-s390x -L /usr/s390x-linux-gnu" ;;
	esac
	out=$d/t_cross.out
	fx=tests/fixtures/bin/$arch-$ver/libfixture.so
	# The outermost FDEs (undefined RA) of the target's libc and of t_cross.
	$arch-linux-gnu-readelf --debug-dump=frames /usr/$arch-linux-gnu/lib/libc.so.6 |
		awk -f tests/cross/outermost.awk >"$d/libc.outer"
	$arch-linux-gnu-readelf --debug-dump=frames "$d/t_cross" |
		awk -f tests/cross/outermost.awk >"$d/prog.outer"
	timeout 300 $run "$d/t_cross" "$d/cross_lib.so" "$fx" "$d/libc.outer" "$d/prog.outer" >"$out" 2>&1
	rc=$?
	sed -n "s/^\(not \)\{0,1\}ok - /&$v: /p; /^#/p" "$out"
	count "$out"
	if [ $rc -ne 0 ] && ! grep -q '^not ok - ' "$out"; then
		echo "not ok - $v: t_cross exited with status $rc"
		tail -3 "$out" | sed 's/^/# /'
		fail=$((fail + 1))
	fi
done

# Debian's own programs of each architecture, against libunwind
# (tests/cross/world.sh).
for arch in $ARCHES; do
	bash tests/cross/world.sh "$B" "$arch" >"$B/cross/world-$arch.out" 2>&1
	cat "$B/cross/world-$arch.out"
	count "$B/cross/world-$arch.out"
done
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
