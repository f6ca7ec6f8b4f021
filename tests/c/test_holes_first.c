/*
 * test_holes_first.c - proposal-holes-first (core/policies/x_holes_first.c):
 * a 16K-64K folio with no room in nonfull[order] takes frag[order], then
 * another order's aligned hole, before it splits a free cluster; a hole in
 * an order-0 cluster is taken without adopting the cluster; larger orders
 * take the free cluster first, as proposal-holes. Each case next to
 * proposal-holes in the same state. Devices: 3.5 MiB = clusters 0..6,
 * 2 MiB = 0..3.
 */
#include "t.h"

#define NF(o) SL_LIST_NONFULL(o)
#define FR(o) SL_LIST_FRAG(o)

/* Cluster 0 full of order 0; order 4 fills clusters 1..4 and 8 folios of 5,
 * which is on frag[4] (this CPU's cursor left it there); free = [6]. */
static sl_device *frag4_and_one_free(const char *policy)
{
	sl_device *d = t_device(policy, 3584);

	ALLOC_N(d, 0, 0, 511);
	ALLOC_N(d, 0, 4, 136);
	CHECK_LIST(d, FR(4), 5);
	CHECK_LIST_EMPTY(d, NF(4));
	CHECK_LIST(d, SL_LIST_FREE, 6);
	return d;
}

TEST(holes_first_holes_splits_the_free_cluster_before_frag)
{
	/* another CPU (no cursor): nonfull[4] is empty, the free list next */
	sl_device *d = frag4_and_one_free("proposal-holes");
	CHECK_EQ(sl_swap_alloc(d, 1, 4), 3072);
	CHECK_LIST_EMPTY(d, SL_LIST_FREE);
	sl_device_destroy(d);
}

TEST(holes_first_order4_takes_frag_before_the_free_cluster)
{
	sl_device *d = frag4_and_one_free("proposal-holes-first");
	CHECK_EQ(sl_swap_alloc(d, 1, 4), 2688);
	CHECK_LIST(d, SL_LIST_FREE, 6);
	CHECK_LIST(d, FR(4), 5);
	CHECK_EQ(*sli_cursor(d, 1, 4), 2704);
	CHECK_INVARIANTS(d);
	sl_device_destroy(d);
}

/* Clusters 0..3: cluster 0 full of order 0, cluster 1 PMD with `hole`
 * aligned slots freed at 544: nonfull[9] = [1], free = [2, 3]. */
static sl_device *pmd_hole_and_free(const char *policy, uint32_t hole)
{
	sl_device *d = t_device(policy, 2048);

	ALLOC_N(d, 0, 0, 511);
	CHECK_EQ(sl_swap_alloc(d, 0, 9), 512);
	sl_swap_put(d, 0, 544, hole);
	CHECK_LIST(d, NF(9), 1);
	CHECK_LIST(d, SL_LIST_FREE, 2, 3);
	return d;
}

TEST(holes_first_holes_splits_a_free_cluster_beside_a_pmd_hole)
{
	sl_device *d = pmd_hole_and_free("proposal-holes", 16);
	CHECK_EQ(sl_swap_alloc(d, 0, 4), 1024);
	CHECK_LIST(d, SL_LIST_FREE, 3);
	CHECK_EQ(d->ci[1].order, 9);
	sl_device_destroy(d);
}

TEST(holes_first_order4_adopts_the_pmd_hole_and_keeps_the_free_clusters)
{
	sl_device *d = pmd_hole_and_free("proposal-holes-first", 16);
	CHECK_EQ(sl_swap_alloc(d, 0, 4), 544);
	CHECK_EQ(d->ci[1].order, 4);
	CHECK_LIST_EMPTY(d, NF(9));
	CHECK_LIST(d, SL_LIST_FULL, 0, 1); /* the hole was the cluster's room */
	CHECK_LIST(d, SL_LIST_FREE, 2, 3);
	/* the next 64K folio has no hole left: it splits a free cluster */
	CHECK_EQ(sl_swap_alloc(d, 0, 4), 1024);
	CHECK_LIST(d, SL_LIST_FREE, 3);
	CHECK_EQ(d->st.alloc_fail[4], 0);
	CHECK_INVARIANTS(d);
	sl_device_destroy(d);
}

/* A folio of `order` beside a PMD cluster with `hole` free slots at 544
 * splits the first free cluster, as in 6.18; the PMD cluster keeps its
 * order and list. */
static void splits_the_free_cluster(uint32_t hole, int order)
{
	sl_device *d = pmd_hole_and_free("proposal-holes-first", hole);
	CHECK_EQ(sl_swap_alloc(d, 0, order), 1024);
	CHECK_EQ(d->ci[1].order, 9);
	CHECK_LIST(d, NF(9), 1);
	CHECK_LIST(d, SL_LIST_FREE, 3);
	CHECK_INVARIANTS(d);
	sl_device_destroy(d);
}

TEST(holes_first_order4_splits_a_free_cluster_when_no_hole_fits)
{
	/* an 8-slot hole is no room for 64K: the PMD cluster goes back to
	 * nonfull[9] */
	splits_the_free_cluster(8, 4);
}

