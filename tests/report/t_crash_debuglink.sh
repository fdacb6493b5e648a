#!/bin/sh
# A crash report's names and source lines from a debug file found through
# .gnu_debuglink: examples/crash-handler with its libcrashdemo.so rebuilt
# without a build-id (-Wl,--build-id=none), stripped (strip --strip-all)
# and linked to its debug file (objcopy --only-keep-debug, then
# --add-gnu-debuglink), the debug file beside it.  The library's frames
# must carry the lines `addr2line -i -f -C` gives on the unstripped
# library (tests/report/lines.sh), and static_helper, a static function
# in no .dynsym, its name; without the debug file, neither.
. tests/lib/check.sh
ulimit -c 0 2>/dev/null
. tests/lib/install-deps.sh
install_deps binutils gcc
. tests/report/lines.sh
. tests/lib/crash_status.sh

if [ ! -x "$B/crash-handler" ]; then
	notok "$B/crash-handler not built (make examples)"
	exit 1
fi
bin=$tmp/bin
mkdir -p "$bin"
cp "$B/crash-handler" "$bin/"
asan_of "$bin/crash-handler"
flags="-O2 -g -fomit-frame-pointer -fPIC -shared -Wl,-soname,libcrashdemo.so -Wl,--build-id=none"
gcc $flags -Wa,--gsframe examples/demo/libcrashdemo.c -o "$tmp/libcrashdemo.full" 2>/dev/null ||
	gcc $flags examples/demo/libcrashdemo.c -o "$tmp/libcrashdemo.full" ||
	{ notok "libcrashdemo.so builds without a build-id"; exit 1; }
objcopy --only-keep-debug "$tmp/libcrashdemo.full" "$tmp/libcrashdemo.debug"
strip --strip-all -o "$tmp/stripped.so" "$tmp/libcrashdemo.full"
objcopy --add-gnu-debuglink="$tmp/libcrashdemo.debug" "$tmp/stripped.so" "$bin/libcrashdemo.so"
check "the library: no build-id, no .symtab, a .gnu_debuglink" \
	sh -c "! readelf -n '$bin/libcrashdemo.so' | grep -q 'Build ID' &&
		! readelf -SW '$bin/libcrashdemo.so' | grep -q '\\.symtab' &&
		readelf -SW '$bin/libcrashdemo.so' | grep -q '\\.gnu_debuglink'"

# report NAME: the segv report, the library's path made the unstripped
# copy's in $tmp/NAME.full (for the oracle).
report() {
	timeout 120 ${SFB_WRAP:-} "$bin/crash-handler" segv >"$tmp/$1" 2>&1
	rc=$?
	echo "--- $1"
	cat "$tmp/$1"
	sed "s|(\\(.*\\)/bin/libcrashdemo\\.so+|(\\1/libcrashdemo.full+|" "$tmp/$1" >"$tmp/$1.full"
}
frame_name() { # frame_name FILE N
	sed -n "s/^#$2 0x[0-9a-f]* in \\([^ +]*\\).*/\\1/p" "$1"
}

report without
check "no debug file: killed by SIGSEGV (status 139), or passed on to ASan" \
	died_of "$tmp/without" SIGSEGV 139
check "no debug file: static_helper not named" [ "$(frame_name "$tmp/without" 1)" = "??" ]
check "no debug file: no line in libcrashdemo.c" \
	sh -c "! grep -q 'libcrashdemo\\.c:' '$tmp/without'"

cp "$tmp/libcrashdemo.debug" "$bin/"
report with
check "debug file: killed by SIGSEGV (status 139), or passed on to ASan" \
	died_of "$tmp/with" SIGSEGV 139
check "debug file: static_helper named from its .symtab" [ "$(frame_name "$tmp/with" 1)" = static_helper ]
check "debug file: the library's frames located in libcrashdemo.c" \
	grep -Eq '^    at .*/examples/demo/libcrashdemo\.c:[0-9]+$' "$tmp/with"
check "debug file: every frame's source lines as addr2line gives them (the unstripped library)" \
	lines_as_addr2line "$tmp/with.full"
exit 0
