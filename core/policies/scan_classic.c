/*
 * scan_classic.c - the classic swap_map scanner of Linux <= 6.13
 * (swaplab/scan_classic.h): lowest_bit/highest_bit, the per-CPU scan bases
 * with their random 64 MiB jumps, the interleaved initial free list, the
 * batch accounting of get_swap_pages() and the linear scan (every <= 6.13
 * generation), and the SSD scan_swap_map_slots() with get_swap_pages(),
 * swap_entry_free(), the slot-cache glue and the 6.10 cluster step
 * (linux-6.9, linux-6.10, nonfull-2024). A generation's own cluster step
 * comes in through sc_ops. Simplifications (docs/policies/linux-6.10.md):
 * si->lock is never dropped, slot-cache slots are never reclaimable.
 */
#include <stdio.h>
#include <stdlib.h>
#include "swaplab/scan_classic.h"
#include "swaplab/cluster.h"
#include "swaplab/locks.h"
#include "swaplab/debug.h"

#define SWAP_ADDRESS_SPACE_SHIFT 14 /* 64 MiB of swap per address space */

static sc_scanner *sc(sl_device *d) { return d->pstate; }

/* ---- sc_swap_info: the bookkeeping of every classic generation ---------- */

uint64_t sc_random_inclusive(sl_rng *rng, uint64_t lo, uint64_t hi)
{
	return lo + sl_rng_next(rng) % (hi - lo + 1);
}

void sc_swapon(sc_swap_info *si, const sl_device *d, uint64_t seed, sc_random_fn rnd)
{
	si->random_inclusive = rnd;
	sl_rng_init(&si->rng, SL_RNG_DEFAULT, seed);
	si->lowest_bit = 1;
	si->highest_bit = d->max - 1;
	for (int cpu = 0; cpu < d->nr_cpus; cpu++)
		si->cluster_next_cpu[cpu] = rnd(&si->rng, 1, si->highest_bit);
}

void sc_swap_range_alloc(sc_swap_info *si, const sl_device *d, uint64_t off, uint32_t nr)
{
	uint64_t end = off + nr - 1;

	if (off == si->lowest_bit)
		si->lowest_bit += nr;
	if (end == si->highest_bit)
		si->highest_bit -= nr;
	if (d->inuse_pages == d->pages) {
		si->lowest_bit = d->max;
		si->highest_bit = 0; /* del_from_avail_list() */
	}
}

void sc_swap_range_free(sc_swap_info *si, uint64_t off, uint32_t nr)
{
	uint64_t end = off + nr - 1;

	if (off < si->lowest_bit)
		si->lowest_bit = off;
	if (end > si->highest_bit)
		si->highest_bit = end; /* from 0: add_to_avail_list() */
}

void sc_set_cluster_next(sc_swap_info *si, int cpu, uint64_t next)
{
	uint64_t prev = si->cluster_next_cpu[cpu];

	if ((prev >> SWAP_ADDRESS_SPACE_SHIFT) != (next >> SWAP_ADDRESS_SPACE_SHIFT)) {
		if (si->highest_bit <= si->lowest_bit)
			return;
		next = si->random_inclusive(&si->rng, si->lowest_bit, si->highest_bit);
		next &= ~((UINT64_C(1) << SWAP_ADDRESS_SPACE_SHIFT) - 1);
		if (next < si->lowest_bit)
			next = si->lowest_bit;
	}
	si->cluster_next_cpu[cpu] = next;
}

void sc_setup_free_clusters(sl_device *d)
{
	for (uint32_t j = 0; j < SL_SWAP_CLUSTER_COLS; j++)
		for (uint32_t c = j; c < d->nr_clusters; c += SL_SWAP_CLUSTER_COLS)
			if (!d->ci[c].count)
				sli_move_cluster(d, c, SL_LIST_FREE, SL_CF_FREE);
}

void sc_swap_cluster_schedule_discard(sl_device *d, uint32_t c)
{
	sli_mark_discarding(d, c, 1);
	sli_move_cluster(d, c, SL_LIST_DISCARD, SL_CF_DISCARD);
}

uint32_t sc_swap_do_scheduled_discard(sl_device *d, sc_free_cluster_fn free_cluster)
{
	uint32_t c, n = 0;

	while ((c = sli_list_first(d, SL_LIST_DISCARD)) != SL_NIL) {
		sli_isolate_cluster(d, c);
		/* the discard I/O runs here (si->lock dropped and retaken) */
		sl_ci_lock(d, c);
		free_cluster(d, c);
		sli_mark_discarding(d, c, 0);
		sl_ci_unlock(d, c);
		n++;
	}
	sli_stats(d)->discarded_clusters += n;
	return n;
}

