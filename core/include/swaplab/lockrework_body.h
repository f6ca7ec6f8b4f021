/*
 * swaplab/lockrework_body.h - the bodies of the 6.14+ cluster primitives
 * (lockrework.h), each built for one mode: `conc` is 1 in the concurrent
 * mode (real cluster, device, local and global locks, this thread's
 * counters, atomic usage) and 0 in the deterministic one (none of it: no
 * lock call, no locked instruction, no test of d->lk). Callers pass a
 * compile-time constant, so each body is compiled twice: into a policy's
 * two ops tables, of which the device takes one once (policy.h's
 * `concurrent`), and into lockrework.c's lr_*, which pick the build at each
 * call. Kernel functions modelled: as lockrework.c names them,
 * 6.14 - 6.18.
 *
 * For lockrework.c and the 6.14+ policy files only: the lr_* functions of
 * lockrework.h are the interface for everyone else.
 */
#ifndef SWAPLAB_LOCKREWORK_BODY_H
#define SWAPLAB_LOCKREWORK_BODY_H

#include "swaplab.h"
#include "lockrework.h"
#include "cluster.h"
#include "locks.h"
#include "debug.h"

#define LR_INLINE static inline __attribute__((always_inline))
/* The rare rungs (steal, reclaim, discard): one out-of-line copy per mode,
 * off the hot path's code. */
#define LR_COLD static __attribute__((noinline, cold, unused))

/* cluster_is_usable() - 6.14..6.18; with_table: LR_TABLE for 6.18's
 * cluster_table_is_alloced(), plus LR_KEEP in the fast paths that
 * SL_POL_KEEP_FULL0 policies build for themselves: a full cluster with
 * free slots (kept slots, or a range handed to a CPU's cursor by
 * lrm_handoff()) is usable there. Both are compile-time constants where
 * this is inlined, so no other policy's fast path changes. */
#define LR_TABLE 1
#define LR_KEEP 2
LR_INLINE int lrm_cluster_is_usable(const sl_cluster *ci, int order, int with_table)
{
	if (ci->flags > SL_CF_USABLE &&
	    (!(with_table & LR_KEEP) || ci->flags != SL_CF_FULL || ci->count == SL_CLUSTER))
		return 0;
	if ((with_table & LR_TABLE) && ci->count == 0 && ci->flags != SL_CF_NONE)
		return 0; /* 6.18: free_cluster() freed its swap table */
	return order == 0 || ci->count == 0 || ci->order == order;
}

/* move_cluster() - 6.14..6.18: with ci locked, the list move takes and
 * drops the device lock; the flag must change. */
LR_INLINE void lrm_move_cluster(sl_device *d, uint32_t c, int list, int flag, const int conc)
{
	SL_ASSERT(d->ci[c].flags != flag);
	sl_assert_ci_locked(d, c);
	sl_dev_lock_m(conc, d);
	sli_move_cluster(d, c, list, flag);
	sl_dev_unlock_m(conc, d);
}

/* __free_cluster() - 6.14..6.18: with ci locked, to the free-list tail,
 * order reset. */
LR_INLINE void lrm___free_cluster(sl_device *d, uint32_t c, const int conc)
{
	sl_assert_ci_locked(d, c);
	lrm_move_cluster(d, c, SL_LIST_FREE, SL_CF_FREE, conc);
	d->ci[c].order = 0;
}

/* free_cluster() - 6.14..6.18: count reached 0: free list, or on a discard
 * device the discard list (swap_cluster_schedule_discard(); the discard
 * worker frees it). */
LR_INLINE void lrm_free_cluster(sl_device *d, uint32_t c, const int conc)
{
	SL_ASSERT(d->ci[c].count == 0 && d->ci[c].flags != SL_CF_FREE);
	sl_assert_ci_locked(d, c);
	if (d->flags & SL_DEV_DISCARD) {
		lrm_move_cluster(d, c, SL_LIST_DISCARD, SL_CF_DISCARD, conc);
		return;
	}
	lrm___free_cluster(d, c, conc);
}

