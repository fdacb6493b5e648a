#!/bin/sh
# Detached debug files found through .gnu_debuglink: objects linked with
# --build-id=none, stripped of .symtab and DWARF (strip --strip-all),
# their debug file made by objcopy --only-keep-debug and named by
# objcopy --add-gnu-debuglink.  The debug file is put in each of GDB's
# places in turn (the object's directory, its .debug/, and
# $SFRAME_BT_DEBUG_DIR followed by the object's directory), for a library
# (lines_prog.c, dlopen()ed) and for a program (symlines_driver linked
# with lines_prog.c).  At every address of lines_prog's functions,
# sframe_symbolize() in a signal handler must give addr2line -i -f -C's
# file:line and inline chain (addr2line reading the unstripped object)
# and the name nm gives the symbol holding it: static functions are only
# in the debug file's .symtab.  A debug file whose CRC is not the link's
# is refused and the search goes on; one of SFB_DEBUGLINK_MAX_BYTES is
# read and one a byte larger is not; malformed links (truncated, a name
# too long) give a complete result.  The driver runs unwrapped, as in
# t_symbolize_lines.sh: under valgrind, memcheck flags the driver's own
# scan of its alternate stack, and valgrind's ELF reader asserts on the
# malformed links (t_crash_debuglink.sh runs the library under it).
. tests/lib/check.sh
. tests/lib/install-deps.sh
install_deps binutils gcc python3
CC=${CC:-gcc}
ulimit -c 0 2>/dev/null

if [ ! -f "$B/libsframebt.a" ]; then
	notok "$B/libsframebt.a not built"
	exit 1
fi
# The canonical temporary directory: the library finds the object's
# directory through /proc/self/fd, which resolves links.
tmp=$(cd "$tmp" && pwd -P)
max=$(sed -n 's/^#define SFB_DEBUGLINK_MAX_BYTES (\([0-9]*\)u << \([0-9]*\)).*/\1 << \2/p' \
	src/symbols/symtab.h)
max=$(($max))
[ "$max" -gt 0 ] || { notok "SFB_DEBUGLINK_MAX_BYTES read from src/symbols/symtab.h"; exit 1; }

# The driver, and the same driver as the program to look up (-: itself).
$CC ${CFLAGS:-} -std=gnu11 -O2 -g -I. -c tests/symbols/symlines_driver.c -o "$tmp/driver.o" &&
	gcc -O2 -g -c -Dmain=lines_prog_main tests/symbols/lines_prog.c -o "$tmp/lines_prog.o" &&
	$CC ${CFLAGS:-} "$tmp/driver.o" -o "$tmp/driver" "$B/libsframebt.a" -ldl -lpthread &&
	$CC ${CFLAGS:-} -Wl,--build-id=none "$tmp/driver.o" "$tmp/lines_prog.o" -o "$tmp/prog.full" \
		"$B/libsframebt.a" -ldl -lpthread &&
	gcc -O2 -g -fPIC -shared -Wl,--build-id=none -Dmain=lines_prog_main tests/symbols/lines_prog.c \
		-o "$tmp/liblp.full" || { notok "the driver and lines_prog build"; exit 1; }
check "the library and the program have no build-id note" \
	sh -c "! readelf -n '$tmp/liblp.full' '$tmp/prog.full' | grep -q 'Build ID'"

