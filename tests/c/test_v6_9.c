/*
 * test_v6_9.c - the classic allocator of linux-6.9 (6.9 mm/swapfile.c and
 * mm/swap_slots.c): the interleaved free list, per-CPU clusters, slot-cache
 * batches and the free slot cache, whole-cluster PMD allocation, the linear
 * swap_map scan and its random 64 MiB jumps. Devices: 16 MiB = clusters
 * 0..7, 96 MiB = 0..47, 256 MiB = 0..127; 4 CPUs, so the slot caches switch
 * on above 4 x 320 free slots. Slot numbers that depend on the policy's
 * random numbers are pinned by its fixed seed.
 */
#include "t.h"

#define POL "linux-6.9"

static void alloc_n(sl_device *d, int cpu, int order, int n)
{
	for (int i = 0; i < n; i++)
		CHECK(sl_swap_alloc(d, cpu, order) != 0);
}

TEST(v69_init_free_list_interleaves_32_columns)
{
	sl_device *d = t_device(POL, 96 * 256); /* 48 clusters: two rows */
	CHECK_LIST(d, SL_LIST_FREE, 32, 1, 33, 2, 34, 3, 35, 4, 36, 5, 37, 6, 38, 7, 39, 8, 40,
		   9, 41, 10, 42, 11, 43, 12, 44, 13, 45, 14, 46, 15, 47, 16, 17, 18, 19, 20, 21,
		   22, 23, 24, 25, 26, 27, 28, 29, 30, 31);
	/* cluster 0 holds the header: in use, on no list (no nonfull list yet) */
	CHECK_EQ(d->ci[0].flags, SL_CF_NONE);
	CHECK_LIST_EMPTY(d, SL_LIST_NONFULL(0));
	CHECK_INVARIANTS(d);
	sl_device_destroy(d);

	d = t_device(POL, 4096); /* up to 32 clusters the interleave is ascending */
	CHECK_LIST(d, SL_LIST_FREE, 1, 2, 3, 4, 5, 6, 7);
	sl_device_destroy(d);

	d = t_device(POL, 1280); /* the padded last cluster is in use too */
	CHECK_LIST(d, SL_LIST_FREE, 1);
	CHECK_EQ(d->ci[2].flags, SL_CF_NONE);
	sl_device_destroy(d);
}

TEST(v69_order0_refill_reserves_64_in_the_cpus_cluster)
{
	sl_device *d = t_device(POL, 4096);
	CHECK_EQ(sl_swap_alloc(d, 0, 0), 512);  /* cpu 0 takes the free-list head */
	CHECK_EQ(d->inuse_pages, 64);            /* the refill reserved 64 slots */
	CHECK_EQ(d->map[513], SL_SLOT_CACHE);
	CHECK_EQ(d->map[575], SL_SLOT_CACHE);
	CHECK_EQ(d->map[576], 0);
	CHECK_EQ(d->ci[1].flags, SL_CF_NONE);    /* in use: off the free list */
	CHECK_LIST(d, SL_LIST_FREE, 2, 3, 4, 5, 6, 7);
	for (uint64_t want = 513; want < 576; want++)
		CHECK_EQ(sl_swap_alloc(d, 0, 0), want);
	CHECK_EQ(d->inuse_pages, 64);            /* all from the cache */
	CHECK_EQ(d->st.alloc_fast[0], 63);
	CHECK_EQ(sl_swap_alloc(d, 0, 0), 576);   /* next refill, same cluster */
	CHECK_EQ(d->inuse_pages, 128);
	CHECK_EQ(sl_swap_alloc(d, 1, 0), 1024);  /* cpu 1: its own cluster */
	CHECK_LIST(d, SL_LIST_FREE, 3, 4, 5, 6, 7);
	CHECK_INVARIANTS(d);
	sl_device_destroy(d);
}

TEST(v69_per_cpu_cluster_ends_then_takes_the_next_head)
{
	sl_device *d = t_device(POL, 4096);
	alloc_n(d, 0, 0, 512);                   /* eight refills fill cluster 1 */
	CHECK_EQ(d->ci[1].count, 512);
	CHECK_EQ(d->inuse_pages, 512);
	CHECK_EQ(sl_swap_alloc(d, 0, 0), 1024);  /* cluster 1 is used up */
	CHECK_LIST(d, SL_LIST_FREE, 3, 4, 5, 6, 7);
	CHECK_INVARIANTS(d);
	sl_device_destroy(d);
}

