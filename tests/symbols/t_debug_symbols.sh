#!/bin/sh
# Detached debug files: a stripped object's static functions are named
# from DIR/.build-id/xx/yyyy.debug (DIR: $SFRAME_BT_DEBUG_DIR, else
# /usr/lib/debug), and only when that file's build-id note is the loaded
# object's.  The crash-handler example runs with a stripped copy of
# libcrashdemo.so, whose static_helper is in no .dynsym; binutils makes
# the debug file (objcopy --only-keep-debug) and says what the names are.
. tests/lib/check.sh
. tests/lib/install-deps.sh
install_deps binutils
ulimit -c 0 2>/dev/null # the crashes are on purpose: no core files

if [ ! -x "$B/crash-handler" ] || [ ! -f "$B/libcrashdemo.so" ]; then
	notok "$B/crash-handler not built (make examples)"
	exit 1
fi

bin=$tmp/bin
mkdir -p "$bin"
cp "$B/crash-handler" "$bin/"
objcopy --only-keep-debug "$B/libcrashdemo.so" "$tmp/libcrashdemo.debug"
strip --strip-all -o "$bin/libcrashdemo.so" "$B/libcrashdemo.so"
bid=$(readelf -n "$bin/libcrashdemo.so" | awk '/Build ID:/ { print $3 }')
[ -n "$bid" ] || { notok "libcrashdemo.so has no build-id"; exit 1; }

# put_debug DIR FILE: FILE becomes DIR's debug file for libcrashdemo.so.
put_debug() {
	mkdir -p "$1/.build-id/$(printf %.2s "$bid")"
	cp "$2" "$1/.build-id/$(printf %.2s "$bid")/${bid#??}.debug"
}

# report NAME [VAR=VALUE...]: the segv report of the stripped copy.
report() {
	out=$tmp/report.$1
	shift
	env "$@" timeout 120 ${SFB_WRAP:-} "$bin/crash-handler" segv >"$out" 2>&1
	rc=$?
	echo "--- $out: status $rc"
	cat "$out"
}

# How a crash must end, the AddressSanitizer build's included.
. tests/lib/crash_status.sh
asan_of "$bin/crash-handler"

# frame_name FILE N: the name frame #N is given ("??" when none).
frame_name() {
	sed -n "s/^#$2 0x[0-9a-f]* in \\([^ +]*\\).*/\\1/p" "$1"
}

# nm_name FILE N: what nm, reading the debug file, calls frame #N's
# address in libcrashdemo.so (the call, pc - 1, after #0).
nm_name() {
	off=$(sed -n "s/^#$2 0x[0-9a-f]* in .*libcrashdemo\\.so+\\(0x[0-9a-f]*\\))\$/\\1/p" "$1")
	[ -n "$off" ] || return 0
	off=$((off - ($2 > 0)))
	nm -S -t d --defined-only "$tmp/libcrashdemo.debug" |
		awk -v a="$off" 'NF == 4 && $1 + 0 <= a && a < $1 + $2 { print $4; exit }'
}

# Frame #1 is static_helper, a static function: named only by .symtab.
report stripped
check "stripped, no debug file: killed by SIGSEGV (status 139), or passed on to ASan" \
	died_of "$tmp/report.stripped" SIGSEGV 139
check "stripped, no debug file: static_helper is not named (no .symtab, no .dynsym entry)" \
	[ "$(frame_name "$tmp/report.stripped" 1)" = "??" ]
check "stripped, no debug file: the walk still reaches the outermost frame" \
	grep -q '^# stopped: outermost' "$tmp/report.stripped"

put_debug "$tmp/dbg" "$tmp/libcrashdemo.debug"
report debug SFRAME_BT_DEBUG_DIR="$tmp/dbg"
check "debug file: frame #0 named as nm names it in the debug file ($(nm_name "$tmp/report.debug" 0))" \
	[ "$(frame_name "$tmp/report.debug" 0)" = "$(nm_name "$tmp/report.debug" 0)" ]
