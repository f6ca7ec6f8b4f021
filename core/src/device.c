/*
 * device.c - the swap device: creation (swapon), slot ownership, the
 * folio_alloc_swap() / swap_entries_put_map() entry points.
 *
 * The device is policy-neutral: it marks the header and the padding slots,
 * builds empty lists and hands the device to the policy's init, which puts
 * the clusters on their first lists (setup_clusters() in the kernel).
 */
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include "swaplab/swaplab.h"
#include "swaplab/rmap.h"
#include "swaplab/cluster.h"
#include "swaplab/locks.h"
#include "swaplab/swap_slots.h"
#include "swaplab/debug.h"
#include "swaplab/lockrework_body.h"

sl_device *sl_device_create(uint64_t max, unsigned flags, int nr_cpus,
			    const sl_policy *pol, int debug, char *msg, size_t len)
{
	if (max < SL_CLUSTER) {
		snprintf(msg, len, "swap device of %llu slots is smaller than one cluster (%u slots)",
			 (unsigned long long)max, SL_CLUSTER);
		return NULL;
	}
	if (max > SL_MAX_SLOTS) {
		snprintf(msg, len, "swap device of %llu slots is larger than the model supports (2^40)",
			 (unsigned long long)max);
		return NULL;
	}
	if (nr_cpus < 1 || nr_cpus > SL_MAX_CPUS) {
		snprintf(msg, len, "cpu count %d is outside 1..%d", nr_cpus, SL_MAX_CPUS);
		return NULL;
	}
	/* <= 6.13 rotational: no cluster_info, the HDD scan of the generation */
	if (!(flags & SL_DEV_SOLIDSTATE) && pol->rotational)
		pol = pol->rotational;
	sl_device *d = aligned_alloc(_Alignof(sl_device), sizeof(*d));
	if (!d)
		goto oom;
	memset(d, 0, sizeof(*d));
	d->max = max;
	d->flags = flags;
	d->nr_cpus = nr_cpus;
	d->pol = pol;
	d->nr_clusters = (uint32_t)((max + SL_CLUSTER - 1) / SL_CLUSTER);
	uint64_t slots = (uint64_t)d->nr_clusters * SL_CLUSTER;
	d->map = calloc(slots, 1);
	d->ci = calloc((size_t)d->nr_clusters + SL_NR_LISTS, sizeof(sl_cluster));
	d->cursor = aligned_alloc(SL_CACHELINE,
				  (size_t)(nr_cpus + 1) * SL_CURSOR_STRIDE * sizeof(uint64_t));
	if (d->cursor)
		memset(d->cursor, 0, (size_t)(nr_cpus + 1) * SL_CURSOR_STRIDE * sizeof(uint64_t));
	if (debug)
		d->shadow = calloc(slots, 1);
	if (!d->map || !d->ci || !d->cursor || (debug && !d->shadow))
		goto oom;
	if ((pol->props & SL_POL_RMAP) && sl_rmap_enable(d))
		goto oom;
#ifdef SL_DEBUG
	if (sli_dbg_locks_init(d))
		goto oom;
#endif
	for (uint32_t c = 0; c < d->nr_clusters; c++)
		d->ci[c].prev = d->ci[c].next = SL_NIL;
	for (int l = 0; l < SL_NR_LISTS; l++) {
		uint32_t h = sli_head(d, l);
		d->ci[h].prev = d->ci[h].next = h;
	}
	/* The header slot and the padding past max are counted as bad. */
	d->map[0] = SL_SLOT_BAD;
	d->ci[0].count++;
	for (uint64_t s = max; s < slots; s++) {
		d->map[s] = SL_SLOT_BAD;
		d->ci[sli_cluster_of(s)].count++;
	}
	d->nr_bad = 1 + (slots - max);
	d->pages = max - 1;
	sli_device_pick_mode(d);
	if (pol->init && pol->init(d) != 0) {
		snprintf(msg, len, "policy %s does not model this device kind (%s)", pol->name,
			 sl_device_kind_name(flags));
		sl_device_destroy(d);
		return NULL;
	}
	return d;
oom:
	snprintf(msg, len, "out of memory for a device of %llu slots", (unsigned long long)max);
	sl_device_destroy(d);
	return NULL;
}

void sl_device_destroy(sl_device *d)
{
	if (!d)
		return;
	if (d->pol && d->pol->fini && d->pstate)
		d->pol->fini(d);
	free(d->map);
	free(d->ci);
	free(d->cursor);
	free(d->shadow);
	free(d->rmap);
	if (d->lk) {
		free(d->lk->ci);
		free(d->lk->local);
		free(d->lk->slots);
		free(d->lk);
	}
#ifdef SL_DEBUG
	sli_dbg_locks_fini(d);
#endif
	free(d);
}

