/*
 * test_proposals.c - the distinctive list steps of the proposals over
 * linux-6.18 (core/policies/x_reuse.c, x_retag.c, x_reserve.c), each next
 * to what linux-6.18 does in the same state. Devices: 6 MiB = clusters
 * 0..2, 14 MiB = 0..6, 24 MiB = 0..11.
 */
#include "t.h"

#define NF(o) SL_LIST_NONFULL(o)
#define FR(o) SL_LIST_FRAG(o)

/* Clusters 0..2: cluster 0 full of order 0, clusters 1 and 2 PMD (order
 * 9), then 32 slots freed in cluster 2 at 1072: nonfull[9] = [2], no free
 * cluster, nothing of order 4 anywhere. */
static sl_device *pmd_holes(const char *policy)
{
	sl_device *d = t_device(policy, 1536);

	ALLOC_N(d, 0, 0, 511);
	CHECK_EQ(sl_swap_alloc(d, 0, 9), 512);
	CHECK_EQ(sl_swap_alloc(d, 0, 9), 1024);
	sl_swap_put(d, 0, 1072, 32);
	CHECK_LIST(d, NF(9), 2);
	CHECK_LIST_EMPTY(d, SL_LIST_FREE);
	return d;
}

TEST(proposals_v6_18_falls_back_beside_a_pmd_cluster_hole)
{
	sl_device *d = pmd_holes("linux-6.18");
	CHECK_EQ(sl_swap_alloc(d, 0, 4), 0);
	CHECK_LIST(d, NF(9), 2);
	sl_device_destroy(d);
}

TEST(proposals_reuse_takes_aligned_hole_cluster_keeps_order_and_list)
{
	sl_device *d = pmd_holes("proposal-reuse");
	CHECK_EQ(sl_swap_alloc(d, 0, 4), 1072);
	CHECK_EQ(d->ci[2].order, 9);
	CHECK_LIST(d, NF(9), 2);
	/* the fast path refuses a cluster of another order: slow path again */
	CHECK_EQ(sl_swap_alloc(d, 0, 4), 1088);
	CHECK_EQ(d->st.alloc_fast[4], 0);
	CHECK_LIST_EMPTY(d, NF(9));
	CHECK_LIST(d, SL_LIST_FULL, 0, 1, 2);
	CHECK_EQ(sl_swap_alloc(d, 0, 4), 0);
	CHECK_INVARIANTS(d);
	sl_device_destroy(d);
}

TEST(proposals_retag_adopts_cluster_then_fast_path)
{
	sl_device *d = pmd_holes("proposal-retag");
	CHECK_EQ(sl_swap_alloc(d, 0, 4), 1072);
	CHECK_EQ(d->ci[2].order, 4);
	CHECK_LIST_EMPTY(d, NF(9));
	CHECK_LIST(d, FR(4), 2);
	CHECK_EQ(*sli_cursor(d, 0, 4), 1088);
	CHECK_EQ(sl_swap_alloc(d, 0, 4), 1088);
	CHECK_EQ(d->st.alloc_fast[4], 1);
	/* the failed 6.18 ladder's full-cluster reclaim rotated 0 and 1 */
	CHECK_LIST(d, SL_LIST_FULL, 1, 0, 2);
	CHECK_INVARIANTS(d);
	sl_device_destroy(d);
}

TEST(proposals_retag_leaves_a_larger_orders_cluster_its_own)
{
	/* cluster 2 is 128K's (order 5) with one 128K hole: 64K takes half of
	 * it, as proposal-reuse would, and the cluster stays order 5 */
	sl_device *d = t_device("proposal-retag", 1536);
	ALLOC_N(d, 0, 0, 511);
	ALLOC_N(d, 0, 5, 32);
	sl_swap_put(d, 0, 1088, 32);
	CHECK_LIST(d, NF(5), 2);
	CHECK_EQ(sl_swap_alloc(d, 0, 4), 1088);
	CHECK_EQ(d->ci[2].order, 5);
	CHECK_LIST(d, NF(5), 2);
	CHECK_LIST_EMPTY(d, FR(4));
	CHECK_INVARIANTS(d);
	sl_device_destroy(d);
}

TEST(proposals_reuse_frag_lists_before_nonfull_lists)
{
	sl_device *d = t_device("proposal-reuse", 1536);
	CHECK_EQ(sl_swap_alloc(d, 0, 0), 1);   /* cluster 0 on frag[0] */
	CHECK_EQ(sl_swap_alloc(d, 0, 9), 512);
	CHECK_EQ(sl_swap_alloc(d, 0, 9), 1024);
	sl_swap_put(d, 0, 1024, 16);
	CHECK_LIST(d, FR(0), 0);
	CHECK_LIST(d, NF(9), 2);
	/* frag[0] first: cluster 0's first aligned 16 free slots */
	CHECK_EQ(sl_swap_alloc(d, 1, 4), 16);
	CHECK_EQ(d->ci[0].order, 0);
	CHECK_LIST(d, FR(0), 0);
	CHECK_LIST(d, NF(9), 2);
	CHECK_INVARIANTS(d);
	sl_device_destroy(d);
}

