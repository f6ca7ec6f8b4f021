/*
 * test_process.c - the process model: fault orders, the fallback path's slot
 * order, large swap-in, MADV_DONTNEED frees, PMD THPs.
 */
#include <stdlib.h>
#include "t.h"

#define M(k) (1u << (k))

static sl_proc *proc(sl_device *d, unsigned mthp, uint64_t npages, unsigned vmflags)
{
	sl_region_spec r = { .npages = npages, .vmflags = vmflags };
	return sl_proc_create(d, 0, mthp, SL_SWAPIN_LARGE, &r, 1);
}

static uint64_t slot_of(sl_proc *p, uint64_t page)
{
	uint64_t *l = calloc(sl_proc_npages(p), sizeof(uint64_t));
	sl_proc_layout(p, l);
	uint64_t v = l[page];
	free(l);
	return v;
}

static void check_proc(sl_proc *p, int exclusive, const char *file, int line)
{
	char msg[256];
	if (sl_proc_check(p, exclusive, msg, sizeof(msg))) {
		t_failed_checks++;
		fprintf(stderr, "  %s:%d: process invariant: %s\n", file, line, msg);
	}
}
/* CHECK_PROC: the process owns every reference; CHECK_PROC_SHARED: the
 * test also allocated on the device directly. */
#define CHECK_PROC(p) check_proc(p, 1, __FILE__, __LINE__)
#define CHECK_PROC_SHARED(p) check_proc(p, 0, __FILE__, __LINE__)

TEST(process_anon_fault_takes_largest_enabled_order_with_empty_range)
{
	sl_device *d = t_device("linux-6.18", 16384);
	sl_proc *p = proc(d, M(4) | M(2), 64, SL_VMA_HUGEPAGE);
	sl_proc_touch(p, 0, 5, 1);
	CHECK_EQ(sl_proc_stats_get(p)->faults_anon[4], 1);
	sl_proc_dontneed(p, 0, 0, 8);
	sl_proc_touch(p, 0, 0, 1);           /* 0..15 not empty: 16K at 0..3 */
	CHECK_EQ(sl_proc_stats_get(p)->faults_anon[2], 1);
	sl_proc_touch(p, 0, 4, 4);           /* 4..7: another 16K folio */
	CHECK_EQ(sl_proc_stats_get(p)->faults_anon[2], 2);
	CHECK_PROC(p);
	sl_proc_destroy(p);
	sl_device_destroy(d);
}

TEST(process_nohugepage_region_faults_order0)
{
	sl_device *d = t_device("linux-6.18", 16384);
	sl_proc *p = proc(d, M(4), 64, SL_VMA_NOHUGEPAGE);
	sl_proc_touch(p, 0, 0, 16);
	CHECK_EQ(sl_proc_stats_get(p)->faults_anon[0], 16);
	sl_proc_destroy(p);
	sl_device_destroy(d);
}

TEST(process_pageout_writes_folios_in_address_order)
{
	sl_device *d = t_device("linux-6.18", 16384);
	sl_proc *p = proc(d, M(4), 64, SL_VMA_HUGEPAGE);
	sl_proc_touch(p, 0, 0, 64);
	sl_proc_pageout(p, 0, 0, 64);
	CHECK_EQ(sl_proc_stats_get(p)->swpout[4], 4);
	CHECK_EQ(slot_of(p, 0), 512);        /* the first large folio lands at 512 */
	CHECK_EQ(slot_of(p, 17), 529);
	CHECK_EQ(slot_of(p, 63), 575);
	CHECK_PROC(p);
	CHECK_INVARIANTS(d);
	sl_proc_destroy(p);
	sl_device_destroy(d);
}

/* Cluster 1 of a 4 MiB device holds every 16th slot, so order 4 fails and
 * the folio falls back: head first, then pages 15..1 on the next slots. */
