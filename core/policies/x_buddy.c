/*
 * x_buddy.c - policy "buddy": a binary buddy allocator over the device's
 * slots. A generic baseline, not a kernel generation (docs/policies/baselines.md).
 *
 * Kernel range: none: baseline.
 *
 * Blocks follow the device's natural-alignment rule: an order-k block is
 * 2^k slots, 2^k-aligned, orders 0..9, so a block never leaves its 512-slot
 * cluster. Free blocks sit in one hierarchical bitmap per order (bit i of
 * order k = the block at slot i * 2^k is free, whole, at exactly that order);
 * memory is about slots/4 bytes in all. Fully coalesced at all times: two
 * buddies are never both free at the same order.
 *
 *   alloc  the smallest order j >= k that has a free block, its lowest-
 *          addressed block; split down to k, the upper halves go free; the
 *          allocation is the lowest 2^k slots of the block (deterministic).
 *   free   any run inside one cluster (a whole allocation, part of one, or
 *          several adjacent ones): cut into maximal aligned blocks, each
 *          inserted with eager coalescing up to order 9.
 *   init   every free slot goes in (the header slot 0 and the padding past
 *          max are bad and never free).
 *
 * The device's cluster lists are not used: every cluster stays NONE. Slot
 * ownership, cluster counts and inuse_pages go through sli_alloc_range() and
 * sli_release_range() as for every policy. No per-CPU state: cpu is ignored.
 * Every device kind is accepted; as in every kernel generation, a regular
 * swap file (not a block device) takes order-0 allocations only.
 */
#include <stdlib.h>
#include <stdio.h>
#include "swaplab/swaplab.h"
#include "swaplab/cluster.h"
#include "swaplab/debug.h"

#define HBM_MAX_LEVELS 8   /* 64^8 bits > 2^40 slots */
#define HBM_NONE UINT64_MAX

/* A hierarchical bitmap: level 0 holds the bits; bit i of level l+1 is set
 * iff word i of level l is nonzero; the top level is one word. */
typedef struct hbm {
	int levels;
	uint64_t nbits;
	uint64_t *w[HBM_MAX_LEVELS];
	uint64_t nwords[HBM_MAX_LEVELS];
} hbm;

typedef struct buddy_state {
	hbm free[SL_NR_ORDERS];     /* free blocks per order */
} buddy_state;

/* hbm_init() - sizes the levels for nbits bits, all clear; 0 or -1. */
static int hbm_init(hbm *h, uint64_t nbits)
{
	uint64_t n = nbits ? nbits : 1, total = 0;

	h->nbits = nbits;
	h->levels = 0;
	do {
		uint64_t words = (n + 63) / 64;
		h->nwords[h->levels++] = words;
		total += words;
		n = words;
	} while (n > 1 && h->levels < HBM_MAX_LEVELS);
	uint64_t *mem = calloc(total, sizeof(uint64_t));
	if (!mem)
		return -1;
	for (int l = 0; l < h->levels; l++) {
		h->w[l] = mem;
		mem += h->nwords[l];
	}
	return 0;
}

/* hbm_fini() - frees the levels (one allocation, held by level 0). */
static void hbm_fini(hbm *h)
{
	free(h->w[0]);
	h->w[0] = NULL;
}

/* hbm_test() - whether bit i is set. */
static int hbm_test(const hbm *h, uint64_t i)
{
	return (int)((h->w[0][i >> 6] >> (i & 63)) & 1);
}

/* hbm_set() - sets bit i, which is clear; marks the summaries up while a
 * word turns nonzero. */
static void hbm_set(hbm *h, uint64_t i)
{
	SL_ASSERT(i < h->nbits && !hbm_test(h, i)); /* a block freed twice */
	for (int l = 0; l < h->levels; l++) {
		uint64_t *w = &h->w[l][i >> 6], old = *w;
		*w = old | (UINT64_C(1) << (i & 63));
		if (old)
			break;
		i >>= 6;
	}
}

