/*
 * rmap.c - the slot -> PTE reverse map of swaplab/rmap.h. A proposal's
 * tool, not a kernel structure: mainline up to the 7.x swap table has no
 * map from a slot back to its PTE (docs/proposals/proposal-compact.md).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "swaplab/rmap.h"
#include "swaplab/debug.h"

int sl_rmap_enable(sl_device *d)
{
	if (!d->rmap)
		d->rmap = calloc((size_t)d->nr_clusters * SL_CLUSTER, sizeof(d->rmap[0]));
	return d->rmap ? 0 : -1;
}

void sl_rmap_forget_ptes(const sl_swapset *s, uint64_t *pte, uint64_t n)
{
	for (uint64_t j = 0; j < n; j++) {
		uint64_t e = pte[j] & SL_RMAP_ENTRY_MASK;
		int t = sl_entry_type(e);

		/* a PTE of another kind names no device, or not this PTE */
		if (pte[j] && t < s->nr && s->dev[t]->rmap &&
		    sl_entry_off(e) < (uint64_t)s->dev[t]->nr_clusters * SL_CLUSTER &&
		    s->dev[t]->rmap[sl_entry_off(e)] == &pte[j])
			s->dev[t]->rmap[sl_entry_off(e)] = NULL;
	}
}

void sl_rmap_move(sl_device *d, uint64_t from, uint64_t to)
{
	uint64_t *pte = d->rmap[from];

	SL_ASSERT(pte && (*pte & SL_RMAP_ENTRY_MASK) == sl_entry(d->type, from));
	SL_ASSERT(d->map[to] == 1 && !d->rmap[to]);
	*pte = (*pte & ~SL_RMAP_ENTRY_MASK) | sl_entry(d->type, to);
	d->rmap[to] = pte;
	d->rmap[from] = NULL;
}

/* Sets (on) or clears SWAP_HAS_CACHE on map bytes m[0 .. nr), each a
 * fault's own entry of count 1 (1 <-> 1 | SWAP_HAS_CACHE): a large folio's
 * eight at a time. Clearing takes the bit alone, whatever else a byte
 * holds. */
static inline void rmap_pin(uint8_t *m, uint32_t nr, int on)
{
	const uint64_t bits = UINT64_C(0x0101010101010101) * SL_SLOT_CACHE;
	uint64_t w;

	for (uint32_t i = 0; SL_DEBUG_ON && i < nr; i++)
		SL_ASSERT(m[i] == (on ? 1 : 1 | SL_SLOT_CACHE));
	if (nr < 8) {
		for (uint32_t i = 0; i < nr; i++)
			m[i] = on ? (uint8_t)(m[i] | SL_SLOT_CACHE) : (uint8_t)(m[i] & ~SL_SLOT_CACHE);
		return;
	}
	for (uint32_t i = 0; i < nr; i += 8) {
		memcpy(&w, m + i, 8);
		w = on ? w | bits : w & ~bits;
		memcpy(m + i, &w, 8);
	}
}

int sl_rmap_pin_charge(const sl_swapset *s, int (*charge)(void *, sl_proc *, int), void *ctx,
		       sl_proc *p, int order, uint64_t e, uint32_t nr)
{
	sl_device *d = nr ? sl_set_dev(s, e) : NULL;
	uint8_t *m;
	int rc;

	if (!d || !d->rmap)
		return charge(ctx, p, order);
	m = d->map + sl_entry_off(e);
	/* an order-0 fault's one entry, or a large folio's 4 to 256 (a
	 * multiple of 8 from 32K on) */
	SL_ASSERT(nr < 8 || !(nr & 7));
	rmap_pin(m, nr, 1);
	rc = charge(ctx, p, order);
	rmap_pin(m, nr, 0);
	return rc;
}

int sl_rmap_check(const sl_device *d, char *msg, size_t len)
{
	uint64_t slots = (uint64_t)d->nr_clusters * SL_CLUSTER;

	if (!d->rmap)
		return 0;
	for (uint64_t s = 0; s < slots; s++) {
		const uint64_t *pte = d->rmap[s];
		if (!pte)
			continue;
		if (!(d->map[s] & SL_SLOT_COUNT_MASK) || d->map[s] == SL_SLOT_BAD) {
			snprintf(msg, len, "R1: slot %llu is mapped by a PTE but holds no swap count",
				 (unsigned long long)s);
			return -1;
		}
		if ((*pte & SL_RMAP_ENTRY_MASK) != sl_entry(d->type, s)) {
			snprintf(msg, len, "R1: slot %llu's PTE holds entry %llu", (unsigned long long)s,
				 (unsigned long long)(*pte & SL_RMAP_ENTRY_MASK));
			return -1;
		}
	}
	return 0;
}
