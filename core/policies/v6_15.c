/*
 * v6_15.c - policy "linux-6.15": the swap slot allocator of Linux 6.15-6.17.
 *
 * Kernel range: 6.15 - 6.17 (Kairui Song's lock rework of 6.14 and
 * "mm, swap: remove swap slot cache" of 6.15; 6.16/6.17 renamed the free
 * path, swap_entry_range_free() to swap_entries_free(), without changing
 * it; 6.18's "improve cluster scan strategy" ends the range).
 * Changes from 6.12: cluster locks with the device lock only for list moves
 * (isolate_lock_cluster / relocate_cluster); a cluster being allocated from
 * sits on frag[order], not nonfull; a global per-CPU per-order cursor
 * {device, offset} as the fast path, with a usability check; no slot caches
 * (order 0 is allocated one slot at a time, frees are immediate); mTHP
 * swap-in on synchronous devices (6.13); the uniform folio split (6.15),
 * whose pages are reclaimed last to second.
 * Search ladder: one free cluster first (always, discard or not) -> one full
 * cluster reclaimed if over half used -> every nonfull[order] cluster ->
 * the frag[order] clusters that were there, rotating -> order-0 stealing.
 *
 * Kernel functions modelled here (6.15): cluster_alloc_swap_entry,
 * setup_clusters; swap_alloc_fast, swap_alloc_slow, cluster_is_usable,
 * folio_alloc_swap and the cluster primitives are lockrework.c's, shared
 * with linux-6.18.
 * Device kinds: as linux-6.18 (global cluster on rotational devices, the
 * discard list and worker), but the free list always comes first and an
 * allocation that finds nothing discards synchronously and starts again.
 * Simplifications: as linux-6.18 (one device, single-threaded).
 */
#include "swaplab/swaplab.h"
#include "swaplab/cluster.h"
#include "swaplab/lockrework_body.h"

/* The frag[order] clusters that were on the list when the scan began, each
 * isolated and scanned once (it rotates back to the tail on failure);
 * `frags` already counts the nonfull failures that just landed there. */
LR_INLINE uint64_t scan_frag_clusters(sl_device *d, int cpu, int order, uint32_t frags,
				      const int conc)
{
	uint32_t existing;
	uint64_t found = 0;

	sl_dev_lock_m(conc, d); /* frag_cluster_nr[order] */
	existing = d->list_len[SL_LIST_FRAG(order)];
	sl_dev_unlock_m(conc, d);

	while (frags < existing && !found) {
		uint32_t c = lrm_isolate_lock_cluster(d, SL_LIST_FRAG(order), conc);
		if (c == SL_NIL)
			break;
		found = lrm_alloc_swap_scan_cluster(d, cpu, c, sli_cluster_offset(c), order, conc);
		frags++;
	}
	return found;
}

/* cluster_alloc_swap_entry() - 6.15, built for one mode (lockrework.h). */
LR_INLINE uint64_t cluster_alloc_swap_entry_m(sl_device *d, int cpu, int order, const int conc)
{
	uint64_t found;
	uint32_t frags, c;

	/* a swap file's large folio, or a rotational device's global cluster */
	if (lrm_ladder_head(d, order, 0, &found, conc))
		return found;
new_cluster:
	frags = 0;
	/* one free cluster: the free list always comes first in 6.15 */
	found = lrm_alloc_swap_scan_list(d, cpu, SL_LIST_FREE, order, 0, conc);
	if (found)
		return found;
	if (sl_vm_swap_full(d))
		lrm_swap_reclaim_full_clusters(d, conc);
	if (order < SL_PMD_ORDER) {
		/* every nonfull cluster; each failure moves to frag[order] */
		while ((c = lrm_isolate_lock_cluster(d, SL_LIST_NONFULL(order), conc)) != SL_NIL) {
			found = lrm_alloc_swap_scan_cluster(d, cpu, c, sli_cluster_offset(c), order,
							    conc);
			if (found)
				return found;
			frags++;
		}
		found = scan_frag_clusters(d, cpu, order, frags, conc);
		if (found)
			return found;
	}
	/* 6.10-6.18.3: discard synchronously inside the allocator, then retry */
	if ((d->flags & SL_DEV_DISCARD) && lrm_swap_do_scheduled_discard(d, conc))
		goto new_cluster;
	if (order > 0)
		return 0;
	/* order 0 steals from higher-order clusters, frag before nonfull */
	return lrm_steal_order0(d, cpu, conc);
}
LR_BUILD_BOTH(cluster_alloc_swap_entry)

/* folio_alloc_swap() - 6.15. */
LR_INLINE uint64_t v6_15_alloc_m(sl_device *d, int cpu, int order, const int conc)
{
	return lrm_folio_alloc_swap(d, cpu, order, 0, LR_PICK(cluster_alloc_swap_entry, conc), conc);
}
LR_BUILD_BOTH(v6_15_alloc)

/* alloc_batch0 (policy.h): n order-0 calls of the above in one. */
static uint64_t v6_15_alloc0_det(sl_device *d, int cpu, int order)
{
	(void)order;
	return v6_15_alloc_m(d, cpu, 0, 0);
}

static void v6_15_alloc_batch0_det(sl_device *d, int cpu, uint32_t n, uint64_t *out)
{
	lrm_alloc_batch0(d, cpu, n, out, 0, v6_15_alloc0_det);
}

/* The halves swapset.c calls with several devices - 6.15: the global
 * per-CPU cursor {device, slot}, then swap_alloc_slow() on this device. */
LR_INLINE uint64_t v6_15_alloc_fast_m(sl_device *d, int cpu, int order, const int conc)
{
	return lrm_alloc_fast_dev(d, cpu, order, 0, conc);
}
LR_BUILD_BOTH(v6_15_alloc_fast)

LR_INLINE uint64_t v6_15_alloc_slow_m(sl_device *d, int cpu, int order, const int conc)
{
	return lrm_swap_alloc_slow(d, cpu, order, LR_PICK(cluster_alloc_swap_entry, conc), conc);
}
LR_BUILD_BOTH(v6_15_alloc_slow)

/* setup_clusters() - 6.15: bad-slot clusters to nonfull[0], the rest to the
 * free list in 32 interleaved columns (0, 32, 64, ..., 1, 33, ...). */
static int v6_15_init(sl_device *d)
{
	sli_setup_clusters(d, SL_SWAP_CLUSTER_COLS);
	return 0;
}

/* The table of mode m (lockrework.h). */
#define V6_15_OPS(m)                                                                      \
	.name = "linux-6.15",                                                             \
	.summary = "Linux 6.15: lock rework, global per-CPU cursor, free first, nonfull, counted frag, no slot cache", \
	.kernel = "6.15-6.17",                                                            \
	.props = SL_POL_ORDERED_CLUSTERS | SL_POL_SWAPIN_LARGE | SL_POL_SPLIT_ZEROPAGE |  \
		 SL_POL_SPLIT_DESCENDING | SL_POL_CONCURRENT | SL_POL_FREE_UNDER_CI_LOCK, \
	.init = v6_15_init, .alloc = v6_15_alloc_##m, LR_SHARED_OPS(m),                  \
	.alloc_fast = v6_15_alloc_fast_##m, .alloc_slow = v6_15_alloc_slow_##m

static const sl_policy v6_15_conc = { V6_15_OPS(conc) };
const sl_policy sl_policy_v6_15 = { V6_15_OPS(det), .alloc_batch0 = v6_15_alloc_batch0_det,
				     .concurrent = &v6_15_conc };
