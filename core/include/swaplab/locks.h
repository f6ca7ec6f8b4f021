/*
 * swaplab/locks.h - the concurrent mode: real locks with the kernel's
 * classes and nesting, and per-thread lock statistics.
 *
 * A device runs deterministic and lock-free unless sl_device_concurrent()
 * gave it locks (d->lk); every lock call below is then a no-op, so the
 * deterministic results do not depend on this file. The 6.14+ policies
 * and device.c's put go further: they are built twice, with the mode a
 * compile-time constant (the _m forms below), and the device takes the
 * build of its mode once (sli_device_pick_mode(): the policy's table at
 * creation, its concurrent table in sl_device_concurrent()), so the
 * deterministic build holds no lock call, no test of d->lk and no locked
 * instruction, and no operation tests the mode to pick one.
 *
 * Classes (the kernel's):
 *   DEVICE   si->lock. <= 6.13: held across a whole allocation (cluster
 *            locks nest inside it). 6.14+: list membership only, taken
 *            inside a cluster lock or to isolate a cluster.
 *   CLUSTER  ci->lock, one per cluster: the cluster's slots, count, flags.
 *   LOCAL    the per-CPU local lock around folio_alloc_swap() (6.14+):
 *            one thread per CPU here, so it never contends; counted.
 *   GLOBAL   si->global_cluster_lock: a rotational device's cursor (6.14+).
 *   SLOTS    the per-CPU slot-cache locks (<= 6.14: alloc_lock, free_lock):
 *            the device's, lent to its slot caches (swap_slots.h).
 * Nesting: SLOTS -> DEVICE -> CLUSTER (<= 6.13); LOCAL -> GLOBAL -> CLUSTER
 * -> DEVICE (6.14+), where taking a cluster while holding DEVICE is only
 * ever a trylock (isolate_lock_cluster()).
 * Spinlocks are test-and-test-and-set; a first attempt that fails counts as
 * contended and its spinning time as wait.
 *
 * Under SL_DEBUG (debug.h) the lock calls of the deterministic mode are no
 * longer no-ops: they record on the device which locks are held
 * (sl_dbg_locks), assert that a lock is not taken twice nor released when
 * not held, and so let the lockdep_assert_held() checks of debug.h work
 * without threads. Without SL_DEBUG nothing of it exists.
 */
#ifndef SWAPLAB_LOCKS_H
#define SWAPLAB_LOCKS_H

#include <stdatomic.h>
#include "types.h"
#include "debug.h"

enum { SL_LK_DEVICE, SL_LK_CLUSTER, SL_LK_LOCAL, SL_LK_GLOBAL, SL_LK_SLOTS, SL_NR_LOCK_CLASSES };

typedef struct sl_lockstat {
	uint64_t acquisitions;
	uint64_t contended;        /* first attempt found it held */
	uint64_t wait_ns;          /* time spent spinning */
	uint64_t trylock_failed;   /* skipped while isolating */
} sl_lockstat;

/* One lock a cache line: locks of different CPUs or clusters never share
 * one (in the kernel each sits in its own per-CPU or per-cluster data). */
typedef struct sl_spinlock {
	_Alignas(SL_CACHELINE) atomic_int v;
} sl_spinlock;

typedef struct sl_locks {
	sl_spinlock dev, global;
	sl_spinlock *ci;           /* [nr_clusters] */
	sl_spinlock *local;        /* [nr_cpus] */
	sl_spinlock *slots;        /* [nr_cpus] */
} sl_locks;

/* This thread's statistics ([SL_NR_LOCK_CLASSES]) and device counters;
 * NULL: none (lock acquisitions go uncounted) and the device's own counters
 * (single-threaded use). Initial-exec TLS: one %fs-relative load, not a
 * __tls_get_addr call on every lock, also when the core is a dlopen()ed
 * Python extension (16 bytes of glibc's surplus static TLS). */
