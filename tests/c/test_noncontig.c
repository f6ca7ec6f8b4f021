/*
 * test_noncontig.c - the upper-bound reference "noncontig": first-fit's
 * contiguous ranges, else a folio's slots gathered in free chunks (largest
 * first, lowest address first); the process model stores them per PTE,
 * counts the runs and swaps such a folio back in whole.
 */
#include <stdlib.h>
#include "t.h"

#define M(k) (1u << (k))

/* A 1024-slot device (clusters 0, 1) with every slot in use except the
 * holes 520..527 (order 3), 600..603 (order 2), 700..701 (order 1), 800
 * and 900: 16 free slots, no free aligned range of 16. */
static sl_device *fragmented(void)
{
	sl_device *d = t_device("noncontig", 1024);
	static const uint64_t holes[][2] = { { 520, 8 }, { 600, 4 }, { 700, 2 }, { 800, 1 }, { 900, 1 } };

	for (uint64_t s = 1; s < 1024; s++)
		CHECK_EQ(sl_swap_alloc(d, 0, 0), s); /* first-fit from slot 1 */
	for (size_t i = 0; i < sizeof(holes) / sizeof(holes[0]); i++)
		sl_swap_put(d, 0, holes[i][0], holes[i][1]);
	CHECK_EQ(d->inuse_pages, 1007);
	return d;
}

static const uint64_t gathered[16] = { 520, 521, 522, 523, 524, 525, 526, 527,
				       600, 601, 602, 603, 700, 701, 800, 900 };

TEST(noncontig_contiguous_range_is_first_fits)
{
	sl_device *d = t_device("noncontig", 4096), *ff = t_device("first-fit", 4096);
	uint64_t out[16];

	/* the same sequence on both: identical offsets, one run each */
	const int orders[] = { 0, 4, 2, 4, 0, 3 };
	for (size_t i = 0; i < sizeof(orders) / sizeof(orders[0]); i++) {
		uint32_t nr = 1u << orders[i];
		uint64_t want = sl_swap_alloc(ff, 0, orders[i]);
		CHECK_EQ(sl_swap_alloc_pages(d, 0, orders[i], out), 1);
		CHECK_EQ(out[0], want);
		CHECK_EQ(out[nr - 1], want + nr - 1);
	}
	CHECK_EQ(out[0], 72); /* next fit: 1, 16, 32(o2), 48(o4), 64, 72(o3) */
	CHECK_EQ(d->inuse_pages, ff->inuse_pages);
	CHECK_INVARIANTS(d);
	sl_device_destroy(d);
	sl_device_destroy(ff);
}

TEST(noncontig_gathers_largest_chunks_lowest_first)
{
	sl_device *d = fragmented();
	uint64_t out[16];

	CHECK_EQ(sl_swap_alloc(d, 0, 4), 0);  /* contiguous: nothing */
	CHECK_EQ(sl_swap_alloc_pages(d, 0, 4, out), 5);
	for (int j = 0; j < 16; j++)
		CHECK_EQ(out[j], gathered[j]);
	CHECK_EQ(d->inuse_pages, 1023);
	/* the shadow holds one allocation per chunk, each of its own order */
	CHECK_EQ(d->shadow[520], 4);
	CHECK_EQ(d->shadow[600], 3);
	CHECK_EQ(d->shadow[700], 2);
	CHECK_EQ(d->shadow[900], 1);
	CHECK_INVARIANTS(d);
	sl_device_destroy(d);
}

TEST(noncontig_fails_only_without_enough_free_slots)
{
	sl_device *d = fragmented();
	uint64_t out[32];

	CHECK_EQ(sl_swap_alloc_pages(d, 0, 5, out), 0); /* 32 wanted, 16 free */
	CHECK_EQ(d->inuse_pages, 1007);                 /* nothing taken */
	CHECK_EQ(d->st.alloc_fail[5], 1);
	CHECK_EQ(sl_swap_alloc_pages(d, 0, 4, out), 5);
	CHECK_EQ(sl_swap_alloc_pages(d, 0, 0, out), 0); /* full */
	CHECK_EQ(d->st.alloc_ok[4], 1);
	CHECK_INVARIANTS(d);
	sl_device_destroy(d);
}

/* A contiguous policy has no alloc_pages: the call allocates nothing. */
TEST(noncontig_alloc_pages_absent_elsewhere)
{
	sl_device *d = t_device("linux-6.18", 4096);
	uint64_t out[16];

	CHECK_EQ(sl_swap_alloc_pages(d, 0, 4, out), 0);
	CHECK_EQ(d->inuse_pages, 0);
	sl_device_destroy(d);
}

