/*
 * test_discard_classic.c - a discarding SSD under the <= 6.13 generations:
 * an emptied cluster waits on the discard list with its slots marked bad;
 * the worker (tick) or, when no free cluster is left, the allocator itself
 * discards it onto the free list.
 */
#include "t.h"

static const char *const classic[] = { "linux-6.9", "linux-6.10", "nonfull-2024", "linux-6.12" };

static int all_slots(const sl_device *d, uint32_t c, uint8_t v)
{
	for (uint32_t i = 0; i < SL_CLUSTER; i++)
		if (d->map[sli_cluster_offset(c) + i] != v)
			return 0;
	return 1;
}

TEST(discard_classic_list_worker_and_synchronous_discard)
{
	for (int p = 0; p < 4; p++) {
		char msg[256];
		sl_device *d = sl_device_create(2048, SL_DEV_BLKDEV | SL_DEV_SOLIDSTATE | SL_DEV_DISCARD,
						1, sl_policy_find(classic[p]), 1, msg, sizeof(msg));
		uint64_t n = 0, off;

		CHECK(d != NULL);
		if (!d)
			continue;
		while (sl_swap_alloc(d, 0, 0))
			n++;
		CHECK_EQ(n, 2047);
		/* cluster 1 empties: pending discard, its slots bad */
		sl_swap_put(d, 0, 512, 512);
		d->pol->drain(d); /* the free slot cache lets go */
		CHECK_EQ(d->list_len[SL_LIST_DISCARD], 1);
		CHECK_EQ(d->ci[1].flags, SL_CF_DISCARD);
		CHECK(all_slots(d, 1, SL_SLOT_BAD));
		CHECK_EQ(d->inuse_pages, 2047 - 512);
		CHECK_INVARIANTS(d);
		/* no free cluster: the allocation discards it and takes it */
		off = sl_swap_alloc(d, 0, 0);
		CHECK(off >= 512 && off < 1024);
		CHECK_EQ(d->list_len[SL_LIST_DISCARD], 0);
		CHECK_EQ(d->st.discarded_clusters, 1);
		CHECK_INVARIANTS(d);
		/* cluster 2 empties; the worker discards it onto the free list */
		sl_swap_put(d, 0, 1024, 512);
		d->pol->drain(d);
		CHECK_EQ(d->ci[2].flags, SL_CF_DISCARD);
		d->pol->tick(d);
		CHECK_EQ(d->ci[2].flags, SL_CF_FREE);
		CHECK(all_slots(d, 2, SL_SLOT_FREE));
		CHECK_EQ(d->st.discarded_clusters, 2);
		CHECK_INVARIANTS(d);
		if (t_failed_checks)
			fprintf(stderr, "  (policy %s)\n", classic[p]);
		sl_device_destroy(d);
	}
}

/* 6.10: a CPU that needs a new cluster, of any order, discards the pending
 * clusters when the free list is empty, before its order-0 linear scan
 * could reach the one free slot left in a used cluster. */
TEST(discard_classic_new_cluster_discards_before_the_linear_scan)
{
	char msg[256];
	sl_device *d = sl_device_create(2048, SL_DEV_BLKDEV | SL_DEV_SOLIDSTATE | SL_DEV_DISCARD, 1,
					sl_policy_find("linux-6.10"), 1, msg, sizeof(msg));
	uint64_t out[4];

	CHECK(d != NULL);
	if (!d)
		return;
	while (sl_swap_alloc(d, 0, 0))
		;
	sl_swap_put(d, 0, 512, 512);   /* cluster 1: pending discard */
	sl_swap_put(d, 0, 1500, 1);    /* one free slot in cluster 2 */
	d->pol->drain(d);
	/* order 4: no free cluster, and 6.10 scans no partial cluster: the
	 * pending discard is done and cluster 1 serves it */
	CHECK_EQ(d->pol->get_swap_pages(d, 0, 1, out, 4), 1);
	CHECK_EQ(out[0], 512);
	CHECK_EQ(d->list_len[SL_LIST_DISCARD], 0);
	sl_swap_put(d, 0, 512, 16);
	d->pol->drain(d);
	CHECK_EQ(d->list_len[SL_LIST_DISCARD], 1);
	/* order 0: this CPU's order-0 cursor is spent; the free list is empty,
	 * so 6.10 discards cluster 1 again and takes its first slot */
	CHECK_EQ(d->pol->get_swap_pages(d, 0, 1, out, 0), 1);
	CHECK_EQ(out[0], 512);
	CHECK_EQ(d->map[1500], SL_SLOT_FREE);
	CHECK_INVARIANTS(d);
	sl_device_destroy(d);
}