TEST(holes_first_order5_still_takes_a_free_cluster_first)
{
	/* 128K is above the limit: proposal-holes' ladder, free before holes,
	 * though the 32-slot hole would fit */
	splits_the_free_cluster(32, 5);
}

/* Clusters 0..3: cluster 0 of order 0, full, then a 16-slot aligned hole
 * freed at 32 by a CPU whose order-0 cursor is busy (no hand-off;
 * nonfull[0] = [0]); free = [1, 2, 3]. */
static sl_device *order0_hole(const char *policy)
{
	sl_device *d = t_device(policy, 2048);

	ALLOC_N(d, 0, 0, 511);
	T_BUSY_CURSOR(d, 3, 0);
	sl_swap_put(d, 3, 32, 16);
	CHECK_LIST(d, NF(0), 0);
	CHECK_LIST(d, SL_LIST_FREE, 1, 2, 3);
	return d;
}

TEST(holes_first_holes_splits_a_free_cluster_beside_an_order0_hole)
{
	sl_device *d = order0_hole("proposal-holes");
	CHECK_EQ(sl_swap_alloc(d, 1, 4), 512);
	CHECK_LIST(d, SL_LIST_FREE, 2, 3);
	sl_device_destroy(d);
}

TEST(holes_first_order4_takes_an_order0_hole_and_leaves_the_cluster_order0s)
{
	/* the hole before the free list, as with a PMD cluster, but the
	 * cluster keeps its order (the first revision adopted it): it goes
	 * back to order 0's lists, here full, and no cursor of order 4 is
	 * left in it */
	sl_device *d = order0_hole("proposal-holes-first");
	CHECK_EQ(sl_swap_alloc(d, 1, 4), 32);
	CHECK_EQ(d->ci[0].order, 0);
	CHECK_LIST_EMPTY(d, NF(0));
	CHECK_LIST(d, SL_LIST_FULL, 0);
	CHECK_LIST_EMPTY(d, FR(4));
	CHECK_EQ(*sli_cursor(d, 1, 4), 0);
	CHECK_LIST(d, SL_LIST_FREE, 1, 2, 3);
	/* freed again (by a CPU with a busy cursor), the hole is order 0's
	 * room: nonfull[0] */
	sl_swap_put(d, 3, 32, 16);
	CHECK_LIST(d, NF(0), 0);
	CHECK_INVARIANTS(d);
	sl_device_destroy(d);
}

TEST(holes_first_order2_takes_an_order0_hole_and_leaves_the_cluster_order0s)
{
	sl_device *d = order0_hole("proposal-holes-first");
	CHECK_EQ(sl_swap_alloc(d, 1, 2), 32);
	CHECK_EQ(d->ci[0].order, 0);
	CHECK_LIST(d, NF(0), 0); /* 12 slots left: back on nonfull[0] */
	CHECK_LIST(d, SL_LIST_FREE, 1, 2, 3);
	CHECK_INVARIANTS(d);
	sl_device_destroy(d);
}

/* Revision 3 (SL_POL_KEEP_FULL0): 256 MiB = clusters 0..127; cluster 0
 * full of order 0 (the header and 511 slots). */
static sl_device *order0_full_cluster(const char *policy, uint64_t slots)
{
	sl_device *d = t_device(policy, slots);

	ALLOC_N(d, 0, 0, 511);
	CHECK_LIST(d, SL_LIST_FULL, 0);
	return d;
}

TEST(holes_first_keeps_a_nearly_full_order0_cluster_on_the_full_list)
{
	sl_device *d = order0_full_cluster("proposal-holes-first", 65536);

	/* 31 frees (by a CPU with a busy cursor: no hand-off) leave 481 in
	 * use: the cluster stays, no list move */
	T_BUSY_CURSOR(d, 3, 0);
	for (uint64_t s = 100; s < 131; s++)
		sl_swap_put(d, 3, s, 1);
	CHECK_LIST(d, SL_LIST_FULL, 0);
	CHECK_LIST_EMPTY(d, NF(0));
	CHECK_EQ(d->ci[0].count, 481);
	CHECK_EQ(atomic_load(&d->kept0), 1);
	CHECK_INVARIANTS(d);
	/* the 32nd (SL_KEEP0_SLOTS free) moves it as 6.18 does */
	sl_swap_put(d, 3, 131, 1);
	CHECK_LIST_EMPTY(d, SL_LIST_FULL);
	CHECK_LIST(d, NF(0), 0);
	CHECK_INVARIANTS(d);
	sl_device_destroy(d);
}

