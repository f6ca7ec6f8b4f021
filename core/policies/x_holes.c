/*
 * x_holes.c - policy "proposal-holes": linux-6.18 where aligned holes are
 * found and kept. Two changes, one per side of the mixed-size problem:
 *
 *  1. mTHP (orders 1..8): proposal-retag's rung at the end of
 *     cluster_alloc_swap_entry() - an aligned hole of the folio's size in a
 *     cluster another order owns, adopting a smaller order's or a PMD
 *     cluster - with a bound of HOLES_BUDGET clusters instead of XP_BUDGET
 *     (8 misses the holes of the larger mTHP orders: 256K takes 80 % ->
 *     0 % on thp-swap -a -s 16K-1M at 64 MiB, docs/proposals/proposal-holes.md).
 *  2. order 0 spares whole aligned holes in other orders' clusters: where
 *     6.18 takes the first free slot of such a cluster - the order-0 steal
 *     from frag[o]/nonfull[o], and the order-0 fast path when this CPU's
 *     order-0 cursor sits in a cluster of order o > 0 after a steal - it
 *     takes the first free slot inside an aligned block of 2^o slots that
 *     is already partly used, and the first free slot only when every
 *     block with room is whole. One slot is taken from the same cluster,
 *     so an order-0 allocation fails exactly when 6.18's would in the same
 *     state; only which slot changes.
 *
 * Kernel range: a proposal over 6.18 (docs/proposals/proposal-holes.md).
 * In mm/swapfile.c terms: (1) is the rung of proposal-retag with a larger
 * bound; (2) changes the starting offset alloc_swap_scan_cluster() is given
 * for order 0 in a cluster whose ci->order is not 0 (swap_alloc_fast() and
 * the steal at the end of cluster_alloc_swap_entry()). Each pick is one
 * walk over the cluster's slot map under the cluster lock (at most
 * SWAPFILE_CLUSTER slots, as alloc_swap_scan_cluster()'s own scan); lists
 * move under the device lock as in 6.18. Order 0 on a rotational, a
 * discarding or a non-block device, orders 9 and above: linux-6.18
 * unchanged.
 */
#include "swaplab/x_proposal.h"

/* Clusters of other orders one failed mTHP allocation may scan (build
 * with -DHOLES_BUDGET=N to try another bound). */
#ifndef HOLES_BUDGET
#define HOLES_BUDGET 64u
#endif

/* The slot order 0 takes in cluster c (ci->order = o > 0) from `from` on:
 * the first free slot in an aligned block of 2^o slots that is not wholly
 * free, else the first free slot, else 0. Cluster locked. */
static uint64_t holes_pick0(const sl_device *d, uint32_t c, int o, uint64_t from)
{
	uint32_t nr = 1u << o;
	uint64_t end = sli_cluster_offset(c) + SL_CLUSTER, first = 0;

	SL_ASSERT(o > 0 && sli_cluster_of(from) == c);
	if (end > d->max)
		end = d->max; /* the last cluster's padding */
	for (uint64_t b = from & ~(uint64_t)(nr - 1); b < end; b += nr) {
		uint64_t be = b + nr < end ? b + nr : end;
		uint64_t f = sli_find_free(d, b > from ? b : from, be);

		if (f == be)
			continue; /* no room in this block */
		if (be - b < nr || !sli_range_free(d, b, nr))
			return f; /* an already broken block */
		if (!first)
			first = f; /* a whole aligned hole: keep it if we can */
	}
	return first;
}

/* Where alloc_swap_scan_cluster() starts for order 0 in a locked cluster. */
static uint64_t holes_start0(const sl_device *d, uint32_t c, uint64_t off)
{
	const sl_cluster *ci = &d->ci[c];
	uint64_t f;

	if (ci->count == 0)
		return sli_cluster_offset(c);
	if (ci->order > 0 && (f = holes_pick0(d, c, ci->order, off)))
		return f;
	return off;
}

