# Decoder tests: t_decode builds its SFrame sections with sframe_builder.h,
# t_cfi evaluates expressions on the made-up registers and memory of
# cfi_fake.h (shared with the fuzz target).  t_readelf.sh and
# t_cfi_oracle.sh are scripts.
$(B)/tests/t_decode: tests/rows/sframe_builder.h
$(B)/tests/t_cfi: tests/rows/cfi_fake.h

# t_cfi_cache: cfi_cache_lib.c as two objects with .eh_frame only
# (no -Wa,--gsframe), whose frames differ, loaded in turn at what is
# usually the same address.
CFI_CACHE_LIBS := $(B)/tests/cfi_cache_256.so $(B)/tests/cfi_cache_512.so
$(B)/tests/cfi_cache_%.so: tests/rows/cfi_cache_lib.c | $(B)/tests
	$(CC) $(WARN) $(CFLAGS) -fPIC -shared -fomit-frame-pointer -DFRAME_BYTES=$* $< -o $@
$(B)/tests/t_cfi_cache: $(CFI_CACHE_LIBS)
