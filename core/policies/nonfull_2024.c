/*
 * nonfull_2024.c - policy "nonfull-2024": Chris Li's "mm: swap: mTHP swap
 * allocator base on swap cluster order" v2 (14 June 2024, 2 patches on top
 * of 6.10-rc, never merged: v3 went back to v1 as its base).
 *
 * Changes from 6.10 (v6_10.c): clusters are on doubly linked lists and
 * carry a state - FREE (on the free list), PER_CPU (taken by a CPU's cursor,
 * on no list), SCANNED (the per-CPU scan reached its end, on no list),
 * NONFULL (on nonfull[order]) - and an order, set when a free cluster is
 * taken. A CPU that needs a new cluster for an order takes the head of
 * nonfull[order] first, then the free-list head (unlinked at once), then
 * the pending discards (done synchronously), then fails. The per-CPU
 * scan looks for an aligned free range; when it reaches the cluster end the
 * cluster becomes SCANNED and the cursor invalid. A free in a SCANNED
 * cluster puts it on the tail of nonfull[order]; count 0 puts any cluster
 * on the free-list tail with order 0. A cluster of order A serves order B
 * only through the order-0 linear scan or once it is empty again.
 * Everything else is 6.10: order-0 slot caches (batches of 64, the free
 * cache for every freed slot), the order-0 linear scan when neither
 * nonfull[0] nor the free list has a cluster, lowest_bit/highest_bit,
 * per-CPU scan bases, the interleaved initial free list, order-0 swap-in.
 *
 * Kernel functions modelled (same names, v2 on 6.10):
 * scan_swap_map_try_ssd_cluster, add_cluster_info_page, alloc_cluster,
 * dec_cluster_info_page, free_cluster, __free_cluster,
 * setup_swap_map_and_extents (the state part). Everything v2 left as in
 * 6.10 - get_swap_pages, scan_swap_map_slots,
 * scan_swap_map_ssd_cluster_conflict, swap_range_empty, swap_range_alloc,
 * swap_range_free, set_cluster_next, swap_entry_free, folio_alloc_swap,
 * the slot-cache glue - is the scanner shared with linux-6.10
 * (scan_classic.c, sc_*), into which the v2 cluster step plugs.
 *
 * Device mapping: FREE = flag FREE on the free list; NONFULL = flag NONFULL
 * on nonfull[order]; PER_CPU and SCANNED = flag NONE, told apart by the
 * policy's state byte per cluster. The kernel leaves a NONFULL cluster on
 * its list when the order-0 linear scan fills it; the device keeps full
 * clusters off partial lists (I5), so such a cluster waits on the device's
 * full list while the policy's own copy of nonfull[order] keeps its kernel
 * position (and it returns to that position on the device list when a slot
 * in it is freed). Heads of nonfull[order] that are full are taken, scanned
 * in vain and become SCANNED, as in the kernel.
 *
 * Where v2 corrupts its own state, the model keeps the evident intent
 * (docs/policies/nonfull-2024.md): a cursor left pointing into a cluster
 * that was emptied and requeued (stale cursor) -
 *  - lands in a free cluster that is the free-list head: v2's alloc_cluster
 *    unlinks it but leaves its state FREE (the next allocation there would
 *    unlink another cluster); the model takes it like a fresh cluster
 *    (PER_CPU, or SCANNED if the scan reached its end);
 *  - reaches the end of a cluster that is on a list: v2 marks it SCANNED
 *    while listed; the model leaves it on its list.
 * A stale cursor into a cluster another CPU or order has taken meanwhile
 * allocates there as in the kernel (order mismatch: WARN_ONCE only), so
 * large allocations are not guaranteed their cluster's order.
 *
 * Simplifications: as v6_10.c (discard as 6.10, rotational devices in scan_hdd.c,
 * single-threaded, slot-cache slots never reclaimable, fixed-seed random
 * scan bases).
 */
#include <stdio.h>
#include <stdlib.h>
#include "swaplab/swaplab.h"
#include "swaplab/scan_hdd.h"
#include "swaplab/cluster.h"
#include "swaplab/scan_classic.h"
#include "swaplab/debug.h"

/* CLUSTER_STATE_* of the v2 series; 0 = never listed (bad slots). */
enum { ST_NONE = 0, ST_FREE, ST_PER_CPU, ST_SCANNED, ST_NONFULL,
       ST_DISCARD /* the model's: on the discard list, slots marked bad */ };

typedef struct nonfull_state {
	sc_scanner sc;               /* first: the shared classic scanner */
	uint8_t *state;              /* [nr_clusters]: ST_* */
	/* the kernel's nonfull[order] lists, full members included: circular,
	 * heads at nr_clusters + order */
	uint32_t *nf_prev, *nf_next;
} nonfull_state;

