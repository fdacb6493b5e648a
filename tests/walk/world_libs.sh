#!/bin/bash
# world_libs.sh OUT: libraries nobody here wrote, built with SFrame by each
# binutils, for t_every_insn --world.  The upstream sources Debian 12
# ships (lua5.4, zlib, bzip2: an interpreter, two compressors), fetched
# privately (tests/fixtures/toolchains.sh, tc_source), each built as one
# shared object at -O2 (frame pointers omitted, as Debian builds them) by
# the host's gcc with the assembler of binutils 2.40, 2.44 and 2.47:
#   OUT/v1/liblua.so OUT/v1/libz.so OUT/v1/libbz2.so    SFrame V1
#   OUT/v2/...                                          SFrame V2
#   OUT/v3/...                                          SFrame V3
# Built once: kept while OUT/vN/.stamp is newer than this script.
# Needs the network the first time (toolchains and sources).
set -euo pipefail
out=$1
here=$(cd "$(dirname "$0")" && pwd)
self=$here/world_libs.sh
cd "$here/../.."
. tests/fixtures/toolchains.sh
tc_setup x86_64-v1 x86_64-v2 x86_64-v3 >&2
tc_source bookworm lua5.4 zlib bzip2 >&2
src=$SFB_TC/src

# build V: the three libraries of SFrame version V
build() {
	local v=$1 s d cc lua f l
	s=$(tc_suite_of "$v")
	d=$out/v$v
	[ -e "$d/.stamp" ] && [ "$d/.stamp" -nt "$self" ] && return 0
	rm -rf "$d"
	mkdir -p "$d"
	cc="gcc -B$SFB_TC/bin/x86_64-$s/ -O2 -fPIC -shared -w -Wa,--gsframe"
	lua=
	for f in "$src"/lua5.4/src/*.c; do
		case $f in */lua.c|*/luac.c) ;; *) lua="$lua $f" ;; esac
	done
	$cc -DLUA_USE_LINUX $lua -o "$d/liblua.so" -lm
	$cc "$src"/zlib/{adler32,compress,crc32,deflate,infback,inffast,inflate,inftrees,trees,uncompr,zutil}.c \
		-o "$d/libz.so"
	$cc "$src"/bzip2/{blocksort,huffman,crctable,randtable,compress,decompress,bzlib}.c \
		-o "$d/libbz2.so"
	for l in liblua libz libbz2; do
		case $("$SFB_TC/bin/x86_64-$s/readelf" -S "$d/$l.so") in
		*" .sframe "*) ;;
		*) echo "world_libs.sh: $d/$l.so has no .sframe" >&2; return 1 ;;
		esac
	done
	touch "$d/.stamp"
}
# (in parallel: each is one compiler run after another)
build 1 & p1=$!
build 2 & p2=$!
build 3 || exit 1
wait $p1 && wait $p2
