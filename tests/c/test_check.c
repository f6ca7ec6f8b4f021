/* test_check.c - the invariant checker (check.c) reports each broken
 * invariant by its tag: I3, the list lengths; I8, the free_from hint. */
#include "t.h"
#include "swaplab/locks.h"

/* A 4096-slot linux-6.18 device: cluster 0 (the header) on nonfull[0],
 * clusters 1..7 on the free list, ascending. */
TEST(check_i3_recorded_length_must_match_the_list)
{
	char msg[256];
	sl_device *d = t_device("linux-6.18", 4096);

	CHECK_EQ(sl_device_check(d, msg, sizeof(msg)), 0);
	d->list_len[SL_LIST_FREE]++;
	CHECK(sl_device_check(d, msg, sizeof(msg)) != 0);
	CHECK(!strcmp(msg, "I3: list 0 holds 7 clusters but records 8"));
	d->list_len[SL_LIST_FREE]--;
	CHECK_EQ(sl_device_check(d, msg, sizeof(msg)), 0);
	sl_device_destroy(d);
}

TEST(check_i3_isolated_clusters_complete_the_count)
{
	char msg[256];
	sl_device *d = t_device("linux-6.18", 4096);

	/* taken off its list the proper way: NONE, unlinked, counted */
	sl_dev_lock(d);
	sli_isolate_cluster(d, 3);
	sl_dev_unlock(d);
	CHECK_EQ(d->list_len[SL_LIST_FREE], 6);
	CHECK_EQ(sl_device_check(d, msg, sizeof(msg)), 0);
	/* a list_del() that forgot the cluster's own links: on no list, yet
	 * not isolated either - lost to both counts */
	uint32_t prev, next;
	sl_dev_lock(d);
	sli_move_cluster(d, 3, SL_LIST_FREE, SL_CF_FREE); /* back, at the tail */
	sl_dev_unlock(d);
	prev = d->ci[3].prev;
	next = d->ci[3].next;
	d->ci[prev].next = next;
	d->ci[next].prev = prev;
	d->list_len[SL_LIST_FREE]--;
	d->ci[3].flags = SL_CF_NONE;
	CHECK(sl_device_check(d, msg, sizeof(msg)) != 0);
	CHECK(!strcmp(msg, "I3: 7 clusters on lists + 0 isolated != 8 clusters "
			   "(cluster 3 is on no list but linked)"));
	sl_device_destroy(d);
}

TEST(check_i3_holds_for_baselines_with_every_cluster_isolated)
{
	char msg[256];

	for (int i = 0; i < 2; i++) {
		sl_device *d = t_device(i ? "buddy" : "first-fit", 4096);
		uint64_t off = sl_swap_alloc(d, 0, 4);
		CHECK(off != 0);
		for (int l = 0; l < SL_NR_LISTS; l++)
			CHECK_EQ(d->list_len[l], 0);
		CHECK_EQ(sl_device_check(d, msg, sizeof(msg)), 0);
		sl_device_destroy(d);
	}
}

/* free_from (I8): set to the end when the cluster moves to the full list,
 * lowered by a release below it; a scan from the cluster's first slot
 * starts there and finds what the kernel's scan from that slot finds. A
 * hint above a free slot is reported. */
TEST(check_i8_free_from_follows_allocations_and_releases)
{
	char msg[256];
	sl_device *d = t_device("linux-6.18", 4096);

	/* cluster 0, nonfull[0]'s head (6.18: before the free list), slot 0
	 * the header: filled slot by slot from 1; free_from stays 0 until the
	 * full cluster moves to the full list */
	for (unsigned i = 1; i < SL_CLUSTER; i++) {
		CHECK_EQ(sl_swap_alloc(d, 0, 0), i);
		CHECK_EQ(d->ci[0].free_from, i + 1 < SL_CLUSTER ? 0 : SL_CLUSTER);
	}
	sl_swap_put(d, 0, 300, 1);
	CHECK_EQ(d->ci[0].free_from, 300);
	sl_swap_put(d, 0, 400, 1);
	CHECK_EQ(d->ci[0].free_from, 300); /* only a lower bound */
	sl_swap_put(d, 0, 7, 1);
	CHECK_EQ(d->ci[0].free_from, 7);
	CHECK_EQ(sli_find_free(d, 0, SL_CLUSTER), 7);
	CHECK_EQ(sli_find_free(d, 1, SL_CLUSTER), 7);
	CHECK_EQ(sl_device_check(d, msg, sizeof(msg)), 0);
	/* nonfull[0]'s head again: its scan from the first slot takes 7,
	 * then 300 and 400 */
	CHECK_EQ(sl_swap_alloc(d, 0, 0), 7);
	CHECK_EQ(d->ci[0].free_from, 7); /* a lower bound still */
	CHECK_EQ(sl_swap_alloc(d, 0, 0), 300);
	CHECK_EQ(sl_swap_alloc(d, 0, 0), 400);
	CHECK_EQ(d->ci[0].free_from, SL_CLUSTER); /* full */
	sl_swap_put(d, 0, 9, 1);
	d->ci[0].free_from = 10;
	CHECK(sl_device_check(d, msg, sizeof(msg)) != 0);
	CHECK(!strcmp(msg, "I8: cluster 0 slot 9 is free below free_from 10"));
	d->ci[0].free_from = SL_CLUSTER + 1;
	CHECK(sl_device_check(d, msg, sizeof(msg)) != 0);
	CHECK(!strcmp(msg, "I8: cluster 0 free_from 513 is past its end"));
	d->ci[0].free_from = 9;
	CHECK_EQ(sl_device_check(d, msg, sizeof(msg)), 0);
	sl_device_destroy(d);
}
