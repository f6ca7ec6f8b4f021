/*
 * v6_9.c - policy "linux-6.9": the classic swap slot allocator (<= 6.9).
 *
 * Kernel range: <= 6.9 (modelled on the 6.6 - 6.9 mm/swapfile.c and
 * mm/swap_slots.c; the allocator is unchanged since 5.8's per-CPU scan base,
 * Huang Ying's "Reduce lock contention on swap cache from swap slots
 * allocation"). Replaced in 6.10 by Ryan Roberts' per-order cursors.
 * What it is: per-slot swap_map scanning (scan_swap_map_slots). On a
 * non-rotational device each CPU allocates slot by slot inside its own
 * cluster (percpu_cluster {index, next}), taking the head of the free
 * cluster list when it has none; the cluster stays on the free list until
 * its first slot is allocated. With no free cluster left, order 0 scans the
 * whole swap_map linearly from the CPU's scan base (cluster_next_cpu), which
 * jumps to a random 64 MiB-aligned position whenever it crosses a 64 MiB
 * boundary. A PMD-sized folio takes one whole free cluster or fails; every
 * other large folio is split by reclaim before it asks for slots. Order 0
 * goes through the per-CPU slot caches (64-slot allocation batches, 64-entry
 * free caches: swap_slots.c). Clusters carry no order and sit on no list
 * while in use: the only list is the free list (singly linked in the kernel,
 * FIFO), initially interleaved in 32 columns (64 MiB apart).
 *
 * Kernel functions modelled (all <= 6.9): swap_alloc_cluster and
 * get_swap_pages (its PMD branch) here. The scan is the classic scanner
 * shared with 6.10 (scan_classic.c, sc_*): 6.9's percpu_cluster {index,
 * next} is the order-0 case of 6.10's per-order cursor (next[0]; a cluster
 * used up to its end is dropped either way), so scan_swap_map_slots,
 * scan_swap_map_try_ssd_cluster, scan_swap_map_ssd_cluster_conflict,
 * swap_offset_available_and_locked, alloc_cluster, inc_cluster_info_page
 * (6.10's add_cluster_info_page), dec_cluster_info_page, free_cluster,
 * swap_entry_free, swap_range_alloc, swap_range_free, set_cluster_next,
 * setup_swap_map_and_extents (the cluster part), the SSD part of swapon and
 * the batch accounting of get_swap_pages() are those of scan_classic.c.
 *
 * Randomness: the kernel's get_random_u32_inclusive() (the per-CPU scan
 * bases at swapon and the 64 MiB jumps) is this policy's own sl_rng, seeded
 * with the fixed V6_9_RNG_SEED at init, so every run of one workload is
 * reproducible and independent of the workload's seed.
 *
 * Simplifications (docs/policies/linux-6.9.md):
 *  - discard: scan_classic.c's discard list, the worker as tick; a
 *    rotational device takes the HDD scan (scan_hdd.c); several devices:
 *    swapset.c;
 *  - single-threaded: si->lock is never dropped, so LATENCY_LIMIT only
 *    steers the batch and scan limits (modelled), never a reschedule;
 *  - no folio sits in the swap cache between calls: every cache-only slot is
 *    held by a slot cache, so __try_to_reclaim_swap() finds no folio and
 *    fails (the scan still stops at such slots when vm_swap_full());
 *  - CLUSTER_FLAG_HUGE is not kept: it only matters to put_swap_folio()
 *    and split_swap_cluster(), which a folio leaving the swap cache at once
 *    never reaches; a PMD allocation's slots come back with count 1.
 */
#include <stdlib.h>
#include <stdio.h>
#include "swaplab/swaplab.h"
#include "swaplab/scan_hdd.h"
#include "swaplab/cluster.h"
#include "swaplab/swap_slots.h"
#include "swaplab/scan_classic.h"

#define V6_9_RNG_SEED UINT64_C(0x0609)

/* The policy's state is the shared scanner's (sc_scanner) alone. */
static sc_scanner *st(const sl_device *d) { return d->pstate; }

/* get_random_u32_inclusive() - the policy's seeded stand-in. */
static uint64_t random_inclusive(sl_rng *rng, uint64_t lo, uint64_t hi)
{
	return lo + sl_rng_below(rng, (uint32_t)(hi - lo + 1));
}

/* swap_alloc_cluster() - <= 6.9: a PMD folio takes the free-list head whole
 * (CLUSTER_FLAG_HUGE, not kept here), or fails. */
static uint64_t swap_alloc_cluster(sl_device *d)
{
	uint32_t c = sli_list_first(d, SL_LIST_FREE);
	uint64_t off;

	if (c == SL_NIL)
		return 0;
	off = sli_cluster_offset(c);
	sli_isolate_cluster(d, c); /* alloc_cluster() of the head */
	sli_alloc_range(d, off, SL_PMD_ORDER);
	sc_swap_range_alloc(&st(d)->si, d, off, SL_CLUSTER);
	return off;
}

/* get_swap_pages() - <= 6.9, a PMD folio: one whole free cluster through
 * swap_alloc_cluster() on a block device (the batch accounting as for any
 * size); smaller large folios never get here whole (reclaim splits them). */
static uint64_t get_swap_pages_pmd(sl_device *d)
{
	uint64_t off = 0;

	if (sc_swap_batch_begin(d, 1, SL_PMD_ORDER) && (d->flags & SL_DEV_BLKDEV) &&
	    st(d)->si.highest_bit)
		off = swap_alloc_cluster(d);
	sc_swap_batch_end(d);
	return off;
}

/* folio_alloc_swap() - <= 6.9: order 0 through the slot cache and the
 * shared scan; a PMD folio whole; other orders are split before. */
