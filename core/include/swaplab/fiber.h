/*
 * swaplab/fiber.h - deterministic cooperative fibers (fiber.c): the window
 * runner of the reclaim workloads (reclaim.c, sl_rrun_window) runs each
 * CPU's operations on a fiber of its own and switches between them at the
 * points where the kernel lets another CPU act (docs/reclaim.md "Two
 * processes at once"). One thread only; nothing runs in parallel: a switch
 * happens only where the code asks for it, so a run is deterministic.
 */
#ifndef SWAPLAB_FIBER_H
#define SWAPLAB_FIBER_H

#include <stddef.h>

typedef struct sl_fiber sl_fiber;

/* The calling thread's own context, to switch back to; NULL on failure. */
sl_fiber *sl_fiber_main(void);
/* A fiber that runs fn(arg) on a stack of its own when first switched to.
 * fn must never return: it switches away for good instead. NULL on
 * failure. */
sl_fiber *sl_fiber_create(void (*fn)(void *), void *arg, size_t stack_bytes);
/* Suspends `from` (the running context) and resumes `to`. */
void sl_fiber_switch(sl_fiber *from, sl_fiber *to);
/* Frees a fiber that is not running (or the main context). */
void sl_fiber_destroy(sl_fiber *f);

#endif