check "debug file: static_helper named from the debug file" \
	[ "$(frame_name "$tmp/report.debug" 1)" = static_helper ]
check "debug file: crashdemo_run named" [ "$(frame_name "$tmp/report.debug" 2)" = crashdemo_run ]
check "debug file: a trailing slash in SFRAME_BT_DEBUG_DIR is harmless" \
	sh -c "SFRAME_BT_DEBUG_DIR='$tmp/dbg/' timeout 120 ${SFB_WRAP:-} '$bin/crash-handler' segv 2>&1 |
		grep -q '^#1 0x[0-9a-f]* in static_helper+'"

# The debug file of another build under this build-id's name: the same
# symbols at the same addresses, but a build-id note one byte different.
# It must not name anything.
note=$(readelf -SW "$tmp/libcrashdemo.debug" | sed 's/^ *\[ *[0-9]*\]//' |
	awk '$1 == ".note.gnu.build-id" { print $4 }')
cp "$tmp/libcrashdemo.debug" "$tmp/other.debug"
printf '\252' | dd of="$tmp/other.debug" bs=1 seek=$((0x$note + 16)) conv=notrunc 2>/dev/null
check "the other build's debug file differs from the right one only in its build-id" \
	sh -c "[ \"\$(readelf -n '$tmp/other.debug' | grep 'Build ID')\" != \"\$(readelf -n '$tmp/libcrashdemo.debug' | grep 'Build ID')\" ] &&
		[ \"\$(nm '$tmp/other.debug')\" = \"\$(nm '$tmp/libcrashdemo.debug')\" ]"
put_debug "$tmp/wrong" "$tmp/other.debug"
report wrong SFRAME_BT_DEBUG_DIR="$tmp/wrong"
check "wrong build-id: nothing named from it (static_helper stays ??)" \
	[ "$(frame_name "$tmp/report.wrong" 1)" = "??" ]

# Damaged debug files (right name, then truncated or overwritten): each
# report still ends, the process still dies from its SIGSEGV, and
# static_helper is named right or not at all.
size=$(wc -c <"$tmp/libcrashdemo.debug")
shoff=$(readelf -h "$tmp/libcrashdemo.debug" | awk '/Start of section headers/ { print $5 }')
bad=0
for cut in 0 16 64 $((shoff / 2)) $shoff $((shoff + 100)) $((size - 1)); do
	head -c "$cut" "$tmp/libcrashdemo.debug" >"$tmp/cut.debug"
	put_debug "$tmp/cut" "$tmp/cut.debug"
	report "cut$cut" SFRAME_BT_DEBUG_DIR="$tmp/cut"
	name=$(frame_name "$tmp/report.cut$cut" 1)
	died_of "$tmp/report.cut$cut" SIGSEGV 139 && grep -q '^# stopped: ' "$tmp/report.cut$cut" &&
		{ [ "$name" = "??" ] || [ "$name" = static_helper ]; } || bad=$((bad + 1))
done
i=0
for at in 40 60 $shoff $((shoff + 24)) $((shoff + 300)) $((shoff + 700)) $((size / 3)) $((size / 2)); do
	cp "$tmp/libcrashdemo.debug" "$tmp/garbled.debug"
	printf '\377\377\377\377\377\377\377\177' |
		dd of="$tmp/garbled.debug" bs=1 seek="$at" conv=notrunc 2>/dev/null
	put_debug "$tmp/garbled" "$tmp/garbled.debug"
	report "garbled$i" SFRAME_BT_DEBUG_DIR="$tmp/garbled"
	name=$(frame_name "$tmp/report.garbled$i" 1)
	died_of "$tmp/report.garbled$i" SIGSEGV 139 && grep -q '^# stopped: ' "$tmp/report.garbled$i" &&
		{ [ "$name" = "??" ] || [ "$name" = static_helper ]; } || bad=$((bad + 1))
	i=$((i + 1))
done
check "15 damaged debug files: every report complete, the process killed by its SIGSEGV, static_helper named right or ?? ($bad bad)" \
	[ "$bad" -eq 0 ]
