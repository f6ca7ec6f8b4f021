/*
 * test_v6_15.c - where linux-6.15 differs from linux-6.18 (6.15
 * cluster_alloc_swap_entry): the free list before nonfull, the counted frag
 * scan, the fast path restarting in an emptied cluster, no slot cache.
 * 16 MiB: clusters 0..7; 12 MiB: 0..5.
 */
#include "t.h"

#define POL "linux-6.15"
#define NF(o) SL_LIST_NONFULL(o)
#define FR(o) SL_LIST_FRAG(o)
/* the per-CPU row itself, also on a rotational device */
#define CUR(d, cpu, o) ((d)->cursor[(cpu) * SL_CURSOR_STRIDE + (o)])

TEST(v615_free_list_before_nonfull)
{
	sl_device *d = t_device(POL, 4096);
	for (int i = 0; i < 32; i++)
		CHECK(sl_swap_alloc(d, 0, 4) != 0);   /* cluster 1 full */
	sl_swap_put(d, 0, 512, 16);
	CHECK_LIST(d, NF(4), 1);
	CHECK_EQ(sl_swap_alloc(d, 1, 4), 1024);   /* 6.18 would take 512 */
	CHECK_LIST(d, NF(4), 1);
	CHECK_LIST(d, FR(4), 2);
	CHECK_INVARIANTS(d);
	sl_device_destroy(d);
}

TEST(v615_order0_unbatched_and_freed_at_once)
{
	sl_device *d = t_device(POL, 4096);
	CHECK_EQ(sl_swap_alloc(d, 0, 0), 512);    /* free list first, no batch */
	CHECK_EQ(d->inuse_pages, 1);
	sl_swap_put(d, 0, 512, 1);
	CHECK_EQ(d->inuse_pages, 0);
	CHECK_LIST(d, SL_LIST_FREE, 2, 3, 4, 5, 6, 7, 1);
	/* the cluster emptied but keeps no table to lose: the fast path restarts it */
	CHECK_EQ(sl_swap_alloc(d, 0, 0), 512);
	CHECK_EQ(d->st.alloc_fast[0], 1);
	CHECK_LIST(d, FR(0), 1);
	CHECK_INVARIANTS(d);
	sl_device_destroy(d);
}

TEST(v615_frag_scan_covers_every_preexisting_cluster)
{
	sl_device *d = t_device(POL, 3072);      /* clusters 0..5 */
	for (int i = 0; i < 128; i++)
		CHECK(sl_swap_alloc(d, 0, 4) != 0);   /* 1..4 full, free = [5] */
	sl_swap_put(d, 0, 513, 1);                /* 1: a hole that fits no 64K */
	CHECK_EQ(sl_swap_alloc(d, 1, 4), 2560);   /* free 5 first; frag = [5] */
	sl_swap_put(d, 0, 1025, 1);               /* 2: another useless hole */
	CHECK_LIST(d, NF(4), 1, 2);
	CHECK_LIST(d, FR(4), 5);
	/* cpu 2: no free; reclaim; nonfull 1, 2 fail -> frag [5 1 2]; frags = 2 of
	 * 3, so the frag scan reaches the head (5), which has room */
	CHECK_EQ(sl_swap_alloc(d, 2, 4), 2576);
	CHECK_LIST(d, FR(4), 1, 2, 5);
	CHECK_INVARIANTS(d);
	sl_device_destroy(d);
}
