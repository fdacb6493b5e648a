#!/bin/sh
# sframe-prof (examples/sframe-prof.c) and the profiler's pprof output
# (examples/prof/pprof.c), read by upstream pprof built offline from
# Debian's packages:
#   - --help, the default file name PROG.PID.pb.gz, the format by suffix;
#   - pprof -top and -traces read the profiles of two interpreters
#     (lua5.4, Debian's python3) and of a C++ program
#     (tests/tools/prof/cxx_work.cc), and -traces' stacks are the folded
#     stacks of the same run;
#   - C++ names demangled in pprof, folded and SVG; mappings with build-id;
#   - source positions: in a program built with -g -O2
#     (tests/tools/prof/lines.cc) each location has the lines, inlined
#     functions first, that addr2line -i -f -C gives for its address;
#   - --wall sees a sleeping thread, CPU time does not;
#   - a forked child gets its own file.
. tests/lib/check.sh
case $B in /*) ;; *) B=$PWD/$B ;; esac # LD_PRELOAD wants a full path
P=$B/sframe-prof
for f in "$P" "$B/libsframe-profiler.so"; do
	if [ ! -e "$f" ]; then
		notok "$f not built (make examples)"
		exit 1
	fi
done

# A sanitizer build's profiler needs the sanitizer's runtime in the
# program, which lua5.4 and the workloads built here do not have.
if readelf -sW --dyn-syms "$B/libsframe-profiler.so" | grep -q ' UND __[a-z]*san_'; then
	ok "# SKIP sframe-prof: a sanitizer build cannot be preloaded into these programs"
	exit 0
fi

# Upstream pprof, from Debian's Go sources (no network), built once per
# build directory.
. tests/lib/install-deps.sh
install_deps golang-go golang-github-google-pprof-dev lua5.4 python3 g++ >/dev/null
PPROF=$B/pprof-bin
if [ ! -x "$PPROF" ]; then
	GO111MODULE=off GOPATH=/usr/share/gocode GOCACHE=$B/go-cache GOFLAGS= \
		go build -o "$PPROF" github.com/google/pprof || { notok "go build pprof"; exit 1; }
fi
pprof() { "$PPROF" -symbolize=none "$@" 2>"$tmp/pprof.err"; }

# traces PROFILE: pprof -traces as folded lines ("root;...;leaf count"),
# sample counts summed over threads, sorted; without the functions
# inlined at a PC (where the line tables say, as libc's debug file does),
# which the folded stacks leave out.
traces() {
	pprof -sample_index=samples -noinlines -traces "$1" | awk '
	function flush() { if (n) { s = fr[n]; for (i = n - 1; i >= 1; i--) s = s ";" fr[i]; sum[s] += c } n = 0 }
	/^-----------\+/ { flush(); next }
	/^ +[a-z_]+: / && !n { next }                 # a label
	/^ +[0-9]+ +/ { flush(); c = $1; sub(/^ +[0-9]+ +/, ""); fr[++n] = $0; next }
	/^              *[^ ]/ && n { sub(/^ +/, ""); fr[++n] = $0 }
	END { flush(); for (s in sum) print s, sum[s] }' | norm
}
# norm: a stripped object's frames are "[obj+0xOFFSET]" for callers and
# "[obj]" for leaves; pprof keeps one name per address: compare objects.
norm() { sed 's/\[\([^];+]*\)+0x[0-9a-f]*\]/[\1]/g' | awk '
	{ c = $NF; s = $0; sub(/ [0-9]+$/, "", s); sum[s] += c }
	END { for (s in sum) print s, sum[s] }' | LC_ALL=C sort; }

# --help documents the options and formats.
"$P" --help >"$tmp/help" 2>&1
check "--help exits 0 and documents -F, -o, --wall and the formats" \
	sh -c "grep -q -- '-F HZ' '$tmp/help' && grep -q -- '--wall' '$tmp/help' &&
	       grep -q 'pb.gz' '$tmp/help' && grep -q 'folded' '$tmp/help' && grep -q 'svg' '$tmp/help'"
"$P" >/dev/null 2>&1
check "no command: exit status 2" [ $? -eq 2 ]

# The C++ workload and the threads/fork one, -O2 without frame pointers,
# with SFrame.
# clang's integrated assembler writes no .sframe: GNU as does.
CXX=g++ CCX=${CC:-cc}
case ${CC:-cc} in *clang*) CXX="clang++ -fno-integrated-as" CCX="clang -fno-integrated-as" ;; esac
$CXX -std=gnu++17 -O2 -fomit-frame-pointer -Wa,--gsframe -Wall -Wextra -Werror \
	tests/tools/prof/cxx_work.cc -o "$tmp/cxx_work" || { notok "build cxx_work"; exit 1; }
$CCX -O2 -fomit-frame-pointer -Wa,--gsframe -Wall -Wextra -Werror \
	tests/tools/prof/threads.c -o "$tmp/threads" -lpthread || { notok "build threads"; exit 1; }

# (1) The default: PROG.PID.pb.gz in the current directory, the summary
# on stderr.
(cd "$tmp" && "$P" -F 499 ./cxx_work 400 2>"$tmp/def.err")
check "default: cxx_work exits 0" [ $? -eq 0 ]
def=$(ls "$tmp"/cxx_work.[0-9]*.pb.gz 2>/dev/null | head -n 1)
check "default: writes PROG.PID.pb.gz" [ -n "$def" ]
check "default: the summary goes to stderr" grep -q '^sframe-prof: wrote .*cxx_work\.[0-9]*\.pb\.gz (pprof)' "$tmp/def.err"
check "default: the file is gzip (magic 1f 8b)" \
	sh -c "[ \"\$(od -An -tx1 -N2 '$def' | tr -d ' ')\" = 1f8b ]"
check "default: gzip -t accepts it" gzip -t "$def"

pprof -top "$def" >"$tmp/cxx.top"
cat "$tmp/cxx.top"
check "C++: pprof -top reads it (type cpu)" grep -q '^Type: cpu' "$tmp/cxx.top"
check "C++: pprof -top names the demangled template methods" \
	grep -q 'physics::detail::Integrator<double>::step(double)' "$tmp/cxx.top"
check "C++: no mangled name in pprof's report" sh -c "! grep -q '_ZN' '$tmp/cxx.top'"
pprof -raw "$def" >"$tmp/cxx.raw"
sed -n '/^Mappings/,$p' "$tmp/cxx.raw"
check "C++: the program's mapping has path, offset and build-id" \
	grep -Eq '^[0-9]+: 0x[0-9a-f]+/0x[0-9a-f]+/0x[0-9a-f]+ .*/cxx_work [0-9a-f]{40} \[FN\]' "$tmp/cxx.raw"
