/*
 * x_holes_first.c - policy "proposal-holes-first": proposal-holes, where a
 * small mTHP folio takes an aligned hole before it splits a free cluster.
 *
 * linux-6.18's cluster_alloc_swap_entry() gives an mTHP folio with no room
 * in nonfull_clusters[order] a whole free cluster, and looks at its own
 * frag_clusters[order] (and, under proposal-holes, at other orders'
 * aligned holes) only when the free list is empty. With several sizes
 * enabled that spends the free clusters early on the small sizes, whose
 * folios fit into holes other clusters already have; the larger sizes then
 * find no free cluster and fall back. Here, for orders 1..HF_MAX_ORDER
 * (16K-64K), the ladder splits a free cluster for the order only when no
 * aligned hole of the folio's size is left within reach:
 *
 *   nonfull[order] -> frag[order] -> other orders' holes (proposal-holes'
 *   rung: up to 64 clusters, adopting a smaller mTHP order's or a PMD
 *   cluster, never an order-0 cluster) -> a free cluster -> the
 *   full-cluster reclaim of vm_swap_full()
 *
 * (a discarding device still takes a discarded free cluster first, as in
 * 6.18). A hole in an order-0 cluster is taken, but the cluster stays
 * order 0's, on its list (revision 2): the first revision adopted it, and
 * order 0, left without clusters of its own, then stole single slots from
 * the mTHP clusters and broke the aligned holes the folios needed next (64K
 * with {32K,64K,128K} enabled went from 2.1 to 8.5 % fallback, 64K alone
 * from 0 to 1.2 %). Orders above 64K, order 0 and the fast path are
 * proposal-holes unchanged: the larger sizes keep the free clusters the
 * small ones now leave them. docs/proposals/proposal-holes-first.md has the
 * measurements behind both choices (the 64K limit, the order-0 rule).
 *
 * Revision 3 (SL_POL_KEEP_FULL0, lockrework_body.h lrm_keep_full0()):
 * while swap is plentiful, a free that leaves a full order-0 cluster with
 * fewer than 32 free slots keeps it on the full list, so uniform order-0
 * churn takes si->lock about once per 11 pairs instead of three times a
 * pair; order 0 takes the kept slots back before it steals (x_holes.c
 * holes_kept0()).
 *
 * Revision 4 (lockrework_body.h lrm_handoff()): a free that leaves a full
 * cluster with a hole gives the freed range to the freeing CPU's idle
 * cursor of the cluster's order (order 0, and 1..4 here on one block
 * device; a solid-state block device without discard only, where order 0
 * is proposal-holes' own: sli_own_order0_dev()), and this policy's fast
 * paths (LR_KEEP) let the cursor into the
 * full cluster; no list move, no si->lock, at any fill. A range its CPU
 * does not take is taken by an allocation that would fail otherwise: the
 * end of the ladder below, and order 0 after its steal
 * (x_proposal.c xp_handed_cluster(): every CPU's cursors of orders 1..4,
 * each tested under its cluster's lock).
 *
 * Revision 6 (lrm_handoff(), x_holes.c holes_alloc_fast0()): an order-0
 * free also hands its slot to the CPU's idle cursor when it leaves an
 * order-0 cluster on nonfull[0] or frag[0] with at most SL_HANDOFF0_SLOTS
 * (8) free slots, and the fast path takes a handed slot alone - no list
 * move unless it fills the cluster, the cursor idle afterwards. Without
 * it the free slots left outside free clusters after a fill sit one or
 * two a cluster on nonfull[0], every free that lands there sends the
 * next allocation down the ladder (isolate, relocate), and with several
 * CPUs at high fill most pairs took si->lock (0.8 a pair at 4 CPUs).
 *
 * Kernel range: a proposal over 6.18 (docs/proposals/proposal-holes-first.md).
 * In mm/swapfile.c terms: for 0 < order <= 4 on a block device,
 * cluster_alloc_swap_entry() scans frag_clusters[order] and then the rung
 * before free_clusters instead of after it, and the rung leaves ci->order
 * of an order-0 cluster alone; every step is 6.18's own
 * (isolate_lock_cluster(), alloc_swap_scan_cluster(), the device lock for
 * list moves only) or proposal-holes' bounded rung. Per-CPU cursors and
 * swap_alloc_fast() are unchanged.
 */
#include "swaplab/swaplab.h"
#include "swaplab/cluster.h"
#include "swaplab/lockrework.h"
#include "swaplab/x_proposal.h"

extern const sl_policy sl_policy_proposal_holes;

/* The largest order that looks for holes before a free cluster:
 * HF_MAX_ORDER (x_proposal.h, 4: 64K). */
