/*
 * test_compact.c - the slot -> PTE reverse map (core/src/rmap.c) and
 * proposal-compact's step (core/policies/x_compact.c): a 64K folio that
 * finds no aligned free window takes one whose few entries are moved, each
 * PTE rewritten through the map. Device: 2048 slots = clusters 0..3, every
 * slot allocated at order 0, then freed to a pattern; PTEs are an array
 * here, one per slot, in the process model's encoding of a swap entry.
 */
#include <stdlib.h>
#include "t.h"
#include "swaplab/rmap.h"

#define M(k) (1u << (k))
#define NSLOTS 2048u
#define PTE_SWAP_BIT (UINT64_C(1) << 63)
/* The window the cases free: 1056..1071 in cluster 2, its used slots. */
#define WIN 1056u
static const uint64_t win_used[] = { 1059, 1063, 1068 };

typedef struct fixture {
	sl_device *d;
	sl_swapset *s;
	uint64_t pte[NSLOTS];
} fixture;

static int in_window(uint64_t off)
{
	return off >= WIN && off < WIN + 16;
}

static int is_win_used(uint64_t off)
{
	for (size_t i = 0; i < sizeof(win_used) / sizeof(win_used[0]); i++)
		if (win_used[i] == off)
			return 1;
	return 0;
}

/* A device of policy pol with every slot allocated at order 0, each held
 * by pte[slot] and known to the reverse map. */
static fixture *fixture_full_of(const char *pol)
{
	fixture *f = calloc(1, sizeof(*f));
	char msg[128];
	int prio = SL_PRIO_AUTO;

	f->d = t_device(pol, NSLOTS);
	f->s = sl_swapset_create(&f->d, &prio, 1, 0, msg, sizeof(msg));
	CHECK(f->d->rmap != NULL && f->s != NULL);
	ALLOC_N(f->d, 0, 0, NSLOTS - 1);
	for (uint64_t s = 1; s < NSLOTS; s++) {
		CHECK_EQ(f->d->map[s], 1);
		f->pte[s] = PTE_SWAP_BIT | s;
		sl_rmap_note_pte(f->s, &f->pte[s]);
	}
	return f;
}

static fixture *fixture_full(void)
{
	return fixture_full_of("proposal-compact");
}

/* fixture_full_of(pol), then, past the first `win` slots, every aligned
 * window of `win` slots keeps its first `keep` slots and frees the rest:
 * no aligned free range of `win` slots anywhere. */
static fixture *fixture_windows(const char *pol, uint32_t win, uint32_t keep)
{
	fixture *f = fixture_full_of(pol);

	for (uint64_t s = win; s < NSLOTS; s++) {
		if ((s & (win - 1)) >= keep) {
			f->pte[s] = 0;
			sl_swap_put(f->d, 0, s, 1);
		}
	}
	CHECK_INVARIANTS(f->d);
	return f;
}

/* Every slot allocated at order 0 and held by pte[slot]; then slots freed
 * (their PTEs zapped) so that the window keeps win_used and, with `others`,
 * every other aligned 16-slot window keeps 9 used slots (too many to move:
 * at most 8 for a 64K folio), else keeps all of them. */
static fixture *fixture_make(int others)
{
	fixture *f = fixture_full();

	for (uint64_t s = 16; s < NSLOTS; s++) {
		int drop = in_window(s) ? !is_win_used(s) : others && (s & 15) >= 9;
		if (drop) {
			f->pte[s] = 0; /* zap_pte_range(), then the slot's put */
			sl_swap_put(f->d, 0, s, 1);
			CHECK(sl_rmap_pte(f->d, s) == NULL);
		}
	}
	CHECK_INVARIANTS(f->d);
	return f;
}

/* The entries of slots [w, w + n) moved out of the window [w, w + win):
 * each one's PTE names a slot outside it, which the map names back. */
