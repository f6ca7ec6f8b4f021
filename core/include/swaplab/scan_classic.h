/*
 * swaplab/scan_classic.h - the classic swap_map scanner of Linux <= 6.13
 * (mm/swapfile.c scan_swap_map_slots() and what surrounds it), shared by
 * every generation before the 6.14 rework: linux-6.9, linux-6.10 and
 * nonfull-2024 run the SSD scan with their own cluster step; linux-6.12 and
 * the HDD scan (scan_hdd.c) share the bookkeeping, the batch accounting of
 * get_swap_pages() and the linear scan. Each function keeps its kernel name
 * behind the sc_ prefix.
 *
 * Two layers:
 *  - sc_swap_info: the swap_info_struct fields of the classic scan and the
 *    functions that keep them (every <= 6.13 generation);
 *  - sc_scanner: the SSD scan_swap_map_slots() / get_swap_pages() with the
 *    order-0 slot caches (6.9, 6.10, nonfull-2024). Which cluster a CPU
 *    takes next, and what taking or freeing a slot does to its cluster, is
 *    the generation's: it plugs in through sc_ops. 6.9 is the order-0 case
 *    of 6.10's cluster step (its percpu_cluster {index, next} behaves as
 *    6.10's next[0]: docs/policies/linux-6.9.md).
 *
 * Settled once for every <= 6.13 generation:
 *  - get_swap_pages() takes the whole batch off nr_swap_pages before it
 *    scans (sc_swap_batch_begin()), so vm_swap_full() inside the scan sees
 *    the device short of the batch; the rest is given back after it;
 *  - a cache-only slot found by the scan goes through `checks`, where
 *    __try_to_reclaim_swap() finds no folio (every cache-only slot here is
 *    a slot cache's): with vm_swap_full() the scan goes on past it;
 *  - alloc_cluster()'s VM_BUG_ON is SL_ASSERT (debug.h): compiled out of
 *    release builds as VM_BUG_ON is without CONFIG_DEBUG_VM.
 */
#ifndef SWAPLAB_SCAN_CLASSIC_H
#define SWAPLAB_SCAN_CLASSIC_H

#include "swaplab.h"
#include "swap_slots.h"
#include "debug.h"

#define SC_LATENCY_LIMIT 256   /* LATENCY_LIMIT: scan steps between breaks */
#define SC_SWAP_BATCH 64       /* SWAP_BATCH: most slots one get_swap_pages() takes */

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
/* Invariant: every free slot lies inside [lowest_bit, highest_bit], and
 * highest_bit is 0 exactly when every slot is in use. */
int sc_check_bits(const sc_swap_info *si, const sl_device *d, const char *who, char *msg,
		  size_t len);

/* get_swap_pages() - <= 6.13: n_goal = min(n, SWAP_BATCH, free >> order)
 * ranges of 2^order, taken off nr_swap_pages before the scan
 * (atomic_long_sub); returns n_goal, 0 when nothing is free. */
int sc_swap_batch_begin(sl_device *d, int n, int order);
/* One range of 2^order of the batch was allocated. */
static inline void sc_swap_batch_took(sl_device *d, int order)
{
	uint64_t held = atomic_load_explicit(&d->gsp_held, memory_order_relaxed);

	SL_ASSERT(held >= (UINT64_C(1) << order));
	atomic_store_explicit(&d->gsp_held, held - (UINT64_C(1) << order), memory_order_relaxed);
}
/* get_swap_pages(), check_out: the batch's untaken rest goes back. */
void sc_swap_batch_end(sl_device *d);

/* The locals of one scan_swap_map_slots() call that its labels share. */
typedef struct sc_scan {
	uint64_t offset, scan_base;
	int latency_ration;        /* LATENCY_LIMIT steps, then a break */
	int scanned_many;          /* the scan: label went round LATENCY_LIMIT */
} sc_scan;

/* swap_offset_available_and_locked() - <= 6.13: free, or cache-only while
 * vm_swap_full() (worth a reclaim attempt in `checks`). */
static inline int sc_swap_offset_available(const sl_device *d, uint64_t off)
{
	uint8_t b = d->map[off];

	return b == SL_SLOT_FREE || (b == SL_SLOT_CACHE && sl_vm_swap_full(d));
}
/* `checks`, the reclaim step - <= 6.13: a cache-only slot while
 * vm_swap_full(): __try_to_reclaim_swap() finds no folio, so the scan goes
 * on (goto scan). */
static inline int sc_reclaim_fails(const sl_device *d, uint64_t off)
{
	return d->map[off] == SL_SLOT_CACHE && sl_vm_swap_full(d);
}
/* scan_swap_map_slots(), label checks: (after the SSD conflict check) -
 * <= 6.13: SC_TAKE when sc->offset may be taken, else where the scan
 * goes: a full device, past highest_bit (wrap: back to lowest_bit, order
 * 0), a cache-only slot reclaim cannot free, a used slot. */