# split FULL DIR NAME: DIR/NAME stripped, its debug file $tmp/NAME.debug
# (the link's name and CRC), and DIR/NAME.nolink: stripped, no link.
split() {
	mkdir -p "$2"
	objcopy --only-keep-debug "$1" "$tmp/$3.debug"
	strip --strip-all -o "$2/$3.nolink" "$1"
	objcopy --add-gnu-debuglink="$tmp/$3.debug" "$2/$3.nolink" "$2/$3"
}
split "$tmp/liblp.full" "$tmp/lib" liblp.so
split "$tmp/prog.full" "$tmp/bin" prog
check "the stripped objects have no .symtab and no DWARF, and a .gnu_debuglink" \
	sh -c "for f in '$tmp/lib/liblp.so' '$tmp/bin/prog'; do
		s=\$(readelf -SW \"\$f\")
		echo \"\$s\" | grep -q '\\.gnu_debuglink' || exit 1
		echo \"\$s\" | grep -Eq '\\.symtab|\\.debug_' && exit 1
	done; exit 0"
check "cmp and fold (static) are in no .dynsym of the stripped objects" \
	sh -c "! nm -D '$tmp/lib/liblp.so' '$tmp/bin/prog' 2>/dev/null | grep -Eq ' (cmp|fold)\$'"

# Every other address of lines_prog's functions, as FULL's file has them.
fns=$(nm --defined-only "$tmp/lines_prog.o" | awk '$2 ~ /^[tT]$/ { print $3 }')
pcs() { # pcs FULL
	nm -S --defined-only "$1" | python3 -c '
import sys
want = set(sys.argv[1].split())
for l in sys.stdin:
    f = l.split()
    if len(f) == 4 and f[2] in "tT" and f[3] in want:
        a, s = int(f[0], 16), int(f[1], 16)
        for x in range(a, a + s, 2):
            print("%x" % x)
' "$fns" | sort -u
}
pcs "$tmp/liblp.full" >"$tmp/lib.pcs"
pcs "$tmp/prog.full" >"$tmp/prog.pcs"
addr2line -i -f -a -C -e "$tmp/liblp.full" <"$tmp/lib.pcs" >"$tmp/lib.a2l"
addr2line -i -f -a -C -e "$tmp/prog.full" <"$tmp/prog.pcs" >"$tmp/prog.a2l"
echo "# $(wc -l <"$tmp/lib.pcs") addresses in the library, $(wc -l <"$tmp/prog.pcs") in the program"

# names_as_nm FULL OURS: each address's outermost name is the symbol nm
# finds holding it in FULL; prints the count.
names_as_nm() {
	nm -S --defined-only "$1" | python3 -c '
import sys
syms = []
for l in sys.stdin:
    f = l.split()
    if len(f) == 4 and f[2] in "tTwW":
        syms.append((int(f[0], 16), int(f[1], 16), f[3]))
blocks, cur = {}, None
for l in open(sys.argv[1]):
    l = l.rstrip("\n")
    if l.startswith("0x"):
        cur = int(l, 16)
        blocks[cur] = []
    elif cur is not None:
        blocks[cur].append(l)
bad = 0
for a, b in blocks.items():
    want = [n for s, z, n in syms if s <= a < s + z]
    got = b[-2] if len(b) >= 2 else "??"
    if not want or got not in want:
        bad += 1
        if bad <= 5:
            print("# %#x: nm says %s, got %s" % (a, want, got), file=sys.stderr)
print("%d %d" % (len(blocks) - bad, len(blocks)))
' "$2"
}

# name_at OURS FULL FN: the outermost name given at FN's start + 2.
name_at() {
	a=$(nm --defined-only "$2" | awk -v f="$3" '$3 == f { print $1; exit }')
	[ -n "$a" ] || return 0
	awk -v a="$(printf '0x%016x' $((0x$a + 2)))" '
		/^0x/ { if (on) exit; on = $0 == a; n = 0; next }
		on { l[++n] = $0 }
		END { if (n >= 2) print l[n - 1] }' "$1"
}

# run WHAT LABEL [VAR=VALUE...]: the driver on WHAT (lib or prog) into
# $tmp/WHAT.LABEL.
run() {
	what=$1
	label=$2
	shift 2
	if [ "$what" = lib ]; then obj=$tmp/lib/liblp.so; drv=$tmp/driver; else obj=-; drv=$tmp/bin/prog; fi
	env SFRAME_BT_DEBUG_DIR="$tmp/dd" "$@" timeout 300 "$drv" "$obj" \
		<"$tmp/$what.pcs" >"$tmp/$what.$label" 2>"$tmp/$what.$label.log"
	echo $? >"$tmp/$what.$label.rc"
	sed "s/^/# $what $label: /" "$tmp/$what.$label.log"
}

# place WHAT WHERE [FILE]: the debug file (or FILE) in one place only.
place() {
	if [ "$1" = lib ]; then d=$tmp/lib; n=liblp.so.debug; else d=$tmp/bin; n=prog.debug; fi
	rm -rf "$d/$n" "$d/.debug" "$tmp/dd"
	mkdir -p "$tmp/dd"
	case $2 in
	same) cp "${3:-$tmp/$n}" "$d/$n" ;;
	dotdebug) mkdir -p "$d/.debug" && cp "${3:-$tmp/$n}" "$d/.debug/$n" ;;
	debugdir) mkdir -p "$tmp/dd$d" && cp "${3:-$tmp/$n}" "$tmp/dd$d/$n" ;;
	none) ;;
	esac
}

