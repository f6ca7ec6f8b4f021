/*
 * test_baselines.c - the generic baselines "buddy" and "first-fit": exact
 * offsets of splits, coalescing and cursor moves. Devices: 4096 slots =
 * clusters 0..7, 1024 = 0..1 (slot 0 is the header, never free).
 */
#include "t.h"

/* A whole-cluster (order-9) request on cpu 0. */
static uint64_t alloc9(sl_device *d) { return sl_swap_alloc(d, 0, 9); }

TEST(baselines_buddy_initial_blocks_split_lowest_first)
{
	sl_device *d = t_device("buddy", 4096);
	/* cluster 0 minus the header: free blocks 1(o0) 2(o1) 4(o2) ... 256(o8) */
	CHECK_EQ(sl_swap_alloc(d, 0, 0), 1);
	CHECK_EQ(sl_swap_alloc(d, 0, 0), 2);     /* splits 2(o1): 3 stays free */
	CHECK_EQ(sl_swap_alloc(d, 0, 0), 3);
	CHECK_EQ(sl_swap_alloc(d, 0, 2), 4);     /* the order-2 block, whole */
	CHECK_EQ(sl_swap_alloc(d, 0, 1), 8);     /* splits 8(o3): 10(o1) free */
	CHECK_EQ(sl_swap_alloc(d, 0, 0), 10);    /* splits 10(o1): 11 free */
	CHECK_EQ(sl_swap_alloc(d, 0, 4), 16);
	CHECK_EQ(sl_swap_alloc(d, 0, 4), 32);    /* splits 32(o5): 48(o4) free */
	CHECK_EQ(sl_swap_alloc(d, 0, 4), 48);
	CHECK_EQ(sl_swap_alloc(d, 0, 9), 512);   /* first whole cluster */
	CHECK_EQ(sl_swap_alloc(d, 0, 8), 256);   /* cluster 0's upper half */
	CHECK_EQ(sl_swap_alloc(d, 0, 8), 1024);  /* splits cluster 2 */
	CHECK_EQ(sl_swap_alloc(d, 0, 8), 1280);
	CHECK_EQ(sl_swap_alloc(d, 0, 0), 11);
	CHECK_EQ(d->ci[0].count, 1 + 2 + 1 + 4 + 2 + 1 + 16 * 3 + 256 + 1);
	/* clusters stay off the device lists */
	for (uint32_t c = 0; c < d->nr_clusters; c++)
		CHECK_EQ(d->ci[c].flags, SL_CF_NONE);
	CHECK_INVARIANTS(d);
	sl_device_destroy(d);
}

TEST(baselines_buddy_free_coalesces_back_to_whole_cluster)
{
	sl_device *d = t_device("buddy", 1024);  /* clusters 0, 1 */
	CHECK_EQ(sl_swap_alloc(d, 0, 4), 16);    /* cluster 0's order-4 block */
	CHECK_EQ(alloc9(d), 512);
	sl_swap_put(d, 0, 512, 512);
	CHECK_EQ(d->ci[1].count, 0);
	CHECK_EQ(alloc9(d), 512);                /* back as one order-9 block */
	sl_swap_put(d, 0, 512, 512);
	sl_swap_put(d, 0, 16, 16);               /* 16(o4): its buddy 0..15 holds the header */
	uint64_t offs[8];
	for (int i = 0; i < 8; i++)
		offs[i] = sl_swap_alloc(d, 0, 6);
	/* 64(o6), then 128(o7) split (192 free), 192, 256(o8) split (320(o6) and
	 * 384(o7) free), 320, 384 split (448 free), 448; then cluster 1 split:
	 * 576(o6), 640(o7), 768(o8) free */
	const uint64_t want[8] = { 64, 128, 192, 256, 320, 384, 448, 512 };
	for (int i = 0; i < 8; i++)
		CHECK_EQ(offs[i], want[i]);
	CHECK_EQ(alloc9(d), 0);                  /* no whole cluster free */
	sl_swap_put(d, 0, 512, 64);              /* 512(o6) merges up to 512(o9) */
	CHECK_EQ(alloc9(d), 512);
	CHECK_INVARIANTS(d);
	sl_device_destroy(d);
}

