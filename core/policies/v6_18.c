/*
 * v6_18.c - policy "linux-6.18": the swap slot allocator of Linux 6.18.
 *
 * Kernel range: 6.18, 6.18.0 - 6.18.y (swap table phase I; "mm, swap:
 * improve cluster scan strategy"; from 6.18.4 the stable backport of
 * swap_sync_discard(), modelled here).
 * Changes from 6.15-6.17: on a device without discard, nonfull[order] is
 * scanned before the free list; only one frag cluster is scanned per call
 * and the frag counter is gone; the initial free list is in ascending order
 * (the 64 MiB interleave left with the swap-cache address spaces).
 *
 * Kernel functions modelled here (6.18): cluster_alloc_swap_entry,
 * cluster_table_is_alloced (as the with_table test of cluster_is_usable),
 * setup_clusters, swap_sync_discard (its step on one device).
 * swap_alloc_fast, swap_alloc_slow, folio_alloc_swap, alloc_swap_scan_list,
 * isolate_lock_cluster, alloc_swap_scan_cluster, cluster_scan_range,
 * cluster_alloc_range, relocate_cluster, __free_cluster, free_cluster,
 * partial_free_cluster, swap_entries_free and swap_reclaim_full_clusters are
 * in lockrework.c (lr_ + the kernel name), identical from 6.14 on.
 *
 * Device kinds: rotational devices allocate from a global cluster per order
 * (no per-CPU fast path); discarding devices put emptied clusters on the
 * discard list, which the worker (tick(), between workload operations) or
 * an order-0 failure (6.18.4+) empties into the free list, and prefer a free
 * cluster over nonfull ones.
 *
 * Simplifications (docs/model.md):
 *  - single-threaded: trylocks always succeed, no lock drops to simulate;
 *  - no folio sits in the swap cache between calls, so cache-only slots
 *    never exist under this policy and __try_to_reclaim_swap() would find
 *    nothing: full-cluster reclaim only rotates the full list, as the kernel
 *    does when it frees nothing;
 *  - the reclaim worker scheduled when the device fills is not modelled
 *    (it too only rotates the full list here);
 *  - a swap table exists exactly while a cluster is in use or isolated;
 *    allocating one never fails.
 */
#include "swaplab/swaplab.h"
#include "swaplab/cluster.h"
#include "swaplab/lockrework.h"
#include "swaplab/lockrework_body.h"

/* cluster_alloc_swap_entry() - 6.18: the fallback ladder, built for one
 * mode (lockrework_body.h). */
LR_INLINE uint64_t cluster_alloc_swap_entry_m(sl_device *d, int cpu, int order, const int conc)
{
	int discard = (d->flags & SL_DEV_DISCARD) != 0;
	uint64_t found;

	/* a swap file's large folio, or a rotational device's global cluster */
	if (lrm_ladder_head(d, order, 1, &found, conc))
		return found;
	/* a discarding device prefers a free (already discarded) cluster */
	if (discard) {
		found = lrm_alloc_swap_scan_list(d, cpu, SL_LIST_FREE, order, 0, conc);
		if (found)
			return found;
	}
	/* partially used clusters of this order: least fragmentation */
	if (order < SL_PMD_ORDER) {
		found = lrm_alloc_swap_scan_list(d, cpu, SL_LIST_NONFULL(order), order, 1, conc);
		if (found)
			return found;
	}
	/* then one empty cluster */
	if (!discard) {
		found = lrm_alloc_swap_scan_list(d, cpu, SL_LIST_FREE, order, 0, conc);
		if (found)
			return found;
	}
	/* over half of swap used: try to free cache-only slots of a full cluster */
	if (sl_vm_swap_full(d))
		lrm_swap_reclaim_full_clusters(d, conc);
	/* one fragmented cluster of this order, which rotates the frag list */
	if (order < SL_PMD_ORDER) {
		found = lrm_alloc_swap_scan_list(d, cpu, SL_LIST_FRAG(order), order, 0, conc);
		if (found)
			return found;
	}
	if (order > 0)
		return 0;
	/* order 0 steals from higher-order clusters, frag before nonfull */
	return lrm_steal_order0(d, cpu, conc);
}

/* Its two builds, inlined where lrm_folio_alloc_swap() calls them. */
LR_BUILD_BOTH(cluster_alloc_swap_entry)