/* SL_POL_KEEP_FULL0 (proposal-holes-first revision 6): the slot a free
 * handed to this CPU's cursor (lrm_handoff()), free, in locked order-0
 * cluster c, taken alone: the cluster stays on its list - the full list,
 * nonfull[0] or frag[0] - unless the slot fills it (then to the full
 * list), and the cursor is left idle, so that this CPU's next free can
 * hand its slot over again. alloc_swap_scan_cluster() would move a
 * cluster left with free slots to frag[0] (a device-lock round) and keep
 * the cursor in it. Drops the cluster lock. */
LR_INLINE uint64_t holes_take_handed_alone(sl_device *d, int cpu, uint32_t c, uint64_t off,
					   const int conc)
{
	lrm_cluster_alloc_range(d, c, off, 0, conc);
	if (d->ci[c].count == SL_CLUSTER)
		lrm_relocate_cluster(d, c, conc);
	sl_ci_unlock_m(conc, d, c);
	lrm_cursor_store(sli_cursor(d, cpu, 0), 0, conc);
	if (d->set)
		d->set->pcp_si[cpu * SL_NR_ORDERS] = (int8_t)d->type;
	sli_stats_m(d, conc)->alloc_fast[0]++;
	return off;
}

/* swap_alloc_fast()'s step for order 0 from this CPU's cursor `off` - 6.18
 * but for the starting slot. */
LR_INLINE uint64_t holes_fast0_scan(sl_device *d, int cpu, uint64_t off, const int conc)
{
	uint32_t c = sli_cluster_of(off);

	sl_ci_lock_m(conc, d, c);
	/* LR_KEEP: proposal-holes-first's kept slots and hand-offs (here
	 * proposal-holes has neither, so it changes nothing for it) */
	if (!lrm_cluster_is_usable(&d->ci[c], 0, LR_TABLE | LR_KEEP)) {
		sl_ci_unlock_m(conc, d, c);
		return 0;
	}
	off = lrm_alloc_swap_scan_cluster(d, cpu, c, holes_start0(d, c, off), 0, conc);
	if (off)
		sli_stats_m(d, conc)->alloc_fast[0]++;
	return off;
}

/* SL_POL_KEEP_FULL0 (revision 6): the fast path with the mark of a
 * hand-off set (sli_handed0()): the mark is cleared, and the slot taken
 * alone when the cursor still names it, it is free and its cluster is
 * still on the full list or nearly full. Returns 0 otherwise (another CPU
 * took the slot, or more frees came): the scan follows as without a mark.
 * Out of line, so that the fast path without a mark - every allocation of
 * a policy without hand-offs - stays as it was. */
static __attribute__((noinline)) uint64_t holes_fast0_handed(sl_device *d, int cpu, uint64_t off,
							     const int conc)
{
	uint64_t *mark = sli_handed0(d, cpu), handed = *mark;
	uint32_t c = sli_cluster_of(off);
	const sl_cluster *ci = &d->ci[c];

	*mark = 0;
	if (handed != off)
		return 0;
	sl_ci_lock_m(conc, d, c);
	if (lrm_cluster_is_usable(ci, 0, LR_TABLE | LR_KEEP) && ci->order == 0 &&
	    sli_range_free(d, off, 1) &&
	    (ci->flags == SL_CF_FULL || ci->count >= SL_CLUSTER - SL_HANDOFF0_SLOTS))
		return holes_take_handed_alone(d, cpu, c, off, conc);
	sl_ci_unlock_m(conc, d, c);
	return 0;
}

/* swap_alloc_fast() for order 0: a slot this CPU's free handed over taken
 * alone, or the scan from this CPU's cursor. */
