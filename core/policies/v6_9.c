/*
 * v6_9.c - policy "linux-6.9": the classic swap slot allocator (<= 6.9).
 *
 * Kernel range: <= 6.9 (modelled on the 6.6 - 6.9 mm/swapfile.c and
 * mm/swap_slots.c; the allocator is unchanged since 5.8's per-CPU scan base,
 * Huang Ying's "Reduce lock contention on swap cache from swap slots
 * allocation"). Replaced in 6.10 by Ryan Roberts' per-order cursors.
 * What it is: per-slot swap_map scanning (scan_swap_map_slots). On a
 * non-rotational device each CPU allocates slot by slot inside its own
 * cluster (percpu_cluster {index, next}), taking the head of the free
 * cluster list when it has none; the cluster stays on the free list until
 * its first slot is allocated. With no free cluster left, order 0 scans the
 * whole swap_map linearly from the CPU's scan base (cluster_next_cpu), which
 * jumps to a random 64 MiB-aligned position whenever it crosses a 64 MiB
 * boundary. A PMD-sized folio takes one whole free cluster or fails; every
 * other large folio is split by reclaim before it asks for slots. Order 0
 * goes through the per-CPU slot caches (64-slot allocation batches, 64-entry
 * free caches: swap_slots.c). Clusters carry no order and sit on no list
 * while in use: the only list is the free list (singly linked in the kernel,
 * FIFO), initially interleaved in 32 columns (64 MiB apart).
 *
 * Kernel functions modelled (same names, all <= 6.9): scan_swap_map_slots,
 * scan_swap_map_try_ssd_cluster, scan_swap_map_ssd_cluster_conflict,
 * swap_offset_available_and_locked, alloc_cluster (free_cluster and the
 * discard list: scan_classic.c),
 * inc_cluster_info_page, dec_cluster_info_page, swap_alloc_cluster,
 * get_swap_pages, swap_entry_free. Shared with 6.10 (scan_classic.c, sc_*):
 * swap_range_alloc, swap_range_free, set_cluster_next,
 * setup_swap_map_and_extents (the cluster part), the SSD part of swapon.
 *
 * Randomness: the kernel's get_random_u32_inclusive() (the per-CPU scan
 * bases at swapon and the 64 MiB jumps) is this policy's own sl_rng, seeded
 * with the fixed V6_9_RNG_SEED at init, so every run of one workload is
 * reproducible and independent of the workload's seed.
 *
 * Simplifications (docs/policies/linux-6.9.md):
 *  - discard: scan_classic.c's discard list, the worker as tick; a
 *    rotational device takes the HDD scan (scan_hdd.c); several devices:
 *    swapset.c;
 *  - single-threaded: si->lock is never dropped, so LATENCY_LIMIT only
 *    steers the batch and scan limits (modelled), never a reschedule;
 *  - no folio sits in the swap cache between calls: every cache-only slot is
 *    held by a slot cache, so __try_to_reclaim_swap() finds no folio and
 *    fails (the scan still stops at such slots when vm_swap_full());
 *  - CLUSTER_FLAG_HUGE is not kept: it only matters to put_swap_folio()
 *    and split_swap_cluster(), which a folio leaving the swap cache at once
 *    never reaches; a PMD allocation's slots come back with count 1.
 */
#include <stdlib.h>
#include <stdio.h>
#include "swaplab/swaplab.h"
#include "swaplab/scan_hdd.h"
#include "swaplab/cluster.h"
#include "swaplab/swap_slots.h"
#include "swaplab/scan_classic.h"

#define LATENCY_LIMIT 256
#define V6_9_RNG_SEED UINT64_C(0x0609)

/* struct percpu_cluster (<= 6.9): the CPU's cluster (SL_NIL = null) and
 * the likely next offset inside it. */
typedef struct percpu_cluster {
	uint32_t index;
	uint64_t next;
} percpu_cluster;