static void check_moved_out(const fixture *f, uint64_t w, uint32_t n, uint32_t win)
{
	for (uint64_t s = w; s < w + n; s++) {
		uint64_t to = f->pte[s] & SL_RMAP_ENTRY_MASK;
		CHECK(to < w || to >= w + win);
		CHECK(sl_rmap_pte(f->d, to) == &f->pte[s]);
	}
}

static void fixture_free(fixture *f)
{
	sl_swapset_destroy(f->s);
	sl_device_destroy(f->d);
	free(f);
}

TEST(compact_rmap_only_for_a_policy_that_asks)
{
	sl_device *d = t_device("linux-6.18", NSLOTS);
	sl_device *c = t_device("proposal-compact", NSLOTS);

	CHECK(d->rmap == NULL);
	CHECK(c->rmap != NULL && (c->pol->props & SL_POL_RMAP));
	for (int i = 0; sl_policies[i]; i++)
		CHECK(!(sl_policies[i]->props & SL_POL_RMAP) ==
		      (!!strcmp(sl_policies[i]->name, "proposal-compact") &&
		       !!strcmp(sl_policies[i]->name, "proposal-kcompact")));
	sl_device_destroy(d);
	sl_device_destroy(c);
}

TEST(compact_moves_the_windows_entries_and_takes_it)
{
	fixture *f = fixture_make(1);
	sl_device *d = f->d;

	/* no aligned 16-slot hole anywhere: proposal-holes-first falls back */
	CHECK_EQ(sl_swap_alloc(d, 1, 4), WIN);
	CHECK_EQ(d->st.compact_searches, 1);
	CHECK_EQ(d->st.compact_windows, 1);
	CHECK_EQ(d->st.compact_moves, 3);
	CHECK_EQ(d->st.compact_aborts, 0);
	/* the window is the folio's: 16 slots of one order-4 allocation */
	CHECK(sli_range_is(d, WIN, 16, 1));
	CHECK_EQ(d->shadow[WIN], 4 + 1);
	CHECK_EQ(d->ci[sli_cluster_of(WIN)].order, 4); /* an order-0 cluster adopted */
	for (size_t i = 0; i < 3; i++) {
		uint64_t old = win_used[i], pte = f->pte[old], to = pte & SL_RMAP_ENTRY_MASK;
		/* the PTE names a new slot outside the window, which the map
		 * names back; the PTE's kind bits are kept */
		CHECK(pte & PTE_SWAP_BIT);
		CHECK(!in_window(to) && to > 0 && to < NSLOTS);
		CHECK_EQ(d->map[to], 1);
		CHECK(sl_rmap_pte(d, to) == &f->pte[old]);
		/* the old slot is the folio's now, and no PTE holds it */
		CHECK(sl_rmap_pte(d, old) == NULL);
	}
	/* the three new slots: the order-0 allocator's next three, each the
	 * first free slot of a broken block from this CPU's cursor on */
	CHECK_EQ(f->pte[1059] & SL_RMAP_ENTRY_MASK, 25);
	CHECK_EQ(f->pte[1063] & SL_RMAP_ENTRY_MASK, 26);
	CHECK_EQ(f->pte[1068] & SL_RMAP_ENTRY_MASK, 27);
	/* every other slot's PTE is untouched */
	for (uint64_t s = 1; s < NSLOTS; s++)
		if (!is_win_used(s))
			CHECK(f->pte[s] == 0 || f->pte[s] == (PTE_SWAP_BIT | s));
	CHECK_INVARIANTS(d);
	fixture_free(f);
}

TEST(compact_never_moves_an_entry_the_map_does_not_know)
{
	fixture *f = fixture_make(1);
	sl_device *d = f->d;

	/* 1063's PTE unknown to the map (a slot the kernel could not find
	 * without a page-table walk): the window is not a candidate */
	sl_rmap_forget_ptes(f->s, &f->pte[1063], 1);
	CHECK_EQ(sl_swap_alloc(d, 1, 4), 0);
	CHECK_EQ(d->st.compact_searches, 1);
	CHECK_EQ(d->st.compact_windows, 0);
	CHECK_EQ(d->st.compact_moves, 0);
	for (size_t i = 0; i < 3; i++)
		CHECK_EQ(f->pte[win_used[i]], PTE_SWAP_BIT | win_used[i]);
	CHECK_INVARIANTS(d);
	fixture_free(f);
}