void sc___free_cluster(sl_device *d, uint32_t c)
{
	sli_move_cluster(d, c, SL_LIST_FREE, SL_CF_FREE);
	d->ci[c].order = 0;
}

void sc_free_cluster(sl_device *d, uint32_t c)
{
	if (d->flags & SL_DEV_DISCARD)
		sc_swap_cluster_schedule_discard(d, c);
	else
		sc___free_cluster(d, c);
}

void sc_swap_discard_work(sl_device *d, sc_free_cluster_fn free_cluster)
{
	if (!(d->flags & SL_DEV_DISCARD))
		return;
	sl_dev_lock(d);
	sc_swap_do_scheduled_discard(d, free_cluster);
	sl_dev_unlock(d);
}

int sc_check_bits(const sc_swap_info *si, const sl_device *d, const char *who, char *msg,
		  size_t len)
{
	for (uint64_t off = 1; off < d->max; off++) {
		if (d->map[off] == SL_SLOT_FREE && (off < si->lowest_bit || off > si->highest_bit)) {
			snprintf(msg, len, "%s: free slot %llu outside [lowest_bit %llu, highest_bit %llu]",
				 who, (unsigned long long)off, (unsigned long long)si->lowest_bit,
				 (unsigned long long)si->highest_bit);
			return -1;
		}
	}
	/* 0 exactly when every slot is in use (slots pending discard are not,
	 * though no scan can take them yet) */
	if ((d->inuse_pages == d->pages) != (si->highest_bit == 0)) {
		snprintf(msg, len, "%s: highest_bit %llu with %llu of %llu slots in use", who,
			 (unsigned long long)si->highest_bit, (unsigned long long)d->inuse_pages,
			 (unsigned long long)d->pages);
		return -1;
	}
	return 0;
}

/* ---- get_swap_pages()'s batch and the linear scan (every <= 6.13) ------- */

int sc_swap_batch_begin(sl_device *d, int n, int order)
{
	uint64_t avail = (d->pages - d->inuse_pages) >> order;

	if ((uint64_t)n > avail)
		n = (int)avail;
	if (n > SC_SWAP_BATCH)
		n = SC_SWAP_BATCH;
	SL_ASSERT(n >= 0 && !atomic_load_explicit(&d->gsp_held, memory_order_relaxed));
	atomic_store_explicit(&d->gsp_held, (uint64_t)n << order, memory_order_relaxed);
	return n;
}

void sc_swap_batch_end(sl_device *d)
{
	atomic_store_explicit(&d->gsp_held, 0, memory_order_relaxed);
}

/* The scan: label's loops over [from, to], one latency step per slot
 * (cond_resched() after LATENCY_LIMIT); 1 with *off at a slot worth
 * checking. Locals, not the sc_scan fields, carry the loop. */
static int scan_range(const sl_device *d, uint64_t *off, uint64_t from, uint64_t to, sc_scan *sc)
{
	int ration = sc->latency_ration, found = 0;
	uint64_t o;

	for (o = from; o <= to; o++) {
		if (--ration < 0) {
			ration = SC_LATENCY_LIMIT;
			sc->scanned_many = 1;
		}
		if (sc_swap_offset_available(d, o)) {
			found = 1;
			break;
		}
	}
	sc->latency_ration = ration;
	*off = o;
	return found;
}

int sc_scan_linear(const sl_device *d, const sc_swap_info *si, sc_scan *sc)
{
	if (scan_range(d, &sc->offset, sc->offset + 1, si->highest_bit, sc))
		return 1;
	return sc->scan_base > si->lowest_bit &&
	       scan_range(d, &sc->offset, si->lowest_bit, sc->scan_base - 1, sc);
}

int sc_scan_forward(const sl_device *d, const sc_swap_info *si, sc_scan *sc)
{
	uint64_t off = sc->offset;
	uint64_t limit = off < sc->scan_base ? sc->scan_base : si->highest_bit;
	uint64_t below_max = limit < d->max ? limit : d->max - 1;
	int ration = sc->latency_ration, found = 0;

	if (sc->scanned_many)
		return 0;
	for (; off <= below_max && --ration > 0; off++) {
		if (!d->map[off]) {
			found = 1;
			break;
		}
	}
	/* past max counts as used (the kernel reads the bytes beyond) */
	if (!found && off > below_max)
		for (; off <= limit && --ration > 0; off++)
			;
	sc->offset = off;
	sc->latency_ration = ration;
	return found;
}

