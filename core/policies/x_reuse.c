/*
 * x_reuse.c - policy "proposal-reuse": linux-6.18 plus one rung at the end
 * of cluster_alloc_swap_entry(): an mTHP folio that found no cluster of its
 * own order (nonfull[order], one free cluster, one frag[order] cluster)
 * takes an aligned hole of its size in a cluster another order owns, before
 * it falls back. The cluster keeps its order and its list.
 *
 * Kernel range: a proposal over 6.18 (docs/proposals/proposal-reuse.md).
 * Why (docs/findings/mixed-size-fallback.md): with several mTHP sizes the
 * free list runs dry while the free space sits in clusters other orders own
 * (order 0 after fallback splits, order 9 after a PMD warm-up); 6.18 lets
 * order 0 steal from every order's clusters but never an mTHP order, so it
 * falls back with aligned holes to spare.
 *
 * The rung (xp_other_orders() in x_proposal.c, without retag): frag lists,
 * then nonfull lists of every other order, at most XP_BUDGET clusters, each
 * isolated (isolate_lock_cluster()), scanned in steps of 2^order and put
 * back at its list's tail (or on full). The fast path still refuses the
 * cluster for this order (cluster_is_usable()), so per-CPU cursors and the
 * O(1) fast path are 6.18's; every reuse goes through the slow path.
 * Locks as 6.18: the cluster lock while scanning, the device lock for list
 * moves only. Everything else is linux-6.18 (v6_18.c, lockrework.c).
 */
#include "swaplab/x_proposal.h"

LR_INLINE uint64_t reuse_rung_m(sl_device *d, int cpu, int order, const int conc)
{
	return xp_other_orders(d, cpu, order, 0, XP_BUDGET, conc);
}
XP_RUNG_OPS(reuse)

/* The table of mode m (lockrework.h). */
#define REUSE_OPS(m) \
	.name = "proposal-reuse", \
	.summary = "proposal over 6.18: an mTHP folio with no cluster of its order takes an aligned hole in another order's cluster", \
	.kernel = "", \
	.props = XP_PROPS_V6_18 & ~SL_POL_ORDERED_CLUSTERS, \
	.alloc = reuse_alloc_##m, \
	.alloc_fast = xp_alloc_fast_##m, \
	.alloc_slow = reuse_alloc_slow_##m, \
	XP_SHARED_OPS(m)

static const sl_policy reuse_conc = { REUSE_OPS(conc) };
const sl_policy sl_policy_proposal_reuse = { REUSE_OPS(det), .concurrent = &reuse_conc };