#if defined(__GNUC__) || defined(__clang__)
#define SL_TLS_IE __attribute__((tls_model("initial-exec")))
#else
#define SL_TLS_IE
#endif
extern _Thread_local sl_lockstat *sl_tl_lockstat SL_TLS_IE;
extern _Thread_local sl_dev_stats *sl_tl_devstats SL_TLS_IE;

/* Gives the device its locks: from now on it may be used by one thread
 * per CPU at once. Returns 0 or -1 (out of memory). */
int sl_device_concurrent(sl_device *d);

/* Gives the device the builds of its mode (d->lk): the policy's
 * concurrent table (policy.h) once it has locks, and the put path
 * (device.c). At creation and in sl_device_concurrent(). */
void sli_device_pick_mode(sl_device *d);

/* The contended path: spins (test-and-test-and-set), counts the wait. */
void sli_spin_lock_slow(sl_spinlock *l, sl_lockstat *s);
int sli_spin_trylock(sl_spinlock *l, int cls);

/* Uncontended, as cheap as the kernel's spin_lock(): one locked exchange
 * and a counter in this thread's own statistics, inline. */
static inline void sli_spin_lock(sl_spinlock *l, int cls)
{
	sl_lockstat *s = sl_tl_lockstat;

	if (s) {
		s += cls;
		s->acquisitions++;
	}
	if (__builtin_expect(!atomic_exchange_explicit(&l->v, 1, memory_order_acquire), 1))
		return;
	sli_spin_lock_slow(l, s);
}

static inline void sli_spin_unlock(sl_spinlock *l)
{
	atomic_store_explicit(&l->v, 0, memory_order_release);
}

/* The _m forms take the mode as an argument, `conc`: a compile-time
 * constant where a hot path is built twice, once for each mode (lockrework
 * body), so the deterministic build holds no test of d->lk, no lock call
 * and no locked instruction. conc must equal (d->lk != NULL). */

/* Both builds of a body M(conc): the deterministic one unless threads
 * share the device, picked at each call (lockrework.c's lr_* interface,
 * for the tests and callers off the hot path). */
#define SL_BY_MODE(d, M) ((d)->lk ? M(1) : M(0))

/* The counters to bump: this thread's in concurrent runs. */
static inline __attribute__((always_inline)) sl_dev_stats *sli_stats_m(sl_device *d, int conc)
{
	if (!conc)
		return &d->st;
	return sl_tl_devstats ? sl_tl_devstats : &d->st;
}

static inline sl_dev_stats *sli_stats(sl_device *d)
{
	return sli_stats_m(d, d->lk != NULL);
}

/* inuse_pages += delta: atomic only when threads share the device (a plain
 * load and store otherwise, no locked instruction on the hot path). */
static inline __attribute__((always_inline)) void sli_inuse_add_m(sl_device *d, int64_t delta, int conc)
{
	if (conc)
		atomic_fetch_add_explicit(&d->inuse_pages, (uint64_t)delta, memory_order_relaxed);
	else
		atomic_store_explicit(&d->inuse_pages,
				      atomic_load_explicit(&d->inuse_pages, memory_order_relaxed) +
					      (uint64_t)delta,
				      memory_order_relaxed);
}

static inline void sli_inuse_add(sl_device *d, int64_t delta)
{
	sli_inuse_add_m(d, delta, d->lk != NULL);
}

#ifdef SL_DEBUG
/* The deterministic mode's record of held locks: the members of sl_locks,
 * one byte each (single-threaded, so a byte says "held by us"). */
typedef struct sl_dbg_locks {
	uint8_t dev, global;
	uint8_t *ci;               /* [nr_clusters] */
	uint8_t *local;            /* [nr_cpus] */
	uint8_t *slots;            /* [nr_cpus] */
} sl_dbg_locks;

/* Gives a new device its record (sl_device_create); 0 or -1. */
int sli_dbg_locks_init(sl_device *d);
void sli_dbg_locks_fini(sl_device *d);

