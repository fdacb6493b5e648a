#!/bin/bash
# make test-port: the walker tests where users' programs run.
#   glibc-static  the host's glibc, gcc -static (discovery: __ehdr_start)
#   glibc-2.31    Debian bullseye's libc6/libc6-dev, fetched privately
#                 (tests/fixtures/toolchains.sh), linked against them and
#                 run with their ld.so (discovery: the object table)
#   musl          Debian's musl-gcc, dynamic (the object table)
#   musl-static   musl-gcc -static (__ehdr_start); and
#                 tests/port/t_musl_static.c, built -static, -static
#                 -Wl,--eh-frame-hdr and static-PIE: walks into musl's
#                 libc.a, which has no CFI, stop there with no-unwind-info
# Each configuration builds the library in its own build-port-* directory
# and runs tests/port/t_port_walk.c (chains, SIGPROF samples, a crash,
# a dlopen()ed object where there is a dynamic linker); glibc 2.31 also
# runs the walker tests (t_walk_chains, t_walk_signals, t_churn ...).  Prints "ok - " /
# "not ok - " lines and ends with "N passed, N failed".
set -u
cd "$(dirname "$0")/../.."
. tests/lib/install-deps.sh
install_deps musl-tools musl-dev gcc make binutils >/dev/null
pass=0
fail=0
J=${SFB_PORT_JOBS:-2}

# run CFG PROG [LOADER...]: run a test program, count its lines
run() {
	cfg=$1 prog=$2
	shift 2
	log=$(dirname "$prog")/../port-$(basename "$prog").log
	SFB_BUILD=$(dirname "$(dirname "$prog")") timeout 300 "$@" "$prog" >"$log" 2>&1
	rc=$?
	sed -n -e "s/^ok - /ok - [$cfg] /p" -e "s/^not ok - /not ok - [$cfg] /p" "$log"
	p=$(grep -c '^ok - ' "$log")
	f=$(grep -c '^not ok - ' "$log")
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		echo "not ok - [$cfg] $(basename "$prog") exited with status $rc (log: $log)"
		f=1
	fi
	pass=$((pass + p))
	fail=$((fail + f))
}

# check CFG COND-EXIT-STATUS TEXT
check() {
	if [ "$2" -eq 0 ]; then
		echo "ok - [$1] $3"
		pass=$((pass + 1))
	else
		echo "not ok - [$1] $3"
		fail=$((fail + 1))
	fi
}

# build CFG B MAKE-ARGS... TARGETS: a fresh build directory each time
build() {
	cfg=$1 b=$2
	shift 2
	rm -rf "$b"
	mkdir -p "$b"
	if ! make -j"$J" B="$b" "$@" >"$b/build.log" 2>&1; then
		echo "not ok - [$cfg] build failed:"
		tail -15 "$b/build.log" | sed 's/^/#   /'
		fail=$((fail + 1))
		return 1
	fi
}

# --- glibc, static -----------------------------------------------------------
B=build-port-static
if build glibc-static $B lib $B/tests/t_port_static; then
	readelf -lW $B/tests/t_port_static | grep -q INTERP
	check glibc-static $((! $?)) "t_port_static has no program interpreter (static)"
	run glibc-static $B/tests/t_port_static
fi

