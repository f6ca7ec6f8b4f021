/*
 * scan_hdd.c - scan_swap_map_slots() on a device without cluster_info,
 * <= 6.13 (swaplab/scan_hdd.h). Kernel functions modelled:
 * scan_swap_map_slots (the non-SSD branches), set_cluster_next (rotational:
 * si->cluster_next), swap_range_alloc / swap_range_free (the bounds, shared
 * with scan_classic.c), get_swap_pages for one device, swap_entry_free, and
 * the slot caches of swap_slots.c on top.
 */
#include <stdlib.h>
#include <stdio.h>
#include "swaplab/swaplab.h"
#include "swaplab/cluster.h"
#include "swaplab/swap_slots.h"
#include "swaplab/scan_classic.h"
#include "swaplab/scan_hdd.h"

typedef struct hd_state {
	sc_swap_info si;           /* lowest_bit / highest_bit */
	uint64_t cluster_next;     /* si->cluster_next: where the next scan starts */
	uint32_t cluster_nr;       /* si->cluster_nr: slots left in this run */
	sl_swap_slots slots;
} hd_state;

static hd_state *hd(const sl_device *d) { return d->pstate; }

/* The model's list bookkeeping for cluster c (the kernel has none here). */
static void hd_relist(sl_device *d, uint32_t c)
{
	const sl_cluster *ci = &d->ci[c];
	int list = ci->count == 0 ? SL_LIST_FREE : ci->count == SL_CLUSTER ? SL_LIST_FULL
									   : SL_LIST_NONFULL(0);
	int flag = ci->count == 0 ? SL_CF_FREE : ci->count == SL_CLUSTER ? SL_CF_FULL
									 : SL_CF_NONFULL;

	if (ci->flags != flag)
		sli_move_cluster(d, c, list, flag);
}

/* scan_swap_map_slots() - <= 6.13, device without cluster_info: up to nr
 * order-0 slots, reserved for the swap cache. The gotos are the kernel's;
 * `checks`, the linear scan and the short forward scan are the classic
 * scanner's (scan_classic.c). */
static int hd_scan_swap_map_slots(sl_device *d, int nr, uint64_t *slots)
{
	hd_state *h = hd(d);
	sc_scan ss = { .latency_ration = SC_LATENCY_LIMIT };
	uint64_t last_in_cluster;
	int n_ret = 0, step;

	ss.scan_base = ss.offset = h->cluster_next;
	if (!h->cluster_nr--) {
		/* the run is used up: start a new one */
		if (d->pages - d->inuse_pages < SL_CLUSTER) {
			h->cluster_nr = SL_CLUSTER - 1;
			goto checks;
		}
		/* seeks are expensive: the first 512 free slots in a row from
		 * the start of the device (unaligned) */
		ss.scan_base = ss.offset = h->si.lowest_bit;
		last_in_cluster = ss.offset + SL_CLUSTER - 1;
		for (; last_in_cluster <= h->si.highest_bit; ss.offset++) {
			if (d->map[ss.offset]) {
				last_in_cluster = ss.offset + SL_CLUSTER;
			} else if (ss.offset == last_in_cluster) {
				ss.offset -= SL_CLUSTER - 1;
				h->cluster_next = ss.offset;
				h->cluster_nr = SL_CLUSTER - 1;
				goto checks;
			}
			if (--ss.latency_ration < 0)
				ss.latency_ration = SC_LATENCY_LIMIT; /* cond_resched() */
		}
		ss.offset = ss.scan_base;
		h->cluster_nr = SL_CLUSTER - 1;
	}

checks:
	if ((step = sc_checks(d, &h->si, &ss, n_ret, 1)) == SC_SCAN)
		goto scan;
	if (step == SC_DONE)
		goto done;
	if (step == SC_NO_PAGE)
		goto no_page;
	sli_reserve_range(d, ss.offset, 1);
	hd_relist(d, sli_cluster_of(ss.offset));
	sc_swap_range_alloc(&h->si, d, ss.offset, 1);
	sc_swap_batch_took(d, 0);
	slots[n_ret++] = ss.offset;
	if (n_ret == nr || ss.offset >= h->si.highest_bit)
		goto done;
	if (--ss.latency_ration < 0)
		goto done; /* time to take a break (n_ret > 0) */
	/* still more slots in this run? */
	if (h->cluster_nr && !d->map[++ss.offset]) {
		--h->cluster_nr;
		goto checks;
	}
	/* else a short scan forward under the lock */
	if (sc_scan_forward(d, &h->si, &ss))
		goto checks;
done:
	h->cluster_next = ss.offset + 1; /* set_cluster_next(), rotational */
	return n_ret;

scan:
	if (sc_scan_linear(d, &h->si, &ss))
		goto checks;
no_page:
	return n_ret;
}

