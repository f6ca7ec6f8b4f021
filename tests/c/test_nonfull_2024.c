/*
 * test_nonfull_2024.c - the cluster states of Chris Li's "mTHP swap
 * allocator base on swap cluster order" v2 (June 2024) with the exact list
 * and cursor state each step must leave. 16 MiB device: clusters
 * 0..7, 4 CPUs (slot caches off below 1280 free).
 */
#include "t.h"

#define POL "nonfull-2024"
#define NF(o) SL_LIST_NONFULL(o)
#define CUR(d, cpu, o) (*sli_cursor(d, cpu, o))

static void alloc_n(sl_device *d, int cpu, int order, int n)
{
	for (int i = 0; i < n; i++)
		CHECK(sl_swap_alloc(d, cpu, order) != 0);
}

TEST(nf24_new_cluster_leaves_the_free_list_at_once_with_its_order)
{
	sl_device *d = t_device(POL, 4096);
	CHECK_LIST(d, SL_LIST_FREE, 1, 2, 3, 4, 5, 6, 7);
	CHECK_EQ(d->ci[0].flags, SL_CF_NONE);
	CHECK_EQ(sl_swap_alloc(d, 0, 4), 512);
	CHECK_EQ(d->ci[1].order, 4);
	CHECK_EQ(d->ci[1].flags, SL_CF_NONE);     /* PER_CPU: on no list */
	CHECK_LIST(d, SL_LIST_FREE, 2, 3, 4, 5, 6, 7);
	CHECK_LIST_EMPTY(d, NF(4));
	CHECK_EQ(CUR(d, 0, 4), 528);
	CHECK_EQ(sl_swap_alloc(d, 0, 4), 528);
	/* a free in a PER_CPU cluster lists nothing */
	sl_swap_put(d, 0, 512, 16);
	CHECK_EQ(d->ci[1].flags, SL_CF_NONE);
	CHECK_LIST_EMPTY(d, NF(4));
	CHECK_EQ(sl_swap_alloc(d, 0, 4), 544);    /* the cursor goes on */
	/* emptied: free-list tail; the stale cursor yields to the head */
	sl_swap_put(d, 0, 528, 32);
	CHECK_LIST(d, SL_LIST_FREE, 2, 3, 4, 5, 6, 7, 1);
	CHECK_EQ(d->ci[1].order, 0);
	CHECK_EQ(CUR(d, 0, 4), 560);
	CHECK_EQ(sl_swap_alloc(d, 0, 4), 1024);
	CHECK_LIST(d, SL_LIST_FREE, 3, 4, 5, 6, 7, 1);
	CHECK_INVARIANTS(d);
	sl_device_destroy(d);
}

TEST(nf24_scan_end_marks_scanned_and_a_free_lists_it_on_nonfull)
{
	sl_device *d = t_device(POL, 4096);
	alloc_n(d, 0, 4, 32);
	CHECK_EQ(CUR(d, 0, 4), 0);                /* end reached: SCANNED */
	CHECK_EQ(d->ci[1].flags, SL_CF_NONE);
	CHECK_LIST_EMPTY(d, SL_LIST_FULL);        /* v2 has no full list */
	sl_swap_put(d, 0, 512 + 48, 16);
	CHECK_LIST(d, NF(4), 1);                  /* SCANNED -> nonfull tail */
	sl_swap_put(d, 0, 512 + 96, 16);
	CHECK_LIST(d, NF(4), 1);                  /* NONFULL stays put */
	/* nonfull[order] comes before the free list */
	CHECK_EQ(sl_swap_alloc(d, 1, 4), 560);
	CHECK_LIST_EMPTY(d, NF(4));
	CHECK_LIST(d, SL_LIST_FREE, 2, 3, 4, 5, 6, 7);
	CHECK_EQ(CUR(d, 1, 4), 576);
	CHECK_EQ(sl_swap_alloc(d, 1, 4), 608);
	CHECK_EQ(CUR(d, 1, 4), 624);
	CHECK_INVARIANTS(d);
	sl_device_destroy(d);
}

TEST(nf24_large_order_served_from_nonfull_when_no_free_cluster)
{
	sl_device *d = t_device(POL, 4096);
	alloc_n(d, 0, 4, 7 * 32);                 /* clusters 1..7 full, SCANNED */
	CHECK_LIST_EMPTY(d, SL_LIST_FREE);
	sl_swap_put(d, 0, 1536 + 64, 16);
	sl_swap_put(d, 0, 2560 + 64, 16);
	CHECK_LIST(d, NF(4), 3, 5);
	CHECK_EQ(sl_swap_alloc(d, 2, 4), 1600);   /* linux-6.10 fails here */
	CHECK_LIST(d, NF(4), 5);
	CHECK_EQ(CUR(d, 2, 4), 1616);
	/* nothing more in cluster 3: SCANNED again, next nonfull cluster */
	CHECK_EQ(sl_swap_alloc(d, 2, 4), 2624);
	CHECK_LIST_EMPTY(d, NF(4));
	CHECK_EQ(sl_swap_alloc(d, 2, 4), 0);
	CHECK_INVARIANTS(d);
	sl_device_destroy(d);
}