static uint64_t page_entry(sl_proc *p, uint64_t page)
{
	uint64_t *l = calloc(sl_proc_npages(p), sizeof(uint64_t));
	uint64_t v;

	sl_proc_layout(p, l);
	v = l[page];
	free(l);
	return v;
}

static void check_shared(sl_proc *p, const char *file, int line)
{
	char msg[256];

	if (sl_proc_check(p, 0, msg, sizeof(msg))) {
		t_failed_checks++;
		fprintf(stderr, "  %s:%d: process invariant: %s\n", file, line, msg);
	}
}

/* Reclaim never splits the 64K folio: its pages take the gathered slots in
 * order, the five runs are counted, and a swap fault takes it back whole
 * (its range was swapped out as one folio), freeing every run. */
TEST(noncontig_process_swaps_out_whole_and_back_in_whole)
{
	sl_device *d = fragmented();
	sl_region_spec r = { .npages = 64, .vmflags = SL_VMA_HUGEPAGE };
	sl_proc *p = sl_proc_create(d, 0, M(4), SL_SWAPIN_LARGE, &r, 1);
	const sl_proc_stats *st = sl_proc_stats_get(p);

	sl_proc_touch(p, 0, 0, 16);
	CHECK_EQ(st->faults_anon[4], 1);
	sl_proc_pageout(p, 0, 0, 16);
	CHECK_EQ(st->swpout[4], 1);
	CHECK_EQ(st->swpout_fallback[4], 0);
	CHECK_EQ(st->swpout_extra_runs[4], 4); /* five runs */
	for (int j = 0; j < 16; j++)
		CHECK_EQ(page_entry(p, (uint64_t)j), gathered[j]);
	check_shared(p, __FILE__, __LINE__);
	sl_proc_touch(p, 0, 9, 1);
	CHECK_EQ(st->swpin[4], 1);
	CHECK_EQ(st->swpin[0], 0);
	CHECK_EQ(d->inuse_pages, 1007);
	for (int j = 0; j < 16; j++)
		CHECK_EQ(page_entry(p, (uint64_t)j), SL_NOT_SWAPPED);
	check_shared(p, __FILE__, __LINE__);
	CHECK_INVARIANTS(d);
	sl_proc_destroy(p);
	sl_device_destroy(d);
}

/* A 16K sub-range of a gathered 64K folio comes back as a 16K folio (the
 * virtual entries of an aligned part are aligned too); after part of the
 * folio was dropped, the rest no longer forms a 64K folio. */
TEST(noncontig_swapin_of_a_part_and_after_dontneed)
{
	sl_device *d = fragmented();
	sl_region_spec r = { .npages = 64, .vmflags = SL_VMA_HUGEPAGE };
	sl_proc *p = sl_proc_create(d, 0, M(4) | M(2), SL_SWAPIN_LARGE, &r, 1);
	const sl_proc_stats *st = sl_proc_stats_get(p);

	sl_proc_touch(p, 0, 0, 16);
	sl_proc_pageout(p, 0, 0, 16);
	CHECK_EQ(st->swpout_extra_runs[4], 4); /* five runs */
	sl_proc_dontneed(p, 0, 0, 1);      /* page 0: slot 520 freed */
	CHECK_EQ(d->inuse_pages, 1022);
	sl_proc_touch(p, 0, 13, 1);        /* 64K no longer whole: 12..15 as 16K */
	CHECK_EQ(st->swpin[4], 0);
	CHECK_EQ(st->swpin[2], 1);
	CHECK_EQ(d->inuse_pages, 1018);    /* 700, 701, 800, 900 */
	sl_proc_touch(p, 0, 1, 1);         /* 0..3 has no entry at 0: order 0 */
	CHECK_EQ(st->swpin[0], 1);
	check_shared(p, __FILE__, __LINE__);
	CHECK_INVARIANTS(d);
	sl_proc_destroy(p);
	sl_device_destroy(d);
}

/* Several devices: a large folio tries the first device of the avail list
 * only; order 0 goes on to the next. */
