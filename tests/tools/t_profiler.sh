#!/bin/sh
# examples/profiler.c: profile build/hotcold, whose threads spend ~70% of
# their CPU in worker->hot_a->hot_b->spin and ~30% in worker->cold_c->spin,
# both with LD_PRELOAD=libsframe-profiler.so and with the profiler linked
# in (build/profiler), and check the folded stacks, the summary and the
# flame graph SVG (well-formed XML, a <title> in every <g>).
. tests/lib/check.sh
case $B in /*) ;; *) B=$PWD/$B ;; esac # LD_PRELOAD wants a full path

for f in "$B/libsframe-profiler.so" "$B/hotcold" "$B/profiler"; do
	if [ ! -e "$f" ]; then
		notok "$f not built (make examples)"
		exit 1
	fi
done

# stacks FOLDED: prints "total matched hot thread main" where matched is
# the number of samples whose stack is an expected path (below any root
# frames from outside the workload, e.g. [libc.so.6+0x...]), optionally
# with one leaf frame from outside the workload (a libc function).
stacks() {
	[ -f "$1" ] || { echo 0 0 0 0 0; return; }
	awk '
	BEGIN {
		want["main;worker;hot_a;hot_b;spin"] = "hot"
		want["main;worker;cold_c;spin"] = "cold"
		want["worker;hot_a;hot_b;spin"] = "hot"
		want["worker;cold_c;spin"] = "cold"
		split("main worker hot_a hot_b cold_c spin", w, " ")
		for (i in w) ours[w[i]] = 1
	}
	{
		count = $NF
		stack = $0
		sub(/ [0-9]+$/, "", stack)
		total += count
		n = split(stack, fr, ";")
		first = 0
		for (i = 1; i <= n && !first; i++)
			if (fr[i] in ours) first = i
		if (!first) next
		path = fr[first]
		for (i = first + 1; i <= n; i++) {
			if (!(fr[i] in ours) && i == n) break # a libc leaf
			path = path ";" fr[i]
		}
		if (!(path in want)) next
		matched += count
		if (want[path] == "hot") hot += count
		if (fr[first] == "main") main += count; else thread += count
	}
	END { printf "%d %d %d %d %d\n", total, matched, hot, thread, main }
	' "$1"
}

# Every walk goes through libc (its .eh_frame) to the outermost frame, so
# every stack is rooted at _start (main thread) or at libc's clone3 (other
# threads): none is a bare libc frame or starts at a libc address with no
# root below it.  Debian's libc is stripped, so the profile shows its
# frames as [libc.so.6+0xOFFSET]; the name at OFFSET comes from libc's
# detached debug symbols (libc6-dbg), read by nm, not by sframebt.
. tests/lib/install-deps.sh
install_deps libc6-dbg binutils
libc=$(ldd "$B/hotcold" | awk '$1 == "libc.so.6" { print $3 }')
bid=$(readelf -n "$libc" 2>/dev/null | awk '/Build ID:/ { print $3 }')
libc_dbg=/usr/lib/debug/.build-id/$(printf %.2s "$bid")/${bid#??}.debug
[ -f "$libc_dbg" ] || libc_dbg=$libc
nm -S -t d --defined-only "$libc_dbg" 2>/dev/null |
	awk 'NF == 4 && $3 ~ /^[tTwWiI]$/ { print $1 + 0, $2 + 0, $4 }' >"$tmp/libc.syms"

# roots FOLDED: each stack's first two frames, with libc offsets named
# ("[libc.so.6+0x1098eb]" -> "clone3", among its aliases), then its count.
# A frame may hold spaces (a demangled C++ name's parameters: "f(int,
# long)"); the count is the line's last field.
roots() {
	while IFS= read -r line; do
		count=${line##* }
		stack=${line% *}
		first=${stack%%;*}
		second=
		case $stack in *";"*) rest=${stack#*;}; second=${rest%%;*} ;; esac
		out=
		for fr in "$first" ${second:+"$second"}; do
			case $fr in
			"[libc.so.6+0x"*"]")
				off=${fr#*+}
				off=$((${off%]}))
				names=$(awk -v a="$off" '$1 <= a && a < $1 + $2 { print $3 }' \
					"$tmp/libc.syms")
				fr="[libc.so.6+?]"
				for n in $names; do # aliases: __GI___clone3, clone3
					case $fr in "[libc"*) fr=$n ;; esac
					case $n in clone3 | start_thread) fr=$n ;; esac
				done
				;;
			esac
			out="$out${out:+;}$fr"
		done
		echo "$out $count"
	done <"$1"
}

# rooted FOLDED: every stack's root is _start (then __libc_start_main) or
# clone3 (then start_thread), but for one case: a sample taken at exit
# inside the crt code linked into every object (__do_global_dtors_aux and
# its kin, which ld.so's finalization runs while a preloaded profiler's
# timers still run) has neither .sframe nor an FDE, so its walk stops
# there at once with no-unwind-info, the reason it gives.
rooted() {
	roots "$1" >"$1.roots"
	echo "# roots of $1:"
	sort "$1.roots" | awk '{ n[$1] += $2 } END { for (r in n) print "#   " r, n[r] }'
	[ -s "$1.roots" ] && ! grep -Ev '^(_start;__libc_start_main|clone3;start_thread) [0-9]+$' "$1.roots" |
		grep -Ev '^\[truncated:no-unwind-info\];(__do_global_dtors_aux|deregister_tm_clones|register_tm_clones|frame_dummy|_init|_fini) [0-9]+$'
}

# svgcheck FILE: well-formed XML as far as this SVG goes -- every tag
# closed in order, one root <svg>, attributes quoted, no stray '<' '>'
# or '&' in text -- and every <g> starts with a <title>.
svgcheck() {
	awk '
	BEGIN { RS = "<"; depth = 0; bad = ""; roots = 0 }
	NR == 1 { if ($0 !~ /^[ \t\r\n]*$/) bad = "text before the first tag"; next }
	{
		if (bad != "") next
		gt = index($0, ">")
		if (!gt) { bad = "unterminated tag: <" substr($0, 1, 40); next }
		tag = substr($0, 1, gt - 1)
		text = substr($0, gt + 1)
		if (index(text, ">")) { bad = "stray > in text"; next }
		t = text
		gsub(/&(amp|lt|gt|quot|apos|#[0-9]+);/, "", t)
		if (index(t, "&")) { bad = "unescaped & in text"; next }
		if (tag ~ /^\?xml .*\?$/) { if (NR != 2) bad = "misplaced XML declaration"; next }
		if (tag ~ /^!--.*--$/) next
		if (tag ~ /^\//) {
			name = substr(tag, 2)
			if (depth == 0 || stack[depth] != name) {
				bad = "</" name "> closes <" stack[depth] ">"; next
			}
			depth--
			next
		}
		if (tag !~ /^[a-zA-Z][a-zA-Z0-9:_-]*( +[a-zA-Z:_-]+="[^"<]*")* *\/?$/) {
			bad = "malformed tag <" tag ">"; next
		}
		name = tag
		sub(/[ \/].*/, "", name)
		if (depth == 0 && ++roots > 1) { bad = "second root element"; next }
		if (depth == 0 && name != "svg") { bad = "root is not <svg>"; next }
		# The first child of each <g> must be its <title>.
		if (depth > 0 && stack[depth] == "g" && !kids[depth]++ && name != "title") {
			bad = "<g> without a leading <title>"; next
		}
		if (name == "g") groups++
		if (name == "title") titles++
		if (tag ~ /\/$/) next # self-closing
		stack[++depth] = name
		kids[depth] = 0
	}
	END {
		if (bad == "" && depth != 0) bad = "unclosed <" stack[depth] ">"
		if (bad == "" && roots != 1) bad = "no root element"
		if (bad == "" && groups == 0) bad = "no frames"
		if (bad != "") { print "svgcheck: " bad > "/dev/stderr"; exit 1 }
		printf "svgcheck: %d frames, %d titles\n", groups, titles > "/dev/stderr"
	}' "$1"
}

