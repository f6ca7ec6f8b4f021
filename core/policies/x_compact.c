/*
 * x_compact.c - policy "proposal-compact": proposal-holes-first, plus one
 * step before an mTHP folio falls back: compaction of swapped-out entries
 * out of one aligned window of a fragmented cluster.
 *
 * When proposal-holes-first's folio_alloc_swap() finds no aligned free
 * range of 2^order slots, 6.18's shrink_folio_list() splits the folio.
 * Here swap_compact_window() looks first, over at most CP_BUDGET clusters
 * of the frag and nonfull lists (this order's first), for the aligned
 * window of 2^order slots with the fewest used slots, at most
 * cp_max_moves(order), each of them movable: swap count 1 (one PTE), not
 * in the swap cache, its PTE known to the reverse map (swaplab/rmap.h).
 * It pins the window's free slots (the swap cache bit with no folio: no
 * allocator takes them), moves each used entry - an order-0 slot from the
 * same device's allocator, the page read and written there (one page
 * copied), the PTE rewritten through the reverse map, the old slot put -
 * and allocates the freed window to the folio. The window's cluster takes
 * the folio's order when its own is smaller or PMD (as proposal-holes'
 * rung adopts), else keeps it.
 *
 * Kernel range: a proposal over 6.18 (docs/proposals/proposal-compact.md).
 * In mm/swapfile.c terms a new swap_compact_window(si, order) called from
 * folio_alloc_swap()'s failure path before the split; each move is what
 * swapoff's unuse_pte() does for one entry, found by a reverse map the
 * kernel does not have. The search takes clusters with
 * isolate_lock_cluster() and gives them back at their list's tail, as the
 * rung of proposal-holes does; the moves run outside every lock (they
 * sleep on I/O in a kernel); si->lock is taken for list moves only. The
 * free is the shared 6.14+ one: the device's put clears a freed slot's back
 * pointer where swap_entries_free() releases it (one store, device.c).
 *
 * The concurrent mode has no process to call back into (bench threads
 * drives devices alone), so its build is proposal-holes-first unchanged:
 * compaction is off there.
 */
#include "swaplab/swaplab.h"
#include "swaplab/cluster.h"
#include "swaplab/lockrework.h"
#include "swaplab/x_proposal.h"
#include "swaplab/rmap.h"
#include <stdlib.h>

extern const sl_policy sl_policy_proposal_holes_first, sl_policy_proposal_holes;

/* Clusters the window search may look at (build with -DCP_BUDGET=N to try
 * another bound). */
#ifndef CP_BUDGET
#define CP_BUDGET 16u
#endif
/* At most 2^order >> CP_MOVES_SHIFT entries moved for a window (at least
 * one): half the folio for every mTHP order below PMD (revision 4: 16K-64K
 * as 128K-1M since revision 2), a quarter for PMD (CP_MOVES_SHIFT_PMD).
 * On a nearly full device the smaller folios' free space sits in parts of
 * windows beside other small folios: at the 64K fallbacks of the grid's
 * pairs furthest above first-fit the best window had 5-7 used slots
 * (proposal-compact.md, "Revision 4"). The quarter was the break-even of
 * the uncalibrated prices (a move 7.7 us, a 64K fallback 35 us); with the
 * calibration in use (F34's fit) a move paid up to 25.7 us at the quarter,
 * against a copy measured at 5 us on zram for the lab's pages (F32). Not
 * for pages that compress 2:1: their copy (13.8 us) costs more than the
 * fallback it saves at either bound. PMD keeps the quarter: half moved
 * about 240 entries for one 2M window and lost a met 64K pair at revision
 * 2; at revision 4 half for PMD changes no grid count. */
#ifndef CP_MOVES_SHIFT
#define CP_MOVES_SHIFT 1
#endif
#ifndef CP_MOVES_SHIFT_PMD
#define CP_MOVES_SHIFT_PMD 2
#endif

/* proposal-holes-first's table of the mode conc. */
#define CP_BASE(conc) ((conc) ? sl_policy_proposal_holes_first.concurrent : \
				&sl_policy_proposal_holes_first)

