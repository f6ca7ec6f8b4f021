/*
 * swaplab/swap_slots.h - the per-CPU swap slot caches of mm/swap_slots.c
 * (4.11 .. 6.14), shared by the policies of those generations.
 *
 * Alloc cache: order-0 folio_alloc_swap() takes slots[cur++] from this
 * CPU's cache; an empty cache is refilled with up to 64 slots by the
 * policy's get_swap_pages(), all reserved (0x40, cache-only) at once.
 * Free cache (<= 6.13): an order-0 slot whose last reference went away
 * stays cache-only in this CPU's slots_ret[] until 64 have gathered; then
 * all 64 are released in push order (swapcache_free_entries(), one device:
 * no sort). The caches are active while free swap exceeds 5 x 64 slots per
 * online CPU and are drained when it drops below 2 x 64 per CPU
 * (check_cache_active()); inactive caches pass through to the allocator.
 * Concurrent mode: each CPU's cache under its SLOTS lock; the release
 * callback runs with the device lock held (swapcache_free_entries()).
 *
 * Several devices (swapset.c): one cache per CPU above them, holding swap
 * entries (device and slot); refills come from sl_set_get_swap_pages(),
 * every policy's free op lands in it (sl_swap_slots_free() redirects), and
 * a flush frees the entries grouped by device (swapcache_free_entries()
 * sorts by type when there is more than one swap device; the kernel's sort
 * is not stable, the model's is: within a device, push order).
 */
#ifndef SWAPLAB_SWAP_SLOTS_H
#define SWAPLAB_SWAP_SLOTS_H

#include <stdatomic.h>
#include "types.h"

#define SL_SWAP_SLOTS_CACHE_SIZE 64

/* get_swap_pages(n) for order 0: reserve up to n slots into out[]; returns
 * how many (stops at the first failure). */
typedef int (*sl_get_swap_pages_fn)(sl_device *d, int cpu, int n, uint64_t *out);
/* Release one cache-only slot back to the device (swap_entry_range_free). */
typedef void (*sl_release_slot_fn)(sl_device *d, uint64_t off);

typedef struct sl_swap_slots_cache {
	uint64_t slots[SL_SWAP_SLOTS_CACHE_SIZE];
	int nr, cur;
	uint64_t slots_ret[SL_SWAP_SLOTS_CACHE_SIZE];
	int n_ret;
} sl_swap_slots_cache;

typedef struct sl_swap_slots {
	sl_swap_slots_cache *cpu;   /* [d->nr_cpus] */
	struct sl_swapset *set;     /* above several devices: entries, not slots */
	_Atomic int active;
	int free_cache;             /* the free side exists (<= 6.13) */
	int online_cpus;            /* for the activation thresholds */
	sl_get_swap_pages_fn get;
	sl_release_slot_fn release;
} sl_swap_slots;

int sl_swap_slots_init(sl_swap_slots *ss, sl_device *d, int free_cache, sl_get_swap_pages_fn get,
		       sl_release_slot_fn release);
void sl_swap_slots_fini(sl_swap_slots *ss);
/* folio_alloc_swap() for order 0 through the cache: the slot, count 1, or 0. */
uint64_t sl_swap_slots_alloc(sl_swap_slots *ss, sl_device *d, int cpu);
/* free_swap_slot(): an order-0 slot whose count reached 0 (map byte 0x40). */
void sl_swap_slots_free(sl_swap_slots *ss, sl_device *d, int cpu, uint64_t off);
/* Every CPU's cached slots back to the device (drain_swap_slots_cache()). */
void sl_swap_slots_drain(sl_swap_slots *ss, sl_device *d);

/* The caches above the devices of a set. */
int sl_swap_slots_init_set(sl_swap_slots *ss, struct sl_swapset *set);
/* folio_alloc_swap() for order 0: an entry with count 1, or 0. */
uint64_t sl_swap_slots_alloc_set(sl_swap_slots *ss, int cpu);
/* A reserved entry handed to its folio (count 1). */
void sl_swap_slots_take_set(struct sl_swapset *set, uint64_t e);

#endif