TEST(nf24_empty_cluster_goes_to_the_free_tail_with_order_reset)
{
	sl_device *d = t_device(POL, 4096);
	alloc_n(d, 0, 4, 32);
	sl_swap_put(d, 0, 512, 16);               /* SCANNED -> nonfull[4] */
	CHECK_LIST(d, NF(4), 1);
	sl_swap_put(d, 0, 528, 512 - 16);         /* the rest: count 0 */
	CHECK_LIST_EMPTY(d, NF(4));
	CHECK_LIST(d, SL_LIST_FREE, 2, 3, 4, 5, 6, 7, 1);
	CHECK_EQ(d->ci[1].order, 0);
	CHECK_INVARIANTS(d);
	sl_device_destroy(d);
}

TEST(nf24_order0_batches_prefer_nonfull0_then_free)
{
	sl_device *d = t_device(POL, 4096);
	CHECK_EQ(sl_swap_alloc(d, 0, 0), 512);    /* cache on: 64 reserved */
	CHECK_EQ(d->inuse_pages, 64);
	CHECK_EQ(d->map[575], SL_SLOT_CACHE);
	CHECK_EQ(CUR(d, 0, 0), 576);
	CHECK_EQ(d->ci[1].order, 0);
	/* CPU 1 fills cluster 2 with order 0 (8 batches): SCANNED */
	for (int i = 0; i < 512; i++)
		CHECK(sl_swap_alloc(d, 1, 0) != 0);
	CHECK_EQ(d->ci[2].count, 512);
	CHECK_EQ(CUR(d, 1, 0), 0);
	/* 64 single frees flush the free cache: cluster 2 -> nonfull[0] */
	for (uint64_t s = 1024; s < 1024 + 65; s++)
		sl_swap_put(d, 1, s, 1);
	CHECK_LIST(d, NF(0), 2);
	CHECK_EQ(d->map[1024 + 64], SL_SLOT_CACHE); /* the 65th still waits */
	/* CPU 1's next batch: nonfull[0] before the free list */
	CHECK_EQ(sl_swap_alloc(d, 1, 0), 1024);
	CHECK_LIST_EMPTY(d, NF(0));
	CHECK_LIST(d, SL_LIST_FREE, 3, 4, 5, 6, 7);
	CHECK_INVARIANTS(d);
	sl_device_destroy(d);
}

TEST(nf24_linear_scan_fills_a_nonfull_cluster_which_keeps_its_place)
{
	sl_device *d = t_device(POL, 4096);
	alloc_n(d, 0, 4, 7 * 32);
	alloc_n(d, 0, 0, 511);                    /* cluster 0 by the linear scan */
	CHECK_EQ(d->inuse_pages, d->pages);
	sl_swap_put(d, 0, 1536 + 64, 16);
	sl_swap_put(d, 0, 2560 + 64, 16);
	CHECK_LIST(d, NF(4), 3, 5);
	/* order 0: no nonfull[0], no free cluster: the linear scan */
	CHECK_EQ(sl_swap_alloc(d, 0, 0), 1600);
	for (int i = 0; i < 40 && d->ci[3].count < SL_CLUSTER; i++)
		CHECK(sl_swap_alloc(d, 0, 0) != 0);
	CHECK_EQ(d->ci[3].count, 512);
	/* full but still on the kernel's nonfull[4]: the device parks it on
	 * the full list */
	CHECK_LIST(d, SL_LIST_FULL, 3);
	CHECK_LIST(d, NF(4), 5);
	/* a free gives it back its place in front of 5 */
	sl_swap_put(d, 0, 1600, 1);
	CHECK_LIST_EMPTY(d, SL_LIST_FULL);
	CHECK_LIST(d, NF(4), 3, 5);
	CHECK_INVARIANTS(d);
	sl_device_destroy(d);
}

TEST(nf24_props_no_ordered_clusters_and_6_10_process_rules)
{
	const sl_policy *pol = sl_policy_find(POL);
	CHECK(pol != NULL);
	if (pol)
		CHECK(!(pol->props & (SL_POL_ORDERED_CLUSTERS | SL_POL_SWAPIN_LARGE |
				      SL_POL_SPLIT_ZEROPAGE | SL_POL_SPLIT_MTHP |
				      SL_POL_SPLIT_DESCENDING)));
}

TEST(nf24_stale_cursor_into_the_free_head_takes_it_for_this_cpu)
{
	sl_device *d = t_device(POL, 1024);       /* clusters 0, 1 */
	alloc_n(d, 0, 4, 2);
	sl_swap_put(d, 0, 512, 32);               /* emptied: free list [1] */
	CHECK_LIST(d, SL_LIST_FREE, 1);
	/* the head: no conflict; v2 would leave it FREE off-list, the model
	 * takes it as this CPU's cluster (PER_CPU) */
	CHECK_EQ(sl_swap_alloc(d, 0, 4), 544);
	CHECK_LIST_EMPTY(d, SL_LIST_FREE);
	CHECK_EQ(d->ci[1].flags, SL_CF_NONE);
	CHECK_EQ(CUR(d, 0, 4), 560);
	CHECK_INVARIANTS(d);
	sl_device_destroy(d);
}