TEST(holes_first_keeps_nothing_where_6_18_or_swap_is_short)
{
	/* linux-6.18: the first free moves the cluster to nonfull[0], even
	 * with the freeing CPU's cursor idle (no hand-off either) */
	sl_device *d = order0_full_cluster("linux-6.18", 65536);
	sl_swap_put(d, 0, 100, 1);
	CHECK_LIST(d, NF(0), 0);
	CHECK_EQ(atomic_load(&d->kept0), 0);
	CHECK_EQ(*sli_cursor(d, 0, 0), 0);
	sl_device_destroy(d);
	/* 64 MiB: never 64 MiB free (the header); a CPU with a busy cursor
	 * frees */
	d = order0_full_cluster("proposal-holes-first", 16384);
	T_BUSY_CURSOR(d, 3, 0);
	sl_swap_put(d, 3, 100, 1);
	CHECK_LIST(d, NF(0), 0);
	sl_device_destroy(d);
	/* 256 MiB over half in use: 65 PMD clusters */
	d = order0_full_cluster("proposal-holes-first", 65536);
	ALLOC_N(d, 0, 9, 65);
	T_BUSY_CURSOR(d, 3, 0);
	sl_swap_put(d, 3, 100, 1);
	CHECK_LIST(d, NF(0), 0);
	CHECK_EQ(atomic_load(&d->kept0), 0);
	CHECK_INVARIANTS(d);
	sl_device_destroy(d);
}

TEST(holes_first_order0_takes_kept_slots_back_before_it_steals)
{
	sl_device *d = order0_full_cluster("proposal-holes-first", 65536);

	T_BUSY_CURSOR(d, 3, 0);
	T_BUSY_CURSOR(d, 3, 4);
	sl_swap_put(d, 3, 100, 1); /* kept */
	/* 64K folios fill clusters 1..127, then all but the first of each
	 * cluster go: nonfull[4] holds them all, the free list is empty and
	 * swap is far from full */
	ALLOC_N(d, 0, 4, 127 * 32);
	CHECK_LIST_EMPTY(d, SL_LIST_FREE);
	for (uint64_t c = 1; c < 128; c++)
		for (uint64_t j = 1; j < 32; j++)
			sl_swap_put(d, 3, c * 512 + j * 16, 16);
	CHECK_EQ(d->list_len[NF(4)], 127);
	CHECK_EQ(atomic_load(&d->kept0), 1);
	/* CPU 1, no cursor: nonfull[0], free, frag[0] are empty; the kept
	 * slot comes back before the steal would take an order-4 cluster's */
	CHECK_EQ(sl_swap_alloc(d, 1, 0), 100);
	CHECK_LIST(d, SL_LIST_FULL, 0);
	CHECK_EQ(d->list_len[NF(4)], 127);
	CHECK_EQ(atomic_load(&d->kept0), 1); /* there may have been more */
	/* none left: the walk says so, and order 0 steals */
	uint64_t off = sl_swap_alloc(d, 1, 0);
	CHECK(off >= 512);
	CHECK_EQ(atomic_load(&d->kept0), 0);
	CHECK_INVARIANTS(d);
	sl_device_destroy(d);
}

/* Revision 4 (lrm_handoff()): a free that leaves a full cluster with a hole
 * gives the freed range to the freeing CPU's cursor of the cluster's order
 * when that cursor is idle. 64 MiB = clusters 0..31, where revision 3's
 * keep is off (never 64 MiB free). */
TEST(holes_first_hands_a_freed_slot_to_its_cpus_idle_cursor)
{
	sl_device *d = order0_full_cluster("proposal-holes-first", 16384);

	CHECK_EQ(*sli_cursor(d, 0, 0), 0); /* cluster 0 filled: idle */
	sl_swap_put(d, 0, 100, 1);
	/* no list move: the cluster stays on the full list with its hole */
	CHECK_LIST(d, SL_LIST_FULL, 0);
	CHECK_LIST_EMPTY(d, NF(0));
	CHECK_EQ(d->ci[0].count, 511); /* the header counts */
	CHECK_EQ(*sli_cursor(d, 0, 0), 100);
	CHECK_EQ(d->st.handoffs, 1);
	CHECK_EQ(atomic_load(&d->kept0), 1); /* the walk would find it */
	CHECK_INVARIANTS(d);
	/* the CPU's next allocation takes it on its fast path and leaves the
	 * cluster where it is */
	uint64_t fast = d->st.alloc_fast[0];
	CHECK_EQ(sl_swap_alloc(d, 0, 0), 100);
	CHECK_EQ(d->st.alloc_fast[0], fast + 1);
	CHECK_LIST(d, SL_LIST_FULL, 0);
	CHECK_EQ(d->ci[0].count, 512);
	CHECK_EQ(*sli_cursor(d, 0, 0), 0);
	CHECK_INVARIANTS(d);
	/* through the deterministic batch too: one call, then the full path */
	sl_swap_put(d, 0, 7, 1);
	uint64_t out[3];
	sl_swap_alloc_batch0(d, 0, 3, out);
	CHECK_EQ(out[0], 7);
	CHECK(out[1] >= 512 && out[2] == out[1] + 1); /* a free cluster */
	CHECK_LIST(d, SL_LIST_FULL, 0);
	CHECK_INVARIANTS(d);
	sl_device_destroy(d);
}

