/*
 * test_v6_18.c - every list transition and search step of linux-6.18's
 * allocation path (6.18 mm/swapfile.c: folio_alloc_swap down to
 * relocate_cluster, and the free path), each with the exact state it must
 * leave. Devices: 16 MiB = clusters 0..7, 12 MiB = 0..5, 4 MiB = 0..1.
 */
#include "t.h"

#define POL "linux-6.18"
#define NF(o) SL_LIST_NONFULL(o)
#define FR(o) SL_LIST_FRAG(o)
/* the per-CPU row itself, also on a rotational device */
#define CUR(d, cpu, o) ((d)->cursor[(cpu) * SL_CURSOR_STRIDE + (o)])

static void alloc_n(sl_device *d, int cpu, int order, int n)
{
	for (int i = 0; i < n; i++)
		CHECK(sl_swap_alloc(d, cpu, order) != 0);
}

TEST(v618_init_lists_ascending_cluster0_on_nonfull0)
{
	sl_device *d = t_device(POL, 4096);
	CHECK_LIST(d, NF(0), 0);
	CHECK_LIST(d, SL_LIST_FREE, 1, 2, 3, 4, 5, 6, 7);
	CHECK_EQ(d->ci[0].count, 1);
	CHECK_EQ(d->pages, 4095);
	CHECK_INVARIANTS(d);
	sl_device_destroy(d);
}

TEST(v618_init_partial_last_cluster_padding_counted)
{
	sl_device *d = t_device(POL, 1280); /* 5 MiB: the last cluster is half padding */
	CHECK_LIST(d, NF(0), 0, 2);
	CHECK_LIST(d, SL_LIST_FREE, 1);
	CHECK_EQ(d->ci[2].count, 256);
	CHECK_EQ(d->pages, 1279);
	CHECK_EQ(d->nr_bad, 257);
	CHECK_INVARIANTS(d);
	sl_device_destroy(d);
}

TEST(v618_order0_first_alloc_from_cluster0_then_fast_path)
{
	sl_device *d = t_device(POL, 4096);
	CHECK_EQ(sl_swap_alloc(d, 0, 0), 1);
	CHECK_LIST_EMPTY(d, NF(0));
	CHECK_LIST(d, FR(0), 0);
	CHECK_EQ(CUR(d, 0, 0), 2);
	CHECK_EQ(sl_swap_alloc(d, 0, 0), 2);
	CHECK_EQ(d->st.alloc_fast[0], 1);
	CHECK_INVARIANTS(d);
	sl_device_destroy(d);
}

TEST(v618_large_order_first_alloc_takes_free_head_to_frag)
{
	sl_device *d = t_device(POL, 4096);
	CHECK_EQ(sl_swap_alloc(d, 0, 4), 512);
	CHECK_EQ(d->ci[1].order, 4);
	CHECK_LIST(d, FR(4), 1);
	CHECK_LIST(d, SL_LIST_FREE, 2, 3, 4, 5, 6, 7);
	CHECK_EQ(CUR(d, 0, 4), 528);
	CHECK_EQ(sl_swap_alloc(d, 0, 4), 528);
	CHECK_LIST(d, FR(4), 1);
	CHECK_INVARIANTS(d);
	sl_device_destroy(d);
}

TEST(v618_full_cluster_moves_to_full_and_clears_cursor)
{
	sl_device *d = t_device(POL, 4096);
	alloc_n(d, 0, 4, 32);
	CHECK_LIST(d, SL_LIST_FULL, 1);
	CHECK_LIST_EMPTY(d, FR(4));
	CHECK_EQ(CUR(d, 0, 4), 0);
	CHECK_EQ(sl_swap_alloc(d, 0, 4), 1024);
	CHECK_LIST(d, FR(4), 2);
	CHECK_INVARIANTS(d);
	sl_device_destroy(d);
}

