/*
 * v6_12.c - policy "linux-6.12": the swap slot allocator of Linux 6.12/6.13.
 *
 * Kernel range: 6.12 - 6.13 (Chris Li and Kairui Song's "mTHP swap allocator
 * base on swap cluster order" v5, merged for 6.12).
 * Changes from 6.10: per-cluster order; per-order nonfull and frag lists
 * with a frag counter; a cluster that starts being used goes straight to
 * nonfull[order] (visible to other CPUs); search order free list -> full
 * cluster reclaim -> nonfull -> frag (bounded by the counter, rotating) ->
 * order-0 stealing; 64 KiB frees skip the free slot cache.
 * Still as 6.10: si->lock held across the whole allocation; per-device
 * per-CPU cursors next[order] used without a usability check; order-0
 * allocations in batches of 64 through the per-CPU slot caches, frees of
 * single slots through the free slot cache; the initial free list
 * interleaved in 32 columns; order-0 swap-in.
 *
 * Kernel functions modelled (same names, 6.12): cluster_alloc_swap_entry,
 * alloc_swap_scan_cluster, cluster_scan_range, cluster_alloc_range,
 * swap_reclaim_full_clusters, dec_cluster_info_page (free_cluster and the
 * discard list: scan_classic.c),
 * setup_clusters, get_swap_pages (its batch accounting: scan_classic.c),
 * swap_entry_range_free, __swap_entries_free (the range part).
 *
 * Frag counter: frag_cluster_nr[order] counts exactly the clusters on
 * frag[order] (every move onto or off that list adjusts it), so the model
 * reads the list length.
 * Simplifications: rotational devices take scan_hdd.c; no folio
 * sits in the swap cache between calls, so cache-only slots are those the
 * slot caches hold, which reclaim cannot free (no folio behind them).
 */
#include <stdlib.h>
#include "swaplab/swaplab.h"
#include "swaplab/scan_hdd.h"
#include "swaplab/scan_classic.h"
#include "swaplab/cluster.h"
#include "swaplab/swap_slots.h"
#include "swaplab/locks.h"
#include "swaplab/debug.h"

typedef struct v6_12_state {
	sl_swap_slots slots;
} v6_12_state;

static v6_12_state *st(sl_device *d) { return d->pstate; }



/* dec_cluster_info_page() - 6.12: after freeing nr slots of cluster c. */
static void dec_cluster_info_page(sl_device *d, uint32_t c)
{
	sl_cluster *ci = &d->ci[c];

	if (ci->count == 0)
		sc_free_cluster(d, c); /* free_cluster() */
	else if (ci->flags != SL_CF_NONFULL)
		sli_move_cluster(d, c, SL_LIST_NONFULL(ci->order), SL_CF_NONFULL);
}

/* cluster_alloc_range() - 6.12: a free cluster moves to nonfull[order] as it
 * starts being used; a cluster that fills moves to the full list. */
static void cluster_alloc_range(sl_device *d, uint32_t c, uint64_t off, int order, int reserve)
{
	sl_cluster *ci = &d->ci[c];
	uint32_t nr = 1u << order;

	if (ci->flags == SL_CF_FREE) {
		ci->order = (uint8_t)order;
		if (nr < SL_CLUSTER)
			sli_move_cluster(d, c, SL_LIST_NONFULL(order), SL_CF_NONFULL);
	}
	if (reserve)
		sli_reserve_range(d, off, nr); /* SWAP_HAS_CACHE for the slot cache */
	else
		sli_alloc_range(d, off, order);
	if (ci->count == SL_CLUSTER)
		sli_move_cluster(d, c, SL_LIST_FULL, SL_CF_FULL);
}

/* alloc_swap_scan_cluster() - 6.12: scan cluster of `off` from `off` in steps
 * of 2^order; allocate the first free range. Returns the next position (or
 * 0) and sets *found. No check of the cluster's order or state. */
static uint64_t alloc_swap_scan_cluster(sl_device *d, uint64_t off, uint64_t *found, int order,
					int reserve)
{
	uint32_t c = sli_cluster_of(off);
	uint32_t nr = 1u << order;
	uint64_t end = sli_cluster_offset(c) + SL_CLUSTER, next = 0;

	if (end > d->max)
		end = d->max;
	sl_ci_lock(d, c); /* lock_cluster(), nested in si->lock */
	if (end < nr || d->ci[c].count + nr > SL_CLUSTER)
		goto out;
	for (; off + nr <= end; off += nr) {
		if (!sli_range_free(d, off, nr)) /* cluster_scan_range() */
			continue;
		cluster_alloc_range(d, c, off, order, reserve);
		*found = off;
		if (d->ci[c].count < SL_CLUSTER && off + 2 * nr <= end)
			next = off + nr;
		break;
	}
out:
	sl_ci_unlock(d, c);
	return next;
}

