/*
 * test_swapcache.c - swap-in through the swap cache on a device without
 * SWP_SYNCHRONOUS_IO (process.c, swap_ra.c): one test per rule W1-W3 and
 * S1-S6 of docs/reclaim.md, with the exact counts each must give.
 */
#include <stdlib.h>
#include "t_memcg.h"
#include "swaplab/swap_ra.h"

#define SSD (SL_DEV_BLKDEV | SL_DEV_SOLIDSTATE)

/* One process of npages (4K pages only) in a group of 4096 pages over a
 * device of `kind` with `slots`; every page written, then paged out
 * (MADV_PAGEOUT: slots 1 .. npages in page order). */
static void sfx_init(fx *f, unsigned kind, uint64_t slots, uint64_t npages)
{
	char msg[128] = "";
	int prio = SL_PRIO_AUTO;
	sl_region_spec r = { .npages = npages };

	f->d = sl_device_create(slots, kind, 4, sl_policy_find("linux-6.18"), 1, msg, sizeof(msg));
	f->s = f->d ? sl_swapset_create(&f->d, &prio, 1, 1, msg, sizeof(msg)) : NULL;
	f->m = f->s ? sl_memcg_create(4096, 4, f->s) : NULL;
	f->p = f->m ? sl_proc_create_set(f->s, 0, 0, SL_SWAPIN_LARGE, &r, 1) : NULL;
	if (!f->p)
		fprintf(stderr, "  fixture: %s\n", msg);
	CHECK(f->p && !sl_memcg_attach(f->m, f->p, 0));
	sl_proc_touch(f->p, 0, 0, npages);
	sl_proc_pageout(f->p, 0, 0, npages);
	CHECK_EQ(sl_set_inuse(f->s), npages);
}

static void sfx_fini(fx *f)
{
	sl_proc_dontneed(f->p, 0, 0, sl_proc_npages(f->p));
	CHECK_EQ(sl_set_inuse(f->s), 0);
	fx_fini(f);
}

static const sl_proc_stats *pst(fx *f) { return sl_proc_stats_get(f->p); }

static uint64_t entry_of(fx *f, uint64_t pg)
{
	uint64_t *l = malloc(sl_proc_npages(f->p) * sizeof(*l)), e;
	sl_proc_layout(f->p, l);
	e = l[pg];
	free(l);
	return e;
}

/* W1: hits + 2 rounded up to a power of two (at least 4), one page without
 * hits unless the fault is next to the last one (2), at most 8
 * (page-cluster 3), never below half the last window. */
TEST(swapcache_w1_window_size_from_hits_adjacency_and_the_last_window)
{
	CHECK_EQ(sl_swapin_nr_pages(100, 300, 0, 8, 0), 1);
	CHECK_EQ(sl_swapin_nr_pages(100, 101, 0, 8, 0), 2);
	CHECK_EQ(sl_swapin_nr_pages(100, 99, 0, 8, 0), 2);
	CHECK_EQ(sl_swapin_nr_pages(100, 300, 1, 8, 0), 4);
	CHECK_EQ(sl_swapin_nr_pages(100, 300, 3, 8, 0), 8);
	CHECK_EQ(sl_swapin_nr_pages(100, 300, 40, 8, 0), 8);
	CHECK_EQ(sl_swapin_nr_pages(100, 300, 0, 8, 8), 4);
	CHECK_EQ(sl_swapin_nr_pages(100, 300, 0, 8, 3), 1);
}

/* W2: a VMA that never faulted reads 8 pages centred on the fault; then
 * the window follows the fault's direction, clipped to the VMA and the
 * fault's page table (PMD). W3: a hit adds one, a read resets the hits. */
TEST(swapcache_w2_w3_window_placement_and_hits)
{
	sl_swap_ra ra = { 0, 0, 0 };
	uint64_t s = 0, e = 0;

	CHECK_EQ(sl_swap_vma_ra_win(&ra, 1000, 600, 1400, &s, &e), 8);
	CHECK_EQ(s, 997);
	CHECK_EQ(e, 1005);
	/* next page up, no hits: 2, but not below half of 8 */
	CHECK_EQ(sl_swap_vma_ra_win(&ra, 1001, 600, 1400, &s, &e), 4);
	CHECK_EQ(s, 1001);
	CHECK_EQ(e, 1005);
	/* next page down: the window ends at the fault */
	CHECK_EQ(sl_swap_vma_ra_win(&ra, 1000, 600, 1400, &s, &e), 2);
	CHECK_EQ(s, 999);
	CHECK_EQ(e, 1001);
	/* far away, no hits: one page */
	CHECK_EQ(sl_swap_vma_ra_win(&ra, 1200, 600, 1400, &s, &e), 1);
	/* two hits since: 4 pages, centred, clipped to the PMD 1024..1535 */
	sl_swap_update_readahead(&ra, 1300, 1);
	sl_swap_update_readahead(&ra, 1301, 1);
	sl_swap_update_readahead(&ra, 1302, 0);
	CHECK_EQ(ra.hits, 2);
	CHECK_EQ(ra.addr, 1302);
	CHECK_EQ(sl_swap_vma_ra_win(&ra, 1025, 600, 1400, &s, &e), 4);
	CHECK_EQ(s, 1024);
	CHECK_EQ(e, 1028);
	CHECK_EQ(ra.hits, 0);
	/* clipped to the VMA's end */
	sl_swap_ra fresh = { 0, 0, 0 };
	CHECK_EQ(sl_swap_vma_ra_win(&fresh, 1398, 600, 1400, &s, &e), 8);
	CHECK_EQ(s, 1395);
	CHECK_EQ(e, 1400);
	/* hits stop at 63 */
	for (int i = 0; i < 100; i++)
		sl_swap_update_readahead(&fresh, 1399, 1);
	CHECK_EQ(fresh.hits, SL_SWAP_RA_HITS_MAX);
}