/* Clusters of other orders the rung may scan, as proposal-holes. */
#define HF_BUDGET 64u
/* The orders whose clusters the rung may adopt (bit o: order o): all but
 * order 0 (xp_other_orders_adopt()). */
#define HF_ADOPT (XP_ADOPT_ALL & ~1u)

/* 0 < order <= HF_MAX_ORDER on a block device (xp_other_orders_apply()
 * for these orders, tested here first: order 0 goes straight on). */
static inline int hf_applies(const sl_device *d, int order)
{
	return order > 0 && order <= HF_MAX_ORDER && (d->flags & SL_DEV_BLKDEV);
}

/* proposal-holes' table of the mode conc. */
#define HF_HOLES(conc) ((conc) ? sl_policy_proposal_holes.concurrent : &sl_policy_proposal_holes)

/* cluster_alloc_swap_entry() for 0 < order <= HF_MAX_ORDER on a block
 * device: 6.18's steps, frag[order] and the rung moved before the free
 * list. Built once per mode (lockrework.h). */
LR_INLINE uint64_t hf_ladder_m(sl_device *d, int cpu, int order, const int conc)
{
	int discard = (d->flags & SL_DEV_DISCARD) != 0;
	uint64_t found;

	/* a rotational device's global cluster */
	if (lrm_ladder_head(d, order, 1, &found, conc))
		return found;
	/* a discarding device prefers a free (already discarded) cluster */
	if (discard && (found = lrm_alloc_swap_scan_list(d, cpu, SL_LIST_FREE, order, 0, conc)))
		return found;
	if ((found = lrm_alloc_swap_scan_list(d, cpu, SL_LIST_NONFULL(order), order, 1, conc)))
		return found;
	/* the holes: one fragmented cluster of this order, then other orders'
	 * (an order-0 cluster lends its hole and stays order 0's) */
	if ((found = lrm_alloc_swap_scan_list(d, cpu, SL_LIST_FRAG(order), order, 0, conc)))
		return found;
	if ((found = xp_other_orders_spare(d, cpu, order, HF_ADOPT, HF_BUDGET, conc)))
		return found;
	/* no hole within reach: split a free cluster */
	if (!discard && (found = lrm_alloc_swap_scan_list(d, cpu, SL_LIST_FREE, order, 0, conc)))
		return found;
	if (sl_vm_swap_full(d))
		lrm_swap_reclaim_full_clusters(d, conc);
	/* before the folio falls back: a range a free handed to a CPU's
	 * cursor that has not taken it (xp_take_handed()) */
	return xp_take_handed(d, cpu, order, conc);
}
LR_BUILD_BOTH(hf_ladder)

/* folio_alloc_swap() - 6.18 (one device). */
LR_INLINE uint64_t hf_alloc_m(sl_device *d, int cpu, int order, const int conc)
{
	xp_note_order(d, order);
	if (hf_applies(d, order))
		return lrm_folio_alloc_swap(d, cpu, order, LR_TABLE | LR_KEEP, LR_PICK(hf_ladder, conc), conc);
	return HF_HOLES(conc)->alloc(d, cpu, order);
}
LR_BUILD_BOTH(hf_alloc)

/* The halves swapset.c calls with several devices. */
LR_INLINE uint64_t hf_alloc_fast_m(sl_device *d, int cpu, int order, const int conc)
{
	return HF_HOLES(conc)->alloc_fast(d, cpu, order);
}
LR_BUILD_BOTH(hf_alloc_fast)

LR_INLINE uint64_t hf_alloc_slow_m(sl_device *d, int cpu, int order, const int conc)
{
	xp_note_order(d, order);
	if (hf_applies(d, order))
		return lrm_swap_alloc_slow(d, cpu, order, LR_PICK(hf_ladder, conc), conc);
	return HF_HOLES(conc)->alloc_slow(d, cpu, order);
}
LR_BUILD_BOTH(hf_alloc_slow)

/* The table of mode m (lockrework.h). */
#define HF_OPS(m)                                                                         \
	.name = "proposal-holes-first",                                                   \
	.summary = "proposal over proposal-holes: 16K-64K folios take frag and other orders' aligned holes before a free cluster; order-0 clusters keep their order", \
	.kernel = "",                                                                     \
	.props = (XP_PROPS_V6_18 & ~SL_POL_ORDERED_CLUSTERS) | SL_POL_KEEP_FULL0,         \
	.alloc = hf_alloc_##m, .alloc_fast = hf_alloc_fast_##m,                           \
	.alloc_slow = hf_alloc_slow_##m, XP_SHARED_OPS(m)

static const sl_policy hf_conc = { HF_OPS(conc) };
const sl_policy sl_policy_proposal_holes_first = { HF_OPS(det), .concurrent = &hf_conc };