TEST(holes_first_hands_nothing_to_a_busy_cursor_an_unaligned_free_or_6_18)
{
	/* a busy cursor: the cluster goes to nonfull[0] as in 6.18 */
	sl_device *d = order0_full_cluster("proposal-holes-first", 16384);
	T_BUSY_CURSOR(d, 0, 0);
	sl_swap_put(d, 0, 100, 1);
	CHECK_LIST(d, NF(0), 0);
	CHECK_EQ(d->st.handoffs, 0);
	sl_device_destroy(d);
	/* order 4: one slot of a 64K folio is no 64K range */
	d = order0_full_cluster("proposal-holes-first", 16384);
	ALLOC_N(d, 0, 4, 32);
	CHECK_EQ(d->ci[1].order, 4);
	CHECK_LIST(d, SL_LIST_FULL, 0, 1);
	sl_swap_put(d, 0, 512 + 3, 1);
	CHECK_LIST(d, NF(4), 1);
	CHECK_EQ(*sli_cursor(d, 0, 4), 0);
	sl_device_destroy(d);
	/* linux-6.18 never hands off */
	d = order0_full_cluster("linux-6.18", 16384);
	sl_swap_put(d, 0, 100, 1);
	CHECK_LIST(d, NF(0), 0);
	CHECK_EQ(*sli_cursor(d, 0, 0), 0);
	CHECK_EQ(d->st.handoffs, 0);
	sl_device_destroy(d);
}

TEST(holes_first_hands_a_64k_range_to_its_cpus_order4_cursor_and_i5_knows_why)
{
	sl_device *d = order0_full_cluster("proposal-holes-first", 16384);
	char msg[256];

	ALLOC_N(d, 0, 4, 32); /* cluster 1, full of 64K folios */
	CHECK_EQ(*sli_cursor(d, 0, 4), 0);
	sl_swap_put(d, 0, 512 + 48, 16);
	CHECK_LIST(d, SL_LIST_FULL, 0, 1);
	CHECK_EQ(*sli_cursor(d, 0, 4), 512 + 48);
	CHECK_INVARIANTS(d);
	/* only a cursor explains the hole: without it I5 fails */
	*sli_cursor(d, 0, 4) = 0;
	CHECK(sl_device_check(d, msg, sizeof(msg)) != 0);
	CHECK(!strcmp(msg, "I5: full cluster 1 has count 496"));
	*sli_cursor(d, 0, 4) = 512 + 48;
	/* another CPU does not see it: a free cluster */
	CHECK_EQ(sl_swap_alloc(d, 1, 4), 1024);
	/* the freeing CPU's next 64K takes it back */
	CHECK_EQ(sl_swap_alloc(d, 0, 4), 512 + 48);
	CHECK_EQ(d->ci[1].count, 512);
	CHECK_LIST(d, SL_LIST_FULL, 0, 1);
	CHECK_INVARIANTS(d);
	sl_device_destroy(d);
}

/* Revision 4's stranded hand-off: 4 MiB = clusters 0..3, cluster 0 full of
 * order 0, 1..3 full of 64K folios (CPU 0's), then CPU 0 frees the 64K
 * folio at 560: the range goes to CPU 0's idle order-4 cursor, the cluster
 * stays on the full list, and no cluster is free or partly used. */
static sl_device *stranded64k(const char *policy)
{
	sl_device *d = order0_full_cluster(policy, 2048);

	ALLOC_N(d, 0, 4, 96);
	CHECK_LIST_EMPTY(d, SL_LIST_FREE);
	CHECK_EQ(*sli_cursor(d, 0, 4), 0);
	sl_swap_put(d, 0, 512 + 48, 16);
	return d;
}

TEST(holes_first_another_cpu_takes_a_stranded_64k_range_before_it_falls_back)
{
	/* linux-6.18: the free put cluster 1 on nonfull[4], where CPU 1
	 * finds it */
	sl_device *d = stranded64k("linux-6.18");
	CHECK_LIST(d, NF(4), 1);
	CHECK_EQ(sl_swap_alloc(d, 1, 4), 560);
	sl_device_destroy(d);
	/* here no list holds it: CPU 1's ladder finds nothing, then CPU 0's
	 * cursor (before revision 4's fix, this fell back) */
	d = stranded64k("proposal-holes-first");
	CHECK_LIST(d, SL_LIST_FULL, 0, 1, 2, 3);
	CHECK_EQ(*sli_cursor(d, 0, 4), 560);
	CHECK_INVARIANTS(d);
	CHECK_EQ(sl_swap_alloc(d, 1, 4), 560);
	CHECK_EQ(d->st.handoff_takes, 1);
	CHECK_EQ(d->st.alloc_fail[4], 0);
	CHECK_EQ(d->ci[1].count, 512);
	/* full again, where it was (vm_swap_full()'s reclaim rotated the
	 * list's head to its tail) */
	CHECK_LIST(d, SL_LIST_FULL, 1, 2, 3, 0);
	CHECK_EQ(*sli_cursor(d, 1, 4), 0); /* the cluster is full */
	/* CPU 0's cursor still names 560: its fast path finds the cluster
	 * full and goes on to the ladder, which has nothing left */
	CHECK_EQ(*sli_cursor(d, 0, 4), 560);
	CHECK_INVARIANTS(d);
	CHECK_EQ(sl_swap_alloc(d, 0, 4), 0);
	CHECK_EQ(d->st.handoff_takes, 1);
	CHECK_INVARIANTS(d);
	sl_device_destroy(d);
}

