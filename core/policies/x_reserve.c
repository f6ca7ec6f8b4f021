/*
 * x_reserve.c - policy "proposal-reserve": linux-6.18 with the last free
 * clusters kept for mTHP. An order-0 allocation may take a free cluster
 * only while the free list holds more than the reserve; below it, order 0
 * goes to nonfull[0], frag[0] and the steal from higher orders first, and
 * takes a reserved free cluster only when all of those failed, so order-0
 * failures never grow.
 *
 * Kernel range: a proposal over 6.18 (docs/proposals/proposal-reserve.md).
 * The idea is the 2024 talk's own next step and what Android kernels carry
 * as per-order reserve flags at swapon; here it is one number for all mTHP
 * orders: RESERVE_SHIFT gives nr_clusters / 16, at least 1.
 *
 * The change, in cluster_alloc_swap_entry() for order 0 on a solid-state
 * device without discard: "one free cluster" becomes conditional on the
 * free list's length and moves behind the steal. The length is read under
 * the device lock here; the kernel would keep a counter beside the list.
 * Orders above 0, rotational and discarding devices: linux-6.18 unchanged.
 * Everything is linux-6.18 through lockrework.c and v6_18.c otherwise.
 */
#include "swaplab/x_proposal.h"

#define RESERVE_SHIFT 4

static uint32_t reserve_clusters(const sl_device *d)
{
	uint32_t r = d->nr_clusters >> RESERVE_SHIFT;

	return r ? r : 1;
}

static int reserve_applies(const sl_device *d, int order)
{
	return order == 0 && sli_own_order0_dev(d);
}

/* cluster_alloc_swap_entry() for order 0 - 6.18 above the reserve; at or
 * below it: nonfull[0], full-cluster reclaim, one frag[0] cluster, the
 * steal, and only then one (reserved) free cluster. */
LR_INLINE uint64_t reserve_ladder0_m(sl_device *d, int cpu, int order, const int conc)
{
	uint64_t found;

	if (xp_list_len(d, SL_LIST_FREE, conc) > reserve_clusters(d))
		return XP_V6_18(conc)->alloc_slow(d, cpu, order);
	found = lrm_alloc_swap_scan_list(d, cpu, SL_LIST_NONFULL(0), 0, 1, conc);
	if (found)
		return found;
	if (sl_vm_swap_full(d))
		lrm_swap_reclaim_full_clusters(d, conc);
	found = lrm_alloc_swap_scan_list(d, cpu, SL_LIST_FRAG(0), 0, 0, conc);
	if (!found)
		found = lrm_steal_order0(d, cpu, conc);
	if (!found)
		found = lrm_alloc_swap_scan_list(d, cpu, SL_LIST_FREE, 0, 0, conc);
	return found;
}
LR_BUILD_BOTH(reserve_ladder0)

LR_INLINE uint64_t reserve_alloc_m(sl_device *d, int cpu, int order, const int conc)
{
	if (!reserve_applies(d, order))
		return XP_V6_18(conc)->alloc(d, cpu, order);
	return lrm_folio_alloc_swap(d, cpu, order, 1, LR_PICK(reserve_ladder0, conc), conc);
}
LR_BUILD_BOTH(reserve_alloc)

LR_INLINE uint64_t reserve_alloc_slow_m(sl_device *d, int cpu, int order, const int conc)
{
	if (!reserve_applies(d, order))
		return XP_V6_18(conc)->alloc_slow(d, cpu, order);
	return lrm_swap_alloc_slow(d, cpu, order, LR_PICK(reserve_ladder0, conc), conc);
}
LR_BUILD_BOTH(reserve_alloc_slow)

/* The table of mode m (lockrework.h). */
#define RESERVE_OPS(m)                                                                    \
	.name = "proposal-reserve",                                                       \
	.summary = "proposal over 6.18: order 0 takes one of the last free clusters (1/16 of the device) only after its steal failed", \
	.kernel = "",                                                                     \
	.props = XP_PROPS_V6_18,                                                          \
	.alloc = reserve_alloc_##m, .alloc_fast = xp_alloc_fast_##m,                      \
	.alloc_slow = reserve_alloc_slow_##m, XP_SHARED_OPS(m)

static const sl_policy reserve_conc = { RESERVE_OPS(conc) };
const sl_policy sl_policy_proposal_reserve = { RESERVE_OPS(det), .concurrent = &reserve_conc };