static uint32_t cp_max_moves(int order)
{
	uint32_t n = (1u << order) >> (order < SL_PMD_ORDER ? CP_MOVES_SHIFT : CP_MOVES_SHIFT_PMD);

	return n ? n : 1;
}

/* The step applies: an mTHP order on a solid-state block device whose
 * slots the reverse map covers (a swap-in fault whose charge reclaims pins
 * only its own entries: sl_rmap_pin_charge()). */
static int cp_applies(const sl_device *d, int order)
{
	unsigned need = SL_DEV_BLKDEV | SL_DEV_SOLIDSTATE;

	return order > 0 && d->rmap && (d->flags & need) == need;
}

/* The window search reads the slot map a word (8 slots) at a time (SWAR):
 * sli_map_load8() and sli_map_nz() (cluster.h) give a word's 0/1 bytes
 * (1: not free). cp_sum8(): the sum of a word's bytes when below 256 (the
 * multiply adds them into the top byte). */
#define CP_ONES UINT64_C(0x0101010101010101)
#define CP_HIGH (CP_ONES * 0x80)

static inline uint32_t cp_sum8(uint64_t v)
{
	return (uint32_t)((v * CP_ONES) >> 56);
}

/* The `used` used slots of the window [w, w + nr) can all be moved: count
 * 1 (not shared, bad or cached) and a PTE the reverse map knows. */
static inline int cp_movable(const sl_device *d, uint64_t w, uint32_t used)
{
	for (uint64_t off = w; used; off++) {
		if (d->map[off] == SL_SLOT_FREE)
			continue;
		if (!sl_rmap_movable(d, off))
			return 0;
		used--;
	}
	return 1;
}

/* cp_best_window()'s scan for order 3 and up (nr >= 8): the windows of
 * [start, end) in order, each counted two words at a time (their 0/1 bytes
 * added, then summed), up to the pair that reaches *best; the window is
 * taken when it stays below and its used slots can move. Returns the last
 * window taken, or 0; *best is its count. Inline with nr a constant for
 * the common order (the loop over a window's words then unrolls). */
static inline __attribute__((always_inline)) uint64_t
cp_scan_words(const sl_device *d, uint64_t start, uint64_t end, uint32_t nr, uint32_t *best)
{
	const uint8_t *map = d->map, *q = map + start, *qend;
	uint64_t found = 0;
	uint32_t b = *best;

	if (end <= start || b <= 1)
		return 0;
	qend = q + (end - start) / nr * nr;
	for (; q < qend; q += nr) {
		uint32_t u;
		if (nr == 8) {
			u = cp_sum8(sli_map_nz(sli_map_load8(q)));
		} else {
			u = 0;
			for (uint32_t i = 0; i < nr && u < b; i += 16)
				u += cp_sum8(sli_map_nz(sli_map_load8(q + i)) + sli_map_nz(sli_map_load8(q + i + 8)));
		}
		if (u < b && cp_movable(d, (uint64_t)(q - map), u)) {
			b = u;
			found = (uint64_t)(q - map);
			if (b <= 1)
				break;
		}
	}
	*best = b;
	return found;
}

/* The window of cluster c with the fewest used slots, below `best` (the
 * best so far), each of them movable: its first slot (*used set), or 0.
 * The first such window in the cluster's order; the scan ends once the
 * best has a single used slot.
 * A window past the device's end (the last cluster's padding) is never
 * taken. Cluster locked.
 *
 * The used slots are counted a word at a time, and only a window with
 * fewer than `best` has its used slots tested for a move, one by one.
 * Order 1 and 2 count the 4 or 2 windows of a word at once (their counts
 * in their first bytes, compared with `best` together); order 3 and up
 * count two words at a time (cp_scan_words()). The same picks as
 * counting slot by slot (test compact_window_search_matches_slot_by_slot). */
