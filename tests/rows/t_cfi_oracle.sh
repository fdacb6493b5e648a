#!/bin/sh
# t_cfi_oracle.sh - the .eh_frame decoder against readelf on objects built
# here from the project's own sources without SFrame: the library's
# sources as one shared object at -O0, at -O2 with and without frame
# pointers, at -Os with -fasynchronous-unwind-tables off (.eh_frame only
# where needed), and the x86-64 fixtures' C sources; then the same
# comparison t_cfi_oracle runs on the system's libraries (see
# t_cfi_oracle.c), over these and over the committed x86-64 and AArch64
# fixture binaries (tests/fixtures/bin: their .eh_frame, beside the
# .sframe; AArch64's with negate_ra_state and 'B' CIEs).  s390x's are
# big-endian, which the decoder does not read.
#
# env: SFB_BUILD  build directory (default: build)
#      CC         compiler (default: cc)
#      SFB_WRAP   prefix for the comparison program (e.g. valgrind)

B=${SFB_BUILD:-build}
CC=${CC:-cc}
oracle=$B/tests/t_cfi_oracle
out=$B/cfi-oracle
mkdir -p "$out"

if [ ! -x "$oracle" ]; then
	echo "not ok - $oracle not built"
	exit 1
fi
# The objects: no -Wa,--gsframe, so .eh_frame is their only unwind
# information, as for the distribution's libraries.
objs=
build() {
	name=$1
	shift
	if $CC -shared -fPIC -w -I. -Isrc -Itests/fixtures/src "$@" -o "$out/$name" \
		2>"$out/$name.log"; then
		objs="$objs $out/$name"
	else
		echo "not ok - $name builds"
		sed 's/^/#   /' "$out/$name.log" | head -10
		exit 1
	fi
}
# The library's own sources, as the Makefile builds them: every folder
# of src/ but the preload.
srcs=$(ls src/*/*.c | grep -v "^src/preload/")
build libsrc-O0.so -O0 $srcs
build libsrc-O2.so -O2 -fno-omit-frame-pointer $srcs
build libsrc-O2-nofp.so -O2 -fomit-frame-pointer $srcs
build libsrc-Os.so -Os -fno-asynchronous-unwind-tables -fexceptions $srcs
build libfixtures.so -O2 -fomit-frame-pointer tests/fixtures/src/chain.c \
	tests/fixtures/src/fixture_lib.c tests/fixtures/src/fixture_main.c
for o in $objs; do
	if readelf -S "$o" | grep -q '\.sframe'; then
		echo "not ok - $o has no .sframe section"
		exit 1
	fi
done
echo "ok - built$(for o in $objs; do printf ' %s' "${o##*/}"; done) without .sframe"
fixtures=$(ls tests/fixtures/bin/x86_64-v*/fixture tests/fixtures/bin/x86_64-v*/libfixture.so \
	tests/fixtures/bin/aarch64-v*/fixture tests/fixtures/bin/aarch64-v*/libfixture.so 2>/dev/null)
${SFB_WRAP:-} "$oracle" $objs $fixtures