/* A charge callback standing for reclaim inside a swap-in fault's
 * charge: a 64K swap-out on the fixture's device; records the pin it saw. */
typedef struct pin_ctx {
	sl_device *d;
	uint64_t got;
	uint8_t seen[4]; /* the map at 1062, 1063, 16 and 19 meanwhile */
} pin_ctx;

static int charge_swaps_out_64k(void *ctx, sl_proc *p, int order)
{
	pin_ctx *c = ctx;

	(void)p;
	(void)order;
	c->seen[0] = c->d->map[1062];
	c->seen[1] = c->d->map[1063];
	c->seen[2] = c->d->map[16];
	c->seen[3] = c->d->map[19];
	c->got = sl_swap_alloc(c->d, 1, 4);
	return 0;
}

TEST(compact_a_swapin_charge_pins_its_own_entries_only)
{
	fixture *f = fixture_make(1);
	sl_device *d = f->d;
	pin_ctx c = { .d = d };

	/* the fault read 1063 (used, in the window): it carries SWAP_HAS_CACHE
	 * while the charge reclaims, so the window is no candidate and nothing
	 * moves */
	CHECK_EQ(sl_rmap_pin_charge(f->s, charge_swaps_out_64k, &c, NULL, 0, 1063, 1), 0);
	CHECK_EQ(c.seen[0], 0); /* free, untouched */
	CHECK_EQ(c.seen[1], 1 | SL_SLOT_CACHE);
	CHECK_EQ(c.got, 0);
	CHECK_EQ(d->st.compact_moves, 0);
	CHECK_EQ(d->map[1063], 1); /* the pin ends with the charge */
	for (size_t i = 0; i < 3; i++)
		CHECK_EQ(f->pte[win_used[i]], PTE_SWAP_BIT | win_used[i]);
	/* a 32K fault that read entries elsewhere (16..23, a large folio's
	 * eight bytes at a time) pins only those: the window's three entries
	 * move and the folio takes it */
	CHECK_EQ(sl_rmap_pin_charge(f->s, charge_swaps_out_64k, &c, NULL, 3, 16, 8), 0);
	CHECK_EQ(c.seen[2], 1 | SL_SLOT_CACHE);
	CHECK_EQ(c.seen[3], 1 | SL_SLOT_CACHE);
	CHECK_EQ(c.got, WIN);
	CHECK_EQ(d->st.compact_moves, 3);
	for (uint64_t s = 16; s < 24; s++)
		CHECK_EQ(d->map[s], 1); /* unpinned, nothing else changed */
	/* an anonymous fault's charge (nr 0) pins nothing, whatever e says */
	CHECK_EQ(sl_rmap_pin_charge(f->s, charge_swaps_out_64k, &c, NULL, 0, 16, 0), 0);
	CHECK_EQ(c.seen[2], 1);
	CHECK_INVARIANTS(d);
	fixture_free(f);
}

TEST(compact_gives_up_when_no_slot_is_left_for_a_move)
{
	/* every other slot in use: the window's 13 free slots are the only
	 * free ones, pinned while the moves run, so the first move finds no
	 * order-0 slot */
	fixture *f = fixture_make(0);
	sl_device *d = f->d;
	uint64_t inuse = d->inuse_pages;

	CHECK_EQ(inuse, NSLOTS - 1 - 13);
	CHECK_EQ(sl_swap_alloc(d, 1, 4), 0);
	CHECK_EQ(d->st.compact_searches, 1);
	CHECK_EQ(d->st.compact_aborts, 1);
	CHECK_EQ(d->st.compact_moves, 0);
	CHECK_EQ(d->inuse_pages, inuse); /* the pins are gone again */
	for (uint64_t s = WIN; s < WIN + 16; s++)
		CHECK_EQ(d->map[s], is_win_used(s) ? 1 : 0);
	CHECK_INVARIANTS(d);
	fixture_free(f);
}