TEST(process_fallback_head_first_then_tails_descending)
{
	sl_device *d = t_device("linux-6.18", 1024);
	for (int i = 0; i < 1023; i++)
		CHECK(sl_swap_alloc(d, 1, 0) != 0);
	for (uint64_t s = 512; s < 1024; s++)
		if (s % 16)
			sl_swap_put(d, 1, s, 1);
	sl_swap_put(d, 1, 1, 511);           /* cluster 0 empty too: free list */
	CHECK_LIST(d, SL_LIST_NONFULL(0), 1, 0);
	sl_proc *p = proc(d, M(4), 16, SL_VMA_HUGEPAGE);
	sl_proc_touch(p, 0, 0, 16);
	sl_proc_pageout(p, 0, 0, 16);
	const sl_proc_stats *st = sl_proc_stats_get(p);
	CHECK_EQ(st->swpout_fallback[4], 1);
	CHECK_EQ(st->swpout[4], 0);
	CHECK_EQ(st->swpout[0], 16);
	CHECK_EQ(slot_of(p, 0), 513);
	CHECK_EQ(slot_of(p, 15), 514);
	CHECK_EQ(slot_of(p, 14), 515);
	CHECK_EQ(slot_of(p, 2), 527);
	CHECK_EQ(slot_of(p, 1), 529);        /* 528 is taken */
	CHECK_PROC_SHARED(p);
	CHECK_INVARIANTS(d);
	/* non-consecutive slots: writing page 1 swaps in only that page */
	sl_proc_touch(p, 0, 1, 1);
	CHECK_EQ(st->swpin[0], 1);
	CHECK_EQ(slot_of(p, 1), SL_NOT_SWAPPED);
	CHECK_EQ(slot_of(p, 2), 527);
	CHECK_PROC_SHARED(p);
	sl_proc_destroy(p);
	sl_device_destroy(d);
}

TEST(process_large_swapin_takes_whole_folio_and_frees_its_slots)
{
	sl_device *d = t_device("linux-6.18", 16384);
	sl_proc *p = proc(d, M(4), 32, SL_VMA_HUGEPAGE);
	sl_proc_touch(p, 0, 0, 32);
	sl_proc_pageout(p, 0, 0, 32);
	sl_proc_touch(p, 0, 3, 1);
	CHECK_EQ(sl_proc_stats_get(p)->swpin[4], 1);
	CHECK_EQ(slot_of(p, 0), SL_NOT_SWAPPED);
	CHECK_EQ(slot_of(p, 15), SL_NOT_SWAPPED);
	CHECK_EQ(slot_of(p, 16), 528);
	CHECK_EQ(d->ci[1].count, 16);
	CHECK_LIST(d, SL_LIST_NONFULL(4), 1);
	/* MADV_DONTNEED frees the other folio's slots: cluster 1 empties */
	sl_proc_dontneed(p, 0, 16, 16);
	CHECK_EQ(d->ci[1].count, 0);
	CHECK_EQ(sl_proc_stats_get(p)->swpin[4], 1);
	CHECK_PROC(p);
	CHECK_INVARIANTS(d);
	sl_proc_destroy(p);
	sl_device_destroy(d);
}

TEST(process_swapin_of_16k_folios)
{
	sl_device *d = t_device("linux-6.18", 16384);
	sl_proc *p;

	p = proc(d, M(2), 16, SL_VMA_HUGEPAGE);
	sl_proc_touch(p, 0, 0, 16);          /* four 16K folios */
	sl_proc_pageout(p, 0, 0, 16);
	CHECK_EQ(sl_proc_stats_get(p)->swpout[2], 4);
	sl_proc_touch(p, 0, 6, 1);
	CHECK_EQ(sl_proc_stats_get(p)->swpin[2], 1);
	CHECK_EQ(slot_of(p, 4), SL_NOT_SWAPPED);
	CHECK_EQ(slot_of(p, 8), 520);
	CHECK_PROC(p);
	sl_proc_destroy(p);
	sl_device_destroy(d);
}

TEST(process_pageout_splits_a_folio_the_range_cuts)
{
	sl_device *d = t_device("linux-6.18", 16384);
	sl_proc *p = proc(d, M(4), 16, SL_VMA_HUGEPAGE);
	sl_proc_touch(p, 0, 0, 16);
	sl_proc_pageout(p, 0, 0, 8);         /* half of the folio */
	const sl_proc_stats *st = sl_proc_stats_get(p);
	CHECK_EQ(st->splits, 1);
	CHECK_EQ(st->swpout[4], 0);
	CHECK_EQ(st->swpout_fallback[4], 0);
	CHECK_EQ(st->swpout[0], 8);
	CHECK_EQ(slot_of(p, 0), 1);          /* order 0 starts in cluster 0 */
	CHECK_EQ(slot_of(p, 7), 8);
	CHECK_EQ(slot_of(p, 8), SL_NOT_SWAPPED);
	CHECK_PROC(p);
	sl_proc_destroy(p);
	sl_device_destroy(d);
}