/* SL_POL_KEEP_FULL0: order-0 slots may now sit in a full cluster, which
 * the order-0 walk of kept slots looks for (x_holes.c holes_kept0()). */
LR_INLINE void lrm_note_kept0(sl_device *d)
{
	if (!atomic_load_explicit(&d->kept0, memory_order_relaxed))
		atomic_store_explicit(&d->kept0, 1, memory_order_relaxed);
}

/* SL_POL_KEEP_FULL0's rule (a proposal's, no kernel has it): a full
 * order-0 cluster that a free leaves with fewer than SL_KEEP0_SLOTS free
 * slots stays on the full list while swap is plentiful - at most half in
 * use and SL_KEEP0_MIN_FREE slots free - on a solid-state block device
 * without discard (where order 0 runs proposal-holes' ladder, which takes
 * kept slots back). Returns 1 when the cluster stays. Only the frees of
 * such a policy call it (their own builds, `keep` below), so no other
 * policy pays for the test. */
LR_INLINE int lrm_keep_full0(sl_device *d, const sl_cluster *ci)
{
	SL_ASSERT(d->pol->props & SL_POL_KEEP_FULL0);
	if (ci->order != 0 || ci->count <= SL_CLUSTER - SL_KEEP0_SLOTS || !sli_own_order0_dev(d))
		return 0;
	uint64_t inuse = atomic_load_explicit(&d->inuse_pages, memory_order_relaxed);
	if (inuse * 2 > d->pages || d->pages - inuse < SL_KEEP0_MIN_FREE)
		return 0;
	lrm_note_kept0(d);
	return 1;
}

/* A CPU's cursor gets v. In the concurrent mode a relaxed atomic store
 * (the kernel's WRITE_ONCE() of its percpu offset): xp_handed_cluster()
 * reads other CPUs' cursors. The same single store either way. */
LR_INLINE void lrm_cursor_store(uint64_t *cur, uint64_t v, const int conc)
{
	if (conc)
		__atomic_store_n(cur, v, __ATOMIC_RELAXED);
	else
		*cur = v;
}

/* SL_POL_KEEP_FULL0's hand-off (proposal-holes-first revision 4; no kernel
 * has it): a free that leaves a full cluster of order k below PMD with
 * free slots gives its freed aligned range to the freeing CPU's cursor of
 * order k, when that cursor is idle (0) and names this device: the
 * cluster stays on the full list, with no list move and no device lock,
 * and the CPU's next order-k allocation takes the range on its fast path
 * (lrm_cluster_is_usable() lets a cursor into such a cluster). A kernel
 * would take the CPU's local lock with a trylock here, under the cluster
 * lock. Solid-state block devices without discard only, every order
 * (sli_own_order0_dev()).
 * Revision 6, order 0 where the policy's own order-0 fast path serves the
 * device (holes_alloc_fast0(): a solid-state block device without
 * discard): also a cluster on nonfull[0] or frag[0] that the free leaves
 * with at most SL_HANDOFF0_SLOTS free slots (it stays on its list: no
 * move either), and the slot is marked (sli_handed0()) so that the fast
 * path takes it alone. A range of an mTHP folio that borrowed an order-0
 * cluster's hole goes to the cursor unmarked, as in revision 4: the fast
 * path scans on from its first slot through the others. Returns 1 when it
 * handed the range over. */