# The checkers themselves must reject what they should.
printf '[libc.so.6+0x1] 3\n' >"$tmp/bare.folded"
printf 'worker;hot_a 3\n' >"$tmp/noroot.folded"
if rooted "$tmp/bare.folded" >/dev/null; then notok "rooted accepted a bare libc frame"; else ok "rooted: a bare libc frame rejected"; fi
if rooted "$tmp/noroot.folded" >/dev/null; then notok "rooted accepted a stack without root"; else ok "rooted: a stack without root rejected"; fi
printf '<svg><g><rect/></g></svg>\n' >"$tmp/bad1.svg"
printf '<svg><g><title>a</title><rect></g></svg>\n' >"$tmp/bad2.svg"
printf '<svg><g><title>a & b</title></g></svg>\n' >"$tmp/bad3.svg"
printf '<svg><g><title>a &amp; b</title><rect x="1"/></g></svg>\n' >"$tmp/good.svg"
if svgcheck "$tmp/bad1.svg" 2>/dev/null; then notok "svgcheck accepted a <g> without <title>"; else ok "svgcheck: <g> without <title> rejected"; fi
if svgcheck "$tmp/bad2.svg" 2>/dev/null; then notok "svgcheck accepted unbalanced tags"; else ok "svgcheck: unbalanced tags rejected"; fi
if svgcheck "$tmp/bad3.svg" 2>/dev/null; then notok "svgcheck accepted a raw &"; else ok "svgcheck: raw & rejected"; fi
check "svgcheck: a well-formed sample accepted" svgcheck "$tmp/good.svg"

