/*
 * test_v6_12.c - the list steps of linux-6.12 (6.12
 * cluster_alloc_swap_entry and the slot caches of mm/swap_slots.c) with the
 * exact state each must leave. 16 MiB device: clusters 0..7; 96 MiB: 0..47.
 */
#include "t.h"

#define POL "linux-6.12"
#define NF(o) SL_LIST_NONFULL(o)
#define FR(o) SL_LIST_FRAG(o)
#define CUR(d, cpu, o) (*sli_cursor(d, cpu, o))

TEST(v612_init_interleaves_32_columns)
{
	sl_device *d = t_device(POL, 96 * 256); /* 48 clusters */
	CHECK_LIST(d, NF(0), 0);
	uint32_t h = sli_head(d, SL_LIST_FREE), c = d->ci[h].next;
	CHECK_EQ(c, 32);                     /* column 0: 0 (nonfull), 32 */
	c = d->ci[c].next;
	CHECK_EQ(c, 1);                      /* column 1: 1, 33 */
	c = d->ci[c].next;
	CHECK_EQ(c, 33);
	CHECK_EQ(d->list_len[SL_LIST_FREE], 47);
	sl_device_destroy(d);
}

TEST(v612_fresh_cluster_goes_to_nonfull_and_free_comes_first)
{
	sl_device *d = t_device(POL, 4096);
	CHECK_EQ(sl_swap_alloc(d, 0, 4), 512);
	CHECK_LIST(d, NF(4), 1);             /* visible to other CPUs at once */
	CHECK_EQ(CUR(d, 0, 4), 528);
	/* cpu 1: the free list comes before nonfull */
	CHECK_EQ(sl_swap_alloc(d, 1, 4), 1024);
	CHECK_LIST(d, NF(4), 1, 2);
	CHECK_INVARIANTS(d);
	sl_device_destroy(d);
}

TEST(v612_order0_comes_in_batches_of_64_through_the_slot_cache)
{
	sl_device *d = t_device(POL, 4096);
	/* the free list comes first: cluster 0 (header, on nonfull[0]) waits */
	CHECK_EQ(sl_swap_alloc(d, 0, 0), 512);
	CHECK_EQ(d->inuse_pages, 64);         /* the refill reserved 64 */
	CHECK_EQ(sl_swap_alloc(d, 0, 0), 513);
	CHECK_EQ(d->map[514], SL_SLOT_CACHE); /* reserved, not yet handed out */
	CHECK_EQ(d->map[575], SL_SLOT_CACHE);
	CHECK_EQ(d->map[576], 0);
	CHECK_LIST(d, NF(0), 0, 1);
	CHECK_INVARIANTS(d);
	sl_device_destroy(d);
}

TEST(v612_single_frees_wait_in_the_free_cache_ranges_do_not)
{
	sl_device *d = t_device(POL, 4096);
	for (int i = 0; i < 70; i++)
		CHECK(sl_swap_alloc(d, 0, 0) != 0);   /* 512..581 */
	uint64_t in = d->inuse_pages;
	sl_swap_put(d, 0, 517, 1);
	CHECK_EQ(d->map[517], SL_SLOT_CACHE);    /* pinned, cache-only */
	CHECK_EQ(d->inuse_pages, in);
	CHECK_EQ(sl_swap_alloc(d, 0, 4), 1024);
	sl_swap_put(d, 0, 1024, 16);              /* a 64K range skips the cache */
	CHECK_EQ(d->ci[2].count, 0);
	CHECK_LIST(d, SL_LIST_FREE, 3, 4, 5, 6, 7, 2);
	for (uint64_t s = 518; s < 518 + 63; s++)
		sl_swap_put(d, 0, s, 1);              /* 64 pending: all still held */
	CHECK_EQ(d->map[517], SL_SLOT_CACHE);
	sl_swap_put(d, 0, 581, 1);                /* the 65th flushes the first 64 */
	CHECK_EQ(d->map[517], 0);
	CHECK_EQ(d->map[580], 0);
	CHECK_EQ(d->map[581], SL_SLOT_CACHE);
	CHECK_INVARIANTS(d);
	sl_device_destroy(d);
}

TEST(v612_nonfull_moves_to_frag_before_scan_and_frag_is_bounded)
{
	sl_device *d = t_device(POL, 3072);  /* clusters 0..5 */
	for (int i = 0; i < 160; i++)
		CHECK(sl_swap_alloc(d, 0, 4) != 0); /* 1..5 full */
	CHECK_LIST(d, SL_LIST_FULL, 1, 2, 3, 4, 5);
	sl_swap_put(d, 0, 513, 1);            /* a hole that fits no 64K */
	sl_swap_put(d, 0, 1024, 16);          /* a whole chunk */
	CHECK_LIST(d, NF(4), 1, 2);
	/* cpu 1: no free cluster; reclaim rotates full; nonfull 1 fails -> frag;
	 * nonfull 2 succeeds (and, full again, leaves frag for full) */
	CHECK_EQ(sl_swap_alloc(d, 1, 4), 1024);
	CHECK_LIST(d, FR(4), 1);
	CHECK_LIST(d, SL_LIST_FULL, 4, 5, 3, 2);
	CHECK_LIST_EMPTY(d, NF(4));
	/* now only frag: one pass over it (1 cluster), fails, rotates */
	CHECK_EQ(sl_swap_alloc(d, 1, 4), 0);
	CHECK_LIST(d, FR(4), 1);
	CHECK_INVARIANTS(d);
	sl_device_destroy(d);
}

TEST(v612_stale_cursor_scans_a_reused_cluster_without_checks)
{
	sl_device *d = t_device(POL, 4096);
	CHECK_EQ(sl_swap_alloc(d, 0, 4), 512);   /* cpu 0 cursor 528 in cluster 1 */
	sl_swap_put(d, 0, 512, 16);               /* cluster 1 free again, tail */
	for (int i = 0; i < 6 * 32; i++)          /* cpu 1 uses clusters 2..7 */
		CHECK(sl_swap_alloc(d, 1, 4) != 0);
	CHECK_LIST(d, SL_LIST_FREE, 1);
	CHECK_EQ(sl_swap_alloc(d, 2, 5), 512);    /* cpu 2 takes cluster 1 for 128K */
	CHECK_EQ(d->ci[1].order, 5);
	/* cpu 0's stale order-4 cursor still points into it: 6.12 scans it */
	CHECK_EQ(sl_swap_alloc(d, 0, 4), 544);
	CHECK_EQ(d->ci[1].order, 5);              /* a mixed-order cluster */
	CHECK_INVARIANTS(d);
	sl_device_destroy(d);
}