TEST(holes_first_order0_and_smaller_folios_take_a_stranded_range_before_they_fail)
{
	/* order 0, any CPU (the freeing one too: its order-4 cursor is not
	 * order 0's): the steal finds no list, then the handed range; 6.18
	 * steals the same slot from nonfull[4] */
	for (int cpu = 0; cpu < 2; cpu++) {
		sl_device *d = stranded64k("linux-6.18");
		CHECK_EQ(sl_swap_alloc(d, cpu, 0), 560);
		sl_device_destroy(d);
		d = stranded64k("proposal-holes-first");
		CHECK_EQ(sl_swap_alloc(d, cpu, 0), 560);
		CHECK_EQ(d->st.handoff_takes, 1);
		CHECK_EQ(d->st.alloc_fail[0], 0);
		CHECK_EQ(d->ci[1].order, 4);
		CHECK_LIST(d, FR(4), 1); /* scanned: frag[4], as a steal leaves it */
		CHECK_INVARIANTS(d);
		sl_device_destroy(d);
	}
	/* 16K from the 64K range: the cluster keeps order 4 and, 12 slots
	 * free, goes to nonfull[4], where 6.18's free put it */
	sl_device *d = stranded64k("proposal-holes-first");
	CHECK_EQ(sl_swap_alloc(d, 1, 2), 560);
	CHECK_EQ(d->ci[1].order, 4);
	CHECK_LIST(d, NF(4), 1);
	CHECK_INVARIANTS(d);
	/* the rest through the lists now: the rung finds it */
	CHECK_EQ(sl_swap_alloc(d, 1, 2), 564);
	CHECK_EQ(d->st.handoff_takes, 1);
	CHECK_INVARIANTS(d);
	sl_device_destroy(d);
	/* proposal-compact runs over holes-first: the same */
	d = stranded64k("proposal-compact");
	CHECK_EQ(sl_swap_alloc(d, 1, 4), 560);
	CHECK_EQ(d->st.handoff_takes, 1);
	CHECK_INVARIANTS(d);
	sl_device_destroy(d);
}

/* Revision 5: cluster 0 holds 100 order-0 slots from CPU 0's cursor (1..100)
 * and its untouched end 101..511; with `larger`, CPU 2 first swapped out a
 * 128K folio (cluster 1). */
static sl_device *order0_untouched_end(uint32_t slots, int larger)
{
	sl_device *d = t_device("proposal-holes-first", slots);

	if (larger)
		CHECK_EQ(sl_swap_alloc(d, 2, 5), 512);
	ALLOC_N(d, 0, 0, 100);
	CHECK_EQ(d->ci[0].count, 101);
	return d;
}

TEST(holes_first_order4_spares_an_order0_clusters_untouched_end)
{
	/* six free clusters, and no order above 64K asked for: the 64K folio
	 * splits a free cluster instead of taking 112..127 of cluster 0 */
	sl_device *d = order0_untouched_end(3584, 0);
	CHECK_LIST(d, SL_LIST_FREE, 1, 2, 3, 4, 5, 6);
	CHECK_EQ(sl_swap_alloc(d, 1, 4), 512);
	CHECK_EQ(d->ci[0].count, 101);
	CHECK_LIST(d, SL_LIST_FREE, 2, 3, 4, 5, 6);
	CHECK_INVARIANTS(d);
	sl_device_destroy(d);
}

TEST(holes_first_order4_spares_the_end_without_a_larger_order_on_a_short_free_list)
{
	/* two free clusters, but no order above 64K: nobody needs them more */
	sl_device *d = order0_untouched_end(1536, 0);
	CHECK_LIST(d, SL_LIST_FREE, 1, 2);
	CHECK_EQ(sl_swap_alloc(d, 1, 4), 512);
	CHECK_EQ(d->ci[0].count, 101);
	sl_device_destroy(d);
}

TEST(holes_first_order4_takes_the_end_when_free_clusters_run_short_for_a_larger_order)
{
	/* 128K asked for, and two free clusters left (fewer than 4): the end
	 * is lent, the cluster stays order 0's */
	sl_device *d = order0_untouched_end(2048, 1);
	CHECK_LIST(d, SL_LIST_FREE, 2, 3);
	CHECK_EQ(sl_swap_alloc(d, 1, 4), 112);
	CHECK_EQ(d->ci[0].order, 0);
	CHECK_LIST(d, SL_LIST_FREE, 2, 3);
	CHECK_INVARIANTS(d);
	sl_device_destroy(d);
}

TEST(holes_first_order4_spares_the_end_while_four_clusters_are_free)
{
	/* 128K asked for but five free clusters: spared */
	sl_device *d = order0_untouched_end(3584, 1);
	CHECK_LIST(d, SL_LIST_FREE, 2, 3, 4, 5, 6);
	CHECK_EQ(sl_swap_alloc(d, 1, 4), 1024);
	CHECK_EQ(d->ci[0].count, 101);
	sl_device_destroy(d);
}

