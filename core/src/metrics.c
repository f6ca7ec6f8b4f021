/*
 * metrics.c - fragmentation of a device's free space (docs/metrics.md).
 *
 * Over the free slots (swap_map byte 0):
 *   - per order k: naturally aligned free ranges of 2^k slots, and the
 *     maximal ones (not inside a free aligned range of order k+1; the
 *     buddy allocator's free_area[k].nr_free, with order 9 - a cluster -
 *     as the largest block);
 *   - from those, the unusable free space index and the fragmentation
 *     index of mm/vmstat.c (in thousandths, as the kernel computes them);
 *   - the maximal runs of free slots (extents) and Ceph BlueStore's
 *     fragmentation score over them;
 *   - clusters per list state and order (devices only).
 * Accumulates over several devices (a set is one pool, like a node's
 * zones), then sl_frag_finish() derives the indices.
 */
#include <stddef.h>
#include <string.h>
#include "swaplab/swaplab.h"
#include "swaplab/cluster.h"

#define WORDS ((int)(SL_CLUSTER / 64))

/* BlueStore's per-extent score: a free extent of v units is worth v units
 * at 1.1x per doubling of its length, interpolated linearly between powers
 * of two. scale[k] = 1.1^k. */
static double bluestore_scale[66];

static void init_scales(void)
{
	if (bluestore_scale[0] != 0.0)
		return;
	double s = 1.0;
	for (int k = 0; k < 66; k++, s *= 1.1)
		bluestore_scale[k] = s;
}

static double bluestore_extent_score(uint64_t v)
{
	int sc = 63 - __builtin_clzll(v);
	double lo = (double)(UINT64_C(1) << sc);
	double x = ((double)v - lo) / lo;
	return lo * bluestore_scale[sc] * (1.0 - x) + 2.0 * lo * bluestore_scale[sc + 1] * x;
}

void sl_frag_init(sl_frag_metrics *m)
{
	memset(m, 0, sizeof(*m));
	init_scales();
}

static void extent_end(sl_frag_metrics *m)
{
	if (!m->run)
		return;
	m->free_extents++;
	if (m->run > m->largest_extent)
		m->largest_extent = m->run;
	m->score_sum += bluestore_extent_score(m->run);
	m->run = 0;
}

/* Aligned free ranges of one cluster's free bitmap f (bit i: slot i free),
 * and its runs of free slots continuing the current extent. */
static void add_bits(sl_frag_metrics *m, const uint64_t f[WORDS])
{
	/* bit positions that start a naturally aligned range of 2^k slots */
	static const uint64_t starts[7] = { 0xffffffffffffffffull, 0x5555555555555555ull,
					    0x1111111111111111ull, 0x0101010101010101ull,
					    0x0001000100010001ull, 0x0000000100000001ull, 1ull };
	int full[WORDS];

	for (int i = 0; i < WORDS; i++) {
		/* after step k, bit j is set when slots j .. j+2^k-1 are free */
		uint64_t x = f[i];
		for (int k = 0; k < 7; k++) {
			m->free_aligned[k] += (uint64_t)__builtin_popcountll(x & starts[k]);
			if (k < 6)
				x &= x >> (1u << k);
		}
		full[i] = f[i] == ~UINT64_C(0);
	}
	/* orders 7..9: pairs of free aligned ranges one order down */
	for (int k = 7, n = WORDS; k <= SL_PMD_ORDER; k++) {
		n /= 2;
		for (int i = 0; i < n; i++) {
			full[i] = full[2 * i] && full[2 * i + 1];
			m->free_aligned[k] += (uint64_t)full[i];
		}
	}
	/* extents: runs of set bits, joined across words and clusters */
	for (int i = 0; i < WORDS; i++) {
		uint64_t x = f[i];
		if (x == ~UINT64_C(0)) {
			m->run += 64;
			continue;
		}
		if (!x) {
			extent_end(m);
			continue;
		}
		for (int b = 0; b < 64; b++) {
			if (x >> b & 1)
				m->run++;
			else
				extent_end(m);
		}
	}
}

void sl_frag_add_map(sl_frag_metrics *m, const uint8_t *map, uint64_t nslots)
{
	uint64_t f[WORDS];

	for (uint64_t base = 0; base < nslots; base += SL_CLUSTER) {
		uint64_t n = nslots - base < SL_CLUSTER ? nslots - base : SL_CLUSTER;
		memset(f, 0, sizeof(f));
		for (uint64_t i = 0; i < n; i++)
			f[i / 64] |= (uint64_t)(map[base + i] == SL_SLOT_FREE) << (i % 64);
		add_bits(m, f);
	}
	extent_end(m);
}

/* The first four bytes of a cluster (count, flags, order): equal keys are
 * equal states for the walk below. */
static inline uint32_t cluster_key(const sl_cluster *ci)
{
	uint32_t k;

	_Static_assert(offsetof(sl_cluster, order) == 3 && sizeof(ci->order) == 1,
		       "count, flags and order fill the first four bytes");
	memcpy(&k, ci, sizeof(k));
	return k;
}