TEST(process_pmd_thp_faults_whole_and_swaps_out_whole)
{
	sl_device *d = t_device("linux-6.18", 16384);
	sl_proc *p = proc(d, M(9), 1024, SL_VMA_HUGEPAGE);
	sl_proc_touch(p, 0, 3, 1);
	CHECK_EQ(sl_proc_stats_get(p)->faults_anon[9], 1);
	sl_proc_pageout(p, 0, 0, 1024);
	CHECK_EQ(sl_proc_stats_get(p)->swpout[9], 1);
	CHECK_EQ(slot_of(p, 0), 512);
	CHECK_EQ(slot_of(p, 511), 1023);
	/* swap-in never takes PMD order: page 5 comes back alone */
	sl_proc_touch(p, 0, 5, 1);
	CHECK_EQ(sl_proc_stats_get(p)->swpin[0], 1);
	/* the page table now exists: the next fault in this PMD cannot be PMD-size */
	sl_proc_dontneed(p, 0, 5, 1);
	sl_proc_touch(p, 0, 5, 1);
	CHECK_EQ(sl_proc_stats_get(p)->faults_anon[9], 1);
	CHECK_EQ(sl_proc_stats_get(p)->faults_anon[0], 1);
	CHECK_PROC(p);
	CHECK_INVARIANTS(d);
	sl_proc_destroy(p);
	sl_device_destroy(d);
}

TEST(process_order0_failure_keeps_the_page_resident)
{
	sl_device *d = t_device("linux-6.18", 512);
	for (int i = 0; i < 511; i++)
		CHECK(sl_swap_alloc(d, 1, 0) != 0);
	sl_proc *p = proc(d, 0, 4, SL_VMA_NOHUGEPAGE);
	sl_proc_touch(p, 0, 0, 4);
	sl_proc_pageout(p, 0, 0, 4);
	CHECK_EQ(sl_proc_stats_get(p)->alloc_fail0, 4);
	CHECK_EQ(slot_of(p, 0), SL_NOT_SWAPPED);
	CHECK_PROC_SHARED(p);
	sl_proc_destroy(p);
	sl_device_destroy(d);
}

/* docs/kernel-findings.md F1/F2, the kernel experiment replayed: every other
 * slot of a full device freed, a 128K folio with only its first 64K written
 * falls back; pages 16..31 go to the zero page but each takes a slot and
 * gives it back, so page 15 lands 16 holes after page 0. The kernel printed
 * 0:1 1:63 2:61 ... 15:35, 16..31 present. */
TEST(process_fallback_split_zero_tails_take_and_free_a_slot)
{
	sl_device *d = t_device("linux-6.18", 1024);
	sl_region_spec r[2] = { { .npages = 1023, .vmflags = SL_VMA_NOHUGEPAGE },
				{ .npages = 512, .vmflags = SL_VMA_HUGEPAGE } };
	sl_proc *p = sl_proc_create(d, 0, M(5), SL_SWAPIN_LARGE, r, 2);
	sl_proc_touch(p, 0, 0, 1023);
	sl_proc_pageout(p, 0, 0, 1023);
	for (uint32_t i = 0; i < 1023; i += 2)
		sl_proc_dontneed(p, 0, i, 1);
	sl_proc_touch(p, 1, 0, 16);
	sl_proc_pageout(p, 1, 0, 32);
	const sl_proc_stats *st = sl_proc_stats_get(p);
	CHECK_EQ(st->swpout_fallback[5], 1);
	CHECK_EQ(st->zero_remapped, 16);
	CHECK_EQ(st->zero_transient, 16);
	CHECK_EQ(slot_of(p, 1023 + 0), 1);
	CHECK_EQ(slot_of(p, 1023 + 15), 35);
	CHECK_EQ(slot_of(p, 1023 + 14), 37);
	CHECK_EQ(slot_of(p, 1023 + 1), 63);
	CHECK_EQ(slot_of(p, 1023 + 16), SL_NOT_SWAPPED);
	/* a write to a zero-page PTE faults a fresh order-0 folio */
	sl_proc_touch(p, 1, 20, 1);
	CHECK_EQ(st->faults_anon[0], 1023 + 1);
	CHECK_PROC(p);
	CHECK_INVARIANTS(d);
	sl_proc_destroy(p);
	sl_device_destroy(d);
}

/* F1 alone: MADV_PAGEOUT splits a 128K folio whose written half was dropped;
 * the never-written half goes to the zero page and is not swapped. */