TEST(holes_first_order4_takes_a_larger_orders_end_when_free_clusters_run_short)
{
	/* 256K, the largest order asked for, in cluster 1 (cluster 0 holds
	 * the header); two free clusters left: a 64K folio takes the end of
	 * the 256K cluster, which keeps its order, and the free list keeps
	 * its two. (Lending only where an order larger than the cluster's is
	 * in use too, as first measured, spares that end and takes the end
	 * of the header's order-0 cluster, at 16.) */
	sl_device *d = t_device("proposal-holes-first", 2048);

	CHECK_EQ(sl_swap_alloc(d, 2, 6), 512);
	CHECK_EQ(d->ci[1].order, 6);
	CHECK_LIST(d, SL_LIST_FREE, 2, 3);
	CHECK_EQ(sl_swap_alloc(d, 1, 4), 576);
	CHECK_EQ(d->ci[1].order, 6);
	CHECK_LIST(d, SL_LIST_FREE, 2, 3);
	CHECK_INVARIANTS(d);
	sl_device_destroy(d);
}

/* Revision 6 (lrm_handoff(), holes_alloc_fast0()): an order-0 free also
 * hands its slot to the CPU's idle cursor in a cluster still on nonfull[0]
 * or frag[0], when at most SL_HANDOFF0_SLOTS (8) slots are then free
 * there, and the CPU's fast path takes a handed slot alone: the cluster
 * stays on its list and the cursor idle. Revision 4 left such a free to
 * partial_free_cluster() (frag[0] -> nonfull[0]) and the allocation to the
 * ladder (isolate nonfull[0]'s head, relocate it: two device-lock rounds),
 * which at high fill is most pairs of a many-CPU order-0 churn. 64 MiB
 * (revision 3's keep is off). */
TEST(holes_first_hands_a_slot_freed_in_a_nearly_full_listed_cluster_and_takes_it_alone)
{
	sl_device *d = order0_full_cluster("proposal-holes-first", 16384);

	/* CPU 3's cursor is busy: its free moves cluster 0 to nonfull[0] */
	T_BUSY_CURSOR(d, 3, 0);
	sl_swap_put(d, 3, 100, 1);
	CHECK_LIST(d, NF(0), 0);
	/* CPU 0's is idle (it filled cluster 0): its free leaves 2 slots free,
	 * the slot is handed over and the cluster stays on nonfull[0] */
	CHECK_EQ(*sli_cursor(d, 0, 0), 0);
	sl_swap_put(d, 0, 200, 1);
	CHECK_EQ(d->st.handoffs, 1);
	CHECK_EQ(*sli_cursor(d, 0, 0), 200);
	CHECK_EQ(*sli_handed0(d, 0), 200);
	CHECK_LIST(d, NF(0), 0);
	CHECK_EQ(atomic_load(&d->kept0), 0); /* on a list: any search finds it */
	CHECK_INVARIANTS(d);
	/* CPU 0 takes it back on its fast path (revision 4: the ladder, and
	 * nonfull[0]'s first free slot, 100); nothing moves, the cursor is
	 * idle again */
	uint64_t fast = d->st.alloc_fast[0];
	CHECK_EQ(sl_swap_alloc(d, 0, 0), 200);
	CHECK_EQ(d->st.alloc_fast[0], fast + 1);
	CHECK_LIST(d, NF(0), 0);
	CHECK_EQ(d->ci[0].count, 511);
	CHECK_EQ(*sli_cursor(d, 0, 0), 0);
	CHECK_EQ(*sli_handed0(d, 0), 0);
	CHECK_INVARIANTS(d);
	/* so the next free goes the same way */
	sl_swap_put(d, 0, 300, 1);
	CHECK_EQ(d->st.handoffs, 2);
	CHECK_EQ(sl_swap_alloc(d, 0, 0), 300);
	CHECK_LIST(d, NF(0), 0);
	/* a take that fills the cluster moves it to the full list */
	CHECK_EQ(sl_swap_alloc(d, 1, 0), 100);
	CHECK_LIST(d, SL_LIST_FULL, 0);
	sl_swap_put(d, 3, 100, 1);
	sl_swap_put(d, 3, 101, 1);
	CHECK_LIST(d, NF(0), 0);
	CHECK_EQ(sl_swap_alloc(d, 1, 0), 100); /* CPU 1 scans on: busy at 101 */
	CHECK_LIST(d, FR(0), 0);
	CHECK_EQ(*sli_cursor(d, 1, 0), 101);
	/* frag[0] too: CPU 0's free is handed over, no move to nonfull[0] */
	sl_swap_put(d, 0, 400, 1);
	CHECK_EQ(*sli_cursor(d, 0, 0), 400);
	CHECK_LIST(d, FR(0), 0);
	CHECK_EQ(sl_swap_alloc(d, 0, 0), 400);
	CHECK_LIST(d, FR(0), 0);
	CHECK_EQ(sl_swap_alloc(d, 1, 0), 101);
	CHECK_LIST(d, SL_LIST_FULL, 0);
	CHECK_INVARIANTS(d);
	sl_device_destroy(d);
}

