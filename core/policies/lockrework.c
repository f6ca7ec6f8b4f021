/*
 * lockrework.c - the 6.14+ cluster primitives shared by linux-6.15 and
 * linux-6.18 (swaplab/lockrework.h), with the 6.14+ locking: a cluster's
 * lock guards its slots, count and flags; the device lock guards list
 * membership only (move_cluster) and is taken inside a cluster lock, or
 * alone to isolate a cluster, which trylocks clusters and skips busy ones.
 * Without the concurrent mode (locks.h) the locks are no-ops and the trylock
 * always succeeds. The model never drops a cluster lock mid-scan: the
 * kernel does so only to reclaim cache-only slots, which do not exist here.
 *
 * Kernel range: 6.14 - 6.18. Kairui Song's series "mm, swap: rework of
 * swap allocator locks" (merged for 6.14) brought the cluster locks, the
 * isolate/relocate list discipline and the per-CPU cluster cursor; "mm,
 * swap: remove swap slot cache" (6.15) split folio_alloc_swap() into
 * swap_alloc_fast() / swap_alloc_slow(); 6.16 renamed
 * swap_entry_range_free() to swap_entries_free(); 6.18's swap table (phase
 * I) adds the table test of cluster_is_usable(). The primitives are
 * otherwise unchanged over the range.
 * Kernel functions modelled here (lr_ + the kernel name where exported):
 * move_cluster, __free_cluster, free_cluster (with
 * swap_cluster_schedule_discard), partial_free_cluster, relocate_cluster,
 * cluster_scan_range, cluster_alloc_range, alloc_swap_scan_cluster,
 * isolate_lock_cluster, alloc_swap_scan_list, swap_reclaim_full_clusters,
 * swap_entries_free, cluster_is_usable, swap_alloc_fast, swap_alloc_slow
 * (one device), folio_alloc_swap, swap_do_scheduled_discard,
 * swap_discard_work.
 * Contracts are asserted under SL_DEBUG (debug.h) where the kernel has
 * lockdep_assert_held() or VM_BUG_ON()/VM_WARN_ON().
 */

#include "swaplab/swaplab.h"
#include "swaplab/lockrework.h"
#include "swaplab/cluster.h"
#include "swaplab/locks.h"
#include "swaplab/debug.h"

/* move_cluster() - 6.14..6.18: with ci locked, the list move takes and
 * drops the device lock; the flag must change. */
void lr_move_cluster(sl_device *d, uint32_t c, int list, int flag)
{
	SL_ASSERT(d->ci[c].flags != flag);
	sl_assert_ci_locked(d, c);
	sl_dev_lock(d);
	sli_move_cluster(d, c, list, flag);
	sl_dev_unlock(d);
}

/* __free_cluster() - 6.14..6.18: with ci locked, to the free-list tail,
 * order reset. */
static void __free_cluster(sl_device *d, uint32_t c)
{
	sl_assert_ci_locked(d, c);
	lr_move_cluster(d, c, SL_LIST_FREE, SL_CF_FREE);
	d->ci[c].order = 0;
}

/* free_cluster() - 6.14..6.18: count reached 0: free list, or on a discard
 * device the discard list (swap_cluster_schedule_discard(); the discard
 * worker frees it). */
void lr_free_cluster(sl_device *d, uint32_t c)
{
	SL_ASSERT(d->ci[c].count == 0 && d->ci[c].flags != SL_CF_FREE);
	sl_assert_ci_locked(d, c);
	if (d->flags & SL_DEV_DISCARD) {
		lr_move_cluster(d, c, SL_LIST_DISCARD, SL_CF_DISCARD);
		return;
	}
	__free_cluster(d, c);
}

/* partial_free_cluster() - 6.14..6.18: slots were freed, some remain in use. */
void lr_partial_free_cluster(sl_device *d, uint32_t c)
{
	sl_cluster *ci = &d->ci[c];

	SL_ASSERT(ci->count != 0 && ci->count != SL_CLUSTER);
	sl_assert_ci_locked(d, c);
	if (ci->flags != SL_CF_NONFULL)
		lr_move_cluster(d, c, SL_LIST_NONFULL(ci->order), SL_CF_NONFULL);
}

/* relocate_cluster() - 6.14..6.18: after an allocation attempt, put the cluster
 * where its count says: free, frag[order] or full. */
void lr_relocate_cluster(sl_device *d, uint32_t c)
{
	sl_cluster *ci = &d->ci[c];

	sl_assert_ci_locked(d, c);
	if (ci->flags == SL_CF_DISCARD)
		return; /* off-list or on the discard list until discarded */
	if (ci->count == 0) {
		if (ci->flags != SL_CF_FREE)
			lr_free_cluster(d, c);
	} else if (ci->count != SL_CLUSTER) {
		if (ci->flags != SL_CF_FRAG)
			lr_move_cluster(d, c, SL_LIST_FRAG(ci->order), SL_CF_FRAG);
	} else if (ci->flags != SL_CF_FULL) {
		lr_move_cluster(d, c, SL_LIST_FULL, SL_CF_FULL);
	}
}