/* One device's part of nr_swap_pages: free slots, less those a
 * get_swap_pages() batch (<= 6.13) took off in advance. */
static uint64_t dev_nr_swap_pages(const sl_device *d)
{
	return d->pages - atomic_load_explicit(&d->inuse_pages, memory_order_relaxed) -
	       atomic_load_explicit(&d->gsp_held, memory_order_relaxed);
}

uint64_t sl_nr_swap_pages(const sl_device *d)
{
	uint64_t n = 0;

	if (!d->set)
		return dev_nr_swap_pages(d);
	for (int t = 0; t < d->set->nr; t++)
		n += dev_nr_swap_pages(d->set->dev[t]);
	return n;
}

uint64_t sl_total_swap_pages(const sl_device *d)
{
	uint64_t n = 0;

	if (!d->set)
		return d->pages;
	for (int t = 0; t < d->set->nr; t++)
		n += d->set->dev[t]->pages;
	return n;
}

/* Whether map unit u holds a free run of 2^order at an aligned start: a
 * unit is one word (8 slots) below order 3, else the run itself. */
static inline int unit_has_free_run(const sl_device *d, uint64_t u, int order)
{
	/* bit 0 of the first byte of each aligned 1, 2, 4 bytes */
	static const uint64_t first[3] = { UINT64_C(0x0101010101010101),
					   UINT64_C(0x0001000100010001),
					   UINT64_C(0x0000000100000001) };

	if (order >= 3)
		return sli_range_free(d, u << order, 1u << order);
	/* 1 in each used byte, then in the first byte of each run with one */
	uint64_t nz = sli_map_nz(sli_map_load8(d->map + 8 * u));
	for (int k = 0; k < order; k++)
		nz |= nz >> (8 << k);
	return (~nz & first[order]) != 0;
}

int sl_dev_has_free_run(const sl_device *d, int order, uint64_t *hint)
{
	if (order < 0 || order >= SL_NR_ORDERS)
		return 0;
	/* units of the map: words below order 3, else aligned word groups */
	const uint64_t units = (uint64_t)d->nr_clusters * SL_CLUSTER / 8 >> (order > 3 ? order - 3 : 0);
	uint64_t u = hint && *hint < units ? *hint : 0;

	for (uint64_t n = 0; n < units; n++) {
		if (unit_has_free_run(d, u, order)) {
			if (hint)
				*hint = u;
			return 1;
		}
		if (++u == units)
			u = 0;
	}
	return 0;
}

int sl_vm_swap_full(const sl_device *d)
{
	/* vm_swap_full(): nr_swap_pages * 2 < total_swap_pages */
	return sl_nr_swap_pages(d) * 2 < sl_total_swap_pages(d);
}

uint64_t sl_swap_alloc(sl_device *d, int cpu, int order)
{
	if (order < 0 || order >= SL_NR_ORDERS)
		return 0;
	SL_ASSERT(cpu >= 0 && cpu < d->nr_cpus);
	uint64_t off = d->pol->alloc(d, cpu, order);
	/* the policy contract (policy.h): naturally aligned, on the device */
	SL_ASSERT(!(off & ((UINT64_C(1) << order) - 1)) && off + (UINT64_C(1) << order) <= d->max);
	sl_dev_stats *st = d->lk ? sli_stats_m(d, 1) : &d->st;
	if (off)
		st->alloc_ok[order]++;
	else
		st->alloc_fail[order]++;
	return off;
}

void sl_swap_alloc_batch0(sl_device *d, int cpu, uint32_t n, uint64_t *out)
{
	uint32_t ok = 0;

	if (!d->pol->alloc_batch0 || d->lk) {
		for (uint32_t i = 0; i < n; i++)
			out[i] = sl_swap_alloc(d, cpu, 0);
		return;
	}
	SL_ASSERT(cpu >= 0 && cpu < d->nr_cpus);
	d->pol->alloc_batch0(d, cpu, n, out);
	for (uint32_t i = 0; i < n; i++) {
		SL_ASSERT(out[i] < d->max);
		ok += out[i] != 0;
	}
	d->st.alloc_ok[0] += ok;
	d->st.alloc_fail[0] += n - ok;
}

int sl_swap_alloc_pages(sl_device *d, int cpu, int order, uint64_t *out)
{
	int runs;

	if (order < 0 || order >= SL_NR_ORDERS || !d->pol->alloc_pages)
		return 0;
	runs = d->pol->alloc_pages(d, cpu, order, out);
	if (runs)
		sli_stats(d)->alloc_ok[order]++;
	else
		sli_stats(d)->alloc_fail[order]++;
	return runs;
}