#define NONFULL_RNG_SEED UINT64_C(0x6a10) /* 6.10's scan-base stream */

static nonfull_state *st(sl_device *d) { return d->pstate; }

/* ---- nonfull[order]: the kernel's list and its device mirror ---------- */

static uint32_t nf_head(const sl_device *d, int order) { return d->nr_clusters + (uint32_t)order; }

static uint32_t nf_first(sl_device *d, int order)
{
	nonfull_state *s = st(d);
	uint32_t h = nf_head(d, order);

	return s->nf_next[h] == h ? SL_NIL : s->nf_next[h];
}

/* Device side of one member: nonfull[order] while it has room, else the
 * full list (see the role block). */
static void nf_place(sl_device *d, uint32_t c)
{
	if (d->ci[c].count < SL_CLUSTER)
		sli_move_cluster(d, c, SL_LIST_NONFULL(d->ci[c].order), SL_CF_NONFULL);
	else if (d->ci[c].flags != SL_CF_FULL)
		sli_move_cluster(d, c, SL_LIST_FULL, SL_CF_FULL);
}

/* list_add_tail(&ci->list, &si->nonfull_clusters[order]) */
static void nf_add_tail(sl_device *d, uint32_t c)
{
	nonfull_state *s = st(d);
	uint32_t h = nf_head(d, d->ci[c].order), last = s->nf_prev[h];

	s->nf_prev[c] = last;
	s->nf_next[c] = h;
	s->nf_next[last] = c;
	s->nf_prev[h] = c;
	nf_place(d, c);
}

/* list_del(&ci->list) of a nonfull member; it leaves the device list too. */
static void nf_del(sl_device *d, uint32_t c)
{
	nonfull_state *s = st(d);

	s->nf_next[s->nf_prev[c]] = s->nf_next[c];
	s->nf_prev[s->nf_next[c]] = s->nf_prev[c];
	s->nf_prev[c] = s->nf_next[c] = SL_NIL;
	sli_isolate_cluster(d, c);
}

/* A full member got room again: back onto the device's nonfull list at its
 * kernel position - it and every member after it are re-appended in order. */
static void nf_reposition(sl_device *d, uint32_t c)
{
	nonfull_state *s = st(d);
	uint32_t h = nf_head(d, d->ci[c].order);

	for (uint32_t x = c; x != h; x = s->nf_next[x])
		if (d->ci[x].count < SL_CLUSTER)
			sli_move_cluster(d, x, SL_LIST_NONFULL(d->ci[x].order), SL_CF_NONFULL);
}

/* ---- cluster states ----------------------------------------------------- */

/* __free_cluster() - v2: count reached 0: off nonfull if it was there, onto
 * the free-list tail, state FREE, order reset. */
static void __free_cluster(sl_device *d, uint32_t c)
{
	nonfull_state *s = st(d);

	if (s->state[c] == ST_NONFULL)
		nf_del(d, c);
	sli_move_cluster(d, c, SL_LIST_FREE, SL_CF_FREE);
	s->state[c] = ST_FREE;
	d->ci[c].order = 0;
}

/* free_cluster() - v2: a discarding device discards the cluster first (it
 * leaves nonfull: the list node moves to the discard list). */
static void free_cluster(sl_device *d, uint32_t c)
{
	nonfull_state *s = st(d);

	if (!(d->flags & SL_DEV_DISCARD)) {
		__free_cluster(d, c);
		return;
	}
	if (s->state[c] == ST_NONFULL)
		nf_del(d, c);
	sc_swap_cluster_schedule_discard(d, c);
	s->state[c] = ST_DISCARD;
}

/* dec_cluster_info_page() - v2: one slot of cluster c was freed: empty ->
 * free list; SCANNED -> nonfull[order] tail; others stay where they are. */
static void dec_cluster_info_page(sl_device *d, uint32_t c)
{
	nonfull_state *s = st(d);

	if (d->ci[c].count == 0) {
		free_cluster(d, c);
		return;
	}
	if (s->state[c] == ST_SCANNED) {
		s->state[c] = ST_NONFULL;
		nf_add_tail(d, c);
	} else if (s->state[c] == ST_NONFULL && d->ci[c].flags == SL_CF_FULL) {
		nf_reposition(d, c);
	}
}

/* alloc_cluster() - v2: only reached through a stale cursor into the free
 * head (new clusters leave the free list when taken); v2 unlinks it and
 * leaves its state FREE - the model takes it for this cursor. */
