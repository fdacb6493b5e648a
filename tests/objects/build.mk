# Object tests: dlopen/dlclose churn under sampling (t_churn) and objects
# kept loaded (t_keep_loaded).  Ground truth comes from dladdr1() symbol
# sizes, so the programs are linked with -rdynamic; chain code is built
# with CHAIN_CFLAGS (tests/tests.mk).
WALK_CHURN_LIBS := $(patsubst %,$(B)/tests/walk_churn_%.so,a b c d x y p q)

$(B)/tests/t_churn: tests/objects/t_churn.c tests/walk/walk_common.h tests/lib/sig_install.h \
		$(WALK_CHURN_LIBS) $(STATIC) tests/lib/check.h backtrace.h | $(B)/tests
	$(CC) $(TESTFLAGS) $(CHAIN_CFLAGS) -Itests/walk -rdynamic $< -o $@ $(STATIC) -ldl -lpthread

# One source, several objects: each variant has its own chain depth, frame
# sizes and layout (tests/objects/walk_churn_lib.c).
$(B)/tests/walk_churn_%.so: tests/objects/walk_churn_lib.c | $(B)/tests
	$(CC) $(TESTFLAGS) $(CHAIN_SOFLAGS) -DCHURN_VARIANT_$* $< -o $@

# t_keep_loaded is also linked with walk_churn_c.so (DT_NEEDED, found next
# to the program): an object loaded at start-up.
$(B)/tests/t_keep_loaded: tests/objects/t_keep_loaded.c tests/walk/walk_common.h \
		$(WALK_CHURN_LIBS) $(STATIC) tests/lib/check.h backtrace.h | $(B)/tests
	$(CC) $(TESTFLAGS) $(CHAIN_CFLAGS) -Itests/walk -rdynamic $< -o $@ $(STATIC) \
		-L$(B)/tests -Wl,--no-as-needed -l:walk_churn_c.so -Wl,--as-needed -Wl,-rpath,'$$ORIGIN' -ldl -lpthread

# t_layouts: tests/objects/t_layouts.c, built once per main-program layout
# into $(B)/tests/layouts/LAYOUT-ROWS (ROWS: sframe, or eh for .eh_frame
# only) and run by tests/objects/t_layouts.sh; $(B)/tests/t_layouts is the
# default layout, run by `make test` like any test program.  Each program
# walks a chain through liblayouts-ROWS.so, itself linked with a gap
# between its segments.
LAYOUT_CFLAGS := -fomit-frame-pointer -fno-optimize-sibling-calls \
	-fno-sanitize=signed-integer-overflow,null
LAYOUT_pie               :=
LAYOUT_pie-sepcode       := -Wl,-z,separate-code
LAYOUT_pie-nosepcode     := -Wl,-z,noseparate-code
LAYOUT_pie-page64k       := -Wl,-z,max-page-size=0x10000
LAYOUT_pie-page2m        := -Wl,-z,separate-code,-z,max-page-size=0x200000
LAYOUT_pie-ttext         := -Wl,-Ttext=0x3000000
LAYOUT_nopie             := -no-pie
LAYOUT_nopie-nosepcode   := -no-pie -Wl,-z,noseparate-code
LAYOUT_nopie-page64k     := -no-pie -Wl,-z,max-page-size=0x10000
LAYOUT_nopie-page2m      := -no-pie -Wl,-z,separate-code,-z,max-page-size=0x200000
LAYOUT_nopie-textseg     := -no-pie -Wl,-Ttext-segment=0x2000000
LAYOUT_nopie-ttext       := -no-pie -Wl,-Ttext=0x3000000
LAYOUTS := pie pie-sepcode pie-nosepcode pie-page64k pie-page2m pie-ttext \
	nopie nopie-nosepcode nopie-page64k nopie-page2m nopie-textseg nopie-ttext
LAYOUT_ROWS_sframe := $(SFRAME_AS)
LAYOUT_ROWS_eh :=
LAYOUT_DIR := $(B)/tests/layouts
LAYOUT_BINS := $(foreach l,$(LAYOUTS),$(LAYOUT_DIR)/$(l)-sframe $(LAYOUT_DIR)/$(l)-eh)
LAYOUT_DEPS := tests/objects/t_layouts.c tests/objects/gcc_compare.h tests/lib/gcc_trace.h \
	tests/lib/check.h tests/lib/sig_install.h \
	tests/lib/uc_regs.h $(STATIC) backtrace.h tests/objects/build.mk

$(LAYOUT_DIR)/liblayouts-%.so: tests/objects/layouts_lib.c tests/objects/build.mk
	@mkdir -p $(@D)
	$(CC) $(TESTFLAGS) $(LAYOUT_CFLAGS) $(LAYOUT_ROWS_$*) -fPIC -shared \
		-Wl,-z,separate-code,-z,max-page-size=0x10000 $< -o $@

define layout_rule
$(LAYOUT_DIR)/$(1)-$(2): $(LAYOUT_DEPS) $(LAYOUT_DIR)/liblayouts-$(2).so
	$$(CC) $$(TESTFLAGS) $$(LAYOUT_CFLAGS) $$(LAYOUT_ROWS_$(2)) -DLAYOUT_LIB $$(LAYOUT_$(1)) \
		$$< -o $$@ -L$(LAYOUT_DIR) -l:liblayouts-$(2).so -Wl,-rpath,'$$$$ORIGIN' \
		$$(STATIC) -ldl -lpthread
