# Decoder tests: t_decode builds its SFrame sections with sframe_builder.h,
# t_cfi evaluates expressions on the made-up registers and memory of
# cfi_fake.h (shared with the fuzz target).  t_readelf.sh and
# t_cfi_oracle.sh are scripts.
$(B)/tests/t_decode: tests/rows/sframe_builder.h
$(B)/tests/t_cfi: tests/rows/cfi_fake.h