TEST(holes_first_hands_over_no_slot_of_a_listed_cluster_with_more_free)
{
	/* 8 slots free already: CPU 0's free leaves 9 - revision 4's way */
	sl_device *d = order0_full_cluster("proposal-holes-first", 16384);
	T_BUSY_CURSOR(d, 3, 0);
	for (uint64_t s = 100; s < 108; s++)
		sl_swap_put(d, 3, s, 1);
	CHECK_LIST(d, NF(0), 0);
	sl_swap_put(d, 0, 200, 1);
	CHECK_EQ(d->st.handoffs, 0);
	CHECK_EQ(*sli_cursor(d, 0, 0), 0);
	CHECK_EQ(sl_swap_alloc(d, 0, 0), 100); /* nonfull[0]'s first */
	CHECK_LIST(d, FR(0), 0);
	sl_device_destroy(d);
	/* a handed slot another CPU took meanwhile: the cursor scans on as in
	 * revision 4 (here to the cluster's end, then the ladder) */
	d = order0_full_cluster("proposal-holes-first", 16384);
	T_BUSY_CURSOR(d, 3, 0);
	sl_swap_put(d, 3, 100, 1);
	sl_swap_put(d, 0, 200, 1);
	CHECK_EQ(*sli_cursor(d, 0, 0), 200);
	CHECK_EQ(sl_swap_alloc(d, 1, 0), 100);
	CHECK_EQ(sl_swap_alloc(d, 1, 0), 200);
	CHECK_LIST(d, SL_LIST_FULL, 0);
	uint64_t off = sl_swap_alloc(d, 0, 0);
	CHECK(off >= 512);
	CHECK_EQ(*sli_handed0(d, 0), 0);
	CHECK_INVARIANTS(d);
	sl_device_destroy(d);
	/* a 16K folio's range in an order-0 cluster: revision 4's hand-off,
	 * unmarked, and the fast path scans on through its slots */
	d = order0_full_cluster("proposal-holes-first", 16384);
	T_BUSY_CURSOR(d, 3, 0);
	for (uint64_t s = 100; s < 104; s++)
		sl_swap_put(d, 3, s, 1);
	CHECK_EQ(sl_swap_alloc(d, 1, 2), 100); /* the order-0 cluster lends it */
	CHECK_LIST(d, SL_LIST_FULL, 0);
	sl_swap_put(d, 0, 100, 4);
	CHECK_EQ(*sli_cursor(d, 0, 0), 100);
	CHECK_EQ(*sli_handed0(d, 0), 0);
	CHECK_EQ(sl_swap_alloc(d, 0, 0), 100);
	CHECK_EQ(*sli_cursor(d, 0, 0), 101);
	CHECK_LIST(d, FR(0), 0);
	CHECK_INVARIANTS(d);
	sl_device_destroy(d);
}

/* 256 MiB (revision 3 keeps): a handed slot in a full cluster that also
 * holds a kept slot is taken alone, and the cluster stays on the full
 * list with its kept slot; revision 4 moved it to frag[0] and left the
 * cursor in it. */
TEST(holes_first_takes_a_handed_slot_alone_beside_kept_slots)
{
	sl_device *d = order0_full_cluster("proposal-holes-first", 65536);

	T_BUSY_CURSOR(d, 3, 0);
	sl_swap_put(d, 3, 100, 1); /* kept */
	sl_swap_put(d, 0, 200, 1); /* handed */
	CHECK_EQ(*sli_cursor(d, 0, 0), 200);
	CHECK_LIST(d, SL_LIST_FULL, 0);
	CHECK_EQ(sl_swap_alloc(d, 0, 0), 200);
	CHECK_LIST(d, SL_LIST_FULL, 0);
	CHECK_EQ(d->ci[0].count, 511);
	CHECK_EQ(*sli_cursor(d, 0, 0), 0);
	CHECK_EQ(atomic_load(&d->kept0), 1);
	CHECK_INVARIANTS(d);
	sl_device_destroy(d);
}

TEST(holes_first_order2_spares_an_end_that_reaches_a_used_cluster)
{
	/* cluster 0: 104 order-0 slots and its untouched end; cluster 1 full
	 * (a PMD folio). A 16K folio's first hole in cluster 0 is 108, and
	 * 108..511 is an untouched end however cluster 1 is used: with five
	 * free clusters it is spared and the folio splits cluster 2. (Word
	 * reads from 108 would reach 512..515 and take the end for used.) */
	sl_device *d = t_device("proposal-holes-first", 3584);

	ALLOC_N(d, 0, 0, 104);
	CHECK_EQ(sl_swap_alloc(d, 1, 9), 512);
	CHECK_LIST(d, SL_LIST_FREE, 2, 3, 4, 5, 6);
	CHECK_EQ(sl_swap_alloc(d, 2, 2), 1024);
	CHECK_EQ(d->ci[0].count, 105);
	CHECK_INVARIANTS(d);
	sl_device_destroy(d);
}