static inline uint64_t cp_best_window(const sl_device *d, uint32_t c, int order, uint32_t best,
				      uint32_t *used)
{
	uint32_t nr = 1u << order;
	uint64_t start = sli_cluster_offset(c), end = start + SL_CLUSTER, found = 0;
	const uint8_t *map = d->map;

	if (d->ci[c].count + nr > SL_CLUSTER + best - 1)
		return 0; /* fewer than nr - best + 1 free slots */
	if (end > d->max)
		end = d->max;
	if (order <= 2) {
		/* the first byte of each window: order 1, 2 */
		uint64_t lanes = order == 1 ? UINT64_C(0x00ff00ff00ff00ff) : UINT64_C(0x000000ff000000ff);
		for (uint64_t p = start; p < end && best > 1; p += 8) {
			uint64_t v = sli_map_nz(sli_map_load8(map + p)), cand;
			v += v >> 8;
			if (order == 2)
				v += v >> 16;
			v &= lanes;
			/* the high bit of a window's first byte: its count (at
			 * most 4) < best, compared in every lane at once (best
			 * capped at 8: no borrow leaves a lane) */
			cand = ~((v | (lanes & CP_HIGH)) - (best < 8 ? best : 8) * (lanes & CP_ONES)) &
			       lanes & CP_HIGH;
			if (end - p < 8) /* the windows that end by `end` */
				cand &= end - p < nr ? 0 : (UINT64_C(1) << (end - p - nr + 1) * 8) - 1;
			for (; cand && best > 1; cand &= cand - 1) {
				uint32_t k = (uint32_t)__builtin_ctzll(cand) >> 3;
				uint32_t u = (uint32_t)(v >> (8 * k)) & 0xff;
				if (u < best && cp_movable(d, p + k, u)) {
					best = u;
					found = p + k;
				}
			}
		}
	} else if (order == 4) {
		found = cp_scan_words(d, start, end, 16, &best); /* 64K: nr known */
	} else {
		found = cp_scan_words(d, start, end, nr, &best);
	}
	if (found)
		*used = best;
	return found;
}

uint64_t sl_compact_best_window(const sl_device *d, uint32_t c, int order, uint32_t best,
				uint32_t *used)
{
	return cp_best_window(d, c, order, best, used);
}

/* The list the search visits i-th for a folio of `order`: frag[order],
 * the other orders' frag lists ascending, then the nonfull lists the same
 * way. */
static int cp_visit_list(int order, int i)
{
	int pass = i / SL_NR_ORDERS, o = i % SL_NR_ORDERS;

	o = o == 0 ? order : (o <= order ? o - 1 : o);
	return pass ? SL_LIST_NONFULL(o) : SL_LIST_FRAG(o);
}

/* The window search of swap_compact_window() and of the worker
 * (proposal): at most `budget` clusters, each isolated, scanned and put
 * back at its list's tail; the best window over them (fewest moves, at
 * most `bound`). Returns its first slot, or 0; *used its moves. */
static uint64_t cp_search_window(sl_device *d, int order, uint32_t budget, uint32_t bound, uint32_t *used)
{
	uint32_t len[SL_NR_LISTS], best = bound + 1;
	uint64_t found = 0;

	sl_dev_lock_m(0, d);
	memcpy(len, d->list_len, sizeof(len));
	sl_dev_unlock_m(0, d);
	for (int i = 0; i < 2 * SL_NR_ORDERS && budget && best > 1; i++) {
		int list = cp_visit_list(order, i);

		for (uint32_t n = len[list]; n && budget && best > 1; n--, budget--) {
			uint32_t c = lrm_isolate_lock_cluster(d, list, 0), u;
			if (c == SL_NIL)
				break;
			uint64_t w = cp_best_window(d, c, order, best, &u);
			if (w) {
				found = w;
				best = u;
			}
			lrm_move_cluster(d, c, list,
					 list >= SL_LIST_FRAG0 ? SL_CF_FRAG : SL_CF_NONFULL, 0);
			sl_ci_unlock_m(0, d, c);
		}
	}
	if (found)
		*used = best;
	return found;
}

/* swap_entries_free()'s end for a cluster whose slots were just released:
 * free_cluster() or partial_free_cluster(). Cluster locked. */
