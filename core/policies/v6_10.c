/*
 * v6_10.c - policy "linux-6.10": the swap slot allocator of Linux 6.10/6.11.
 *
 * Kernel range: 6.10 - 6.11 (Ryan Roberts, "mm: swap: Allow storage of all
 * mTHP orders", commit 845982eb264bc: mTHP swap-out without splitting).
 * Changes from 6.9: the per-CPU cluster becomes per-CPU per-order cursors
 * next[order]; any order 0..9 is allocated in steps of 2^order inside the
 * CPU's cluster for that order; the whole-cluster THP allocator
 * (swap_alloc_cluster) is gone. A large order takes only free clusters: with
 * none left it fails at once (the fallback Barry Song reported), whatever
 * room partially used clusters have. There is no per-cluster order and no
 * list but the free list: a cluster in use is on no list.
 * Order 0: batches of up to 64 through the per-CPU slot caches
 * (swap_slots.c); with no free cluster left, the classic linear scan of
 * swap_map between lowest_bit and highest_bit around this CPU's scan base,
 * which lands anywhere, in other CPUs' and other orders' clusters too.
 * Frees: every slot, even of a 64 KiB range, goes through free_swap_slot()
 * one at a time in ascending order (the free slot cache).
 * Process side: order-0 swap-in, splits keep never-written pages, fallback
 * split pages reclaimed in ascending order (no SL_POL_* process flags).
 *
 * Kernel functions modelled (same names, 6.10): get_swap_pages,
 * scan_swap_map_slots, scan_swap_map_try_ssd_cluster,
 * scan_swap_map_ssd_cluster_conflict, swap_range_empty,
 * add_cluster_info_page, alloc_cluster, dec_cluster_info_page, free_cluster,
 * swap_range_alloc, swap_range_free, set_cluster_next, swap_entry_free,
 * setup_swap_map_and_extents (the free-list part), folio_alloc_swap (large
 * folios; order 0 is swap_slots.c), free_swap_slot (through swap_slots.c).
 *
 * Cluster states on the device: a free cluster is on the free list (flag
 * FREE); every other cluster is on no list (flag NONE): 6.10 tracks nothing
 * else. ci->order is written by the shared primitives but never read here.
 *
 * Simplifications (docs/policies/linux-6.10.md):
 *  - one non-rotational device without discard: init refuses the others;
 *  - single-threaded: si->lock is never dropped, the latency breaks
 *    (cond_resched) only count, nothing changes while they "sleep";
 *  - no folio sits in the swap cache between calls, so the only cache-only
 *    slots are those the slot caches hold: __try_to_reclaim_swap() finds no
 *    folio behind them and the scan passes over them (the kernel's detour
 *    through `checks` ends the same way);
 *  - get_random_u32_inclusive() (the per-CPU scan bases) is a fixed-seed
 *    xoshiro stream, so runs are deterministic.
 */
#include <stdio.h>
#include <stdlib.h>
#include "swaplab/swaplab.h"
#include "swaplab/cluster.h"
#include "swaplab/swap_slots.h"

#define SWAP_CLUSTER_COLS 32u       /* max(64 / sizeof(ci), 64 MiB / 2 MiB) */
#define LATENCY_LIMIT 256
#define SWAP_ADDRESS_SPACE_SHIFT 14 /* 64 MiB of swap per address space */
#define SCAN_BASE_SEED 0x6a10u      /* the model's get_random_u32() stream */

typedef struct v6_10_state {
	sl_swap_slots slots;
	uint64_t lowest_bit;        /* every free slot lies in [lowest_bit, */
	uint64_t highest_bit;       /* highest_bit]; 0 when the device is full */
	uint64_t *cluster_next_cpu; /* [nr_cpus]: per-CPU linear-scan base */
	sl_rng rng;
} v6_10_state;

static v6_10_state *st(sl_device *d) { return d->pstate; }
static uint64_t *next_of(sl_device *d, int cpu, int order)
{
	return &d->cursor[cpu * SL_CURSOR_STRIDE + order];
}

/* get_random_u32_inclusive() - 6.10: a value in [lo, hi]. */
static uint64_t get_random_inclusive(v6_10_state *s, uint64_t lo, uint64_t hi)
{
	return lo + sl_rng_next(&s->rng) % (hi - lo + 1);
}

/* free_cluster() - 6.10 (no discard): the cluster goes to the free-list tail. */
static void free_cluster(sl_device *d, uint32_t c)
{
	sli_move_cluster(d, c, SL_LIST_FREE, SL_CF_FREE);
	d->ci[c].order = 0;
}

/* alloc_cluster() - 6.10: the first slot of a free cluster is being
 * allocated; it must be the free-list head, which is unlinked. */
