# Reports: frame lines (format.c), the crash report (report.c), the
# one-call crash handler (crash.c).  This layer walks, then symbolizes.
LIB_SRCS += src/report/format.c src/report/report.c src/report/crash.c