/* Every mTHP order below PMD may have half its window moved: 16 of 32
 * slots for a 128K folio (order 5; revision 2), 8 of 16 for 64K and 2 of 4
 * for 16K (revision 4); PMD a quarter (x_compact.c cp_max_moves()). On a
 * nearly full device the free space sits in parts of windows, beside the
 * smaller folios that took the rest. fixture_windows(pol, win, keep): every
 * aligned window of `win` slots past the first keeps `keep` used slots. */
static void check_window_bound(int order, uint32_t keep)
{
	uint32_t win = 1u << order;
	fixture *f = fixture_windows("proposal-compact", win, keep);
	sl_device *d = f->d;
	uint64_t w = sl_swap_alloc(d, 1, order);

	/* every window past the first has `keep` used slots: one is taken */
	CHECK(w >= win && w % win == 0);
	CHECK_EQ(d->st.compact_windows, 1);
	CHECK_EQ(d->st.compact_moves, keep);
	CHECK_EQ(d->st.compact_aborts, 0);
	CHECK(sli_range_is(d, w, win, 1));
	check_moved_out(f, w, keep, win);
	CHECK_INVARIANTS(d);
	fixture_free(f);

	/* one more used slot in every window: past the bound, the folio
	 * falls back and nothing moves */
	f = fixture_windows("proposal-compact", win, keep + 1);
	d = f->d;
	CHECK_EQ(sl_swap_alloc(d, 1, order), 0);
	CHECK_EQ(d->st.compact_searches, 1);
	CHECK_EQ(d->st.compact_moves, 0);
	CHECK_INVARIANTS(d);
	fixture_free(f);
}

TEST(compact_moves_half_a_128k_window)
{
	check_window_bound(5, 16);
}

TEST(compact_moves_half_a_64k_window)
{
	check_window_bound(4, 8);
}

TEST(compact_moves_half_a_16k_window)
{
	check_window_bound(2, 2);
}

TEST(compact_moves_a_quarter_of_a_pmd_window)
{
	check_window_bound(9, 128);
}

/* The process model keeps the map: swap-out sets it, a swap-in or
 * MADV_DONTNEED (the slot's put) clears it, exit clears what is left. */
TEST(compact_rmap_follows_the_process_ptes)
{
	sl_device *d = t_device("proposal-compact", NSLOTS);
	sl_region_spec r = { .npages = 64 };
	sl_proc *p = sl_proc_create(d, 0, 0, SL_SWAPIN_LARGE, &r, 1);
	uint64_t lay[64];
	char msg[160];
	int mapped = 0;

	sl_proc_touch(p, 0, 0, 64);
	sl_proc_pageout(p, 0, 0, 64);
	sl_proc_layout(p, lay);
	for (int i = 0; i < 64; i++)
		mapped += lay[i] != SL_NOT_SWAPPED && sl_rmap_pte(d, lay[i]) != NULL;
	CHECK_EQ(mapped, 64);
	CHECK_EQ(sl_proc_check(p, 1, msg, sizeof(msg)), 0);
	sl_proc_touch(p, 0, 0, 16);       /* swap-in */
	sl_proc_dontneed(p, 0, 16, 16);   /* zap */
	for (int i = 0; i < 32; i++)
		CHECK(sl_rmap_pte(d, lay[i]) == NULL);
	for (int i = 32; i < 64; i++)
		CHECK(sl_rmap_pte(d, lay[i]) != NULL);
	CHECK_EQ(sl_proc_check(p, 1, msg, sizeof(msg)), 0);
	CHECK_INVARIANTS(d);
	sl_proc_destroy(p); /* its slots stay in use here, their PTEs gone */
	for (int i = 32; i < 64; i++)
		CHECK(sl_rmap_pte(d, lay[i]) == NULL);
	CHECK_INVARIANTS(d);
	sl_device_destroy(d);
}