static void alloc_cluster(sl_device *d, int cpu, uint32_t c, int order)
{
	uint64_t next = *sli_cursor(d, cpu, order);

	SL_ASSERT(sli_list_first(d, SL_LIST_FREE) == c); /* VM_BUG_ON */
	sli_isolate_cluster(d, c);
	st(d)->state[c] = (next && sli_cluster_of(next) == c) ? ST_PER_CPU : ST_SCANNED;
}

/* add_cluster_info_page() - v2: count up; a listed NONFULL cluster that
 * fills waits on the device's full list (role block). */
static void add_cluster_info_page(sl_device *d, int cpu, uint64_t off, int order)
{
	uint32_t c = sli_cluster_of(off);

	if (st(d)->state[c] == ST_FREE)
		alloc_cluster(d, cpu, c, order);
	if (order == 0)
		sli_reserve_range(d, off, 1); /* usage SWAP_HAS_CACHE */
	else
		sli_alloc_range(d, off, order);
	if (st(d)->state[c] == ST_NONFULL && d->ci[c].count == SL_CLUSTER)
		nf_place(d, c);
}

/* FREE in v2's terms: the state, not the device flag (they agree). */
static int cluster_is_free(const sl_device *d, uint32_t c)
{
	const nonfull_state *s = d->pstate;

	return s->state[c] == ST_FREE;
}

/* ---- the v2 per-CPU scan ------------------------------------------------- */

/* scan_swap_map_try_ssd_cluster() - v2: without a cursor, take the head of
 * nonfull[order], else the free-list head (order set), else fail; scan from
 * the cursor in steps of 2^order for a free range; at the cluster end mark
 * it SCANNED and drop the cursor; nothing found: a new cluster. */
static int scan_swap_map_try_ssd_cluster(sl_device *d, int cpu, uint64_t *offset,
					 uint64_t *scan_base, int order)
{
	nonfull_state *s = st(d);
	uint64_t *next = sli_cursor(d, cpu, order);
	uint32_t nr = 1u << order;

	for (;;) { /* new_cluster: */
		uint64_t tmp = *next, max, found = 0;
		uint32_t c;

		if (!tmp) {
			c = nf_first(d, order);
			if (c != SL_NIL) {
				nf_del(d, c);
			} else {
				c = sli_list_first(d, SL_LIST_FREE);
				if (c == SL_NIL) {
					/* discard the pending clusters now,
					 * reread the base */
					if (!sc_swap_do_scheduled_discard(d, __free_cluster))
						return 0;
					*offset = *scan_base = s->sc.si.cluster_next_cpu[cpu];
					continue;
				}
				sli_isolate_cluster(d, c);
				d->ci[c].order = (uint8_t)order;
			}
			s->state[c] = ST_PER_CPU;
			tmp = sli_cluster_offset(c);
		}
		c = sli_cluster_of(tmp);
		max = sli_cluster_offset(c) + SL_CLUSTER;
		if (max > d->max)
			max = d->max;
		for (; !found && tmp < max; tmp += nr)
			if (sc_swap_range_empty(d, tmp, nr, max))
				found = tmp;
		if (tmp >= max) {
			/* v2 sets SCANNED whatever the state; a listed cluster
			 * (stale cursor) keeps its list here */
			if (s->state[c] == ST_PER_CPU)
				s->state[c] = ST_SCANNED;
			*next = 0;
		} else {
			*next = tmp;
		}
		if (!found)
			continue;
		*offset = *scan_base = found;
		return 1;
	}
}

/* swap_discard_work() - v2: the discard worker, between operations. */
static void nonfull_discard_work(sl_device *d)
{
	sc_swap_discard_work(d, __free_cluster);
}

static const sc_ops nonfull_ops = {
	.try_ssd_cluster = scan_swap_map_try_ssd_cluster,
	.cluster_is_free = cluster_is_free,
	.add_cluster_info_page = add_cluster_info_page,
	.dec_cluster_info_page = dec_cluster_info_page,
	.random_inclusive = sc_random_inclusive,
	.seed = NONFULL_RNG_SEED,
};

/* setup_swap_map_and_extents() - v2 (as 6.10): clusters with bad slots on
 * no list, the others FREE in 32 interleaved columns; random scan bases. */
static int nonfull_init(sl_device *d)
{
	nonfull_state *s = sc_init(d, sizeof(nonfull_state), &nonfull_ops);
	uint32_t n = d->nr_clusters + SL_NR_ORDERS;

	if (!s)
		return -1;
	s->state = calloc(d->nr_clusters, 1);
	s->nf_prev = malloc(n * sizeof(uint32_t));
	s->nf_next = malloc(n * sizeof(uint32_t));
	if (!s->state || !s->nf_prev || !s->nf_next)
		return -1;
	for (uint32_t c = 0; c < n; c++)
		s->nf_prev[c] = s->nf_next[c] = c < d->nr_clusters ? SL_NIL : c;
	for (uint32_t c = 0; c < d->nr_clusters; c++) /* those sc_init listed */
		if (!d->ci[c].count)
			s->state[c] = ST_FREE;
	return 0;
}