TEST(process_pageout_split_maps_never_written_pages_to_zero_page)
{
	sl_device *d = t_device("linux-6.18", 16384);
	sl_proc *p = proc(d, M(5), 32, SL_VMA_HUGEPAGE);
	sl_proc_touch(p, 0, 16, 16);         /* the fault maps 0..31, 16..31 written */
	sl_proc_dontneed(p, 0, 16, 16);
	sl_proc_touch(p, 0, 16, 16);         /* 16 order-0 folios */
	sl_proc_pageout(p, 0, 0, 32);
	const sl_proc_stats *st = sl_proc_stats_get(p);
	CHECK_EQ(st->splits, 1);
	CHECK_EQ(st->zero_remapped, 16);
	CHECK_EQ(st->zero_transient, 0);
	CHECK_EQ(slot_of(p, 0), SL_NOT_SWAPPED);
	CHECK_EQ(slot_of(p, 16), 1);
	CHECK_EQ(st->swpout[0], 16);
	CHECK_PROC(p);
	sl_proc_destroy(p);
	sl_device_destroy(d);
}

/* A region starting pgoff pages past a 2 MiB boundary (--region-offset). */
static sl_proc *proc_at(sl_device *d, unsigned mthp, uint64_t npages, uint32_t pgoff)
{
	sl_region_spec r = { .npages = npages, .vmflags = SL_VMA_HUGEPAGE, .pgoff = pgoff };
	return sl_proc_create(d, 0, mthp, SL_SWAPIN_LARGE, &r, 1);
}

TEST(process_offset_edge_folios_follow_the_address)
{
	sl_device *d = t_device("linux-6.18", 16384);
	/* 8 pages (32K) past a 2 MiB boundary: page 0's 64K of address starts
	 * before the region, its 32K does not */
	sl_proc *p = proc_at(d, M(4) | M(3), 64, 8);
	sl_proc_touch(p, 0, 0, 1);
	CHECK_EQ(sl_proc_stats_get(p)->faults_anon[3], 1);
	CHECK_EQ(sl_proc_stats_get(p)->faults_anon[4], 0);
	sl_proc_touch(p, 0, 8, 1);           /* address 16: a whole 64K folio, pages 8..23 */
	CHECK_EQ(sl_proc_stats_get(p)->faults_anon[4], 1);
	sl_proc_touch(p, 0, 60, 1);          /* address 68: its 64K would pass the end (72) */
	CHECK_EQ(sl_proc_stats_get(p)->faults_anon[3], 2);
	sl_proc_pageout(p, 0, 0, 64);
	/* swapped out in address order: the 32K folio first, then the 64K one */
	CHECK_EQ(slot_of(p, 0), 512);
	CHECK_EQ(slot_of(p, 8), 1024);       /* 64K takes a cluster of its own order */
	CHECK_PROC(p);
	CHECK_INVARIANTS(d);
	sl_proc_destroy(p);
	sl_device_destroy(d);
}

TEST(process_offset_pmd_thp_only_where_2m_of_address_fits)
{
	sl_device *d = t_device("linux-6.18", 16384);
	/* 1024 pages at 256 pages (1 MiB) past a boundary: only PMD 1 (pages
	 * 256..767) lies wholly inside */
	sl_proc *p = proc_at(d, M(9) | M(6), 1024, 256);
	sl_proc_touch(p, 0, 0, 1);
	CHECK_EQ(sl_proc_stats_get(p)->faults_anon[9], 0);
	CHECK_EQ(sl_proc_stats_get(p)->faults_anon[6], 1);
	sl_proc_touch(p, 0, 300, 1);
	CHECK_EQ(sl_proc_stats_get(p)->faults_anon[9], 1);
	sl_proc_touch(p, 0, 1000, 1);        /* the last PMD is cut by the end */
	CHECK_EQ(sl_proc_stats_get(p)->faults_anon[9], 1);
	CHECK_EQ(sl_proc_stats_get(p)->faults_anon[6], 2);
	/* MADV_PAGEOUT of the whole region writes the THP whole */
	sl_proc_pageout(p, 0, 0, 1024);
	CHECK_EQ(sl_proc_stats_get(p)->swpout[9], 1);
	CHECK_EQ(sl_proc_stats_get(p)->splits, 0);
	/* MADV_DONTNEED of exactly its 2 MiB drops it with no split */
	sl_proc_touch(p, 0, 256, 512);
	CHECK_EQ(sl_proc_stats_get(p)->faults_anon[9], 1);  /* the page table stays */
	CHECK_PROC(p);
	CHECK_INVARIANTS(d);
	sl_proc_destroy(p);
	sl_device_destroy(d);
}

