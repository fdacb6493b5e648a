#!/bin/sh
# The distribution corpus: sframebt against libunwind on unmodified
# programs from Debian packages.  Each workload below runs for about a
# second with tests/world/probe.so preloaded into every process of its tree
# (SIGPROF at 1 kHz on every thread; each sample's whole stack walked by
# both unwinders from the same ucontext and compared at exit; one result
# file a process, see probe.c).  A line per program:
#   ok - bc -l: 1043/1043 samples equal (4 processes, 1.2 s; median ns a walk: sframebt 410, libunwind 6100)
# or "not ok - ..." followed by the disagreements grouped by reason,
# sframebt's stop reason and the object where it went wrong, and both
# stacks of the first one.  Passes at >= 99% equal for each program and
# >= 99.9% of all samples.
#
# Usage: SFB_BUILD=build sh tests/world/t_world.sh [name-substring ...]
# SFB_WORLD_KEEP=DIR keeps the inputs and result files in DIR.
set -u
B=${SFB_BUILD:-build}
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
cd "$top" || exit 1
case "$B" in /*) ;; *) B=$top/$B ;; esac

# ---- The workloads: name, Debian package, command (run by sh in the
# input directory, output thrown away).  Each is sized to about a second
# of CPU on this project's 2-core machines and ends by itself.
WORKLOADS=
w() { WORKLOADS="$WORKLOADS$1|$2|$3
"; }
# compressors (pigz, xz -T2, zstd -T2, plzip, pbzip2, 7z: threaded).  Not
# lbzip2: its main thread waits in sigsuspend() and ends the program with
# status 1 on any caught signal, so no SIGPROF profiler can sample it.
w "gzip -6"        gzip        'gzip -6 -c data.txt'
w "xz -T2"         xz-utils    'head -c 4000000 data.txt | xz -T2 -6 --block-size=1MiB -c'
w "bzip2 -9"       bzip2       'head -c 12000000 data.txt | bzip2 -9 -c'
w "zstd -T2"       zstd        'head -c 12000000 data.txt | zstd -q -T2 -12 -B2MiB -c'
w "pigz -p2"       pigz        'pigz -p 2 -9 -c data.txt'
w "plzip -n2"      plzip       'head -c 2500000 data.txt | plzip -n2 -B 1MiB -6 -c'
w "pbzip2 -p2"     pbzip2      'pbzip2 -p2 -9 -c data.txt'
w "7z -mmt2"       p7zip-full  'head -c 1500000 data.txt >7z.in && 7z a -bd -mmt2 -mx5 -txz 7z.xz 7z.in >/dev/null; rm -f 7z.xz'
w "lz4 -9"         lz4         'lz4 -q -9 -c data.txt'
w "brotli -q9"     brotli      'head -c 1500000 data.txt | brotli -q 9 -c'
# interpreters
w "python3"        python3     '/usr/bin/python3 -c "import json,re; d=[{\"k\":i,\"v\":str(i)*3} for i in range(500000)]; s=json.dumps(d); print(len(re.findall(r\"[0-9]+\", s)))"'
w "python3 threads" python3    '/usr/bin/python3 -c "import threading, hashlib, zlib; b = bytes(range(256)) * 4096; work = lambda n: [zlib.compress(hashlib.sha256(b + bytes([i % 256])).digest() * 4096, 6) for i in range(n)]; ts = [threading.Thread(target=work, args=(60,)) for _ in range(3)]; [t.start() for t in ts]; [t.join() for t in ts]"'
w "perl"           perl        'perl -e "my %h; for my \$i (1..6000000) { \$h{\$i % 5000} .= chr(65 + \$i % 26); } my \$s = join(q(,), map { length \$h{\$_} } sort keys %h); print length(\$s), qq(\n)"'
w "lua5.4"         lua5.4      'lua5.4 -e "local t = {} for i = 1, 20000000 do local k = i % 1000 t[k] = (t[k] or 0) + i end local s = {} for i = 1, 200000 do s[#s + 1] = tostring(i) end print(#table.concat(s, \",\"))"'
w "bc -l"          bc          'echo "scale=1500; 4*a(1)" | bc -l'
w "dc"             dc          'dc -e "3 250000 ^ 7 % p"'
w "gawk"           gawk        'gawk "BEGIN { for (i = 0; i < 2000000; i++) { a[i % 1000] += i; s = s sprintf(\"%d\", i % 7) } print length(s) }"'
w "tclsh"          tcl         'echo "set s 0; for {set i 0} {\$i < 2500000} {incr i} {set s [expr {\$s + \$i % 7}]}; puts \$s" | tclsh'
w "ruby"           ruby        'ruby -e "h = {}; 8000000.times { |i| h[i % 1000] = (h[i % 1000] || 0) + i }; p h.size"'
# ruby's Fibers: each runs on a stack of its own (mmap()ed, not the
# thread's), entered through a return address of 0
w "ruby fibers"    ruby        'ruby -e "fs = (1..4).map { |k| Fiber.new { h = {}; loop { 20000.times { |i| h[i % 100] = (h[i % 100] || 0) + i * k }; Fiber.yield h.size } } }; 400.times { fs.each(&:resume) }; p fs.size"'
# PHP's Fibers: boost.context's make_fcontext() stacks, whose entry
# returns to its exit trampoline.  PHP takes SIGPROF for its own time
# limit: sampled with a real-time signal
w "php fibers"     php-cli     'SFB_WORLD_SIGNAL=rt php -r "\$fs = []; for (\$k = 1; \$k <= 4; \$k++) { \$fs[] = new Fiber(function () use (\$k) { \$h = []; while (true) { for (\$i = 0; \$i < 20000; \$i++) { \$h[\$i % 100] = (\$h[\$i % 100] ?? 0) + \$i * \$k; } Fiber::suspend(count(\$h)); } }); } foreach (\$fs as \$f) \$f->start(); for (\$n = 0; \$n < 700; \$n++) foreach (\$fs as \$f) \$f->resume(); echo count(\$fs);"'
# JIT compilers whose code nothing registers (guile's, PyPy's, LuaJIT's traces):
# walks stop there, no-object, right up to it (tests/lib/unw_compare.h)
w "guile (JIT)"    guile-3.0   'guile -c "(define (fib n) (if (< n 2) n (+ (fib (- n 1)) (fib (- n 2))))) (display (fib 33)) (newline)"'
# PyPy: its JIT's code too, under stacks deeper than the probe keeps
w "pypy3 (JIT)"    pypy3       'pypy3 -c "import json, re; d = [{\"k\": i, \"v\": str(i) * 3} for i in range(300000)]; s = json.dumps(d); print(len(re.findall(r\"[0-9]+\", s)))"'
w "luajit"         luajit      'luajit -e "local t = {} for i = 1, 3e8 do local k = i % 1000 t[k] = (t[k] or 0) + i end local s = {} for i = 1, 500000 do s[#s + 1] = tostring(i) end print(#table.concat(s, \",\"))"'
# databases
w "sqlite3"        sqlite3     'sqlite3 :memory: "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 3000000) SELECT sum(x * x % 7), count(*) FROM c;"'
# compilers and build tools (gcc: the driver, cc1 and as, each sampled)
w "gcc -O2"        gcc         'gcc -O2 -c gen.c -o gen.o'
w "make"           make        'make -s -r -f gen.mk'
w "objdump -d"     binutils    'objdump -d /usr/bin/make /usr/bin/make /usr/bin/make /usr/bin/make'
# C++ compilers (cc1plus, and LLVM built by clang), on template-heavy C++
w "g++ -O2"        g++         'g++ -O2 -c gen.cpp -o gencpp.o'
w "clang-14 -O2"   clang-14    'clang-14 -O2 -c gen.c -o genc.o'
# Rust (threaded: ripgrep's and fd's walker pools)
w "rg"             ripgrep     'for i in 1 2 3 4 5 6; do rg -c -w "[a-zA-Z]{2,5}[0-9]+[a-z]" data.txt data.txt data.txt data.txt; done'
w "fdfind"         fd-find     'for i in 1 2 3 4 5 6 7 8 9 10; do fdfind -u . /usr/share >/dev/null; done'
# XML (libxml2): parse, reformat, canonicalise
w "xmllint"        libxml2-utils 'xmllint --noout big.xml; xmllint --format big.xml >/dev/null; xmllint --c14n big.xml >/dev/null'
# coreutils and friends
# sort takes SIGPROF as a request to end (cleans up, re-raises): sampled
# with a real-time signal
w "sort --parallel=2" coreutils 'SFB_WORLD_SIGNAL=rt sort --parallel=2 -S 64M data.txt data.txt'
w "sha256sum"      coreutils   'sha256sum data.txt data.txt data.txt data.txt data.txt data.txt data.txt data.txt'
w "md5sum"         coreutils   'md5sum data.txt data.txt data.txt data.txt data.txt data.txt data.txt data.txt data.txt data.txt'
w "tar czf"        tar         'tar czf - data.txt'
w "diff"           diffutils   'head -n 600000 a.txt >a6.txt; head -n 600000 b.txt >b6.txt; diff a6.txt b6.txt; [ $? -eq 1 ]'
w "sed -E"         sed         'head -c 14000000 data.txt | sed -E "s/([a-z]+)([0-9]+)/\2\1/g"'
# (grep stops at the first match when its output is /dev/null)
w "grep -E"        grep        'grep -cE "([a-z])[0-9]\1" data.txt >grep.out'
w "git diff"       git         'git --no-pager diff --no-index --stat a.txt b.txt; [ $? -eq 1 ]'
w "openssl sha512" openssl     'openssl dgst -sha512 data.txt data.txt data.txt data.txt data.txt data.txt data.txt data.txt'
w "jq"             jq          'jq -n "[range(200000)] | map(. * 3 | tostring) | sort | length"'

# ---- Setup
for f in tests/lib/install-deps.sh tests/install-deps.sh; do
	[ -f "$f" ] && . "./$f" && break
done
pkgs=$(printf '%s' "$WORKLOADS" | cut -d'|' -f2 | sort -u | tr '\n' ' ')
install_deps libunwind-dev gcc openssl $pkgs || {
	echo "not ok - installing the packages: $pkgs"
	exit 1
}

# The probe (tests/world/build.mk), rebuilt when it or the library changed.
probe=$B/tests/world/probe.so
make -s B="$B" "$probe" >/dev/null || {
	echo "not ok - building the probe"
	exit 1
}

if [ -n "${SFB_WORLD_KEEP:-}" ]; then
	work=$SFB_WORLD_KEEP
	rm -rf "$work"
	mkdir -p "$work"
else
	work=$(mktemp -d)
	trap 'rm -rf "$work"' EXIT
fi
work=$(cd "$work" && pwd)
in=$work/in
mkdir -p "$in" "$work/out"

# ---- Inputs, deterministic: base64 of an AES-CTR key stream (random-looking
# but compressible text) next to line numbers; a C file for cc1 and clang
# and a C++ file for cc1plus (awk); an XML document; a makefile whose work
# is make's own text functions; two files that differ in many lines for
# git's diff.
(
	cd "$in" || exit 1
	head -c 6000000 /dev/zero | openssl enc -aes-128-ctr -nosalt \
		-K 000102030405060708090a0b0c0d0e0f -iv 00000000000000000000000000000000 |
		base64 -w 76 >rnd.txt
	seq 1 1500000 | paste -d' ' - rnd.txt | head -c 20000000 >data.txt
	awk -v N=50 'BEGIN {
		for (i = 0; i < N; i++) {
			printf "int f%d(int *a, int n) {\n\tint s = %d;\n", i, i
			printf "\tfor (int k = 0; k < n; k++) {\n\t\tswitch ((a[k] + k) %% 7) {\n"
			for (c = 0; c < 7; c++)
				printf "\t\tcase %d: s = s * %d + a[(k + %d) %% n] - f%d(a, n / 2); break;\n",
					c, c + 3, c, (i * 7 + c) % (i + 1)
			printf "\t\t}\n\t\tif (s > %d) s ^= a[k] << %d;\n\t}\n\treturn s;\n}\n", i * 13, i % 5
		}
	}' >gen.c
	awk -v N=25000 'BEGIN {
		printf "N :="
		for (i = 0; i < N; i++) printf " %d", i * 7919 % 100003
		print ""
		print "f = $(subst 1,one,$(subst 2,two,$(patsubst %3,%three,$(1))))"
		print "R := $(foreach a,$(N),$(foreach b,0 1 2 3 4 5 6 7 8 9,$(call f,$(a)$(b))))"
		print "S := $(sort $(R))"
		print "$(foreach t,$(wordlist 1,20000,$(S)),$(eval t_$(t): ; ))"
		print "all: $(addprefix t_,$(wordlist 1,20000,$(S))) ; $(info $(words $(S)))"
	}' >gen.mk
	# C++ for cc1plus: the standard containers and algorithms,
	# instantiated for 40 functions
	awk 'BEGIN {
		print "#include <algorithm>\n#include <map>\n#include <string>\n#include <vector>"
		for (i = 0; i < 40; i++)
			printf "std::map<std::string, std::vector<int>> m%d() {\n\tstd::map<std::string, std::vector<int>> m;\n\tfor (int k = 0; k < %d; k++) {\n\t\tauto &v = m[std::to_string(k)];\n\t\tv.push_back(k);\n\t\tstd::sort(v.begin(), v.end());\n\t}\n\treturn m;\n}\n", i, i + 3
	}' >gen.cpp
	awk 'BEGIN {
		print "<r>"
		for (i = 0; i < 150000; i++)
			printf "<e a=\"%d\" b=\"x%d\"><c>%d text &amp; more</c></e>\n", i, i * 7, i % 13
		print "</r>"
	}' >big.xml
	seq 1 1000000 >a.txt
	awk '{ if (NR % 7 == 0) print $1 * 3; else if (NR % 11 == 0) next; else print }' a.txt >b.txt
) || {
	echo "not ok - making the inputs"
	exit 1
}

# ---- Run and compare
med() {
	if [ -s "$1" ]; then
		sort -n "$1" | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'
	else
		echo -
	fi
}
filter="$*"
nprog=0
nfail=0
tot_s=0
tot_e=0
t0=$(date +%s)
report=$work/report.txt
: >"$report"
printf '%s' "$WORKLOADS" | {
	while IFS='|' read -r name pkg cmd; do
		[ -n "$name" ] || continue
		if [ -n "$filter" ]; then
			keep=no
			for f in $filter; do
				case "$name" in *"$f"*) keep=yes ;; esac
			done
			[ "$keep" = yes ] || continue
		fi
		nprog=$((nprog + 1))
		out=$work/out/$nprog
		mkdir -p "$out"
		w0=$(date +%s.%N)
		(cd "$in" && timeout -s KILL 60 \
			env LD_PRELOAD="$probe" SFB_WORLD_OUT="$out" sh -c "$cmd") \
			>/dev/null 2>"$out/stderr" </dev/null
		rc=$?
		secs=$(awk -v a="$w0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
		# one line of figures for the program, from all its processes
		set -- $(cat "$out"/*.txt 2>/dev/null | awk '
			$1 == "pid" { np++ }
			$1 == "samples" { s += $2; e += $4 }
			$1 == "c" { print $2 > "'"$out"'/cost.sfb"; print $3 > "'"$out"'/cost.unw" }
			END { printf "%d %d %d\n", s + 0, e + 0, np + 0 }')
		s=$1 e=$2 np=$3
		ms=$(med "$out/cost.sfb")
		mu=$(med "$out/cost.unw")
		tot_s=$((tot_s + s))
		tot_e=$((tot_e + e))
		figures="$e/$s samples equal ($np processes, $secs s; median ns a walk: sframebt $ms, libunwind $mu)"
		printf '%s|%s|%s|%s|%s\n' "$name" "$s" "$e" "$ms" "$mu" >>"$report"
		if [ "$rc" -ne 0 ]; then
			echo "not ok - $name: the command failed with status $rc; $figures"
			sed 's/^/#   /' "$out/stderr" | tail -5
			nfail=$((nfail + 1))
			continue
		fi
		if [ "$s" -eq 0 ] || [ $((e * 1000)) -lt $((s * 990)) ]; then
			echo "not ok - $name: $figures"
			nfail=$((nfail + 1))
			# the disagreements, grouped: reason | sframebt's stop | where
			# (object, function if known; offsets dropped)
			cat "$out"/*.txt | sed -n 's/^d //p' |
				sed 's/+0x[0-9a-f]*$//' | sort | uniq -c | sort -rn | head -8 |
				sed 's/^ */#   /'
			first=$(grep -l '^# sample' "$out"/*.txt | head -1)
			[ -n "$first" ] && awk '/^# sample/ { n++ } n == 1' "$first" | head -40 |
				sed 's/^#/#  /'
		else
			echo "ok - $name: $figures"
		fi
	done
	t1=$(date +%s)
	pct=$(awk -v e="$tot_e" -v s="$tot_s" 'BEGIN { printf "%.2f", s ? 100 * e / s : 0 }')
	if [ "$tot_s" -gt 0 ] && [ $((tot_e * 1000)) -ge $((tot_s * 999)) ]; then
		echo "ok - all $nprog programs: $tot_e/$tot_s samples equal ($pct%, at least 99.9%; $((t1 - t0)) s)"
	else
		echo "not ok - all $nprog programs: $tot_e/$tot_s samples equal ($pct%, at least 99.9%; $((t1 - t0)) s)"
	fi
	echo "# $nfail of $nprog programs below 99% equal or failed"
}
