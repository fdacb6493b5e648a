#!/bin/sh
# speed-md.sh RESULTS [FILE...] - the current figures, from `make bench`.
#
# RESULTS is the results file `make bench` writes (BUILD_DIR/bench-results.md).
# In each FILE (default: docs/SPEED.md README.md) the lines between
#   <!-- results:begin -->  and  <!-- results:end -->   (docs/SPEED.md)
#   <!-- speed:begin -->    and  <!-- speed:end -->     (README.md)
#   <!-- why:begin -->      and  <!-- why:end -->       (README.md)
# are replaced: the first pair by the full summary, the second by the short
# table, the third by the figures the README's "Why" gives.  A file without the markers is left alone.  tests/bench/run.sh runs
# this at the end of every `make bench`, so the figures in the documents are
# always those of the last run.
set -u
R=${1:?usage: speed-md.sh RESULTS [FILE...]}
shift
[ $# -gt 0 ] || set -- docs/SPEED.md README.md
[ -r "$R" ] || { echo "speed-md.sh: cannot read $R" >&2; exit 1; }
tmp=${TMPDIR:-/tmp}/speed-md.$$
trap 'rm -f "$tmp".*' EXIT

# One awk pass reads the results file and writes both blocks.  Tables are
# found by their section heading and read by column; a row or section
# missing from the run (V2/V3 skipped, no valgrind) shows as "-".
awk -v full="$tmp.full" -v short="$tmp.short" -v why="$tmp.why" '
function trim(s) { gsub(/^[ \t`]+|[ \t`]+$/, "", s); return s }
function v(k) { return (k in val) ? val[k] : "-" }
function row(f, n, i) {
	n = split($0, f, "|")
	for (i = 1; i <= n; i++) f[i] = trim(f[i])
	return n
}
# Table rows, one for each build of the list builds that has a figure
# under at SUBSEP build SUBSEP the first of the list cols: the build, then
# for each column of cols the figure under at SUBSEP build SUBSEP column,
# followed in brackets by the one under also SUBSEP build SUBSEP column
# suffix where also is given and that figure measured.
function build_rows(builds, at, cols, also, suffix,   B, nb, C, nc, i, k, c, line) {
	nb = split(builds, B, " ")
	nc = split(cols, C, " ")
	for (i = 1; i <= nb; i++) {
		if (!((at SUBSEP B[i] SUBSEP C[1]) in val)) continue
		line = "| " B[i] " |"
		for (k = 1; k <= nc; k++) {
			c = v(at SUBSEP B[i] SUBSEP C[k])
			if (also != "" && ((also SUBSEP B[i] SUBSEP C[k] suffix) in val))
				c = c " (" val[also SUBSEP B[i] SUBSEP C[k] suffix] ")"
			line = line " " c " |"
		}
		print line > full
	}
}
/^Written by/ { when = $0; sub(/^Written by `make bench` \(/, "", when); sub(/, [0-9]+ s\)\.$/, "", when) }
/^- sframebt: / { rev = substr($0, 13) }
/^- CPU: / { cpu = substr($0, 8) }
/^- Kernel: / { kern = substr($0, 11) }
/^- Compiler: / { comp = substr($0, 13); sub(/;.*/, "", comp) }
/^- Binutils: / { bu = substr($0, 13) }
/^- libunwind / { lu = substr($0, 3) }
# A ratio x = the other'"'"'s cost / sframebt'"'"'s, as words.
function cheaper(x, than) {
	if (x == "-" || x == "") return "(not measured) against " than
	return x >= 1 ? sprintf("%.1f times cheaper than %s", x, than) \
		      : sprintf("%.1f times the cost of %s", 1 / x, than)
}
/^### / { sec = $0; cgpart = ""; next }
sec == "### Targets" && /^- \*\*/ { targets[++nt] = $0 }
sec == "### Walker targets" && /^- \*\*/ { goals[++ng] = $0 }
sec ~ /^### Varied stacks/ && /^\| / {
	row(f)
	if (f[2] == "method" || f[2] == "build" || f[2] ~ /^-/) next
	if (f[3] ~ /^[0-9]+$/) {
		# build d sfb/FP a frame, a call, unw/sfb, glibc/sfb
		val["vr", f[2], f[3], "fp"] = f[4]; val["vr", f[2], f[3], "unw"] = f[6]
		val["vr", f[2], f[3], "glibc"] = f[7]
	} else if (f[6] ~ /^[0-9.]+$/) {
		# method build, then frames ns/call ns/frame at d=8, 32, 128
		val["var", f[2], f[3], 8] = f[6]; val["var", f[2], f[3], 32] = f[9]
		val["var", f[2], f[3], 128] = f[12]; val["var", f[2], f[3], "call"] = f[8]
		val["var", f[2], f[3], "frames"] = f[7]
	}
}
sec ~ /^### SIGPROF samples of real programs/ {
	if (/^Geometric mean/) { g = $0; sub(/.*programs: /, "", g); sub(/\.$/, "", g); val["realgeo"] = g }
	if (/^\| / && row(f) && f[5] ~ /^[0-9]+$/) {
		# program samples equal sfb p90 unw p90 ratio
		np++; prog[np] = f[2]; val["real", f[2], "n"] = f[3]; val["real", f[2], "eq"] = f[4]
		val["real", f[2], "sfb"] = f[5]; val["real", f[2], "unw"] = f[7]; val["real", f[2], "r"] = f[9]
		if (lo == "" || f[5] + 0 < lo) lo = f[5] + 0
		if (hi == "" || f[5] + 0 > hi) hi = f[5] + 0
		if (ulo == "" || f[7] + 0 < ulo) ulo = f[7] + 0
		if (uhi == "" || f[7] + 0 > uhi) uhi = f[7] + 0
	}
}
sec ~ /^### Warm backtraces/ && /^\| / {
	row(f)
	if (f[2] == "method" || f[2] ~ /^-/) next
	if (f[7] ~ /^[0-9.]+$/ && f[3] != "") {
		# method build d=8 ns/bt ns/frame d=32 ns/bt ns/frame d=128 ns/bt ns/frame
		val["warm", f[2], f[3], 8] = f[5]; val["warm", f[2], f[3], 32] = f[7]
		val["warm", f[2], f[3], 128] = f[9]
	} else if (f[3] == "128" || f[3] == "32") {
		# sframebt build, d, sframebt / FP, unw / sframebt, glibc / sframebt
		val["ratio", f[2], "fp" f[3]] = f[4]; val["ratio", f[2], "unw" f[3]] = f[5]
		val["ratio", f[2], "glibc" f[3]] = f[6]
	}
}
sec ~ /^### Natural-end walks/ && /^\| / {
	row(f)
	if (f[4] == "natural end, on a thread" && f[6] ~ /^[0-9.]+$/) f[3] = f[3] ", on a thread"
	if (f[4] == "natural end, on a fiber" && f[6] ~ /^[0-9.]+$/) f[3] = f[3] ", on a fiber"
	if (f[4] == "natural end, on a fiber, its stack named" && f[6] ~ /^[0-9.]+$/) f[3] = f[3] ", on a fiber, named"
	if (f[4] ~ /^natural end/ && f[6] ~ /^[0-9.]+$/) {
		# method build walk frames ns/call ns/frame ...
		val["nat", f[2], f[3], "frames"] = f[5]; val["nat", f[2], f[3], "call"] = f[6]
		val["nat", f[2], f[3], "frame"] = f[7]
	} else if (f[3] ~ /^[0-9]+$/ && f[4] ~ /^[0-9.]+$/) {
		# sframebt build, frames, sfb/FP a frame, a call, unw/sfb, glibc/sfb, past the chain
		val["natr", f[2], "fpf"] = f[4]; val["natr", f[2], "fpc"] = f[5]
		val["natr", f[2], "unw"] = f[6]; val["natr", f[2], "glibc"] = f[7]
		val["natr", f[2], "past"] = f[8]
	}
}
sec ~ /^### First interpretation of .eh_frame/ {
	if (/^Cold CFI: /) {
		c = $0; sub(/^Cold CFI: /, "", c); sub(/ us a CFI row.*/, "", c); val["cfi", "fresh"] = c
		c = $0; sub(/ us a libc frame.*/, "", c); sub(/.*; /, "", c); val["cfi", "libc"] = c
		c = $0; sub(/ ns in this process.*/, "", c); sub(/.*; /, "", c); val["cfi", "memo"] = c
	}
	if (/^\| /) {
		row(f)
		m = f[2] ~ /^sframebt, the chain/ ? "split" : f[2] ~ /after sframe_backtrace_warmup/ ? "warm" : \
		    f[2] == "sframebt" ? "sfb" : f[2] ~ /^unw/ ? "unw" : f[2] ~ /^glibc/ ? "glibc" : ""
		if (m != "" && f[4] ~ /^[0-9]/) { c = f[4]; sub(/ .*/, "", c); val["natfirst", m] = c }
	}
}
sec ~ /^### SIGPROF handler, depth 32, natural end/ && /^\| / {
	row(f)
	if (f[2] == "build" || f[2] ~ /^-/ || f[6] !~ /^[0-9]+$/) next
	m = f[3] ~ /^frame-pointer walk, natural/ ? "fp" : f[3] ~ /natural end, object kept/ ? "kept" : \
	    f[3] ~ /^sframebt, natural end/ ? "sfb" : f[3] ~ /^libunwind, natural/ ? "unw" : "full"
	if (m == "full") next
	val["natsig", f[2], m] = f[6]; val["natsig", f[2], m, "frames"] = f[4]
}
sec ~ /^### SIGPROF handler, depth 32, one unwinder per process/ && /^\| / {
	row(f)
	if (f[2] == "build" || f[2] ~ /^-/ || f[5] !~ /^[0-9]+$/) next
	iv = (sec ~ /1 ms/) ? "1ms" : "125us"
	m = f[3] ~ /^frame-pointer/ ? "fp" : f[3] ~ /kept loaded/ ? "kept" : \
	    f[3] ~ /^sframebt/ ? "sfb" : f[3] ~ /^libunwind/ ? "unw" : "other"
	val["sig", iv, f[2], m] = f[5]
}
sec ~ /^### First call/ && /^\| / {
	row(f)
	if (f[2] !~ /^[0-9]+$/) next
	m = f[3] ~ /after warmup/ ? "warm" : f[3] ~ /^sframebt/ ? "sfb" : \
	    f[3] ~ /^unw/ ? "unw" : f[3] ~ /^glibc/ ? "glibc" : "other"
	val["first", f[2], m] = f[4]
	val["faults", f[2], m] = f[8]
}
sec ~ /^### FDE lookups/ && /^\| / {
	row(f)
	if (f[2] ~ /^none/) { val["lk", "none", "warm"] = f[4]; val["lk", "none", "cold"] = f[5] }
	if (f[2] ~ /^256 buckets/) { val["lk", "256", "warm"] = f[4]; val["lk", "256", "cold"] = f[5] }
	if (f[2] == "libbench-real.so") { val["lk", "real", "warm"] = f[5]; val["lk", "real", "cold"] = f[6] }
}
sec ~ /^### Instructions per backtrace/ && /^- [a-z_]+\(\): [0-9.]+ calls a walk, [0-9]+ Ir/ {
	c = $0; sub(/^- /, "", c); sub(/ calls a walk, /, " calls, ", c); sub(/ a walk with what it calls$/, "", c)
	past = past (past == "" ? "" : "; ") "`" substr(c, 1, index(c, ":") - 1) "` " substr(c, index(c, ":") + 2)
}
sec ~ /^### Instructions per backtrace/ && /^Varied stacks \(the captures/ { cgpart = "var" }
sec ~ /^### Instructions per backtrace/ && /^Where sframebt.s instructions go on varied/ { cgpart = "varprof" }
sec ~ /^### Instructions per backtrace/ && /^The memo lookup by return address/ { cgpart = "memo" }
sec ~ /^### Instructions per backtrace/ && cgpart == "var" && /^\| / {
	row(f)
	if (f[10] ~ /^[0-9.]+$/) { val["varir", f[2], f[3], 32] = f[9]; val["varir", f[2], f[3], 128] = f[12] }
	next
}
sec ~ /^### Instructions per backtrace/ && cgpart == "varprof" && /^\| / {
	row(f)
	if (f[3] ~ /^[0-9.]+$/ && nvp < 6) vprof[++nvp] = "`" f[2] "` " f[3]
	next
}
sec ~ /^### Instructions per backtrace/ && cgpart == "memo" && /^\| / {
	row(f)
	if (f[7] ~ /^[0-9.]+$/) { val["memo", f[2], f[3]] = f[7]; val["memo", f[2], f[3], "calls"] = f[6]
		val["memo", f[2], f[3], "frames"] = f[4]; memofn = f[5] }
	next
}
sec ~ /^### Instructions per backtrace/ && /^\| / {
	row(f)
	if (f[9] ~ /^[0-9.]+$/) val["ir", f[2], f[3]] = f[9]
	else if (f[4] ~ /^[0-9]+$/ && f[6] ~ /^[0-9.]+$/ && f[7] == "") val["natir", f[2], f[3]] = f[6]
}
sec ~ /^### System calls/ && /^\| / {
	row(f)
	if (f[4] ~ /^[0-9.]+$/) val["sys", f[2], f[3]] = f[4]
}
END {
	fpm = "frame-pointer walk"; sfb = "sframebt"
	unw = "libunwind unw_backtrace"; gl = "glibc backtrace()"
	hdr = sprintf("Measured by `make bench` on %s, sframebt %s: %s; %s; %s.", \
	              when, rev, cpu, kern, comp)

	print hdr > short
	print "" > short
	print "| measure | sframebt | frame-pointer walk | libunwind | glibc `backtrace()` |" > short
	print "|---|---:|---:|---:|---:|" > short
	printf "| warm, ns a frame at depth 128, main program | %s | %s | %s | %s |\n", \
		v("warm" SUBSEP sfb SUBSEP "main" SUBSEP 128), v("warm" SUBSEP fpm SUBSEP "fp" SUBSEP 128), \
		v("warm" SUBSEP unw SUBSEP "main" SUBSEP 128), v("warm" SUBSEP gl SUBSEP "main" SUBSEP 128) > short
	printf "| warm, ns a frame at depth 128, `dlopen()`ed library | %s | - | %s | %s |\n", \
		v("warm" SUBSEP sfb SUBSEP "v3" SUBSEP 128), \
		v("warm" SUBSEP unw SUBSEP "v3" SUBSEP 128), v("warm" SUBSEP gl SUBSEP "v3" SUBSEP 128) > short
	printf "| SIGPROF sample, depth 32, ns, main program | %s | - | %s | - |\n", \
		v("sig" SUBSEP "125us" SUBSEP "main" SUBSEP "sfb"), v("sig" SUBSEP "125us" SUBSEP "main" SUBSEP "unw") > short
	printf "| SIGPROF sample, depth 32, ns, `dlopen()`ed library (kept loaded) | %s (%s) | - | %s | - |\n", \
		v("sig" SUBSEP "125us" SUBSEP "v3" SUBSEP "sfb"), v("sig" SUBSEP "125us" SUBSEP "v3" SUBSEP "kept"), \
		v("sig" SUBSEP "125us" SUBSEP "v3" SUBSEP "unw") > short
	printf "| SIGPROF sample, depth 32, ns, 32 distinct functions | %s | %s | %s | - |\n", \
		v("sig" SUBSEP "125us" SUBSEP "distinct" SUBSEP "sfb"), v("sig" SUBSEP "125us" SUBSEP "distinct" SUBSEP "fp"), \
		v("sig" SUBSEP "125us" SUBSEP "distinct" SUBSEP "unw") > short
	printf "| first call with 100 objects loaded, µs | %s | - | %s | %s |\n", \
		v("first" SUBSEP 100 SUBSEP "sfb"), v("first" SUBSEP 100 SUBSEP "unw"), v("first" SUBSEP 100 SUBSEP "glibc") > short
	printf "| walk to the natural end (through libc to `_start`), depth 32, warm, ns a frame, main program | %s | %s | %s | %s |\n", \
		v("nat" SUBSEP sfb SUBSEP "main" SUBSEP "frame"), v("nat" SUBSEP fpm SUBSEP "fp" SUBSEP "frame"), \
		v("nat" SUBSEP unw SUBSEP "main" SUBSEP "frame"), v("nat" SUBSEP gl SUBSEP "main" SUBSEP "frame") > short
	printf "| SIGPROF sample to the natural end, depth 32, ns, main program | %s | - | %s | - |\n", \
		v("natsig" SUBSEP "main" SUBSEP "sfb"), v("natsig" SUBSEP "main" SUBSEP "unw") > short
	printf "| SIGPROF sample to the natural end, depth 32, ns, 32 distinct functions | %s | %s | - | - |\n", \
		v("natsig" SUBSEP "distinct" SUBSEP "sfb"), v("natsig" SUBSEP "distinct" SUBSEP "fp") > short
	printf "| first walk to the natural end in a fresh process, µs | %s | - | %s | %s |\n", \
		v("natfirst" SUBSEP "sfb"), v("natfirst" SUBSEP "unw"), v("natfirst" SUBSEP "glibc") > short
	printf "| first interpretation of a `.eh_frame` row, fresh process, µs | %s | - | - | - |\n", \
		v("cfi" SUBSEP "fresh") > short
	printf "| varied stacks (a new stack every call), to the natural end, depth 32, warm, ns a frame, main program | %s | %s | %s | %s |\n", \
		v("var" SUBSEP sfb SUBSEP "main" SUBSEP 32), v("var" SUBSEP fpm SUBSEP "main" SUBSEP 32), \
		v("var" SUBSEP unw SUBSEP "main" SUBSEP 32), v("var" SUBSEP gl SUBSEP "main" SUBSEP 32) > short
	if (np)
		printf "| SIGPROF samples of real programs, median ns a sample, lowest–highest of %d programs | %s–%s | - | %s–%s | - |\n", \
			np, lo, hi, ulo, uhi > short
	print "" > short
	printf "Varied stacks: %s per frame against the frame-pointer walk, per call %s and %s (main program, depth 32).", \
		v("vr" SUBSEP "main" SUBSEP 32 SUBSEP "fp") "x", \
		cheaper(v("vr" SUBSEP "main" SUBSEP 32 SUBSEP "unw"), "libunwind"), \
		cheaper(v("vr" SUBSEP "main" SUBSEP 32 SUBSEP "glibc"), "glibc") > short
	if (np) {
		printf " SIGPROF samples of real programs (" > short
		for (i = 1; i <= np; i++) printf "%s%s", (i > 1 ? ", " : ""), prog[i] > short
		printf "): %s (geometric mean of the per-program ratios of medians).", \
			cheaper(v("realgeo"), "libunwind") > short
	}
	print "" > short

	# The README'"'"'s "Why": the main program, depth 32, repeated and varied.
	print "Measured by `make bench` (the main program, warm, depth 32; [Speed](#speed)): on a" > why
	printf "call chain that repeats one stack, a walk is %s\nand %s; on stacks that vary\n", \
		cheaper(v("ratio" SUBSEP "main" SUBSEP "glibc32"), "glibc'"'"'s `backtrace()`"), \
		cheaper(v("ratio" SUBSEP "main" SUBSEP "unw32"), "libunwind'"'"'s `unw_backtrace()`") > why
	printf "from call to call (a function called from several places), %s\nand %s.\n", \
		cheaper(v("vr" SUBSEP "main" SUBSEP 32 SUBSEP "glibc"), "glibc'"'"'s"), \
		cheaper(v("vr" SUBSEP "main" SUBSEP 32 SUBSEP "unw"), "libunwind'"'"'s") > why
	printf "A SIGPROF sample of the benchmark'"'"'s depth-32 chain costs %s ns (%s ns walked\n", \
		v("sig" SUBSEP "125us" SUBSEP "main" SUBSEP "sfb"), v("natsig" SUBSEP "main" SUBSEP "sfb") > why
	if (np)
		printf "through libc to `_start`); a sample of a real program costs %s–%s ns (medians of\n%d Debian programs), %s (geometric mean).\n", \
			lo, hi, np, cheaper(v("realgeo"), "libunwind'"'"'s") > why
	else
		printf "through libc to `_start`); samples of real programs were not measured.\n" > why

	printf "Measured by `make bench` on %s, sframebt %s:\n\n", when, rev > full
	if (cpu != "") print "- CPU: " cpu > full
	if (kern != "") print "- Kernel: " kern > full
	if (comp != "") print "- Compiler: " comp > full
	if (bu != "") print "- Binutils: " bu > full
	if (lu != "") print "- " lu > full
	print "" > full
	print "**Warm backtraces** (normal context, a recursive chain, ns a frame; callgrind" > full
	print "instructions a frame at depth 128 in brackets). `main`: the chain in the main" > full
	print "program; `linked`: in a library linked at start-up; `v1`/`v2`/`v3`: in a" > full
	print "`dlopen()`ed library built by binutils 2.40/2.44/2.47; `fp`: built with frame pointers." > full
	print "" > full
	print "| method | build | d=8 | d=32 | d=128 |" > full
	print "|---|---|---:|---:|---:|" > full
	nm = split("fp:" fpm ";main:" sfb ";linked:" sfb ";v1:" sfb ";v2:" sfb ";v3:" sfb ";v3:" unw ";v3:" gl, L, ";")
	for (i = 1; i <= nm; i++) {
		b = substr(L[i], 1, index(L[i], ":") - 1); m = substr(L[i], index(L[i], ":") + 1)
		if (!(("warm" SUBSEP m SUBSEP b SUBSEP 128) in val)) continue
		printf "| %s | %s | %s | %s | %s (%s) |\n", m, (m == unw || m == gl) ? "any" : b, \
			v("warm" SUBSEP m SUBSEP b SUBSEP 8), v("warm" SUBSEP m SUBSEP b SUBSEP 32), \
			v("warm" SUBSEP m SUBSEP b SUBSEP 128), v("ir" SUBSEP m SUBSEP b) > full
	}
	print "" > full
	print "Paired ratios at depths 32 and 128 (the median over the rounds of each round'"'"'s ratio):" > full
	print "" > full
	print "| build | sframebt / frame-pointer walk, d=32 | d=128 | libunwind / sframebt, d=32 | d=128 | glibc / sframebt, d=32 | d=128 |" > full
	print "|---|---:|---:|---:|---:|---:|---:|" > full
	build_rows("main linked v1 v2 v3", "ratio", "fp32 fp128 unw32 unw128 glibc32 glibc128")
	print "" > full
	print "**Varied stacks** (a new stack every call: chains of 6 function shapes along random" > full
	print "paths, so that a function has several callers; to the natural end through libc to" > full
	print "`_start`), warm, ns a frame (callgrind instructions a frame in brackets). `main`: in" > full
	print "the main program, `fp`: a `dlopen()`ed library, both with frame pointers (the" > full
	print "frame-pointer walk on the same code); `v1`/`v3`: `dlopen()`ed, built by binutils 2.40/2.47" > full
	print "without frame pointers." > full
	print "" > full
	print "| method | build | frames at d=32 | ns a call at d=32 | d=8 | d=32 | d=128 |" > full
	print "|---|---|---:|---:|---:|---:|---:|" > full
	nm = split("main:" fpm ";main:" sfb ";main:" unw ";main:" gl ";fp:" fpm ";fp:" sfb ";v1:" sfb ";v3:" sfb, L, ";")
	for (i = 1; i <= nm; i++) {
		b = substr(L[i], 1, index(L[i], ":") - 1); m = substr(L[i], index(L[i], ":") + 1)
		if (!(("var" SUBSEP m SUBSEP b SUBSEP 32) in val)) continue
		printf "| %s | %s | %s | %s | %s | %s (%s) | %s (%s) |\n", m, b, \
			v("var" SUBSEP m SUBSEP b SUBSEP "frames"), v("var" SUBSEP m SUBSEP b SUBSEP "call"), \
			v("var" SUBSEP m SUBSEP b SUBSEP 8), \
			v("var" SUBSEP m SUBSEP b SUBSEP 32), v("varir" SUBSEP m SUBSEP b SUBSEP 32), \
			v("var" SUBSEP m SUBSEP b SUBSEP 128), v("varir" SUBSEP m SUBSEP b SUBSEP 128) > full
	}
	print "" > full
	print "Paired ratios on varied stacks (the median over the rounds of each round'"'"'s ratio;" > full
	print "against the frame-pointer walk a frame, on the `fp` build'"'"'s code for `v1` and `v3`):" > full
	print "" > full
	print "| build | sframebt / frame-pointer walk, d=32 | d=128 | libunwind / sframebt, d=32 | d=128 | glibc / sframebt, d=32 | d=128 |" > full
	print "|---|---:|---:|---:|---:|---:|---:|" > full
	nb = split("main fp v1 v3", B, " ")
	for (i = 1; i <= nb; i++)
		if (("vr" SUBSEP B[i] SUBSEP 32 SUBSEP "fp") in val)
			printf "| %s | %s | %s | %s | %s | %s | %s |\n", B[i], \
				v("vr" SUBSEP B[i] SUBSEP 32 SUBSEP "fp"), v("vr" SUBSEP B[i] SUBSEP 128 SUBSEP "fp"), \
				v("vr" SUBSEP B[i] SUBSEP 32 SUBSEP "unw"), v("vr" SUBSEP B[i] SUBSEP 128 SUBSEP "unw"), \
				v("vr" SUBSEP B[i] SUBSEP 32 SUBSEP "glibc"), v("vr" SUBSEP B[i] SUBSEP 128 SUBSEP "glibc") > full
	print "" > full
	if (("memo" SUBSEP "main" SUBSEP 128) in val) {
		printf "A memo lookup by return address that misses its hint (`%s`, callgrind inclusive\n", memofn > full
		printf "instructions / calls, main build): %s Ir a call at depth 128 (%s calls a walk of %s frames),\n", \
			v("memo" SUBSEP "main" SUBSEP 128), v("memo" SUBSEP "main" SUBSEP 128 SUBSEP "calls"), \
			v("memo" SUBSEP "main" SUBSEP 128 SUBSEP "frames") > full
		printf "%s at depth 32 (%s calls, %s frames).", v("memo" SUBSEP "main" SUBSEP 32), \
			v("memo" SUBSEP "main" SUBSEP 32 SUBSEP "calls"), v("memo" SUBSEP "main" SUBSEP 32 SUBSEP "frames") > full
		if (nvp) {
			printf " Where sframebt'"'"'s instructions go (self cost, Ir a frame, main build, depth 32):" > full
			for (i = 1; i <= nvp; i++) printf "%s %s", (i > 1 ? "," : ""), vprof[i] > full
			printf "." > full
		}
		print "" > full
		print "" > full
	}
	if (np) {
		print "**SIGPROF samples of real programs** (Debian'"'"'s, `tests/world/probe.c` preloaded: each" > full
		print "sample walked by sframebt and by libunwind on the same ucontext), median ns a walk:" > full
		print "" > full
		print "| program | samples | stacks equal | sframebt | libunwind | libunwind / sframebt |" > full
		print "|---|---:|---:|---:|---:|---:|" > full
		for (i = 1; i <= np; i++)
			printf "| %s | %s | %s | %s | %s | %s |\n", prog[i], v("real" SUBSEP prog[i] SUBSEP "n"), \
				v("real" SUBSEP prog[i] SUBSEP "eq"), v("real" SUBSEP prog[i] SUBSEP "sfb"), \
				v("real" SUBSEP prog[i] SUBSEP "unw"), v("real" SUBSEP prog[i] SUBSEP "r") > full
		print "" > full
		printf "Geometric mean of the ratios: %s.\n", v("realgeo") > full
		print "" > full
	}
	print "**SIGPROF samples** at depth 32, one unwinder per process, median ns in the" > full
	print "handler; samples 125 µs apart (1 ms apart in brackets, where measured)." > full
	print "`distinct`: 32 distinct functions with frame pointers, so the frame-pointer" > full
	print "walk runs on the same code." > full
	print "" > full
	print "| build | sframebt | kept loaded | frame-pointer walk | libunwind |" > full
	print "|---|---:|---:|---:|---:|" > full
	build_rows("main linked v1 v2 v3 distinct fp", "sig" SUBSEP "125us", "sfb kept fp unw",
		   "sig" SUBSEP "1ms", "")
	print "" > full
	print "**Walks to the natural end** (depth 32, a buffer larger than the stack: through the" > full
	print "chain, the driver'"'"'s frames and `main()` into libc, to `_start`; libc'"'"'s frames and" > full
	print "`_start` unwound with `.eh_frame` CFI). The frame-pointer walk ends where frame records" > full
	print "end (after `main()`'"'"'s return address into libc), so each method is charged per frame" > full
	print "it returned; warm, ns (callgrind instructions a frame in brackets). `on a thread`: the" > full
	print "chain on a new thread, whose stack ends in libc'"'"'s `start_thread` and `clone3`; `on a" > full
	print "fiber`: on a `makecontext()` stack (`mmap()`ed), ending in libc'"'"'s `__start_context`;" > full
	print "`named`: the fiber names its stack with `sframe_backtrace_set_stack()`." > full
	print "" > full
	print "| method | build | frames | ns a call | ns a frame |" > full
	print "|---|---|---:|---:|---:|" > full
	nm = split("fp:" fpm ";main:" sfb ";linked:" sfb ";v3:" sfb ";main:" unw ";main:" gl \
		";fp, on a thread:" fpm ";main, on a thread:" sfb ";main, on a thread:" unw ";main, on a thread:" gl \
		";main, on a fiber:" sfb ";main, on a fiber, named:" sfb ";main, on a fiber:" unw ";main, on a fiber:" gl, L, ";")
	for (i = 1; i <= nm; i++) {
		b = substr(L[i], 1, index(L[i], ":") - 1); m = substr(L[i], index(L[i], ":") + 1)
		if (!(("nat" SUBSEP m SUBSEP b SUBSEP "call") in val)) continue
		printf "| %s | %s | %s | %s | %s (%s) |\n", m, b, v("nat" SUBSEP m SUBSEP b SUBSEP "frames"), \
			v("nat" SUBSEP m SUBSEP b SUBSEP "call"), v("nat" SUBSEP m SUBSEP b SUBSEP "frame"), \
			v("natir" SUBSEP m SUBSEP b) > full
	}
	print "" > full
	if (past != "") {
		print "Calls past the row memo in each natural-end walk (callgrind, main build; Ir with" > full
		print "what they call): " past "." > full
		print "" > full
	}
	print "Paired ratios (the median over the rounds of each round'"'"'s ratio), and what a frame" > full
	print "past the chain costs sframebt (natural end against a full 32-entry buffer):" > full
	print "" > full
	print "| build | sframebt / frame-pointer walk, a frame | a call | libunwind / sframebt | glibc / sframebt | ns a frame past the chain |" > full
	print "|---|---:|---:|---:|---:|---:|" > full
	build_rows("main linked v1 v2 v3", "natr", "fpf fpc unw glibc past")
	print "" > full
	print "**SIGPROF samples to the natural end**, depth 32, one unwinder per process, 125 µs" > full
	print "apart, median ns in the handler (frames in brackets):" > full
	print "" > full
	print "| build | sframebt | kept loaded | frame-pointer walk | libunwind |" > full
	print "|---|---:|---:|---:|---:|" > full
	build_rows("main linked v3 distinct", "natsig", "sfb kept fp unw", "natsig", SUBSEP "frames")
	print "" > full
	printf "**A `.eh_frame` row first seen** costs %s µs in a fresh process whose objects were\n", v("cfi" SUBSEP "fresh") > full
	print "described first (`sframe_backtrace_warmup()`): the first walk through libc after the" > full
	print "chain'"'"'s SFrame rows were memoised, less a warm walk, per libc frame. Without the warm-up" > full
	printf "that walk also describes libc: %s µs a libc frame. With the row memo emptied in a warm\n", v("cfi" SUBSEP "libc") > full
	printf "process: %s ns a row. The first walk to the natural end in a\n", v("cfi" SUBSEP "memo") > full
	printf "fresh process: sframebt %s µs (%s after `sframe_backtrace_warmup()`), libunwind %s µs,\n", \
		v("natfirst" SUBSEP "sfb"), v("natfirst" SUBSEP "warm"), v("natfirst" SUBSEP "unw") > full
	printf "glibc %s µs.\n", v("natfirst" SUBSEP "glibc") > full
	print "" > full
	print "**First call** in a fresh process that has `dlopen()`ed K small objects, µs" > full
	print "(page faults in brackets):" > full
	print "" > full
	print "| objects | sframebt | after `sframe_backtrace_warmup()` | libunwind | glibc |" > full
	print "|---:|---:|---:|---:|---:|" > full
	nb = split("1 10 100", B, " ")
	for (i = 1; i <= nb; i++)
		if (("first" SUBSEP B[i] SUBSEP "sfb") in val) {
			line = "| " B[i] " |"
			nk = split("sfb warm unw glibc", K, " ")
			for (k = 1; k <= nk; k++)
				line = line " " v("first" SUBSEP B[i] SUBSEP K[k]) " (" v("faults" SUBSEP B[i] SUBSEP K[k]) ") |"
			print line > full
		}
	print "" > full
	print "**First-time lookups** (FDE search and FRE scan), ns, warm and with the section" > full
	print "flushed from the caches:" > full
	print "" > full
	print "| object | warm | cold |" > full
	print "|---|---:|---:|" > full
	printf "| 4097 functions, no coarse index | %s | %s |\n", v("lk" SUBSEP "none" SUBSEP "warm"), v("lk" SUBSEP "none" SUBSEP "cold") > full
	printf "| 4097 functions, 256-bucket index (as built) | %s | %s |\n", v("lk" SUBSEP "256" SUBSEP "warm"), v("lk" SUBSEP "256" SUBSEP "cold") > full
	printf "| real code (sframebt built -O2 -fomit-frame-pointer) | %s | %s |\n", v("lk" SUBSEP "real" SUBSEP "warm"), v("lk" SUBSEP "real" SUBSEP "cold") > full
	print "" > full
	printf "System calls per warm backtrace: %s (%s in the SIGPROF handler; libunwind %s); to the\n", \
		v("sys" SUBSEP "sframebt" SUBSEP "v1"), v("sys" SUBSEP "sframebt (SIGPROF handler)" SUBSEP "v1"), \
		v("sys" SUBSEP "unw (SIGPROF handler)" SUBSEP "v1") > full
	printf "natural end: %s (main program), %s (`dlopen()`ed), %s in the SIGPROF handler.\n", \
		v("sys" SUBSEP "sframebt-nat" SUBSEP "main"), v("sys" SUBSEP "sframebt-nat" SUBSEP "v3"), \
		v("sys" SUBSEP "sframebt-nat (SIGPROF handler)" SUBSEP "v1") > full
	print "" > full
	print "**Targets** checked by the run:" > full
	print "" > full
	for (i = 1; i <= nt; i++) print targets[i] > full
	print "" > full
	print "**Walker targets** (\"Targets for the walker\" above), met or missed by this run:" > full
	print "" > full
	for (i = 1; i <= ng; i++) print goals[i] > full
}' "$R" || exit 1

# replace FILE BEGIN END BLOCK: the lines strictly between the markers.
replace() {
	grep -q "^$2\$" "$1" && grep -q "^$3\$" "$1" || return 0
	awk -v b="$2" -v e="$3" -v blk="$4" '
		$0 == b { print; while ((getline l < blk) > 0) print l; skip = 1; next }
		$0 == e { skip = 0 }
		!skip' "$1" >"$tmp.out" && cat "$tmp.out" >"$1"
}
for f; do
	[ -f "$f" ] || continue
	replace "$f" '<!-- results:begin -->' '<!-- results:end -->' "$tmp.full"
	replace "$f" '<!-- speed:begin -->' '<!-- speed:end -->' "$tmp.short"
	replace "$f" '<!-- why:begin -->' '<!-- why:end -->' "$tmp.why"
done
