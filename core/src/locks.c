/*
 * locks.c - spinlocks with statistics for the concurrent mode (locks.h).
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "swaplab/locks.h"
#include "swaplab/swap_slots.h"

_Thread_local sl_lockstat *sl_tl_lockstat SL_TLS_IE;
_Thread_local sl_dev_stats *sl_tl_devstats SL_TLS_IE;

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

void sli_spin_lock_slow(sl_spinlock *l, sl_lockstat *s)
{
	uint64_t t0 = now_ns();

	do {
		while (atomic_load_explicit(&l->v, memory_order_relaxed))
			cpu_relax();
	} while (atomic_exchange_explicit(&l->v, 1, memory_order_acquire));
	if (s) {
		s->contended++;
		s->wait_ns += now_ns() - t0;
	}
}

int sli_spin_trylock(sl_spinlock *l, int cls)
{
	sl_lockstat *s = sl_tl_lockstat;

	if (atomic_load_explicit(&l->v, memory_order_relaxed) ||
	    atomic_exchange_explicit(&l->v, 1, memory_order_acquire)) {
		if (s)
			s[cls].trylock_failed++;
		return 0;
	}
	if (s)
		s[cls].acquisitions++;
	return 1;
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
	sli_device_pick_mode(d); /* the policy's concurrent build, once */
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