static void cp_after_release(sl_device *d, uint32_t c)
{
	if (d->ci[c].count == 0)
		lrm_free_cluster(d, c, 0);
	else
		lrm_partial_free_cluster_k(d, c, 0, 1);
}

/* The window's free slots, pinned (on) or unpinned (off): the swap cache
 * bit with no folio, so that no allocator takes them while the moves run.
 * Cluster locked. */
static void cp_pin_window(sl_device *d, uint64_t w, uint32_t nr, uint8_t *pinned, int on)
{
	for (uint32_t i = 0; i < nr; i++) {
		if (on && d->map[w + i] == SL_SLOT_FREE) {
			sli_reserve_range(d, w + i, 1);
			pinned[i] = 1;
		} else if (!on && pinned[i]) {
			sli_release_range(d, w + i, 1);
			d->st.freed_slots--; /* a pin, not a freed entry */
		}
	}
}

/* The moves of a window, the step's and the worker's: window w's free
 * slots pinned, then each used entry moved to an order-0 slot from
 * folio_alloc_swap() (its page read from the old slot and written to the
 * new one) and its old slot pinned in turn, so that the next move's slot
 * is not in the window. Returns 1 with the window free, its pins dropped
 * and its cluster locked and isolated from its list, for the caller to
 * place; or 0 when no order-0 slot could be had: the entries moved so far
 * stay moved, the window is unpinned and its cluster released. *moved
 * counts the moves. Called with no lock held. */
static int cp_move_window(sl_device *d, int cpu, uint64_t w, int order, uint32_t *moved)
{
	uint32_t nr = 1u << order, c = sli_cluster_of(w);
	uint8_t pinned[SL_CLUSTER] = { 0 };

	sl_ci_lock_m(0, d, c);
	cp_pin_window(d, w, nr, pinned, 1);
	sl_ci_unlock_m(0, d, c);
	for (uint32_t i = 0; i < nr; i++) {
		if (pinned[i])
			continue;
		uint64_t to = CP_BASE(0)->alloc(d, cpu, 0);
		if (!to) {
			sl_ci_lock_m(0, d, c);
			cp_pin_window(d, w, nr, pinned, 0);
			cp_after_release(d, c);
			sl_ci_unlock_m(0, d, c);
			return 0;
		}
		sl_rmap_move(d, w + i, to); /* the PTE now names the new slot */
		sl_swap_put(d, cpu, w + i, 1); /* the old slot's last reference */
		sl_ci_lock_m(0, d, c);
		cp_pin_window(d, w + i, 1, pinned + i, 1);
		sl_ci_unlock_m(0, d, c);
		(*moved)++;
	}
	sl_ci_lock_m(0, d, c);
	cp_pin_window(d, w, nr, pinned, 0);
	sl_dev_lock_m(0, d);
	sli_isolate_cluster(d, c);
	sl_dev_unlock_m(0, d);
	return 1;
}

/* The adoption rule of a freed window's cluster, the step's and the
 * worker's (as proposal-holes' rung): a cluster that still holds entries
 * takes the window's order when its own is smaller, or PMD. Cluster
 * locked. */
static inline void cp_adopt(sl_device *d, uint32_t c, int order)
{
	if (d->ci[c].count && (d->ci[c].order < order || d->ci[c].order == SL_PMD_ORDER))
		d->ci[c].order = (uint8_t)order;
}

/* swap_compact_window() (proposal-compact): free one aligned window of
 * 2^order slots by moving its few entries, and allocate it. Returns the
 * window, or 0 (nothing found, or an order-0 slot for a move could not be
 * had: the entries moved so far stay moved). Called with no lock held. */
