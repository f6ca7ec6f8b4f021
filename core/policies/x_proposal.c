/*
 * x_proposal.c - the rung the cross-order proposals over linux-6.18 share
 * (swaplab/x_proposal.h): proposal-reuse and proposal-retag both end
 * cluster_alloc_swap_entry() with a bounded search for an aligned hole of
 * the folio's size in a cluster another order owns; they differ in what
 * the cluster becomes afterwards.
 */
#include <string.h>
#include "swaplab/x_proposal.h"

/* Every slot of [off, end) free, end a cluster boundary: the bytes up to
 * the next multiple of 8 one by one, then whole words (sli_range_free()
 * reads whole words from its start, which past a start that is not a
 * multiple of 8 would reach into the next cluster). */
static int xp_free_to_end(const sl_device *d, uint64_t off, uint64_t end)
{
	uint64_t a = (off + 7) & ~(uint64_t)7;

	return sli_range_free(d, off, (uint32_t)(a - off)) && sli_range_free(d, a, (uint32_t)(end - a));
}

/* The first aligned run of 2^order free slots in cluster c, or 0. With
 * spare_end, a run in the cluster's untouched end (every slot from it to
 * the cluster's end free) does not count: the first run found there means
 * no run elsewhere, as every later one lies in that end too. */
static uint64_t xp_find_hole(const sl_device *d, uint32_t c, int order, int spare_end)
{
	uint32_t nr = 1u << order;
	uint64_t start = sli_cluster_offset(c), end = start + SL_CLUSTER;

	if (d->ci[c].count + nr > SL_CLUSTER)
		return 0;
	for (uint64_t off = start; off < end; off += nr)
		if (sli_range_free(d, off, nr))
			return spare_end && xp_free_to_end(d, off, end) ? 0 : off;
	return 0;
}

/* Revision 5's test: may an mTHP folio of `order` take a hole in the
 * untouched end of another order's cluster, with `nfree` clusters on the
 * free list (read under the device lock at the rung's start)? */
static int xp_end_lendable(const sl_device *d, int order, uint32_t nfree)
{
	uint32_t seen = atomic_load_explicit(&d->orders_seen, memory_order_relaxed);

	return nfree < XP_TAIL_FREE_LOW && (seen >> (order + 1)) != 0;
}

/* One isolated, locked cluster of another order, taken off `list`; it may
 * be adopted when bit ci->order of `adopt` is set. */
LR_INLINE uint64_t xp_take_hole(sl_device *d, int cpu, uint32_t c, int list, int order, unsigned adopt,
				int spare_end, const int conc)
{
	sl_cluster *ci = &d->ci[c];
	uint64_t found = xp_find_hole(d, c, order, spare_end);

	/* adopt only what its own order cannot use for itself: a smaller
	 * order's cluster (an aligned hole of this size is room it has to
	 * spare) or a PMD cluster (no PMD folio reads nonfull[9] or frag[9]) */
	if (found && ((adopt >> ci->order) & 1u) && (ci->order < order || ci->order == SL_PMD_ORDER)) {
		/* adopt: the cluster becomes this order's, and
		 * alloc_swap_scan_cluster() allocates, relocates it to
		 * frag[order] (or full) and leaves this CPU's cursor in it */
		ci->order = (uint8_t)order;
		return lrm_alloc_swap_scan_cluster(d, cpu, c, found, order, conc);
	}
	if (found)
		sli_alloc_range_m(d, found, order, conc); /* cluster_alloc_range() */
	/* the cluster keeps its order and goes back where it was */
	if (ci->count == SL_CLUSTER)
		lrm_move_cluster(d, c, SL_LIST_FULL, SL_CF_FULL, conc);
	else
		lrm_move_cluster(d, c, list, list == SL_LIST_FRAG(ci->order) ? SL_CF_FRAG : SL_CF_NONFULL,
				 conc);
	sl_ci_unlock_m(conc, d, c);
	return found;
}

/* The orders whose clusters the rung visits, for a folio of `order`: the
 * smaller orders first (their clusters' aligned holes of this size are
 * spare room for them too), then PMD (nonfull[9] and frag[9] serve no PMD
 * folio: only order 0 steals from them), the larger orders last (a hole
 * taken there is one fewer for their own folios). */
static int xp_visit_order(int order, int i)
{
	if (i < order)
		return i;
	if (i == order)
		return SL_PMD_ORDER;
	return i; /* order + 1 .. SL_PMD_ORDER - 1 */
}

LR_INLINE uint64_t xp_other_orders_m(sl_device *d, int cpu, int order, unsigned adopt, uint32_t budget,
				     int spare, const int conc)
{
	uint32_t len[SL_NR_LISTS];
	int spare_end;

	/* every list visited at most once per cluster it held at the start */
	sl_dev_lock_m(conc, d);
	memcpy(len, d->list_len, sizeof(len));
	sl_dev_unlock_m(conc, d);
	spare_end = spare && !xp_end_lendable(d, order, len[SL_LIST_FREE]);
	for (int pass = 0; pass < 2; pass++) {
		for (int i = 0; i < SL_PMD_ORDER; i++) {
			int o = xp_visit_order(order, i);
			int list = pass ? SL_LIST_NONFULL(o) : SL_LIST_FRAG(o);

			for (uint32_t n = len[list]; n && budget; n--, budget--) {
				uint32_t c = lrm_isolate_lock_cluster(d, list, conc);
				if (c == SL_NIL)
					break;
				uint64_t found = xp_take_hole(d, cpu, c, list, order, adopt, spare_end, conc);
				if (found)
					return found;
			}
			if (!budget)
				return 0;
		}
	}
	return 0;
}