static void alloc_cluster(sl_device *d, uint32_t c)
{
	if (sli_list_first(d, SL_LIST_FREE) != c)
		abort(); /* VM_BUG_ON: the conflict check guarantees the head */
	sli_isolate_cluster(d, c);
}

/* dec_cluster_info_page() - 6.10: one slot of cluster c was freed. */
static void dec_cluster_info_page(sl_device *d, uint32_t c)
{
	if (d->ci[c].count == 0)
		free_cluster(d, c);
}

/* swap_range_alloc() - 6.10: the lowest_bit/highest_bit bounds after nr
 * slots at off were taken (inuse_pages is already counted). */
static void swap_range_alloc(sl_device *d, uint64_t off, uint32_t nr)
{
	v6_10_state *s = st(d);
	uint64_t end = off + nr - 1;

	if (off == s->lowest_bit)
		s->lowest_bit += nr;
	if (end == s->highest_bit)
		s->highest_bit -= nr;
	if (d->inuse_pages == d->pages) {
		s->lowest_bit = d->max;
		s->highest_bit = 0; /* del_from_avail_list() */
	}
}

/* swap_range_free() - 6.10: the bounds after nr slots at off were freed. */
static void swap_range_free(sl_device *d, uint64_t off, uint32_t nr)
{
	v6_10_state *s = st(d);
	uint64_t end = off + nr - 1;

	if (off < s->lowest_bit)
		s->lowest_bit = off;
	if (end > s->highest_bit)
		s->highest_bit = end; /* from 0: add_to_avail_list() */
}

/* set_cluster_next() - 6.10, non-rotational: this CPU's scan base; crossing
 * a 64 MiB address space picks a random 64 MiB-aligned base instead. */
static void set_cluster_next(sl_device *d, int cpu, uint64_t next)
{
	v6_10_state *s = st(d);
	uint64_t prev = s->cluster_next_cpu[cpu];

	if ((prev >> SWAP_ADDRESS_SPACE_SHIFT) != (next >> SWAP_ADDRESS_SPACE_SHIFT)) {
		if (s->highest_bit <= s->lowest_bit)
			return;
		next = get_random_inclusive(s, s->lowest_bit, s->highest_bit);
		next &= ~((UINT64_C(1) << SWAP_ADDRESS_SPACE_SHIFT) - 1);
		if (next < s->lowest_bit)
			next = s->lowest_bit;
	}
	s->cluster_next_cpu[cpu] = next;
}

/* swap_range_empty() - 6.10: nr slots at off all free (within the device). */
static int swap_range_empty(const sl_device *d, uint64_t off, uint32_t nr, uint64_t max)
{
	return off + nr <= max && sli_range_free(d, off, nr);
}

/* scan_swap_map_ssd_cluster_conflict() - 6.10: the offset lies in a free
 * cluster that is not the free-list head (this CPU's cluster was freed and
 * requeued): forget this CPU's cluster for the order. */
static int scan_swap_map_ssd_cluster_conflict(sl_device *d, int cpu, uint64_t off, int order)
{
	uint32_t c = sli_cluster_of(off), head = sli_list_first(d, SL_LIST_FREE);

	if (head == SL_NIL || c == head || d->ci[c].flags != SL_CF_FREE)
		return 0;
	*next_of(d, cpu, order) = 0;
	return 1;
}

/* scan_swap_map_try_ssd_cluster() - 6.10: the next aligned free range of
 * 2^order slots in this CPU's cluster for the order, from its cursor to the
 * cluster end; without a cluster, the free-list head (left on the list until
 * its first slot is allocated); with no free cluster, fail. */
static int scan_swap_map_try_ssd_cluster(sl_device *d, int cpu, uint64_t *offset,
					 uint64_t *scan_base, int order)
{
	uint64_t *next = next_of(d, cpu, order);
	uint32_t nr = 1u << order;

	for (;;) { /* new_cluster: */
		uint64_t tmp = *next, max;

		if (!tmp) {
			uint32_t c = sli_list_first(d, SL_LIST_FREE);
			if (c == SL_NIL)
				return 0; /* no discard list: nothing else to wait for */
			tmp = sli_cluster_offset(c);
		}
		max = sli_cluster_offset(sli_cluster_of(tmp)) + SL_CLUSTER;
		if (max > d->max)
			max = d->max;
		while (tmp < max && !swap_range_empty(d, tmp, nr, max))
			tmp += nr;
		if (tmp >= max) {
			*next = 0;
			continue;
		}
		*offset = *scan_base = tmp;
		tmp += nr;
		*next = tmp < max ? tmp : 0;
		return 1;
	}
}

/* swap_offset_available_and_locked() - 6.10: a free slot. A cache-only slot
 * (vm_swap_full) would go through `checks` to __try_to_reclaim_swap(),
 * which finds no folio behind a slot-cache slot: it is passed over. */
