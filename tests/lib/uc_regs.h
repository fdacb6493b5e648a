/* A ucontext's PC, SP and FP, and its general registers, on each
 * architecture the walker supports: for tests that build everywhere. */
#ifndef SFB_UC_REGS_H
#define SFB_UC_REGS_H
#include <ucontext.h>

#if defined(__x86_64__)
#define UC_PC(uc) ((uc)->uc_mcontext.gregs[REG_RIP])
#define UC_SP(uc) ((uc)->uc_mcontext.gregs[REG_RSP])
#define UC_FP(uc) ((uc)->uc_mcontext.gregs[REG_RBP])
#define UC_NGREGS NGREG
#define UC_GREG(uc, i) ((uc)->uc_mcontext.gregs[i])
#define UC_GREG_IS_PC_SP_FP(i) ((i) == REG_RIP || (i) == REG_RSP || (i) == REG_RBP)
#elif defined(__aarch64__)
#define UC_PC(uc) ((uc)->uc_mcontext.pc)
#define UC_SP(uc) ((uc)->uc_mcontext.sp)
#define UC_FP(uc) ((uc)->uc_mcontext.regs[29])
#define UC_NGREGS 31 /* x0-x30; sp and pc apart */
#define UC_GREG(uc, i) ((uc)->uc_mcontext.regs[i])
#define UC_GREG_IS_PC_SP_FP(i) ((i) == 29)
#elif defined(__s390x__)
#define UC_PC(uc) ((uc)->uc_mcontext.psw.addr)
#define UC_SP(uc) ((uc)->uc_mcontext.gregs[15])
#define UC_FP(uc) ((uc)->uc_mcontext.gregs[11])
#define UC_NGREGS 16
#define UC_GREG(uc, i) ((uc)->uc_mcontext.gregs[i])
#define UC_GREG_IS_PC_SP_FP(i) ((i) == 15 || (i) == 11)
#endif
#endif