/* The policy's free of one run, with the cluster's lock held. lr: a 6.14+
 * policy, whose free (lr_free_det / lr_free_conc) runs here inline, in this
 * mode's build; 2: one with SL_POL_KEEP_FULL0 (lrm_handoff() and
 * lrm_keep_full0()). rmap:
 * the device keeps a reverse map (rmap.h), whose back pointers of the run
 * go here, where swap_entries_free() would clear them. */
static inline __attribute__((always_inline)) void put_run_m(sl_device *d, int cpu, uint64_t off,
							    uint32_t nr, const int conc,
							    const int lr, const int rmap)
{
	if (rmap)
		sl_rmap_clear(d, off, nr);
	if (lr)
		lrm_swap_entries_free_k(d, cpu, off, nr, conc, lr == 2);
	else
		d->pol->free(d, cpu, off, nr);
}

/* The frees of one cluster's chunk: under its lock (6.14+, always with lr)
 * or after. Must be called with the cluster's lock held; drops it. */
static inline __attribute__((always_inline)) void put_runs_m(sl_device *d, int cpu, uint32_t c,
							     const uint64_t *runs, int n,
							     const int conc, const int lr, const int rmap)
{
	int under = lr || (d->pol->props & SL_POL_FREE_UNDER_CI_LOCK);

	sl_assert_ci_locked(d, c);
	if (!under)
		sl_ci_unlock_m(conc, d, c);
	for (int i = 0; i < n; i++)
		put_run_m(d, cpu, runs[2 * i], (uint32_t)runs[2 * i + 1], conc, lr, rmap);
	if (under)
		sl_ci_unlock_m(conc, d, c);
}

/* Every slot of [off, off+n) holds count 1 and no cache. */
static inline int all_count_one(const uint8_t *p, uint64_t n)
{
	uint64_t i = 0;

	for (; i + 8 <= n; i += 8) {
		uint64_t w;
		memcpy(&w, p + i, 8);
		if (w != UINT64_C(0x0101010101010101))
			return 0;
	}
	for (; i < n; i++)
		if (p[i] != 1)
			return 0;
	return 1;
}

/* One cluster's chunk [off, cend) in general: slot by slot, the maximal
 * runs that reach zero freed as one range each. Must be called with the
 * cluster's lock held; drops it. */
static __attribute__((noinline)) void put_chunk_m(sl_device *d, int cpu, uint32_t c, uint64_t off,
						  uint64_t cend, const int conc, const int lr,
						  const int rmap)
{
	uint64_t runs[SL_CLUSTER]; /* (start, length) pairs: at most 256 runs */
	int n = 0;

	for (uint64_t s = off; s < cend; s++) {
		uint8_t b = d->map[s];
		uint8_t cnt = b & SL_SLOT_COUNT_MASK;
		int last = (cnt == 1 && !(b & SL_SLOT_CACHE));
		if (cnt == 0 || cnt == SL_SLOT_BAD)
			abort(); /* put of a slot that holds no reference */
		d->map[s] = last ? SL_SLOT_CACHE : (uint8_t)(b - 1);
		if (!last)
			continue;
		if (d->shadow)
			d->shadow[s] = 0;
		if (n && runs[2 * n - 2] + runs[2 * n - 1] == s) {
			runs[2 * n - 1]++;
		} else {
			runs[2 * n] = s;
			runs[2 * n + 1] = 1;
			n++;
		}
	}
	put_runs_m(d, cpu, c, runs, n, conc, lr, rmap);
}

/* swap_entries_put_map_nr(): drops one count per slot, cluster by cluster
 * under the cluster lock; maximal runs that reach zero go to the policy's
 * free as one range each. The common case - every slot of a cluster's
 * chunk at count 1, so the chunk is one run - skips the slot-by-slot walk.
 * Built once per mode (locks.h) and per kind of free (lr: lockrework's). */
static inline __attribute__((always_inline)) void swap_put_range_m(sl_device *d, int cpu,
								   uint64_t off, uint64_t nr,
								   const int conc, const int lr,
								   const int rmap)
{
	uint64_t end = off + nr;

	SL_ASSERT(cpu >= 0 && cpu < d->nr_cpus && off > 0 && end <= d->max);
	while (off < end) {
		uint32_t c = sli_cluster_of(off);
		uint64_t cend = sli_cluster_offset(c) + SL_CLUSTER;
		if (cend > end)
			cend = end;
		sl_ci_lock_m(conc, d, c);
		if (all_count_one(d->map + off, cend - off)) {
			uint64_t run[2] = { off, cend - off };
			sli_fill(d->map + off, SL_SLOT_CACHE, cend - off);
			if (d->shadow)
				memset(d->shadow + off, 0, cend - off);
			put_runs_m(d, cpu, c, run, 1, conc, lr, rmap);
		} else {
			put_chunk_m(d, cpu, c, off, cend, conc, lr, rmap);
		}
		off = cend;
	}
}