TEST(baselines_buddy_order9_only_when_whole_cluster_free)
{
	sl_device *d = t_device("buddy", 1536);  /* clusters 0..2 */
	CHECK_EQ(alloc9(d), 512);
	CHECK_EQ(alloc9(d), 1024);
	CHECK_EQ(alloc9(d), 0);                  /* cluster 0 holds the header */
	sl_swap_put(d, 0, 1024 + 511, 1);        /* one slot of cluster 2 */
	CHECK_EQ(alloc9(d), 0);
	CHECK_EQ(sl_swap_alloc(d, 0, 0), 1);     /* order 0 still from the lowest block */
	sl_swap_put(d, 0, 1024, 511);            /* the rest of cluster 2 */
	CHECK_EQ(d->ci[2].count, 0);
	CHECK_EQ(alloc9(d), 1024);
	CHECK_EQ(d->st.alloc_fail[9], 2);
	CHECK_INVARIANTS(d);
	sl_device_destroy(d);
}

TEST(baselines_buddy_partial_frees_coalesce)
{
	sl_device *d = t_device("buddy", 1024);
	/* exhaust cluster 0 so that cluster 1 is the only source */
	for (int o = 0; o <= 8; o++)
		CHECK_EQ(sl_swap_alloc(d, 0, o), UINT64_C(1) << o);
	CHECK_EQ(d->ci[0].count, 512);
	CHECK_EQ(alloc9(d), 512);
	sl_swap_put(d, 0, 512 + 64, 16);         /* 16 of a 64-slot range */
	sl_swap_put(d, 0, 512 + 80, 48);         /* the other 48: 576(o6) whole */
	CHECK_EQ(sl_swap_alloc(d, 0, 6), 576);
	sl_swap_put(d, 0, 576, 64);
	for (uint64_t s = 512; s < 576; s++)     /* single slots, ascending */
		sl_swap_put(d, 0, s, 1);
	CHECK_EQ(sl_swap_alloc(d, 0, 7), 512);   /* 512(o6) + 576(o6) = 512(o7) */
	sl_swap_put(d, 0, 512, 128);
	sl_swap_put(d, 0, 640 + 3, 125);         /* odd run: 643..767 */
	CHECK_EQ(sl_swap_alloc(d, 0, 7), 512);   /* 640(o7) is not whole yet */
	sl_swap_put(d, 0, 512, 128);
	sl_swap_put(d, 0, 642, 1);
	sl_swap_put(d, 0, 640, 2);
	CHECK_EQ(sl_swap_alloc(d, 0, 8), 512);   /* 512(o7) + 640(o7) */
	sl_swap_put(d, 0, 512, 256);
	for (uint64_t s = 1023; s >= 768; s--)   /* single slots, descending */
		sl_swap_put(d, 0, s, 1);
	CHECK_EQ(d->ci[1].count, 0);
	CHECK_EQ(alloc9(d), 512);
	CHECK_INVARIANTS(d);
	sl_device_destroy(d);
}

TEST(baselines_buddy_partial_last_cluster_never_exceeds_max)
{
	sl_device *d = t_device("buddy", 1280);  /* cluster 2 holds slots 1024..1279 */
	CHECK_EQ(alloc9(d), 512);
	CHECK_EQ(alloc9(d), 0);
	CHECK_EQ(sl_swap_alloc(d, 0, 8), 256);   /* cluster 0 before cluster 2 */
	CHECK_EQ(sl_swap_alloc(d, 0, 8), 1024);
	CHECK_EQ(sl_swap_alloc(d, 0, 8), 0);
	CHECK_EQ(d->ci[2].count, 512);
	CHECK_INVARIANTS(d);
	sl_device_destroy(d);
}