/* S1, S2: a read fault reads its window's swapped pages into the swap
 * cache, order 0, and keeps every slot; a later fault on a read-ahead page
 * is a hit that reads nothing; a write fault frees the slot. */
TEST(swapcache_s1_s2_read_fault_reads_the_window_and_keeps_the_slots)
{
	fx f;
	sfx_init(&f, SSD, 4096, 64);
	uint64_t e10 = entry_of(&f, 10);
	sl_proc_read(f.p, 0, 10, 1);
	CHECK_EQ(pst(&f)->swpin[0], 8);    /* pages 7..14 */
	CHECK_EQ(pst(&f)->swap_ra, 7);
	CHECK_EQ(sl_set_inuse(f.s), 64);   /* the swap cache holds page 10's slot */
	CHECK_EQ(entry_of(&f, 10), SL_NOT_SWAPPED);
	CHECK_EQ(entry_of(&f, 7) + 3, e10); /* read ahead: still its swap PTE */
	CHECK(sl_proc_page_folio(f.p, 0, 7) != 0);
	CHECK_EQ(sl_proc_page_folio(f.p, 0, 15), 0);
	sl_memcg_state st;
	sl_memcg_state_get(f.m, &st);
	CHECK_EQ(st.nr_inactive, 8);       /* the batch drained after the readahead */
	FX_CHECK(&f);
	sl_proc_read(f.p, 0, 11, 1);
	CHECK_EQ(pst(&f)->swpin[0], 8);
	CHECK_EQ(pst(&f)->swap_ra_hit, 1);
	CHECK_EQ(sl_set_inuse(f.s), 64);
	sl_proc_touch(f.p, 0, 12, 1);      /* a write fault on a read-ahead page */
	CHECK_EQ(pst(&f)->swap_ra_hit, 2);
	CHECK_EQ(sl_set_inuse(f.s), 63);
	FX_CHECK(&f);
	sfx_fini(&f);
}

/* S2: with over half of swap in use (vm_swap_full()) a read fault frees
 * the slot too. */
TEST(swapcache_s2_read_fault_frees_the_slot_when_swap_is_full)
{
	fx f;
	sfx_init(&f, SSD, 600, 320);       /* 320 of 599 slots in use */
	CHECK(sl_vm_swap_full(f.d));
	sl_proc_read(f.p, 0, 10, 1);
	CHECK_EQ(pst(&f)->swpin[0], 8);
	CHECK_EQ(sl_set_inuse(f.s), 319);
	FX_CHECK(&f);
	sfx_fini(&f);
}

/* S3: reclaiming a folio that is in the swap cache allocates nothing: a
 * clean one goes back to its swap PTE unwritten, a dirty one is written
 * to the same slot. */
TEST(swapcache_s3_reclaim_keeps_the_slot_writes_only_a_dirty_folio)
{
	fx f;
	sfx_init(&f, SSD, 4096, 64);
	uint64_t e10 = entry_of(&f, 10), e40 = entry_of(&f, 40);
	uint64_t allocs = f.d->st.alloc_ok[0], out = pst(&f)->swpout[0];
	sl_proc_read(f.p, 0, 10, 1);
	CHECK_EQ(sl_proc_reclaim_folio(f.p, sl_proc_page_folio(f.p, 0, 10), 0), 1); /* freed unwritten */
	CHECK_EQ(entry_of(&f, 10), e10);
	CHECK_EQ(pst(&f)->swpout[0], out);
	CHECK_EQ(pst(&f)->swapcache_clean, 1);
	sl_proc_read(f.p, 0, 40, 1);
	sl_proc_touch(f.p, 0, 40, 1);      /* a store to the mapped, clean folio */
	CHECK_EQ(sl_proc_reclaim_folio(f.p, sl_proc_page_folio(f.p, 0, 40), 0), 0);
	CHECK_EQ(entry_of(&f, 40), e40);
	CHECK_EQ(pst(&f)->swpout[0], out + 1);
	CHECK_EQ(pst(&f)->swapcache_clean, 1);
	CHECK_EQ(f.d->st.alloc_ok[0], allocs);
	CHECK_EQ(sl_set_inuse(f.s), 64);
	FX_CHECK(&f);
	sfx_fini(&f);
}