static sl_device *full_discard_ssd(const char *policy, uint64_t slots)
{
	char msg[256];
	sl_device *d = sl_device_create(slots, SL_DEV_BLKDEV | SL_DEV_SOLIDSTATE | SL_DEV_DISCARD, 1,
					sl_policy_find(policy), 1, msg, sizeof(msg));
	if (!d)
		return NULL;
	while (sl_swap_alloc(d, 0, 0))
		;
	return d;
}

/* Frees cluster c whole and lets the slot caches go. */
static void empty_cluster(sl_device *d, uint32_t c)
{
	sl_swap_put(d, 0, sli_cluster_offset(c), SL_CLUSTER);
	d->pol->drain(d);
}

/* The discard list is first in, first out, and each discarded cluster goes
 * to the free-list tail; the worker takes every pending cluster. */
TEST(discard_classic_order_and_free_list_tail)
{
	for (int p = 0; p < 4; p++) {
		sl_device *d = full_discard_ssd(classic[p], 4096);
		CHECK(d != NULL);
		if (!d)
			continue;
		empty_cluster(d, 5);
		d->pol->tick(d);
		CHECK_LIST(d, SL_LIST_FREE, 5);
		empty_cluster(d, 1);
		empty_cluster(d, 2);
		CHECK_LIST(d, SL_LIST_DISCARD, 1, 2);
		CHECK_INVARIANTS(d);
		d->pol->tick(d);
		CHECK_LIST(d, SL_LIST_FREE, 5, 1, 2);
		CHECK_LIST_EMPTY(d, SL_LIST_DISCARD);
		CHECK_EQ(d->st.discarded_clusters, 3);
		CHECK_INVARIANTS(d);
		sl_device_destroy(d);
	}
}

/* 6.12 (ladder step 5) and the v2 series (nonfull head first) take a
 * partial cluster of the order before discarding anything. */
TEST(discard_classic_partial_cluster_before_discard)
{
	const char *const names[] = { "nonfull-2024", "linux-6.12" };

	for (int p = 0; p < 2; p++) {
		sl_device *d = full_discard_ssd(names[p], 4096);
		uint64_t out[1];
		CHECK(d != NULL);
		if (!d)
			continue;
		sl_swap_put(d, 0, 3 * SL_CLUSTER + 100, 1);
		empty_cluster(d, 1);
		CHECK_EQ(d->list_len[SL_LIST_DISCARD], 1);
		CHECK_EQ(d->pol->get_swap_pages(d, 0, 1, out, 0), 1);
		CHECK_EQ(out[0], 3 * SL_CLUSTER + 100);
		CHECK_EQ(d->list_len[SL_LIST_DISCARD], 1);
		CHECK_INVARIANTS(d);
		sl_device_destroy(d);
	}
}

/* <= 6.9: a PMD folio takes a free cluster or fails; it never discards. */
TEST(discard_classic_v69_pmd_folio_does_not_discard)
{
	sl_device *d = full_discard_ssd("linux-6.9", 4096);

	CHECK(d != NULL);
	if (!d)
		return;
	empty_cluster(d, 1);
	CHECK_EQ(sl_swap_alloc(d, 0, SL_PMD_ORDER), 0);
	CHECK_EQ(d->list_len[SL_LIST_DISCARD], 1);
	d->pol->tick(d);
	CHECK_EQ(sl_swap_alloc(d, 0, SL_PMD_ORDER), SL_CLUSTER);
	CHECK_INVARIANTS(d);
	sl_device_destroy(d);
}