TEST(baselines_buddy_fills_device_exactly_and_empties)
{
	sl_device *d = t_device("buddy", 2048);
	uint64_t n = 0;
	while (sl_swap_alloc(d, 0, 0))
		n++;
	CHECK_EQ(n, 2047);
	CHECK_EQ(d->inuse_pages, d->pages);
	CHECK_INVARIANTS(d);
	sl_swap_put(d, 0, 1, 2047);
	CHECK_EQ(alloc9(d), 512);
	CHECK_EQ(alloc9(d), 1024);
	CHECK_EQ(alloc9(d), 1536);
	CHECK_INVARIANTS(d);
	sl_device_destroy(d);
}

TEST(baselines_first_fit_cursor_moves_past_each_allocation)
{
	sl_device *d = t_device("first-fit", 4096);
	CHECK_EQ(sl_swap_alloc(d, 0, 0), 1);     /* cursor starts past the header */
	CHECK_EQ(sl_swap_alloc(d, 0, 0), 2);
	CHECK_EQ(sl_swap_alloc(d, 0, 4), 16);    /* cursor 3 rounded up to 16 */
	CHECK_EQ(sl_swap_alloc(d, 0, 0), 32);    /* next fit: 3..15 are skipped */
	CHECK_EQ(sl_swap_alloc(d, 0, 1), 34);
	CHECK_EQ(sl_swap_alloc(d, 0, 2), 36);
	CHECK_EQ(sl_swap_alloc(d, 0, 3), 40);
	CHECK_EQ(sl_swap_alloc(d, 0, 9), 512);
	CHECK_EQ(sl_swap_alloc(d, 0, 0), 1024);
	for (uint32_t c = 0; c < d->nr_clusters; c++)
		CHECK_EQ(d->ci[c].flags, SL_CF_NONE);
	CHECK_INVARIANTS(d);
	sl_device_destroy(d);
}

TEST(baselines_first_fit_alignment_skips_partly_used_ranges)
{
	sl_device *d = t_device("first-fit", 1024);
	for (uint64_t s = 1; s < 1024; s++)
		CHECK_EQ(sl_swap_alloc(d, 0, 0), s); /* the cursor wraps to 0 */
	sl_swap_put(d, 0, 4, 4);
	sl_swap_put(d, 0, 17, 15);               /* 17..31: no aligned 16 */
	sl_swap_put(d, 0, 34, 2);
	sl_swap_put(d, 0, 64, 36);               /* 64..99 */
	sl_swap_put(d, 0, 101, 27);              /* 101..127: 100 stays used */
	sl_swap_put(d, 0, 256, 128);
	CHECK_EQ(sl_swap_alloc(d, 0, 4), 64);    /* 16..31 holds 16 */
	CHECK_EQ(sl_swap_alloc(d, 0, 4), 80);
	CHECK_EQ(sl_swap_alloc(d, 0, 4), 112);   /* 96..111 holds 100 */
	CHECK_EQ(sl_swap_alloc(d, 0, 7), 256);
	CHECK_EQ(sl_swap_alloc(d, 0, 2), 4);     /* nothing past 384: wrapped */
	CHECK_EQ(sl_swap_alloc(d, 0, 1), 18);    /* (16,17) holds 16 */
	CHECK_EQ(sl_swap_alloc(d, 0, 3), 24);
	CHECK_EQ(sl_swap_alloc(d, 0, 1), 34);
	CHECK_EQ(sl_swap_alloc(d, 0, 0), 96);    /* forward before wrapping */
	CHECK_EQ(sl_swap_alloc(d, 0, 2), 104);   /* (100..103) holds 100 */
	CHECK_EQ(sl_swap_alloc(d, 0, 3), 0);     /* no free aligned 8 anywhere */
	CHECK_EQ(sl_swap_alloc(d, 0, 2), 108);   /* a failure leaves the cursor */
	CHECK_EQ(sl_swap_alloc(d, 0, 2), 20);    /* wrapped */
	CHECK_EQ(sl_swap_alloc(d, 0, 0), 97);
	CHECK_INVARIANTS(d);
	sl_device_destroy(d);
}