LR_INLINE int lrm_handoff(sl_device *d, int cpu, uint32_t c, uint64_t off, uint32_t nr,
			    const int conc)
{
	const sl_cluster *ci = &d->ci[c];
	const int o = ci->order;
	int listed = 0;

	if (ci->flags != SL_CF_FULL) {
		/* revision 6: one order-0 slot, its cluster on nonfull[0] or
		 * frag[0] left with at most SL_HANDOFF0_SLOTS free slots (the
		 * device and the cursor are tested below, as for a full one) */
		if (ci->count < SL_CLUSTER - SL_HANDOFF0_SLOTS || !SL_HANDOFF0_SLOTS || o || nr != 1 ||
		    (ci->flags != SL_CF_NONFULL && ci->flags != SL_CF_FRAG))
			return 0;
		listed = 1;
	}
	if (cpu < 0 || o > SL_KEEP_HANDOFF_MAX_ORDER || nr < (1u << o) ||
	    (off & ((UINT64_C(1) << o) - 1)) || !sli_own_order0_dev(d))
		return 0;
	uint64_t *cur = sli_cursor(d, cpu, o);
	if (*cur)
		return 0;
	if (d->set && d->set->nr > 1) {
		/* several devices: order 0 only (the mTHP orders' fast path is
		 * 6.18's there), and the CPU's cursor must name none or this one */
		int8_t si = d->set->pcp_si[cpu * SL_NR_ORDERS + o];
		if (o || (si != -1 && si != (int8_t)d->type))
			return 0;
	}
	lrm_cursor_store(cur, off, conc);
	if (!o && nr == 1 && SL_HANDOFF0_SLOTS)
		*sli_handed0(d, cpu) = off; /* this CPU's own: a plain store */
	if (d->set)
		d->set->pcp_si[cpu * SL_NR_ORDERS + o] = (int8_t)d->type;
	/* should this CPU never take it, order 0's walk of kept slots finds
	 * it (holes_kept0()); an mTHP range, an allocation that would fail
	 * otherwise (xp_handed_cluster()); a listed cluster's slot, any list
	 * search */
	if (!o && !listed)
		lrm_note_kept0(d);
	sli_stats_m(d, conc)->handoffs++;
	return 1;
}

/* partial_free_cluster() - 6.14..6.18: slots were freed, some remain in use.
 * keep: a SL_POL_KEEP_FULL0 policy's build. */
LR_INLINE void lrm_partial_free_cluster_k(sl_device *d, uint32_t c, const int conc, const int keep)
{
	sl_cluster *ci = &d->ci[c];

	SL_ASSERT(ci->count != 0 && ci->count != SL_CLUSTER);
	sl_assert_ci_locked(d, c);
	if (ci->flags != SL_CF_NONFULL) {
		if (keep && ci->flags == SL_CF_FULL && lrm_keep_full0(d, ci))
			return;
		lrm_move_cluster(d, c, SL_LIST_NONFULL(ci->order), SL_CF_NONFULL, conc);
	}
}

LR_INLINE void lrm_partial_free_cluster(sl_device *d, uint32_t c, const int conc)
{
	lrm_partial_free_cluster_k(d, c, conc, 0);
}

/* relocate_cluster() - 6.14..6.18: after an allocation attempt, put the
 * cluster where its count says: free, frag[order] or full. */
LR_INLINE void lrm_relocate_cluster(sl_device *d, uint32_t c, const int conc)
{
	sl_cluster *ci = &d->ci[c];

	sl_assert_ci_locked(d, c);
	if (ci->flags == SL_CF_DISCARD)
		return; /* off-list or on the discard list until discarded */
	if (ci->count == 0) {
		if (ci->flags != SL_CF_FREE)
			lrm_free_cluster(d, c, conc);
	} else if (ci->count != SL_CLUSTER) {
		if (ci->flags != SL_CF_FRAG)
			lrm_move_cluster(d, c, SL_LIST_FRAG(ci->order), SL_CF_FRAG, conc);
	} else if (ci->flags != SL_CF_FULL) {
		lrm_move_cluster(d, c, SL_LIST_FULL, SL_CF_FULL, conc);
	}
}

/* cluster_scan_range() - 6.14..6.18: all nr slots free. Cache-only slots
 * would be reclaimable when vm_swap_full(), but none exist under this
 * policy. */
LR_INLINE int lrm_cluster_scan_range(const sl_device *d, uint64_t off, uint32_t nr)
{
	return sli_range_free(d, off, nr);
}

