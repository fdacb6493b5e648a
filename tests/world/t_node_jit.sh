#!/bin/sh
# node, unmodified: V8 keeps frame pointers in the code it compiles,
# registers none of it, and with --perf-basic-prof names it in
# /tmp/perf-PID.map.  A hot JavaScript recursion runs with
# libsframebt-preload.so and tests/world/node_jit_probe.c preloaded:
# SIGPROF samples of the main thread every 1 ms of its CPU time, walked
# with SFRAME_BT_FP_FALLBACK_ANY as the process's default flags.  Checks:
# the samples are mostly in JIT code (code in no object); every JIT frame
# the map covers (at least 90% of them) is named by sframe_symbolize()
# with the map's name for it (the probe reads the map itself); and the
# samples with a JIT frame are walked whole to the outermost frame,
# through V8's frames and node's own (its builtins have no unwind tables:
# the frame-pointer rule serves there too).  Then sframe-prof
# --frame-pointers on the same program, as a user runs it.  x86-64 only;
# skipped under sanitizers, whose runtimes cannot be preloaded.
. tests/lib/check.sh
need_x86_64_preload
need_command node nodejs
echo "# node $(node --version)"
${CC:-cc} -O1 -g -fPIC -shared -I. tests/world/node_jit_probe.c -o "$tmp/probe.so" -ldl ||
	{ notok "node_jit_probe.so builds"; exit 1; }
cat >"$tmp/fib.js" <<'JS'
function fib(n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }
let s = 0;
for (let i = 0; i < 60; i++) s += fib(32);
console.log(s);
JS
# Preloaded into node only (not into timeout, which would write the
# results file too); run in the temporary directory, where V8 leaves its
# isolate log.
(cd "$tmp" && timeout 120 env NODE_JIT_OUT="$tmp/out.txt" LD_PRELOAD="$preload $tmp/probe.so" \
	node --perf-basic-prof "$tmp/fib.js" >"$tmp/stdout" 2>"$tmp/stderr")
rc=$?
# check_all DESCRIPTION CONDITION: the condition as one shell string.
check_all() { if eval "$2"; then ok "$1"; else notok "$1"; fi; }
check_all "node exits 0 and computes 60 fib(32) = 130698540" '[ "$rc" -eq 0 ] && grep -qx 130698540 "$tmp/stdout"' 
[ -s "$tmp/out.txt" ] || { notok "the probe wrote its results"; cat "$tmp/stderr"; exit 1; }
sed 's/^/# /' "$tmp/out.txt"
v() { awk -v k="$1" '$1 == k { print $2 }' "$tmp/out.txt"; }
pid=$(v pid)
[ -n "$pid" ] && rm -f "/tmp/perf-$pid.map"
samples=$(v samples) jit=$(v jit_samples) whole=$(v jit_whole) top=$(v jit_top)
frames=$(v jit_frames) in_map=$(v in_map) named=$(v named) right=$(v named_right) fib=$(v named_fib)
check_all "samples mostly in JIT code ($top of $samples)" \
	'[ "$samples" -ge 100 ] && [ $((2 * top)) -ge "$samples" ]'
# V8 lists most of its code, not all (a few interrupted PCs lie in code
# the map has no range for): those the map names must have its name.
check_all "JIT frames the perf map covers ($in_map of $frames) named with its name ($right), fib among them ($fib)" \
	'[ "$in_map" -gt 0 ] && [ $((100 * in_map)) -ge $((90 * frames)) ] && [ "$right" -eq "$in_map" ] && [ "$fib" -gt 0 ]' 
check_all "samples with a JIT frame walked whole to the outermost frame ($whole of $jit)" \
	'[ "$jit" -gt 0 ] && [ $((100 * whole)) -ge $((99 * jit)) ]'

# sframe-prof --frame-pointers, as a user profiles node: the same walks
# (SFRAME_BT_FP_FALLBACK_ANY as the default flags) give whole stacks, the
# JavaScript functions named from the perf map in the folded stacks; the
# same run without it stops at V8's code.
ls /tmp/perf-*.map 2>/dev/null >"$tmp/maps.before"
for fp in "" --frame-pointers; do
	(cd "$tmp" && timeout 120 "$B/sframe-prof" -F 999 $fp -o "$tmp/prof$fp.folded" -- \
		node --perf-basic-prof "$tmp/fib.js" >/dev/null 2>"$tmp/prof$fp.err")
done
sed 's/^/# /' "$tmp/prof--frame-pointers.err"
cut=$(sed -n 's/^sframe-prof: \([0-9]*\) stacks truncated.*/\1/p' "$tmp/prof.err")
cut_fp=$(sed -n 's/^sframe-prof: \([0-9]*\) stacks truncated.*/\1/p' "$tmp/prof--frame-pointers.err")
n_fp=$(awk '{ n += $NF } END { print n + 0 }' "$tmp/prof--frame-pointers.folded")
whole_fib=$(grep -c '^_start;.*JS:[*~^]*fib ' "$tmp/prof--frame-pointers.folded")
check_all "sframe-prof --frame-pointers on node: $cut_fp of $n_fp stacks truncated (without it $cut), stacks through fib rooted at _start ($whole_fib)" \
	'[ "$n_fp" -ge 50 ] && [ $((50 * cut_fp)) -le "$n_fp" ] && [ $((4 * cut)) -ge "$n_fp" ] && [ "$whole_fib" -gt 0 ]'
# (node leaves its perf maps behind)
ls /tmp/perf-*.map 2>/dev/null | grep -vxF -f "$tmp/maps.before" | xargs rm -f