typedef struct v6_9_state {
	sl_swap_slots slots;
	sc_swap_info si;            /* lowest/highest_bit, SSD scan bases, rng */
	percpu_cluster *pcp;        /* [nr_cpus] */
	uint64_t bugs;              /* VM_BUG_ON hits (alloc_cluster off the head) */
	int refilled;               /* get_swap_pages ran during this alloc */
} v6_9_state;

/* The locals of one scan_swap_map_slots() call, and nr_swap_pages as the
 * scan sees it: get_swap_pages() took the whole batch off it up front. */
typedef struct scan_state {
	int cpu, nr, n_ret;
	uint64_t nr_swap_pages;
	uint64_t offset, scan_base;
	int latency_ration;
	int scanned_many;
	uint64_t *slots;
} scan_state;

enum { SCAN_CHECKS, SCAN_SCAN, SCAN_DONE, SCAN_NO_PAGE };

static v6_9_state *st(const sl_device *d) { return d->pstate; }

/* get_random_u32_inclusive() - the policy's seeded stand-in. */
static uint64_t random_inclusive(sl_rng *rng, uint64_t lo, uint64_t hi)
{
	return lo + sl_rng_below(rng, (uint32_t)(hi - lo + 1));
}

/* alloc_cluster() - <= 6.9: the first allocation in a free cluster unlinks
 * it, which must be the free-list head (VM_BUG_ON otherwise). */
static void alloc_cluster(sl_device *d, uint32_t c)
{
	if (sli_list_first(d, SL_LIST_FREE) != c)
		st(d)->bugs++;
	sli_isolate_cluster(d, c);
}



/* inc_cluster_info_page() - <= 6.9: before a slot of cluster c is taken. */
static void inc_cluster_info_page(sl_device *d, uint32_t c)
{
	if (d->ci[c].flags == SL_CF_FREE)
		alloc_cluster(d, c);
}

/* dec_cluster_info_page() - <= 6.9: after a slot of cluster c was freed. */
static void dec_cluster_info_page(sl_device *d, uint32_t c)
{
	if (d->ci[c].count == 0)
		sc_free_cluster(d, c); /* free_cluster() */
}

/* swap_entry_free() - <= 6.9: a cache-only slot (0x40) becomes free. This
 * is the slot caches' release callback. */
static void swap_entry_free(sl_device *d, uint64_t off)
{
	sli_release_range(d, off, 1);
	dec_cluster_info_page(d, sli_cluster_of(off));
	sc_swap_range_free(&st(d)->si, off, 1);
}

/* scan_swap_map_ssd_cluster_conflict() - <= 6.9: `offset` lies in a free
 * cluster that is not the free-list head: drop this CPU's cluster. */
static int scan_swap_map_ssd_cluster_conflict(sl_device *d, int cpu, uint64_t offset)
{
	uint32_t c = sli_cluster_of(offset);
	uint32_t head = sli_list_first(d, SL_LIST_FREE);

	if (head == SL_NIL || c == head || d->ci[c].flags != SL_CF_FREE)
		return 0;
	st(d)->pcp[cpu].index = SL_NIL;
	return 1;
}

/* scan_swap_map_try_ssd_cluster() - <= 6.9: the next free slot of this
 * CPU's cluster, from its `next`; a CPU without one takes the free-list
 * head (which stays on the list); none left: discard the pending clusters
 * now and look again (the scan base reread), else fail. */
static int scan_swap_map_try_ssd_cluster(sl_device *d, scan_state *ss)
{
	percpu_cluster *pc = &st(d)->pcp[ss->cpu];

	for (;;) {
		if (pc->index == SL_NIL) {
			uint32_t head = sli_list_first(d, SL_LIST_FREE);
			if (head == SL_NIL) {
				if (!sc_swap_do_scheduled_discard(d, sc___free_cluster))
					return 0;
				ss->offset = ss->scan_base = st(d)->si.cluster_next_cpu[ss->cpu];
				continue;
			}
			pc->index = head;
			pc->next = sli_cluster_offset(head);
		}
		uint64_t max = sli_cluster_offset(pc->index) + SL_CLUSTER;
		if (max > d->max)
			max = d->max;
		/* other CPUs may have used our cluster: find a free slot */
		uint64_t tmp = sli_find_free(d, pc->next, max);
		if (tmp < max) {
			pc->next = tmp + 1;
			ss->offset = ss->scan_base = tmp;
			return 1;
		}
		pc->index = SL_NIL;
	}
}