check "C++: mangled names kept as system_name" grep -q 's=0(_ZN7physics6detail' "$tmp/cxx.raw"
check "C++: samples carry the thread's name and id" \
	sh -c "grep -q 'thread:\[cxx_work\]' '$tmp/cxx.raw' && grep -Eq 'thread_id:\[[0-9]+\]' '$tmp/cxx.raw'"
check "C++: sample types samples/count and cpu/nanoseconds, with a period" \
	sh -c "grep -q '^samples/count cpu/nanoseconds' '$tmp/cxx.raw' &&
	       grep -q '^PeriodType: cpu nanoseconds' '$tmp/cxx.raw' && grep -Eq '^Period: [1-9]' '$tmp/cxx.raw'"

# (2) One run, both formats (SFRAME_PROF_PPROF=1 beside the folded file):
# the stacks of pprof -traces are the folded stacks.
both() { # both NAME COMMAND...: PREFIX $tmp/NAME
	n=$1
	shift
	timeout 240 env SFRAME_PROF_HZ=499 SFRAME_PROF_OUT="$tmp/$n" SFRAME_PROF_PPROF=1 \
		SFRAME_PROF_SVG=1 LD_PRELOAD="$B/libsframe-profiler.so" "$@" 2>"$tmp/$n.err"
}
both cxx "$tmp/cxx_work" 400
norm <"$tmp/cxx.folded" >"$tmp/cxx.f"
traces "$tmp/cxx.pb.gz" >"$tmp/cxx.t"
echo "# cxx folded:"; sed 's/^/#   /' "$tmp/cxx.f"
check "C++: -traces stacks equal the folded stacks of the same run" cmp -s "$tmp/cxx.f" "$tmp/cxx.t"
diff "$tmp/cxx.f" "$tmp/cxx.t" | head -10
check "C++: folded names demangled" \
	grep -q ';double physics::detail::simulate<double>(physics::detail::Integrator<double>&, int);' "$tmp/cxx.folded"
check "C++: SVG names demangled" grep -q '<title>physics::detail::Integrator&lt;double&gt;::step(double) (' "$tmp/cxx.svg"