/* cluster_alloc_range() - 6.14..6.18: with ci locked, the range becomes
 * the folio's; the first allocation in an empty cluster gives the cluster
 * its order. */
LR_INLINE void lrm_cluster_alloc_range(sl_device *d, uint32_t c, uint64_t off, int order,
				       const int conc)
{
	sl_assert_ci_locked(d, c);
	SL_ASSERT(lrm_cluster_is_usable(&d->ci[c], order, LR_KEEP));
	sli_alloc_range_m(d, off, order, conc);
}

/* alloc_swap_scan_cluster() - 6.14..6.18: scan one cluster from `off` in
 * steps of 2^order, no wrap-around and not past the device's end (si->max);
 * allocate the first free range; relocate the cluster; store this CPU's
 * cursor for `order` (the next position, or 0: never at or past si->max). */
LR_INLINE uint64_t lrm_alloc_swap_scan_cluster(sl_device *d, int cpu, uint32_t c, uint64_t off,
					       int order, const int conc)
{
	uint32_t nr = 1u << order;
	uint64_t end = sli_cluster_offset(c) + SL_CLUSTER;
	uint64_t found = 0, next = 0;
	sl_cluster *ci = &d->ci[c];

	sl_assert_ci_locked(d, c);
	SL_ASSERT(order >= 0 && order < SL_NR_ORDERS && sli_cluster_of(off) == c);
	SL_ASSERT(!(off & (nr - 1))); /* cursors advance in whole folios */
	if (end > d->max)
		end = d->max; /* the last cluster's padding */
	SL_ASSERT(end >= nr); /* a device holds at least one cluster */
	if (ci->count + nr > SL_CLUSTER)
		goto out;
	end -= nr; /* last start */
	if (order == 0) {
		/* the same walk as below, one slot per step, done by memchr */
		off = sli_find_free(d, off, end + 1);
		if (off <= end)
			found = off;
	} else {
		for (; off <= end; off += nr) {
			if (lrm_cluster_scan_range(d, off, nr)) {
				found = off;
				break;
			}
		}
	}
	if (found) {
		lrm_cluster_alloc_range(d, c, found, order, conc);
		if (ci->count < SL_CLUSTER && found + nr <= end)
			next = found + nr;
	}
out:
	lrm_relocate_cluster(d, c, conc);
	sl_ci_unlock_m(conc, d, c);
	/* percpu or, rotational, global */
	lrm_cursor_store(sli_cursor(d, cpu, order), next, conc);
	/* 6.15+: the per-CPU cursor also names the device it points into */
	if (d->set && (d->flags & SL_DEV_SOLIDSTATE))
		d->set->pcp_si[cpu * SL_NR_ORDERS + order] = (int8_t)d->type;
	return found;
}

/* isolate_lock_cluster() - 6.14..6.18: take the first cluster of a list
 * whose lock can be taken (always the first one in the deterministic mode). */
LR_INLINE uint32_t lrm_isolate_lock_cluster(sl_device *d, int list, const int conc)
{
	uint32_t h = sli_head(d, list), found = SL_NIL;

	SL_ASSERT(list >= 0 && list < SL_NR_LISTS);
	sl_dev_lock_m(conc, d);
	for (uint32_t c = d->ci[h].next; c != h; c = d->ci[c].next) {
		if (!sl_ci_trylock_m(conc, d, c))
			continue; /* busy: another CPU has it */
		/* only a usable or a full cluster is isolated */
		SL_ASSERT(d->ci[c].flags != SL_CF_NONE);
		SL_ASSERT(d->ci[c].flags <= SL_CF_USABLE || d->ci[c].flags == SL_CF_FULL);
		sli_isolate_cluster(d, c);
		found = c;
		break;
	}
	sl_dev_unlock_m(conc, d);
	return found;
}

/* alloc_swap_scan_list() - 6.14..6.18: isolate and scan the list's head;
 * with scan_all, go on until one succeeds or the list is empty (each failed
 * cluster is relocated elsewhere, so this ends). */
