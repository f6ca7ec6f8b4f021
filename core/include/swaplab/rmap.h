/*
 * swaplab/rmap.h - a reverse map from a swap slot to the PTE that holds it
 * (rmap.c), for policies that move swapped-out entries (proposal-compact,
 * core/policies/x_compact.c).
 *
 * Neither 6.18 nor the 7.x swap table has one: an anonymous page out of
 * the swap cache is found from its slot only by walking page tables
 * (swapoff's unuse_mm()). The model knows every PTE, so a policy that asks
 * for the map (SL_POL_RMAP) gets one: d->rmap[off] is the PTE that holds
 * slot off of device d, or NULL. The process model sets it for the swap
 * PTEs a reclaim step wrote, at the step's end (process.c: only in the
 * pages of the folios the step queued), the device's put clears it when the slot's last
 * reference goes (swap-in, MADV_DONTNEED, exit's zap: device.c builds a put
 * with the clear for a device with a map, at the point where 6.18's
 * swap_entries_free() releases the slot), and a process that
 * goes away clears what it still holds (sl_rmap_forget_ptes()). Without
 * the flag d->rmap is NULL and the process model tests one flag per
 * reclaim step, nothing else.
 *
 * Every swap entry of the model has swap count 1 (no fork), so a slot has
 * at most one PTE; a slot with another count is never moved.
 */
#ifndef SWAPLAB_RMAP_H
#define SWAPLAB_RMAP_H

#include <string.h>
#include "swaplab.h"

/* A swap PTE holds its entry (device type << SL_TYPE_SHIFT | slot) in
 * these bits, its kind in the bits above (process.c asserts it). */
#define SL_RMAP_ENTRY_MASK ((UINT64_C(1) << 61) - 1)

/* Gives d its reverse map, every slot unmapped. Returns 0, or -1 (memory). */
int sl_rmap_enable(sl_device *d);

/* The process wrote *pte as a swap PTE: its slot is now held by it (on
 * whichever device of s its entry names; a device without a map is
 * skipped). Inline: the process model notes a reclaim step's PTEs in a
 * loop of its own. */
static inline void sl_rmap_note_pte(const sl_swapset *s, uint64_t *pte)
{
	uint64_t e = *pte & SL_RMAP_ENTRY_MASK;
	sl_device *d = sl_set_dev(s, e);

	if (d->rmap)
		d->rmap[sl_entry_off(e)] = pte;
}

/* A process goes away with pte[0 .. n) (any PTEs): the swap ones' slots
 * are no longer held by them. */
void sl_rmap_forget_ptes(const sl_swapset *s, uint64_t *pte, uint64_t n);

/* Slots [off, off + nr) of d lost their last reference (d has a map).
 * An mTHP folio's 2..512 are cleared by plain stores, 8 a round: the
 * empty asm hides the pointer's stride, so that the compiler does not
 * turn the loop back into a memset() call (or rep stos) costing more than
 * the stores for the sizes freed here. */
static inline void sl_rmap_clear(sl_device *d, uint64_t off, uint32_t nr)
{
	uint64_t **p = d->rmap + off;

	if (nr == 1) {
		*p = NULL; /* the common case: one page's slot */
		return;
	}
	for (; nr >= 8; nr -= 8, p += 8) {
		__asm__("" : "+r"(p));
		p[0] = p[1] = p[2] = p[3] = p[4] = p[5] = p[6] = p[7] = NULL;
	}
	for (; nr; nr--, p++) {
		__asm__("" : "+r"(p));
		*p = NULL;
	}
}

/* The slot can be moved: in use with swap count 1, not in the swap cache
 * (nor pinned by a swap-in fault: sl_rmap_pin_charge()), held by a PTE the
 * map knows. */
static inline int sl_rmap_movable(const sl_device *d, uint64_t off)
{
	return d->map[off] == 1 && d->rmap[off] != NULL;
}

/* Moves the entry of slot `from` to slot `to` (allocated, count 1, no PTE
 * yet): its PTE is rewritten to name `to` and the map follows. The caller
 * puts `from` afterwards (its count is untouched here). */
void sl_rmap_move(sl_device *d, uint64_t from, uint64_t to);

/* A swap-in fault read its PTEs' entries, nr of them from entry e (nr 0:
 * none, an anonymous fault), then charges the folio, whose reclaim may
 * allocate swap and move entries: charge(ctx, p, order) with those nr
 * slots pinned, so that they stay where the fault read them; every other
 * entry may move. The pin is the kernel's: swapcache_prepare() sets
 * SWAP_HAS_CACHE on a fault's entries (before the charge on the
 * swap-cache path; 6.18's synchronous path charges first and re-checks
 * with pte_same() after, a retry the model's faults do not have), and a
 * slot with the bit is not movable. Other processes' faults may hold pins
 * of their own meanwhile (two CPUs at once). Returns charge's. */
int sl_rmap_pin_charge(const sl_swapset *s, int (*charge)(void *, sl_proc *, int), void *ctx,
		       sl_proc *p, int order, uint64_t e, uint32_t nr);

/* R1: every mapped slot is in use and its PTE holds exactly its entry.
 * 0, or -1 with a message. */
int sl_rmap_check(const sl_device *d, char *msg, size_t len);

/* The PTE that holds slot off of d, or NULL (for the process model's check). */
static inline uint64_t *sl_rmap_pte(const sl_device *d, uint64_t off)
{
	return d->rmap ? d->rmap[off] : NULL;
}

/* proposal-compact's window search in cluster c of d (x_compact.c), for
 * a folio of `order`: the first aligned window of 2^order slots whose used
 * slots are fewer than `best` and all movable, then each later one with
 * fewer still, until one has a single used slot. Its first slot (*used: its
 * used slots), or 0. Out of line for the test that checks it against a
 * slot-by-slot search; the policy's own calls inline it. */
uint64_t sl_compact_best_window(const sl_device *d, uint32_t c, int order, uint32_t best,
				uint32_t *used);

#endif
