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
#include "lockrework_body.h"

extern const sl_policy sl_policy_v6_18;

/* linux-6.18's table of the mode conc (its deterministic or its concurrent
 * build, lockrework.h). */
#define XP_V6_18(conc) ((conc) ? sl_policy_v6_18.concurrent : &sl_policy_v6_18)

/* linux-6.18's props: a proposal that mixes orders in a cluster drops
 * SL_POL_ORDERED_CLUSTERS (invariant I6's order test). */
#define XP_PROPS_V6_18 (SL_POL_ORDERED_CLUSTERS | SL_POL_SWAPIN_LARGE | SL_POL_SPLIT_ZEROPAGE | \
			SL_POL_SPLIT_DESCENDING | SL_POL_CONCURRENT | SL_POL_FREE_UNDER_CI_LOCK)

/* A list's length, read under the device lock (the kernel would keep it
 * in the list's own counter, as it did for frag lists up to 6.17). */
LR_INLINE uint32_t xp_list_len(sl_device *d, int list, const int conc)
{
	uint32_t n;

	sl_dev_lock_m(conc, d);
	n = d->list_len[list];
	sl_dev_unlock_m(conc, d);
	return n;
}

/* linux-6.18's ops, for the ops tables of the proposals, in each mode. */
static inline int xp_init(sl_device *d)
{
	return sl_policy_v6_18.init(d);
}

static inline uint64_t xp_alloc_fast_det(sl_device *d, int cpu, int order)
{
	return sl_policy_v6_18.alloc_fast(d, cpu, order);
}

static inline uint64_t xp_alloc_fast_conc(sl_device *d, int cpu, int order)
{
	return sl_policy_v6_18.concurrent->alloc_fast(d, cpu, order);
}

static inline uint32_t xp_sync_discard_det(sl_device *d)
{
	return sl_policy_v6_18.sync_discard(d);
}

static inline uint32_t xp_sync_discard_conc(sl_device *d)
{
	return sl_policy_v6_18.concurrent->sync_discard(d);
}

/* The ops a proposal's table of mode m takes from linux-6.18 unchanged. */
#define XP_SHARED_OPS(m) .init = xp_init, LR_SHARED_OPS(m), .sync_discard = xp_sync_discard_##m

/* Clusters of other orders one failed mTHP allocation may scan (build
 * with -DXP_BUDGET=N to try another bound). */
#ifndef XP_BUDGET
#define XP_BUDGET 8u
#endif

/* The cross-order rung (x_proposal.c): over the frag lists, then the
 * nonfull lists, of every other order (smaller orders ascending, then PMD,
 * then the larger orders ascending), at most `budget` (XP_BUDGET)
 * clusters: isolate the head, look for an aligned hole of 2^order free
 * slots (steps of 2^order, as alloc_swap_scan_cluster()). Found: allocate;
 * with retag a smaller order's or a PMD cluster becomes this order's
 * (frag[order], this CPU's cursor in it), otherwise it keeps its order and
 * list. Not found: back to its list's tail. Returns the slot or 0. In the
 * mode conc (the build of the caller's table). */
uint64_t xp_other_orders(sl_device *d, int cpu, int order, int retag, uint32_t budget, int conc);
/* The same with retag per order: a cluster of order o may be adopted (if
 * smaller than `order` or PMD) only when bit o of `adopt` is set
 * (XP_ADOPT_ALL: retag; 0: none, as without retag). */
#define XP_ADOPT_ALL (~0u)
uint64_t xp_other_orders_adopt(sl_device *d, int cpu, int order, unsigned adopt, uint32_t budget,
			       int conc);
/* The same, sparing the clusters' untouched ends (proposal-holes-first
 * revision 5): a hole in the untouched end of another order's cluster
 * (every slot from it to the cluster's end free) is taken only while fewer
 * than XP_TAIL_FREE_LOW clusters are free and a folio of an order larger
 * than this one has asked the device for a slot (d->orders_seen): only
 * then does the free cluster it saves have a taker. */
#define XP_TAIL_FREE_LOW 4u
/* proposal-holes-first: the largest order that looks for holes before a
 * free cluster (4: 64K; x_holes_first.c). proposal-compact's move bound
 * treats the orders above it apart (x_compact.c cp_max_moves()). */
#define HF_MAX_ORDER 4
uint64_t xp_other_orders_spare(sl_device *d, int cpu, int order, unsigned adopt, uint32_t budget,
			       int conc);
/* Record that a folio of `order` asked device d for a slot (revision 5):
 * one relaxed load, and a store only the first time per order. Order 0
 * is not recorded: the test reads the bits above a folio of order >= 1,
 * so order 0's allocations pay nothing. */