/* The map is noted at the end of each MADV_PAGEOUT step, in the pages its
 * queued folios cover (process.c proc_rmap_queued()), not over the whole
 * step: after a second pageout of a region mostly out already - folios
 * swapped in here and there, one range split by a pageout that covers
 * part of a folio - every swap PTE is still named by the map (R2) and
 * every back pointer names a PTE that holds its slot (R1). */
TEST(compact_rmap_exact_after_pageouts_of_a_region_partly_out)
{
	enum { N = 1024 };
	sl_device *d = t_device("proposal-compact", 4 * NSLOTS);
	sl_region_spec r = { .npages = N };
	sl_proc *p = sl_proc_create(d, 0, M(4), SL_SWAPIN_LARGE, &r, 1);
	static uint64_t lay[N];
	uint64_t swapped = 0, mapped = 0, slots = (uint64_t)d->nr_clusters * SL_CLUSTER;
	char msg[160];

	sl_proc_touch(p, 0, 0, N);
	sl_proc_pageout(p, 0, 0, N);
	sl_proc_touch(p, 0, 16, 16);   /* folios swapped in again */
	sl_proc_touch(p, 0, 600, 8);
	sl_proc_touch(p, 0, 1000, 24);
	sl_proc_pageout(p, 0, 600, 10); /* part of a folio: split */
	sl_proc_pageout(p, 0, 0, N);
	sl_proc_layout(p, lay);
	for (int i = 0; i < N; i++) {
		if (lay[i] == SL_NOT_SWAPPED)
			continue;
		swapped++;
		CHECK(sl_rmap_pte(d, lay[i]) != NULL);
	}
	for (uint64_t s = 0; s < slots; s++)
		mapped += sl_rmap_pte(d, s) != NULL;
	CHECK_EQ(swapped, N);
	CHECK_EQ(mapped, swapped); /* no back pointer left over */
	CHECK_EQ(sl_proc_check(p, 1, msg, sizeof(msg)), 0);
	CHECK_INVARIANTS(d); /* R1 (the policy's check) */
	sl_proc_destroy(p);
	sl_device_destroy(d);
}

/* A whole thp-swap run with compaction (-s, 32K/64K/128K: entries moved):
 * after the warm-up and after every iteration the map is exact both ways,
 * R1 (each back pointer's PTE holds its slot) and R2 (each swap PTE is the
 * one its slot's back pointer names). */
TEST(compact_rmap_exact_through_a_thp_swap_run_with_moves)
{
	sl_wl_params wp;
	sl_run_result res;
	char msg[256];

	sl_wl_defaults(&wp, SL_WL_THP_SWAP);
	wp.small_folios = 1;
	wp.mthp_mask = M(3) | M(4) | M(5);
	wp.iterations = 30;
	CHECK_EQ(sl_run(&wp, sl_policy_find("proposal-compact"), 1, &res, msg, sizeof(msg)), 0);
	CHECK_EQ(res.checks, 1 + 30); /* the warm-up's end, each iteration's */
	CHECK(res.dev.compact_moves > 0);
	CHECK(res.dev.compact_windows > 0);
	sl_run_result_free(&res);
}

/* proposal-compact's order 0 goes straight to proposal-holes' op, past
 * holes-first's, which forwards it there unchanged (x_compact.c
 * cp_alloc_det()): on twin devices under a random order-0 churn of
 * allocations and frees, compact and holes-first give the same slots and
 * keep the same maps, clusters, lists, cursors and counters. If
 * holes-first's order 0 ever becomes its own, this fails and compact's
 * shortcut must go. */