TEST(process_offset_swapin_aligns_on_the_address)
{
	sl_device *d = t_device("linux-6.18", 16384);
	/* 4 pages (16K) past a boundary: 64K folios at pages 12, 28, ... */
	sl_proc *p = proc_at(d, M(4), 64, 4);
	sl_proc_touch(p, 0, 12, 16);
	CHECK_EQ(sl_proc_stats_get(p)->faults_anon[4], 1);
	sl_proc_pageout(p, 0, 12, 16);
	CHECK_EQ(sl_proc_stats_get(p)->swpout[4], 1);
	CHECK_EQ(slot_of(p, 12), 512);
	/* slot 512 + 3 and address 16 + 3 agree modulo 16: swapped in whole */
	sl_proc_touch(p, 0, 15, 1);
	CHECK_EQ(sl_proc_stats_get(p)->swpin[4], 1);
	CHECK_INVARIANTS(d);
	CHECK_PROC(p);
	sl_proc_destroy(p);
	sl_device_destroy(d);
}

TEST(process_offset_matters_only_for_folios_larger_than_it_aligns)
{
	/* 64K alone: a 64K-multiple offset changes nothing; with 256K and 2M
	 * it moves the folios and so the layout */
	uint64_t h[4];
	const uint32_t offs[4] = { 0, 16, 0, 16 };
	const unsigned mthp[4] = { M(4), M(4), M(4) | M(6) | M(9), M(4) | M(6) | M(9) };
	for (int k = 0; k < 4; k++) {
		sl_device *d = t_device("linux-6.18", 16384);
		sl_proc *p = proc_at(d, mthp[k], 2048, offs[k]);
		sl_proc_touch(p, 0, 0, 2048);
		sl_proc_dontneed(p, 0, 96, 48);
		sl_proc_pageout(p, 0, 0, 2048);
		sl_proc_touch(p, 0, 80, 80);
		sl_proc_pageout(p, 0, 0, 2048);
		uint64_t *l = calloc(2048, sizeof(uint64_t));
		sl_proc_layout(p, l);
		h[k] = sl_layout_hash(l, 2048);
		free(l);
		CHECK_PROC(p);
		CHECK_INVARIANTS(d);
		sl_proc_destroy(p);
		sl_device_destroy(d);
	}
	CHECK_EQ(h[0], h[1]);
	CHECK(h[2] != h[3]);
}

/* docs/layout-hash.md's definition, a byte at a time */
static uint64_t fnv1a_bytes(const uint64_t *v, uint64_t n)
{
	uint64_t h = UINT64_C(0xcbf29ce484222325);
	for (uint64_t i = 0; i < n; i++)
		for (int b = 0; b < 8; b++)
			h = (h ^ ((v[i] >> (8 * b)) & 0xff)) * UINT64_C(0x100000001b3);
	return h;
}

TEST(process_layout_hash_equals_bytewise_fnv1a)
{
	/* entries of every byte length (zero bytes inside and on top), the
	 * not-swapped marker, zero, device types above 0; every prefix */
	uint64_t v[600];
	uint64_t x = 12345;
	for (int i = 0; i < 600; i++) {
		x = x * UINT64_C(6364136223846793005) + 1442695040888963407u;
		int bytes = i % 9;
		v[i] = bytes == 8 ? x : (x >> 11) & ((UINT64_C(1) << (8 * bytes)) - 1);
		if (i % 7 == 3)
			v[i] = SL_NOT_SWAPPED;
		if (i % 11 == 5)
			v[i] = sl_entry(i % 8, v[i] & 0xffff00ff);
	}
	for (uint64_t n = 0; n <= 600; n += (n < 20 ? 1 : 37))
		CHECK_EQ(sl_layout_hash(v, n), fnv1a_bytes(v, n));
}

