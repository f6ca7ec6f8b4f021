/*
 * test_v6_10.c - the steps of linux-6.10 (6.10
 * scan_swap_map_try_ssd_cluster, the slot caches, scan_swap_map_slots) with
 * the exact state each must leave. 16 MiB device: clusters 0..7; 4 MiB:
 * 0..1; 96 MiB: 0..47. t_device() has 4 CPUs: the slot caches switch on
 * above 4 x 320 free slots and off below 4 x 128.
 */
#include "t.h"

#define POL "linux-6.10"
#define CUR(d, cpu, o) (*sli_cursor(d, cpu, o))

static void alloc_n(sl_device *d, int cpu, int order, int n)
{
	for (int i = 0; i < n; i++)
		CHECK(sl_swap_alloc(d, cpu, order) != 0);
}

TEST(v610_init_free_list_interleaved_cluster0_on_no_list)
{
	sl_device *d = t_device(POL, 96 * 256); /* 48 clusters */
	uint32_t h = sli_head(d, SL_LIST_FREE), c = d->ci[h].next;
	CHECK_EQ(c, 32);                        /* column 0 without cluster 0 */
	c = d->ci[c].next;
	CHECK_EQ(c, 1);                         /* column 1: 1, 33 */
	c = d->ci[c].next;
	CHECK_EQ(c, 33);
	CHECK_EQ(d->list_len[SL_LIST_FREE], 47);
	CHECK_EQ(d->ci[0].flags, SL_CF_NONE);   /* 6.10 has no nonfull list */
	CHECK_INVARIANTS(d);
	sl_device_destroy(d);
}

TEST(v610_first_large_alloc_takes_the_free_head_off_every_list)
{
	sl_device *d = t_device(POL, 4096);
	CHECK_LIST(d, SL_LIST_FREE, 1, 2, 3, 4, 5, 6, 7);
	CHECK_EQ(sl_swap_alloc(d, 0, 4), 512);
	CHECK_EQ(d->ci[1].flags, SL_CF_NONE);
	CHECK_LIST(d, SL_LIST_FREE, 2, 3, 4, 5, 6, 7);
	CHECK_EQ(CUR(d, 0, 4), 528);
	CHECK_EQ(sl_swap_alloc(d, 0, 4), 528);  /* the cursor, in steps of 16 */
	/* another CPU, same order: its own cluster, the next head */
	CHECK_EQ(sl_swap_alloc(d, 1, 4), 1024);
	CHECK_LIST(d, SL_LIST_FREE, 3, 4, 5, 6, 7);
	/* cluster end: cursor invalid, then the next head */
	alloc_n(d, 0, 4, 30);
	CHECK_EQ(CUR(d, 0, 4), 0);
	CHECK_EQ(d->ci[1].count, 512);
	CHECK_EQ(d->ci[1].flags, SL_CF_NONE);   /* no full list either */
	CHECK_EQ(sl_swap_alloc(d, 0, 4), 1536);
	CHECK_INVARIANTS(d);
	sl_device_destroy(d);
}

TEST(v610_large_order_fails_without_free_cluster_despite_room)
{
	sl_device *d = t_device(POL, 4096);
	alloc_n(d, 0, 4, 7 * 32);               /* clusters 1..7 full */
	CHECK_LIST_EMPTY(d, SL_LIST_FREE);
	/* cluster 0's 511 slots by the linear scan (cache off: < 1280 free) */
	alloc_n(d, 0, 0, 511);
	CHECK_EQ(d->ci[0].count, 512);
	CHECK_EQ(d->inuse_pages, d->pages);
	/* a 64K hole in cluster 3: still no free cluster, so order 4 fails */
	sl_swap_put(d, 0, 1536 + 64, 16);
	CHECK_EQ(d->ci[3].count, 512 - 16);
	CHECK_EQ(sl_swap_alloc(d, 0, 4), 0);
	CHECK_EQ(sl_swap_alloc(d, 1, 4), 0);
	/* order 0 scans the map and lands in the order-4 cluster's hole */
	CHECK_EQ(sl_swap_alloc(d, 0, 0), 1600);
	CHECK_EQ(sl_swap_alloc(d, 0, 0), 1602); /* the scan starts past its base */
	CHECK_INVARIANTS(d);
	sl_device_destroy(d);
}