# --- glibc 2.31 (Debian bullseye) -------------------------------------------
TC=${SFB_TC:-${SFRAME_TOOLCHAINS:-$HOME/.cache/sframebt-toolchains}}
R=$TC/root/glibc231
if bash -c '. tests/fixtures/toolchains.sh &&
	tc_fetch bullseye glibc231 libc6 libc6-dev linux-libc-dev libgcc-s1'; then
	# The packages' links are absolute (/lib/...): make them point
	# inside the unpacked tree, where the linker and loader look.  A link
	# already pointing there (an earlier run's) is made again from its
	# target with every leading $R taken off, so that runs repeat.
	for d in "$R/lib64" "$R/usr/lib/x86_64-linux-gnu"; do
		for f in "$d"/*; do
			[ -L "$f" ] || continue
			t=$(readlink "$f")
			case $t in /*) ;; *) continue ;; esac
			while [ "${t#"$R"/}" != "$t" ]; do t=${t#"$R"}; done
			ln -sfn "$R$t" "$f"
		done
	done
	L=$R/usr/lib/x86_64-linux-gnu
	LIB=$R/lib/x86_64-linux-gnu
	# Headers, crt files and libraries of 2.31; its ld.so as the
	# interpreter, its libraries first (RPATH reaches dlopen()ed objects'
	# needs too).  librt: timer_create is not yet in libc.
	CC231="gcc --sysroot=$R -B$L/ -L$L -L$LIB -Wl,--push-state,--no-as-needed,-lrt,--pop-state"
	CC231="$CC231 -Wl,--dynamic-linker=$LIB/ld-linux-x86-64.so.2,--disable-new-dtags,-rpath,$LIB"
	B=build-port-glibc231
	if build glibc-2.31 $B CC="$CC231" lib $B/tests/t_port_walk; then
		v=$(readelf -VW $B/tests/t_port_walk $B/libsframebt.so |
			grep -o 'GLIBC_2\.[0-9.]*' | sort -uV | tail -1)
		case $v in GLIBC_2.3[2-9]*|GLIBC_2.[4-9]*) ok=1 ;; *) ok=0 ;; esac
		check glibc-2.31 $ok "t_port_walk and libsframebt.so need at most $v (linked against 2.31)"
		readelf -lW $B/tests/t_port_walk | grep -q "interpreter: $LIB/ld-linux"
		check glibc-2.31 $? "t_port_walk runs with bullseye's ld.so"
		run glibc-2.31 $B/tests/t_port_walk
		# The walker tests, with tests/port/dlfo_compat.h: their
		# ground truth asks _dl_find_object(), and they walk through
		# objects right after dlopen().  Left out: t_interpose (its
		# calloc() interposer recurses through libdl's dlsym(), which
		# calls calloc() before glibc 2.34), t_keep_loaded and t_memo
		# (they interpose _dl_find_object() itself), t_cfi_oracle and
		# t_unw_compare (host readelf and libunwind).
		W="t_walk_chains t_walk_signals t_every_insn t_first_call t_churn t_garbage
			t_symbolize t_overflow t_cfi t_decode"
		TF="-std=gnu11 -Wall -Wextra -Werror -I. -Isrc -Itests -Itests/lib -O2 -g"
		TF_PORT="$TF -Wa,--gsframe -fomit-frame-pointer -fno-optimize-sibling-calls"
		TF="$TF -include tests/port/dlfo_compat.h"
		if make -j"$J" B="$B" CC="$CC231" TESTFLAGS="$TF" \
			$(for t in $W; do echo "$B/tests/$t"; done) >>"$B/build.log" 2>&1; then
			for t in $W; do
				run glibc-2.31 "$B/tests/$t"
			done
			# Built against 2.31, run on the host's glibc: the weak
			# reference finds _dl_find_object, which the library then
			# uses (t_port_walk checks a new object is walked at once).
			O=$B/on-host
			mkdir -p "$O"
			if gcc --sysroot="$R" -B"$L/" -L"$L" -L"$LIB" $TF_PORT -DPORT_DLOPEN \
				tests/port/t_port_walk.c -o "$O/t_port_walk" "$B/libsframebt.a" \
				-ldl -lpthread >>"$B/build.log" 2>&1 &&
			   cc $TF_PORT -fPIC -shared -fno-semantic-interposition \
				tests/port/port_dl.c -o "$O/port_dl.so" >>"$B/build.log" 2>&1; then
				run glibc-2.31-on-host "$O/t_port_walk"
			else
				echo "not ok - [glibc-2.31-on-host] build failed"
				fail=$((fail + 1))
			fi
		else
			echo "not ok - [glibc-2.31] walker tests: build failed"
			tail -15 "$B/build.log" | sed 's/^/#   /'
			fail=$((fail + 1))
		fi
	fi
else
	echo "not ok - [glibc-2.31] cannot fetch Debian bullseye's libc6 and libc6-dev"
	fail=$((fail + 1))
fi

# --- musl -------------------------------------------------------------------
B=build-port-musl
if build musl $B CC=musl-gcc lib $B/tests/t_port_walk $B/tests/t_port_static; then
	readelf -lW $B/tests/t_port_walk | grep -q 'interpreter: .*ld-musl'
	check musl $? "t_port_walk runs with musl's dynamic linker"
	run musl $B/tests/t_port_walk
	readelf -lW $B/tests/t_port_static | grep -q INTERP
	check musl-static $((! $?)) "t_port_static (musl) has no program interpreter (static)"
	run musl-static $B/tests/t_port_static
	# Crashes and samples through musl's libc, in each static layout.
	# musl-gcc's specs know no -static-pie: its start file (rcrt1.o, next
	# to the specs the musl-gcc script names) and link options are given
	# by hand.
	M=$(sed -n 's|.*-specs "\(.*\)/musl-gcc\.specs".*|\1|p' "$(command -v musl-gcc)")
	[ -f "$M/rcrt1.o" ] || M=/usr/lib/x86_64-linux-musl
	# What t_musl_static expects rests on this: musl's libc.a has no
	# unwind tables (its start files' FDEs are .debug_frame, not loaded).
	n=$(readelf -SW "$M/libc.a" 2>/dev/null | grep -cE '\.(eh_frame|sframe)')
	check musl-static "$n" "$M/libc.a has no .eh_frame or .sframe section ($n found)"
	TF="-std=gnu11 -Wall -Wextra -Werror -I. -Isrc -Itests -Itests/lib -O2 -g"
	TF="$TF -Wa,--gsframe -fomit-frame-pointer -fno-optimize-sibling-calls"
	for v in static static-hdr static-pie; do
		case $v in
		static) how="-static" ;;
		static-hdr) how="-static -Wl,--eh-frame-hdr" ;;
		static-pie) how="-fPIE -nostartfiles -Wl,-static,-pie,--no-dynamic-linker,-z,text
			$M/rcrt1.o $M/crti.o $(gcc -print-file-name=crtbeginS.o)" ;;
		esac
		end=
		[ $v = static-pie ] && end="$(gcc -print-file-name=crtendS.o) $M/crtn.o"
		P=$B/tests/t_musl_$v
		# shellcheck disable=SC2086 # word splitting of the options wanted
		if musl-gcc $TF $how tests/port/t_musl_static.c $B/libsframebt.a $end -o "$P" \
			>>"$B/build.log" 2>&1; then
			h=$(readelf -lhW "$P")
			case $v in
			static) ! echo "$h" | grep -Eq 'INTERP|GNU_EH_FRAME|Type: *DYN' ;;
			static-hdr) ! echo "$h" | grep -Eq 'INTERP|Type: *DYN' &&
				echo "$h" | grep -q GNU_EH_FRAME ;;
			static-pie) ! echo "$h" | grep -q INTERP && echo "$h" | grep -Eq 'Type: *DYN' ;;
			esac
			check musl-$v $? "t_musl_$v is static, laid out as $v (readelf)"
			run musl-$v "$P"
		else
			echo "not ok - [musl-$v] t_musl_static: build failed"
			tail -15 "$B/build.log" | sed 's/^/#   /'
			fail=$((fail + 1))
		fi
	done
fi

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ] && [ "$pass" -gt 0 ]