TEST(proposals_reuse_visits_smaller_orders_then_pmd_then_larger)
{
	/* cluster 0 order 0, 1 order 5 (128K), 2 and 3 PMD, all full; then a
	 * 128K hole in 1 (nonfull[5]) and a 64K hole in 2 (nonfull[9]) */
	sl_device *d = t_device("proposal-reuse", 2048);
	ALLOC_N(d, 0, 0, 511);
	ALLOC_N(d, 0, 5, 16);
	ALLOC_N(d, 0, 9, 2);
	sl_swap_put(d, 0, 576, 32);
	sl_swap_put(d, 0, 1056, 16);
	CHECK_LIST(d, NF(5), 1);
	CHECK_LIST(d, NF(9), 2);
	CHECK_EQ(sl_swap_alloc(d, 1, 4), 1056); /* PMD before the larger order */
	CHECK_EQ(sl_swap_alloc(d, 1, 4), 576);  /* then order 5 */
	/* a hole in the order-0 cluster comes before both */
	sl_swap_put(d, 0, 1056, 16);
	sl_swap_put(d, 0, 32, 16);
	CHECK_LIST(d, NF(0), 0);
	CHECK_EQ(sl_swap_alloc(d, 1, 4), 32);
	CHECK_EQ(d->ci[0].order, 0);
	CHECK_INVARIANTS(d);
	sl_device_destroy(d);
}

/* Cluster 0 full of order 0, clusters 1..11 PMD; one slot freed in each
 * of 1..9 (no 16-slot hole), 16 aligned slots in 10: nonfull[9] = [1..10] */
static sl_device *hole_behind_nine(const char *policy)
{
	sl_device *d = t_device(policy, 6144);

	ALLOC_N(d, 0, 0, 511);
	ALLOC_N(d, 0, 9, 11);
	for (uint32_t c = 1; c <= 9; c++)
		sl_swap_put(d, 0, c * 512 + 7, 1);
	sl_swap_put(d, 0, 10 * 512 + 32, 16);
	CHECK_LIST(d, NF(9), 1, 2, 3, 4, 5, 6, 7, 8, 9, 10);
	return d;
}

TEST(proposals_reuse_scan_bounded_and_rotates)
{
	sl_device *d = hole_behind_nine("proposal-reuse");
	/* 8 clusters scanned (XP_BUDGET), none with room: each to its tail */
	CHECK_EQ(sl_swap_alloc(d, 0, 4), 0);
	CHECK_LIST(d, NF(9), 9, 10, 1, 2, 3, 4, 5, 6, 7, 8);
	/* the next call starts where this one stopped */
	CHECK_EQ(sl_swap_alloc(d, 0, 4), 10 * 512 + 32);
	CHECK_LIST(d, NF(9), 1, 2, 3, 4, 5, 6, 7, 8, 9);
	CHECK_EQ(d->ci[10].flags, SL_CF_FULL);
	CHECK_INVARIANTS(d);
	sl_device_destroy(d);
}

TEST(proposals_reuse_order0_and_pmd_unchanged)
{
	/* the rung is for orders 1..8 only: PMD and order 0 fail as 6.18 */
	sl_device *d = pmd_holes("proposal-reuse");
	CHECK_EQ(sl_swap_alloc(d, 0, 9), 0);
	sl_device_destroy(d);
}

/* Clusters 0..6 (reserve: 1): cluster 0 full of order 0, order 4 in
 * clusters 1..4 (full) and 5 (8 folios, on frag[4]); free = [6]. */
static sl_device *one_free_left(const char *policy, int order4)
{
	sl_device *d = t_device(policy, 3584);

	ALLOC_N(d, 0, 0, 511);
	ALLOC_N(d, 0, 4, order4);
	CHECK_LIST(d, SL_LIST_FREE, 6);
	return d;
}

TEST(proposals_v6_18_order0_takes_last_free_cluster)
{
	sl_device *d = one_free_left("linux-6.18", 136);
	CHECK_EQ(sl_swap_alloc(d, 1, 0), 3072);
	CHECK_LIST_EMPTY(d, SL_LIST_FREE);
	CHECK_EQ(d->ci[6].order, 0);
	sl_device_destroy(d);
}

TEST(proposals_reserve_order0_steals_before_reserved_free_cluster)
{
	sl_device *d = one_free_left("proposal-reserve", 136);
	CHECK_LIST(d, FR(4), 5);
	CHECK_EQ(sl_swap_alloc(d, 1, 0), 2688); /* steal from frag[4] */
	CHECK_EQ(d->st.alloc_steal, 1);
	CHECK_LIST(d, SL_LIST_FREE, 6);
	/* the reserved cluster is there for order 4 */
	CHECK_EQ(sl_swap_alloc(d, 2, 4), 3072);
	CHECK_EQ(d->ci[6].order, 4);
	CHECK_INVARIANTS(d);
	sl_device_destroy(d);
}

