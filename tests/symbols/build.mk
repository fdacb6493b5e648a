# t_symbolize dlopen()s (and copies) a helper object; see
# tests/symbols/symbolize_helper.c.  -Wl,--hash-style=sysv so that the DT_HASH
# path is tested too (libc covers DT_GNU_HASH).
SYMBOLIZE_HELPER := $(B)/tests/libsfb_symbolize_helper.so

$(SYMBOLIZE_HELPER): tests/symbols/symbolize_helper.c | $(B)/tests
	$(CC) $(TESTFLAGS) -fPIC -shared -Wl,--hash-style=sysv $< -o $@

$(B)/tests/t_symbolize: $(SYMBOLIZE_HELPER)
