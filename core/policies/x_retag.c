/*
 * x_retag.c - policy "proposal-retag": linux-6.18 plus one rung at the end
 * of cluster_alloc_swap_entry(): an mTHP folio that found no cluster of its
 * own order takes an aligned hole of its size in a cluster another order
 * owns, and adopts that cluster when its old order has no use for the room:
 * a smaller order's cluster or a PMD cluster (no PMD folio reads nonfull[9]
 * or frag[9]). The adopted cluster's order becomes the folio's, it goes to
 * frag[order], and this CPU's cursor continues in it. A larger mTHP order's
 * cluster keeps its order and list (as in proposal-reuse).
 *
 * Kernel range: a proposal over 6.18 (docs/proposals/proposal-retag.md).
 * The search is proposal-reuse's (xp_other_orders() in x_proposal.c, with
 * retag); the difference is what follows a hit: the next folios of this
 * order take the adopted cluster's remaining holes through the O(1) fast
 * path (cluster_is_usable() now accepts it) instead of each searching
 * again, and the old order loses the cluster (order 0 can still use it: the
 * fast path and the steal take any cluster for order 0). The entries the
 * cluster already holds stay where they are; only ci->order changes, under
 * the cluster lock, and the list move takes the device lock as 6.18's do.
 * Everything else is linux-6.18 (v6_18.c, lockrework.c).
 */
#include "swaplab/x_proposal.h"

LR_INLINE uint64_t retag_rung_m(sl_device *d, int cpu, int order, const int conc)
{
	return xp_other_orders(d, cpu, order, 1, XP_BUDGET, conc);
}
XP_RUNG_OPS(retag)

/* The table of mode m (lockrework.h). */
#define RETAG_OPS(m) \
	.name = "proposal-retag", \
	.summary = "proposal over 6.18: an mTHP folio with no cluster of its order takes an aligned hole elsewhere and adopts a smaller order's or a PMD cluster", \
	.kernel = "", \
	.props = XP_PROPS_V6_18 & ~SL_POL_ORDERED_CLUSTERS, \
	.alloc = retag_alloc_##m, \
	.alloc_fast = xp_alloc_fast_##m, \
	.alloc_slow = retag_alloc_slow_##m, \
	XP_SHARED_OPS(m)

static const sl_policy retag_conc = { RETAG_OPS(conc) };
const sl_policy sl_policy_proposal_retag = { RETAG_OPS(det), .concurrent = &retag_conc };