/* swap_put_range_m() for one slot (an order-0 swap-in, most puts). */
static inline __attribute__((always_inline)) void swap_put_one_m(sl_device *d, int cpu,
								 uint64_t off, const int conc,
								 const int lr, const int rmap)
{
	uint32_t c = sli_cluster_of(off);

	SL_ASSERT(cpu >= 0 && cpu < d->nr_cpus && off > 0 && off < d->max);
	sl_ci_lock_m(conc, d, c);
	if (d->map[off] == 1) {
		uint64_t run[2] = { off, 1 };
		d->map[off] = SL_SLOT_CACHE;
		if (d->shadow)
			d->shadow[off] = 0;
		put_runs_m(d, cpu, c, run, 1, conc, lr, rmap);
	} else {
		put_chunk_m(d, cpu, c, off, off + 1, conc, lr, rmap);
	}
}

/* The builds of a put: one slot inline, a range out of line (so that the
 * one slot's path saves no registers for the range's loop); per mode, kind
 * of free (lr) and reverse map (rmap: a policy with SL_POL_RMAP). */
#define SWAP_PUT_BUILD(name, conc, lr, rmap)                                             \
	static __attribute__((noinline)) void name##_range(sl_device *d, int cpu,       \
							    uint64_t off, uint64_t nr)  \
	{                                                                                 \
		swap_put_range_m(d, cpu, off, nr, conc, lr, rmap);                        \
	}                                                                                 \
	static void name(sl_device *d, int cpu, uint64_t off, uint64_t nr)               \
	{                                                                                 \
		if (nr == 1)                                                              \
			swap_put_one_m(d, cpu, off, conc, lr, rmap);                      \
		else                                                                      \
			name##_range(d, cpu, off, nr);                                    \
	}
SWAP_PUT_BUILD(swap_put_det, 0, 0, 0)
SWAP_PUT_BUILD(swap_put_conc, 1, 0, 0)
SWAP_PUT_BUILD(swap_put_lr_det, 0, 1, 0)
SWAP_PUT_BUILD(swap_put_lr_conc, 1, 1, 0)
SWAP_PUT_BUILD(swap_put_rmap_det, 0, 0, 1)
SWAP_PUT_BUILD(swap_put_rmap_conc, 1, 0, 1)
SWAP_PUT_BUILD(swap_put_lr_rmap_det, 0, 1, 1)
SWAP_PUT_BUILD(swap_put_lr_rmap_conc, 1, 1, 1)
SWAP_PUT_BUILD(swap_put_lrk_det, 0, 2, 0)
SWAP_PUT_BUILD(swap_put_lrk_conc, 1, 2, 0)
SWAP_PUT_BUILD(swap_put_lrk_rmap_det, 0, 2, 1)
SWAP_PUT_BUILD(swap_put_lrk_rmap_conc, 1, 2, 1)

void sli_device_pick_mode(sl_device *d)
{
	int rmap = d->rmap != NULL;

	if (d->lk && d->pol->concurrent)
		d->pol = d->pol->concurrent;
	if (d->pol->free == lr_free_det && (d->pol->props & SL_POL_KEEP_FULL0))
		d->put = rmap ? swap_put_lrk_rmap_det : swap_put_lrk_det;
	else if (d->pol->free == lr_free_conc && (d->pol->props & SL_POL_KEEP_FULL0))
		d->put = rmap ? swap_put_lrk_rmap_conc : swap_put_lrk_conc;
	else if (d->pol->free == lr_free_det)
		d->put = rmap ? swap_put_lr_rmap_det : swap_put_lr_det;
	else if (d->pol->free == lr_free_conc)
		d->put = rmap ? swap_put_lr_rmap_conc : swap_put_lr_conc;
	else if (d->lk)
		d->put = rmap ? swap_put_rmap_conc : swap_put_conc;
	else
		d->put = rmap ? swap_put_rmap_det : swap_put_det;
}

void sl_swap_put(sl_device *d, int cpu, uint64_t off, uint64_t nr)
{
	d->put(d, cpu, off, nr);
}

void sli_alloc_range(sl_device *d, uint64_t off, int order)
{
	sli_alloc_range_m(d, off, order, d->lk != NULL);
}

