# libsframebt-preload.so: glibc's backtrace() and backtrace_symbols_fd()
# replaced, for LD_PRELOAD.
$(B)/pic/preload/backtrace_preload.o: src/preload/backtrace_preload.c backtrace.h Makefile
	@mkdir -p $(@D)
	$(CC) $(LIBFLAGS) -fno-omit-frame-pointer -c $< -o $@
# With the interposer of libgcc's __register_frame() (register_frame.c):
# code that JIT compilers register with libgcc is registered with sframebt.
$(B)/pic/preload/register_frame.o: src/preload/register_frame.c src/objects/jit_registry.h \
		src/base/entry.h Makefile
	@mkdir -p $(@D)
	$(CC) $(LIBFLAGS) -c $< -o $@
$(PRELOAD): $(PIC_OBJS) $(B)/pic/preload/backtrace_preload.o $(B)/pic/preload/register_frame.o
	$(CC) -shared $(GC_SECTIONS) -o $@ $^ -ldl