TEST(v618_nonfull_is_tried_before_free)
{
	sl_device *d = t_device(POL, 4096);
	alloc_n(d, 0, 4, 32);              /* cluster 1 full */
	sl_swap_put(d, 0, 512, 16);        /* a free in a full cluster */
	CHECK_LIST(d, NF(4), 1);
	CHECK_LIST_EMPTY(d, SL_LIST_FULL);
	CHECK_EQ(sl_swap_alloc(d, 1, 4), 512); /* cpu 1 has no cursor: slow path */
	CHECK_LIST(d, SL_LIST_FULL, 1);
	CHECK_LIST_EMPTY(d, NF(4));
	CHECK_EQ(CUR(d, 1, 4), 0);
	CHECK_LIST(d, SL_LIST_FREE, 2, 3, 4, 5, 6, 7);
	CHECK_INVARIANTS(d);
	sl_device_destroy(d);
}

TEST(v618_nonfull_scan_all_failures_move_to_frag)
{
	sl_device *d = t_device(POL, 4096);
	alloc_n(d, 0, 4, 64);              /* clusters 1 and 2 full */
	sl_swap_put(d, 0, 513, 1);         /* cluster 1: one hole, no room for 16 */
	sl_swap_put(d, 0, 1024, 16);       /* cluster 2: one whole chunk */
	CHECK_LIST(d, NF(4), 1, 2);
	CHECK_EQ(sl_swap_alloc(d, 1, 4), 1024);
	CHECK_LIST(d, FR(4), 1);
	CHECK_LIST(d, SL_LIST_FULL, 2);
	CHECK_LIST_EMPTY(d, NF(4));
	CHECK_INVARIANTS(d);
	sl_device_destroy(d);
}

TEST(v618_frag_list_scans_one_cluster_per_call_and_rotates)
{
	sl_device *d = t_device(POL, 3072); /* clusters 0..5 */
	alloc_n(d, 0, 4, 128);              /* clusters 1..4 full, free = [5] */
	sl_swap_put(d, 0, 513, 1);          /* cluster 1 to nonfull[4], no room */
	CHECK_EQ(sl_swap_alloc(d, 1, 4), 2560); /* nonfull fails -> frag, then free 5 */
	CHECK_LIST(d, FR(4), 1, 5);
	CHECK_LIST(d, SL_LIST_FULL, 2, 3, 4);
	CHECK(sl_vm_swap_full(d));
	/* cpu 2: no nonfull, no free; reclaim rotates full; one frag cluster (1) fails */
	CHECK_EQ(sl_swap_alloc(d, 2, 4), 0);
	CHECK_LIST(d, FR(4), 5, 1);
	CHECK_LIST(d, SL_LIST_FULL, 3, 4, 2);
	CHECK_EQ(d->st.full_reclaim_scans, 1);
	CHECK_EQ(d->st.alloc_fail[4], 1);
	/* the next call reaches cluster 5 */
	CHECK_EQ(sl_swap_alloc(d, 2, 4), 2576);
	CHECK_LIST(d, FR(4), 1, 5);
	CHECK_LIST(d, SL_LIST_FULL, 4, 2, 3);
	CHECK_EQ(CUR(d, 2, 4), 2592);
	CHECK_INVARIANTS(d);
	sl_device_destroy(d);
}

TEST(v618_order0_steals_from_higher_order_frag_cluster)
{
	sl_device *d = t_device(POL, 3072);
	alloc_n(d, 0, 0, 511);              /* cluster 0 full */
	CHECK_LIST(d, SL_LIST_FULL, 0);
	alloc_n(d, 0, 4, 136);              /* clusters 1..4 full, 5 holds 8 chunks */
	CHECK_LIST(d, FR(4), 5);
	CHECK_LIST_EMPTY(d, SL_LIST_FREE);
	CHECK_EQ(sl_swap_alloc(d, 0, 0), 2688);
	CHECK_EQ(d->st.alloc_steal, 1);
	CHECK_EQ(d->ci[5].order, 4);
	CHECK_EQ(CUR(d, 0, 0), 2689);
	CHECK_EQ(sl_swap_alloc(d, 0, 0), 2689); /* fast path inside the stolen cluster */
	CHECK_EQ(d->st.alloc_steal, 1);
	/* order 4 now skips the stolen-into slots */
	CHECK_EQ(sl_swap_alloc(d, 0, 4), 2704);
	CHECK_INVARIANTS(d);
	sl_device_destroy(d);
}