TEST(v69_free_slot_cache_pins_until_64_gathered)
{
	sl_device *d = t_device(POL, 4096);
	alloc_n(d, 0, 0, 64);                    /* 512..575, one refill */
	for (uint64_t s = 512; s < 576; s++)
		sl_swap_put(d, 0, s, 1);
	CHECK_EQ(d->inuse_pages, 64);            /* 64 frees wait, cache-only */
	CHECK_EQ(d->map[512], SL_SLOT_CACHE);
	CHECK_EQ(d->map[575], SL_SLOT_CACHE);
	CHECK_INVARIANTS(d);
	CHECK_EQ(sl_swap_alloc(d, 0, 0), 576);   /* refill: 576..639 */
	CHECK_EQ(d->inuse_pages, 128);
	sl_swap_put(d, 0, 576, 1);               /* the 65th free flushes the 64 */
	CHECK_EQ(d->inuse_pages, 64);
	CHECK_EQ(d->map[512], 0);
	CHECK_EQ(d->map[575], 0);
	CHECK_EQ(d->map[576], SL_SLOT_CACHE);
	CHECK_INVARIANTS(d);
	sl_device_destroy(d);
}

TEST(v69_range_free_goes_slot_by_slot_and_empty_cluster_to_tail)
{
	sl_device *d = t_device(POL, 4096);
	CHECK_EQ(sl_swap_alloc(d, 0, 9), 512);
	/* no order-0 allocation has switched the slot caches on: each of the
	 * 512 slots goes to free_swap_slot() and straight back */
	sl_swap_put(d, 0, 512, 512);
	CHECK_EQ(d->inuse_pages, 0);
	CHECK_EQ(d->map[512], 0);
	CHECK_EQ(d->ci[1].flags, SL_CF_FREE);
	CHECK_LIST(d, SL_LIST_FREE, 2, 3, 4, 5, 6, 7, 1);
	CHECK_INVARIANTS(d);
	sl_device_destroy(d);
}

TEST(v69_active_cache_holds_freed_range_then_drain_empties_cluster)
{
	sl_device *d = t_device(POL, 4096);
	CHECK_EQ(sl_swap_alloc(d, 0, 0), 512);   /* activates the slot caches */
	CHECK_EQ(sl_swap_alloc(d, 1, 9), 1024);  /* cluster 2 whole */
	sl_swap_put(d, 1, 1024, 512);            /* 512 frees on cpu 1 */
	CHECK_EQ(d->ci[2].count, 64);            /* 448 released, 64 still wait */
	CHECK_EQ(d->map[1023 + 448], 0);
	CHECK_EQ(d->map[1024 + 448], SL_SLOT_CACHE);
	CHECK_EQ(d->ci[2].flags, SL_CF_NONE);
	d->pol->drain(d);                        /* swapoff's drain */
	CHECK_LIST(d, SL_LIST_FREE, 3, 4, 5, 6, 7, 2);
	CHECK_EQ(d->inuse_pages, 1);             /* slot 512, still referenced */
	CHECK_EQ(d->ci[1].count, 1);
	CHECK_INVARIANTS(d);
	sl_device_destroy(d);
}

TEST(v69_conflict_a_cpus_freed_cluster_yields_to_the_head)
{
	sl_device *d = t_device(POL, 4096);
	CHECK_EQ(sl_swap_alloc(d, 0, 0), 512);   /* cpu 0 in cluster 1, next 576 */
	sl_swap_put(d, 0, 512, 1);
	d->pol->drain(d);                        /* cluster 1 empties: free tail */
	CHECK_LIST(d, SL_LIST_FREE, 2, 3, 4, 5, 6, 7, 1);
	/* cpu 0 finds 576 free in its cluster, but that cluster is free and not
	 * the head: scan_swap_map_ssd_cluster_conflict() drops it */
	CHECK_EQ(sl_swap_alloc(d, 0, 0), 1024);
	CHECK_LIST(d, SL_LIST_FREE, 3, 4, 5, 6, 7, 1);
	CHECK_INVARIANTS(d);
	sl_device_destroy(d);
}

TEST(v69_pmd_takes_a_whole_free_cluster_only)
{
	sl_device *d = t_device(POL, 4096);
	CHECK_EQ(sl_swap_alloc(d, 0, 0), 512);   /* cpu 0 holds cluster 1 */
	CHECK_EQ(sl_swap_alloc(d, 1, 9), 1024);  /* the head, not a used cluster */
	CHECK_EQ(d->ci[2].count, 512);
	CHECK_EQ(d->ci[2].flags, SL_CF_NONE);
	CHECK_LIST(d, SL_LIST_FREE, 3, 4, 5, 6, 7);
	alloc_n(d, 1, 9, 5);                     /* clusters 3..7 */
	CHECK_LIST_EMPTY(d, SL_LIST_FREE);
	sl_swap_put(d, 1, 1024, 256);            /* half of cluster 2 comes back */
	CHECK_EQ(sl_swap_alloc(d, 1, 9), 0);     /* no free cluster: fail (split) */
	CHECK_EQ(d->st.alloc_fail[9], 1);
	CHECK_INVARIANTS(d);
	sl_device_destroy(d);
}