/* get_swap_pages() - <= 6.13, one rotational device (the batch accounting
 * of scan_classic.h). */
int hd_get_swap_pages(sl_device *d, int cpu, int n, uint64_t *out, int order)
{
	int got = 0;

	(void)cpu;
	/* no cluster_info: no large folio, not even a PMD one */
	if (order > 0)
		return 0;
	n = sc_swap_batch_begin(d, n, 0);
	if (n && hd(d)->si.highest_bit)
		got = hd_scan_swap_map_slots(d, n, out);
	sc_swap_batch_end(d);
	return got;
}

/* swap_entry_free() - <= 6.13: a cache-only slot back. */
void hd_release(sl_device *d, uint64_t off)
{
	sli_release_range(d, off, 1);
	hd_relist(d, sli_cluster_of(off));
	sc_swap_range_free(&hd(d)->si, off, 1);
}

uint64_t hd_folio_alloc_swap(sl_device *d, int cpu, int order)
{
	if (order > 0)
		return 0;
	return sli_dev_slots_alloc(d, cpu);
}

void hd_free_slots(sl_device *d, int cpu, uint64_t off, uint32_t nr)
{
	for (uint32_t i = 0; i < nr; i++)
		sli_dev_slots_free(d, cpu, off + i);
}

void hd_free_range_direct(sl_device *d, int cpu, uint64_t off, uint32_t nr)
{
	if (nr == 1) {
		sli_dev_slots_free(d, cpu, off);
		return;
	}
	sli_release_range(d, off, nr);
	hd_relist(d, sli_cluster_of(off));
	sc_swap_range_free(&hd(d)->si, off, nr);
}

void hd_drain(sl_device *d)
{
	sl_swap_slots_drain(&hd(d)->slots);
}

/* swapon, rotational: lowest_bit 1, cluster_next 1, no per-CPU bases. */
int hd_init(sl_device *d)
{
	hd_state *h;

	if (d->flags & (SL_DEV_SOLIDSTATE | SL_DEV_DISCARD))
		return -1;
	h = calloc(1, sizeof(*h));
	if (!h)
		return -1;
	d->pstate = h;
	h->si.lowest_bit = 1;
	h->si.highest_bit = d->max - 1;
	h->cluster_next = 1;
	sli_setup_clusters(d, 1);
	return sli_dev_slots_init(d, &h->slots);
}

void hd_fini(sl_device *d)
{
	sl_swap_slots_fini(&hd(d)->slots);
	free(d->pstate);
	d->pstate = NULL;
}

int hd_check(const sl_device *d, char *msg, size_t len)
{
	for (uint32_t c = 0; c < d->nr_clusters; c++) {
		const sl_cluster *ci = &d->ci[c];
		int want = ci->count == 0 ? SL_CF_FREE : ci->count == SL_CLUSTER ? SL_CF_FULL
										 : SL_CF_NONFULL;
		if (ci->flags != want || ci->order != 0) {
			snprintf(msg, len, "hdd: cluster %u with count %u has flag %u order %u", c,
				 ci->count, ci->flags, ci->order);
			return -1;
		}
	}
	return sc_check_bits(&hd(d)->si, d, "hdd", msg, len);
}