TEST(v618_emptied_cluster_goes_to_free_tail_and_fast_path_refuses_it)
{
	sl_device *d = t_device(POL, 4096);
	CHECK_EQ(sl_swap_alloc(d, 0, 4), 512);
	sl_swap_put(d, 0, 512, 16);
	CHECK_LIST(d, SL_LIST_FREE, 2, 3, 4, 5, 6, 7, 1);
	CHECK_EQ(d->ci[1].order, 0);
	CHECK_EQ(CUR(d, 0, 4), 528);        /* stale cursor into a free cluster */
	CHECK_EQ(sl_swap_alloc(d, 0, 4), 1024); /* no swap table: slow path, free head */
	CHECK_EQ(d->st.alloc_fast[4], 0);
	CHECK_LIST(d, SL_LIST_FREE, 3, 4, 5, 6, 7, 1);
	CHECK_INVARIANTS(d);
	sl_device_destroy(d);
}

TEST(v618_partial_free_of_frag_cluster_moves_to_nonfull_tail)
{
	sl_device *d = t_device(POL, 4096);
	alloc_n(d, 0, 4, 2);                /* cluster 1: 512, 528 */
	alloc_n(d, 1, 4, 1);                /* cpu 1: cluster 2 */
	CHECK_LIST(d, FR(4), 1, 2);
	sl_swap_put(d, 0, 1024 + 4, 1);     /* cluster 2 first */
	sl_swap_put(d, 0, 528, 16);         /* then cluster 1 */
	CHECK_LIST(d, NF(4), 2, 1);
	CHECK_LIST_EMPTY(d, FR(4));
	/* cpu 0's cursor (544) is still good: the fast path ignores the lists */
	CHECK_EQ(sl_swap_alloc(d, 0, 4), 544);
	CHECK_LIST(d, NF(4), 2);
	CHECK_LIST(d, FR(4), 1);
	CHECK_INVARIANTS(d);
	sl_device_destroy(d);
}

TEST(v618_pmd_order_only_from_free_clusters)
{
	sl_device *d = t_device(POL, 1536); /* clusters 0..2 */
	CHECK_EQ(sl_swap_alloc(d, 0, 9), 512);
	CHECK_LIST(d, SL_LIST_FULL, 1);
	sl_swap_put(d, 0, 512 + 256, 256);  /* half of it freed: nonfull[9] */
	CHECK_LIST(d, NF(9), 1);
	CHECK_EQ(sl_swap_alloc(d, 0, 9), 1024);
	CHECK_EQ(sl_swap_alloc(d, 0, 9), 0); /* no free cluster left */
	CHECK_LIST(d, NF(9), 1);
	CHECK_INVARIANTS(d);
	sl_device_destroy(d);
}

TEST(v618_full_device_fails_without_touching_lists)
{
	sl_device *d = t_device(POL, 1024);
	alloc_n(d, 0, 0, 1023);
	CHECK_EQ(d->inuse_pages, d->pages);
	uint64_t scans = d->st.full_reclaim_scans;
	CHECK_EQ(sl_swap_alloc(d, 1, 0), 0);
	CHECK_EQ(d->st.full_reclaim_scans, scans);
	CHECK_LIST(d, SL_LIST_FULL, 0, 1);
	CHECK_INVARIANTS(d);
	sl_device_destroy(d);
}

TEST(v618_swap_file_takes_order0_only)
{
	char msg[128];
	sl_device *d = sl_device_create(4096, SL_DEV_SOLIDSTATE, 1, sl_policy_find(POL), 1, msg,
					sizeof(msg));
	CHECK(d != NULL);
	CHECK_EQ(sl_swap_alloc(d, 0, 4), 0);
	CHECK_EQ(sl_swap_alloc(d, 0, 0), 1);
	sl_device_destroy(d);
}

static sl_device *kind_device(unsigned flags, uint64_t slots)
{
	char msg[128];
	sl_device *d = sl_device_create(slots, flags, 2, sl_policy_find(POL), 1, msg, sizeof(msg));
	CHECK(d != NULL);
	return d;
}

