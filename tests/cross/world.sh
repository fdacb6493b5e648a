#!/bin/bash
# The distribution corpus on AArch64 and s390x: Debian bookworm's own arm64
# or s390x programs, fetched privately (tests/fixtures/toolchains.sh,
# TC_ARCH) with their libraries, libc and libunwind, run under qemu with
# tests/world/probe.c built for the architecture and preloaded: every
# sample's whole stack walked by sframebt and by libunwind from the same
# ucontext and compared at exit, as tests/world/t_world.sh does on x86-64.
#
# LD_BIND_NOW=1: with lazy binding, libunwind 1.6 walks on through the
# dynamic linker's resolver, whose AArch64 CFI leaves out the PLT's push
# (src/arch/aarch64.c, sfb_arch_fix_row()), and reads garbage: the process
# died in 3 of 8 runs of python3.  sframebt's side of that is t_cross's
# "lazy binding".
#
# Usage: tests/cross/world.sh BUILD_DIR ARCH   (aarch64 or s390x)
#   BUILD_DIR/cross/build-ARCH must hold the plain cross build
#   (tests/cross/run.sh makes it first).  Prints "ok - " / "not ok - "
#   lines; a program passes at >= 99% of its samples equal, or all but one
#   (dc's run is about a hundred samples).  Where libunwind is no ground
#   truth (code without CFI, PLT stubs), tests/lib/unw_compare.h says so.
set -u
B=${1:-build}
A=${2:-aarch64}
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top" || exit 1
case "$B" in /*) ;; *) B=$top/$B ;; esac
case $A in aarch64) DA=arm64 ;; s390x) DA=s390x ;; *) echo "not ok - world: no architecture $A"; exit 0 ;; esac
d=$B/cross/build-$A
SFB_TC=${SFB_TC:-${SFRAME_TOOLCHAINS:-$HOME/.cache/sframebt-toolchains}}
R=$SFB_TC/root/world-$DA

# The programs and every library they load (bookworm's names).
PKGS="libc6 libgcc-s1 libunwind8 libunwind-dev liblzma5 zlib1g
xz-utils sqlite3 libsqlite3-0 libreadline8 libtinfo6 perl-base gawk libmpfr6 libgmp10
libcrypt1 libsigsegv2 sed libselinux1 libpcre2-8-0 libacl1 libattr1 bzip2 libbz2-1.0 zstd libzstd1
liblz4-1 dc bc python3.11-minimal libpython3.11-minimal libexpat1"
log=$B/cross/world-$DA
if ! TC_ARCH=$DA bash -c '. tests/fixtures/toolchains.sh; tc_fetch bookworm world-'"$DA $(echo $PKGS)" \
	>"$log-fetch.log" 2>&1; then
	echo "not ok - world ($DA): fetching bookworm's $DA packages (see $log-fetch.log)"
	exit 0
fi

probe=$d/tests/world/probe.so
if ! make -s B="$d" CC=$A-linux-gnu-gcc \
	WORLD_PROBE_FLAGS="-I$R/usr/include/$A-linux-gnu -L$R/usr/lib/$A-linux-gnu -Wl,-rpath-link,$R/lib/$A-linux-gnu" \
	"$probe" >"$log-probe.log" 2>&1; then
	echo "not ok - world ($DA): building the probe (see $log-probe.log)"
	exit 0
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
in=$work/in
mkdir -p "$in"
# Inputs: line-numbered base64 of a key stream, as t_world's.
openssl enc -aes-128-ctr -K 000102030405060708090a0b0c0d0e0f -iv 0 -nosalt \
	</dev/zero 2>/dev/null | head -c 1500000 | base64 | nl -ba >"$in/data.txt"
echo 'scale=500; 4*a(1)' >"$in/bc.in"

pass=0 fail=0 all=0 alleq=0
# run NAME PROGRAM ARGS...: PROGRAM's path inside $R
run() {
	local name=$1 prog=$2 out=$work/out-$pass-$fail n eq rc
	shift 2
	mkdir -p "$out"
	(cd "$in" && timeout -s KILL 300 qemu-$A -L "$R" -E LD_BIND_NOW=1 \
		-E LD_PRELOAD="$probe" -E SFB_WORLD_OUT="$out" "${R_lua:-$R$prog}" "$@" \
		>/dev/null 2>"$out.err")
	rc=$?
	read -r n eq sf eh < <(cat "$out"/*.txt 2>/dev/null |
		awk '/^samples/ { n += $2; e += $4 } /^sources/ { s += $3; h += $5 }
		     END { print n + 0, e + 0, s + 0, h + 0 }')
	if [ -n "${R_lua:-}" ] && [ "$sf" -le "$eh" ]; then
		echo "not ok - world ($DA): $name: $sf frames walked by SFrame rows, $eh by .eh_frame"
		fail=$((fail + 1))
		return
	fi
	if [ "$rc" -ne 0 ] || [ "$n" -eq 0 ]; then
		echo "not ok - world ($DA): $name exited $rc with $n samples: $(head -c 300 "$out.err")"
		fail=$((fail + 1))
		return
	fi
	all=$((all + n)) alleq=$((alleq + eq))
	if [ $((eq * 100)) -ge $((n * 99)) ] || [ $((n - eq)) -le 1 ]; then
		echo "ok - world ($DA): $name: $eq/$n samples equal to libunwind's${R_lua:+ ($sf frames by SFrame rows, $eh by .eh_frame)}"
		cat "$out"/*.txt | grep '^d ' | sort | uniq -c | sort -rn | head -3 | sed 's/^/#   /'
		pass=$((pass + 1))
	else
		echo "not ok - world ($DA): $name: $eq/$n samples equal to libunwind's"
		cat "$out"/*.txt | grep '^d ' | sort | uniq -c | sort -rn | head -5 | sed 's/^/#   /'
		cat "$out"/*.txt | grep '^#' | head -30
		fail=$((fail + 1))
	fi
}

run "xz -T2" /usr/bin/xz -6 -T2 --block-size=400KiB -c data.txt
run sqlite3 /usr/bin/sqlite3 :memory: \
	"WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 200000) SELECT sum(x * x % 7), count(*) FROM c;"
run perl /usr/bin/perl -e \
	'my %h; for my $i (1..300000) { $h{$i % 5000} .= chr(65 + $i % 26); } print scalar(keys %h), qq(\n)'
run gawk /usr/bin/gawk \
	'BEGIN { for (i = 0; i < 150000; i++) { a[i % 1000] += i; s = s sprintf("%d", i % 7) } print length(s) }'
run "sed -E" /bin/sed -E 's/([a-z]+)([0-9]+)/\2\1/g' data.txt
run "bzip2 -9" /bin/bzip2 -9 -c data.txt
run "zstd -T2" /usr/bin/zstd -q -T2 -12 -B512KiB -c data.txt
# bc and dc: their _start has no CFI (walk.c, in_program_start())
run dc /usr/bin/dc -e "3 12000 ^ 7 % p"
run "bc -l" /usr/bin/bc -l bc.in /dev/null
run python3 /usr/bin/python3.11 -c 'h = {}
for i in range(150000):
    h[i % 1000] = h.get(i % 1000, 0) + i
print(len(",".join(str(x) for x in range(60000))), len(h))'
# Code nobody here wrote, walked by its SFrame: Lua 5.4 from the source
# Debian ships (tests/fixtures/toolchains.sh, tc_source), built for $A
# with -Wa,--gsframe by each binutils that writes SFrame for it (2.40:
# V1 on AArch64 only; 2.44: V2; 2.47: V3), sampled as above.  Most of its
# frames must be walked by SFrame rows ("sources" in the probe's
# results), the rest (libc) by .eh_frame.  Not with pac-ret: libunwind
# 1.6 takes a signed return address for an address and crashes the
# process (t_cross checks signed frames against libgcc instead).
case $A in
aarch64) luas="v1:bookworm v2:trixie v3:sid" ;;
s390x) luas="v3:sid" ;;
esac
if ! TC_ARCH= bash -c '. tests/fixtures/toolchains.sh; tc_source bookworm lua5.4
	for s in trixie sid; do tc_setup_binutils '"$A"' $s; done' >"$log-lua-fetch.log" 2>&1; then
	echo "not ok - world ($DA): fetching Lua's source and binutils 2.44, 2.47 (see $log-lua-fetch.log)"
	luas=
fi
cat >"$in/w.lua" <<'EOL'
local function fib(n) if n < 2 then return n end return fib(n - 1) + fib(n - 2) end
local t = {}
for i = 1, 150000 do local k = i % 1000 t[k] = (t[k] or 0) + i end
local s = {}
for i = 1, 20000 do s[#s + 1] = string.format("%d:%g", i, i / 7) end
local str = table.concat(s, ",")
local n = 0
for w in str:gmatch("%d+") do n = n + #w end
table.sort(s, function(a, b) return a > b end)
print(n, fib(22), #str)
EOL
for l in $luas; do
	v=${l%%:*} suite=${l#*:}
	lua=$work/lua-$v
	srcs=$(ls "$SFB_TC"/src/lua5.4/src/*.c | grep -v '/luac\.c$')
	if ! $A-linux-gnu-gcc -B"$SFB_TC/bin/$A-$suite/" -O2 -w -Wa,--gsframe -DLUA_USE_LINUX \
		$srcs -o "$lua" -lm >"$log-lua-$v.log" 2>&1; then
		echo "not ok - world ($DA): building Lua with SFrame $v (see $log-lua-$v.log)"
		fail=$((fail + 1))
		continue
	fi
	R_lua=$lua run "Lua built with SFrame $v" "" w.lua
done
echo "# world ($DA): $alleq/$all samples equal"
