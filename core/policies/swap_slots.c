/*
 * swap_slots.c - model of mm/swap_slots.c (4.11 .. 6.14): see
 * swaplab/swap_slots.h. Kernel functions modelled: folio_alloc_swap (the
 * order-0 part), refill_swap_slots_cache, free_swap_slot,
 * check_cache_active, drain_slots_cache_cpu.
 */
#include <stdlib.h>
#include "swaplab/swaplab.h"
#include "swaplab/swap_slots.h"
#include "swaplab/cluster.h"
#include "swaplab/locks.h"

#define ACTIVATE_PER_CPU (5 * SL_SWAP_SLOTS_CACHE_SIZE)
#define DEACTIVATE_PER_CPU (2 * SL_SWAP_SLOTS_CACHE_SIZE)

int sl_swap_slots_init(sl_swap_slots *ss, sl_device *d, int free_cache, sl_get_swap_pages_fn get,
		       sl_release_slot_fn release)
{
	ss->cpu = calloc((size_t)d->nr_cpus, sizeof(*ss->cpu));
	ss->set = NULL;
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

/* Releases slots to the device: swapcache_free_entries(), si->lock held.
 * Above several devices: the entries device by device (a stable sort by
 * type), each through its policy's release. */
static void release_all(sl_swap_slots *ss, sl_device *d, const uint64_t *slots, int n)
{
	if (ss->set) {
		const struct sl_swapset *set = ss->set;
		for (int t = 0; t < set->nr; t++) {
			sl_dev_lock(set->dev[t]); /* swap_info_get_cont(): si->lock */
			for (int i = 0; i < n; i++)
				if (sl_entry_type(slots[i]) == t)
					set->dev[t]->pol->release(set->dev[t], sl_entry_off(slots[i]));
			sl_dev_unlock(set->dev[t]);
		}
		return;
	}
	sl_dev_lock(d);
	for (int i = 0; i < n; i++)
		ss->release(d, slots[i]);
	sl_dev_unlock(d);
}

/* get_swap_pages() of order 0 for the cache. */
static int get_slots(sl_swap_slots *ss, sl_device *d, int cpu, int n, uint64_t *out)
{
	if (ss->set)
		return sl_set_get_swap_pages(ss->set, cpu, n, out, 0);
	return ss->get(d, cpu, n, out);
}

/* drain_slots_cache_cpu(): reserved slots and pending frees go back. */
static void drain_slots_cache_cpu(sl_swap_slots *ss, sl_device *d, int cpu)
{
	sl_swap_slots_cache *c = &ss->cpu[cpu];

	sl_slots_lock(d, cpu);
	release_all(ss, d, c->slots + c->cur, c->nr);
	c->nr = c->cur = 0;
	release_all(ss, d, c->slots_ret, c->n_ret);
	c->n_ret = 0;
	sl_slots_unlock(d, cpu);
}

/* check_cache_active(): hysteresis on free swap per online CPU. */
static int check_cache_active(sl_swap_slots *ss, sl_device *d)
{
	uint64_t free_pages = sl_nr_swap_pages(d); /* every device */

	if (!ss->active) {
		if (free_pages > (uint64_t)ss->online_cpus * ACTIVATE_PER_CPU)
			ss->active = 1;
		return ss->active;
	}
	if (free_pages < (uint64_t)ss->online_cpus * DEACTIVATE_PER_CPU) {
		ss->active = 0;
		for (int c = 0; c < d->nr_cpus; c++)
			drain_slots_cache_cpu(ss, d, c);
	}
	return ss->active;
}

/* Hands a reserved slot to its folio, under the slot's cluster lock. */
static void take_reserved(sl_device *d, uint64_t off)
{
	uint32_t c = sli_cluster_of(off);

	sl_ci_lock(d, c);
	sli_take_reserved(d, off);
	sl_ci_unlock(d, c);
}

void sl_swap_slots_take_set(struct sl_swapset *set, uint64_t e)
{
	take_reserved(sl_set_dev(set, e), sl_entry_off(e));
}

/* folio_alloc_swap() order 0 - <= 6.14: the cache, or one slot direct. */
static uint64_t slots_alloc(sl_swap_slots *ss, sl_device *d, int cpu)
{
	sl_swap_slots_cache *c = &ss->cpu[cpu];
	uint64_t off = 0;

	if (check_cache_active(ss, d)) {
		sl_slots_lock(d, cpu);
		if (!ss->active) {
			/* deactivated (and drained) meanwhile: as the kernel, go direct */
			sl_slots_unlock(d, cpu);
			goto direct;
		}
		if (!c->nr) {
			/* refill_swap_slots_cache() */
			c->cur = 0;
			c->nr = get_slots(ss, d, cpu, SL_SWAP_SLOTS_CACHE_SIZE, c->slots);
		}
		if (c->nr) {
			off = c->slots[c->cur++];
			c->nr--;
		}
		sl_slots_unlock(d, cpu);
	} else {
direct:
		if (get_slots(ss, d, cpu, 1, &off) != 1)
			off = 0; /* cache inactive: one slot straight from the allocator */
	}
	return off;
}

uint64_t sl_swap_slots_alloc(sl_swap_slots *ss, sl_device *d, int cpu)
{
	uint64_t off = slots_alloc(ss, d, cpu);

	if (off)
		take_reserved(d, off);
	return off;
}

uint64_t sl_swap_slots_alloc_set(sl_swap_slots *ss, int cpu)
{
	uint64_t e = slots_alloc(ss, ss->set->dev[0], cpu);

	if (e)
		sl_swap_slots_take_set(ss->set, e);
	return e;
}

int sl_swap_slots_init_set(sl_swap_slots *ss, struct sl_swapset *set)
{
	sl_device *d = set->dev[0];

	if (sl_swap_slots_init(ss, d, 1, NULL, NULL))
		return -1;
	ss->set = set;
	return 0;
}

void sl_swap_slots_free(sl_swap_slots *ss, sl_device *d, int cpu, uint64_t off)
{
	if (d->set && d->set->slots && ss != d->set->slots) {
		/* one cache per CPU above every device */
		ss = d->set->slots;
		off = sl_entry(d->type, off);
		d = d->set->dev[0];
	}
	sl_swap_slots_cache *c = &ss->cpu[cpu];

	if (!ss->free_cache || !ss->active) {
		release_all(ss, d, &off, 1);
		return;
	}
	sl_slots_lock(d, cpu);
	if (!ss->active) {
		/* free_swap_slot() rechecks under free_lock: direct free */
		sl_slots_unlock(d, cpu);
		release_all(ss, d, &off, 1);
		return;
	}
	if (c->n_ret == SL_SWAP_SLOTS_CACHE_SIZE) {
		/* swapcache_free_entries(): one device, push order */
		release_all(ss, d, c->slots_ret, c->n_ret);
		c->n_ret = 0;
	}
	c->slots_ret[c->n_ret++] = off;
	sl_slots_unlock(d, cpu);
}

void sl_swap_slots_drain(sl_swap_slots *ss, sl_device *d)
{
	for (int c = 0; c < d->nr_cpus; c++)
		drain_slots_cache_cpu(ss, d, c);
}
