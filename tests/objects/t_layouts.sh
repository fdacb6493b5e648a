#!/bin/sh
# Main programs of every segment layout (tests/objects/build.mk builds
# tests/objects/t_layouts.c once per layout), each walked whole against
# libgcc and the chain's own return addresses; then Debian's bc, whose
# program headers leave a gap before its code segment, profiled under
# the preloaded profiler (examples/profiler.c): every sample must reach
# the outermost frame.
. tests/lib/check.sh
case $B in /*) ;; *) B=$PWD/$B ;; esac

n=0
for p in "$B"/tests/layouts/*-sframe "$B"/tests/layouts/*-eh; do
	[ -x "$p" ] || continue
	name=${p##*/}
	n=$((n + 1))
	(cd "$tmp" && ${SFB_WRAP:-} "$p") >"$tmp/$name.out" 2>&1
	rc=$?
	sed -e "s/^ok - /ok - [$name] /" -e "s/^not ok - /not ok - [$name] /" -e '/^#/!{/^ok - \|^not ok - /!d}' \
		"$tmp/$name.out"
	check "[$name] exits 0" [ "$rc" -eq 0 ]
done
check "$n layout programs ran" [ "$n" -ge 24 ]

# bc -l computing pi to 2000 digits: a second or two of CPU.
. tests/lib/install-deps.sh
install_deps bc >/dev/null 2>&1
prof=$B/libsframe-profiler.so
if ! command -v bc >/dev/null || [ ! -e "$prof" ]; then
	notok "bc and $prof are there"
	exit 1
fi
# A sanitizer build's profiler needs the sanitizer's runtime loaded first,
# which Debian's bc does not have: the gcc build checks bc.
if nm -D "$prof" 2>/dev/null | grep -q ' __asan_init'; then
	echo "# bc left out: $prof carries ASan's runtime"
	exit 0
fi
echo 'scale=2000; 4*a(1)' >"$tmp/pi.bc"
readelf -lW "$(command -v bc)" | grep -E '^ +LOAD' | sed 's/^/# bc: /'
(cd "$tmp" && LD_PRELOAD=$prof SFRAME_PROF_OUT=$tmp/bc SFRAME_PROF_HZ=997 \
	bc -l pi.bc >/dev/null 2>"$tmp/bc.err")
sed 's/^/# /' "$tmp/bc.err"
line=$(grep 'walks stopped by' "$tmp/bc.err")
total=$(sed -n 's/.*: \([0-9]*\) samples from.*/\1/p' "$tmp/bc.err")
outermost=$(echo "$line" | sed -n 's/.*outermost \([0-9]*\).*/\1/p')
check "bc -l: $total samples, ${outermost:-0} walks to the outermost frame (at least 99%)" \
	[ "${total:-0}" -ge 20 ] && [ $(( ${outermost:-0} * 100 )) -ge $(( total * 99 )) ]