enum { SC_TAKE, SC_SCAN, SC_DONE, SC_NO_PAGE };
static inline int sc_checks(const sl_device *d, const sc_swap_info *si, sc_scan *sc, int n_ret,
			    int wrap)
{
	if (!si->highest_bit)
		return SC_NO_PAGE;
	if (wrap && sc->offset > si->highest_bit)
		sc->scan_base = sc->offset = si->lowest_bit;
	if (sc_reclaim_fails(d, sc->offset))
		return SC_SCAN; /* check the next one */
	if (d->map[sc->offset])
		return n_ret ? SC_DONE : SC_SCAN;
	return SC_TAKE;
}
/* scan_swap_map_slots(), label scan: - <= 6.13, order 0: from offset + 1
 * up to highest_bit, then from lowest_bit up to scan_base; 1 with
 * sc->offset at a slot worth checking, 0 when there is none (no_page). */
int sc_scan_linear(const sl_device *d, const sc_swap_info *si, sc_scan *sc);
/* scan_swap_map_slots(), after a slot was taken - <= 6.13, order 0: a
 * little more scanning under the lock (not after the scan: label went
 * round); 1 with sc->offset at a free slot. */
int sc_scan_forward(const sl_device *d, const sc_swap_info *si, sc_scan *sc);

/* The generation's cluster step of the SSD scanner. */
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
	/* get_random_u32_inclusive()'s stand-in for the scan bases, and the
	 * seed of its stream (fixed per generation: runs are reproducible). */
	sc_random_fn random_inclusive;
	uint64_t seed;
} sc_ops;

/* The 6.10 cluster step, shared with 6.9 (its order-0 case). */
/* scan_swap_map_try_ssd_cluster() - 6.10 (<= 6.9: order 0, percpu_cluster) */
int sc_scan_swap_map_try_ssd_cluster(sl_device *d, int cpu, uint64_t *offset, uint64_t *scan_base,
				     int order);
/* FREE: on the free list (6.9 and 6.10 have no other cluster state). */
static inline int sc_cluster_is_free(const sl_device *d, uint32_t c)
{
	return d->ci[c].flags == SL_CF_FREE;
}
/* add_cluster_info_page() - 6.10 (inc_cluster_info_page() <= 6.9) */
void sc_add_cluster_info_page(sl_device *d, int cpu, uint64_t off, int order);
/* dec_cluster_info_page() - 6.10 and <= 6.9 */
void sc_dec_cluster_info_page(sl_device *d, uint32_t c);

/* The shared scanner's state: the FIRST member of the policy's state
 * (d->pstate points to it; sc_init allocates it). */
typedef struct sc_scanner {
	sc_swap_info si;
	sl_swap_slots slots;
	const sc_ops *ops;
	int refilled;               /* get_swap_pages() ran during this alloc */
} sc_scanner;

/* swapon for the SSD scanner: refuses rotational devices (scan_hdd.c);
 * d->pstate = the policy's state (size bytes, zeroed, an sc_scanner
 * first); scan bases (the ops' seed and stream), the interleaved free list,
 * the slot caches. Returns the state, or NULL (d->pstate may be set). */
void *sc_init(sl_device *d, size_t size, const sc_ops *ops);
/* Frees what sc_init allocated, d->pstate included (set to NULL). */
void sc_fini(sl_device *d);
/* swap_range_empty(): nr slots at off all free and below max. */
int sc_swap_range_empty(const sl_device *d, uint64_t off, uint32_t nr, uint64_t max);
/* scan_swap_map_slots() - <= 6.10, non-rotational: up to nr ranges of
 * 2^order slots into slots[]; returns how many. */
int sc_scan_swap_map_slots(sl_device *d, int cpu, int nr, uint64_t *slots, int order);
/* get_swap_pages() - <= 6.10, one device: n ranges of `order` (the batch
 * accounting above); none when the device is full (off the avail list). */
int sc_get_swap_pages(sl_device *d, int cpu, int n, uint64_t *out, int order);
/* swap_entry_free(): a cache-only slot back (slot-cache flush or drain). */
void sc_swap_entry_free(sl_device *d, uint64_t off);
/* folio_alloc_swap(): order 0 through the slot cache (a hit that needed no
 * refill counts as alloc_fast[0]), a large folio one range from
 * get_swap_pages(). Returns the slot or 0. */
uint64_t sc_folio_alloc_swap(sl_device *d, int cpu, int order);
/* free_swap_and_cache_nr() / swap_free(): every slot, ascending, through
 * free_swap_slot(). */
void sc_free_swap_slots(sl_device *d, int cpu, uint64_t off, uint32_t nr);
/* drain_swap_slots_cache() (swapoff): every CPU's cached slots back. */
void sc_drain_swap_slots(sl_device *d);

#endif