static inline void xp_note_order(sl_device *d, int order)
{
	if (!order)
		return;
	uint32_t seen = atomic_load_explicit(&d->orders_seen, memory_order_relaxed);

	if (!(seen & (1u << order)))
		atomic_fetch_or_explicit(&d->orders_seen, 1u << order, memory_order_relaxed);
}
/* SL_POL_KEEP_FULL0 (proposal-holes-first revision 4): a range that
 * lrm_handoff() gave to a CPU's cursor of order k (1..SL_KEEP_HANDOFF_MAX_ORDER)
 * sits in a cluster on the full list, which no list search finds; should
 * that CPU not allocate at order k again, it is stranded. Before an
 * allocation of `order` on `cpu` fails, this looks at every CPU's cursors
 * of those orders - not cpu's own of `order`, which its fast path has just
 * tried - at most nr_cpus * SL_KEEP_HANDOFF_MAX_ORDER of them, each read
 * once (the kernel's READ_ONCE() of another CPU's percpu offset) and only
 * trusted under the cluster lock: a full cluster of the cursor's order
 * with an aligned free range of 2^order slots. Returns that cluster,
 * locked, with the range in *hole, or SL_NIL. The other CPU's cursor is
 * left as it is: its fast path tests the cluster under the lock, as for
 * any cursor whose cluster others filled. handoff_takes counts a cluster
 * returned (built with -DXP_HANDED_COUNT_ONLY: counted, unlocked, and
 * SL_NIL returned, revision 4 as it was). In the mode conc. */
uint32_t xp_handed_cluster(sl_device *d, int cpu, int order, uint64_t *hole, int conc);
/* The step for 0 < order <= SL_KEEP_HANDOFF_MAX_ORDER: such a range taken,
 * as proposal-holes-first's rung takes a hole (a smaller order's cluster
 * is adopted, a larger order's keeps its order; a cluster left with free
 * slots goes where 6.18's free would have put it, nonfull[its order]), or
 * 0. */
uint64_t xp_take_handed(sl_device *d, int cpu, int order, int conc);
/* mTHP orders below PMD on a block device. */
int xp_other_orders_apply(const sl_device *d, int order);

/* linux-6.18's folio_alloc_swap() (or, several devices, its
 * swap_alloc_slow() step), then - when it failed and the rung applies -
 * the rung under the same rules as the ladder (local lock, not on a full
 * device, the global cluster lock on a rotational one): as if the rung
 * ended cluster_alloc_swap_entry(). Built for one mode; `rung` is of the
 * same mode. */
LR_INLINE uint64_t xp_alloc_then(sl_device *d, int cpu, int order, lr_ladder_fn rung,
				 const int conc)
{
	uint64_t off = XP_V6_18(conc)->alloc(d, cpu, order);

	if (!off && xp_other_orders_apply(d, order)) {
		sl_local_lock_m(conc, d, cpu);
		off = lrm_swap_alloc_slow(d, cpu, order, rung, conc);
		sl_local_unlock_m(conc, d, cpu);
	}
	return off;
}

LR_INLINE uint64_t xp_alloc_slow_then(sl_device *d, int cpu, int order, lr_ladder_fn rung,
				      const int conc)
{
	uint64_t off = XP_V6_18(conc)->alloc_slow(d, cpu, order);

	if (!off && xp_other_orders_apply(d, order))
		off = lrm_swap_alloc_slow(d, cpu, order, rung, conc);
	return off;
}

/* A proposal whose change is the rung alone (reuse, retag): its alloc and
 * alloc_slow ops of both modes, NAME_alloc_det ... NAME_alloc_slow_conc,
 * from its rung NAME_rung_m(d, cpu, order, conc). */
#define XP_RUNG_OPS(name)                                                                   \
	LR_BUILD_BOTH(name##_rung)                                                          \
	LR_INLINE uint64_t name##_alloc_m(sl_device *d, int cpu, int order, const int conc) \
	{                                                                                   \
		return xp_alloc_then(d, cpu, order, LR_PICK(name##_rung, conc), conc);      \
	}                                                                                   \
	LR_BUILD_BOTH(name##_alloc)                                                         \
	LR_INLINE uint64_t name##_alloc_slow_m(sl_device *d, int cpu, int order,           \
					       const int conc)                              \
	{                                                                                   \
		return xp_alloc_slow_then(d, cpu, order, LR_PICK(name##_rung, conc), conc); \
	}                                                                                   \
	LR_BUILD_BOTH(name##_alloc_slow)

#endif
