/*
 * locks.c - spinlocks with statistics for the concurrent mode (locks.h).
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "swaplab/locks.h"
#include "swaplab/swap_slots.h"

_Thread_local sl_lockstat *sl_tl_lockstat;
_Thread_local sl_dev_stats *sl_tl_devstats;

/* a thread that set no statistics of its own counts here, still per thread */
static _Thread_local sl_lockstat fallback_stats[SL_NR_LOCK_CLASSES];

static sl_lockstat *stats(int cls)
{
	return sl_tl_lockstat ? &sl_tl_lockstat[cls] : &fallback_stats[cls];
}

static uint64_t now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#endif
}

void sli_spin_lock(sl_spinlock *l, int cls)
{
	sl_lockstat *s = stats(cls);

	s->acquisitions++;
	if (!atomic_exchange_explicit(&l->v, 1, memory_order_acquire))
		return;
	uint64_t t0 = now_ns();
	s->contended++;
	do {
		while (atomic_load_explicit(&l->v, memory_order_relaxed))
			cpu_relax();
	} while (atomic_exchange_explicit(&l->v, 1, memory_order_acquire));
	s->wait_ns += now_ns() - t0;
}

int sli_spin_trylock(sl_spinlock *l, int cls)
{
	sl_lockstat *s = stats(cls);

	if (atomic_load_explicit(&l->v, memory_order_relaxed) ||
	    atomic_exchange_explicit(&l->v, 1, memory_order_acquire)) {
		s->trylock_failed++;
		return 0;
	}
	s->acquisitions++;
	return 1;
}

void sli_spin_unlock(sl_spinlock *l)
{
	atomic_store_explicit(&l->v, 0, memory_order_release);
}

static void *zalloc_lines(size_t n, size_t size)
{
	void *p = aligned_alloc(SL_CACHELINE, n * size);
	if (p)
		memset(p, 0, n * size);
	return p;
}

int sl_device_concurrent(sl_device *d)
{
	sl_locks *lk = zalloc_lines(1, sizeof(*lk));

	if (!lk)
		return -1;
	lk->ci = zalloc_lines(d->nr_clusters, sizeof(sl_spinlock));
	lk->local = zalloc_lines((size_t)d->nr_cpus, sizeof(sl_spinlock));
	lk->slots = zalloc_lines((size_t)d->nr_cpus, sizeof(sl_spinlock));
	if (!lk->ci || !lk->local || !lk->slots) {
		free(lk->ci);
		free(lk->local);
		free(lk->slots);
		free(lk);
		return -1;
	}
	d->lk = lk;
	if (d->slots)
		d->slots->lock = lk->slots; /* lent to its slot caches */
	return 0;
}

#ifdef SL_DEBUG
int sli_dbg_locks_init(sl_device *d)
{
	sl_dbg_locks *g = calloc(1, sizeof(*g));

	d->dbg = g;
	if (!g)
		return -1;
	g->ci = calloc(d->nr_clusters, 1);
	g->local = calloc((size_t)d->nr_cpus, 1);
	g->slots = calloc((size_t)d->nr_cpus, 1);
	return g->ci && g->local && g->slots ? 0 : -1;
}

void sli_dbg_locks_fini(sl_device *d)
{
	if (!d->dbg)
		return;
	free(d->dbg->ci);
	free(d->dbg->local);
	free(d->dbg->slots);
	free(d->dbg);
	d->dbg = NULL;
}
#endif
