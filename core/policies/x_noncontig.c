/*
 * x_noncontig.c - policy "noncontig": the upper-bound reference. A large
 * folio is never split for want of contiguous slots: it may take any free
 * slots, as a virtual swap layer would allow (the folio keeps consecutive,
 * aligned virtual entries; the slots behind them may lie anywhere). Not a
 * kernel generation (docs/policies/noncontig.md).
 *
 * Allocation is first-fit's, unchanged (x_first_fit.c, called through its
 * ops table): the first naturally aligned all-free range from the next-fit
 * cursor, wrapping once. Only where first-fit finds no such range does
 * noncontig go on, through alloc_pages (policy.h): it gathers the folio's
 * 2^order slots as naturally aligned free chunks, largest first - order - 1,
 * then order - 2, ... down to single slots - each chunk the lowest-addressed
 * one of its size, and hands them out in address order. That fails only
 * when fewer than 2^order slots are free. So on a run where first-fit never
 * falls back, noncontig is first-fit slot for slot; where it does, the
 * difference is what non-contiguity buys, and the runs a folio took
 * (swpout_extents) are its price.
 *
 * The process model stores each page's entry in its PTE and swaps a folio
 * back in whole when its range was swapped out as one folio of that order
 * or larger (process.c), as a virtual swap layer could; a range of
 * consecutive, aligned slots is swapped in whole as under every policy.
 * Every device kind is accepted; contiguous allocations keep first-fit's
 * rule (a swap file takes order 0 only), the gathered ones need no
 * contiguity and are made on any kind.
 */
#include <stdlib.h>
#include "swaplab/swaplab.h"
#include "swaplab/cluster.h"

extern const sl_policy sl_policy_first_fit;

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/* take_chunks() - allocates free aligned chunks of 2^k slots, lowest address
 * first, while `want` slots remain; appends their slots to out. Clusters
 * whose count leaves no room for a chunk are skipped whole. */
static uint32_t take_chunks(sl_device *d, int k, uint32_t want, uint64_t *out)
{
	uint32_t nr = 1u << k, got = 0;

	for (uint32_t c = 0; c < d->nr_clusters && want - got >= nr; c++) {
		uint64_t end = sli_cluster_offset(c) + SL_CLUSTER;
		for (uint64_t s = sli_cluster_offset(c);
		     s < end && want - got >= nr && d->ci[c].count + nr <= SL_CLUSTER; s += nr) {
			if (k == 0 && (s = sli_find_free(d, s, end)) == end)
				break;
			if (k > 0 && !sli_range_free(d, s, nr))
				continue;
			sli_alloc_range(d, s, k);
			for (uint32_t j = 0; j < nr; j++)
				out[got + j] = s + j;
			got += nr;
		}
	}
	return got;
}

/* nc_alloc_pages() - first-fit's contiguous range, else the folio's slots
 * gathered in free chunks; returns the runs of consecutive slots, 0 when
 * fewer than 2^order slots are free. */
static int nc_alloc_pages(sl_device *d, int cpu, int order, uint64_t *out)
{
	uint32_t nr = 1u << order, got = 0, runs = 1;
	uint64_t off = sl_policy_first_fit.alloc(d, cpu, order);

	if (off) {
		for (uint32_t j = 0; j < nr; j++)
			out[j] = off + j;
		return 1;
	}
	if (d->inuse_pages + nr > d->pages)
		return 0;
	for (int k = order - 1; k >= 0 && got < nr; k--)
		got += take_chunks(d, k, nr - got, out + got);
	qsort(out, nr, sizeof(out[0]), cmp_u64);
	for (uint32_t j = 1; j < nr; j++)
		runs += out[j] != out[j - 1] + 1;
	return (int)runs;
}

/* nc_init() - first-fit's state: its cursor. */
static int nc_init(sl_device *d)
{
	return sl_policy_first_fit.init(d);
}

/* nc_fini() - frees it. */
static void nc_fini(sl_device *d)
{
	sl_policy_first_fit.fini(d);
}

/* nc_alloc() - a contiguous allocation (order 0, and sl_swap_alloc()
 * callers): first-fit's. */
static uint64_t nc_alloc(sl_device *d, int cpu, int order)
{
	return sl_policy_first_fit.alloc(d, cpu, order);
}

/* nc_free() - a run inside one cluster goes back at once. */
static void nc_free(sl_device *d, int cpu, uint64_t off, uint32_t nr)
{
	sl_policy_first_fit.free(d, cpu, off, nr);
}

const sl_policy sl_policy_noncontig = {
	.name = "noncontig",
	.summary = "reference: first-fit, and a folio that finds no contiguous range takes any free "
		   "slots (virtual swap)",
	.kernel = "",
	.props = SL_POL_SWAPIN_LARGE | SL_POL_SPLIT_ZEROPAGE | SL_POL_SPLIT_DESCENDING,
	.init = nc_init,
	.fini = nc_fini,
	.alloc = nc_alloc,
	.free = nc_free,
	.alloc_pages = nc_alloc_pages,
};