static uint64_t swap_compact_window(sl_device *d, int cpu, int order)
{
	uint32_t used = 0, moved = 0, c;
	uint64_t w;

	d->st.compact_searches++;
	w = cp_search_window(d, order, CP_BUDGET, cp_max_moves(order), &used);
	if (!w)
		return 0;
	c = sli_cluster_of(w);
	int whole = cp_move_window(d, cpu, w, order, &moved);
	d->st.compact_moves += moved;
	if (!whole) {
		d->st.compact_aborts++;
		return 0;
	}
	/* the window is free: the folio's */
	cp_adopt(d, c, order);
	sli_alloc_range_m(d, w, order, 0); /* cluster_alloc_range() */
	lrm_relocate_cluster(d, c, 0);
	sl_ci_unlock_m(0, d, c);
	d->st.compact_windows++;
	return w;
}

/* folio_alloc_swap() - proposal-holes-first's, then the compaction step
 * (one device). Order 0, which the step never serves, goes straight to
 * proposal-holes' op: holes-first's own forwards it there unchanged
 * (x_holes_first.c; the test compact_order0_is_holes_first pins it), so
 * an order-0 allocation pays no call level more than holes-first's. */
static uint64_t cp_alloc_det(sl_device *d, int cpu, int order)
{
	uint64_t off;

	if (order == 0)
		return sl_policy_proposal_holes.alloc(d, cpu, 0);
	off = CP_BASE(0)->alloc(d, cpu, order);
	if (!off && cp_applies(d, order))
		off = swap_compact_window(d, cpu, order);
	return off;
}

/* The halves swapset.c calls with several devices: the step ends the slow
 * one (a large folio tries the first device only). */
static uint64_t cp_alloc_fast_det(sl_device *d, int cpu, int order)
{
	return CP_BASE(0)->alloc_fast(d, cpu, order);
}

static uint64_t cp_alloc_slow_det(sl_device *d, int cpu, int order)
{
	uint64_t off = CP_BASE(0)->alloc_slow(d, cpu, order);

	if (!off && cp_applies(d, order))
		off = swap_compact_window(d, cpu, order);
	return off;
}

static int cp_check(const sl_device *d, char *msg, size_t len)
{
	return sl_rmap_check(d, msg, len);
}

/* The concurrent build: proposal-holes-first's ops, no compaction. */
static uint64_t cp_alloc_conc(sl_device *d, int cpu, int order)
{
	return CP_BASE(1)->alloc(d, cpu, order);
}

static uint64_t cp_alloc_fast_conc(sl_device *d, int cpu, int order)
{
	return CP_BASE(1)->alloc_fast(d, cpu, order);
}

static uint64_t cp_alloc_slow_conc(sl_device *d, int cpu, int order)
{
	return CP_BASE(1)->alloc_slow(d, cpu, order);
}

/* ------------------------------------------------------------------
 * proposal-kcompact: proposal-compact plus a background worker in the
 * manner of kcompactd (mm/compaction.c: wakeup_kcompactd(),
 * kcompactd_do_work()). A fallback of order k - the allocation-time step
 * above found no window within its bound - wakes it; it does not run
 * inside the failing allocation but later, at the next allocation boundary
 * (KC_DEFER allocations after the wake; the model is single-threaded, a
 * kthread would run beside the reclaiming CPU) and at every tick (between
 * workload operations, where the discard worker runs) while it stays
 * woken. Per wake-up it may move at most KC_MOVES entries. For each order
 * that woke it, largest first, it frees one naturally aligned window: the
 * one of fewest used slots, at most 3/4 of the window (KC_MAX_NUM/4), each
 * movable, found over at most KC_SCAN clusters of the frag and nonfull
 * lists (cp_visit_list()'s order: this order's frag list first); its
 * entries move to order-0 slots elsewhere, as the step's do. The freed
 * window's cluster takes order k when its own is smaller or PMD (the
 * step's adoption rule) and goes to nonfull[k], where the next order-k
 * folio looks first. An order is served once a window of it is free; one
 * with no window in bound stays woken, and is tried again only once the
 * device has 2^k free slots more than at that try. The budget spent, the
 * worker sleeps until the next fallback.
 *
 * Locks: as the step's - each cluster lock while it is scanned, pinned or
 * put back; si->lock for list moves only; the moves under no lock. The
 * concurrent mode's build has no worker (no process to call back into,
 * as for the step).
 */
