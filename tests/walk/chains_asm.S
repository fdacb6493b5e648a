/* chains_asm.S - hand-written helpers for t_walk_chains / t_every_insn
 * (see chains_lib.h).  Assembled with -Wa,--gsframe. */
	.text

/* int chains_realign(struct chains_ctx *ctx): realign the stack to 64
 * bytes with the CFA kept in %rbx (callee-saved, so the DWARF CFI stays
 * right across the call), then ctx->hop[ctx->pos++](ctx).  SFrame V1/V2
 * cannot say "CFA = rbx"; binutils 2.40 writes CFA = sp+0 for the body
 * instead (a wrong row), later versions no FDE or a flexible one. */
	.globl	chains_realign
	.type	chains_realign, @function
	.p2align 4
chains_realign:
	.cfi_startproc
	pushq	%rbx
	.cfi_adjust_cfa_offset 8
	.cfi_rel_offset rbx, 0
	leaq	16(%rsp), %rbx
	.cfi_def_cfa rbx, 0
	andq	$-64, %rsp
	subq	$32, %rsp
	movq	$0, (%rsp)
	movslq	64(%rdi), %rcx
	leal	1(%rcx), %edx
	movl	%edx, 64(%rdi)
	call	*(%rdi,%rcx,8)
	addl	$0, %eax
	leaq	-16(%rbx), %rsp
	.cfi_def_cfa rsp, 16
	popq	%rbx
	.cfi_adjust_cfa_offset -8
	.cfi_restore rbx
	ret
	.cfi_endproc
	.size	chains_realign, .-chains_realign

/* int chains_badrow(struct chains_ctx *ctx): a deliberately WRONG unwind
 * description (DWARF and SFrame alike): the CFI says the frame is 16 bytes
 * when it is 24, so the slot taken for the return address holds the
 * address of chains_badrow_data (not code).  A walker must stop here (the
 * "return address" follows no call), not report a frame. */
	.globl	chains_badrow
	.type	chains_badrow, @function
	.p2align 4
chains_badrow:
	.cfi_startproc
	subq	$24, %rsp
	.cfi_adjust_cfa_offset 16	/* wrong on purpose: 24 */
	leaq	chains_badrow_data(%rip), %rax
	movq	%rax, (%rsp)
	movq	%rax, 8(%rsp)
	movq	%rax, 16(%rsp)
	movslq	64(%rdi), %rcx
	leal	1(%rcx), %edx
	movl	%edx, 64(%rdi)
	call	*(%rdi,%rcx,8)
	addq	$24, %rsp
	.cfi_adjust_cfa_offset -16
	ret
	.cfi_endproc
	.size	chains_badrow, .-chains_badrow

	.data
	.p2align 4
chains_badrow_data:
	.quad	0, 0
	.text

/* Set EFLAGS.TF: the CPU traps (SIGTRAP) after each instruction from the
 * one after this function's ret. */
	.globl	chains_tf_on
	.type	chains_tf_on, @function
	.p2align 4
chains_tf_on:
	.cfi_startproc
	pushfq
	.cfi_adjust_cfa_offset 8
	orq	$0x100, (%rsp)
	popfq
	.cfi_adjust_cfa_offset -8
	ret
	.cfi_endproc
	.size	chains_tf_on, .-chains_tf_on

/* Clear EFLAGS.TF (the SIGTRAP handler also clears it when it sees this
 * function's first instruction). */
	.globl	chains_tf_off
	.type	chains_tf_off, @function
	.p2align 4
chains_tf_off:
	.cfi_startproc
	pushfq
	.cfi_adjust_cfa_offset 8
	andq	$-0x101, (%rsp)
	popfq
	.cfi_adjust_cfa_offset -8
	ret
	.cfi_endproc
	.size	chains_tf_off, .-chains_tf_off

	.section .note.GNU-stack,"",@progbits