void sli_reserve_range(sl_device *d, uint64_t off, uint32_t n)
{
	sl_assert_ci_locked(d, sli_cluster_of(off));
	SL_ASSERT(off > 0 && sli_in_one_cluster(off, n) && sli_range_is(d, off, n, SL_SLOT_FREE));
	if (d->ci[sli_cluster_of(off)].count == 0)
		d->ci[sli_cluster_of(off)].order = 0;
	memset(d->map + off, SL_SLOT_CACHE, n);
	d->ci[sli_cluster_of(off)].count = (uint16_t)(d->ci[sli_cluster_of(off)].count + n);
	sli_inuse_add(d, n);
}

void sli_take_reserved(sl_device *d, uint64_t off)
{
	sl_assert_ci_locked(d, sli_cluster_of(off));
	SL_ASSERT(d->map[off] == SL_SLOT_CACHE);
	d->map[off] = 1;
	if (d->shadow) {
		if (d->shadow[off])
			d->shadow_errors++;
		d->shadow[off] = 1;
	}
}

void sli_release_range(sl_device *d, uint64_t off, uint32_t nr)
{
	sli_release_range_m(d, off, nr, d->lk != NULL);
}

void sli_mark_discarding(sl_device *d, uint32_t c, int on)
{
	SL_ASSERT(c < d->nr_clusters && d->ci[c].count == 0);
	memset(d->map + sli_cluster_offset(c), on ? SL_SLOT_BAD : SL_SLOT_FREE, SL_CLUSTER);
	d->ci[c].free_from = 0; /* I8 */
}

static const struct { const char *name; unsigned flags; } kinds[] = {
	{ "zram", SL_DEV_ZRAM },
	{ "ssd", SL_DEV_BLKDEV | SL_DEV_SOLIDSTATE },
	{ "ssd-discard", SL_DEV_BLKDEV | SL_DEV_SOLIDSTATE | SL_DEV_DISCARD },
	{ "hdd", SL_DEV_BLKDEV },
	{ "file", SL_DEV_SOLIDSTATE },
};

unsigned sl_device_kind(const char *name, int *ok)
{
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (!strcmp(name, kinds[i].name)) {
			*ok = 1;
			return kinds[i].flags;
		}
	*ok = 0;
	return 0;
}

const char *sl_device_kind_name(unsigned flags)
{
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (kinds[i].flags == flags)
			return kinds[i].name;
	return "custom";
}

const char *sl_device_kind_at(int i)
{
	return i >= 0 && (size_t)i < sizeof(kinds) / sizeof(kinds[0]) ? kinds[i].name : NULL;
}

/* ------------------------------------------- the slot cache of a lone device */

/* A device's own cache serves it only while it is alone (in a set of
 * several, d->slots names the set's): its type is 0, so its entries are its
 * offsets. */

/* get_swap_pages() of order 0 on this device (swap_slots.h get). */
static int dev_slots_get(void *owner, int cpu, int n, uint64_t *out)
{
	sl_device *d = owner;

	SL_ASSERT(d->type == 0);
	return d->pol->get_swap_pages(d, cpu, n, out, 0);
}

/* swapcache_free_entries() - <= 6.13, the slot caches' release on one
 * device: every entry under si->lock. */
static void swapcache_free_entries(void *owner, const uint64_t *e, int n)
{
	sl_device *d = owner;

	sl_dev_lock(d);
	for (int i = 0; i < n; i++) {
		SL_ASSERT(sl_entry_type(e[i]) == 0);
		d->pol->release(d, e[i]);
	}
	sl_dev_unlock(d);
}

int sli_dev_slots_init(sl_device *d, sl_swap_slots *ss)
{
	d->slots = ss;
	return sl_swap_slots_init(ss, d->nr_cpus, 1, d, dev_slots_get, swapcache_free_entries);
}

void sli_take_reserved_locked(sl_device *d, uint64_t off)
{
	uint32_t c = sli_cluster_of(off);

	sl_ci_lock(d, c);
	sli_take_reserved(d, off);
	sl_ci_unlock(d, c);
}

uint64_t sli_dev_slots_alloc(sl_device *d, int cpu)
{
	uint64_t e = sl_swap_slots_alloc(d->slots, cpu, sl_nr_swap_pages(d));

	if (!e)
		return 0;
	SL_ASSERT(sl_entry_type(e) == 0 && d->type == 0); /* alone: its own cache */
	sli_take_reserved_locked(d, e);
	return e;
}

void sli_dev_slots_free(sl_device *d, int cpu, uint64_t off)
{
	sl_swap_slots_free(d->slots, cpu, sl_entry(d->type, off));
}