TEST(v618_rotational_device_shares_one_global_cluster_per_order)
{
	sl_device *d = kind_device(SL_DEV_BLKDEV, 4096);
	CHECK_EQ(sl_swap_alloc(d, 0, 4), 512);
	CHECK_EQ(sl_swap_alloc(d, 1, 4), 528);   /* cpu 1 continues cpu 0's cluster */
	CHECK_EQ(d->st.alloc_fast[4], 0);         /* no per-CPU fast path */
	CHECK_EQ(CUR(d, 0, 4), 0);
	CHECK_EQ(d->cursor[2 * SL_CURSOR_STRIDE + 4], 544); /* the global row */
	CHECK_INVARIANTS(d);
	sl_device_destroy(d);
}

TEST(v618_discard_device_frees_through_the_discard_list)
{
	sl_device *d = kind_device(SL_DEV_BLKDEV | SL_DEV_SOLIDSTATE | SL_DEV_DISCARD, 4096);
	CHECK_EQ(sl_swap_alloc(d, 0, 4), 512);
	sl_swap_put(d, 0, 512, 16);
	CHECK_LIST(d, SL_LIST_DISCARD, 1);
	CHECK_EQ(d->ci[1].flags, SL_CF_DISCARD);
	CHECK_LIST(d, SL_LIST_FREE, 2, 3, 4, 5, 6, 7);
	d->pol->tick(d);                          /* the worker */
	CHECK_LIST_EMPTY(d, SL_LIST_DISCARD);
	CHECK_LIST(d, SL_LIST_FREE, 2, 3, 4, 5, 6, 7, 1);
	CHECK_EQ(d->st.discarded_clusters, 1);
	CHECK_INVARIANTS(d);
	sl_device_destroy(d);
}

TEST(v618_discard_device_prefers_free_over_nonfull)
{
	sl_device *d = kind_device(SL_DEV_BLKDEV | SL_DEV_SOLIDSTATE | SL_DEV_DISCARD, 4096);
	for (int i = 0; i < 32; i++)
		CHECK(sl_swap_alloc(d, 0, 4) != 0);   /* cluster 1 full */
	sl_swap_put(d, 0, 512, 16);
	CHECK_LIST(d, NF(4), 1);
	CHECK_EQ(sl_swap_alloc(d, 1, 4), 1024);   /* zram would take 512 */
	CHECK_INVARIANTS(d);
	sl_device_destroy(d);
}

TEST(v618_discard_device_order0_failure_discards_synchronously)
{
	sl_device *d = kind_device(SL_DEV_BLKDEV | SL_DEV_SOLIDSTATE | SL_DEV_DISCARD, 1024);
	for (int i = 0; i < 1023; i++)
		CHECK(sl_swap_alloc(d, 0, 0) != 0);
	sl_swap_put(d, 0, 512, 512);              /* cluster 1 empties: discard list */
	CHECK_LIST(d, SL_LIST_DISCARD, 1);
	CHECK_EQ(sl_swap_alloc(d, 1, 0), 512);    /* 6.18.4+: discard, then retry */
	CHECK_EQ(d->st.discarded_clusters, 1);
	CHECK_INVARIANTS(d);
	sl_device_destroy(d);
}

/* alloc_swap_scan_cluster() stops at si->max: on a device whose last
 * cluster is partly padding, allocating its last real slot leaves no cursor
 * (0), never one at si->max. 1027 slots: clusters 0..2, cluster 2 holds
 * slots 1024..1026 and 509 padding slots. */
TEST(v618_cursor_never_points_at_or_past_the_device_end)
{
	sl_device *d = t_device(POL, 1027);

	alloc_n(d, 0, 0, 511); /* cluster 0: slots 1..511 */
	CHECK_EQ(sl_swap_alloc(d, 0, 0), 1024); /* nonfull[0]: cluster 2 */
	CHECK_EQ(sl_swap_alloc(d, 0, 0), 1025);
	sl_swap_put(d, 0, 1024, 1);
	CHECK_EQ(CUR(d, 0, 0), 1026);
	CHECK_EQ(sl_swap_alloc(d, 0, 0), 1026); /* the last slot, one still free */
	CHECK_EQ(d->ci[2].count, 511);
	CHECK_EQ(CUR(d, 0, 0), 0);
	CHECK_LIST(d, FR(0), 2);
	CHECK_EQ(sl_swap_alloc(d, 0, 0), 512); /* nonfull[0] empty: a free cluster */
	CHECK_INVARIANTS(d);
	sl_device_destroy(d);
}
