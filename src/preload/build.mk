# libsframebt-preload.so: glibc's backtrace() and backtrace_symbols_fd()
# replaced, for LD_PRELOAD.
$(B)/pic/preload/backtrace_preload.o: src/preload/backtrace_preload.c backtrace.h Makefile
	@mkdir -p $(@D)
	$(CC) $(LIBFLAGS) -fno-omit-frame-pointer -c $< -o $@
$(PRELOAD): $(PIC_OBJS) $(B)/pic/preload/backtrace_preload.o
	$(CC) -shared $(GC_SECTIONS) -o $@ $^