TEST(compact_order0_is_holes_first)
{
	static const char *const kinds[] = { "zram", "ssd-discard", "hdd" };
	enum { SLOTS = 8 * SL_CLUSTER - 100, STEPS = 400 };
	static uint64_t held[SLOTS];
	char msg[256];

	for (size_t ki = 0; ki < sizeof(kinds) / sizeof(kinds[0]); ki++) {
		int ok;
		unsigned kind = sl_device_kind(kinds[ki], &ok);
		sl_device *a = sl_device_create(SLOTS, kind, 2, sl_policy_find("proposal-holes-first"), 1,
						msg, sizeof(msg));
		sl_device *b = sl_device_create(SLOTS, kind, 2, sl_policy_find("proposal-compact"), 1,
						msg, sizeof(msg));
		uint32_t nheld = 0, bad = 0;
		sl_rng rng;

		CHECK(a != NULL && b != NULL);
		if (!a || !b)
			break;
		sl_rng_init(&rng, SL_RNG_DEFAULT, 11);
		for (int step = 0; step < STEPS && !bad; step++) {
			uint32_t cpu = sl_rng_below(&rng, 2);
			if (sl_rng_below(&rng, 3)) {
				/* up to a cluster's worth, through full device */
				for (uint32_t n = 1 + sl_rng_below(&rng, SL_CLUSTER); n; n--) {
					uint64_t off = sl_swap_alloc(a, (int)cpu, 0);
					bad += off != sl_swap_alloc(b, (int)cpu, 0);
					if (off)
						held[nheld++] = off;
				}
			} else {
				for (uint32_t k = nheld / 3 + 1; k && nheld; k--) {
					uint32_t j = sl_rng_below(&rng, nheld);
					sl_swap_put(a, (int)cpu, held[j], 1);
					sl_swap_put(b, (int)cpu, held[j], 1);
					held[j] = held[--nheld];
				}
				a->pol->tick(a);
				b->pol->tick(b);
			}
			bad += !t_same_device_state(a, b);
		}
		if (bad)
			fprintf(stderr, "  %s: compact's order 0 differs from holes-first's\n", kinds[ki]);
		CHECK_EQ(bad, 0);
		CHECK_INVARIANTS(b);
		sl_device_destroy(a);
		sl_device_destroy(b);
	}
}

/* proposal-compact's window search, slot by slot as it was first written:
 * every window's used slots counted to its end, a window taken when all
 * of them are movable and they are fewer than the best so far, the scan
 * ended once the best is a single slot. */
static uint64_t ref_best_window(const sl_device *d, uint32_t c, int order, uint32_t best,
				uint32_t *used)
{
	uint32_t nr = 1u << order;
	uint64_t start = (uint64_t)c * SL_CLUSTER, found = 0;

	if (d->ci[c].count + nr > SL_CLUSTER + best - 1)
		return 0;
	for (uint64_t w = start; w < start + SL_CLUSTER && best > 1; w += nr) {
		uint32_t u = 0;
		int ok = w + nr <= d->max;
		for (uint32_t i = 0; i < nr; i++) {
			if (d->map[w + i] == SL_SLOT_FREE)
				continue;
			u++;
			ok &= d->map[w + i] == 1 && d->rmap[w + i] != NULL;
		}
		if (ok && u < best) {
			best = u;
			found = w;
		}
	}
	if (found)
		*used = best;
	return found;
}

/* The word-at-a-time search (x_compact.c sl_compact_best_window()) picks
 * the same window as the slot-by-slot one, on random slot maps: each
 * 8-slot block free, used or mixed at a random density (at least the
 * map's own: some maps are dense, with few windows to take), a used slot
 * mostly count 1 with a known PTE, else shared, cached, bad or unknown to
 * the map; the last cluster often cut by the device's end (its padding
 * left random: the search must not count on it being BAD); every
 * order 1..9 and bounds from 1 to past the policy's. */
