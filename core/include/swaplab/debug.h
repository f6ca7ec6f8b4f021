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
 * sl_assert_dev_locked(d), sl_assert_ci_locked(d, c) and
 * sl_assert_global_locked(d) are the model's lockdep_assert_held():
 *  - in the concurrent mode (d->lk set) the lock must be held - by some
 *    thread, as spin_is_locked() tells, since the spinlocks keep no owner;
 *  - in the deterministic mode there are no locks, but under SL_DEBUG every
 *    lock call records held-ness on the device (locks.h: sl_dbg_locks), so
 *    the same contracts are checked on every single-threaded test. Only
 *    the policies that model their generation's locking (SL_POL_CONCURRENT)
 *    are held to them there; the others take few or none of the locks.
 * Without SL_DEBUG they compile to nothing, like SL_ASSERT.
 */
#ifndef SWAPLAB_DEBUG_H
#define SWAPLAB_DEBUG_H

#ifdef SL_DEBUG
void sli_assert_fail(const char *cond, const char *file, int line, const char *func)
	__attribute__((noreturn));
#define SL_ASSERT(cond) ((cond) ? (void)0 : sli_assert_fail(#cond, __FILE__, __LINE__, __func__))
#define SL_DEBUG_ON 1
#else
#define SL_ASSERT(cond) ((void)sizeof(!(cond))) /* not evaluated */
#define SL_DEBUG_ON 0
#endif

#include "locks.h"
#include "policy.h"

#ifdef SL_DEBUG
/* lockdep_assert_held(): the lock named by `expr` (a member of sl_locks and
 * of sl_dbg_locks alike: dev, global, ci[c], ...) is held. */
#define sli_assert_held(d, expr)                                                          \
	(((d)->lk ? atomic_load_explicit(&(d)->lk->expr.v, memory_order_relaxed) != 0        \
		  : ((d)->dbg->expr || !((d)->pol->props & SL_POL_CONCURRENT)))                \
		 ? (void)0                                                                     \
		 : sli_assert_fail("lockdep_assert_held(" #expr ")", __FILE__, __LINE__, __func__))
#else
#define sli_assert_held(d, expr) ((void)0)
#endif
#define sl_assert_dev_locked(d) sli_assert_held(d, dev)
#define sl_assert_ci_locked(d, c) sli_assert_held(d, ci[c])
#define sl_assert_global_locked(d) sli_assert_held(d, global)

#endif