/* S4: read-ahead pages nobody faulted have no young PTE: the first scan
 * frees them without a write; the faulting page is young and kept. */
TEST(swapcache_s4_unused_readahead_pages_go_at_the_first_scan)
{
	fx f;
	sfx_init(&f, SSD, 4096, 64);
	sl_proc_read(f.p, 0, 10, 1);
	CHECK_EQ(sl_memcg_shrink_inactive_list(f.m, 32), 7);
	CHECK_EQ(pst(&f)->swapcache_clean, 7);
	CHECK_EQ(pst(&f)->swpout[0], 64);
	CHECK_EQ(sl_set_inuse(f.s), 64);
	CHECK_EQ(sl_proc_page_folio(f.p, 0, 9), 0);
	CHECK(sl_proc_page_folio(f.p, 0, 10) != 0);
	FX_CHECK(&f);
	sfx_fini(&f);
}

/* S5: activate_locked frees an activated swap-cache folio's slot only when
 * swap is over half full. */
TEST(swapcache_s5_activation_frees_the_slot_when_swap_is_full)
{
	fx f;
	sfx_init(&f, SSD, 1024, 64);
	sl_proc_read(f.p, 0, 10, 1);
	uint32_t id = sl_proc_page_folio(f.p, 0, 10);
	sl_proc_activate_swapcache(f.p, id);
	CHECK_EQ(sl_set_inuse(f.s), 64);
	/* 448 more slots: 512 of 1023 in use */
	uint64_t more[28];
	for (int i = 0; i < 28; i++) {
		more[i] = sl_swap_alloc(f.d, 1, 4);
		CHECK(more[i] != 0);
	}
	CHECK(sl_vm_swap_full(f.d));
	sl_proc_activate_swapcache(f.p, id);
	CHECK_EQ(sl_set_inuse(f.s), 511);
	sl_proc_activate_swapcache(f.p, sl_proc_page_folio(f.p, 0, 9)); /* read ahead: its PTE holds the slot */
	CHECK_EQ(sl_set_inuse(f.s), 511);
	for (int i = 0; i < 28; i++)
		sl_swap_put(f.d, 1, more[i], 16);
	FX_CHECK(&f);
	sfx_fini(&f);
}

/* S6: unmapping frees a mapped swap-cache folio with its slot, and a read-
 * ahead folio with its swap PTE's slot. */
TEST(swapcache_s6_unmap_frees_cached_folios_and_their_slots)
{
	fx f;
	sfx_init(&f, SSD, 4096, 64);
	sl_proc_read(f.p, 0, 10, 1);
	sl_proc_dontneed(f.p, 0, 8, 4);    /* pages 8..11: read ahead, faulted, read ahead */
	CHECK_EQ(sl_set_inuse(f.s), 60);
	CHECK_EQ(sl_proc_page_folio(f.p, 0, 9), 0);
	CHECK(sl_proc_page_folio(f.p, 0, 12) != 0);
	sl_memcg_state st;
	sl_memcg_state_get(f.m, &st);
	CHECK_EQ(st.nr_inactive, 4);       /* 7, 12, 13, 14 */
	FX_CHECK(&f);
	sfx_fini(&f);
}

/* zram (SWP_SYNCHRONOUS_IO) bypasses the swap cache: the faulting page
 * alone, its slot freed at once; a rotational device reads the faulting
 * page alone through the swap cache (cluster readahead: not modelled). */
TEST(swapcache_zram_bypasses_it_hdd_reads_one_page)
{
	fx f;
	sfx_init(&f, SL_DEV_ZRAM, 4096, 64);
	sl_proc_read(f.p, 0, 10, 1);
	CHECK_EQ(pst(&f)->swpin[0], 1);
	CHECK_EQ(pst(&f)->swap_ra, 0);
	CHECK_EQ(sl_set_inuse(f.s), 63);
	FX_CHECK(&f);
	sfx_fini(&f);
	sfx_init(&f, SL_DEV_BLKDEV, 4096, 64);
	sl_proc_read(f.p, 0, 10, 1);
	CHECK_EQ(pst(&f)->swpin[0], 1);
	CHECK_EQ(pst(&f)->swap_ra, 0);
	CHECK_EQ(sl_set_inuse(f.s), 64);
	FX_CHECK(&f);
	sfx_fini(&f);
}
