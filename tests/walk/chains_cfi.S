/* chains_cfi.S - hand-written helpers for t_walk_chains / t_every_insn
 * (see chains_lib.h) walked by their .eh_frame CFI: assembled without
 * --gsframe, so that no SFrame row covers them. */
	.text

/* int chains_ra_popped(struct chains_ctx *ctx): pops its own return
 * address and pushes it back, as OCaml's caml_c_call pops it into the
 * runtime's state: in between, the CFI has CFA = SP and the return
 * address at CFA - 8, below SP, in the red zone that a signal leaves
 * alone.  Then ctx->hop[ctx->pos++](ctx). */
	.globl	chains_ra_popped
	.type	chains_ra_popped, @function
	.p2align 4
chains_ra_popped:
	.cfi_startproc
	popq	%r11
	.cfi_adjust_cfa_offset -8
	movq	%r11, %rax
	xorq	%r11, %r11
	pushq	%rax
	.cfi_adjust_cfa_offset 8
	subq	$8, %rsp
	.cfi_adjust_cfa_offset 8
	movslq	64(%rdi), %rcx
	leal	1(%rcx), %edx
	movl	%edx, 64(%rdi)
	call	*(%rdi,%rcx,8)
	addq	$8, %rsp
	.cfi_adjust_cfa_offset -8
	ret
	.cfi_endproc
	.size	chains_ra_popped, .-chains_ra_popped
	.section .note.GNU-stack,"",@progbits
