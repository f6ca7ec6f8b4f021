/*
 * swaplab/x_proposal.h - what the proposal policies over linux-6.18
 * (core/policies/x_reuse.c, x_retag.c, x_reserve.c, x_holes.c) share:
 * each is 6.18 with a small change, so everything else calls linux-6.18's own ops (v6_18.c) and the
 * 6.14+ primitives (lockrework.h). Nothing here changes 6.18.
 */
#ifndef SWAPLAB_X_PROPOSAL_H
#define SWAPLAB_X_PROPOSAL_H

#include "swaplab.h"
#include "cluster.h"
#include "locks.h"
#include "lockrework.h"

extern const sl_policy sl_policy_v6_18;

/* linux-6.18's props: a proposal that mixes orders in a cluster drops
 * SL_POL_ORDERED_CLUSTERS (invariant I6's order test). */
#define XP_PROPS_V6_18 (SL_POL_ORDERED_CLUSTERS | SL_POL_SWAPIN_LARGE | SL_POL_SPLIT_ZEROPAGE | \
			SL_POL_SPLIT_DESCENDING | SL_POL_CONCURRENT | SL_POL_FREE_UNDER_CI_LOCK)

/* A list's length, read under the device lock (the kernel would keep it
 * in the list's own counter, as it did for frag lists up to 6.17). */
static inline uint32_t xp_list_len(sl_device *d, int list)
{
	uint32_t n;

	sl_dev_lock(d);
	n = d->list_len[list];
	sl_dev_unlock(d);
	return n;
}

/* linux-6.18's ops, for the ops tables of the proposals. */
static inline int xp_init(sl_device *d)
{
	return sl_policy_v6_18.init(d);
}

static inline uint64_t xp_alloc_fast(sl_device *d, int cpu, int order)
{
	return sl_policy_v6_18.alloc_fast(d, cpu, order);
}

static inline uint32_t xp_sync_discard(sl_device *d)
{
	return sl_policy_v6_18.sync_discard(d);
}

/* Clusters of other orders one failed mTHP allocation may scan (build
 * with -DXP_BUDGET=N to try another bound). */
#ifndef XP_BUDGET
#define XP_BUDGET 8u
#endif

/* The cross-order rung (x_proposal.c): over the frag lists, then the
 * nonfull lists, of every other order (smaller orders ascending, then PMD,
 * then the larger orders ascending), at most XP_BUDGET
 * clusters: isolate the head, look for an aligned hole of 2^order free
 * slots (steps of 2^order, as alloc_swap_scan_cluster()). Found: allocate;
 * with retag a smaller order's or a PMD cluster becomes this order's
 * (frag[order], this CPU's cursor in it), otherwise it keeps its order and
 * list. Not found: back to its list's tail. Returns the slot or 0. */
uint64_t xp_other_orders(sl_device *d, int cpu, int order, int retag);
/* The same with another bound than XP_BUDGET. */
uint64_t xp_other_orders_bounded(sl_device *d, int cpu, int order, int retag, uint32_t budget);
/* mTHP orders below PMD on a block device. */
int xp_other_orders_apply(const sl_device *d, int order);
/* linux-6.18's folio_alloc_swap() (or, several devices, its
 * swap_alloc_slow() step), then - when it failed and the rung applies -
 * the rung under the same rules as the ladder (local lock, not on a full
 * device, the global cluster lock on a rotational one): as if the rung
 * ended cluster_alloc_swap_entry(). */
uint64_t xp_alloc_then(sl_device *d, int cpu, int order, lr_ladder_fn rung);
uint64_t xp_alloc_slow_then(sl_device *d, int cpu, int order, lr_ladder_fn rung);

#endif