TEST(v610_conflict_a_freed_cluster_yields_to_the_free_head)
{
	sl_device *d = t_device(POL, 4096);
	CHECK_EQ(sl_swap_alloc(d, 0, 4), 512);
	sl_swap_put(d, 0, 512, 16);             /* cache off: freed at once */
	CHECK_LIST(d, SL_LIST_FREE, 2, 3, 4, 5, 6, 7, 1);
	CHECK_EQ(CUR(d, 0, 4), 528);            /* stale, into a free cluster */
	CHECK_EQ(sl_swap_alloc(d, 0, 4), 1024);
	CHECK_LIST(d, SL_LIST_FREE, 3, 4, 5, 6, 7, 1);
	CHECK_INVARIANTS(d);
	sl_device_destroy(d);
}

TEST(v610_a_freed_cluster_that_is_the_head_continues_at_the_cursor)
{
	sl_device *d = t_device(POL, 1024);     /* clusters 0, 1 */
	CHECK_EQ(sl_swap_alloc(d, 0, 4), 512);
	sl_swap_put(d, 0, 512, 16);
	CHECK_LIST(d, SL_LIST_FREE, 1);
	CHECK_EQ(sl_swap_alloc(d, 0, 4), 528);  /* not 512: no conflict at the head */
	CHECK_LIST_EMPTY(d, SL_LIST_FREE);
	CHECK_INVARIANTS(d);
	sl_device_destroy(d);
}

TEST(v610_order0_refill_reserves_64_from_the_free_head)
{
	sl_device *d = t_device(POL, 4096);
	CHECK_EQ(sl_swap_alloc(d, 0, 0), 512);
	CHECK_EQ(d->inuse_pages, 64);
	CHECK_EQ(d->map[512], 1);
	CHECK_EQ(d->map[513], SL_SLOT_CACHE);
	CHECK_EQ(d->map[575], SL_SLOT_CACHE);
	CHECK_EQ(d->map[576], 0);
	CHECK_EQ(CUR(d, 0, 0), 576);
	CHECK_LIST(d, SL_LIST_FREE, 2, 3, 4, 5, 6, 7);
	CHECK_EQ(sl_swap_alloc(d, 0, 0), 513);  /* from the cache */
	CHECK_EQ(sl_swap_alloc(d, 1, 0), 1024); /* CPU 1: its own batch, cluster */
	CHECK_EQ(d->inuse_pages, 128);
	CHECK_INVARIANTS(d);
	sl_device_destroy(d);
}

TEST(v610_every_freed_slot_waits_in_the_free_cache_ranges_too)
{
	sl_device *d = t_device(POL, 4096);
	alloc_n(d, 0, 0, 70);                   /* 512..581; batches up to 639 */
	CHECK_EQ(sl_swap_alloc(d, 0, 4), 1024); /* free head: cluster 2 */
	uint64_t in = d->inuse_pages;
	sl_swap_put(d, 0, 517, 1);
	sl_swap_put(d, 0, 1024, 16);            /* one slot at a time */
	CHECK_EQ(d->inuse_pages, in);
	CHECK_EQ(d->map[517], SL_SLOT_CACHE);
	CHECK_EQ(d->map[1024], SL_SLOT_CACHE);
	CHECK_EQ(d->map[1039], SL_SLOT_CACHE);
	CHECK_EQ(d->ci[2].count, 16);
	/* 47 more make 64; the 65th push returns those 64 in push order */
	sl_swap_put(d, 0, 518, 48);             /* 518..565 */
	CHECK_EQ(d->map[517], 0);
	CHECK_EQ(d->map[564], 0);
	CHECK_EQ(d->map[565], SL_SLOT_CACHE);
	CHECK_EQ(d->ci[2].count, 0);
	CHECK_LIST(d, SL_LIST_FREE, 3, 4, 5, 6, 7, 2);
	CHECK_EQ(d->inuse_pages, in - 64);
	/* swapoff's drain: reserved and pending slots all come back */
	d->pol->drain(d);
	CHECK_EQ(d->inuse_pages, 70 - 1 - 48);
	CHECK_INVARIANTS(d);
	sl_device_destroy(d);
}

TEST(v610_props_are_the_6_10_process_side)
{
	const sl_policy *pol = sl_policy_find(POL);
	CHECK(!(pol->props & (SL_POL_ORDERED_CLUSTERS | SL_POL_SWAPIN_LARGE |
			      SL_POL_SPLIT_ZEROPAGE | SL_POL_SPLIT_MTHP | SL_POL_SPLIT_DESCENDING)));
}