/* swap_reclaim_full_clusters() - 6.12, force == false: rotate the full
 * list's head to its tail; its cache-only slots (slot caches) have no folio
 * to reclaim. */
static void swap_reclaim_full_clusters(sl_device *d)
{
	uint32_t c = sli_list_first(d, SL_LIST_FULL);

	if (c == SL_NIL)
		return;
	sli_move_cluster(d, c, SL_LIST_FULL, SL_CF_FULL);
	sli_stats(d)->full_reclaim_scans++;
}

/* Scans the head of `list` as order `order`, optionally moving it to the
 * frag tail first (the nonfull scan) - one step of the 6.12 loops. */
static uint64_t scan_head(sl_device *d, int list, int order, int to_frag, uint64_t *next,
			  int reserve)
{
	uint32_t c = sli_list_first(d, list);
	uint64_t found = 0;

	if (to_frag)
		sli_move_cluster(d, c, SL_LIST_FRAG(order), SL_CF_FRAG);
	*next = alloc_swap_scan_cluster(d, sli_cluster_offset(c), &found, order, reserve);
	return found;
}

/* cluster_alloc_swap_entry() - 6.12: one slot range for `order`. */
static uint64_t cluster_alloc_swap_entry(sl_device *d, int cpu, int order, int reserve)
{
	uint64_t *cursor = sli_cursor(d, cpu, order);
	uint64_t found = 0, next = 0;

new_cluster:
	/* this CPU's cluster for the order, whatever became of it */
	if (*cursor) {
		next = alloc_swap_scan_cluster(d, *cursor, &found, order, reserve);
		if (found)
			goto done;
	}
	/* a free cluster: the allocation cannot fail there */
	if (!sli_list_empty(d, SL_LIST_FREE)) {
		found = scan_head(d, SL_LIST_FREE, order, 0, &next, reserve);
		goto done;
	}
	if (sl_vm_swap_full(d))
		swap_reclaim_full_clusters(d);
	if (order < SL_PMD_ORDER) {
		uint32_t frags = 0;
		/* every nonfull cluster, each moved to the frag tail first */
		while (!sli_list_empty(d, SL_LIST_NONFULL(order))) {
			found = scan_head(d, SL_LIST_NONFULL(order), order, 1, &next, reserve);
			frags++;
			if (found)
				goto done;
		}
		/* then the frag list, rotating, no further than its length */
		while (frags < d->list_len[SL_LIST_FRAG(order)]) {
			uint32_t c = sli_list_first(d, SL_LIST_FRAG(order));
			sli_move_cluster(d, c, SL_LIST_FRAG(order), SL_CF_FRAG);
			found = 0;
			next = alloc_swap_scan_cluster(d, sli_cluster_offset(c), &found, order, reserve);
			frags++;
			if (found)
				goto done;
		}
	}
	/* no free cluster but some being discarded: discard them now */
	if (!sli_list_empty(d, SL_LIST_DISCARD)) {
		sc_swap_do_scheduled_discard(d, sc___free_cluster);
		goto new_cluster;
	}
	if (order)
		goto done;
	/* order 0 steals from higher-order clusters: frag, then nonfull */
	for (int o = 1; o < SL_NR_ORDERS && !found; o++) {
		for (int l = 0; l < 2 && !found; l++) {
			int list = l == 0 ? SL_LIST_FRAG(o) : SL_LIST_NONFULL(o);
			/* a cluster here has a free slot, so the head always
			 * serves order 0; stop rather than spin if it did not */
			if (!sli_list_empty(d, list))
				found = scan_head(d, list, 0, 0, &next, reserve);
		}
		if (found)
			sli_stats(d)->alloc_steal++;
	}
done:
	*cursor = next;
	return found;
}

/* get_swap_pages() - 6.12: up to n slots of `order` from the device, each
 * reserved for the swap cache; stops at the first failure. The batch is
 * taken off nr_swap_pages first (scan_classic.h), so the vm_swap_full() of
 * cluster_alloc_swap_entry() sees it; si->lock is held across the batch. */
