# The distribution corpus (t_world.sh): a probe preloaded into Debian's
# programs, built from the library's position-independent objects and
# linked with libunwind.  probe.c links last: its constructor, which starts
# sampling, runs after the library's own.  WORLD_PROBE_FLAGS: where
# another architecture's libunwind is (tests/cross/world.sh).
WORLD_PROBE := $(B)/tests/world/probe.so
$(WORLD_PROBE): tests/world/probe.c tests/lib/unw_compare.h tests/lib/sig_install.h \
		$(PIC_OBJS) backtrace.h
	@mkdir -p $(@D)
	$(CC) $(WARN) $(CFLAGS) $(WORLD_PROBE_FLAGS) -fPIC -shared -I. -Itests/lib $(SFRAME_AS) \
		$(PIC_OBJS) $< -o $@ -ldl -lpthread -lunwind