/* The hand-off's devices (revision 4's fix, 2026-11-27): 1 MiB = clusters
 * 0 and 1 of `kind`, both full of CPU 0's order-0 slots, then CPU 0, its
 * order-0 cursor idle, frees slot 100 of the cluster at the full list's
 * tail (so that vm_swap_full()'s reclaim, which rotates the head, does not
 * reach it); returns the slot. */
static sl_device *two_full_order0(const char *policy, const char *kind, uint64_t *slot)
{
	char msg[256];
	int ok;
	unsigned flags = sl_device_kind(kind, &ok);
	sl_device *d = sl_device_create(2 * SL_CLUSTER, flags, 4, sl_policy_find(policy), 1, msg,
					sizeof(msg));

	CHECK(ok && d != NULL);
	ALLOC_N(d, 0, 0, 2 * SL_CLUSTER - 1);
	/* a discarding device fills cluster 1 first */
	CHECK(d->ci[0].flags == SL_CF_FULL && d->ci[1].flags == SL_CF_FULL);
	CHECK_EQ(*sli_cursor(d, 0, 0), 0);
	*slot = sli_cluster_offset(d->ci[sli_head(d, SL_LIST_FULL)].prev) + 100;
	sl_swap_put(d, 0, *slot, 1);
	return d;
}

/* On a discarding or a non-block device order 0 runs linux-6.18's fast path
 * and ladder (x_holes.c holes_order0()), which never look into a cluster
 * on the full list: a slot handed to a CPU's cursor there was free and out
 * of every allocation's reach, and order 0 failed. Now the free moves the
 * cluster to nonfull[0] as in 6.18, and any CPU's order-0 allocation
 * takes the slot; on an ssd (holes_order0()) it is handed over as
 * before. */
TEST(holes_first_hands_no_order0_slot_over_where_order0_is_6_18s)
{
	static const char *const pols[] = { "proposal-holes-first", "proposal-compact" };
	static const char *const kinds[] = { "ssd-discard", "file" };
	uint64_t slot;

	for (size_t p = 0; p < 2; p++) {
		for (size_t k = 0; k < 2; k++) {
			for (int cpu = 0; cpu < 2; cpu++) {
				sl_device *d = two_full_order0(pols[p], kinds[k], &slot);
				CHECK_EQ(d->st.handoffs, 0);
				CHECK_LIST(d, NF(0), sli_cluster_of(slot));
				CHECK_EQ(*sli_cursor(d, 0, 0), 0);
				CHECK_INVARIANTS(d);
				CHECK_EQ(sl_swap_alloc(d, cpu, 0), slot);
				CHECK_EQ(d->st.alloc_fail[0], 0);
				CHECK_INVARIANTS(d);
				sl_device_destroy(d);
			}
		}
		sl_device *d = two_full_order0(pols[p], "ssd", &slot);
		CHECK_EQ(d->st.handoffs, 1);
		CHECK_EQ(*sli_cursor(d, 0, 0), slot);
		CHECK_EQ(sl_swap_alloc(d, 1, 0), slot); /* the walk of kept slots */
		CHECK_EQ(d->st.alloc_fail[0], 0);
		sl_device_destroy(d);
	}
}

/* The same for an mTHP range on a discarding block device: order 4's own
 * fast path (LR_KEEP) and xp_take_handed() would reach a 64K range handed
 * to CPU 0's order-4 cursor, but order 0 there is 6.18's, whose steal
 * looks at frag[4] and nonfull[4] only. 1.5 MiB: order 0 fills cluster 1
 * (a free cluster first), CPU 0's 64K folios cluster 2, order 0 cluster 0,
 * then CPU 0 frees the folio at 1072: the cluster goes to nonfull[4] as in
 * 6.18, and CPU 1's order-0 allocation steals 1072 (it failed while the
 * range sat with CPU 0's cursor). */
TEST(holes_first_hands_no_64k_range_over_on_a_discarding_device)
{
	static const char *const pols[] = { "proposal-holes-first", "proposal-compact" };

	for (size_t p = 0; p < 2; p++) {
		char msg[256];
		int ok;
		sl_device *d = sl_device_create(3 * SL_CLUSTER, sl_device_kind("ssd-discard", &ok), 4,
						sl_policy_find(pols[p]), 1, msg, sizeof(msg));
		CHECK(d != NULL);
		ALLOC_N(d, 0, 0, SL_CLUSTER);
		ALLOC_N(d, 0, 4, 32);
		ALLOC_N(d, 0, 0, SL_CLUSTER - 1);
		CHECK_LIST(d, SL_LIST_FULL, 1, 2, 0);
		CHECK_EQ(*sli_cursor(d, 0, 4), 0);
		sl_swap_put(d, 0, 1024 + 48, 16);
		CHECK_EQ(d->st.handoffs, 0);
		CHECK_LIST(d, NF(4), 2);
		CHECK_INVARIANTS(d);
		CHECK_EQ(sl_swap_alloc(d, 1, 0), 1072);
		CHECK_EQ(d->st.alloc_fail[0], 0);
		CHECK_INVARIANTS(d);
		sl_device_destroy(d);
	}
}
