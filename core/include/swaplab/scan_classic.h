/*
 * swaplab/scan_classic.h - the classic swap_map scanner of Linux <= 6.10
 * (mm/swapfile.c scan_swap_map_slots() and what surrounds it), shared by
 * the linux-6.10 and nonfull-2024 policies; its bookkeeping (lowest_bit /
 * highest_bit, the per-CPU scan bases, the interleaved initial free list) is
 * shared with linux-6.9 too. Each function keeps its kernel name behind the
 * sc_ prefix.
 *
 * Two layers:
 *  - sc_swap_info: the swap_info_struct fields of the classic scan and the
 *    functions that keep them (all three generations);
 *  - sc_scanner: the 6.10 scan_swap_map_slots() / get_swap_pages() with the
 *    order-0 slot caches (6.10 and nonfull-2024). Which cluster a CPU takes
 *    next, and what taking or freeing a slot does to its cluster, is the
 *    generation's: it plugs in through sc_ops.
 * linux-6.9 keeps its own scan (percpu_cluster, no orders, its vm_swap_full).
 */
#ifndef SWAPLAB_SCAN_CLASSIC_H
#define SWAPLAB_SCAN_CLASSIC_H

#include "swaplab.h"
#include "swap_slots.h"

/* get_random_u32_inclusive(): a value in [lo, hi] from the policy's stream. */
typedef uint64_t (*sc_random_fn)(sl_rng *rng, uint64_t lo, uint64_t hi);

/* The swap_info_struct fields of the classic scan. */
typedef struct sc_swap_info {
	uint64_t lowest_bit;        /* every free slot lies in [lowest_bit, */
	uint64_t highest_bit;       /* highest_bit]; 0 when the device is full */
	uint64_t *cluster_next_cpu; /* [nr_cpus]: per-CPU linear-scan base */
	sl_rng rng;                 /* get_random_u32_inclusive() */
	sc_random_fn random_inclusive;
} sc_swap_info;

/* get_random_u32_inclusive() - 6.10 model: lo + next() % (hi - lo + 1). */
uint64_t sc_random_inclusive(sl_rng *rng, uint64_t lo, uint64_t hi);
/* swapon, SSD part: lowest_bit 1, highest_bit max - 1, the stream seeded,
 * each CPU's scan base random in [1, highest_bit]; cluster_next_cpu must be
 * allocated already. */
void sc_swapon(sc_swap_info *si, const sl_device *d, uint64_t seed, sc_random_fn rnd);
/* swap_range_alloc(): the bounds after nr slots at off were taken
 * (inuse_pages already counted); a full device gets max / 0. */
void sc_swap_range_alloc(sc_swap_info *si, const sl_device *d, uint64_t off, uint32_t nr);
/* swap_range_free(): the bounds widened over nr freed slots at off. */
void sc_swap_range_free(sc_swap_info *si, uint64_t off, uint32_t nr);
/* set_cluster_next(), non-rotational: this CPU's scan base; crossing a
 * 64 MiB address space picks a random 64 MiB-aligned base instead. */
void sc_set_cluster_next(sc_swap_info *si, int cpu, uint64_t next);
/* setup_swap_map_and_extents(), the cluster part: empty clusters onto the
 * free list in 32 interleaved columns (0, 32, 64, ..., 1, 33, ...). */
void sc_setup_free_clusters(sl_device *d);
/* swap_cluster_schedule_discard() - <= 6.13: an emptied cluster of a
 * discarding device has its slots marked bad and waits on the discard list
 * (the worker runs from the policy's tick). */
void sc_swap_cluster_schedule_discard(sl_device *d, uint32_t c);
/* swap_do_scheduled_discard() - <= 6.13: every pending cluster is
 * discarded, its slots free again, and goes through the generation's
 * __free_cluster(); returns how many. */
