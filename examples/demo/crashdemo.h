/* Interface of libcrashdemo.so (examples/demo/libcrashdemo.c). */
#ifndef CRASHDEMO_H
#define CRASHDEMO_H

enum crash_kind {
	CRASH_SEGV,
	CRASH_ABORT,
	CRASH_FPE,
	CRASH_ILL,
	CRASH_BUS,
	CRASH_STACK_SMASH,
	CRASH_OVERFLOW,
};

/* Calls through a static function of the library to the faulting one. */
void crashdemo_run(int how);

#endif