cat >"$tmp/work.lua" <<'EOF'
local function fib(n) if n < 2 then return n end return fib(n - 1) + fib(n - 2) end
local function strings(n)
	local t = {}
	for i = 1, n do t[#t + 1] = string.format("%d:%s", i, tostring(i * 3)) end
	return table.concat(t, ","):len()
end
local s = 0
for i = 1, 6 do s = s + fib(25) + strings(40000) end
print(s)
EOF
both lua lua5.4 "$tmp/work.lua" >/dev/null
check "lua5.4: exits 0" [ $? -eq 0 ]
pprof -top "$tmp/lua.pb.gz" >"$tmp/lua.top"
head -12 "$tmp/lua.top"
check "lua5.4: pprof -top reads it" grep -q '^Showing nodes accounting for' "$tmp/lua.top"
norm <"$tmp/lua.folded" >"$tmp/lua.f"
traces "$tmp/lua.pb.gz" >"$tmp/lua.t"
echo "# lua: $(wc -l <"$tmp/lua.f") folded stacks, $(wc -l <"$tmp/lua.t") pprof traces"
check "lua5.4: -traces stacks equal the folded stacks of the same run" cmp -s "$tmp/lua.f" "$tmp/lua.t"
diff "$tmp/lua.f" "$tmp/lua.t" | head -10
# Debian's lua5.4 is stripped, the interpreter linked in: its frames are
# named by the object, as perf names them.
check "lua5.4: the interpreter's frames are in the profile" grep -q '\[lua5.4\]' "$tmp/lua.t"

# Debian's python3 (/usr/bin: not whatever python3 comes first in PATH),
# stripped too, its C API exported: named frames and [python3.11+0x...]
# ones, and an extension module's (_json) below the interpreter's.
cat >"$tmp/work.py" <<'EOF'
import json, re
def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)
def text(n):
    s = json.dumps([{"k": i, "v": str(i * 3)} for i in range(n)])
    return len(re.findall(r'"v": "(\d+)"', s))
t = 0
for i in range(10):
    t += fib(22) + text(30000)
print(t)
EOF
both py /usr/bin/python3 "$tmp/work.py" >/dev/null
check "python3: exits 0" [ $? -eq 0 ]
pprof -top "$tmp/py.pb.gz" >"$tmp/py.top"
head -12 "$tmp/py.top"
check "python3: pprof -top reads it (type cpu)" \
	sh -c "grep -q '^Type: cpu' '$tmp/py.top' && grep -q '^Showing nodes accounting for' '$tmp/py.top'"
check "python3: pprof -top names the interpreter loop" grep -q ' _PyEval_EvalFrameDefault$' "$tmp/py.top"
norm <"$tmp/py.folded" >"$tmp/py.f"
traces "$tmp/py.pb.gz" >"$tmp/py.t"
echo "# python3: $(wc -l <"$tmp/py.f") folded stacks, $(wc -l <"$tmp/py.t") pprof traces"
check "python3: -traces stacks equal the folded stacks of the same run" cmp -s "$tmp/py.f" "$tmp/py.t"
diff "$tmp/py.f" "$tmp/py.t" | head -10
check "python3: stacks rooted at _start, through Py_BytesMain and PyEval_EvalCode" \
	grep -q '^_start;.*;Py_BytesMain;.*;PyEval_EvalCode;' "$tmp/py.t"

# (6) Source positions: a C++ program built with -g -O2, Mixer::rotate()
# inlined into Mixer::step(), inlined into churn().  Each location in the
# program's mapping has the lines `addr2line -i -f -C` gives for its
# address (innermost first, then the function they are inlined into);
# llvm-symbolizer's for a clang build, whose inlined frames (DWARF 5
# range lists by DW_FORM_rnglistx) binutils 2.40's addr2line does not see.
SYMBOLIZER="addr2line -a -i -f -C"
case $CXX in *clang*)
	install_deps llvm-14 >/dev/null
	SYMBOLIZER="llvm-symbolizer-14 --output-style=GNU -a -i -f -C" ;;
esac
$CXX -std=gnu++17 -g -O2 -fomit-frame-pointer -Wa,--gsframe -Wall -Wextra -Werror \
	tests/tools/prof/lines.cc -o "$tmp/lines" || { notok "build lines"; exit 1; }
# (About 1.4 s of CPU: lines within the default budget, 1% of it.)
"$P" -F 499 -o "$tmp/lines.pb.gz" "$tmp/lines" 200 2>"$tmp/lines.err"
check "lines: exits 0" [ $? -eq 0 ]
pprof -raw "$tmp/lines.pb.gz" >"$tmp/lines.raw"
# The program's mapping: "ID: 0xSTART/0xLIMIT/0xOFFSET PATH BUILD-ID FLAGS".
map=$(awk -v p="$tmp/lines" '/^Mappings/ { m = 1; next } m && $3 == p { print; exit }' "$tmp/lines.raw")
echo "# $map"
check "lines: the program's mapping says it has files, lines and inline frames" \
	sh -c "echo '$map' | grep -q '\[FN\]\[FL\]\[LN\]\[IN\]'"