static int get_swap_pages(sl_device *d, int cpu, int n, uint64_t *out, int order)
{
	int got = 0;

	sl_dev_lock(d);
	n = sc_swap_batch_begin(d, n, order); /* 0 when full: off the avail list */
	while (got < n) {
		uint64_t off = cluster_alloc_swap_entry(d, cpu, order, order == 0);
		if (!off)
			break;
		sc_swap_batch_took(d, order);
		out[got++] = off;
	}
	sc_swap_batch_end(d);
	sl_dev_unlock(d);
	return got;
}

/* get_swap_pages()'s step on one device, for several devices - 6.12: a
 * swap file takes order 0 only. */
static int v6_12_get_swap_pages(sl_device *d, int cpu, int n, uint64_t *out, int order)
{
	if (order > 0 && !(d->flags & SL_DEV_BLKDEV))
		return 0;
	return get_swap_pages(d, cpu, n, out, order);
}

/* swap_entry_range_free() - 6.12: nr slots of one cluster whose last
 * reference (or cache pin) went away are freed at once; the cluster moves
 * as dec_cluster_info_page() says. Called with si->lock held. */
static void swap_entry_range_free(sl_device *d, uint64_t off, uint32_t nr)
{
	uint32_t c = sli_cluster_of(off);

	sl_assert_dev_locked(d);
	sl_ci_lock(d, c);
	sli_release_range(d, off, nr);
	dec_cluster_info_page(d, c);
	sl_ci_unlock(d, c);
}

/* swapcache_free_entries()'s step for one slot - 6.12: the slot caches'
 * release; they hold si->lock around their loops. */
static void release_slot(sl_device *d, uint64_t off)
{
	swap_entry_range_free(d, off, 1);
}

/* folio_alloc_swap() - 6.12: large folios straight from get_swap_pages(),
 * order 0 through the slot cache. */
static uint64_t v6_12_alloc(sl_device *d, int cpu, int order)
{
	uint64_t off = 0;

	if (order == 0)
		return sli_dev_slots_alloc(d, cpu);
	if (!(d->flags & SL_DEV_BLKDEV))
		return 0;
	get_swap_pages(d, cpu, 1, &off, order);
	return off;
}

/* __swap_entries_free() - 6.12: a range whose slots all drop their last
 * count together is freed at once, skipping the slot cache; single slots
 * go through free_swap_slot(). */
static void v6_12_free(sl_device *d, int cpu, uint64_t off, uint32_t nr)
{
	if (nr > 1) {
		sl_dev_lock(d);
		swap_entry_range_free(d, off, nr);
		sl_dev_unlock(d);
		return;
	}
	sli_dev_slots_free(d, cpu, off);
}

/* setup_clusters() - 6.12: clusters holding bad slots go to nonfull[0], the
 * others to the free list, column by column (32 columns: 0, 32, 64, ...,
 * then 1, 33, ...) so that neighbours on the list are 64 MiB apart. */
static int v6_12_init(sl_device *d)
{
	v6_12_state *s = calloc(1, sizeof(*s));

	if (!s || !(d->flags & SL_DEV_SOLIDSTATE)) {
		free(s);
		return -1;
	}
	d->pstate = s;
	sli_setup_clusters(d, SL_SWAP_CLUSTER_COLS);
	return sli_dev_slots_init(d, &s->slots);
}

static void v6_12_fini(sl_device *d)
{
	sl_swap_slots_fini(&st(d)->slots);
	free(d->pstate);
	d->pstate = NULL;
}

static void v6_12_drain(sl_device *d)
{
	sl_swap_slots_drain(&st(d)->slots);
}

/* swap_discard_work() - 6.12: the discard worker, between operations. */
static void v6_12_discard_work(sl_device *d)
{
	sc_swap_discard_work(d, sc___free_cluster);
}

/* A rotational device: no cluster_info, the HDD scan (scan_hdd.c). */
static const sl_policy rotational = SL_HDD_CLASSIC_POLICY("linux-6.12", SL_POL_SPLIT_ZEROPAGE, hd_free_range_direct);

const sl_policy sl_policy_v6_12 = {
	.name = "linux-6.12",
	.summary = "Linux 6.12: free list first, full-cluster reclaim, nonfull, frag, order-0 steal; slot caches",
	.kernel = "6.12-6.13",
	.props = SL_POL_SPLIT_ZEROPAGE | SL_POL_CONCURRENT | SL_POL_SLOT_CACHE |
		 SL_POL_DISCARD_MARKS_BAD,
	.init = v6_12_init,
	.fini = v6_12_fini,
	.alloc = v6_12_alloc,
	.free = v6_12_free,
	.drain = v6_12_drain,
	.tick = v6_12_discard_work,
	.get_swap_pages = v6_12_get_swap_pages,
	.release = release_slot,
	.rotational = &rotational,
};