static void nonfull_fini(sl_device *d)
{
	nonfull_state *s = st(d);

	free(s->state);
	free(s->nf_prev);
	free(s->nf_next);
	sc_fini(d);
}

/* The policy's invariants: each state matches the device flag; the device's
 * nonfull[o] is the policy's nonfull[o] without its full members, in the
 * same order; every member is NONFULL of order o; no other list is used but
 * free, nonfull and (for full nonfull members) full; free slots lie inside
 * [lowest_bit, highest_bit]. */
static int nonfull_check(const sl_device *d, char *msg, size_t len)
{
	const nonfull_state *s = d->pstate;
	uint32_t members = 0, full_members = 0, nonfull_states = 0;

#define NF_FAIL(...) do { snprintf(msg, len, __VA_ARGS__); return -1; } while (0)
	for (uint32_t c = 0; c < d->nr_clusters; c++) {
		uint8_t f = d->ci[c].flags, t = s->state[c];
		int ok = t == ST_FREE ? f == SL_CF_FREE
			 : t == ST_DISCARD ? f == SL_CF_DISCARD
			 : t == ST_NONFULL ? (f == SL_CF_NONFULL || f == SL_CF_FULL)
			 : f == SL_CF_NONE;
		if (!ok)
			NF_FAIL("nonfull-2024: cluster %u state %u has flag %u", c, t, f);
		nonfull_states += t == ST_NONFULL;
	}
	for (int o = 0; o < SL_NR_ORDERS; o++) {
		uint32_t h = d->nr_clusters + (uint32_t)o, dh = sli_head(d, SL_LIST_NONFULL(o));
		uint32_t dc = d->ci[dh].next, n = 0;
		for (uint32_t c = s->nf_next[h]; c != h; c = s->nf_next[c]) {
			if (c >= d->nr_clusters || ++n > d->nr_clusters)
				NF_FAIL("nonfull-2024: nonfull[%d] is corrupt", o);
			if (s->state[c] != ST_NONFULL || d->ci[c].order != o)
				NF_FAIL("nonfull-2024: cluster %u on nonfull[%d] has state %u order %u", c,
					o, s->state[c], d->ci[c].order);
			members++;
			if (d->ci[c].flags == SL_CF_FULL) {
				full_members++;
				continue;
			}
			if (dc != c)
				NF_FAIL("nonfull-2024: device nonfull[%d] has %u where %u belongs", o, dc, c);
			dc = d->ci[dc].next;
		}
		if (dc != dh)
			NF_FAIL("nonfull-2024: device nonfull[%d] holds extra cluster %u", o, dc);
	}
	if (members != nonfull_states || full_members != d->list_len[SL_LIST_FULL])
		NF_FAIL("nonfull-2024: %u NONFULL clusters, %u listed, %u full of %u on the full list",
			nonfull_states, members, full_members, d->list_len[SL_LIST_FULL]);
	for (int o = 0; o < SL_NR_ORDERS; o++)
		if (d->list_len[SL_LIST_FRAG(o)])
			NF_FAIL("nonfull-2024: frag[%d] is used", o);
	if (!(d->flags & SL_DEV_DISCARD) && d->list_len[SL_LIST_DISCARD])
		NF_FAIL("nonfull-2024: the discard list is used without discard");
#undef NF_FAIL
	return sc_check_bits(&s->sc.si, d, "nonfull-2024", msg, len);
}

/* A rotational device: no cluster_info, the HDD scan (scan_hdd.c). */
static const sl_policy rotational = SL_HDD_CLASSIC_POLICY("nonfull-2024", 0, hd_free_slots);

const sl_policy sl_policy_nonfull_2024 = {
	.name = "nonfull-2024",
	.summary = "June 2024 v2 series on 6.10: cluster states, per-order nonfull lists before free; slot caches",
	.kernel = "6.10 + v2 (unmerged)",
	.props = SL_POL_SLOT_CACHE | SL_POL_DISCARD_MARKS_BAD,
	.init = nonfull_init,
	.fini = nonfull_fini,
	.alloc = sc_folio_alloc_swap,
	.free = sc_free_swap_slots,
	.get_swap_pages = sc_get_swap_pages,
	.release = sc_swap_entry_free,
	.check = nonfull_check,
	.drain = sc_drain_swap_slots,
	.tick = nonfull_discard_work,
	.rotational = &rotational,
};
