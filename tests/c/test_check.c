/* test_check.c - the invariant checker (check.c) reports each broken
 * invariant by its tag: I3, the list lengths. */
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