TEST(compact_window_search_matches_slot_by_slot)
{
	enum { NCL = 4, MAPS = 2000, QUERIES = 60 };
	/* used but not movable; 0x80 and 0xff (COUNT_CONTINUED, never
	 * modelled) for a word test that must see every bit */
	static const uint8_t odd[] = { 2, SL_SLOT_CACHE, SL_SLOT_CACHE | 1, SL_SLOT_BAD, SL_SLOT_MAX,
				       0x80, 0xff };
	static uint8_t map[NCL * SL_CLUSTER];
	static uint64_t *rmap[NCL * SL_CLUSTER];
	sl_cluster ci[NCL];
	sl_device d;
	uint64_t pte = 0;
	uint32_t picks = 0, misses = 0, diff = 0;
	sl_rng rng;

	memset(&d, 0, sizeof(d));
	d.map = map;
	d.rmap = rmap;
	d.ci = ci;
	d.nr_clusters = NCL;
	sl_rng_init(&rng, SL_RNG_DEFAULT, 21);
	for (int m = 0; m < MAPS; m++) {
		d.max = NCL * SL_CLUSTER - (sl_rng_below(&rng, 2) ? sl_rng_below(&rng, SL_CLUSTER) : 0);
		uint32_t floor = sl_rng_below(&rng, 9); /* dense maps too: few windows fit */
		memset(ci, 0, sizeof(ci));
		for (uint32_t b = 0; b < NCL * SL_CLUSTER; b += 8) {
			/* per block: used in eighths, from the map's floor up */
			uint32_t dens = floor + sl_rng_below(&rng, 9 - floor);
			for (uint32_t s = b; s < b + 8; s++) {
				int isused = sl_rng_below(&rng, 8) < dens;
				uint32_t kind = sl_rng_below(&rng, 40);
				map[s] = !isused ? SL_SLOT_FREE :
					 kind < 38 ? 1 : odd[sl_rng_below(&rng, sizeof(odd))];
				rmap[s] = map[s] != SL_SLOT_FREE && sl_rng_below(&rng, 64) ? &pte : NULL;
				ci[s / SL_CLUSTER].count += map[s] != SL_SLOT_FREE;
			}
		}
		if (sl_rng_below(&rng, 4) == 0) {
			/* the cut cluster used up to its last t slots before the
			 * end, free from there: only a window past the end is free */
			uint64_t t = sl_rng_below(&rng, 4), s0 = (NCL - 1) * SL_CLUSTER;
			for (uint64_t s = s0; s < NCL * SL_CLUSTER; s++) {
				map[s] = s + t < d.max ? 1 : SL_SLOT_FREE;
				rmap[s] = map[s] ? &pte : NULL;
			}
			ci[NCL - 1].count = (uint16_t)(d.max - t > s0 ? d.max - t - s0 : 0);
		}
		for (int q = 0; q < QUERIES; q++) {
			/* the cut cluster half the time */
			uint32_t c = sl_rng_below(&rng, 2) ? NCL - 1 : sl_rng_below(&rng, NCL), ua = 77, ub = 77;
			int order = 1 + (int)sl_rng_below(&rng, 9);
			uint32_t nr = 1u << order, lim = order >= 5 && order < 9 ? nr / 2 : nr / 4 ? nr / 4 : 1;
			uint32_t best = 1 + sl_rng_below(&rng, sl_rng_below(&rng, 2) ? lim + 1 : nr + 1);
			uint64_t a = ref_best_window(&d, c, order, best, &ua);
			uint64_t b = sl_compact_best_window(&d, c, order, best, &ub);
			if (a != b || ua != ub) {
				if (diff++ < 5)
					fprintf(stderr, "  map %d cluster %u order %d best %u: slot by slot %llu (%u), "
						"word at a time %llu (%u)\n", m, c, order, best,
						(unsigned long long)a, ua, (unsigned long long)b, ub);
			}
			picks += a != 0;
			misses += a == 0;
		}
	}
	CHECK_EQ(diff, 0);
	/* the maps are neither all hits nor all misses */
	CHECK(picks > MAPS * QUERIES / 10);
	CHECK(misses > MAPS * QUERIES / 10);
}