void sl_frag_add_device(sl_frag_metrics *m, const sl_device *d, uint8_t *cmap)
{
	uint32_t hist[SL_CF_DISCARD + 1][SL_NR_ORDERS] = { { 0 } };
	uint64_t empty = 0;

	/* A device of 64 GiB has 32768 clusters to walk every iteration, most
	 * of them empty or full, and neighbours mostly alike: the walk takes
	 * each run of equal empty or full clusters at once (a few instructions
	 * a cluster), and reads the map of the partly used ones only. */
	m->has_clusters = 1;
	for (uint32_t c = 0; c < d->nr_clusters;) {
		const sl_cluster *ci = &d->ci[c];
		uint32_t key = cluster_key(ci), n = 1;

		if (ci->count == SL_CLUSTER || (ci->count == 0 && ci->flags == SL_CF_FREE)) {
			const sl_cluster *p = ci + 1, *end = d->ci + d->nr_clusters;
			while (end - p >= 4 && cluster_key(p) == key && cluster_key(p + 1) == key &&
			       cluster_key(p + 2) == key && cluster_key(p + 3) == key)
				p += 4;
			while (p < end && cluster_key(p) == key)
				p++;
			n = (uint32_t)(p - ci);
			if (ci->count == SL_CLUSTER) {
				extent_end(m);
			} else {
				/* empty: every aligned range free (counted below),
				 * the extent goes on */
				empty += n;
				m->run += (uint64_t)n * SL_CLUSTER;
			}
		} else {
			/* the same as sl_frag_add_map over this cluster, without
			 * ending the extent at its edges */
			uint64_t f[WORDS] = { 0 };
			const uint8_t *s = d->map + sli_cluster_offset(c);
			for (uint32_t i = 0; i < SL_CLUSTER; i++)
				f[i / 64] |= (uint64_t)(s[i] == SL_SLOT_FREE) << (i % 64);
			add_bits(m, f);
		}
		hist[ci->flags][ci->order] += n;
		if (cmap)
			memset(cmap + c, ci->flags << 4 | ci->order, n);
		c += n;
	}
	for (int k = 0; k < SL_NR_ORDERS; k++)
		m->free_aligned[k] += empty * (SL_CLUSTER >> k);
	for (int f = 0; f <= SL_CF_DISCARD; f++)
		for (int k = 0; k < SL_NR_ORDERS; k++)
			m->clusters[f][k] += hist[f][k];
	extent_end(m);
}

void sl_frag_add_set(sl_frag_metrics *m, const sl_swapset *s, uint8_t *cmap)
{
	for (int t = 0; t < s->nr; t++)
		sl_frag_add_device(m, s->dev[t], t == 0 ? cmap : NULL);
}

/* mm/vmstat.c unusable_free_index(), in thousandths (linux-6.18) */
static int32_t unusable_free_index(int order, uint64_t free_pages, uint64_t suitable)
{
	if (free_pages == 0)
		return 1000;
	return (int32_t)((free_pages - (suitable << order)) * 1000u / free_pages);
}

/* mm/vmstat.c __fragmentation_index(), in thousandths (linux-6.18) */
static int32_t __fragmentation_index(int order, uint64_t free_pages, uint64_t total, uint64_t suitable)
{
	uint64_t requested = UINT64_C(1) << order;

	if (!total)
		return 0;
	if (suitable)
		return -1000;
	return 1000 - (int32_t)((1000u + free_pages * 1000u / requested) / total);
}

void sl_frag_finish(sl_frag_metrics *m)
{
	uint64_t free_pages = 0, total = 0;

	extent_end(m);
	/* maximal blocks: the aligned ranges not inside a free range one order up */
	for (int k = 0; k < SL_NR_ORDERS; k++)
		m->free_blocks[k] = m->free_aligned[k] -
				    (k + 1 < SL_NR_ORDERS ? 2 * m->free_aligned[k + 1] : 0);
	for (int k = 0; k < SL_NR_ORDERS; k++) {
		total += m->free_blocks[k];
		free_pages += m->free_blocks[k] << k;
	}
	m->free_slots = free_pages;
	for (int k = 0; k < SL_NR_ORDERS; k++) {
		m->unusable_index[k] = unusable_free_index(k, free_pages, m->free_aligned[k]);
		m->frag_index[k] = __fragmentation_index(k, free_pages, total, m->free_aligned[k]);
	}
	/* BlueStore: 0 when the free space is one extent, 1 when every free
	 * slot stands alone */
	if (free_pages) {
		double ideal = bluestore_extent_score(free_pages);
		double terrible = (double)free_pages * bluestore_extent_score(1);
		m->bluestore_score = ideal > terrible ? (ideal - m->score_sum) / (ideal - terrible) : 0.0;
	} else {
		m->bluestore_score = 0.0;
	}
}