endef
$(foreach l,$(LAYOUTS),$(foreach r,sframe eh,$(eval $(call layout_rule,$(l),$(r)))))

$(B)/tests/t_layouts: $(LAYOUT_DIR)/pie-sframe | $(B)/tests
	cp $< $@
	cp $(LAYOUT_DIR)/liblayouts-sframe.so $(B)/tests/
TEST_BINS += $(LAYOUT_BINS)

# t_static: tests/objects/t_static.c (crashes and samples through libc)
# as a normal program and, static, with gcc -static (no .eh_frame_hdr:
# libc's CFI found through sframebt's own index), gcc -static
# -Wl,--eh-frame-hdr and -static-pie; static_cxx.cc, an uncaught C++
# exception, with g++ -static; t_static_report.sh checks their crash
# handler's reports.  Static builds are not possible under the
# sanitizers, whose runtimes do not link statically: left out there.
# clang asks for .eh_frame_hdr where gcc does not: NO_EH_HDR makes both
# link the way gcc -static does.
STATIC_CFLAGS := $(LAYOUT_CFLAGS) $(SFRAME_AS)
STATIC_DEPS := tests/objects/gcc_compare.h tests/lib/gcc_trace.h tests/lib/check.h tests/lib/sig_install.h \
	tests/lib/uc_regs.h $(STATIC) backtrace.h tests/objects/build.mk
NO_EH_HDR := -Wl,--no-eh-frame-hdr
STATIC_CXX := $(if $(findstring clang,$(CC)),$(subst clang,clang++,$(CC)),$(if \
	$(findstring gcc,$(CC)),$(subst gcc,g++,$(CC)),g++))

$(B)/tests/t_static: tests/objects/t_static.c $(STATIC_DEPS) | $(B)/tests
	$(CC) $(TESTFLAGS) $(STATIC_CFLAGS) $< -o $@ $(STATIC) -ldl -lpthread
$(B)/tests/t_static_glibc: tests/objects/t_static.c $(STATIC_DEPS) | $(B)/tests
	$(CC) $(TESTFLAGS) $(STATIC_CFLAGS) -static $(NO_EH_HDR) $< -o $@ $(STATIC) -lpthread
$(B)/tests/t_static_glibc_hdr: tests/objects/t_static.c $(STATIC_DEPS) | $(B)/tests
	$(CC) $(TESTFLAGS) $(STATIC_CFLAGS) -static -Wl,--eh-frame-hdr $< -o $@ $(STATIC) -lpthread
$(B)/tests/t_static_pie: tests/objects/t_static.c $(STATIC_DEPS) | $(B)/tests
	$(CC) $(TESTFLAGS) $(STATIC_CFLAGS) -static-pie $< -o $@ $(STATIC) -lpthread
$(B)/tests/t_static_cxx: tests/objects/static_cxx.cc $(STATIC_DEPS) | $(B)/tests
	$(STATIC_CXX) -std=gnu++17 -Wall -Wextra -Werror -I. -Isrc -Itests -Itests/lib $(CFLAGS) \
		$(STATIC_CFLAGS) -static $(NO_EH_HDR) $< -o $@ $(STATIC) -lpthread
# static-PIE where the C library has its start file (rcrt1.o; Debian's
# s390x cross libc has none).
STATIC_PIE := $(if $(filter /%,$(shell $(CC) -print-file-name=rcrt1.o)),pie)
STATIC_BINS := $(addprefix $(B)/tests/t_static_,glibc glibc_hdr cxx $(STATIC_PIE))
TEST_BINS += $(if $(findstring sanitize,$(CFLAGS)),,$(STATIC_BINS))

# The bound: t_static with 17000 functions of its own, each with an FDE,
# which fill objects/main_eh.h's table of 16384 before libc's FDEs.
$(B)/tests/many_fdes.s: tests/objects/build.mk | $(B)/tests
	@printf '\t.section .note.GNU-stack,"",@progbits\n' >$@; \
	i=0; while [ $$i -lt 17000 ]; do \
		printf '\t.text\n\t.globl many_%d\nmany_%d:\n\t.cfi_startproc\n\tnop\n\t.cfi_endproc\n' $$i $$i; \
		i=$$((i + 1)); done >>$@
$(B)/tests/t_static_full: tests/objects/t_static.c $(B)/tests/many_fdes.s $(STATIC_DEPS)
	$(CC) $(TESTFLAGS) $(STATIC_CFLAGS) -DTABLE_FULL -static $(NO_EH_HDR) $< $(B)/tests/many_fdes.s \
		-o $@ $(STATIC) -lpthread
STATIC_BINS += $(B)/tests/t_static_full
TEST_BINS += $(if $(findstring sanitize,$(CFLAGS)),,$(B)/tests/t_static_full)

# t_jit_churn: run_slot()'s extent comes from the symbol table (dladdr1),
# hence -rdynamic.
$(B)/tests/t_jit_churn: tests/objects/t_jit_churn.c $(STATIC) tests/lib/check.h backtrace.h \
		src/objects/jit_registry.h | $(B)/tests
	$(CC) $(TESTFLAGS) $(SFRAME_AS) -rdynamic $< -o $@ $(STATIC) -ldl -lpthread
