/*
 * x_first_fit.c - policy "first-fit": aligned first fit over the slot map
 * with a next-fit cursor. A generic baseline, not a kernel generation
 * (docs/policies/baselines.md).
 *
 * Kernel range: none: baseline.
 *
 * One cursor for the device (no per-CPU or per-order state). An order-k
 * allocation takes the first 2^k-aligned all-free range at or after the
 * cursor (rounded up to 2^k), wrapping once to the start of the device; a
 * 2^k-aligned range never leaves its cluster. The cursor moves to the end of
 * the allocation. Frees release the slots at once and touch nothing else.
 *
 * The search reads the slot map (1 byte a slot, 0 = free) 8 bytes at a time:
 * orders 0..2 test the 1-, 2- or 4-byte lanes of each word together; orders
 * 3..9 test whole zero words (sli_range_free). The header slot 0 and the
 * padding past max are bad bytes, so they are never picked.
 *
 * The device's cluster lists are not used: every cluster stays NONE. Every
 * device kind is accepted; as in every kernel generation, a regular swap
 * file (not a block device) takes order-0 allocations only.
 */
#include <stdlib.h>
#include <string.h>
#include "swaplab/swaplab.h"
#include "swaplab/cluster.h"
#include "swaplab/debug.h"

typedef struct ff_state {
	uint64_t cursor;            /* next slot to search from */
} ff_state;

#define HIGH8 UINT64_C(0x8080808080808080)
#define LOW7 UINT64_C(0x7f7f7f7f7f7f7f7f)

/* The first byte of each 2^order-byte lane, high bit: orders 0, 1, 2. */
static const uint64_t lane_mask[3] = {
	HIGH8, UINT64_C(0x0080008000800080), UINT64_C(0x0000008000000080),
};

/* load8() - 8 map bytes as a word with byte i of memory in bits 8i..8i+7. */
static uint64_t load8(const uint8_t *p)
{
	uint64_t w;

	memcpy(&w, p, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	w = __builtin_bswap64(w);
#endif
	return w;
}

/* free_lanes() - the high bit of each lane's first byte is set where all
 * 2^order bytes of the lane are zero (order 0..2). */
static uint64_t free_lanes(uint64_t w, int order)
{
	uint64_t nz = (((w & LOW7) + LOW7) | w) & HIGH8; /* high bit: byte != 0 */

	if (order >= 1)
		nz |= nz >> 8;
	if (order >= 2)
		nz |= nz >> 16;
	return ~nz & lane_mask[order];
}

/* scan_small() - first free 2^order-aligned range (order 0..2) starting in
 * [from, to), from aligned to 2^order; 0 if none. */
static uint64_t scan_small(const sl_device *d, int order, uint64_t from, uint64_t to)
{
	SL_ASSERT(order >= 0 && order < 3 && !(from & ((UINT64_C(1) << order) - 1)));
	for (uint64_t p = from & ~UINT64_C(7); p < to; p += 8) {
		uint64_t m = free_lanes(load8(d->map + p), order);
		if (p < from)
			m &= ~UINT64_C(0) << ((from - p) * 8);
		if (to - p < 8)
			m &= (UINT64_C(1) << ((to - p) * 8)) - 1;
		if (m)
			return p + ((uint64_t)__builtin_ctzll(m) >> 3);
	}
	return 0;
}

/* scan_large() - first free 2^order-aligned range (order 3..9) starting in
 * [from, to), both aligned to 2^order; 0 if none. */
static uint64_t scan_large(const sl_device *d, int order, uint64_t from, uint64_t to)
{
	uint32_t nr = 1u << order;

	SL_ASSERT(!(from & (nr - 1)) && !(to & (nr - 1)));
	for (uint64_t s = from; s < to; s += nr)
		if (sli_range_free(d, s, nr))
			return s;
	return 0;
}

/* scan() - first fit among the aligned starts in [from, to); 0 if none. */
static uint64_t scan(const sl_device *d, int order, uint64_t from, uint64_t to)
{
	if (from >= to)
		return 0;
	return order < 3 ? scan_small(d, order, from, to) : scan_large(d, order, from, to);
}

/* ff_alloc() - from the cursor to the device end, then from the start to
 * the cursor; the cursor moves past the allocation. */
static uint64_t ff_alloc(sl_device *d, int cpu, int order)
{
	ff_state *st = d->pstate;
	uint64_t nr = UINT64_C(1) << order, total = (uint64_t)d->nr_clusters * SL_CLUSTER;
	uint64_t start = (st->cursor + nr - 1) & ~(nr - 1), off;

	(void)cpu;
	if (order > 0 && !(d->flags & SL_DEV_BLKDEV))
		return 0;                    /* a regular swap file takes order 0 only */
	if (d->inuse_pages + nr > d->pages)
		return 0;                    /* cannot fit: skip the whole-device scan */
	if (start > total)
		start = total;
	off = scan(d, order, start, total);
	if (!off)
		off = scan(d, order, 0, start);
	if (!off)
		return 0;
	SL_ASSERT(!(off & (nr - 1)) && off + nr <= total);
	sli_alloc_range(d, off, order);
	st->cursor = off + nr < total ? off + nr : 0;
	return off;
}

/* ff_free() - releases a run inside one cluster. */
static void ff_free(sl_device *d, int cpu, uint64_t off, uint32_t nr)
{
	(void)cpu;
	sli_release_range(d, off, nr);
}

/* ff_init() - the cursor starts at slot 1, past the header. */
static int ff_init(sl_device *d)
{
	ff_state *st = calloc(1, sizeof(*st));

	if (!st)
		return -1;
	st->cursor = 1;
	d->pstate = st;
	return 0;
}

/* ff_fini() - frees the state. */
static void ff_fini(sl_device *d)
{
	free(d->pstate);
	d->pstate = NULL;
}

const sl_policy sl_policy_first_fit = {
	.name = "first-fit",
	.summary = "baseline: aligned first fit over the slot map from a next-fit cursor",
	.kernel = "",
	.props = SL_POL_SWAPIN_LARGE | SL_POL_SPLIT_ZEROPAGE | SL_POL_SPLIT_DESCENDING,
	.init = ff_init,
	.fini = ff_fini,
	.alloc = ff_alloc,
	.free = ff_free,
};