/* proposal-kcompact's worker: 9 used slots in every 64K window, one past
 * the allocation-time step's bound (8) and within the worker's (12), so
 * the first 64K folio falls back under both policies. The fallback wakes
 * kcompact's worker, which runs at the next allocation boundary: it frees
 * one window of 16 slots, its 9 entries moved (counted apart from the
 * step's moves), and the next 64K folio takes it without an
 * allocation-time move.
 * proposal-compact, which has no worker, falls back again. */
TEST(compact_kcompact_worker_frees_windows_after_a_fallback)
{
	const char *const pols[] = { "proposal-compact", "proposal-kcompact" };

	for (int i = 0; i < 2; i++) {
		fixture *f = fixture_windows(pols[i], 16, 9);
		sl_device *d = f->d;

		CHECK_EQ(sl_swap_alloc(d, 1, 4), 0);
		CHECK_EQ(d->st.compact_searches, 1);
		CHECK_EQ(d->st.compact_moves, 0);
		CHECK_EQ(d->st.kcompact_moves, 0); /* not inside the failing allocation */
		uint64_t w = sl_swap_alloc(d, 1, 4);
		if (i == 0) {
			CHECK_EQ(w, 0);
			CHECK_EQ(d->st.kcompact_wakes, 0);
		} else {
			CHECK(w != 0 && w % 16 == 0);
			CHECK_EQ(d->st.kcompact_wakes, 1);
			CHECK_EQ(d->st.kcompact_windows, 1);
			CHECK_EQ(d->st.kcompact_moves, 9);
			CHECK_EQ(d->st.compact_moves, 0); /* the step had nothing to do */
			CHECK_EQ(d->st.compact_searches, 1);
			CHECK(sli_range_is(d, w, 16, 1));
			/* every moved entry's PTE names its new slot, outside w */
			check_moved_out(f, w, 9, 16);
		}
		CHECK_INVARIANTS(d);
		fixture_free(f);
	}
}

/* The worker's bound: at most 3/4 of a window's slots moved (12 of 16).
 * With 13 used slots in every 64K window it moves nothing; it stays
 * woken for that order, and tries again only once the device has 16 free
 * slots more than at its fruitless try. Its tick (between workload
 * operations) is where that later try runs. */
TEST(compact_kcompact_worker_bounded_and_retried_when_room_grows)
{
	fixture *f = fixture_windows("proposal-kcompact", 16, 13);
	sl_device *d = f->d;

	CHECK_EQ(sl_swap_alloc(d, 1, 4), 0);
	CHECK_EQ(sl_swap_alloc(d, 1, 4), 0); /* the worker ran first: nothing in bound */
	CHECK_EQ(d->st.kcompact_wakes, 1);
	CHECK_EQ(d->st.kcompact_moves, 0);
	d->pol->tick(d); /* no more room than at its try: nothing scanned */
	CHECK_EQ(d->st.kcompact_moves, 0);
	/* 16 windows down to 12 used slots (the 16 slots freed are the room
	 * it waited for): the tick's try frees one of them */
	for (uint64_t s = 1024; s < 1024 + 256; s += 16) {
		f->pte[s + 12] = 0;
		sl_swap_put(d, 0, s + 12, 1);
	}
	d->pol->tick(d);
	CHECK_EQ(d->st.kcompact_moves, 12);
	CHECK_EQ(d->st.kcompact_windows, 1);
	int free16 = 0;
	for (uint64_t s = 1024; s < 1024 + 256; s += 16)
		free16 += sli_range_free(d, s, 16);
	CHECK_EQ(free16, 1);
	CHECK_INVARIANTS(d);
	fixture_free(f);
}
