#!/bin/sh
# t_every_insn_world.sh - every instruction of code nobody here wrote:
# Lua's interpreter, zlib and bzip2, as Debian 12 builds them (.eh_frame
# only; Lua also built as C++, its errors thrown as C++ exceptions) and
# from the sources it ships, built with SFrame by binutils 2.40, 2.44 and
# 2.47 (world_libs.sh), and Debian's OpenSSL (SHA-1, SHA-2, SHA-3, AES-GCM
# and ChaCha20-Poly1305: assembly chosen by the CPU, hand-written CFI), run
# under the trap flag by t_every_insn --world, each instruction's walk
# checked against the ABI's own account of the stack (t_every_insn.c):
# Lua running a script (its parser, the VM, a sort with a Lua comparator,
# an error caught by pcall and coroutine switches, both longjmp() out),
# zlib and bzip2 compressing and decompressing a page of text.  Every
# instruction in them must be walked right, and every one in libc
# below them.  Needs the network the first time (toolchains, sources).
B=${SFB_BUILD:-build}
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../lib/install-deps.sh"
install_deps liblua5.4-0 zlib1g libbz2-1.0 libssl3 >/dev/null || {
	echo "not ok - installing liblua5.4-0 zlib1g libbz2-1.0 libssl3"
	exit 1
}
dir=$B/tests/world-libs
mkdir -p "$dir"
if ! bash "$here/world_libs.sh" "$dir" >"$dir/build.log" 2>&1; then
	echo "not ok - Lua, zlib and bzip2 built with SFrame by binutils 2.40, 2.44, 2.47 (log: $dir/build.log)"
	tail -5 "$dir/build.log" | sed 's/^/#   /'
	exit 1
fi
exec ${SFB_WRAP:-} "$B/tests/t_every_insn" --world "$dir"
