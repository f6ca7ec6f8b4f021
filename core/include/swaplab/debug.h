/*
 * swaplab/debug.h - asserted contracts, as mm/swapfile.c states them with
 * VM_BUG_ON / VM_WARN_ON and lockdep_assert_held.
 *
 * With SL_DEBUG defined (the C tests build every file with it; the Python
 * package and `swaplab bench` do not), SL_ASSERT(cond) checks cond and, when
 * it is false, prints "file:line: func: assertion `cond' failed" and aborts.
 * Without SL_DEBUG it compiles to nothing, and its argument is not
 * evaluated: an assert must have no side effect.
 *
 * sl_assert_dev_locked(d) / sl_assert_ci_locked(d, c) are the model's
 * lockdep_assert_held(): in the concurrent mode (d->lk set) the lock must be
 * held - by some thread, as spin_is_locked() tells, since the spinlocks keep
 * no owner; in the deterministic mode there are no locks and they check
 * nothing.
 */
#ifndef SWAPLAB_DEBUG_H
#define SWAPLAB_DEBUG_H

#include "locks.h"

#ifdef SL_DEBUG
void sli_assert_fail(const char *cond, const char *file, int line, const char *func)
	__attribute__((noreturn));
#define SL_ASSERT(cond) ((cond) ? (void)0 : sli_assert_fail(#cond, __FILE__, __LINE__, __func__))
#define SL_DEBUG_ON 1
#else
#define SL_ASSERT(cond) ((void)sizeof(!(cond))) /* not evaluated */
#define SL_DEBUG_ON 0
#endif

/* lockdep_assert_held() on a spinlock of the concurrent mode (locks.h). */
#define sli_assert_spin_held(d, expr) \
	SL_ASSERT(!(d)->lk || atomic_load_explicit(&(d)->lk->expr.v, memory_order_relaxed))
#define sl_assert_dev_locked(d) sli_assert_spin_held(d, dev)
#define sl_assert_ci_locked(d, c) sli_assert_spin_held(d, ci[c])

#endif