/* vm_swap_full() - <= 6.9: nr_swap_pages * 2 < total_swap_pages, with
 * nr_swap_pages already short of the batch being scanned for. */
static int vm_swap_full(const sl_device *d, const scan_state *ss)
{
	return ss->nr_swap_pages * 2 < sl_total_swap_pages(d);
}

/* swap_offset_available_and_locked() - <= 6.9: free, or cache-only while
 * swap is more than half full (worth a reclaim attempt). */
static int swap_offset_available_and_locked(const sl_device *d, const scan_state *ss,
					    uint64_t offset)
{
	uint8_t b = d->map[offset];

	return b == SL_SLOT_FREE || (b == SL_SLOT_CACHE && vm_swap_full(d, ss));
}

/* One step of the latency budget of the scan loops (cond_resched()). */
static void scan_tick(scan_state *ss)
{
	if (--ss->latency_ration < 0) {
		ss->latency_ration = LATENCY_LIMIT;
		ss->scanned_many = 1;
	}
}

/* scan_swap_map_slots(), label scan: - <= 6.9: from offset+1 up to
 * highest_bit, then from lowest_bit up to (not including) scan_base. */
static int scan_swap_map_scan(sl_device *d, scan_state *ss)
{
	v6_9_state *s = st(d);

	while (++ss->offset <= s->si.highest_bit) {
		scan_tick(ss);
		if (swap_offset_available_and_locked(d, ss, ss->offset))
			return SCAN_CHECKS;
	}
	for (ss->offset = s->si.lowest_bit; ss->offset < ss->scan_base; ss->offset++) {
		scan_tick(ss);
		if (swap_offset_available_and_locked(d, ss, ss->offset))
			return SCAN_CHECKS;
	}
	return SCAN_NO_PAGE;
}

/* scan_swap_map_slots(), after a slot was taken - <= 6.9: go on in this
 * CPU's cluster, or (no free cluster) linearly while the budget lasts. */
static int scan_swap_map_next(sl_device *d, scan_state *ss)
{
	v6_9_state *s = st(d);

	if (ss->n_ret == ss->nr || ss->offset >= s->si.highest_bit)
		return SCAN_DONE;
	if (--ss->latency_ration < 0)
		return SCAN_DONE;
	if (scan_swap_map_try_ssd_cluster(d, ss))
		return SCAN_CHECKS;
	if (!ss->scanned_many) {
		uint64_t limit = ss->offset < ss->scan_base ? ss->scan_base : s->si.highest_bit;
		/* past max counts as used (the kernel reads one byte beyond) */
		for (; ss->offset <= limit && --ss->latency_ration > 0; ss->offset++)
			if (ss->offset < d->max && !d->map[ss->offset])
				return SCAN_CHECKS;
	}
	return SCAN_DONE;
}

/* scan_swap_map_slots(), label checks: - <= 6.9: validate `offset` and
 * take it (SWAP_HAS_CACHE: a slot-cache reservation). */
static int scan_swap_map_checks(sl_device *d, scan_state *ss)
{
	v6_9_state *s = st(d);

	while (scan_swap_map_ssd_cluster_conflict(d, ss->cpu, ss->offset)) {
		if (ss->n_ret)
			return SCAN_DONE;
		if (!scan_swap_map_try_ssd_cluster(d, ss))
			return SCAN_SCAN;
	}
	if (!s->si.highest_bit)
		return SCAN_NO_PAGE;
	if (ss->offset > s->si.highest_bit)
		ss->scan_base = ss->offset = s->si.lowest_bit;
	/* __try_to_reclaim_swap() finds no folio behind a cache-only slot */
	if (vm_swap_full(d, ss) && d->map[ss->offset] == SL_SLOT_CACHE)
		return SCAN_SCAN;
	if (d->map[ss->offset])
		return ss->n_ret ? SCAN_DONE : SCAN_SCAN;
	inc_cluster_info_page(d, sli_cluster_of(ss->offset));
	sli_reserve_range(d, ss->offset, 1);
	sc_swap_range_alloc(&s->si, d, ss->offset, 1);
	ss->slots[ss->n_ret++] = ss->offset;
	return scan_swap_map_next(d, ss);
}

