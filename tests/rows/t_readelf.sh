#!/bin/sh
# t_readelf.sh - sframe-dump --canon against GNU readelf, on every fixture.
#
# For each binary under tests/fixtures/bin/<arch>-v<N>/ (or $SFB_FIXTURES)
# and each readelf oracle next to it (NAME.readelf-X.Y, the raw output of
# `readelf --sframe NAME` from binutils X.Y), compares
#     $SFB_BUILD/sframe-dump --canon NAME
# with
#     awk -f tests/fixtures/readelf-canon.awk NAME.readelf-X.Y
# Lines the oracle's readelf cannot confirm are dropped from sframe-dump's
# side first (see readelf-canon.awk):
#     2.40                    fixed-fp, fixed-ra
#     2.44 on an SFrame V1    fde and fre lines (it prints the header only)
# Prints "ok - ..." / "not ok - ..." per pair and a closing
# "# rows compared: FDEs=.. FREs=..".
#
# env: SFB_BUILD     build directory (default: build)
#      SFB_FIXTURES  fixture directory (default: tests/fixtures/bin)
#      SFB_DUMP      sframe-dump to test (default: $SFB_BUILD/sframe-dump)

B=${SFB_BUILD:-build}
tests=$(cd "$(dirname "$0")/.." && pwd)
fixtures=${SFB_FIXTURES:-$tests/fixtures/bin}
awkf=$tests/fixtures/readelf-canon.awk
dump=${SFB_DUMP:-$B/sframe-dump}

tmp=$(mktemp -d "${TMPDIR:-/tmp}/t_readelf.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT HUP INT TERM

failed=0
npairs=0
total_fdes=0
total_fres=0

notok() {
	echo "not ok - $*"
	failed=$((failed + 1))
}

# Indent a file as TAP-style comments, at most 20 lines.
show() {
	head -n 20 "$1" | sed 's/^/#   /'
}

if [ ! -x "$dump" ]; then
	notok "sframe-dump not built ($dump)"
	exit 1
fi
if [ ! -d "$fixtures" ]; then
	notok "no fixture directory $fixtures"
	exit 1
fi

for dir in "$fixtures"/*/; do
	[ -d "$dir" ] || continue
	dir=${dir%/}
	target=$(basename "$dir")
	case $target in
	x86_64-*) abi=amd64 ;;
	aarch64-*) abi=aarch64 ;;
	s390x-*) abi=s390x ;;
	*) notok "$target: unknown architecture (directory name)"; continue ;;
	esac
	for bin in "$dir"/*; do
		case $bin in *.readelf-*) continue ;; esac
		[ -f "$bin" ] || continue
		name=$target/$(basename "$bin")
		# Its oracles: NAME.readelf-X.Y, nothing else (no editor backups).
		set --
		for oracle in "$bin".readelf-*; do
			case ${oracle##*.readelf-} in
			*[!0-9.]*|.*|*.|*..*) ;;
			[0-9]*.[0-9]*) set -- "$@" "$oracle" ;;
			esac
		done
		[ $# -gt 0 ] || continue

		if ! "$dump" --canon "$bin" >"$tmp/dump" 2>"$tmp/dump.err"; then
			for oracle; do
				notok "$name vs readelf ${oracle##*.readelf-}: sframe-dump --canon failed"
			done
			show "$tmp/dump.err"
			continue
		fi

		for oracle; do
			rver=${oracle##*.readelf-}
			npairs=$((npairs + 1))
			if ! awk -v rver="$rver" -v abi="$abi" -f "$awkf" "$oracle" \
				>"$tmp/oracle" 2>"$tmp/oracle.err"; then
				notok "$name vs readelf $rver: cannot canonicalize the oracle"
				show "$tmp/oracle.err"
				continue
			fi
			# What this readelf cannot confirm.
			drop='^$'
			header_only=0
			case $rver in 2.40) drop='^fixed-(fp|ra) ' ;; esac
			if grep -q 'No further information can be displayed' "$oracle"; then
				header_only=1
				drop="$drop|^(fde|fre) "
			fi
			grep -Ev "$drop" "$tmp/dump" >"$tmp/dump.cmp"

			fdes=$(grep -c '^fde ' "$tmp/oracle")
			fres=$(grep -c '^fre ' "$tmp/oracle")
			if [ "$header_only" = 1 ]; then
				what="header only"
			else
				what="$fdes FDEs, $fres FRE rows"
			fi
			total_fdes=$((total_fdes + fdes))
			total_fres=$((total_fres + fres))
			if cmp -s "$tmp/oracle" "$tmp/dump.cmp"; then
				echo "ok - $name vs readelf $rver ($what)"
			else
				notok "$name vs readelf $rver ($what)"
				diff -u "$tmp/oracle" "$tmp/dump.cmp" |
					sed -e "1s|.*|--- readelf $rver (canonical)|" \
					    -e "2s|.*|+++ sframe-dump --canon|" >"$tmp/diff"
				show "$tmp/diff"
			fi
		done
	done
done

if [ "$npairs" = 0 ]; then
	notok "no fixture binaries with readelf oracles under $fixtures"
fi
echo "# rows compared: FDEs=$total_fdes FREs=$total_fres"
[ "$failed" = 0 ]