TEST(baselines_first_fit_wraps_once)
{
	sl_device *d = t_device("first-fit", 1024);
	/* fill slots 1..1023 one by one, then free a few low ones */
	for (uint64_t s = 1; s < 1024; s++)
		CHECK_EQ(sl_swap_alloc(d, 0, 0), s);
	CHECK_EQ(sl_swap_alloc(d, 0, 0), 0);     /* full: nothing anywhere */
	sl_swap_put(d, 0, 5, 1);
	sl_swap_put(d, 0, 9, 1);
	sl_swap_put(d, 0, 16, 4);
	CHECK_EQ(sl_swap_alloc(d, 0, 2), 16);    /* cursor was at 0: scan from the start */
	CHECK_EQ(sl_swap_alloc(d, 0, 0), 5);     /* cursor 20: wraps to 5 */
	CHECK_EQ(sl_swap_alloc(d, 0, 0), 9);     /* cursor 6 */
	CHECK_EQ(sl_swap_alloc(d, 0, 0), 0);
	sl_swap_put(d, 0, 700, 1);
	sl_swap_put(d, 0, 3, 1);
	CHECK_EQ(sl_swap_alloc(d, 0, 0), 700);   /* cursor 10: forward first */
	CHECK_EQ(sl_swap_alloc(d, 0, 0), 3);     /* then wrapped */
	CHECK_EQ(d->st.alloc_fail[0], 2);
	CHECK_INVARIANTS(d);
	sl_device_destroy(d);
}

TEST(baselines_first_fit_order1_and_2_lanes_at_word_edges)
{
	sl_device *d = t_device("first-fit", 1024);
	for (uint64_t s = 1; s < 1024; s++)
		CHECK_EQ(sl_swap_alloc(d, 0, 0), s);
	sl_swap_put(d, 0, 7, 2);                 /* 7, 8: across a word, not aligned */
	CHECK_EQ(sl_swap_alloc(d, 0, 1), 0);
	sl_swap_put(d, 0, 14, 2);                /* 14, 15: aligned, last lane of a word */
	CHECK_EQ(sl_swap_alloc(d, 0, 1), 14);
	sl_swap_put(d, 0, 22, 4);                /* 22..25 free, not 4-aligned */
	CHECK_EQ(sl_swap_alloc(d, 0, 2), 0);
	sl_swap_put(d, 0, 1020, 4);              /* last lane of the device */
	CHECK_EQ(sl_swap_alloc(d, 0, 2), 1020);
	CHECK_EQ(sl_swap_alloc(d, 0, 1), 22);    /* cursor wrapped to 0 */
	CHECK_EQ(sl_swap_alloc(d, 0, 1), 24);
	CHECK_EQ(sl_swap_alloc(d, 0, 0), 7);
	CHECK_INVARIANTS(d);
	sl_device_destroy(d);
}

TEST(baselines_first_fit_partial_last_cluster_never_exceeds_max)
{
	sl_device *d = t_device("first-fit", 1280);
	CHECK_EQ(sl_swap_alloc(d, 0, 9), 512);
	CHECK_EQ(sl_swap_alloc(d, 0, 9), 0);     /* cluster 2 is half padding */
	CHECK_EQ(sl_swap_alloc(d, 0, 8), 1024);
	CHECK_EQ(sl_swap_alloc(d, 0, 8), 256);   /* wrapped */
	CHECK_EQ(sl_swap_alloc(d, 0, 8), 0);
	CHECK_INVARIANTS(d);
	sl_device_destroy(d);
}

TEST(baselines_swap_file_takes_order0_only)
{
	const char *names[] = { "buddy", "first-fit" };
	char msg[256];

	for (int i = 0; i < 2; i++) {
		sl_device *d = sl_device_create(1024, SL_DEV_SOLIDSTATE, 1, sl_policy_find(names[i]), 1,
						msg, sizeof(msg));
		CHECK(d != NULL);
		if (!d)
			continue;
		CHECK_EQ(sl_swap_alloc(d, 0, 4), 0);
		CHECK_EQ(sl_swap_alloc(d, 0, 0), 1);
		CHECK_EQ(d->st.alloc_fail[4], 1);
		CHECK_INVARIANTS(d);
		sl_device_destroy(d);
	}
}