static uint64_t v6_9_alloc(sl_device *d, int cpu, int order)
{
	if (order == 0)
		return sc_folio_alloc_swap(d, cpu, 0);
	return order == SL_PMD_ORDER ? get_swap_pages_pmd(d) : 0;
}

/* get_swap_pages()'s step on one device, for several devices - <= 6.9:
 * order 0 for the slot caches, a PMD folio through swap_alloc_cluster(). */
static int v6_9_get_swap_pages(sl_device *d, int cpu, int n, uint64_t *out, int order)
{
	if (order == 0)
		return sc_get_swap_pages(d, cpu, n, out, 0);
	if (order != SL_PMD_ORDER)
		return 0;
	out[0] = get_swap_pages_pmd(d);
	return out[0] != 0;
}

static const sc_ops v6_9_ops = {
	.try_ssd_cluster = sc_scan_swap_map_try_ssd_cluster,
	.cluster_is_free = sc_cluster_is_free,
	.add_cluster_info_page = sc_add_cluster_info_page,
	.dec_cluster_info_page = sc_dec_cluster_info_page,
	.random_inclusive = random_inclusive,
	.seed = V6_9_RNG_SEED,
};

/* swapon - <= 6.9, non-rotational device: lowest_bit 1, highest_bit
 * max - 1, each CPU's scan base random in [1, highest_bit], no per-CPU
 * cluster, the interleaved free list, the slot caches. */
static int v6_9_init(sl_device *d)
{
	return sc_init(d, sizeof(sc_scanner), &v6_9_ops) ? 0 : -1;
}

/* swap_discard_work() - <= 6.9: the discard worker, between operations. */
static void v6_9_discard_work(sl_device *d)
{
	sc_swap_discard_work(d, sc___free_cluster);
}

#define FAIL(...) do { snprintf(msg, len, __VA_ARGS__); return -1; } while (0)

/* Clusters: only the free and discard lists are used; a cluster is on one
 * of them iff its count is 0; per-CPU clusters exist. */
static int v6_9_check_clusters(const sl_device *d, char *msg, size_t len)
{
	for (int l = 1; l < SL_NR_LISTS; l++)
		if (d->list_len[l] && l != SL_LIST_DISCARD)
			FAIL("linux-6.9: list %d holds %u clusters", l, d->list_len[l]);
	for (uint32_t c = 0; c < d->nr_clusters; c++)
		if ((d->ci[c].count == 0) !=
		    (d->ci[c].flags == SL_CF_FREE || d->ci[c].flags == SL_CF_DISCARD))
			FAIL("linux-6.9: cluster %u count %u flags %u", c, d->ci[c].count,
			     d->ci[c].flags);
	return 0;
}

/* Every cache-only slot is held by exactly one slot-cache entry. */
static int v6_9_check_caches(const sl_device *d, char *msg, size_t len)
{
	/* entries; above several devices the caches are the set's */
	const sl_swap_slots *ss = d->slots;
	uint64_t cache_only = 0, held = 0;
	uint8_t *seen = calloc(d->max, 1);

	if (!seen)
		FAIL("out of memory in the checker");
	for (uint64_t o = 1; o < d->max; o++)
		cache_only += d->map[o] == SL_SLOT_CACHE;
	for (int cpu = 0; cpu < d->nr_cpus; cpu++) {
		const sl_swap_slots_cache *c = &ss->cpu[cpu];
		for (int i = 0; i < c->nr + c->n_ret; i++) {
			uint64_t e = i < c->nr ? c->slots[c->cur + i] : c->slots_ret[i - c->nr];
			uint64_t o = sl_entry_off(e);
			if (sl_entry_type(e) != d->type)
				continue;
			held++;
			if (o == 0 || o >= d->max || d->map[o] != SL_SLOT_CACHE || seen[o]++) {
				free(seen);
				FAIL("linux-6.9: cpu %d caches slot %llu (map 0x%02x) wrongly", cpu,
				     (unsigned long long)o, o < d->max ? d->map[o] : 0);
			}
		}
	}
	free(seen);
	if (cache_only != held)
		FAIL("linux-6.9: %llu cache-only slots, the slot caches hold %llu",
		     (unsigned long long)cache_only, (unsigned long long)held);
	return 0;
}

static int v6_9_check(const sl_device *d, char *msg, size_t len)
{
	if (v6_9_check_clusters(d, msg, len) ||
	    sc_check_bits(&st(d)->si, d, "linux-6.9", msg, len))
		return -1;
	return v6_9_check_caches(d, msg, len);
}

/* A rotational device: no cluster_info, the HDD scan (scan_hdd.c). */
static const sl_policy rotational = SL_HDD_CLASSIC_POLICY("linux-6.9", SL_POL_SPLIT_MTHP, hd_free_slots);

const sl_policy sl_policy_v6_9 = {
	.name = "linux-6.9",
	.summary = "Linux <=6.9: per-CPU cluster, swap_map scan with random 64 MiB jumps, "
		   "PMD takes a free cluster, mTHP split, slot caches",
	.kernel = "<=6.9",
	.props = SL_POL_SPLIT_MTHP | SL_POL_SLOT_CACHE | SL_POL_DISCARD_MARKS_BAD,
	.init = v6_9_init,
	.fini = sc_fini,
	.alloc = v6_9_alloc,
	.free = sc_free_swap_slots,
	.get_swap_pages = v6_9_get_swap_pages,
	.release = sc_swap_entry_free,
	.check = v6_9_check,
	.drain = sc_drain_swap_slots,
	.tick = v6_9_discard_work,
	.rotational = &rotational,
};