/* hbm_clear() - clears bit i, which is set; clears the summaries up while
 * a word turns zero. */
static void hbm_clear(hbm *h, uint64_t i)
{
	SL_ASSERT(i < h->nbits && hbm_test(h, i));
	for (int l = 0; l < h->levels; l++) {
		uint64_t *w = &h->w[l][i >> 6];
		*w &= ~(UINT64_C(1) << (i & 63));
		if (*w)
			break;
		i >>= 6;
	}
}

/* hbm_first() - the lowest set bit, or HBM_NONE; O(levels). */
static uint64_t hbm_first(const hbm *h)
{
	int top = h->levels - 1;
	uint64_t i;

	if (!h->w[top][0])
		return HBM_NONE;
	i = (uint64_t)__builtin_ctzll(h->w[top][0]);
	for (int l = top - 1; l >= 0; l--)
		i = (i << 6) + (uint64_t)__builtin_ctzll(h->w[l][i]);
	return i;
}

/* block_insert() - frees the block of `order` at off, merging with its buddy
 * while the buddy is free at the same order, up to order 9. */
static void block_insert(buddy_state *st, uint64_t off, int order)
{
	SL_ASSERT(order >= 0 && order < SL_NR_ORDERS && !(off & ((UINT64_C(1) << order) - 1)));
	while (order < SL_PMD_ORDER) {
		uint64_t buddy = off ^ (UINT64_C(1) << order);
		if (!hbm_test(&st->free[order], buddy >> order))
			break;
		hbm_clear(&st->free[order], buddy >> order);
		off &= ~(UINT64_C(1) << order);
		order++;
	}
	hbm_set(&st->free[order], off >> order);
}

/* range_insert() - frees [off, off+nr) inside one cluster: the largest
 * aligned block that fits at each step, each coalesced. */
static void range_insert(buddy_state *st, uint64_t off, uint64_t nr)
{
	SL_ASSERT(nr > 0 && (off & (SL_CLUSTER - 1)) + nr <= SL_CLUSTER);
	while (nr) {
		int k = __builtin_ctzll(off | SL_CLUSTER);          /* alignment, at most 9 */
		int fit = 63 - __builtin_clzll(nr);                 /* largest 2^k <= nr */
		if (fit < k)
			k = fit;
		block_insert(st, off, k);
		off += UINT64_C(1) << k;
		nr -= UINT64_C(1) << k;
	}
}

/* buddy_alloc() - smallest sufficient order, lowest address; split down. */
static uint64_t buddy_alloc(sl_device *d, int cpu, int order)
{
	buddy_state *st = d->pstate;
	uint64_t b = HBM_NONE, off;
	int j;

	(void)cpu;
	if (order > 0 && !(d->flags & SL_DEV_BLKDEV))
		return 0;                    /* a regular swap file takes order 0 only */
	for (j = order; j < SL_NR_ORDERS; j++) {
		b = hbm_first(&st->free[j]);
		if (b != HBM_NONE)
			break;
	}
	if (b == HBM_NONE)
		return 0;
	hbm_clear(&st->free[j], b);
	off = b << j;
	while (j > order) {
		j--;
		hbm_set(&st->free[j], (off >> j) + 1);  /* the upper half stays free */
	}
	SL_ASSERT(!(off & ((UINT64_C(1) << order) - 1)));
	sli_alloc_range(d, off, order);
	return off;
}

/* buddy_free() - releases a run inside one cluster and coalesces it. */
static void buddy_free(sl_device *d, int cpu, uint64_t off, uint32_t nr)
{
	(void)cpu;
	sli_release_range(d, off, nr);
	range_insert(d->pstate, off, nr);
}

/* buddy_fini() - frees the bitmaps. */
static void buddy_fini(sl_device *d)
{
	buddy_state *st = d->pstate;

	for (int k = 0; k < SL_NR_ORDERS; k++)
		hbm_fini(&st->free[k]);
	free(st);
	d->pstate = NULL;
}