for what in lib prog; do
	if [ "$what" = lib ]; then full=$tmp/liblp.full; else full=$tmp/prog.full; fi
	place $what none
	run $what none
	check "$what, no debug file: cmp (static) is not named" [ "$(name_at "$tmp/$what.none" "$full" cmp)" = "??" ]
	check "$what, no debug file: no file:line" sh -c "! grep -q 'lines_prog.c:' '$tmp/$what.none'"
	for where in same dotdebug debugdir; do
		place $what $where
		run $what $where
		python3 tests/symbols/lines_compare.py "$what, debug file in $where vs addr2line -C" \
			"$tmp/$what.a2l" "$tmp/$what.$where" 100 100
		r=$(names_as_nm "$full" "$tmp/$what.$where")
		check "$what, debug file in $where: names as nm gives them at ${r% *}/${r#* } addresses" \
			[ "${r% *}" = "${r#* }" -a "${r#* }" -gt 100 ]
		check "$what, debug file in $where: cmp and fold (static, in .symtab only) named" \
			[ "$(name_at "$tmp/$what.$where" "$full" cmp)" = cmp -a \
			"$(name_at "$tmp/$what.$where" "$full" fold)" = fold ]
	done
done

# A debug file whose CRC is not the link's: the right file with one byte
# more (every symbol and line still readable).  Refused; and a right one
# further down the search order is still found.
cp "$tmp/liblp.so.debug" "$tmp/other.debug"
printf '\0' >>"$tmp/other.debug"
place lib same "$tmp/other.debug"
run lib badcrc
check "a debug file with another CRC: refused (cmp not named)" \
	[ "$(name_at "$tmp/lib.badcrc" "$tmp/liblp.full" cmp)" = "??" ]
check "a debug file with another CRC: refused (no file:line)" \
	sh -c "! grep -q 'lines_prog.c:' '$tmp/lib.badcrc'"
place lib dotdebug
cp "$tmp/other.debug" "$tmp/lib/liblp.so.debug"
run lib badcrc_then_good
check "another CRC in the object's directory, the right file in .debug/: the right one used" \
	[ "$(name_at "$tmp/lib.badcrc_then_good" "$tmp/liblp.full" cmp)" = cmp ]
rm -f "$tmp/other.debug" "$tmp/lib/liblp.so.debug"

# The bound: debug files padded with zeros (sparse) to exactly
# SFB_DEBUGLINK_MAX_BYTES and to one byte more, each linked from its own
# copy of the library.
for size in $max $((max + 1)); do
	mkdir -p "$tmp/big$size"
	cp "$tmp/liblp.so.debug" "$tmp/big$size/lp.debug"
	truncate -s "$size" "$tmp/big$size/lp.debug"
	objcopy --add-gnu-debuglink="$tmp/big$size/lp.debug" "$tmp/lib/liblp.so.nolink" \
		"$tmp/big$size/liblp.so"
	SFRAME_BT_DEBUG_DIR=$tmp/dd timeout 300 "$tmp/driver" "$tmp/big$size/liblp.so" \
		<"$tmp/lib.pcs" >"$tmp/big$size.out" 2>/dev/null
	rm -f "$tmp/big$size/lp.debug"
