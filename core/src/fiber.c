/*
 * fiber.c - cooperative fibers on ucontext (fiber.h), with the sanitizers'
 * fiber annotations so that the ASan+UBSan and TSan builds follow the
 * stack switches.
 */
#include <stdint.h>
#include <stdlib.h>
#include <ucontext.h>
#include "swaplab/fiber.h"

#if defined(__SANITIZE_ADDRESS__)
#define SL_FIBER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SL_FIBER_ASAN 1
#endif
#endif
#if defined(__SANITIZE_THREAD__)
#define SL_FIBER_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define SL_FIBER_TSAN 1
#endif
#endif

#ifdef SL_FIBER_ASAN
void __sanitizer_start_switch_fiber(void **fake_stack_save, const void *bottom, size_t size);
void __sanitizer_finish_switch_fiber(void *fake_stack_save, const void **bottom_old,
				     size_t *size_old);
#endif
#ifdef SL_FIBER_TSAN
void *__tsan_get_current_fiber(void);
void *__tsan_create_fiber(unsigned flags);
void __tsan_destroy_fiber(void *fiber);
void __tsan_switch_to_fiber(void *fiber, unsigned flags);
#endif

struct sl_fiber {
	ucontext_t uc;
	void (*fn)(void *);
	void *arg;
	void *stack;               /* NULL: the thread's own context */
	size_t size;
	const void *bottom;        /* the stack's lowest address, for ASan */
	void *fake;                /* ASan's fake stack while suspended */
	void *tsan;                /* TSan's fiber */
	int started;               /* switched to once (the main context: always) */
};

/* makecontext() passes int arguments only: the fiber starting on this
 * thread is handed over here. */
static _Thread_local sl_fiber *starting;
/* The context a new fiber was first switched to from (ASan needs its
 * stack's bounds to switch back). */
static _Thread_local sl_fiber *starter;

static void trampoline(void)
{
	sl_fiber *f = starting;

#ifdef SL_FIBER_ASAN
	__sanitizer_finish_switch_fiber(NULL, &starter->bottom, &starter->size);
#endif
	f->fn(f->arg);
	abort(); /* a fiber never returns */
}

sl_fiber *sl_fiber_main(void)
{
	sl_fiber *f = calloc(1, sizeof(*f));

	if (!f)
		return NULL;
	f->started = 1;
#ifdef SL_FIBER_TSAN
	f->tsan = __tsan_get_current_fiber();
#endif
	return f;
}

/* getcontext() in a frame of its own: makecontext() replaces what it saved
 * but the signal mask, so it never returns twice into the caller. */
static __attribute__((noinline)) int save_context(ucontext_t *uc) { return getcontext(uc); }

sl_fiber *sl_fiber_create(void (*fn)(void *), void *arg, size_t stack_bytes)
{
	sl_fiber *f = calloc(1, sizeof(*f));

	if (!f)
		return NULL;
	f->stack = malloc(stack_bytes);
	if (!f->stack || save_context(&f->uc)) {
		free(f->stack);
		free(f);
		return NULL;
	}
	f->fn = fn;
	f->arg = arg;
	f->size = stack_bytes;
	f->bottom = f->stack;
	f->uc.uc_stack.ss_sp = f->stack;
	f->uc.uc_stack.ss_size = stack_bytes;
	f->uc.uc_link = NULL;
	makecontext(&f->uc, trampoline, 0);
#ifdef SL_FIBER_TSAN
	f->tsan = __tsan_create_fiber(0);
#endif
	return f;
}

void sl_fiber_switch(sl_fiber *from, sl_fiber *to)
{
	if (!to->started) {
		/* first entry into `to`: the trampoline picks these up */
		to->started = 1;
		starting = to;
		starter = from;
	}
#ifdef SL_FIBER_ASAN
	__sanitizer_start_switch_fiber(&from->fake, to->bottom, to->size);
#endif
#ifdef SL_FIBER_TSAN
	__tsan_switch_to_fiber(to->tsan, 0);
#endif
	swapcontext(&from->uc, &to->uc);
#ifdef SL_FIBER_ASAN
	__sanitizer_finish_switch_fiber(from->fake, NULL, NULL);
#endif
}

void sl_fiber_destroy(sl_fiber *f)
{
	if (!f)
		return;
#ifdef SL_FIBER_TSAN
	if (f->stack && f->tsan)
		__tsan_destroy_fiber(f->tsan);
#endif
	free(f->stack);
	free(f);
}