TEST(process_layout_hash_equals_bytewise_fnv1a_on_every_device_size)
{
	/* a small device first (a few table rows), then entries past 2^16
	 * (the rows all filled, the entries above them); with and without
	 * the layout kept */
	const uint64_t slots[2] = { 4096, 81920 };
	const uint64_t pages[2] = { 3000, 72000 };
	for (int k = 0; k < 2; k++) {
		sl_device *d = t_device("linux-6.18", slots[k]);
		sl_proc *p = proc(d, M(4) | M(2), pages[k], SL_VMA_HUGEPAGE);
		uint64_t n = pages[k], swapped, swapped2, max = 0, unswapped = 0;
		sl_proc_touch(p, 0, 0, n);
		sl_proc_pageout(p, 0, 0, n);
		sl_proc_touch(p, 0, 100, 40);
		sl_proc_dontneed(p, 0, n - 300, 200);
		uint64_t *l = calloc(n, sizeof(uint64_t)), *l2 = calloc(n, sizeof(uint64_t));
		sl_proc_layout(p, l);
		for (uint64_t i = 0; i < n; i++) {
			if (l[i] == SL_NOT_SWAPPED)
				unswapped++;
			else if (l[i] > max)
				max = l[i];
		}
		CHECK(k == 0 ? max < 4096 : max >= 65536);
		CHECK(unswapped >= 240); /* the swap-ins and the dropped range */
		uint64_t h = sl_proc_layout_hash(p, l2, &swapped);
		CHECK_EQ(h, fnv1a_bytes(l, n));
		CHECK_EQ(sl_layout_hash(l, n), h);
		CHECK_EQ(memcmp(l, l2, n * sizeof(uint64_t)), 0);
		CHECK_EQ(sl_proc_layout_hash(p, NULL, &swapped2), h);
		CHECK_EQ(swapped, n - unswapped);
		CHECK_EQ(swapped2, swapped);
		free(l);
		free(l2);
		sl_proc_destroy(p);
		sl_device_destroy(d);
	}
}

static int keep_going(void *ctx, int it, const sl_iter_result *ir)
{
	(void)ctx;
	(void)it;
	(void)ir;
	return 0;
}

/* A run without an on_iter hook hashes its iterations' layouts four at a
 * time from 16-bit snapshots (run.c); with one, each at its end. Both give
 * every iteration the same hash and swapped count - on a device whose
 * entries all fit the snapshot, on a 1 GiB one (the codes' bound below its
 * tables' 2^16) with and without entries from 0xffff up (hashed at once),
 * with a second device (entries above 2^48), and for a count of iterations
 * that leaves a part batch - and the last one is the byte-wise FNV-1a of
 * the final layout. */
TEST(process_deferred_layout_hashes_equal_hashes_at_iteration_end)
{
	static const uint64_t sizes[] = { 64u << 20, 1024u << 20, 1024u << 20, 32u << 20 };
	static const uint64_t region[] = { 60u << 20, 60u << 20, 300u << 20, 60u << 20 };
	sl_run_hooks hooks = { .on_iter = keep_going };
	char msg[256];

	for (int k = 0; k < 4; k++) {
		sl_wl_params wp;
		sl_run_result a, b;
		sl_wl_defaults(&wp, SL_WL_THP_SWAP);
		wp.aligned_swapin = 1;
		wp.mthp_mask = M(2) | M(4) | M(8);
		wp.swap_bytes = sizes[k];
		wp.region_a_bytes = region[k];
		wp.iterations = 7;
		if (k == 3) {
			wp.nr_extra = 1;
			wp.extra[0] = (struct sl_swap_spec){ .bytes = 64u << 20, .kind = SL_DEV_ZRAM,
							     .prio = SL_PRIO_AUTO };
		}
		CHECK_EQ(sl_run(&wp, sl_policy_find("linux-6.18"), 0, &a, msg, sizeof(msg)), 0);
		CHECK_EQ(sl_run_hooked(&wp, sl_policy_find("linux-6.18"), 0, &hooks, &b, msg, sizeof(msg)),
			 0);
		for (int i = 0; i < wp.iterations; i++) {
			CHECK_EQ(a.iter[i].layout_hash, b.iter[i].layout_hash);
			CHECK_EQ(a.iter[i].swapped_pages, b.iter[i].swapped_pages);
			CHECK(a.iter[i].swapped_pages > 0);
		}
		CHECK_EQ(a.iter[wp.iterations - 1].layout_hash, sl_layout_hash(a.layout, a.npages));
		uint64_t h = UINT64_C(0xcbf29ce484222325);
		for (uint64_t i = 0; i < a.npages; i++)
			for (int byte = 0; byte < 8; byte++)
				h = (h ^ ((a.layout[i] >> (8 * byte)) & 0xff)) * UINT64_C(0x100000001b3);
		CHECK_EQ(a.iter[wp.iterations - 1].layout_hash, h);
		sl_run_result_free(&a);
		sl_run_result_free(&b);
	}
}
