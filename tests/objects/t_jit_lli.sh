#!/bin/sh
# Unmodified JITs: lli-14 (LLVM 14's interpreter and JIT) runs
# tests/objects/jit_chain.ll and jit_spin.ll under LD_PRELOAD of
# libsframebt-preload.so, whose __register_frame() interposer registers
# the JIT's .eh_frame sections, and of jit_callback.c.  In each JIT mode
# lli-14 has: the chain main -> jit_mid -> jit_leaf -> callback walked
# whole and frame for frame as libgcc walks it; every SIGPROF sample
# inside a CPU-bound JIT loop walked whole to _start.  x86-64 only (the
# JIT modes differ by target); skipped under sanitizers, whose runtimes
# cannot be preloaded into lli.
. tests/lib/check.sh
need_x86_64_preload
need_command lli-14 llvm-14
${CC:-cc} -O1 -g -fPIC -shared -I. tests/objects/jit_callback.c -o "$tmp/jit_callback.so" ||
	{ notok "jit_callback.so builds"; exit 1; }

for mode in "--jit-kind=mcjit" "--jit-kind=orc" "--jit-kind=orc --jit-linker=jitlink" \
	"--jit-kind=orc-lazy --compile-threads=2"; do
	for m in chain spin; do
		LD_PRELOAD="$preload $tmp/jit_callback.so" timeout 120 \
			lli-14 $mode "tests/objects/jit_$m.ll" >"$tmp/out" 2>&1
		rc=$?
		sed -n -e "s/^ok - /ok - [$mode, $m] /p" -e "s/^not ok - /not ok - [$mode, $m] /p" \
			-e '/^#/p' "$tmp/out"
		check "[$mode, $m] lli-14 exits 0" [ "$rc" -eq 0 ]
		grep -q '^ok - ' "$tmp/out" || notok "[$mode, $m] printed its checks"
	done
done
