# Architectures: one file each, chosen by the compiler's target (the
# Makefile's ARCH); arch.h is what the walker and the memo may call.
LIB_SRCS += src/arch/$(ARCH).c