LR_INLINE uint64_t lrm_alloc_swap_scan_list(sl_device *d, int cpu, int list, int order,
					    int scan_all, const int conc)
{
	uint64_t found = 0;

	do {
		uint32_t c = lrm_isolate_lock_cluster(d, list, conc);
		if (c == SL_NIL)
			break;
		found = lrm_alloc_swap_scan_cluster(d, cpu, c, sli_cluster_offset(c), order, conc);
	} while (!found && scan_all);
	return found;
}

/* swap_reclaim_full_clusters() - 6.14..6.18, force == false: one full
 * cluster is searched for cache-only slots; none exist here, so it goes
 * back to the full list's tail (the LRU rotation the kernel does when
 * nothing frees). */
LR_COLD void lrm_swap_reclaim_full_clusters(sl_device *d, const int conc)
{
	uint32_t c = lrm_isolate_lock_cluster(d, SL_LIST_FULL, conc);

	if (c == SL_NIL)
		return;
	sli_stats_m(d, conc)->full_reclaim_scans++;
	if (d->ci[c].flags == SL_CF_NONE)
		lrm_relocate_cluster(d, c, conc);
	sl_ci_unlock_m(conc, d, c);
}

/* swap_entries_free() - 6.16..6.18 (swap_entry_range_free() in 6.14/6.15):
 * release a run inside one cluster, then free_cluster() or
 * partial_free_cluster(). */
LR_INLINE void lrm_swap_entries_free_k(sl_device *d, int cpu, uint64_t off, uint32_t nr,
				       const int conc, const int keep)
{
	uint32_t c = sli_cluster_of(off);

	/* never across clusters, never more than the cluster holds (the
	 * slot checks are sli_release_range()'s) */
	sl_assert_ci_locked(d, c);
	SL_ASSERT(nr > 0 && sli_cluster_of(off + nr - 1) == c && d->ci[c].count >= nr);
	sli_release_range_m(d, off, nr, conc);
	if (d->ci[c].count == 0)
		lrm_free_cluster(d, c, conc);
	else if (!keep || !lrm_handoff(d, cpu, c, off, nr, conc))
		lrm_partial_free_cluster_k(d, c, conc, keep);
}

LR_INLINE void lrm_swap_entries_free(sl_device *d, uint64_t off, uint32_t nr, const int conc)
{
	lrm_swap_entries_free_k(d, -1, off, nr, conc, 0);
}

/* swap_alloc_fast() - 6.15..6.18 (6.14: the per-CPU cluster step of
 * cluster_alloc_swap_entry()): this CPU's cursor cluster, if still usable. */
LR_INLINE uint64_t lrm_swap_alloc_fast(sl_device *d, int cpu, int order, int with_table,
				       const int conc)
{
	uint64_t off = *sli_cursor(d, cpu, order);
	uint32_t c;

	if (!off)
		return 0;
	SL_ASSERT(off < d->max && !(off & ((UINT64_C(1) << order) - 1)));
	c = sli_cluster_of(off);
	sl_ci_lock_m(conc, d, c);
	if (!lrm_cluster_is_usable(&d->ci[c], order, with_table)) {
		sl_ci_unlock_m(conc, d, c);
		return 0;
	}
	if (d->ci[c].count == 0)
		off = sli_cluster_offset(c);
	return lrm_alloc_swap_scan_cluster(d, cpu, c, off, order, conc);
}

/* The order-0 steal of cluster_alloc_swap_entry() - 6.14..6.18. */
LR_COLD uint64_t lrm_steal_order0(sl_device *d, int cpu, const int conc)
{
	for (int o = 1; o < SL_NR_ORDERS; o++) {
		uint64_t found = lrm_alloc_swap_scan_list(d, cpu, SL_LIST_FRAG(o), 0, 1, conc);
		if (!found)
			found = lrm_alloc_swap_scan_list(d, cpu, SL_LIST_NONFULL(o), 0, 1, conc);
		if (found) {
			sli_stats_m(d, conc)->alloc_steal++;
			return found;
		}
	}
	return 0;
}

