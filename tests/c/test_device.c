/* test_device.c - device creation limits and the invariant checker itself. */
#include "t.h"
#include "swaplab/locks.h"

TEST(device_smaller_than_a_cluster_is_refused)
{
	char msg[160];
	CHECK(sl_device_create(511, SL_DEV_ZRAM, 1, sl_policy_find("linux-6.18"), 0, msg,
			       sizeof(msg)) == NULL);
	CHECK(!strcmp(msg, "swap device of 511 slots is smaller than one cluster (512 slots)"));
}

TEST(device_one_tib_fits_in_300_mib)
{
	/* 2^28 slots: 1 byte a slot + 16 bytes a cluster */
	char msg[160];
	sl_device *d = sl_device_create(UINT64_C(1) << 28, SL_DEV_ZRAM, 1,
					sl_policy_find("linux-6.18"), 0, msg, sizeof(msg));
	CHECK(d != NULL);
	CHECK_EQ(d->nr_clusters, 524288);
	CHECK_EQ(sizeof(sl_cluster), 16);
	CHECK_EQ(sl_swap_alloc(d, 0, 4), 512);
	sl_device_destroy(d);
}

TEST(device_checker_reports_count_list_and_alignment_faults)
{
	char msg[256];
	sl_device *d = t_device("linux-6.18", 4096);

	CHECK(sl_swap_alloc(d, 0, 4) == 512);
	d->ci[1].count++;
	CHECK(sl_device_check(d, msg, sizeof(msg)) != 0);
	CHECK(!strcmp(msg, "I2: cluster 1 count 17 but 16 slots are not free"));
	d->ci[1].count--;
	d->ci[3].flags = SL_CF_FULL; /* on the free list, flag says full */
	CHECK(sl_device_check(d, msg, sizeof(msg)) != 0);
	CHECK(!strncmp(msg, "I1: cluster 3 (flags 4 order 0) is on list 0", 44));
	d->ci[3].flags = SL_CF_FREE;
	sl_ci_lock(d, 2);
	sli_alloc_range(d, 1025, 4); /* a misaligned order-4 range in cluster 2 */
	sl_dev_lock(d);
	sli_move_cluster(d, 2, SL_LIST_FRAG(4), SL_CF_FRAG);
	sl_dev_unlock(d);
	sl_ci_unlock(d, 2);
	CHECK(sl_device_check(d, msg, sizeof(msg)) != 0);
	CHECK(!strcmp(msg, "I6: order-4 allocation at slot 1025 is not aligned"));
	sl_device_destroy(d);
}

TEST(device_checker_reports_double_allocation)
{
	char msg[256];
	sl_device *d = t_device("linux-6.18", 4096);
	sl_ci_lock(d, 1);
	sli_alloc_range(d, 512, 0);
	d->map[512] = 0;  /* pretend the slot looked free */
	d->ci[1].count--;
	d->inuse_pages--;
	sli_alloc_range(d, 512, 0);
	sl_dev_lock(d);
	sli_move_cluster(d, 1, SL_LIST_FRAG(0), SL_CF_FRAG);
	sl_dev_unlock(d);
	sl_ci_unlock(d, 1);
	CHECK(sl_device_check(d, msg, sizeof(msg)) != 0);
	CHECK(!strcmp(msg, "I7: 1 slots were allocated while already owned"));
	sl_device_destroy(d);
}
