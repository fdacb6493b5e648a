# The public entry points of backtrace.h.  Built with frame pointers, as
# the whole library is but the walker: api.c finds its caller through its
# own frame record.
LIB_SRCS += src/api/api.c