TEST(v69_orders_below_pmd_always_fail)
{
	sl_device *d = t_device(POL, 4096);
	for (int o = 1; o < SL_PMD_ORDER; o++)
		CHECK_EQ(sl_swap_alloc(d, 0, o), 0);
	CHECK_EQ(d->st.alloc_fail[4], 1);
	CHECK_EQ(d->inuse_pages, 0);
	CHECK_LIST(d, SL_LIST_FREE, 1, 2, 3, 4, 5, 6, 7);
	CHECK(d->pol->props & SL_POL_SPLIT_MTHP);
	CHECK(!(d->pol->props & (SL_POL_SWAPIN_LARGE | SL_POL_SPLIT_ZEROPAGE |
				 SL_POL_SPLIT_DESCENDING | SL_POL_ORDERED_CLUSTERS)));
	sl_device_destroy(d);
}

TEST(v69_no_free_cluster_linear_scan_from_the_scan_base)
{
	sl_device *d = t_device(POL, 4096);
	alloc_n(d, 0, 9, 7);                     /* clusters 1..7: only 1..511 left */
	CHECK_EQ(sl_swap_alloc(d, 0, 9), 0);
	/* 511 free < 4 x 320: caches off, one slot per call. cpu 0's scan base
	 * (random, > 511) finds nothing up to highest_bit, wraps to lowest_bit */
	CHECK_EQ(sl_swap_alloc(d, 0, 0), 1);
	/* the scan base is now 2; the scan starts after it */
	CHECK_EQ(sl_swap_alloc(d, 0, 0), 3);
	CHECK_EQ(sl_swap_alloc(d, 0, 0), 5);
	alloc_n(d, 0, 0, 253);                   /* 7 .. 511 */
	CHECK_EQ(d->map[511], 1);
	CHECK_EQ(sl_swap_alloc(d, 0, 0), 2);     /* wrapped: lowest_bit is 2 */
	CHECK_EQ(sl_swap_alloc(d, 0, 0), 4);
	alloc_n(d, 0, 0, 253);                   /* 6 .. 510: the device is full */
	CHECK_EQ(d->inuse_pages, d->pages);
	CHECK_EQ(sl_swap_alloc(d, 0, 0), 0);
	sl_swap_put(d, 0, 300, 1);               /* caches off: freed directly */
	CHECK_EQ(sl_swap_alloc(d, 0, 0), 300);
	CHECK_INVARIANTS(d);
	sl_device_destroy(d);
}

/* 256 MiB: every cluster taken by a PMD, then all but its first slot
 * freed: free slots everywhere, no free cluster. */
static sl_device *holey_device(void)
{
	sl_device *d = t_device(POL, 65536);
	uint64_t off;

	while ((off = sl_swap_alloc(d, 0, 9)) != 0)
		sl_swap_put(d, 0, off + 1, 511);
	CHECK_LIST_EMPTY(d, SL_LIST_FREE);
	return d;
}

/* The first slot of each refill that does not continue the last one. */
static int refill_starts(sl_device *d, int allocs, uint64_t *out, int max)
{
	uint64_t prev = 0;
	int n = 0;

	for (int i = 0; i < allocs; i++) {
		uint64_t in = d->inuse_pages, off = sl_swap_alloc(d, 0, 0);
		CHECK(off != 0);
		if (d->inuse_pages > in && off > prev + 3 && n < max)
			out[n++] = off;
		prev = off;
	}
	return n;
}

TEST(v69_scan_base_jumps_to_a_random_64m_boundary_deterministically)
{
	uint64_t a[8], b[8];
	sl_device *d = holey_device();
	int na = refill_starts(d, 6000, a, 8);

	/* refills continue linearly; when one ends past 32768 (a 64 MiB swap
	 * cache space boundary) the scan base jumps to a random 64 MiB-aligned
	 * spot, and the next refill starts just after it */
	CHECK_EQ(na, 2);
	CHECK_EQ(a[0], 27817);                   /* cpu 0's random scan base + 1 */
	CHECK_EQ(a[1], 49153);                   /* 3 x 16384 + 1 */
	CHECK_INVARIANTS(d);
	sl_device_destroy(d);

	d = holey_device();                      /* the same seed: the same jumps */
	CHECK_EQ(refill_starts(d, 6000, b, 8), na);
	CHECK_EQ(b[0], a[0]);
	CHECK_EQ(b[1], a[1]);
	sl_device_destroy(d);
}