TEST(proposals_reserve_last_resort_no_order0_failure)
{
	sl_device *d = one_free_left("proposal-reserve", 160); /* 1..5 full */
	CHECK_LIST(d, SL_LIST_FULL, 0, 1, 2, 3, 4, 5);
	CHECK_EQ(sl_swap_alloc(d, 1, 0), 3072);
	CHECK_LIST_EMPTY(d, SL_LIST_FREE);
	CHECK_EQ(d->st.alloc_fail[0], 0);
	CHECK_INVARIANTS(d);
	sl_device_destroy(d);
}

TEST(proposals_reserve_above_reserve_is_v6_18)
{
	sl_device *d = t_device("proposal-reserve", 3584); /* free = [1..6] */
	ALLOC_N(d, 0, 0, 511);
	CHECK_EQ(sl_swap_alloc(d, 0, 0), 512);
	CHECK_LIST(d, SL_LIST_FREE, 2, 3, 4, 5, 6);
	CHECK_INVARIANTS(d);
	sl_device_destroy(d);
}

/* proposal-holes. Clusters 0..2: cluster 0 full of order 0, clusters 1
 * and 2 full of order 4 (64K); then cluster 1 gets a whole aligned 16-slot
 * hole at 544 and a broken block (two slots freed at 612, 613 of 608..623):
 * nonfull[4] = [1], no free cluster, nothing of order 0 with room. */
static sl_device *order4_holes(const char *policy)
{
	sl_device *d = t_device(policy, 1536);

	ALLOC_N(d, 0, 0, 511);
	ALLOC_N(d, 0, 4, 64);
	sl_swap_put(d, 0, 544, 16);
	sl_swap_put(d, 0, 612, 2);
	CHECK_LIST(d, NF(4), 1);
	CHECK_LIST_EMPTY(d, SL_LIST_FREE);
	return d;
}

TEST(proposals_v6_18_order0_steal_takes_first_free_slot)
{
	sl_device *d = order4_holes("linux-6.18");
	CHECK_EQ(sl_swap_alloc(d, 1, 0), 544); /* breaks the 64K hole */
	CHECK_EQ(sl_swap_alloc(d, 1, 0), 545); /* the cursor goes on in it */
	sl_device_destroy(d);
}

TEST(proposals_holes_order0_fills_a_broken_block_first)
{
	sl_device *d = order4_holes("proposal-holes");
	uint64_t fast = d->st.alloc_fast[0];
	CHECK_EQ(sl_swap_alloc(d, 1, 0), 612); /* the steal */
	CHECK_EQ(d->st.alloc_steal, 1);
	CHECK_EQ(d->ci[1].order, 4);
	CHECK_EQ(sl_swap_alloc(d, 1, 0), 613); /* the fast path, same rule */
	CHECK_EQ(d->st.alloc_fast[0], fast + 1);
	/* the 64K hole is still whole: a 64K folio gets it */
	CHECK_EQ(sl_swap_alloc(d, 2, 4), 544);
	CHECK_INVARIANTS(d);
	sl_device_destroy(d);
}

TEST(proposals_holes_order0_takes_a_whole_hole_rather_than_fail)
{
	sl_device *d = order4_holes("proposal-holes");
	uint64_t fast = d->st.alloc_fast[0];
	sl_swap_put(d, 0, 608, 4);   /* 608..613 free: block 608 broken */
	CHECK_EQ(sl_swap_alloc(d, 1, 0), 608);
	ALLOC_N(d, 1, 0, 5);         /* 609..613 through the fast path */
	CHECK_EQ(d->st.alloc_fast[0], fast + 5);
	/* no broken block has room: the first free slot, as 6.18 (the fast
	 * path finds nothing past its cursor, the steal enters at 544) */
	CHECK_EQ(sl_swap_alloc(d, 1, 0), 544);
	CHECK_EQ(d->st.alloc_steal, 2);
	/* 544's block is broken now: the cursor goes on in it */
	CHECK_EQ(sl_swap_alloc(d, 1, 0), 545);
	CHECK_EQ(d->st.alloc_fail[0], 0);
	CHECK_INVARIANTS(d);
	sl_device_destroy(d);
}

TEST(proposals_holes_rung_scans_past_eight_clusters)
{
	/* nine PMD clusters without a 16-slot hole ahead of the one with it:
	 * proposal-reuse's bound of 8 stops before it */
	sl_device *d = hole_behind_nine("proposal-holes");
	CHECK_EQ(sl_swap_alloc(d, 0, 4), 10 * 512 + 32);
	/* retag: the PMD cluster is adopted, the scanned ones rotated */
	CHECK_EQ(d->ci[10].order, 4);
	CHECK_LIST(d, NF(9), 1, 2, 3, 4, 5, 6, 7, 8, 9);
	CHECK_INVARIANTS(d);
	sl_device_destroy(d);
}