typedef void (*sc_free_cluster_fn)(sl_device *d, uint32_t c);
uint32_t sc_swap_do_scheduled_discard(sl_device *d, sc_free_cluster_fn free_cluster);
/* __free_cluster() - <= 6.13 without cluster states (6.9, 6.10, 6.12):
 * free-list tail, order reset. */
void sc___free_cluster(sl_device *d, uint32_t c);
/* free_cluster() - the same generations: count reached 0; a discarding
 * device schedules the discard instead. */
void sc_free_cluster(sl_device *d, uint32_t c);
/* swap_discard_work() - <= 6.13: the worker (a policy's tick), under
 * si->lock; free_cluster is the generation's __free_cluster(). */
void sc_swap_discard_work(sl_device *d, sc_free_cluster_fn free_cluster);
/* Invariant: every free slot lies inside [lowest_bit, highest_bit]. */
int sc_check_bits(const sc_swap_info *si, const sl_device *d, const char *who, char *msg,
		  size_t len);

/* The generation's cluster step of the 6.10 scanner. */
typedef struct sc_ops {
	/* scan_swap_map_try_ssd_cluster(): the next free range of 2^order
	 * slots for this CPU's cluster of the order (taking a new cluster as
	 * the generation does); 0 when there is none. */
	int (*try_ssd_cluster)(sl_device *d, int cpu, uint64_t *offset, uint64_t *scan_base,
			       int order);
	/* cluster c is FREE (on the free list) in the generation's terms. */
	int (*cluster_is_free)(const sl_device *d, uint32_t c);
	/* add_cluster_info_page(): take 2^order slots at off (order 0:
	 * cache-only) and do the cluster's bookkeeping. */
	void (*add_cluster_info_page)(sl_device *d, int cpu, uint64_t off, int order);
	/* dec_cluster_info_page(): one slot of cluster c was freed. */
	void (*dec_cluster_info_page)(sl_device *d, uint32_t c);
} sc_ops;

/* The shared scanner's state: the FIRST member of the policy's state
 * (d->pstate points to it; sc_init allocates it). */
typedef struct sc_scanner {
	sc_swap_info si;
	sl_swap_slots slots;
	const sc_ops *ops;
} sc_scanner;

/* swapon for the 6.10 scanner: refuses rotational devices (scan_hdd.c);
 * d->pstate = the policy's state (size bytes, zeroed, an sc_scanner
 * first); scan bases (6.10 seed and stream), the interleaved free list, the
 * slot caches. Returns the state, or NULL (d->pstate may be set). */
void *sc_init(sl_device *d, size_t size, const sc_ops *ops);
/* Frees what sc_init allocated, d->pstate included (set to NULL). */
void sc_fini(sl_device *d);
/* swap_range_empty(): nr slots at off all free and below max. */
int sc_swap_range_empty(const sl_device *d, uint64_t off, uint32_t nr, uint64_t max);
/* scan_swap_map_slots() - 6.10, non-rotational: up to nr ranges of 2^order
 * slots into slots[]; returns how many. */
int sc_scan_swap_map_slots(sl_device *d, int cpu, int nr, uint64_t *slots, int order);
/* get_swap_pages() - 6.10, one device: n ranges of `order`, capped by the
 * free pages; none when the device is full (off the avail list). */
int sc_get_swap_pages(sl_device *d, int cpu, int n, uint64_t *out, int order);
/* swap_entry_free(): a cache-only slot back (slot-cache flush or drain). */
void sc_swap_entry_free(sl_device *d, uint64_t off);
/* folio_alloc_swap(): order 0 through the slot cache, a large folio one
 * range from get_swap_pages(). Returns the slot or 0. */
uint64_t sc_folio_alloc_swap(sl_device *d, int cpu, int order);
/* free_swap_and_cache_nr() / swap_free(): every slot, ascending, through
 * free_swap_slot(). */
void sc_free_swap_slots(sl_device *d, int cpu, uint64_t off, uint32_t nr);
/* drain_swap_slots_cache() (swapoff): every CPU's cached slots back. */
void sc_drain_swap_slots(sl_device *d);

#endif
