#!/bin/sh
# The crtbegin-style registration an unmodified JIT may use:
# tests/objects/jit_frame_info.c registers one JIT function's .eh_frame
# with __register_frame_info(), __register_frame_info_bases() and
# __register_frame() under LD_PRELOAD of libsframebt-preload.so and of the
# example profiler's preload (both interpose them), and compares
# sframebt's walks through the JIT frame with libgcc's _Unwind_Backtrace()
# (see that file).  x86-64 only (the JIT writes x86-64 code); skipped
# under sanitizers, whose runtimes cannot be preloaded.
. tests/lib/check.sh
case $B in /*) ;; *) B=$PWD/$B ;; esac
if [ "$(uname -m)" != x86_64 ]; then
	ok "# SKIP the JIT writes x86-64 code"
	exit 0
fi
for p in "$B/libsframebt-preload.so" "$B/libsframe-profiler.so"; do
	if [ ! -e "$p" ] || nm -D "$p" 2>/dev/null | grep -q __asan_init; then
		ok "# SKIP no uninstrumented $p"
		exit 0
	fi
done
${CC:-cc} -O1 -g -I. tests/objects/jit_frame_info.c -o "$tmp/jit_frame_info" ||
	{ notok "jit_frame_info builds"; exit 1; }
for p in "$B/libsframebt-preload.so" "$B/libsframe-profiler.so"; do
	name=$(basename "$p")
	# The profiler's preload profiles what it is preloaded into: its
	# output goes to the temporary directory.
	(cd "$tmp" && LD_PRELOAD="$p" SFRAME_PROF_OUT="$tmp/prof" timeout 60 \
		./jit_frame_info) >"$tmp/out" 2>&1
	rc=$?
	sed -n -e "s/^ok - /ok - [$name] /p" -e "s/^not ok - /not ok - [$name] /p" \
		-e '/^#/p' "$tmp/out"
	check "[$name] jit_frame_info exits 0" [ "$rc" -eq 0 ]
	grep -q '^ok - ' "$tmp/out" || { notok "[$name] printed its checks"; tail -5 "$tmp/out"; }
done