TEST(noncontig_set_large_folio_tries_first_device_only)
{
	char msg[128];
	const sl_policy *pol = sl_policy_find("noncontig");
	sl_device *dev[2] = { sl_device_create(1024, SL_DEV_ZRAM, 1, pol, 1, msg, sizeof(msg)),
			      sl_device_create(1024, SL_DEV_ZRAM, 1, pol, 1, msg, sizeof(msg)) };
	const int prio[2] = { 10, 5 };
	sl_swapset *s = sl_swapset_create(dev, prio, 2, 1, msg, sizeof(msg));
	uint64_t out[16];

	CHECK(s != NULL);
	if (!s)
		return;
	for (int i = 0; i < 1016; i++)
		CHECK_EQ(sl_entry_type(sl_set_alloc(s, 0, 0)), 0); /* device 0: 7 free */
	CHECK_EQ(sl_set_alloc_pages(s, 0, 4, out), 0);
	CHECK_EQ(s->alloc_fail[4], 1);
	CHECK_EQ(sl_set_alloc_pages(s, 0, 2, out), 1);      /* 1020..1023, device 0 */
	CHECK_EQ(out[3], sl_entry(0, 1023));
	CHECK_EQ(sl_set_alloc_pages(s, 0, 1, out), 1);      /* 1018, 1019 */
	CHECK_EQ(out[0], sl_entry(0, 1018));
	CHECK_EQ(sl_set_alloc_pages(s, 0, 0, out), 1);      /* 1017: device 0 full */
	CHECK_EQ(out[0], sl_entry(0, 1017));
	CHECK_EQ(sl_set_alloc_pages(s, 0, 0, out), 1);      /* then device 1 */
	CHECK_EQ(out[0], sl_entry(1, 1));
	char m[200];
	CHECK_EQ(sl_set_check(s, m, sizeof(m)), 0);
	sl_swapset_destroy(s);
}

/* Where first-fit never falls back, noncontig is first-fit slot for slot. */
TEST(noncontig_run_equals_first_fit_without_fallback)
{
	sl_wl_params wp;
	sl_run_result a, b;
	char msg[256];

	sl_wl_defaults(&wp, SL_WL_THP_SWAP);
	wp.aligned_swapin = 1;
	wp.mthp_mask = M(2) | M(4) | M(6) | M(8);
	wp.iterations = 20;
	CHECK_EQ(sl_run(&wp, sl_policy_find("first-fit"), 1, &a, msg, sizeof(msg)), 0);
	CHECK_EQ(sl_run(&wp, sl_policy_find("noncontig"), 1, &b, msg, sizeof(msg)), 0);
	for (int i = 0; i < wp.iterations; i++) {
		CHECK_EQ(b.iter[i].layout_hash, a.iter[i].layout_hash);
		CHECK_EQ(b.iter[i].swpout_fallback[4], 0);
		CHECK_EQ(b.iter[i].swpout_extents[4], b.iter[i].swpout[4]);
	}
	sl_run_result_free(&a);
	sl_run_result_free(&b);
}

/* Random mixed-order alloc_pages / frees near full: invariants (the shadow
 * catches a slot handed out twice) hold, a folio fails only when fewer
 * slots than it needs are free, and everything comes back. */
TEST(noncontig_property_gathered_folios)
{
	static const int mix[] = { 0, 0, 2, 3, 4, 4, 5, 6, 9 };
	sl_device *d = t_device("noncontig", 5000);
	uint64_t (*live)[SL_CLUSTER] = calloc(2048, sizeof(*live));
	int *lorder = calloc(2048, sizeof(int));
	uint64_t nlive = 0, gathered_runs = 0;
	char msg[256];
	sl_rng rng;

	CHECK(live && lorder);
	if (!live || !lorder)
		return;
	sl_rng_init(&rng, SL_RNG_DEFAULT, 7);
	for (int i = 0; i < 200000; i++) {
		if (nlive < 2048 && (nlive == 0 || sl_rng_below(&rng, 100) < 55)) {
			int order = mix[sl_rng_below(&rng, sizeof(mix) / sizeof(mix[0]))];
			uint64_t free_before = d->pages - d->inuse_pages;
			int runs = sl_swap_alloc_pages(d, 0, order, live[nlive]);
			CHECK_EQ(runs == 0, free_before < (1u << order));
			if (runs > 1)
				gathered_runs += (uint64_t)runs;
			if (runs)
				lorder[nlive++] = order;
		} else {
			uint64_t v = sl_rng_below(&rng, (uint32_t)nlive);
			for (uint32_t j = 0; j < 1u << lorder[v]; j++)
				sl_swap_put(d, 0, live[v][j], 1);
			nlive--;
			memcpy(live[v], live[nlive], sizeof(live[0]));
			lorder[v] = lorder[nlive];
		}
		if (i % 997 == 0 && sl_device_check(d, msg, sizeof(msg))) {
			t_failed_checks++;
			fprintf(stderr, "  op %d: %s\n", i, msg);
			break;
		}
	}
	CHECK(gathered_runs > 1000);
	while (nlive--)
		for (uint32_t j = 0; j < 1u << lorder[nlive]; j++)
			sl_swap_put(d, 0, live[nlive][j], 1);
	CHECK_EQ(d->inuse_pages, 0);
	CHECK_INVARIANTS(d);
	free(live);
	free(lorder);
	sl_device_destroy(d);
}