#ifndef KC_MOVES
#define KC_MOVES 64u
#endif
#ifndef KC_SCAN
#define KC_SCAN 64u
#endif
#ifndef KC_MAX_NUM
#define KC_MAX_NUM 3u
#endif
#ifndef KC_DEFER
#define KC_DEFER 1u
#endif
#ifndef KC_ADOPT
#define KC_ADOPT 1
#endif

/* The worker's state (d->pstate). */
typedef struct kc_state {
	uint32_t wake;                /* orders still to serve */
	uint32_t budget;              /* moves left of this wake-up */
	uint32_t defer;               /* allocations until its run (0: ticks only) */
	int cpu;                      /* the CPU of the last wake: its order-0
					 cursor gives the moves' slots, as a
					 work item queued on the failing CPU */
	uint64_t tried[SL_NR_ORDERS]; /* free slots at the order's last fruitless try */
} kc_state;

static int kc_init(sl_device *d)
{
	int rc = xp_init(d);

	if (rc)
		return rc;
	d->pstate = calloc(1, sizeof(kc_state));
	return d->pstate ? 0 : -1;
}

static void kc_fini(sl_device *d)
{
	free(d->pstate);
	d->pstate = NULL;
}

static uint32_t kc_max_moves(int order)
{
	uint32_t n = ((1u << order) * KC_MAX_NUM) >> 2;

	return n ? n : 1;
}

/* Frees window w of 2^order slots: its free slots pinned, each used
 * entry moved to an order-0 slot (which the pins keep out of the window),
 * the pins dropped, the cluster given order `order` (when its own is
 * smaller, or PMD) and put on nonfull[order] (or freed). Returns 1, or 0:
 * no order-0 slot for a move (cp_move_window()). *moved counts the moves. */
static int kc_free_window(sl_device *d, int cpu, uint64_t w, int order, uint32_t *moved)
{
	uint32_t c = sli_cluster_of(w);

	if (!cp_move_window(d, cpu, w, order, moved))
		return 0;
	if (d->ci[c].count == 0) {
		lrm_free_cluster(d, c, 0);
	} else {
		if (KC_ADOPT)
			cp_adopt(d, c, order);
		lrm_move_cluster(d, c, SL_LIST_NONFULL(d->ci[c].order), SL_CF_NONFULL, 0);
	}
	sl_ci_unlock_m(0, d, c);
	return 1;
}

/* The worker (kcompactd_do_work() in spirit), while woken: for each
 * order still to serve, largest first, one window freed while the
 * wake-up's budget lasts. A device with too few free slots for the order
 * (2^order more than at its last fruitless try) costs one compare. */
static void kc_work(sl_device *d)
{
	kc_state *k = d->pstate;

	if (!k->wake)
		return;
	if (!cp_applies(d, 1)) {
		k->wake = 0;
		return;
	}
	uint64_t nfree = d->pages - atomic_load_explicit(&d->inuse_pages, memory_order_relaxed);
	for (int o = SL_NR_ORDERS - 1; o > 0 && k->wake; o--) {
		uint32_t used = 0, moved = 0, bound = kc_max_moves(o);
		uint64_t w;

		if (!(k->wake & (1u << o)) || nfree < k->tried[o] + (1u << o))
			continue;
		if (bound > k->budget)
			bound = k->budget;
		w = cp_search_window(d, o, KC_SCAN, bound, &used);
		if (w && !used) {
			k->wake &= ~(1u << o); /* one is free already: served */
			continue;
		}
		if (w && kc_free_window(d, k->cpu, w, o, &moved)) {
			d->st.kcompact_windows++;
			k->wake &= ~(1u << o);
		} else {
			k->tried[o] = nfree; /* none in bound, or no slot for a move */
		}
		d->st.kcompact_moves += moved;
		k->budget -= moved;
		if (!k->budget)
			k->wake = 0; /* spent: the next fallback wakes it again */
	}
}

/* wakeup_kcompactd() in spirit: a fallback of `order` on `cpu`. A worker
 * asleep gets a fresh budget; either way the order is (again) to serve,
 * and the worker runs KC_DEFER allocations later. */