/* cluster_scan_range() - 6.14..6.18: all nr slots free. Cache-only slots would be
 * reclaimable when vm_swap_full(), but none exist under this policy. */
static int cluster_scan_range(const sl_device *d, uint64_t off, uint32_t nr)
{
	return sli_range_free(d, off, nr);
}

/* cluster_alloc_range() - 6.14..6.18: with ci locked, the range becomes
 * the folio's; the first allocation in an empty cluster gives the cluster
 * its order. */
static void cluster_alloc_range(sl_device *d, uint32_t c, uint64_t off, int order)
{
	sl_assert_ci_locked(d, c);
	SL_ASSERT(lr_cluster_is_usable(&d->ci[c], order, 0));
	sli_alloc_range(d, off, order);
}

/* alloc_swap_scan_cluster() - 6.14..6.18: scan one cluster from `off` in steps of
 * 2^order, no wrap-around and not past the device's end (si->max); allocate
 * the first free range; relocate the cluster; store this CPU's cursor for
 * `order` (the next position, or 0: never at or past si->max). */
uint64_t lr_alloc_swap_scan_cluster(sl_device *d, int cpu, uint32_t c, uint64_t off,
					int order)
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
			if (cluster_scan_range(d, off, nr)) {
				found = off;
				break;
			}
		}
	}
	if (found) {
		cluster_alloc_range(d, c, found, order);
		if (ci->count < SL_CLUSTER && found + nr <= end)
			next = found + nr;
	}
out:
	lr_relocate_cluster(d, c);
	sl_ci_unlock(d, c);
	*sli_cursor(d, cpu, order) = next; /* percpu or, rotational, global */
	/* 6.15+: the per-CPU cursor also names the device it points into */
	if (d->set && (d->flags & SL_DEV_SOLIDSTATE))
		d->set->pcp_si[cpu * SL_NR_ORDERS + order] = (int8_t)d->type;
	return found;
}

/* isolate_lock_cluster() - 6.14..6.18: take the first cluster of a list (the
 * trylock cannot fail single-threaded). */
uint32_t lr_isolate_lock_cluster(sl_device *d, int list)
{
	uint32_t h = sli_head(d, list), found = SL_NIL;

	SL_ASSERT(list >= 0 && list < SL_NR_LISTS);
	sl_dev_lock(d);
	for (uint32_t c = d->ci[h].next; c != h; c = d->ci[c].next) {
		if (!sl_ci_trylock(d, c))
			continue; /* busy: another CPU has it */
		/* only a usable or a full cluster is isolated */
		SL_ASSERT(d->ci[c].flags != SL_CF_NONE);
		SL_ASSERT(d->ci[c].flags <= SL_CF_USABLE || d->ci[c].flags == SL_CF_FULL);
		sli_isolate_cluster(d, c);
		found = c;
		break;
	}
	sl_dev_unlock(d);
	return found;
}

/* alloc_swap_scan_list() - 6.14..6.18: isolate and scan the list's head; with
 * scan_all, go on until one succeeds or the list is empty (each failed
 * cluster is relocated elsewhere, so this ends). */
uint64_t lr_alloc_swap_scan_list(sl_device *d, int cpu, int list, int order, int scan_all)
{
	uint64_t found = 0;

	do {
		uint32_t c = lr_isolate_lock_cluster(d, list);
		if (c == SL_NIL)
			break;
		found = lr_alloc_swap_scan_cluster(d, cpu, c, sli_cluster_offset(c), order);
	} while (!found && scan_all);
	return found;
}

/* swap_reclaim_full_clusters() - 6.14..6.18, force == false: one full cluster is
 * searched for cache-only slots; none exist here, so it goes back to the
 * full list's tail (the LRU rotation the kernel does when nothing frees). */
void lr_swap_reclaim_full_clusters(sl_device *d)
{
	uint32_t c = lr_isolate_lock_cluster(d, SL_LIST_FULL);

	if (c == SL_NIL)
		return;
	sli_stats(d)->full_reclaim_scans++;
	if (d->ci[c].flags == SL_CF_NONE)
		lr_relocate_cluster(d, c);
	sl_ci_unlock(d, c);
}

/* swap_entries_free() - 6.16..6.18 (swap_entry_range_free() in 6.14/6.15):
 * release a run inside one cluster, then free_cluster() or
 * partial_free_cluster(). */
void lr_swap_entries_free(sl_device *d, uint64_t off, uint32_t nr)
{
	uint32_t c = sli_cluster_of(off);

	/* never across clusters, never more than the cluster holds (the
	 * slot checks are sli_release_range()'s) */
	sl_assert_ci_locked(d, c);
	SL_ASSERT(nr > 0 && sli_cluster_of(off + nr - 1) == c && d->ci[c].count >= nr);
	sli_release_range(d, off, nr);
	if (d->ci[c].count == 0)
		lr_free_cluster(d, c);
	else
		lr_partial_free_cluster(d, c);
}

