/*
 * swap_slots.c - model of mm/swap_slots.c (4.11 .. 6.14): see
 * swaplab/swap_slots.h. Kernel functions modelled: folio_alloc_swap (the
 * order-0 part), refill_swap_slots_cache, free_swap_slot,
 * check_cache_active, drain_slots_cache_cpu.
 */
#include <stdlib.h>
#include "swaplab/swap_slots.h"
#include "swaplab/cluster.h"

#define ACTIVATE_PER_CPU (5 * SL_SWAP_SLOTS_CACHE_SIZE)
#define DEACTIVATE_PER_CPU (2 * SL_SWAP_SLOTS_CACHE_SIZE)

int sl_swap_slots_init(sl_swap_slots *ss, sl_device *d, int free_cache, sl_get_swap_pages_fn get,
		       sl_release_slot_fn release)
{
	ss->cpu = calloc((size_t)d->nr_cpus, sizeof(*ss->cpu));
	ss->active = 0;
	ss->free_cache = free_cache;
	ss->online_cpus = d->nr_cpus;
	ss->get = get;
	ss->release = release;
	return ss->cpu ? 0 : -1;
}

void sl_swap_slots_fini(sl_swap_slots *ss)
{
	free(ss->cpu);
	ss->cpu = NULL;
}

/* drain_slots_cache_cpu(): reserved slots and pending frees go back. */
static void drain_slots_cache_cpu(sl_swap_slots *ss, sl_device *d, sl_swap_slots_cache *c)
{
	for (int i = 0; i < c->nr; i++)
		ss->release(d, c->slots[c->cur + i]);
	c->nr = c->cur = 0;
	for (int i = 0; i < c->n_ret; i++)
		ss->release(d, c->slots_ret[i]);
	c->n_ret = 0;
}

/* check_cache_active(): hysteresis on free swap per online CPU. */
static int check_cache_active(sl_swap_slots *ss, sl_device *d)
{
	uint64_t free_pages = d->pages - d->inuse_pages;

	if (!ss->active) {
		if (free_pages > (uint64_t)ss->online_cpus * ACTIVATE_PER_CPU)
			ss->active = 1;
		return ss->active;
	}
	if (free_pages < (uint64_t)ss->online_cpus * DEACTIVATE_PER_CPU) {
		ss->active = 0;
		for (int c = 0; c < d->nr_cpus; c++)
			drain_slots_cache_cpu(ss, d, &ss->cpu[c]);
	}
	return ss->active;
}

uint64_t sl_swap_slots_alloc(sl_swap_slots *ss, sl_device *d, int cpu)
{
	sl_swap_slots_cache *c = &ss->cpu[cpu];
	uint64_t off;

	if (check_cache_active(ss, d)) {
		if (!c->nr) {
			/* refill_swap_slots_cache() */
			c->cur = 0;
			c->nr = ss->get(d, cpu, SL_SWAP_SLOTS_CACHE_SIZE, c->slots);
		}
		if (c->nr) {
			off = c->slots[c->cur++];
			c->nr--;
			sli_take_reserved(d, off);
			return off;
		}
		return 0;
	}
	/* cache inactive: one slot straight from the allocator */
	if (ss->get(d, cpu, 1, &off) != 1)
		return 0;
	sli_take_reserved(d, off);
	return off;
}

void sl_swap_slots_free(sl_swap_slots *ss, sl_device *d, int cpu, uint64_t off)
{
	sl_swap_slots_cache *c = &ss->cpu[cpu];

	if (!ss->free_cache || !ss->active) {
		ss->release(d, off);
		return;
	}
	if (c->n_ret == SL_SWAP_SLOTS_CACHE_SIZE) {
		/* swapcache_free_entries(): one device, push order */
		for (int i = 0; i < c->n_ret; i++)
			ss->release(d, c->slots_ret[i]);
		c->n_ret = 0;
	}
	c->slots_ret[c->n_ret++] = off;
}

void sl_swap_slots_drain(sl_swap_slots *ss, sl_device *d)
{
	for (int c = 0; c < d->nr_cpus; c++)
		drain_slots_cache_cpu(ss, d, &ss->cpu[c]);
}

uint64_t sl_swap_slots_held(const sl_swap_slots *ss, const sl_device *d)
{
	uint64_t n = 0;
	for (int c = 0; c < d->nr_cpus; c++)
		n += (uint64_t)ss->cpu[c].nr + (uint64_t)ss->cpu[c].n_ret;
	return n;
}
