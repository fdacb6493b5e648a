#!/bin/sh
# backtrace.h compiles warning-free (-Wall -Wextra -Werror -pedantic)
# under every C standard from C89 and every C++ standard from C++98 that
# the compiler knows, with gcc and clang: a file that includes it and
# calls each of its functions, compiled, linked with the library and run.
. tests/lib/check.sh
[ -e "$B/libsframebt.a" ] || { notok "$B/libsframebt.a not built"; exit 1; }
cat >"$tmp/use.c" <<'EOC'
#include "backtrace.h"
#include <stdio.h>

int main(void)
{
	void *pcs[8];
	struct sframe_bt_frame f[8];
	struct sframe_bt_status st;
	struct sframe_symbol sym;
	char scratch[SFRAME_SYMBOLIZE_SCRATCH], line[256];
	int n = sframe_backtrace(pcs, 8);
	enum sframe_bt_stop stop = SFRAME_BT_STOP_OUTERMOST;
	enum sframe_bt_source src = SFRAME_BT_FROM_EH_FRAME;
	n += sframe_backtrace_ucontext(NULL, pcs, 8);
	n += sframe_backtrace_ex(NULL, f, 8, SFRAME_BT_SKIP_SELF | SFRAME_BT_NO_EH_FRAME, &st);
	sframe_backtrace_set_default_flags(SFRAME_BT_FP_FALLBACK_ANY);
	n += sframe_backtrace_warmup();
	n += sframe_backtrace_keep_loaded((const void *)0);
	n += sframe_symbolize((uintptr_t)pcs[0], &sym, scratch, sizeof scratch);
	n += sframe_format_frame(0, (uintptr_t)pcs[0], 1, line, sizeof line);
	sframe_backtrace_symbols_fd(pcs, 1, -1);
	n += sframe_write_crash_report(NULL, -1);
	n += sframe_install_crash_handler(-1);
	n += sframe_crash_handler_thread_init();
	printf("%d %s %d %d %d\n", n, sframe_bt_stop_name(st.stop), (int)stop, (int)src,
	       SFRAME_CRASH_STACK_SIZE);
	return 0;
}
EOC
cp "$tmp/use.c" "$tmp/use.cc"
LIBS="$B/libsframebt.a -ldl -lpthread"
# A sanitizer build's library needs its compiler's runtime: compile only.
link=1
nm "$B/libsframebt.a" 2>/dev/null | grep -q ' U __[a-z]*san_' && link=0
for cc in gcc clang; do
	command -v $cc >/dev/null || { echo "# $cc: not installed"; continue; }
	cxx=g++
	[ $cc = clang ] && cxx=clang++
	for std in c89 c90 gnu89 c99 gnu99 c11 gnu11 c17 gnu17 c2x gnu2x \
		c++98 c++03 gnu++98 c++11 c++14 c++17 c++20 gnu++20 c++2b; do
		case $std in *++*) drv=$cxx src=$tmp/use.cc ;; *) drv=$cc src=$tmp/use.c ;; esac
		# A standard the compiler does not know is left out.
		echo 'int x;' | $drv -std=$std -x "$(case $std in *++*) echo c++ ;; *) echo c ;; esac)" \
			-fsyntax-only - 2>/dev/null || { echo "# $drv -std=$std: unknown"; continue; }
		if [ $link = 0 ]; then
			$drv -std=$std -Wall -Wextra -Werror -pedantic -I. -c "$src" -o "$tmp/use.o" \
				>"$tmp/err" 2>&1
		else
			$drv -std=$std -Wall -Wextra -Werror -pedantic -I. "$src" -o "$tmp/use" $LIBS \
				>"$tmp/err" 2>&1 && "$tmp/use" >/dev/null
		fi
		if [ $? = 0 ]; then
			ok "backtrace.h: $drv -std=$std -Wall -Wextra -Werror -pedantic"
		else
			notok "backtrace.h: $drv -std=$std -Wall -Wextra -Werror -pedantic"
			sed 's/^/# /' "$tmp/err" | head -20
		fi
	done
done
exit 0