# Under $SFB_WRAP (e.g. valgrind), the workloads run wrapped to catch
# memory errors, but valgrind runs one thread at a time and skews the
# thread CPU clocks: the checks of how samples are distributed are
# skipped, the structural ones kept.
W=${SFB_WRAP:-}
strict=1
[ -n "$W" ] && strict=0
# Each workload thread's CPU time, ms.  A thread's CPU-time timer is
# checked at the kernel's tick while it runs: about 250 samples a
# CPU-second on an idle machine, under 40 on a loaded one.  1200 ms a
# thread gives the distribution checks at least about 190 samples (the
# hot share's 55-85% window is then over 4 standard deviations wide),
# where 400 ms gave some loaded runs 62.
CPU_MS=400
[ "$strict" = 1 ] && CPU_MS=1200

# verify NAME FOLDED SVG SUMMARY: the shared checks.
verify() {
	name=$1 folded=$2 svg=$3 summary=$4
	cat "$summary"
	echo "--- $folded:"
	cat "$folded"
	set -- $(stacks "$folded")
	total=$1 matched=$2 hot=$3 thread=$4 main=$5
	echo "# $name: $total samples, $matched on expected stacks, $hot hot, $thread in threads, $main in main"
	if [ "$strict" = 1 ]; then
		check "$name: enough samples ($total >= 50)" [ "$total" -ge 50 ]
		check "$name: >= 90% of samples on the expected stacks ($matched of $total)" \
			[ $((matched * 100)) -ge $((total * 90)) ]
		check "$name: hot path has 55-85% of them ($hot of $matched, expect ~70%)" \
			[ $((hot * 100)) -ge $((matched * 55)) -a $((hot * 100)) -le $((matched * 85)) ]
		check "$name: threads created after start were sampled ($thread)" [ "$thread" -gt 0 ]
		check "$name: the main thread was sampled ($main)" [ "$main" -gt 0 ]
	else
		check "$name: samples on the expected stacks ($matched of $total)" [ "$matched" -gt 0 ]
	fi
	check "$name: folded lines are 'frame;frame... count' (frames non-empty, no leading or trailing space)" \
		sh -c "! grep -Ev '^[^ ;]([^;]*[^ ;])?(;[^ ;]([^;]*[^ ;])?)* [0-9]+\$' '$folded'"
	check "$name: summary counts samples, drops and stop reasons" \
		sh -c "grep -Eq '^sframe-prof: [0-9]+ samples from [0-9.]+ s of CPU time' '$summary' &&
		       grep -Eq '^sframe-prof: [0-9]+ samples dropped \(ring full\), [0-9]+ threads not profiled' '$summary' &&
		       grep -Eq '^sframe-prof: [0-9]+ stacks truncated; walks stopped by: [a-z]' '$summary'"
	check "$name: the SVG is well-formed and every frame has a <title>" svgcheck "$svg"
	check "$name: every stack is rooted at _start or clone3 (no bare libc stack)" rooted "$folded"
	check "$name: the SVG shows the hot path" \
		sh -c "grep -q '<title>hot_b (' '$svg' && grep -q '<title>cold_c (' '$svg'"
}

# (a) LD_PRELOAD into the unmodified program: 3 threads + main, CPU_MS
# of CPU each.
# (timeout before the variables: timeout itself must not be profiled, or
# its own, empty, profile would overwrite pre.folded when it exits.)
timeout 240 env SFRAME_PROF_HZ=997 SFRAME_PROF_OUT="$tmp/pre" SFRAME_PROF_SVG=1 \
	LD_PRELOAD="$B/libsframe-profiler.so" $W "$B/hotcold" 3 $CPU_MS 2>"$tmp/pre.summary"
check "preload: workload exits 0" [ $? -eq 0 ]
verify preload "$tmp/pre.folded" "$tmp/pre.svg" "$tmp/pre.summary"
# The summary names each thread with its samples (hotcold: main and 3
# workers, none blocking SIGPROF), and goes to PREFIX.summary.txt too.
cat "$tmp/pre.summary.txt" 2>/dev/null | sed 's/^/# summary.txt: /'
check "preload: the summary file is stderr's summary" \
	sh -c "grep '^sframe-prof: ' '$tmp/pre.summary' | cmp -s - '$tmp/pre.summary.txt'"
check "preload: summary lists 4 threads profiled, none blocking SIGPROF" \
	grep -Eq '^sframe-prof: 4 threads profiled, [0-9]+ took no sample, 0 blocked SIGPROF$' \
	"$tmp/pre.summary"
