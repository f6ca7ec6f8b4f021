/*
 * v6_10.c - policy "linux-6.10": the swap slot allocator of Linux 6.10/6.11.
 *
 * Kernel range: 6.10 - 6.11 (Ryan Roberts, "mm: swap: Allow storage of all
 * mTHP orders", commit 845982eb264bc: mTHP swap-out without splitting).
 * Changes from 6.9: the per-CPU cluster becomes per-CPU per-order cursors
 * next[order]; any order 0..9 is allocated in steps of 2^order inside the
 * CPU's cluster for that order; the whole-cluster THP allocator
 * (swap_alloc_cluster) is gone. A large order takes only free clusters: with
 * none left it fails at once (the fallback Barry Song reported), whatever
 * room partially used clusters have. There is no per-cluster order and no
 * list but the free list: a cluster in use is on no list.
 * Order 0: batches of up to 64 through the per-CPU slot caches
 * (swap_slots.c); with no free cluster left, the classic linear scan of
 * swap_map between lowest_bit and highest_bit around this CPU's scan base,
 * which lands anywhere, in other CPUs' and other orders' clusters too.
 * Frees: every slot, even of a 64 KiB range, goes through free_swap_slot()
 * one at a time in ascending order (the free slot cache).
 * Process side: order-0 swap-in, splits keep never-written pages, fallback
 * split pages reclaimed in ascending order (no SL_POL_* process flags).
 *
 * Kernel functions modelled (same names, 6.10), all in the classic scanner
 * (scan_classic.c, sc_*): the cluster step scan_swap_map_try_ssd_cluster,
 * add_cluster_info_page, alloc_cluster, dec_cluster_info_page, free_cluster
 * (shared with 6.9, which is its order-0 case), and around it
 * get_swap_pages, scan_swap_map_slots, scan_swap_map_ssd_cluster_conflict,
 * swap_offset_available_and_locked, swap_range_empty, swap_range_alloc,
 * swap_range_free, set_cluster_next, swap_entry_free,
 * setup_swap_map_and_extents (the free-list part), folio_alloc_swap, the
 * slot-cache glue (shared with 6.9 and nonfull-2024).
 *
 * Cluster states on the device: a free cluster is on the free list (flag
 * FREE); every other cluster is on no list (flag NONE): 6.10 tracks nothing
 * else. ci->order is written by the shared primitives but never read here.
 *
 * Simplifications (docs/policies/linux-6.10.md):
 *  - discard: scan_classic.c's discard list, the worker as tick; a
 *    rotational device takes the HDD scan instead (scan_hdd.c, the `rotational` table);
 *    several devices: swapset.c;
 *  - single-threaded: si->lock is never dropped, the latency breaks
 *    (cond_resched) only count, nothing changes while they "sleep";
 *  - no folio sits in the swap cache between calls, so the only cache-only
 *    slots are those the slot caches hold: __try_to_reclaim_swap() finds no
 *    folio behind them, and a scan that reaches one through `checks` goes
 *    on past it (scan_classic.h);
 *  - get_random_u32_inclusive() (the per-CPU scan bases) is a fixed-seed
 *    xoshiro stream, so runs are deterministic.
 */#include <stdio.h>
#include <stdlib.h>
#include "swaplab/swaplab.h"
#include "swaplab/scan_hdd.h"
#include "swaplab/cluster.h"
#include "swaplab/scan_classic.h"

#define V6_10_RNG_SEED UINT64_C(0x6a10) /* the 6.10 model's get_random_u32() stream */

/* The policy's state is the shared scanner's (sc_scanner) alone: 6.10
 * keeps its per-CPU per-order cursors in d->cursor, and its cluster step
 * (scan_swap_map_try_ssd_cluster, add_cluster_info_page, alloc_cluster,
 * dec_cluster_info_page) is scan_classic.c's, which 6.9 shares. */

/* swap_discard_work() - 6.10: the discard worker, between operations. */
static void v6_10_discard_work(sl_device *d)
{
	sc_swap_discard_work(d, sc___free_cluster);
}

static const sc_ops v6_10_ops = {
	.try_ssd_cluster = sc_scan_swap_map_try_ssd_cluster,
	.cluster_is_free = sc_cluster_is_free,
	.add_cluster_info_page = sc_add_cluster_info_page,
	.dec_cluster_info_page = sc_dec_cluster_info_page,
	.random_inclusive = sc_random_inclusive,
	.seed = V6_10_RNG_SEED,
};

/* setup_swap_map_and_extents() - 6.10: clusters holding bad slots (the
 * header, the padding) stay on no list; the others go to the free list in
 * 32 interleaved columns (0, 32, 64, ..., 1, 33, ...; the starting column
 * cluster_next / 512 % 32 is 0). The per-CPU scan bases start at random
 * slots in [1, highest_bit] (swapon). */
static int v6_10_init(sl_device *d)
{
	return sc_init(d, sizeof(sc_scanner), &v6_10_ops) ? 0 : -1;
}

/* The policy's own invariants: only the free list is used, and every free
 * slot lies inside [lowest_bit, highest_bit]. */
static int v6_10_check(const sl_device *d, char *msg, size_t len)
{
	const sc_scanner *s = d->pstate;

	for (int l = 0; l < SL_NR_LISTS; l++) {
		if (l != SL_LIST_FREE && l != SL_LIST_DISCARD && d->list_len[l]) {
			snprintf(msg, len, "6.10: list %d holds %u clusters; only free and discard exist",
				 l, d->list_len[l]);
			return -1;
		}
	}
	return sc_check_bits(&s->si, d, "6.10", msg, len);
}

/* folio_alloc_swap() - 6.10: a large folio asks get_swap_pages() for one
 * range of its order; order 0 goes through the per-CPU slot cache. Frees
 * (free_swap_and_cache_nr() / swap_free()): every slot whose last reference
 * went away, one at a time in ascending order, through free_swap_slot() -
 * 64 KiB ranges included. Drain: drain_swap_slots_cache() (swapoff). */
/* A rotational device: no cluster_info, the HDD scan (scan_hdd.c). */
static const sl_policy rotational = SL_HDD_CLASSIC_POLICY("linux-6.10", 0, hd_free_slots);

const sl_policy sl_policy_v6_10 = {
	.name = "linux-6.10",
	.summary = "Linux 6.10: per-CPU per-order cursors, mTHP from free clusters only, order-0 linear scan; slot caches",
	.kernel = "6.10-6.11",
	.props = SL_POL_SLOT_CACHE | SL_POL_DISCARD_MARKS_BAD,
	.init = v6_10_init,
	.fini = sc_fini,
	.alloc = sc_folio_alloc_swap,
	.free = sc_free_swap_slots,
	.get_swap_pages = sc_get_swap_pages,
	.release = sc_swap_entry_free,
	.check = v6_10_check,
	.drain = sc_drain_swap_slots,
	.tick = v6_10_discard_work,
	.rotational = &rotational,
};
