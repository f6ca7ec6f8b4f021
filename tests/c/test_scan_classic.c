/*
 * test_scan_classic.c - what the classic scanner (scan_classic.c) settles
 * once for every <= 6.13 generation: get_swap_pages() takes its whole batch
 * off nr_swap_pages before it scans.
 */
#include "t.h"
#include "swaplab/scan_classic.h"

static const char *const classic[] = { "linux-6.9", "linux-6.10", "nonfull-2024", "linux-6.12" };

TEST(classic_batch_is_taken_off_nr_swap_pages_until_it_ends)
{
	for (size_t i = 0; i < sizeof(classic) / sizeof(classic[0]); i++) {
		sl_device *d = t_device(classic[i], 4096);
		uint64_t free0 = sl_nr_swap_pages(d);

		CHECK_EQ(free0, 4095);
		CHECK_EQ(sc_swap_batch_begin(d, 100, 0), SC_SWAP_BATCH); /* SWAP_BATCH caps */
		CHECK_EQ(sl_nr_swap_pages(d), free0 - 64);
		sc_swap_batch_took(d, 0);
		CHECK_EQ(sl_nr_swap_pages(d), free0 - 63);   /* no slot was really taken */
		sc_swap_batch_end(d);
		CHECK_EQ(sl_nr_swap_pages(d), free0);
		CHECK_EQ(sc_swap_batch_begin(d, 1, 4), 1);
		CHECK_EQ(sl_nr_swap_pages(d), free0 - 16);
		sc_swap_batch_end(d);
		/* a batch over what is free is cut to it */
		CHECK_EQ(sc_swap_batch_begin(d, 64, 9), 7);
		sc_swap_batch_end(d);
		sl_device_destroy(d);
	}
}

/* 6.12: with no free cluster, cluster_alloc_swap_entry() reclaims full
 * clusters when vm_swap_full(); 2079 of 4095 slots free is not full, but
 * the 64-slot refill batch taken off first makes it so. */
TEST(classic_v612_vm_swap_full_sees_the_refill_batch)
{
	sl_device *d = t_device("linux-6.12", 4096);

	CHECK_EQ(sl_swap_alloc(d, 0, 9), 512);           /* cluster 1, full */
	for (int cpu = 0; cpu < 4; cpu++)
		CHECK(sl_swap_alloc(d, cpu, 4) != 0);        /* clusters 2..5 */
	CHECK(sl_swap_alloc(d, 0, 5) != 0);              /* cluster 6 */
	CHECK(sl_swap_alloc(d, 1, 5) != 0);              /* cluster 7 */
	CHECK_EQ(d->list_len[SL_LIST_FREE], 0);
	for (int i = 0; i < 31; i++) {                    /* clusters 2 and 3 fill */
		CHECK(sl_swap_alloc(d, 0, 4) != 0);
		CHECK(sl_swap_alloc(d, 1, 4) != 0);
	}
	for (int i = 0; i < 24; i++)
		CHECK(sl_swap_alloc(d, 2, 4) != 0);
	CHECK_EQ(sl_nr_swap_pages(d), 2079);
	CHECK(!sl_vm_swap_full(d));
	CHECK_EQ(d->list_len[SL_LIST_FULL], 3);
	CHECK_EQ(d->st.full_reclaim_scans, 0);
	/* cpu 3's first order-0 allocation refills its slot cache */
	CHECK(sl_swap_alloc(d, 3, 0) != 0);
	CHECK_EQ(d->st.full_reclaim_scans, 1);
	CHECK_EQ(sl_nr_swap_pages(d), 2079 - 64);         /* the batch went back */
	CHECK_INVARIANTS(d);
	sl_device_destroy(d);
}
