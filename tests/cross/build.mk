# make test-cross: the walker built for AArch64 (SFrame V1, V2, V3, with
# and without pointer authentication) and s390x (V3) with the cross
# compilers, run under qemu-user.  tests/cross/run.sh installs what it
# needs and fetches trixie's and sid's binutils (tests/fixtures/toolchains.sh).
# Not part of `make test`.
.PHONY: test-cross
test-cross:
	@sh tests/cross/run.sh $(B) $(CROSS_VARIANTS)