LR_INLINE uint64_t holes_alloc_fast0(sl_device *d, int cpu, const int conc)
{
	uint64_t *cur = sli_cursor(d, cpu, 0), off = *cur, got;

	if (!off)
		return 0;
	/* the mark, sli_handed0(): the same CPU row (a solid-state device) */
	SL_ASSERT(cur + SL_NR_ORDERS == sli_handed0(d, cpu));
	if (cur[SL_NR_ORDERS] && (got = holes_fast0_handed(d, cpu, off, conc)))
		return got;
	return holes_fast0_scan(d, cpu, off, conc);
}

/* The order-0 steal of cluster_alloc_swap_entry() - 6.18's lists and order
 * (frag[o] then nonfull[o], o ascending, until one succeeds), each cluster
 * entered at holes_pick0()'s slot. */
LR_INLINE uint64_t holes_steal0(sl_device *d, int cpu, const int conc)
{
	for (int o = 1; o < SL_NR_ORDERS; o++) {
		for (int pass = 0; pass < 2; pass++) {
			int list = pass ? SL_LIST_NONFULL(o) : SL_LIST_FRAG(o);
			uint32_t c;

			while ((c = lrm_isolate_lock_cluster(d, list, conc)) != SL_NIL) {
				uint64_t found = lrm_alloc_swap_scan_cluster(d, cpu, c,
					holes_start0(d, c, sli_cluster_offset(c)), 0, conc);
				if (found) {
					sli_stats_m(d, conc)->alloc_steal++;
					return found;
				}
			}
		}
	}
	return 0;
}

/* SL_POL_KEEP_FULL0's step (proposal-holes-first revision 3, before the
 * steal): the first cluster on the full list that holds kept free slots
 * (lrm_keep_full0()) is isolated, as isolate_lock_cluster() would, and
 * scanned; the scan relocates it to frag[0] (or full again). The walk
 * runs only while d->kept0 says a keep may have happened since the last
 * walk that found none; kept0 is cleared before the walk, so a keep during
 * it is not lost. */
LR_INLINE uint64_t holes_kept0(sl_device *d, int cpu, const int conc)
{
	uint32_t h = sli_head(d, SL_LIST_FULL), found = SL_NIL;

	sl_dev_lock_m(conc, d);
	atomic_store_explicit(&d->kept0, 0, memory_order_relaxed);
	for (uint32_t c = d->ci[h].next; c != h; c = d->ci[c].next) {
		if (!sl_ci_trylock_m(conc, d, c))
			continue; /* busy: another CPU has it */
		if (d->ci[c].count < SL_CLUSTER && d->ci[c].flags == SL_CF_FULL) {
			sli_isolate_cluster(d, c);
			found = c;
			/* there may be more */
			atomic_store_explicit(&d->kept0, 1, memory_order_relaxed);
			break;
		}
		sl_ci_unlock_m(conc, d, c);
	}
	sl_dev_unlock_m(conc, d);
	if (found == SL_NIL)
		return 0;
	return lrm_alloc_swap_scan_cluster(d, cpu, found, sli_cluster_offset(found), 0, conc);
}

/* SL_POL_KEEP_FULL0's last step for order 0: a slot of an mTHP range that
 * lrm_handoff() gave to a CPU's cursor which has not taken it
 * (xp_handed_cluster()), entered at holes_pick0()'s slot as the steal
 * enters a cluster; the scan leaves it on frag[its order] or full. */
LR_COLD uint64_t holes_take_handed0(sl_device *d, int cpu, const int conc)
{
	uint64_t h = 0;
	uint32_t c = xp_handed_cluster(d, cpu, 0, &h, conc);

	if (c == SL_NIL)
		return 0;
	return lrm_alloc_swap_scan_cluster(d, cpu, c, holes_start0(d, c, sli_cluster_offset(c)), 0,
					   conc);
}

/* cluster_alloc_swap_entry() for order 0 on a solid-state block device
 * without discard - 6.18's ladder with holes_steal0() as its last step. */