mid=${map%%:*}
mstart=$(echo "$map" | sed 's/^[0-9]*: \(0x[0-9a-f]*\)\/.*/\1/')
# The link-time address of the mapping's start: its executable segment's
# page (so runtime address - mstart + that = the address addr2line wants).
seg=$(readelf -lW "$tmp/lines" | awk '$1 == "LOAD" && $0 ~ / R E / { print $3; exit }')
seg=$(($seg & ~($(getconf PAGESIZE) - 1)))
# pprof's locations of the mapping, one a line: "ADDR NAME@FILE:LINE|...",
# ADDR the link-time address.
awk -v m="M=$mid" '
	/^Locations/ { on = 1; next } /^Mappings/ { on = 0 }
	!on { next }
	function entry(s) { sub(/ s=[0-9]+(\(.*\))?$/, "", s); f = s; sub(/.* /, "", f); sub(/ [^ ]*$/, "", s); return s "@" f }
	/^ +[0-9]+: 0x/ { if (cur != "") print cur; cur = ""
		if ($3 != m) next
		a = $2; s = $0; sub(/^ +[0-9]+: 0x[0-9a-f]+ M=[0-9]+ /, "", s); cur = a " " entry(s); next }
	/^             [^ ]/ && cur != "" { s = $0; sub(/^ +/, "", s); cur = cur "|" entry(s) }
	END { if (cur != "") print cur }' "$tmp/lines.raw" | while read -r a rest; do
	printf '0x%x %s\n' $((a - mstart + seg)) "$rest"
done | LC_ALL=C sort >"$tmp/lines.pp"
$SYMBOLIZER -e "$tmp/lines" $(cut -d' ' -f1 "$tmp/lines.pp") | awk '
	/^0x[0-9a-f]+$/ { if (cur != "") print cur; a = $0; sub(/^0x0*/, "0x", a); cur = a " "; sep = ""; fn = ""; next }
	fn == "" { fn = $0; next }
	{ fl = $0; sub(/ \(discriminator [0-9]+\)$/, "", fl); if (fl ~ /^\?\?:/) fl = ":0"
	  cur = cur sep fn "@" fl; sep = "|"; fn = "" }
	END { if (cur != "") print cur }' | LC_ALL=C sort >"$tmp/lines.a2l"
echo "# lines: $(wc -l <"$tmp/lines.pp") locations in the program:"; sed 's/^/#   /' "$tmp/lines.pp"
check "lines: each location's lines are ${SYMBOLIZER%% *}'s for its address" \
	sh -c "[ -s '$tmp/lines.pp' ] && cmp -s '$tmp/lines.pp' '$tmp/lines.a2l'"
diff "$tmp/lines.pp" "$tmp/lines.a2l" | head -10
rot=$(grep -n 'return x << (k & 31)' tests/tools/prof/lines.cc | cut -d: -f1)
check "lines: PCs two inlined levels deep: rotate:$rot, then step, then churn" \
	grep -Eq "^0x[0-9a-f]+ hashing::Mixer<unsigned int>::rotate\(unsigned int, unsigned int\)@[^ ]*/lines.cc:$rot\|hashing::Mixer<unsigned int>::step\(unsigned int\)@[^|]*\|unsigned int hashing::churn<unsigned int>\(" "$tmp/lines.pp"
pprof -lines -top "$tmp/lines.pb.gz" >"$tmp/lines.top"
head -12 "$tmp/lines.top"
check "lines: pprof -lines -top names rotate at lines.cc:$rot" \
	grep -Eq " hashing::Mixer<unsigned int>::rotate\(unsigned int, unsigned int\) [^ ]*/lines.cc:$rot \(inline\)$" "$tmp/lines.top"
pprof -sample_index=samples -traces "$tmp/lines.pb.gz" >"$tmp/lines.traces"
check "lines: pprof -traces marks the inlined frames" \
	sh -c "grep -q ' hashing::Mixer<unsigned int>::step(unsigned int) (inline)$' '$tmp/lines.traces' &&
	       grep -q ' hashing::Mixer<unsigned int>::rotate(unsigned int, unsigned int) (inline)$' '$tmp/lines.traces'"
grep 'source lines' "$tmp/lines.err"
check "lines: the summary says how many addresses got lines, and the budget" \
	grep -Eq '^sframe-prof: source lines read for [1-9][0-9]* of [1-9][0-9]* addresses in [0-9.]+ ms of CPU \(at most [0-9.]+ ms: 1% of the CPU time' "$tmp/lines.err"
