#!/bin/sh
# examples/server: worker threads call sframe_backtrace() when a lock
# acquisition waits or a request is slow; at exit the top call sites are
# printed symbolized, with the measured cost per call.  Run it briefly and
# check the expected call sites and the cost lines are there.
. tests/lib/check.sh

if [ ! -x "$B/server" ]; then
	notok "$B/server not built (make examples)"
	exit 1
fi

# Under $SFB_WRAP (e.g. valgrind) if set; the timings are then meaningless
# but the call sites are the same.  A lock wait needs two workers running
# at once; valgrind runs one thread at a time, and on a loaded machine its
# 0.5 s can end before a second worker has run (one worker's first batch,
# 64 requests, and no wait).  It runs 5 s there.
secs=0.5
[ -n "${SFB_WRAP:-}" ] && secs=5
timeout 240 ${SFB_WRAP:-} "$B/server" 4 $secs >"$tmp/out" 2>&1
rc=$?
cat "$tmp/out"
check "server exits 0" [ "$rc" -eq 0 ]

# The call sites, one per line: "EVENT: f0;f1;f2;..." (function names of
# the frames, innermost first).
awk '
	/^ *[0-9]+ x / { if (site != "") print site; ev = $0; sub(/^ *[0-9]+ x /, "", ev); site = ev ":"; sep = " "; next }
	/^ +#[0-9]+ 0x[0-9a-f]+ in / && site != "" {
		name = $0; sub(/.* in /, "", name); sub(/[+ ].*/, "", name)
		site = site sep name; sep = ";"; next
	}
	{ if (site != "") print site; site = "" }
	END { if (site != "") print site }
' "$tmp/out" >"$tmp/sites"
echo "--- call sites:"
cat "$tmp/sites"

has_site() { grep -Eq "$1" "$tmp/sites"; }
check "lock wait in cache_get, called from handle_get, serve, worker_main" \
	has_site '^lock wait: cache_lock;cache_get;handle_get;serve;worker_main'
# Contention on the put path is rarer; under $SFB_WRAP (valgrind runs one
# thread at a time) it may not happen at all, so it is checked only natively.
if [ -z "${SFB_WRAP:-}" ]; then
	check "lock wait in cache_put, called from handle_put" \
		has_site '^lock wait: cache_lock;cache_put;handle_put;serve;worker_main'
fi
check "slow request noted in finish_request, called from a handler" \
	has_site '^slow request: finish_request;handle_(get|put|report);serve;worker_main'
check "frames name the executable with an offset" \
	grep -Eq '^ +#0 0x[0-9a-f]+ in cache_lock\+0x[0-9a-f]+ \(.*/server\+0x[0-9a-f]+\)$' "$tmp/out"
check "summary counts lock waits and slow requests" \
	grep -Eq '^server: 4 workers, .* [1-9][0-9]* lock waits, [1-9][0-9]* slow requests' "$tmp/out"
check "hot-path cost reported (ns/call, ns/frame)" \
	grep -Eq '^  hot path: [0-9]+ calls, [0-9.]+ frames/call, median [0-9]+ ns/call, [0-9.]+ ns/frame' "$tmp/out"
check "batch cost reported, with glibc backtrace() for comparison" \
	sh -c "grep -Eq '^  batches of [0-9]+ from one stack: [0-9]+ frames, [0-9]+ ns/call' '$tmp/out' &&
	       grep -Eq '^  glibc backtrace\(\), same stack: [0-9]+ frames, [0-9]+ ns/call' '$tmp/out'"
exit 0
