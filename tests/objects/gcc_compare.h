/* A walk by sframebt and libgcc's _Unwind_Backtrace() from the same
 * place, lined up and compared: the ground truth of the object tests
 * (t_layouts, t_static), built in normal programs and in static ones
 * (-lgcc_eh), C and C++. */
#ifndef SFB_GCC_COMPARE_H
#define SFB_GCC_COMPARE_H
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "backtrace.h"
#include "gcc_trace.h"

#define NF 96
#define NO_MATCH (-NF)

struct walk {
	int n, stop, n_gcc;
	int from;  /* the index in gcc[] of our frame 0, or NO_MATCH */
	int first; /* the first frame compared: 1 for a walk from here, whose
		      frame 0 (in walk_now()) libgcc sees at another call */
	uintptr_t pc[NF], gcc[NF];
};

static void walk_now(const void *uc, struct walk *w)
{
	struct sframe_bt_frame f[NF];
	struct sframe_bt_status st;
	memset(w, 0, sizeof *w);
	w->n = sframe_backtrace_ex(uc, f, NF, 0, &st);
	w->stop = st.stop;
	for (int i = 0; i < w->n; i++)
		w->pc[i] = f[i].pc;
	struct gcc_trace g;
	gcc_trace(&g);
	for (int i = 0; i < g.n && w->n_gcc < NF; i++)
		w->gcc[w->n_gcc++] = g.ip[i];
	/* libgcc starts in this function (and, from a handler, crosses the
	 * handler and the signal trampoline): line its frames up with ours
	 * at our first frame, or, for a walk from here, our second (our
	 * first is this function's call of sframe_backtrace_ex()). */
	w->from = NO_MATCH;
	w->first = uc ? 0 : 1;
	for (int i = 0; i < w->n_gcc && w->from == NO_MATCH && w->first < w->n; i++)
		if (w->gcc[i] == w->pc[w->first])
			w->from = i - w->first;
}

/* Our frames are libgcc's (but the first of a walk from here). */
static bool walk_same(const struct walk *w)
{
	bool same = w->from != NO_MATCH && w->n_gcc - w->from == w->n;
	for (int i = w->first; same && i < w->n; i++)
		same = w->pc[i] == w->gcc[w->from + i];
	return same;
}

static void walk_print(const struct walk *w)
{
	for (int i = 0; i < w->n || (w->from != NO_MATCH && w->from + i < w->n_gcc); i++)
		printf("#   %2d sframebt %#lx libgcc %#lx\n", i,
		       i < w->n ? (unsigned long)w->pc[i] : 0ul,
		       w->from != NO_MATCH && w->from + i >= 0 && w->from + i < w->n_gcc
			       ? (unsigned long)w->gcc[w->from + i]
			       : 0ul);
	printf("#   stopped: %s\n", sframe_bt_stop_name(w->stop));
}

#endif