/* scan_swap_map_slots() - <= 6.9, SSD with cluster_info: up to nr order-0
 * slots, reserved as cache-only; the labels are the states. */
static int scan_swap_map_slots(sl_device *d, int cpu, int nr, uint64_t *slots)
{
	scan_state ss = {
		.cpu = cpu, .nr = nr, .latency_ration = LATENCY_LIMIT, .slots = slots,
		.nr_swap_pages = sl_nr_swap_pages(d) - (uint64_t)nr,
	};
	int step;

	ss.scan_base = ss.offset = st(d)->si.cluster_next_cpu[cpu];
	step = scan_swap_map_try_ssd_cluster(d, &ss) ? SCAN_CHECKS : SCAN_SCAN;
	for (;;) {
		switch (step) {
		case SCAN_CHECKS:
			step = scan_swap_map_checks(d, &ss);
			break;
		case SCAN_SCAN:
			step = scan_swap_map_scan(d, &ss);
			break;
		case SCAN_DONE:
			sc_set_cluster_next(&st(d)->si, cpu, ss.offset + 1);
			return ss.n_ret;
		default: /* no_page */
			return ss.n_ret;
		}
	}
}

/* swap_alloc_cluster() - <= 6.9: a PMD folio takes the free-list head whole
 * (CLUSTER_FLAG_HUGE, not kept here), or fails. */
static uint64_t swap_alloc_cluster(sl_device *d)
{
	uint32_t c = sli_list_first(d, SL_LIST_FREE);
	uint64_t off;

	if (c == SL_NIL)
		return 0;
	off = sli_cluster_offset(c);
	alloc_cluster(d, c);
	sli_alloc_range(d, off, SL_PMD_ORDER);
	sc_swap_range_alloc(&st(d)->si, d, off, SL_CLUSTER);
	return off;
}

/* get_swap_pages() - <= 6.9, one device: n order-0 slots (the slot-cache
 * refill) through scan_swap_map_slots(), at most what is free (and taken off
 * nr_swap_pages before the scan); nothing when the device is full
 * (highest_bit == 0: off the avail list). */
static int get_swap_pages(sl_device *d, int cpu, int n, uint64_t *out)
{
	uint64_t avail = d->pages - d->inuse_pages;

	st(d)->refilled = 1;
	if (avail == 0 || !st(d)->si.highest_bit)
		return 0;
	if ((uint64_t)n > avail)
		n = (int)avail;
	if (n > SL_SWAP_SLOTS_CACHE_SIZE)
		n = SL_SWAP_SLOTS_CACHE_SIZE;
	return scan_swap_map_slots(d, cpu, n, out);
}

/* folio_alloc_swap() - <= 6.9: order 0 through the slot cache; a PMD folio
 * through get_swap_pages(1, .., 512) -> swap_alloc_cluster() on a block
 * device; smaller large folios never get here whole (reclaim splits them). */
static uint64_t v6_9_alloc(sl_device *d, int cpu, int order)
{
	v6_9_state *s = st(d);
	uint64_t off;

	if (order == 0) {
		s->refilled = 0;
		off = sli_dev_slots_alloc(d, cpu);
		if (off && !s->refilled)
			d->st.alloc_fast[0]++;
		return off;
	}
	if (order != SL_PMD_ORDER || !(d->flags & SL_DEV_BLKDEV))
		return 0;
	if ((d->pages - d->inuse_pages) / SL_CLUSTER == 0 || !s->si.highest_bit)
		return 0;
	return swap_alloc_cluster(d);
}