/* buddy_init() - one bitmap per order; every free slot run goes in. */
static int buddy_init(sl_device *d)
{
	uint64_t slots = (uint64_t)d->nr_clusters * SL_CLUSTER;
	buddy_state *st = calloc(1, sizeof(*st));

	if (!st)
		return -1;
	d->pstate = st;
	for (int k = 0; k < SL_NR_ORDERS; k++) {
		if (hbm_init(&st->free[k], slots >> k)) {
			buddy_fini(d);
			return -1;
		}
	}
	for (uint32_t c = 0; c < d->nr_clusters; c++) {
		uint64_t s = sli_cluster_offset(c), end = s + SL_CLUSTER;
		while ((s = sli_find_free(d, s, end)) < end) {
			uint64_t e = s;
			while (e < end && !d->map[e])
				e++;
			range_insert(st, s, e - s);
			s = e;
		}
	}
	return 0;
}

/* buddy_check() - B1: every free block is wholly free in the map; B2: no
 * free block lies inside a larger free block and the blocks cover exactly
 * the free slots; B3: no two buddies free at one order; B4: summaries. */
static int buddy_check(const sl_device *d, char *msg, size_t len)
{
	const buddy_state *st = d->pstate;
	uint64_t slots = (uint64_t)d->nr_clusters * SL_CLUSTER, covered = 0, nfree = 0;

	for (uint64_t s = 0; s < slots; s++)
		nfree += !d->map[s];
	for (int k = 0; k < SL_NR_ORDERS; k++) {
		const hbm *h = &st->free[k];
		uint32_t nr = 1u << k;
		for (int l = 1; l < h->levels; l++) {
			for (uint64_t i = 0; i < h->nwords[l - 1]; i++) {
				int want = h->w[l - 1][i] != 0;
				if (((h->w[l][i >> 6] >> (i & 63)) & 1) != (uint64_t)want) {
					snprintf(msg, len, "B4: order-%d summary level %d bit %llu wrong", k,
						 l, (unsigned long long)i);
					return -1;
				}
			}
		}
		for (uint64_t wi = 0; wi < h->nwords[0]; wi++) {
			for (uint64_t w = h->w[0][wi]; w; w &= w - 1) {
				uint64_t b = (wi << 6) + (uint64_t)__builtin_ctzll(w), off = b << k;
				if (b >= h->nbits || !sli_range_free(d, off, nr)) {
					snprintf(msg, len, "B1: free order-%d block at slot %llu is not free",
						 k, (unsigned long long)off);
					return -1;
				}
				for (int j = k + 1; j < SL_NR_ORDERS; j++) {
					if (hbm_test(&st->free[j], off >> j)) {
						snprintf(msg, len, "B2: free order-%d block at slot %llu lies in "
							 "a free order-%d block", k, (unsigned long long)off, j);
						return -1;
					}
				}
				if (k < SL_PMD_ORDER && hbm_test(h, b ^ 1)) {
					snprintf(msg, len, "B3: order-%d buddies at slot %llu are both free", k,
						 (unsigned long long)(off & ~(uint64_t)(2 * nr - 1)));
					return -1;
				}
				covered += nr;
			}
		}
	}
	if (covered != nfree) {
		snprintf(msg, len, "B2: free blocks cover %llu slots, the map has %llu free",
			 (unsigned long long)covered, (unsigned long long)nfree);
		return -1;
	}
	return 0;
}

const sl_policy sl_policy_buddy = {
	.name = "buddy",
	.summary = "baseline: binary buddy allocator, per-order free bitmaps, lowest address first",
	.kernel = "",
	.props = SL_POL_SWAPIN_LARGE | SL_POL_SPLIT_ZEROPAGE | SL_POL_SPLIT_DESCENDING,
	.init = buddy_init,
	.fini = buddy_fini,
	.alloc = buddy_alloc,
	.free = buddy_free,
	.check = buddy_check,
};
