# Sourced by the tests that crash the crash-handler example: how a crash
# must end.  In the AddressSanitizer build, ASan's handlers for SIGSEGV,
# SIGBUS and SIGFPE are installed before main(), so sframebt's crash
# handler passes those signals on to them: after its report, ASan prints
# its own and exits with status 1.

# asan_of PROG: asan=1 if PROG is built with AddressSanitizer, else empty.
asan_of() {
	asan=
	nm "$1" 2>/dev/null | grep -q ' __asan_init$' && asan=1
}

# died_of FILE SIG STATUS: the crash whose output is FILE and whose shell
# status is $rc ended as it would have without sframebt's handler: killed
# by SIG (status STATUS), or, where ASan's handler came first, ASan's
# report after sframebt's and status 1.
died_of() {
	case $asan:$2 in
	1:SIGSEGV | 1:SIGBUS | 1:SIGFPE)
		[ "$rc" -eq 1 ] &&
			sed -n '/^# stopped: /,$p' "$1" | grep -q 'ERROR: AddressSanitizer: ' ;;
	*) [ "$rc" -eq "$3" ] ;;
	esac
}
