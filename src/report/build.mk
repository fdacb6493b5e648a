# Reports: the one-call crash handler.
LIB_SRCS += src/report/crash.c