/* swap_alloc_fast() on one device - 6.15..6.18: never a rotational one. */
LR_INLINE uint64_t lrm_alloc_fast_dev(sl_device *d, int cpu, int order, int with_table,
				      const int conc)
{
	uint64_t off = 0;

	/* the per-CPU cursor never points at a rotational device */
	if (d->flags & SL_DEV_SOLIDSTATE)
		off = lrm_swap_alloc_fast(d, cpu, order, with_table, conc);
	if (off)
		sli_stats_m(d, conc)->alloc_fast[order]++;
	return off;
}

/* The si->global_cluster step of cluster_alloc_swap_entry() - 6.14..6.18:
 * the fast path's step, on the cursor row sli_cursor() gives a rotational
 * device (the global one, whatever the CPU). */
LR_INLINE uint64_t lrm_global_cluster_alloc(sl_device *d, int order, int with_table,
					    const int conc)
{
	sl_assert_global_locked(d);
	return lrm_swap_alloc_fast(d, 0, order, with_table, conc);
}

/* The first steps of cluster_alloc_swap_entry() - 6.15+ (lockrework.h). */
LR_INLINE int lrm_ladder_head(sl_device *d, int order, int with_table, uint64_t *found,
			      const int conc)
{
	SL_ASSERT(order >= 0 && order < SL_NR_ORDERS);
	*found = 0;
	if (order > 0 && !(d->flags & SL_DEV_BLKDEV))
		return 1;
	if (!(d->flags & SL_DEV_SOLIDSTATE))
		*found = lrm_global_cluster_alloc(d, order, with_table, conc);
	return *found != 0;
}

/* swap_alloc_slow() - 6.15..6.18, this device alone on the avail list: its
 * cluster_alloc_swap_entry() (the ladder, built for the same mode) unless
 * it is full and so off the list. */
LR_INLINE uint64_t lrm_swap_alloc_slow(sl_device *d, int cpu, int order, lr_ladder_fn ladder,
				       const int conc)
{
	/* rotational: global_cluster_lock for the whole ladder */
	int rot = !(d->flags & SL_DEV_SOLIDSTATE);
	uint64_t off;

	if (atomic_load_explicit(&d->inuse_pages, memory_order_relaxed) >= d->pages)
		return 0; /* full: off the avail list */
	if (rot)
		sl_global_lock_m(conc, d);
	off = ladder(d, cpu, order);
	if (rot)
		sl_global_unlock_m(conc, d);
	return off;
}

/* folio_alloc_swap() - 6.15..6.18, one device, under the local lock. */
LR_INLINE uint64_t lrm_folio_alloc_swap(sl_device *d, int cpu, int order, int with_table,
					lr_ladder_fn ladder, const int conc)
{
	uint64_t off;

	sl_local_lock_m(conc, d, cpu);
	off = lrm_alloc_fast_dev(d, cpu, order, with_table, conc);
	if (!off)
		off = lrm_swap_alloc_slow(d, cpu, order, ladder, conc);
	sl_local_unlock_m(conc, d, cpu);
	return off;
}

/* The order-0 calls of folio_alloc_swap() that swap_alloc_fast() serves
 * from this CPU's cursor cluster, taken in one loop (deterministic mode):
 * up to n of them, each the slot lrm_swap_alloc_fast() and
 * lrm_alloc_swap_scan_cluster() would give it. Stops before the first call
 * the cursor cluster would not serve, leaving it to the caller's full path.
 * What those calls would do per slot and nobody reads in between - the
 * count, the usage, relocate_cluster() (the first call moves the cluster
 * to frag[0], later ones only to the full list once it fills, which ends
 * the run), the cursor and its device - is done once at the end, to the
 * state the last call would leave. Returns how many it made (their slots
 * in out[]). */