/* ---- the 6.10 cluster step, shared with 6.9 ----------------------------- */

/* alloc_cluster() - 6.10 and <= 6.9: the first slot of a free cluster is
 * being allocated; it must be the free-list head, which is unlinked. */
static void alloc_cluster(sl_device *d, uint32_t c)
{
	SL_ASSERT(sli_list_first(d, SL_LIST_FREE) == c); /* VM_BUG_ON */
	sli_isolate_cluster(d, c);
}

void sc_add_cluster_info_page(sl_device *d, int cpu, uint64_t off, int order)
{
	uint32_t c = sli_cluster_of(off);

	(void)cpu;
	if (sc_cluster_is_free(d, c))
		alloc_cluster(d, c);
	if (order == 0)
		sli_reserve_range(d, off, 1); /* usage SWAP_HAS_CACHE */
	else
		sli_alloc_range(d, off, order);
}

void sc_dec_cluster_info_page(sl_device *d, uint32_t c)
{
	if (d->ci[c].count == 0)
		sc_free_cluster(d, c); /* free_cluster() */
}

/* The next aligned free range of 2^order slots in this CPU's cluster for
 * the order, from its cursor to the cluster end; without a cluster, the
 * free-list head (left on the list until its first slot is allocated);
 * with no free cluster, the pending discards (synchronously, the scan base
 * reread), else fail. <= 6.9 is the order-0 case: percpu_cluster->next is
 * next[0], and a cluster used up to its end is dropped either way. */
