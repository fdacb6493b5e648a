#!/bin/sh
# LuaJIT, unmodified (Debian's luajit): hot loops compiled into traces
# call C (tests/objects/jit_luajit.c through the FFI), directly and
# through an FFI callback into Lua calling C again, with
# libsframebt-preload.so preloaded and SIGPROF samples at 5 kHz
# (tests/objects/jit_luajit.lua).  What this LuaJIT does: it registers
# its whole machine-code area with __register_frame(), one FDE whose rows
# give no CFA rule (a CIE without initial instructions, for the
# personality routine of its exceptions), no GDB JIT interface, no perf
# map.  So: the preload registers the area, every walk from C called by a
# trace keeps the trace's frame and stops there with bad-eh-frame, never
# crashing, in plain walks and in SIGPROF samples, with and without
# SFRAME_BT_FP_FALLBACK_ANY; libgcc's _Unwind_Backtrace() from the same
# place aborts (the ground truth for "no CFA rule").  x86-64 only;
# skipped under sanitizers, whose runtimes cannot be preloaded.
. tests/lib/check.sh
need_x86_64_preload
need_command luajit luajit
echo "# $(luajit -v)"
${CC:-cc} -O1 -g -fPIC -shared -I. tests/objects/jit_luajit.c -o "$tmp/jit_luajit.so" ||
	{ notok "jit_luajit.so builds"; exit 1; }
for fb in 0 1; do
	tag="FP_FALLBACK_ANY=$fb"
	JIT_LUAJIT_LIB=$tmp/jit_luajit.so SFRAME_BT_FP_FALLBACK_ANY=$fb LD_PRELOAD=$preload \
		timeout 120 luajit tests/objects/jit_luajit.lua >"$tmp/out" 2>&1
	rc=$?
	sed -n -e "s/^ok - /ok - [$tag] /p" -e "s/^not ok - /not ok - [$tag] /p" \
		-e '/^#/p' "$tmp/out"
	check "[$tag] luajit exits 0" [ "$rc" -eq 0 ]
	grep -q '^ok - ' "$tmp/out" || { notok "[$tag] printed its checks"; tail -5 "$tmp/out"; }
done