static int swap_offset_available(const sl_device *d, uint64_t off)
{
	return d->map[off] == SL_SLOT_FREE;
}

/* scan_swap_map_slots() - 6.10, non-rotational device: up to nr ranges of
 * 2^order slots into slots[]; order 0 reserves them for the swap cache
 * (0x40), a large order gets its folio's slots (count 1). The gotos follow
 * the kernel's: per-CPU cluster first, then (order 0 only) a short scan
 * forward under the lock, or the full linear scan when there is no cluster. */
static int scan_swap_map_slots(sl_device *d, int cpu, int nr, uint64_t *slots, int order)
{
	v6_10_state *s = st(d);
	uint32_t nr_pages = 1u << order;
	uint64_t offset, scan_base;
	int latency_ration = LATENCY_LIMIT, n_ret = 0, scanned_many = 0;

	/* regular swap files take only order 0 */
	if (order > 0 && !(d->flags & SL_DEV_BLKDEV))
		return 0;
	scan_base = offset = s->cluster_next_cpu[cpu];
	if (!scan_swap_map_try_ssd_cluster(d, cpu, &offset, &scan_base, order)) {
		if (order > 0)
			goto no_page;
		goto scan;
	}

checks:
	while (scan_swap_map_ssd_cluster_conflict(d, cpu, offset, order)) {
		if (n_ret) /* take a break if we already got some slots */
			goto done;
		if (!scan_swap_map_try_ssd_cluster(d, cpu, &offset, &scan_base, order)) {
			if (order > 0)
				goto no_page;
			goto scan;
		}
	}
	if (!s->highest_bit)
		goto no_page;
	if (order == 0 && offset > s->highest_bit)
		scan_base = offset = s->lowest_bit;
	if (d->map[offset]) {
		if (sl_vm_swap_full(d) && d->map[offset] == SL_SLOT_CACHE)
			goto scan; /* reclaim finds no folio: check the next one */
		if (!n_ret)
			goto scan;
		goto done;
	}
	/* add_cluster_info_page(): a free cluster is allocated from the list */
	if (d->ci[sli_cluster_of(offset)].flags == SL_CF_FREE)
		alloc_cluster(d, sli_cluster_of(offset));
	if (order == 0)
		sli_reserve_range(d, offset, 1); /* usage SWAP_HAS_CACHE */
	else
		sli_alloc_range(d, offset, order);
	swap_range_alloc(d, offset, nr_pages);
	slots[n_ret++] = offset;

	/* got enough slots or reach max slots? */
	if (n_ret == nr || offset >= s->highest_bit)
		goto done;
	/* time to take a break? */
	if (--latency_ration < 0) {
		if (n_ret)
			goto done;
		latency_ration = LATENCY_LIMIT;
	}
	/* try to get more slots in cluster */
	if (scan_swap_map_try_ssd_cluster(d, cpu, &offset, &scan_base, order))
		goto checks;
	if (order > 0)
		goto done;
	/* no free cluster (fragmented): a little more scanning under the lock */
	if (!scanned_many) {
		uint64_t scan_limit = offset < scan_base ? scan_base : s->highest_bit;
		for (; offset <= scan_limit && --latency_ration > 0; offset++)
			if (!d->map[offset])
				goto checks;
	}

done:
	if (order == 0)
		set_cluster_next(d, cpu, offset + 1);
	return n_ret;

scan:
	/* order 0 only: the linear scan above the base, then from lowest_bit */
	while (++offset <= s->highest_bit) {
		if (--latency_ration < 0) {
			latency_ration = LATENCY_LIMIT;
			scanned_many = 1;
		}
		if (swap_offset_available(d, offset))
			goto checks;
	}
	offset = s->lowest_bit;
	while (offset < scan_base) {
		if (--latency_ration < 0) {
			latency_ration = LATENCY_LIMIT;
			scanned_many = 1;
		}
		if (swap_offset_available(d, offset))
			goto checks;
		offset++;
	}

no_page:
	return n_ret;
}

/* get_swap_pages() - 6.10, one device: n slots of `order` (n is 1 for a
 * large order), capped by the free pages; a full device is off the avail
 * list. */
static int get_swap_pages(sl_device *d, int cpu, int n, uint64_t *out, int order)
{
	uint64_t avail = (d->pages - d->inuse_pages) >> order;

	if (!avail)
		return 0;
	if ((uint64_t)n > avail)
		n = (int)avail;
	if (!st(d)->highest_bit)
		return 0;
	return scan_swap_map_slots(d, cpu, n, out, order);
}

static int get_swap_pages0(sl_device *d, int cpu, int n, uint64_t *out)
{
	return get_swap_pages(d, cpu, n, out, 0);
}