int sc_scan_swap_map_try_ssd_cluster(sl_device *d, int cpu, uint64_t *offset, uint64_t *scan_base,
				     int order)
{
	uint64_t *next = sli_cursor(d, cpu, order);
	uint32_t nr = 1u << order;

	for (;;) { /* new_cluster: */
		uint64_t tmp = *next, max;

		if (!tmp) {
			uint32_t c = sli_list_first(d, SL_LIST_FREE);
			if (c == SL_NIL) {
				if (!sc_swap_do_scheduled_discard(d, sc___free_cluster))
					return 0;
				*offset = *scan_base = sc(d)->si.cluster_next_cpu[cpu];
				continue;
			}
			tmp = sli_cluster_offset(c);
		}
		max = sli_cluster_offset(sli_cluster_of(tmp)) + SL_CLUSTER;
		if (max > d->max)
			max = d->max;
		while (tmp < max && !sc_swap_range_empty(d, tmp, nr, max))
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

/* ---- sc_scanner: the SSD scan with the generation's cluster step -------- */

int sc_swap_range_empty(const sl_device *d, uint64_t off, uint32_t nr, uint64_t max)
{
	return off + nr <= max && sli_range_free(d, off, nr);
}

/* scan_swap_map_ssd_cluster_conflict() - 6.10 (<= 6.9 likewise): the
 * offset lies in a free cluster that is not the free-list head (this CPU's
 * cluster was freed and requeued: a stale cursor): forget this CPU's
 * cluster for the order. */
static int sc_scan_swap_map_ssd_cluster_conflict(sl_device *d, int cpu, uint64_t off, int order)
{
	uint32_t c = sli_cluster_of(off), head = sli_list_first(d, SL_LIST_FREE);

	if (head == SL_NIL || c == head || !sc(d)->ops->cluster_is_free(d, c))
		return 0;
	*sli_cursor(d, cpu, order) = 0;
	return 1;
}

/* The gotos follow the kernel's: per-CPU cluster first, then (order 0 only)
 * a short scan forward under the lock, or the full linear scan when there is
 * no cluster. Order 0 reserves slots for the swap cache (0x40), a large
 * order gets its folio's slots (count 1). */
int sc_scan_swap_map_slots(sl_device *d, int cpu, int nr, uint64_t *slots, int order)
{
	sc_scanner *s = sc(d);
	sc_swap_info *si = &s->si;
	const sc_ops *ops = s->ops;
	uint32_t nr_pages = 1u << order;
	sc_scan ss = { .latency_ration = SC_LATENCY_LIMIT };
	int n_ret = 0, step;

	/* regular swap files take only order 0 */
	if (order > 0 && !(d->flags & SL_DEV_BLKDEV))
		return 0;
	ss.scan_base = ss.offset = si->cluster_next_cpu[cpu];
	if (!ops->try_ssd_cluster(d, cpu, &ss.offset, &ss.scan_base, order)) {
		if (order > 0)
			goto no_page;
		goto scan;
	}

checks:
	while (sc_scan_swap_map_ssd_cluster_conflict(d, cpu, ss.offset, order)) {
		if (n_ret) /* take a break if we already got some slots */
			goto done;
		if (!ops->try_ssd_cluster(d, cpu, &ss.offset, &ss.scan_base, order)) {
			if (order > 0)
				goto no_page;
			goto scan;
		}
	}
	if ((step = sc_checks(d, si, &ss, n_ret, order == 0)) == SC_SCAN)
		goto scan;
	if (step == SC_DONE)
		goto done;
	if (step == SC_NO_PAGE)
		goto no_page;
	ops->add_cluster_info_page(d, cpu, ss.offset, order);
	sc_swap_range_alloc(si, d, ss.offset, nr_pages);
	sc_swap_batch_took(d, order);
	slots[n_ret++] = ss.offset;

	/* got enough slots or reach max slots? */
	if (n_ret == nr || ss.offset >= si->highest_bit)
		goto done;
	/* time to take a break? (n_ret > 0 here) */
	if (--ss.latency_ration < 0)
		goto done;
	/* try to get more slots in cluster */
	if (ops->try_ssd_cluster(d, cpu, &ss.offset, &ss.scan_base, order))
		goto checks;
	if (order > 0)
		goto done;
	/* no free cluster (fragmented): a little more scanning under the lock */
	if (sc_scan_forward(d, si, &ss))
		goto checks;

done:
	if (order == 0)
		sc_set_cluster_next(si, cpu, ss.offset + 1);
	return n_ret;

scan:
	/* order 0 only */
	if (sc_scan_linear(d, si, &ss))
		goto checks;
no_page:
	return n_ret;
}

int sc_get_swap_pages(sl_device *d, int cpu, int n, uint64_t *out, int order)
{
	int got = 0;

	sc(d)->refilled = 1;
	n = sc_swap_batch_begin(d, n, order);
	if (n && sc(d)->si.highest_bit)
		got = sc_scan_swap_map_slots(d, cpu, n, out, order);
	sc_swap_batch_end(d);
	return got;
}

void sc_swap_entry_free(sl_device *d, uint64_t off)
{
	sc_scanner *s = sc(d);

	sli_release_range(d, off, 1);
	s->ops->dec_cluster_info_page(d, sli_cluster_of(off));
	sc_swap_range_free(&s->si, off, 1);
}

uint64_t sc_folio_alloc_swap(sl_device *d, int cpu, int order)
{
	uint64_t off = 0;

	if (order == 0) {
		sc(d)->refilled = 0;
		off = sli_dev_slots_alloc(d, cpu);
		if (off && !sc(d)->refilled)
			sli_stats(d)->alloc_fast[0]++;
		return off;
	}
	sc_get_swap_pages(d, cpu, 1, &off, order);
	return off;
}

void sc_free_swap_slots(sl_device *d, int cpu, uint64_t off, uint32_t nr)
{
	for (uint32_t i = 0; i < nr; i++)
		sli_dev_slots_free(d, cpu, off + i);
}

void sc_drain_swap_slots(sl_device *d)
{
	sl_swap_slots_drain(&sc(d)->slots);
}

void *sc_init(sl_device *d, size_t size, const sc_ops *ops)
{
	sc_scanner *s;

	if (!(d->flags & SL_DEV_SOLIDSTATE))
		return NULL; /* rotational devices take the HDD scan (scan_hdd.c) */
	s = calloc(1, size);
	if (!s)
		return NULL;
	d->pstate = s;
	s->ops = ops;
	s->si.cluster_next_cpu = calloc((size_t)d->nr_cpus, sizeof(uint64_t));
	if (!s->si.cluster_next_cpu)
		return NULL;
	sc_setup_free_clusters(d);
	sc_swapon(&s->si, d, ops->seed, ops->random_inclusive);
	if (sli_dev_slots_init(d, &s->slots))
		return NULL;
	return s;
}

void sc_fini(sl_device *d)
{
	sc_scanner *s = sc(d);

	sl_swap_slots_fini(&s->slots);
	free(s->si.cluster_next_cpu);
	free(s);
	d->pstate = NULL;
}