/* get_swap_pages()'s step on one device, for several devices - <= 6.9:
 * order 0 for the slot caches, a PMD folio through swap_alloc_cluster(). */
static int v6_9_get_swap_pages(sl_device *d, int cpu, int n, uint64_t *out, int order)
{
	if (order == 0)
		return get_swap_pages(d, cpu, n, out);
	if (order != SL_PMD_ORDER || !(d->flags & SL_DEV_BLKDEV) || !st(d)->si.highest_bit)
		return 0;
	out[0] = swap_alloc_cluster(d);
	return out[0] != 0;
}

/* free_swap_slot() per entry - <= 6.9: every slot whose last reference went
 * away goes to this CPU's free slot cache, in ascending order. */
static void v6_9_free(sl_device *d, int cpu, uint64_t off, uint32_t nr)
{
	for (uint32_t i = 0; i < nr; i++)
		sli_dev_slots_free(d, cpu, off + i);
}

/* swapon - <= 6.9, non-rotational device: lowest_bit 1, highest_bit
 * max - 1, each CPU's scan base random in [1, highest_bit], no per-CPU
 * cluster, the interleaved free list, the slot caches. */
static int v6_9_init(sl_device *d)
{
	v6_9_state *s;
	size_t n = (size_t)d->nr_cpus;

	if (!(d->flags & SL_DEV_SOLIDSTATE))
		return -1; /* rotational devices take the HDD scan (scan_hdd.c) */
	s = calloc(1, sizeof(*s) + n * (sizeof(uint64_t) + sizeof(percpu_cluster)));
	if (!s)
		return -1;
	d->pstate = s;
	s->pcp = (percpu_cluster *)(s + 1);
	s->si.cluster_next_cpu = (uint64_t *)(s->pcp + n);
	sc_swapon(&s->si, d, V6_9_RNG_SEED, random_inclusive);
	for (size_t cpu = 0; cpu < n; cpu++)
		s->pcp[cpu].index = SL_NIL;
	sc_setup_free_clusters(d);
	return sli_dev_slots_init(d, &s->slots);
}

static void v6_9_fini(sl_device *d)
{
	sl_swap_slots_fini(&st(d)->slots);
	free(d->pstate);
	d->pstate = NULL;
}

/* drain_swap_slots_cache() - <= 6.9: every CPU's cached slots go back. */
static void v6_9_drain(sl_device *d)
{
	sl_swap_slots_drain(&st(d)->slots);
}

/* swap_discard_work() - <= 6.9: the discard worker, between operations. */
static void v6_9_discard_work(sl_device *d)
{
	sc_swap_discard_work(d, sc___free_cluster);
}

#define FAIL(...) do { snprintf(msg, len, __VA_ARGS__); return -1; } while (0)

/* Clusters: only the free and discard lists are used; a cluster is on one
 * of them iff its count is 0; per-CPU clusters exist. */
static int v6_9_check_clusters(const sl_device *d, char *msg, size_t len)
{
	const v6_9_state *s = st(d);

	if (s->bugs)
		FAIL("linux-6.9: %llu first allocations in a free cluster off the list head",
		     (unsigned long long)s->bugs);
	for (int l = 1; l < SL_NR_LISTS; l++)
		if (d->list_len[l] && l != SL_LIST_DISCARD)
			FAIL("linux-6.9: list %d holds %u clusters", l, d->list_len[l]);
	for (uint32_t c = 0; c < d->nr_clusters; c++)
		if ((d->ci[c].count == 0) !=
		    (d->ci[c].flags == SL_CF_FREE || d->ci[c].flags == SL_CF_DISCARD))
			FAIL("linux-6.9: cluster %u count %u flags %u", c, d->ci[c].count,
			     d->ci[c].flags);
	for (int cpu = 0; cpu < d->nr_cpus; cpu++)
		if (s->pcp[cpu].index != SL_NIL && s->pcp[cpu].index >= d->nr_clusters)
			FAIL("linux-6.9: cpu %d cluster %u", cpu, s->pcp[cpu].index);
	return 0;
}

