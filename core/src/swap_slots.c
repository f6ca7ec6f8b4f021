/*
 * swap_slots.c - model of mm/swap_slots.c (4.11 .. 6.14): the per-CPU slot
 * caches as a layer of their own (swaplab/swap_slots.h). They hold swap
 * entries and reach their owner, a device or a set of devices, only
 * through its get / release callbacks. Kernel functions modelled:
 * folio_alloc_swap (the order-0 part), refill_swap_slots_cache,
 * free_swap_slot, check_cache_active, drain_slots_cache_cpu,
 * drain_swap_slots_cache.
 */
#include <stdlib.h>
#include "swaplab/swap_slots.h"

#define ACTIVATE_PER_CPU (5 * SL_SWAP_SLOTS_CACHE_SIZE)
#define DEACTIVATE_PER_CPU (2 * SL_SWAP_SLOTS_CACHE_SIZE)

int sl_swap_slots_init(sl_swap_slots *ss, int nr_cpus, int free_cache, void *owner,
		       sl_slots_get_fn get, sl_slots_release_fn release)
{
	ss->cpu = calloc((size_t)nr_cpus, sizeof(*ss->cpu));
	ss->lock = NULL;
	ss->active = 0;
	ss->free_cache = free_cache;
	ss->nr_cpus = nr_cpus;
	ss->owner = owner;
	ss->get = get;
	ss->release = release;
	return ss->cpu ? 0 : -1;
}

void sl_swap_slots_fini(sl_swap_slots *ss)
{
	free(ss->cpu);
	ss->cpu = NULL;
	ss->lock = NULL;
}

static void slots_lock(sl_swap_slots *ss, int cpu)
{
	if (ss->lock)
		sli_spin_lock(&ss->lock[cpu], SL_LK_SLOTS);
}

static void slots_unlock(sl_swap_slots *ss, int cpu)
{
	if (ss->lock)
		sli_spin_unlock(&ss->lock[cpu]);
}

/* swapcache_free_entries() through the owner; nothing to do for none. */
static void release(sl_swap_slots *ss, const uint64_t *e, int n)
{
	if (n)
		ss->release(ss->owner, e, n);
}

/* drain_slots_cache_cpu(): reserved entries and pending frees go back. */
static void drain_slots_cache_cpu(sl_swap_slots *ss, int cpu)
{
	sl_swap_slots_cache *c = &ss->cpu[cpu];

	slots_lock(ss, cpu);
	release(ss, c->slots + c->cur, c->nr);
	c->nr = c->cur = 0;
	release(ss, c->slots_ret, c->n_ret);
	c->n_ret = 0;
	slots_unlock(ss, cpu);
}

void sl_swap_slots_drain(sl_swap_slots *ss)
{
	for (int cpu = 0; cpu < ss->nr_cpus; cpu++)
		drain_slots_cache_cpu(ss, cpu);
}

/* check_cache_active(): hysteresis on free swap per online CPU. */
static int check_cache_active(sl_swap_slots *ss, uint64_t nr_swap_pages)
{
	if (!ss->active) {
		if (nr_swap_pages > (uint64_t)ss->nr_cpus * ACTIVATE_PER_CPU)
			ss->active = 1;
		return ss->active;
	}
	if (nr_swap_pages < (uint64_t)ss->nr_cpus * DEACTIVATE_PER_CPU) {
		ss->active = 0;
		sl_swap_slots_drain(ss);
	}
	return ss->active;
}

/* refill_swap_slots_cache(): an empty cache takes a batch from the owner. */
static void refill_swap_slots_cache(sl_swap_slots *ss, sl_swap_slots_cache *c, int cpu)
{
	c->cur = 0;
	c->nr = ss->get(ss->owner, cpu, SL_SWAP_SLOTS_CACHE_SIZE, c->slots);
}

/* folio_alloc_swap() order 0 - <= 6.14: the cache, or one entry direct. */
uint64_t sl_swap_slots_alloc(sl_swap_slots *ss, int cpu, uint64_t nr_swap_pages)
{
	sl_swap_slots_cache *c = &ss->cpu[cpu];
	uint64_t e = 0;

	if (check_cache_active(ss, nr_swap_pages)) {
		slots_lock(ss, cpu);
		if (!ss->active) {
			/* deactivated (and drained) meanwhile: as the kernel, go direct */
			slots_unlock(ss, cpu);
			goto direct;
		}
		if (!c->nr)
			refill_swap_slots_cache(ss, c, cpu);
		if (c->nr) {
			e = c->slots[c->cur++];
			c->nr--;
		}
		slots_unlock(ss, cpu);
		return e;
	}
direct:
	/* cache inactive: one entry straight from the owner */
	if (ss->get(ss->owner, cpu, 1, &e) != 1)
		e = 0;
	return e;
}

/* free_swap_slot() - <= 6.13. */
void sl_swap_slots_free(sl_swap_slots *ss, int cpu, uint64_t e)
{
	sl_swap_slots_cache *c = &ss->cpu[cpu];

	if (!ss->free_cache || !ss->active) {
		release(ss, &e, 1);
		return;
	}
	slots_lock(ss, cpu);
	if (!ss->active) {
		/* free_swap_slot() rechecks under free_lock: direct free */
		slots_unlock(ss, cpu);
		release(ss, &e, 1);
		return;
	}
	if (c->n_ret == SL_SWAP_SLOTS_CACHE_SIZE) {
		/* swapcache_free_entries() of the full batch, push order */
		release(ss, c->slots_ret, c->n_ret);
		c->n_ret = 0;
	}
	c->slots_ret[c->n_ret++] = e;
	slots_unlock(ss, cpu);
}