static inline void sli_dbg_lock(uint8_t *held)
{
	SL_ASSERT(!*held); /* taken twice: a deadlock on a real lock */
	*held = 1;
}
static inline void sli_dbg_unlock(uint8_t *held)
{
	SL_ASSERT(*held); /* released but not held */
	*held = 0;
}
#define SLI_DBG_LOCK(d, expr) sli_dbg_lock(&(d)->dbg->expr)
#define SLI_DBG_UNLOCK(d, expr) sli_dbg_unlock(&(d)->dbg->expr)
#else
#define SLI_DBG_LOCK(d, expr) ((void)0)
#define SLI_DBG_UNLOCK(d, expr) ((void)0)
#endif
/* A lock call of either mode: conc, the real lock; otherwise nothing (under
 * SL_DEBUG the held-ness record). */
#define SL_LOCK_M(conc, d, expr, cls) do { if (conc) sli_spin_lock(&(d)->lk->expr, cls); \
					   else SLI_DBG_LOCK(d, expr); } while (0)
#define SL_UNLOCK_M(conc, d, expr) do { if (conc) sli_spin_unlock(&(d)->lk->expr); \
					else SLI_DBG_UNLOCK(d, expr); } while (0)
#define SL_LOCK_IF(d, expr, cls) SL_LOCK_M((d)->lk != NULL, d, expr, cls)
#define SL_UNLOCK_IF(d, expr) SL_UNLOCK_M((d)->lk != NULL, d, expr)

#define sl_dev_lock(d) SL_LOCK_IF(d, dev, SL_LK_DEVICE)
#define sl_dev_unlock(d) SL_UNLOCK_IF(d, dev)
#define sl_ci_lock(d, c) SL_LOCK_IF(d, ci[c], SL_LK_CLUSTER)
#define sl_ci_unlock(d, c) SL_UNLOCK_IF(d, ci[c])
#define sl_local_lock(d, cpu) SL_LOCK_IF(d, local[cpu], SL_LK_LOCAL)
#define sl_local_unlock(d, cpu) SL_UNLOCK_IF(d, local[cpu])
#define sl_global_lock(d) SL_LOCK_IF(d, global, SL_LK_GLOBAL)
#define sl_global_unlock(d) SL_UNLOCK_IF(d, global)
#define sl_dev_lock_m(conc, d) SL_LOCK_M(conc, d, dev, SL_LK_DEVICE)
#define sl_dev_unlock_m(conc, d) SL_UNLOCK_M(conc, d, dev)
#define sl_ci_lock_m(conc, d, c) SL_LOCK_M(conc, d, ci[c], SL_LK_CLUSTER)
#define sl_ci_unlock_m(conc, d, c) SL_UNLOCK_M(conc, d, ci[c])
#define sl_local_lock_m(conc, d, cpu) SL_LOCK_M(conc, d, local[cpu], SL_LK_LOCAL)
#define sl_local_unlock_m(conc, d, cpu) SL_UNLOCK_M(conc, d, local[cpu])
#define sl_global_lock_m(conc, d) SL_LOCK_M(conc, d, global, SL_LK_GLOBAL)
#define sl_global_unlock_m(conc, d) SL_UNLOCK_M(conc, d, global)

/* trylock of a cluster: always succeeds without locks (under SL_DEBUG a
 * cluster this thread holds would make it fail: asserted not to happen). */
static inline int sl_ci_trylock_m(int conc, sl_device *d, uint32_t c)
{
	if (conc)
		return sli_spin_trylock(&d->lk->ci[c], SL_LK_CLUSTER);
	SLI_DBG_LOCK(d, ci[c]);
	return 1;
}

static inline int sl_ci_trylock(sl_device *d, uint32_t c)
{
	return sl_ci_trylock_m(d->lk != NULL, d, c);
}

#endif