/* folio_alloc_swap() - 6.18.4+: an order-0 failure discards the pending
 * clusters synchronously and tries again (swap_sync_discard(); 6.18.0-6.18.3
 * discarded inside cluster_alloc_swap_entry() instead). */
LR_INLINE uint64_t v6_18_alloc_m(sl_device *d, int cpu, int order, const int conc)
{
	uint64_t off;

	do {
		off = lrm_folio_alloc_swap(d, cpu, order, 1, LR_PICK(cluster_alloc_swap_entry, conc),
					   conc);
	} while (!off && order == 0 && (d->flags & SL_DEV_DISCARD) &&
		 lrm_swap_do_scheduled_discard(d, conc));
	return off;
}

static uint64_t v6_18_alloc_det(sl_device *d, int cpu, int order)
{
	/* order 0, the common case, built on its own: its scans are memchr() */
	if (order == 0)
		return v6_18_alloc_m(d, cpu, 0, 0);
	return v6_18_alloc_m(d, cpu, order, 0);
}

/* alloc_batch0 (policy.h): n order-0 calls of the above in one. */
static uint64_t v6_18_alloc0_det(sl_device *d, int cpu, int order)
{
	(void)order;
	return v6_18_alloc_m(d, cpu, 0, 0);
}

static void v6_18_alloc_batch0_det(sl_device *d, int cpu, uint32_t n, uint64_t *out)
{
	lrm_alloc_batch0(d, cpu, n, out, 1, v6_18_alloc0_det);
}

static uint64_t v6_18_alloc_conc(sl_device *d, int cpu, int order)
{
	return v6_18_alloc_m(d, cpu, order, 1);
}

/* The halves swapset.c calls with several devices - 6.18. */
LR_INLINE uint64_t v6_18_alloc_fast_m(sl_device *d, int cpu, int order, const int conc)
{
	return lrm_alloc_fast_dev(d, cpu, order, 1, conc);
}
LR_BUILD_BOTH(v6_18_alloc_fast)

LR_INLINE uint64_t v6_18_alloc_slow_m(sl_device *d, int cpu, int order, const int conc)
{
	return lrm_swap_alloc_slow(d, cpu, order, LR_PICK(cluster_alloc_swap_entry, conc), conc);
}
LR_BUILD_BOTH(v6_18_alloc_slow)

/* swap_sync_discard()'s step on one device - 6.18.4+. */
static uint32_t v6_18_sync_discard_det(sl_device *d)
{
	return (d->flags & SL_DEV_DISCARD) ? lrm_swap_do_scheduled_discard(d, 0) : 0;
}

static uint32_t v6_18_sync_discard_conc(sl_device *d)
{
	return (d->flags & SL_DEV_DISCARD) ? lrm_swap_do_scheduled_discard(d, 1) : 0;
}

/* setup_clusters() - 6.18: clusters holding bad slots (the header, the
 * padding) go to nonfull[0]; all others to the free list, ascending. Every
 * device kind: rotational devices use the global cluster, discarding ones
 * the discard list. */
static int v6_18_init(sl_device *d)
{
	sli_setup_clusters(d, 1);
	return 0;
}

/* The table of mode m (lockrework.h). */
#define V6_18_OPS(m)                                                                      \
	.name = "linux-6.18",                                                             \
	.summary = "Linux 6.18: per-CPU cursor, nonfull before free, one frag cluster, order-0 steal", \
	.kernel = "6.18",                                                                 \
	.props = SL_POL_ORDERED_CLUSTERS | SL_POL_SWAPIN_LARGE | SL_POL_SPLIT_ZEROPAGE |  \
		 SL_POL_SPLIT_DESCENDING | SL_POL_CONCURRENT | SL_POL_FREE_UNDER_CI_LOCK, \
	.init = v6_18_init, .alloc = v6_18_alloc_##m, LR_SHARED_OPS(m),                  \
	.alloc_fast = v6_18_alloc_fast_##m, .alloc_slow = v6_18_alloc_slow_##m,            \
	.sync_discard = v6_18_sync_discard_##m

static const sl_policy v6_18_conc = { V6_18_OPS(conc) };
const sl_policy sl_policy_v6_18 = { V6_18_OPS(det), .alloc_batch0 = v6_18_alloc_batch0_det,
				     .concurrent = &v6_18_conc };