/* lowest_bit <= every free slot <= highest_bit; highest_bit == 0 iff none. */
static int v6_9_check_bits(const sl_device *d, char *msg, size_t len)
{
	const v6_9_state *s = st(d);
	uint64_t first = sli_find_free(d, 1, d->max), last = 0;

	for (uint64_t o = d->max; o-- > 1;) {
		if (!d->map[o]) {
			last = o;
			break;
		}
	}
	if (first < d->max && (first < s->si.lowest_bit || last > s->si.highest_bit))
		FAIL("linux-6.9: free slots %llu..%llu outside lowest_bit %llu highest_bit %llu",
		     (unsigned long long)first, (unsigned long long)last,
		     (unsigned long long)s->si.lowest_bit, (unsigned long long)s->si.highest_bit);
	/* 0 exactly when every slot is in use (slots pending discard are not,
	 * though no scan can take them yet) */
	if ((d->inuse_pages == d->pages) != (s->si.highest_bit == 0))
		FAIL("linux-6.9: highest_bit %llu with %llu of %llu slots in use",
		     (unsigned long long)s->si.highest_bit, (unsigned long long)d->inuse_pages,
		     (unsigned long long)d->pages);
	return 0;
}

/* Every cache-only slot is held by exactly one slot-cache entry. */
static int v6_9_check_caches(const sl_device *d, char *msg, size_t len)
{
	/* entries; above several devices the caches are the set's */
	const sl_swap_slots *ss = d->slots;
	uint64_t cache_only = 0, held = 0;
	uint8_t *seen = calloc(d->max, 1);

	if (!seen)
		FAIL("out of memory in the checker");
	for (uint64_t o = 1; o < d->max; o++)
		cache_only += d->map[o] == SL_SLOT_CACHE;
	for (int cpu = 0; cpu < d->nr_cpus; cpu++) {
		const sl_swap_slots_cache *c = &ss->cpu[cpu];
		for (int i = 0; i < c->nr + c->n_ret; i++) {
			uint64_t e = i < c->nr ? c->slots[c->cur + i] : c->slots_ret[i - c->nr];
			uint64_t o = sl_entry_off(e);
			if (sl_entry_type(e) != d->type)
				continue;
			held++;
			if (o == 0 || o >= d->max || d->map[o] != SL_SLOT_CACHE || seen[o]++) {
				free(seen);
				FAIL("linux-6.9: cpu %d caches slot %llu (map 0x%02x) wrongly", cpu,
				     (unsigned long long)o, o < d->max ? d->map[o] : 0);
			}
		}
	}
	free(seen);
	if (cache_only != held)
		FAIL("linux-6.9: %llu cache-only slots, the slot caches hold %llu",
		     (unsigned long long)cache_only, (unsigned long long)held);
	return 0;
}

static int v6_9_check(const sl_device *d, char *msg, size_t len)
{
	if (v6_9_check_clusters(d, msg, len) || v6_9_check_bits(d, msg, len))
		return -1;
	return v6_9_check_caches(d, msg, len);
}

/* A rotational device: no cluster_info, the HDD scan (scan_hdd.c). */
static const sl_policy rotational = SL_HDD_CLASSIC_POLICY("linux-6.9", SL_POL_SPLIT_MTHP, hd_free_slots);

const sl_policy sl_policy_v6_9 = {
	.name = "linux-6.9",
	.summary = "Linux <=6.9: per-CPU cluster, swap_map scan with random 64 MiB jumps, "
		   "PMD takes a free cluster, mTHP split, slot caches",
	.kernel = "<=6.9",
	.props = SL_POL_SPLIT_MTHP | SL_POL_SLOT_CACHE | SL_POL_DISCARD_MARKS_BAD,
	.init = v6_9_init,
	.fini = v6_9_fini,
	.alloc = v6_9_alloc,
	.free = v6_9_free,
	.get_swap_pages = v6_9_get_swap_pages,
	.release = swap_entry_free,
	.check = v6_9_check,
	.drain = v6_9_drain,
	.tick = v6_9_discard_work,
	.rotational = &rotational,
};
