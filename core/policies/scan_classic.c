/*
 * scan_classic.c - the classic swap_map scanner of Linux <= 6.10
 * (swaplab/scan_classic.h): lowest_bit/highest_bit, the per-CPU scan bases
 * with their random 64 MiB jumps and the interleaved initial free list
 * (linux-6.9, linux-6.10, nonfull-2024), and the 6.10 scan_swap_map_slots()
 * with get_swap_pages(), swap_entry_free() and the slot-cache glue
 * (linux-6.10, nonfull-2024). The generation's cluster step comes in through
 * sc_ops. Simplifications as in v6_10.c: a non-rotational device without
 * discard (rotational ones: scan_hdd.c), si->lock never dropped, slot-cache slots never reclaimable.
 */
#include <stdio.h>
#include <stdlib.h>
#include "swaplab/scan_classic.h"
#include "swaplab/cluster.h"
#include "swaplab/locks.h"

#define SWAP_CLUSTER_COLS 32u       /* max(64 / sizeof(ci), 64 MiB / 2 MiB) */
#define LATENCY_LIMIT 256
#define SWAP_ADDRESS_SPACE_SHIFT 14 /* 64 MiB of swap per address space */
#define SCAN_BASE_SEED 0x6a10u      /* the 6.10 model's get_random_u32() stream */

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
	for (uint32_t j = 0; j < SWAP_CLUSTER_COLS; j++)
		for (uint32_t c = j; c < d->nr_clusters; c += SWAP_CLUSTER_COLS)
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
	return 0;
}

/* ---- sc_scanner: the 6.10 scan with the generation's cluster step ------- */

int sc_swap_range_empty(const sl_device *d, uint64_t off, uint32_t nr, uint64_t max)
{
	return off + nr <= max && sli_range_free(d, off, nr);
}

/* scan_swap_map_ssd_cluster_conflict() - 6.10: the offset lies in a free
 * cluster that is not the free-list head (this CPU's cluster was freed and
 * requeued: a stale cursor): forget this CPU's cursor for the order. */
static int sc_scan_swap_map_ssd_cluster_conflict(sl_device *d, int cpu, uint64_t off, int order)
{
	uint32_t c = sli_cluster_of(off), head = sli_list_first(d, SL_LIST_FREE);

	if (head == SL_NIL || c == head || !sc(d)->ops->cluster_is_free(d, c))
		return 0;
	d->cursor[cpu * SL_CURSOR_STRIDE + order] = 0;
	return 1;
}

/* swap_offset_available_and_locked() - 6.10: a free slot. A cache-only slot
 * (vm_swap_full) would go through `checks` to __try_to_reclaim_swap(),
 * which finds no folio behind a slot-cache slot: it is passed over. */
static int sc_swap_offset_available(const sl_device *d, uint64_t off)
{
	return d->map[off] == SL_SLOT_FREE;
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
	uint64_t offset, scan_base;
	int latency_ration = LATENCY_LIMIT, n_ret = 0, scanned_many = 0;

	/* regular swap files take only order 0 */
	if (order > 0 && !(d->flags & SL_DEV_BLKDEV))
		return 0;
	scan_base = offset = si->cluster_next_cpu[cpu];
	if (!ops->try_ssd_cluster(d, cpu, &offset, &scan_base, order)) {
		if (order > 0)
			goto no_page;
		goto scan;
	}

checks:
	while (sc_scan_swap_map_ssd_cluster_conflict(d, cpu, offset, order)) {
		if (n_ret) /* take a break if we already got some slots */
			goto done;
		if (!ops->try_ssd_cluster(d, cpu, &offset, &scan_base, order)) {
			if (order > 0)
				goto no_page;
			goto scan;
		}
	}
	if (!si->highest_bit)
		goto no_page;
	if (order == 0 && offset > si->highest_bit)
		scan_base = offset = si->lowest_bit;
	if (d->map[offset]) {
		if (sl_vm_swap_full(d) && d->map[offset] == SL_SLOT_CACHE)
			goto scan; /* reclaim finds no folio: check the next one */
		if (!n_ret)
			goto scan;
		goto done;
	}
	ops->add_cluster_info_page(d, cpu, offset, order);
	sc_swap_range_alloc(si, d, offset, nr_pages);
	slots[n_ret++] = offset;

	/* got enough slots or reach max slots? */
	if (n_ret == nr || offset >= si->highest_bit)
		goto done;
	/* time to take a break? */
	if (--latency_ration < 0) {
		if (n_ret)
			goto done;
		latency_ration = LATENCY_LIMIT;
	}
	/* try to get more slots in cluster */
	if (ops->try_ssd_cluster(d, cpu, &offset, &scan_base, order))
		goto checks;
	if (order > 0)
		goto done;
	/* no free cluster (fragmented): a little more scanning under the lock */
	if (!scanned_many) {
		uint64_t scan_limit = offset < scan_base ? scan_base : si->highest_bit;
		for (; offset <= scan_limit && --latency_ration > 0; offset++)
			if (!d->map[offset])
				goto checks;
	}

done:
	if (order == 0)
		sc_set_cluster_next(si, cpu, offset + 1);
	return n_ret;

scan:
	/* order 0 only: the linear scan above the base, then from lowest_bit */
	while (++offset <= si->highest_bit) {
		if (--latency_ration < 0) {
			latency_ration = LATENCY_LIMIT;
			scanned_many = 1;
		}
		if (sc_swap_offset_available(d, offset))
			goto checks;
	}
	offset = si->lowest_bit;
	while (offset < scan_base) {
		if (--latency_ration < 0) {
			latency_ration = LATENCY_LIMIT;
			scanned_many = 1;
		}
		if (sc_swap_offset_available(d, offset))
			goto checks;
		offset++;
	}

no_page:
	return n_ret;
}

int sc_get_swap_pages(sl_device *d, int cpu, int n, uint64_t *out, int order)
{
	uint64_t avail = (d->pages - d->inuse_pages) >> order;

	if (!avail)
		return 0;
	if ((uint64_t)n > avail)
		n = (int)avail;
	if (!sc(d)->si.highest_bit)
		return 0;
	return sc_scan_swap_map_slots(d, cpu, n, out, order);
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

	if (order == 0)
		return sli_dev_slots_alloc(d, cpu);
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
	sc_swapon(&s->si, d, SCAN_BASE_SEED, sc_random_inclusive);
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