/* swap_entry_free() - 6.10: a cache-only slot returned by
 * swapcache_free_entries() (a slot cache flush or drain). */
static void swap_entry_free(sl_device *d, uint64_t off)
{
	sli_release_range(d, off, 1);
	dec_cluster_info_page(d, sli_cluster_of(off));
	swap_range_free(d, off, 1);
}

/* folio_alloc_swap() - 6.10: a large folio asks get_swap_pages() for one
 * range of its order; order 0 goes through the per-CPU slot cache. */
static uint64_t v6_10_alloc(sl_device *d, int cpu, int order)
{
	uint64_t off = 0;

	if (order == 0)
		return sl_swap_slots_alloc(&st(d)->slots, d, cpu);
	get_swap_pages(d, cpu, 1, &off, order);
	return off;
}

/* free_swap_and_cache_nr() / swap_free() - 6.10: every slot whose last
 * reference went away, one at a time in ascending order, through
 * free_swap_slot() - 64 KiB ranges included. */
static void v6_10_free(sl_device *d, int cpu, uint64_t off, uint32_t nr)
{
	for (uint32_t i = 0; i < nr; i++)
		sl_swap_slots_free(&st(d)->slots, d, cpu, off + i);
}

/* setup_swap_map_and_extents() - 6.10: clusters holding bad slots (the
 * header, the padding) stay on no list; the others go to the free list in
 * 32 interleaved columns (0, 32, 64, ..., 1, 33, ...; the starting column
 * cluster_next / 512 % 32 is 0). The per-CPU scan bases start at random
 * slots in [1, highest_bit] (swapon). */
static int v6_10_init(sl_device *d)
{
	v6_10_state *s;

	if (!(d->flags & SL_DEV_SOLIDSTATE) || (d->flags & SL_DEV_DISCARD))
		return -1; /* rotational and discard devices are not modelled */
	s = calloc(1, sizeof(*s));
	if (!s)
		return -1;
	d->pstate = s;
	s->cluster_next_cpu = calloc((size_t)d->nr_cpus, sizeof(uint64_t));
	if (!s->cluster_next_cpu)
		return -1;
	for (uint32_t j = 0; j < SWAP_CLUSTER_COLS; j++)
		for (uint32_t c = j; c < d->nr_clusters; c += SWAP_CLUSTER_COLS)
			if (!d->ci[c].count)
				sli_move_cluster(d, c, SL_LIST_FREE, SL_CF_FREE);
	s->lowest_bit = 1;
	s->highest_bit = d->max - 1;
	sl_rng_init(&s->rng, SL_RNG_DEFAULT, SCAN_BASE_SEED);
	for (int cpu = 0; cpu < d->nr_cpus; cpu++)
		s->cluster_next_cpu[cpu] = get_random_inclusive(s, 1, s->highest_bit);
	return sl_swap_slots_init(&s->slots, d, 1, get_swap_pages0, swap_entry_free);
}

static void v6_10_fini(sl_device *d)
{
	v6_10_state *s = st(d);

	sl_swap_slots_fini(&s->slots);
	free(s->cluster_next_cpu);
	free(s);
	d->pstate = NULL;
}

/* drain_swap_slots_cache() (swapoff) - 6.10: every CPU's cached slots back. */
static void v6_10_drain(sl_device *d)
{
	sl_swap_slots_drain(&st(d)->slots, d);
}

/* The policy's own invariants: only the free list is used, and every free
 * slot lies inside [lowest_bit, highest_bit]. */
static int v6_10_check(const sl_device *d, char *msg, size_t len)
{
	const v6_10_state *s = d->pstate;

	for (int l = 0; l < SL_NR_LISTS; l++) {
		if (l != SL_LIST_FREE && d->list_len[l]) {
			snprintf(msg, len, "6.10: list %d holds %u clusters; only the free list exists",
				 l, d->list_len[l]);
			return -1;
		}
	}
	for (uint64_t off = 1; off < d->max; off++) {
		if (d->map[off] == SL_SLOT_FREE && (off < s->lowest_bit || off > s->highest_bit)) {
			snprintf(msg, len, "6.10: free slot %llu outside [lowest_bit %llu, highest_bit %llu]",
				 (unsigned long long)off, (unsigned long long)s->lowest_bit,
				 (unsigned long long)s->highest_bit);
			return -1;
		}
	}
	return 0;
}

const sl_policy sl_policy_v6_10 = {
	.name = "linux-6.10",
	.summary = "Linux 6.10: per-CPU per-order cursors, mTHP from free clusters only, order-0 linear scan; slot caches",
	.kernel = "6.10-6.11",
	.props = 0,
	.init = v6_10_init,
	.fini = v6_10_fini,
	.alloc = v6_10_alloc,
	.free = v6_10_free,
	.check = v6_10_check,
	.drain = v6_10_drain,
};
