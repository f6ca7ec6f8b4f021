/*
 * swaplab/swap_slots.h - the per-CPU swap slot caches of mm/swap_slots.c
 * (4.11 .. 6.14; the free side to 6.13), a layer of its own between a folio's order-0 swap-out and
 * whatever hands out slots (core/src/swap_slots.c).
 *
 * The layer knows its owner only as an opaque pointer and two callbacks:
 * get() reserves up to n swap entries (the owner's get_swap_pages() of
 * order 0), release() gives reserved or freed entries back
 * (swapcache_free_entries()). It holds swap entries (type << SL_TYPE_SHIFT
 * | offset), never bare slots, so one device alone is simply type 0.
 *
 * Owners: a lone device owns a cache (its policy keeps it, device.c wires
 * it to the policy's ops table: sli_dev_slots_init()); several devices
 * (swapset.c) share one cache above them, and the set points every
 * device's d->slots at it. The policies reach whichever cache is theirs
 * through d->slots only.
 *
 * Alloc cache: an order-0 folio_alloc_swap() takes slots[cur++] from this
 * CPU's cache; an empty cache is refilled with up to 64 entries by get(),
 * all reserved (0x40, cache-only) at once.
 * Free cache (<= 6.13): an order-0 entry whose last reference went away
 * stays cache-only in this CPU's slots_ret[] until 64 have gathered; then
 * all 64 go to release() in push order. The caches are active while free
 * swap exceeds 5 x 64 slots per CPU and are drained when it drops below
 * 2 x 64 per CPU (check_cache_active()); inactive caches pass each request
 * straight to get() / release().
 * Concurrent mode (sl_device_concurrent() lends the device's SLOTS locks):
 * each CPU's cache under its lock (the kernel's alloc_lock / free_lock);
 * get() and release() run with it held, so an owner's locks nest inside.
 */
#ifndef SWAPLAB_SWAP_SLOTS_H
#define SWAPLAB_SWAP_SLOTS_H

#include <stdatomic.h>
#include "locks.h"

#define SL_SWAP_SLOTS_CACHE_SIZE 64

/* get_swap_pages(n) of order 0: reserve up to n entries into out[];
 * returns how many (stops at the first failure). */
typedef int (*sl_slots_get_fn)(void *owner, int cpu, int n, uint64_t *out);
/* swapcache_free_entries(): n reserved or freed entries back to their
 * devices, in this order (n >= 1). */
typedef void (*sl_slots_release_fn)(void *owner, const uint64_t *e, int n);

typedef struct sl_swap_slots_cache {
	uint64_t slots[SL_SWAP_SLOTS_CACHE_SIZE];     /* entries; [cur, cur + nr) left */
	int nr, cur;
	uint64_t slots_ret[SL_SWAP_SLOTS_CACHE_SIZE]; /* freed entries, push order */
	int n_ret;
} sl_swap_slots_cache;

typedef struct sl_swap_slots {
	sl_swap_slots_cache *cpu;   /* [nr_cpus] */
	sl_spinlock *lock;          /* [nr_cpus] SLOTS locks, lent by the owner in
				       the concurrent mode (locks.c); else NULL */
	_Atomic int active;
	int free_cache;             /* the free side exists (<= 6.13) */
	int nr_cpus;                /* online CPUs: the activation thresholds */
	void *owner;
	sl_slots_get_fn get;
	sl_slots_release_fn release;
} sl_swap_slots;

/* Empty, inactive caches for nr_cpus CPUs. Returns 0 or -1 (out of memory). */
int sl_swap_slots_init(sl_swap_slots *ss, int nr_cpus, int free_cache, void *owner,
		       sl_slots_get_fn get, sl_slots_release_fn release);
void sl_swap_slots_fini(sl_swap_slots *ss);
/* folio_alloc_swap() for order 0 through the cache: a reserved entry
 * (0x40; the caller hands it to its folio), or 0. nr_swap_pages: the free
 * slots over every device now, for check_cache_active(). */
uint64_t sl_swap_slots_alloc(sl_swap_slots *ss, int cpu, uint64_t nr_swap_pages);
/* free_swap_slot(): an order-0 entry whose count reached 0 (map byte 0x40). */
void sl_swap_slots_free(sl_swap_slots *ss, int cpu, uint64_t e);
/* drain_swap_slots_cache(): every CPU's entries, reserved ones first, back
 * through release(). */
void sl_swap_slots_drain(sl_swap_slots *ss);

/* ------------------------------------------------- a lone device as owner */

/* The cache `ss` (kept in the policy's state) of a device alone: get and
 * release go through the device's ops table (pol->get_swap_pages of order
 * 0, pol->release under si->lock), owner d; d->slots = ss. device.c. */
int sli_dev_slots_init(sl_device *d, sl_swap_slots *ss);
/* folio_alloc_swap() of order 0 through d->slots: the slot, count 1, or 0. */
uint64_t sli_dev_slots_alloc(sl_device *d, int cpu);
/* free_swap_slot() of slot off of d, into d->slots (the set's cache when
 * d is one of several devices). */
void sli_dev_slots_free(sl_device *d, int cpu, uint64_t off);
/* A reserved slot handed to its folio (count 1), under its cluster lock. */
void sli_take_reserved_locked(sl_device *d, uint64_t off);

#endif