# SFRAME_PROF_LINES_MS=0: no lines, and the mappings do not claim any.
SFRAME_PROF_LINES_MS=0 "$P" -F 499 -o "$tmp/nolines.pb.gz" "$tmp/lines" 60 2>"$tmp/nolines.err"
pprof -raw "$tmp/nolines.pb.gz" >"$tmp/nolines.raw"
check "SFRAME_PROF_LINES_MS=0: no location has a file or line" \
	sh -c "sed -n '/^Locations/,/^Mappings/p' '$tmp/nolines.raw' | grep -q ' s=0' &&
	       ! sed -n '/^Locations/,/^Mappings/p' '$tmp/nolines.raw' | grep -Eq ' [^ ]+:[1-9][0-9]* s=0'"
check "SFRAME_PROF_LINES_MS=0: no mapping claims files, lines or inline frames" \
	sh -c "! sed -n '/^Mappings/,\$p' '$tmp/nolines.raw' | grep -Eq '\[(FL|LN|IN)\]'"
check "SFRAME_PROF_LINES_MS=0: the summary says none was read" \
	grep -Eq '^sframe-prof: source lines read for 0 of [1-9][0-9]* addresses .*\(at most 0.0 ms\)' "$tmp/nolines.err"

# (3) The format follows -o's suffix.
(cd "$tmp" && "$P" -o fmt.folded ./cxx_work 100 2>/dev/null && "$P" -o fmt.svg ./cxx_work 100 2>/dev/null)
check "-o X.folded writes folded stacks" grep -Eq '^_start;.* [0-9]+$' "$tmp/fmt.folded"
check "-o X.svg writes an SVG" grep -q '^<svg ' "$tmp/fmt.svg"

# (4) --wall: the sleeping thread shows; on CPU time only the spinner.
"$P" -F 199 -o "$tmp/cpu.folded" "$tmp/threads" wall 600 2>"$tmp/cpu.err"
"$P" -F 199 --wall -o "$tmp/wall.folded" "$tmp/threads" wall 600 2>"$tmp/wall.err"
cat "$tmp/wall.err" "$tmp/wall.folded"
check "CPU time: the spinner is sampled" grep -q ';spin_loop;' "$tmp/cpu.folded"
check "CPU time: the sleeper is not" sh -c "! grep -q 'sleep_loop' '$tmp/cpu.folded'"
check "CPU time: the summary names the sleeper as taking no sample" \
	grep -q '^sframe-prof:   thread [0-9]* "sleeper": 0 samples' "$tmp/cpu.err"
check "--wall: the spinner is sampled" grep -q ';spin_loop;' "$tmp/wall.folded"
check "--wall: the sleeper is sampled in nanosleep" grep -Eq ';sleep_loop;(__)?nanosleep' "$tmp/wall.folded"
sleeper=$(awk '/sleep_loop/ { n += $NF } END { print n + 0 }' "$tmp/wall.folded")
spinner=$(awk '/spin_loop/ { n += $NF } END { print n + 0 }' "$tmp/wall.folded")
check "--wall: sleeper and spinner sampled alike ($sleeper, $spinner)" \
	[ $((sleeper * 2)) -ge "$spinner" -a $((spinner * 2)) -ge "$sleeper" ]
check "--wall: the summary says wall-clock" grep -q 'of wall-clock time' "$tmp/wall.err"

# (5) A forked child: a file of its own, PID before the suffix.
"$P" -F 199 -o "$tmp/fork.folded" "$tmp/threads" fork 300 2>"$tmp/fork.err"
check "fork: the parent's file" grep -q 'spin_for' "$tmp/fork.folded"
check "fork: the child's file, its pid before the suffix" \
	sh -c "ls '$tmp'/fork.[0-9]*.folded >/dev/null 2>&1 && grep -q 'spin_for' '$tmp'/fork.[0-9]*.folded"
check "fork: the parent's summary says the child was profiled" \
	grep -q '^sframe-prof: 1 child processes forked: each profiled' "$tmp/fork.err"
# Exec'd children inherit the preload: sh runs two programs.
"$P" -o "$tmp/sh.folded" sh -c "'$tmp/cxx_work' 50; '$tmp/cxx_work' 50" 2>/dev/null
check "exec'd children: one file each (pid in the name)" \
	[ "$(ls "$tmp"/sh.[0-9]*.folded 2>/dev/null | wc -l)" -ge 2 ]
exit 0
