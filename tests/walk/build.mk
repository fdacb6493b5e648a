# Walker tests.  Ground truth comes from dladdr1() symbol sizes, so the
# programs are linked with -rdynamic; chain code is built with CHAIN_CFLAGS
# (tests/tests.mk), so that only unwind tables can walk it.
WALK_FC_LIB := $(B)/tests/walk_fc_lib.so
WALK_TESTS := $(B)/tests/t_walk_signals $(B)/tests/t_first_call
$(WALK_TESTS): $(B)/tests/%: tests/walk/%.c tests/walk/walk_common.h \
		tests/lib/sig_install.h $(STATIC) tests/lib/check.h backtrace.h | $(B)/tests
	$(CC) $(TESTFLAGS) $(CHAIN_CFLAGS) -rdynamic $< -o $@ $(STATIC) -ldl -lpthread

$(WALK_FC_LIB): tests/walk/walk_fc_lib.c | $(B)/tests
	$(CC) $(TESTFLAGS) $(CHAIN_SOFLAGS) $< -o $@

$(B)/tests/t_first_call: $(WALK_FC_LIB) $(B)/tests/walk_churn_a.so

# t_walk_chains and t_every_insn: call chains across the executable, a
# linked shared object and a dlopen()ed one (chains_lib.h), plus the
# prebuilt tests/fixtures/bin/x86_64-v*/libchain.so.  The executables are
# linked -rdynamic (dladdr() names their functions) and find both helper
# objects next to themselves ($ORIGIN); the fixtures through $SFB_FIXTURES,
# ./tests/fixtures/bin, or this source tree (SFB_CHAINS_SRCDIR).
# t_every_insn --world DIR steps libraries world_libs.sh builds
# (t_every_insn_world.sh).
CHAINS_LINKED := $(B)/tests/libsfb_chains_linked.so
CHAINS_DL     := $(B)/tests/libsfb_chains_dl.so
CHAINS_EXE    := tests/walk/chains_exe.c tests/walk/chains_asm.S $(B)/tests/chains_cfi.o

# chains_cfi.S: without -Wa,--gsframe (its functions walked by .eh_frame).
$(B)/tests/chains_cfi.o: tests/walk/chains_cfi.S | $(B)/tests
	$(CC) -c $< -o $@

$(CHAINS_LINKED): tests/walk/chains_linked.c tests/walk/chains_lib.h | $(B)/tests
	$(CC) $(TESTFLAGS) $(SFRAME_AS) -fPIC -shared \
		-Wl,-soname,libsfb_chains_linked.so $< -o $@

$(CHAINS_DL): tests/walk/chains_dl.c tests/walk/chains_lib.h | $(B)/tests
	$(CC) $(TESTFLAGS) $(SFRAME_AS) -fPIC -shared $< -o $@

$(B)/tests/t_walk_chains $(B)/tests/t_every_insn: $(B)/tests/t_%: tests/walk/t_%.c \
		$(CHAINS_EXE) tests/walk/chains_lib.h tests/walk/chains_paths.h $(CHAINS_LINKED) $(CHAINS_DL) \
		tests/lib/gcc_trace.h \
		tests/lib/sig_install.h $(STATIC) tests/lib/check.h backtrace.h | $(B)/tests
	$(CC) $(TESTFLAGS) $(SFRAME_AS) -rdynamic -DSFB_CHAINS_SRCDIR='"$(CURDIR)"' \
		$< $(CHAINS_EXE) -o $@ \
		-L$(B)/tests -lsfb_chains_linked -Wl,-rpath,'$$ORIGIN' \
		$(STATIC) -ldl -lpthread $(EI_LIBS)
# Under ASan, libstdc++ loaded at start-up: --world dlopen()s a C++
# library, whose exceptions ASan's __cxa_throw interceptor must find the
# real one for.  (Not otherwise: test-port links against an older glibc
# than the host's libstdc++ wants.)
EI_COMMA := ,
$(B)/tests/t_every_insn: EI_LIBS := $(if $(findstring -fsanitize=address,$(CFLAGS)),\
	-Wl$(EI_COMMA)--no-as-needed -lstdc++ -Wl$(EI_COMMA)--as-needed)

# t_memo: the row memo (src/walk/rowmemo.[ch]) and the walker's hints;
# -rdynamic gives take() a symbol size for dladdr1().
$(B)/tests/t_memo: tests/walk/t_memo.c src/walk/rowmemo.h src/rows/sframe_decode.h $(STATIC) \
		tests/lib/check.h backtrace.h | $(B)/tests
	$(CC) $(TESTFLAGS) $(CHAIN_CFLAGS) -rdynamic $< -o $@ $(STATIC) -ldl -lpthread

# t_unw_compare: whole stacks compared with libunwind's (libunwind-dev,
# the nongnu libunwind, local unwinding only: -lunwind), chain code with
# SFrame.
$(B)/tests/t_unw_compare: tests/walk/t_unw_compare.c tests/walk/walk_common.h tests/lib/sig_install.h \
		tests/lib/unw_compare.h \
		$(STATIC) tests/lib/check.h backtrace.h | $(B)/tests
	$(CC) $(TESTFLAGS) -Wa,--gsframe -fomit-frame-pointer -fno-optimize-sibling-calls \
		-rdynamic $< -o $@ $(STATIC) -lunwind -ldl -lpthread

# t_fibers: walks on makecontext() stacks, against libunwind and the
# chain's recorded return addresses; probes counted through syscall().
$(B)/tests/t_fibers: tests/walk/t_fibers.c $(STATIC) tests/lib/check.h backtrace.h | $(B)/tests
	$(CC) $(TESTFLAGS) $(CHAIN_CFLAGS) -rdynamic $< -o $@ $(STATIC) -lunwind -ldl -lpthread

# t_start_nocfi: a program entered through an entry function without CFI
# (-e nocfi_start); x86-64 assembly.
$(B)/tests/t_start_nocfi: tests/walk/t_start_nocfi.c tests/objects/gcc_compare.h tests/lib/gcc_trace.h $(STATIC) \
		tests/lib/check.h backtrace.h | $(B)/tests
	$(CC) $(TESTFLAGS) -Itests/objects -rdynamic -Wl,-e,nocfi_start $< -o $@ $(STATIC) -ldl -lpthread