check "preload: each thread named with its samples, summing to the total" \
	awk '/^sframe-prof: [0-9]+ samples from/ { total = $2 }
	     /^sframe-prof:   thread [0-9]+ "hotcold": [0-9]+ samples, [0-9.]+ s of CPU$/ { n++; sum += $5 }
	     END { exit !(n == 4 && sum == total && total > 0) }' "$tmp/pre.summary"

# (b) Linked in: sframe_prof_start()/sframe_prof_stop() around the work.
SFRAME_PROF_HZ=997 SFRAME_PROF_OUT="$tmp/lnk" timeout 240 $W "$B/profiler" 2 $CPU_MS \
	2>"$tmp/lnk.summary"
check "linked: workload exits 0" [ $? -eq 0 ]
verify linked "$tmp/lnk.folded" "$tmp/lnk.svg" "$tmp/lnk.summary"

# (c) Linked in, started after the threads: they are found in
# /proc/self/task and timed on their CPU clocks from outside.
SFRAME_PROF_HZ=997 SFRAME_PROF_OUT="$tmp/late" timeout 240 $W "$B/profiler" 2 $CPU_MS late \
	2>"$tmp/late.summary"
check "late start: workload exits 0" [ $? -eq 0 ]
set -- $(stacks "$tmp/late.folded")
echo "# late: $1 samples, $2 on expected stacks, $4 in threads, $5 in main"
check "late start: threads running before the start were sampled ($4)" [ "$4" -gt 0 ]
check "late start: every stack is rooted at _start or clone3" rooted "$tmp/late.folded"

# Processes sharing one SFRAME_PROF_OUT would write the same files: "%p"
# in it stands for the process id.
for i in 1 2; do
	timeout 60 env SFRAME_PROF_OUT="$tmp/pid.%p" LD_PRELOAD="$B/libsframe-profiler.so" \
		"$B/hotcold" 0 50 2>/dev/null
done
check "preload: %p in SFRAME_PROF_OUT gives each process its own file" \
	[ "$(ls "$tmp"/pid.*.folded 2>/dev/null | wc -l)" -eq 2 ]

# Default output name: sframe-prof.<pid>.folded in the current directory;
# SFRAME_PROF_QUIET=1 silences the summary.
(cd "$tmp" && SFRAME_PROF_QUIET=1 LD_PRELOAD="$B/libsframe-profiler.so" \
	"$B/hotcold" 0 50 2>"$tmp/quiet.err")
check "preload: default output sframe-prof.<pid>.folded" \
	sh -c "ls '$tmp'/sframe-prof.*.folded >/dev/null 2>&1"
check "preload: SFRAME_PROF_QUIET=1 prints nothing" [ ! -s "$tmp/quiet.err" ]
check "preload: SFRAME_PROF_QUIET=1 still writes the summary file" \
	sh -c "grep -q '^sframe-prof: wrote ' '$tmp'/sframe-prof.*.summary.txt"

# What the profiler cannot see, said: xz -T2's worker threads block every
# signal, SIGPROF included, so they are never sampled; xz closes stderr
# before exit, so the summary is read from its file.  Blocks of 1 MiB
# give both workers work.
# A sanitizer build's profiler needs the sanitizer's runtime in the
# program, which xz does not have.
install_deps xz-utils
if readelf -sW --dyn-syms "$B/libsframe-profiler.so" | grep -q ' UND __[a-z]*san_'; then
	echo "# xz -T2: left out in a sanitizer build"
elif command -v xz >/dev/null; then
	awk 'BEGIN { for (i = 0; i < 400000; i++) print i, i * 7919 % 104729, "sframebt" }' \
		>"$tmp/xz.in"
	timeout 240 env SFRAME_PROF_OUT="$tmp/xz" LD_PRELOAD="$B/libsframe-profiler.so" \
		xz -T2 -1 --block-size=1MiB -c "$tmp/xz.in" >"$tmp/xz.out" 2>"$tmp/xz.err"
	check "xz -T2: exits 0" [ $? -eq 0 ]
	cat "$tmp/xz.summary.txt" 2>/dev/null | sed 's/^/# xz summary.txt: /'
	check "xz -T2: summary file written" [ -s "$tmp/xz.summary.txt" ]
	check "xz -T2: the two worker threads named, SIGPROF blocked, 0 samples" \
		sh -c "[ \$(grep -Ec '^sframe-prof:   thread [0-9]+ \"xz\": 0 samples, [0-9.]+ s of CPU, SIGPROF blocked\$' \
			'$tmp/xz.summary.txt') -eq 2 ]"
	check "xz -T2: the count line says so" \
		grep -Eq '^sframe-prof: 3 threads profiled, [23] took no sample, 2 blocked SIGPROF' \
		"$tmp/xz.summary.txt"
else
	notok "xz -T2: xz-utils not installed"
fi
exit 0