LR_INLINE uint64_t holes_ladder0_m(sl_device *d, int cpu, int order, const int conc)
{
	uint64_t found;

	SL_ASSERT(order == 0);
	found = lrm_alloc_swap_scan_list(d, cpu, SL_LIST_NONFULL(0), 0, 1, conc);
	if (!found)
		found = lrm_alloc_swap_scan_list(d, cpu, SL_LIST_FREE, 0, 0, conc);
	if (found)
		return found;
	if (sl_vm_swap_full(d))
		lrm_swap_reclaim_full_clusters(d, conc);
	found = lrm_alloc_swap_scan_list(d, cpu, SL_LIST_FRAG(0), 0, 0, conc);
	if (found)
		return found;
	if (atomic_load_explicit(&d->kept0, memory_order_relaxed) && (found = holes_kept0(d, cpu, conc)))
		return found;
	if ((found = holes_steal0(d, cpu, conc)))
		return found;
	/* SL_POL_KEEP_FULL0 (proposal-holes-first): before order 0 fails, an
	 * mTHP range handed to a CPU's cursor and not taken */
	if (d->pol->props & SL_POL_KEEP_FULL0)
		found = holes_take_handed0(d, cpu, conc);
	return found;
}
LR_BUILD_BOTH(holes_ladder0)

static int holes_order0(const sl_device *d, int order)
{
	return order == 0 && sli_own_order0_dev(d);
}

LR_INLINE uint64_t holes_rung_m(sl_device *d, int cpu, int order, const int conc)
{
	return xp_other_orders(d, cpu, order, 1, HOLES_BUDGET, conc);
}
LR_BUILD_BOTH(holes_rung)

/* folio_alloc_swap() - 6.18 (one device). */
LR_INLINE uint64_t holes_alloc_m(sl_device *d, int cpu, int order, const int conc)
{
	uint64_t off;

	if (!holes_order0(d, order))
		return xp_alloc_then(d, cpu, order, LR_PICK(holes_rung, conc), conc);
	sl_local_lock_m(conc, d, cpu);
	off = holes_alloc_fast0(d, cpu, conc);
	if (off == 0)
		off = lrm_swap_alloc_slow(d, cpu, 0, LR_PICK(holes_ladder0, conc), conc);
	sl_local_unlock_m(conc, d, cpu);
	return off;
}
LR_BUILD_BOTH(holes_alloc)

/* The halves swapset.c calls with several devices. */
LR_INLINE uint64_t holes_alloc_fast_m(sl_device *d, int cpu, int order, const int conc)
{
	if (!holes_order0(d, order))
		return XP_V6_18(conc)->alloc_fast(d, cpu, order);
	return holes_alloc_fast0(d, cpu, conc);
}
LR_BUILD_BOTH(holes_alloc_fast)

LR_INLINE uint64_t holes_alloc_slow_m(sl_device *d, int cpu, int order, const int conc)
{
	if (!holes_order0(d, order))
		return xp_alloc_slow_then(d, cpu, order, LR_PICK(holes_rung, conc), conc);
	return lrm_swap_alloc_slow(d, cpu, 0, LR_PICK(holes_ladder0, conc), conc);
}
LR_BUILD_BOTH(holes_alloc_slow)

/* The table of mode m (lockrework.h). */
#define HOLES_OPS(m)                                                                      \
	.name = "proposal-holes",                                                         \
	.summary = "proposal over 6.18: retag's rung over up to 64 clusters; order 0 fills broken blocks of other orders' clusters before whole aligned holes", \
	.kernel = "",                                                                     \
	.props = XP_PROPS_V6_18 & ~SL_POL_ORDERED_CLUSTERS,                               \
	.alloc = holes_alloc_##m, .alloc_fast = holes_alloc_fast_##m,                     \
	.alloc_slow = holes_alloc_slow_##m, XP_SHARED_OPS(m)

static const sl_policy holes_conc = { HOLES_OPS(conc) };
const sl_policy sl_policy_proposal_holes = { HOLES_OPS(det), .concurrent = &holes_conc };