static void kc_wake(sl_device *d, int cpu, int order)
{
	kc_state *k = d->pstate;

	if (!k->wake) {
		k->budget = KC_MOVES;
		d->st.kcompact_wakes++;
	}
	k->wake |= 1u << order;
	k->tried[order] = 0;
	k->defer = KC_DEFER;
	k->cpu = cpu;
}

/* The worker's run at an allocation boundary: KC_DEFER allocations after
 * its wake (the model is single-threaded; a kthread would run beside the
 * reclaiming CPU). */
static inline void kc_maybe_run(sl_device *d)
{
	kc_state *k = d->pstate;

	if (__builtin_expect(k->defer != 0, 0) && --k->defer == 0)
		kc_work(d);
}

/* An allocation's end: a fallback (no slot for an mTHP folio) wakes the
 * worker. Returns off. */
static inline uint64_t kc_after_alloc(sl_device *d, int cpu, int order, uint64_t off)
{
	if (!off && order && cp_applies(d, order))
		kc_wake(d, cpu, order);
	return off;
}

static uint64_t kc_alloc_det(sl_device *d, int cpu, int order)
{
	kc_maybe_run(d);
	return kc_after_alloc(d, cpu, order, cp_alloc_det(d, cpu, order));
}

static uint64_t kc_alloc_slow_det(sl_device *d, int cpu, int order)
{
	kc_maybe_run(d);
	return kc_after_alloc(d, cpu, order, cp_alloc_slow_det(d, cpu, order));
}

/* The tick: the discard worker, then the compaction worker. */
static void kc_tick_det(sl_device *d)
{
	lr_swap_discard_work_det(d);
	kc_work(d);
}

/* Both policies' properties: proposal-holes-first's, with the reverse map. */
#define CP_PROPS ((XP_PROPS_V6_18 & ~SL_POL_ORDERED_CLUSTERS) | SL_POL_RMAP | SL_POL_KEEP_FULL0)

#define KC_OPS(m)                                                                         \
	.name = "proposal-kcompact",                                                      \
	.summary = "proposal over proposal-compact: a fallback wakes a background worker that frees aligned windows of the failed order (bounded moves per wake)", \
	.kernel = "",                                                                     \
	.props = CP_PROPS,                                                                \
	.alloc_fast = cp_alloc_fast_##m, .free = lr_free_##m,                            \
	.sync_discard = xp_sync_discard_##m, .check = cp_check

/* The concurrent build is proposal-compact's (no compaction, no worker;
 * the state is allocated all the same, the device being built first). */
static const sl_policy kc_conc = { KC_OPS(conc), .alloc = cp_alloc_conc,
				   .alloc_slow = cp_alloc_slow_conc, .init = kc_init,
				   .fini = kc_fini, .tick = lr_swap_discard_work_conc };
const sl_policy sl_policy_proposal_kcompact = { KC_OPS(det), .alloc = kc_alloc_det,
						.alloc_slow = kc_alloc_slow_det, .init = kc_init,
						.fini = kc_fini, .tick = kc_tick_det,
						.concurrent = &kc_conc };

/* The table of mode m (lockrework.h). */
#define CP_OPS(m)                                                                         \
	.name = "proposal-compact",                                                       \
	.summary = "proposal over proposal-holes-first: before an mTHP fallback, move the few entries of one aligned window (reverse map) and take it", \
	.kernel = "",                                                                     \
	.props = CP_PROPS,                                                                \
	.alloc = cp_alloc_##m, .alloc_fast = cp_alloc_fast_##m,                           \
	.alloc_slow = cp_alloc_slow_##m, .init = xp_init, .free = lr_free_##m,            \
	.tick = lr_swap_discard_work_##m, .sync_discard = xp_sync_discard_##m,            \
	.check = cp_check

static const sl_policy cp_conc = { CP_OPS(conc) };
const sl_policy sl_policy_proposal_compact = { CP_OPS(det), .concurrent = &cp_conc };