done
check "a debug file of SFB_DEBUGLINK_MAX_BYTES ($max) bytes: read (cmp named)" \
	[ "$(name_at "$tmp/big$max.out" "$tmp/liblp.full" cmp)" = cmp ]
check "a debug file of SFB_DEBUGLINK_MAX_BYTES + 1 bytes: refused (cmp not named)" \
	[ "$(name_at "$tmp/big$((max + 1)).out" "$tmp/liblp.full" cmp)" = "??" ]

# Malformed links, the right debug file in the object's directory: each
# result complete (a block for every address, the exported
# lines_prog_main still named from .dynsym), the driver not killed.
# Those that cannot hold the right name and CRC give no file:line.
crc=$(objcopy --dump-section .gnu_debuglink="$tmp/link.bin" "$tmp/lib/liblp.so" /dev/null 2>/dev/null &&
	od -An -tx1 -j$(($(wc -c <"$tmp/link.bin") - 4)) "$tmp/link.bin" | tr -d ' \n')
[ -n "$crc" ] || notok "the link's CRC read back"
place lib same
mk_link() { # mk_link CASE: the section's bytes for CASE
	python3 - "$1" "$crc" <<'PY'
import sys
case, crc = sys.argv[1], bytes.fromhex(sys.argv[2])
name = b"liblp.so.debug"
def pad(b):
    return b + b"\0" * (-len(b) % 4)
out = {
    "empty": b"",
    "name-cut": name[:5],
    "no-crc": name + b"\0",
    "crc-cut": pad(name + b"\0") + crc[:2],
    "name-300": pad(b"a" * 300 + b"\0") + crc,
    "name-5000": pad(b"a" * 5000 + b"\0") + crc,
    "name-no-nul": b"a" * 5000,
    "name-256": pad(b"a" * 256 + b"\0") + crc,
    "slash": pad(b"../lib/" + name + b"\0") + crc,
}[case]
sys.stdout.buffer.write(out)
PY
}
bad=0
n=$(wc -l <"$tmp/lib.pcs")
for c in empty name-cut no-crc crc-cut name-300 name-5000 name-no-nul name-256 slash; do
	mk_link $c >"$tmp/link.$c"
	objcopy --update-section .gnu_debuglink="$tmp/link.$c" "$tmp/lib/liblp.so" "$tmp/lib/liblp.$c.so" ||
		{ bad=$((bad + 1)); echo "# $c: objcopy failed"; continue; }
	SFRAME_BT_DEBUG_DIR=$tmp/dd timeout 300 "$tmp/driver" "$tmp/lib/liblp.$c.so" \
		<"$tmp/lib.pcs" >"$tmp/mal.$c" 2>/dev/null
	rc=$?
	blocks=$(grep -c '^0x' "$tmp/mal.$c")
	main=$(name_at "$tmp/mal.$c" "$tmp/liblp.full" lines_prog_main)
	lines=$(grep -c 'lines_prog.c:' "$tmp/mal.$c")
	echo "# $c: status $rc, $blocks/$n blocks, lines_prog_main named '$main', $lines lines"
	if [ "$rc" -ne 0 ] || [ "$blocks" -ne "$n" ] || [ "$main" != lines_prog_main ] ||
		{ [ "$c" != slash ] && [ "$lines" -ne 0 ]; }; then
		bad=$((bad + 1))
	fi
done
check "9 malformed links: every result complete, no file:line from a bad link ($bad bad)" [ "$bad" -eq 0 ]
exit 0