/* cluster_is_usable() - 6.14..6.18; with_table: 6.18's cluster_table_is_alloced(). */
int lr_cluster_is_usable(const sl_cluster *ci, int order, int with_table)
{
	if (ci->flags > SL_CF_USABLE)
		return 0;
	if (with_table && ci->count == 0 && ci->flags != SL_CF_NONE)
		return 0; /* 6.18: free_cluster() freed its swap table */
	return order == 0 || ci->count == 0 || ci->order == order;
}

/* swap_alloc_fast() - 6.15..6.18 (6.14: the per-CPU cluster step of
 * cluster_alloc_swap_entry()): this CPU's cursor cluster, if still usable. */
uint64_t lr_swap_alloc_fast(sl_device *d, int cpu, int order, int with_table)
{
	uint64_t off = *sli_cursor(d, cpu, order);
	uint32_t c;

	if (!off)
		return 0;
	SL_ASSERT(off < d->max && !(off & ((UINT64_C(1) << order) - 1)));
	c = sli_cluster_of(off);
	sl_ci_lock(d, c);
	if (!lr_cluster_is_usable(&d->ci[c], order, with_table)) {
		sl_ci_unlock(d, c);
		return 0;
	}
	if (d->ci[c].count == 0)
		off = sli_cluster_offset(c);
	return lr_alloc_swap_scan_cluster(d, cpu, c, off, order);
}

/* The order-0 steal of cluster_alloc_swap_entry() - 6.14..6.18. */
uint64_t lr_steal_order0(sl_device *d, int cpu)
{
	for (int o = 1; o < SL_NR_ORDERS; o++) {
		uint64_t found = lr_alloc_swap_scan_list(d, cpu, SL_LIST_FRAG(o), 0, 1);
		if (!found)
			found = lr_alloc_swap_scan_list(d, cpu, SL_LIST_NONFULL(o), 0, 1);
		if (found) {
			sli_stats(d)->alloc_steal++;
			return found;
		}
	}
	return 0;
}

/* swap_alloc_fast() on one device - 6.15..6.18: never a rotational one. */
uint64_t lr_alloc_fast_dev(sl_device *d, int cpu, int order, int with_table)
{
	uint64_t off = 0;

	/* the per-CPU cursor never points at a rotational device */
	if (d->flags & SL_DEV_SOLIDSTATE)
		off = lr_swap_alloc_fast(d, cpu, order, with_table);
	if (off)
		sli_stats(d)->alloc_fast[order]++;
	return off;
}

/* swap_alloc_slow() - 6.15..6.18, this device alone on the avail list: its
 * cluster_alloc_swap_entry() (the ladder) unless it is full and so off the
 * list. */
uint64_t lr_swap_alloc_slow(sl_device *d, int cpu, int order, lr_ladder_fn ladder)
{
	/* rotational: global_cluster_lock for the whole ladder */
	int rot = !(d->flags & SL_DEV_SOLIDSTATE);
	uint64_t off;

	if (d->inuse_pages >= d->pages)
		return 0; /* full: off the avail list */
	if (rot)
		sl_global_lock(d);
	off = ladder(d, cpu, order);
	if (rot)
		sl_global_unlock(d);
	return off;
}

/* folio_alloc_swap() - 6.15..6.18, one device, under the local lock. */
uint64_t lr_folio_alloc_swap(sl_device *d, int cpu, int order, int with_table, lr_ladder_fn ladder)
{
	uint64_t off;

	sl_local_lock(d, cpu);
	off = lr_alloc_fast_dev(d, cpu, order, with_table);
	if (!off)
		off = lr_swap_alloc_slow(d, cpu, order, ladder);
	sl_local_unlock(d, cpu);
	return off;
}

/* swap_do_scheduled_discard() - 6.14..6.18. */
uint32_t lr_swap_do_scheduled_discard(sl_device *d)
{
	uint32_t n = 0, c;

	for (;;) {
		sl_dev_lock(d);
		c = sli_list_first(d, SL_LIST_DISCARD);
		sl_dev_unlock(d);
		if (c == SL_NIL)
			break;
		/* the discard I/O runs here, then __free_cluster() */
		sl_ci_lock(d, c);
		if (d->ci[c].flags == SL_CF_DISCARD) {
			SL_ASSERT(d->ci[c].count == 0);
			__free_cluster(d, c);
			n++;
		}
		sl_ci_unlock(d, c);
	}
	sli_stats(d)->discarded_clusters += n;
	return n;
}

/* The si->global_cluster step of cluster_alloc_swap_entry() - 6.14..6.18. */
uint64_t lr_global_cluster_alloc(sl_device *d, int order, int with_table)
{
	/* the fast path's step, on the cursor row sli_cursor() gives a
	 * rotational device: the global one, whatever the CPU */
	sl_assert_global_locked(d);
	return lr_swap_alloc_fast(d, 0, order, with_table);
}

/* swap_discard_work() - 6.14..6.18. */
void lr_swap_discard_work(sl_device *d)
{
	if (d->flags & SL_DEV_DISCARD)
		lr_swap_do_scheduled_discard(d);
}

/* The free op - 6.14..6.18: swap_entries_free() of the run. */
void lr_free(sl_device *d, int cpu, uint64_t off, uint32_t nr)
{
	(void)cpu;
	lr_swap_entries_free(d, off, nr);
}