LR_INLINE uint32_t lrm_alloc_fast_run0(sl_device *d, int cpu, uint32_t n, uint64_t *out,
				       int with_table)
{
	uint64_t *cur = sli_cursor(d, cpu, 0), off = *cur, next = 0;
	uint32_t i = 0, c, cnt;

	if (!off || !(d->flags & SL_DEV_SOLIDSTATE))
		return 0;
	c = sli_cluster_of(off);
	sl_cluster *ci = &d->ci[c];
	if (!lrm_cluster_is_usable(ci, 0, with_table) || ci->count >= SL_CLUSTER)
		return 0;
	/* the locks each call takes (only tracked under SL_DEBUG here) */
	sl_local_lock_m(0, d, cpu);
	sl_ci_lock_m(0, d, c);
	if (ci->count == 0)
		off = sli_cluster_offset(c);
	uint64_t end = sli_cluster_offset(c) + SL_CLUSTER;
	if (end > d->max)
		end = d->max;
	end -= 1; /* last start */
	cnt = ci->count;
	while (i < n) {
		uint64_t found = sli_find_free(d, off, end + 1);
		if (found > end) {
			next = off; /* the full path scans in vain, then goes slow */
			break;
		}
		/* cluster_alloc_range() of one slot, its count below */
		SL_ASSERT(d->map[found] == SL_SLOT_FREE);
		d->map[found] = 1;
		if (d->shadow) {
			if (d->shadow[found])
				d->shadow_errors++;
			d->shadow[found] = 1;
		}
		out[i++] = found;
		next = ++cnt < SL_CLUSTER && found + 1 <= end ? found + 1 : 0;
		if (!next)
			break; /* the next call finds no cursor */
		/* the cluster is on frag[0] now (count above 0), so still usable
		 * for the next call, which continues at the cursor */
		off = next;
	}
	if (i) {
		if (ci->count == 0)
			ci->order = 0;
		sli_inuse_add_m(d, cnt - ci->count, 0);
		ci->count = (uint16_t)cnt;
		lrm_relocate_cluster(d, c, 0);
	}
	sl_ci_unlock_m(0, d, c);
	sl_local_unlock_m(0, d, cpu);
	if (!i)
		return 0;
	*cur = next;
	if (d->set)
		d->set->pcp_si[cpu * SL_NR_ORDERS] = (int8_t)d->type;
	sli_stats_m(d, 0)->alloc_fast[0] += i;
	return i;
}

/* n order-0 calls of the policy's alloc (`one`, the whole folio_alloc_swap()
 * of the generation) in turn, deterministic mode: the runs the cursor
 * cluster serves in one loop, every other call through `one`. */
LR_INLINE void lrm_alloc_batch0(sl_device *d, int cpu, uint32_t n, uint64_t *out, int with_table,
				uint64_t (*one)(sl_device *, int, int))
{
	for (uint32_t i = 0; i < n;) {
		i += lrm_alloc_fast_run0(d, cpu, n - i, out + i, with_table);
		if (i < n) {
			out[i] = one(d, cpu, 0);
			i++;
		}
	}
}

/* swap_do_scheduled_discard() - 6.14..6.18. */
LR_COLD uint32_t lrm_swap_do_scheduled_discard(sl_device *d, const int conc)
{
	uint32_t n = 0, c;

	for (;;) {
		sl_dev_lock_m(conc, d);
		c = sli_list_first(d, SL_LIST_DISCARD);
		sl_dev_unlock_m(conc, d);
		if (c == SL_NIL)
			break;
		/* the discard I/O runs here, then __free_cluster() */
		sl_ci_lock_m(conc, d, c);
		if (d->ci[c].flags == SL_CF_DISCARD) {
			SL_ASSERT(d->ci[c].count == 0);
			lrm___free_cluster(d, c, conc);
			n++;
		}
		sl_ci_unlock_m(conc, d, c);
	}
	sli_stats_m(d, conc)->discarded_clusters += n;
	return n;
}

#endif