uint64_t xp_other_orders(sl_device *d, int cpu, int order, int retag, uint32_t budget, int conc)
{
	return xp_other_orders_adopt(d, cpu, order, retag ? XP_ADOPT_ALL : 0, budget, conc);
}

uint64_t xp_other_orders_adopt(sl_device *d, int cpu, int order, unsigned adopt, uint32_t budget,
			       int conc)
{
	if (conc)
		return xp_other_orders_m(d, cpu, order, adopt, budget, 0, 1);
	return xp_other_orders_m(d, cpu, order, adopt, budget, 0, 0);
}

uint64_t xp_other_orders_spare(sl_device *d, int cpu, int order, unsigned adopt, uint32_t budget,
			       int conc)
{
	if (conc)
		return xp_other_orders_m(d, cpu, order, adopt, budget, 1, 1);
	return xp_other_orders_m(d, cpu, order, adopt, budget, 1, 0);
}

/* The cursor of another CPU, read once (x_proposal.h). */
static inline uint64_t xp_cursor_peek(const sl_device *d, int cpu, int order, int conc)
{
	const uint64_t *cur = &d->cursor[cpu * SL_CURSOR_STRIDE + order];

	return conc ? __atomic_load_n(cur, __ATOMIC_RELAXED) : *cur;
}

LR_INLINE uint32_t xp_handed_cluster_m(sl_device *d, int cpu, int order, uint64_t *hole,
				       const int conc)
{
	/* lrm_handoff() gives mTHP ranges only to the percpu cursors of a
	 * solid-state block device without discard (sli_own_order0_dev()),
	 * and only where it is swap's one device */
	if (!sli_own_order0_dev(d) || (d->set && d->set->nr > 1))
		return SL_NIL;
	for (int i = 0; i < d->nr_cpus; i++) {
		for (int k = 1; k <= SL_KEEP_HANDOFF_MAX_ORDER; k++) {
			uint64_t off = xp_cursor_peek(d, i, k, conc), h;
			if (!off || (i == cpu && k == order) || off >= d->max)
				continue;
			uint32_t c = sli_cluster_of(off);
			const sl_cluster *ci = &d->ci[c];
			sl_ci_lock_m(conc, d, c);
			if (ci->flags == SL_CF_FULL && ci->order == k && (h = xp_find_hole(d, c, order, 0))) {
				sli_stats_m(d, conc)->handoff_takes++;
#ifdef XP_HANDED_COUNT_ONLY
				/* measurement build: count the allocations that fail
				 * with such a range in reach, take nothing (revision 4
				 * as it was) */
				sl_ci_unlock_m(conc, d, c);
				return SL_NIL;
#endif
				*hole = h;
				return c;
			}
			sl_ci_unlock_m(conc, d, c);
		}
	}
	return SL_NIL;
}

uint32_t xp_handed_cluster(sl_device *d, int cpu, int order, uint64_t *hole, int conc)
{
	if (conc)
		return xp_handed_cluster_m(d, cpu, order, hole, 1);
	return xp_handed_cluster_m(d, cpu, order, hole, 0);
}

LR_INLINE uint64_t xp_take_handed_m(sl_device *d, int cpu, int order, const int conc)
{
	uint64_t h = 0;
	uint32_t c = xp_handed_cluster_m(d, cpu, order, &h, conc);

	SL_ASSERT(order > 0);
	if (c == SL_NIL)
		return 0;
	sl_cluster *ci = &d->ci[c];
	if (ci->order <= order) {
		/* its own order's, or a smaller order's cluster, adopted as the
		 * rung adopts: alloc_swap_scan_cluster() allocates from the
		 * hole, relocates the cluster (full, or frag[order]) and leaves
		 * this CPU's cursor there */
		ci->order = (uint8_t)order;
		return lrm_alloc_swap_scan_cluster(d, cpu, c, h, order, conc);
	}
	/* a larger order's: it keeps its order */
	sli_alloc_range_m(d, h, order, conc); /* cluster_alloc_range() */
	if (ci->count < SL_CLUSTER)
		lrm_move_cluster(d, c, SL_LIST_NONFULL(ci->order), SL_CF_NONFULL, conc);
	sl_ci_unlock_m(conc, d, c);
	return h;
}

uint64_t xp_take_handed(sl_device *d, int cpu, int order, int conc)
{
	if (conc)
		return xp_take_handed_m(d, cpu, order, 1);
	return xp_take_handed_m(d, cpu, order, 0);
}

int xp_other_orders_apply(const sl_device *d, int order)
{
	return order > 0 && order < SL_PMD_ORDER && (d->flags & SL_DEV_BLKDEV);
}
