/*
 * check.c - the device invariants of types.h, one function each, tagged.
 *
 * sl_device_check() is O(slots): tests call it after operations; the CLI
 * calls it after every iteration with --check.
 */
#include <stdio.h>
#include <stdlib.h>
#include "swaplab/swaplab.h"
#include "swaplab/cluster.h"
#include "swaplab/debug.h"

#define FAIL(...) do { snprintf(msg, len, __VA_ARGS__); return -1; } while (0)

/* I1, I3: walk every list; each member's flag and order name that list,
 * every list's recorded length is its real length, every cluster not on a
 * list is NONE, and the clusters on lists plus the isolated ones (NONE,
 * unlinked) are all nr_clusters: none is lost half-linked. */
static int check_lists(const sl_device *d, char *msg, size_t len)
{
	uint8_t *seen = calloc(d->nr_clusters, 1);
	uint64_t isolated = 0, recorded = 0;
	uint32_t lost = SL_NIL;

	if (!seen)
		FAIL("out of memory in the checker");
	for (int l = 0; l < SL_NR_LISTS; l++) {
		uint32_t h = sli_head(d, l), n = 0, prev = h;
		for (uint32_t c = d->ci[h].next; c != h; prev = c, c = d->ci[c].next) {
			if (c >= d->nr_clusters || n > d->nr_clusters || seen[c] ||
			    d->ci[c].prev != prev) {
				free(seen);
				FAIL("I1: list %d is corrupt at cluster %u", l, c);
			}
			if (sli_list_of(&d->ci[c]) != l) {
				free(seen);
				FAIL("I1: cluster %u (flags %u order %u) is on list %d", c,
				     d->ci[c].flags, d->ci[c].order, l);
			}
			seen[c] = 1;
			n++;
		}
		if (n != d->list_len[l]) {
			free(seen);
			FAIL("I3: list %d holds %u clusters but records %u", l, n, d->list_len[l]);
		}
		recorded += d->list_len[l];
	}
	for (uint32_t c = 0; c < d->nr_clusters; c++) {
		if (seen[c])
			continue;
		if (d->ci[c].flags != SL_CF_NONE) {
			free(seen);
			FAIL("I1: cluster %u has flags %u but is on no list", c, d->ci[c].flags);
		}
		if (d->ci[c].prev == SL_NIL && d->ci[c].next == SL_NIL)
			isolated++;
		else if (lost == SL_NIL)
			lost = c; /* off every list yet still linked */
	}
	free(seen);
	if (recorded + isolated != d->nr_clusters) {
		char at[48] = "";
		if (lost != SL_NIL)
			snprintf(at, sizeof(at), " (cluster %u is on no list but linked)", lost);
		FAIL("I3: %llu clusters on lists + %llu isolated != %u clusters%s",
		     (unsigned long long)recorded, (unsigned long long)isolated, d->nr_clusters, at);
	}
	return 0;
}

/* SL_POL_KEEP_FULL0 (lrm_handoff()): a CPU's cursor of the cluster's order
 * points into cluster c, which may then be full with a hole in it. */
static int cursor_in(const sl_device *d, uint32_t c)
{
	for (int cpu = 0; cpu < d->nr_cpus; cpu++) {
		uint64_t off = d->cursor[cpu * SL_CURSOR_STRIDE + d->ci[c].order];
		if (off && sli_cluster_of(off) == c)
			return 1;
	}
	return 0;
}

/* I2, I4, I5: counts against the slot map. */
static int check_counts(const sl_device *d, char *msg, size_t len)
{
	uint64_t inuse = 0, bad = 0;

	for (uint32_t c = 0; c < d->nr_clusters; c++) {
		const uint8_t *m = d->map + sli_cluster_offset(c);
		unsigned n = 0;
		if (!(c & 4095) && sli_stop_requested())
			return 0; /* a stopped run keeps none of this check */
		/* I5: a cluster pending discard is empty; <= 6.13 marks its
		 * slots bad meanwhile (I2 then counts none of them) */
		if (d->ci[c].flags == SL_CF_DISCARD) {
			if (d->ci[c].count)
				FAIL("I5: cluster %u pending discard has count %u", c, d->ci[c].count);
			if (d->pol->props & SL_POL_DISCARD_MARKS_BAD) {
				for (unsigned i = 0; i < SL_CLUSTER; i++)
					if (m[i] != SL_SLOT_BAD)
						FAIL("I2: cluster %u pending discard has slot %u = 0x%02x", c,
						     i, m[i]);
				continue;
			}
		}
		for (unsigned i = 0; i < SL_CLUSTER; i++) {
			if (m[i] == SL_SLOT_BAD)
				bad++;
			else if (m[i])
				inuse++;
			n += m[i] != 0;
		}
		const sl_cluster *ci = &d->ci[c];
		if (ci->free_from > SL_CLUSTER)
			FAIL("I8: cluster %u free_from %u is past its end", c, ci->free_from);
		for (unsigned i = 0; i < ci->free_from; i++)
			if (!m[i])
				FAIL("I8: cluster %u slot %u is free below free_from %u", c, i,
				     ci->free_from);
		if (ci->count != n)
			FAIL("I2: cluster %u count %u but %u slots are not free", c, ci->count, n);
		if (ci->flags == SL_CF_FREE && (n || ci->order))
			FAIL("I5: free cluster %u has count %u order %u", c, n, ci->order);
		/* a full cluster is full, but under SL_POL_KEEP_FULL0 for its
		 * kept order-0 slots (lrm_keep_full0()) and for a hole handed to
		 * a CPU's cursor (lrm_handoff()), both only on a solid-state
		 * block device without discard (sli_own_order0_dev(): elsewhere
		 * order 0 is 6.18's, which cannot reach such a hole) */
		if (ci->flags == SL_CF_FULL && n != SL_CLUSTER &&
		    !((d->pol->props & SL_POL_KEEP_FULL0) &&
		      sli_own_order0_dev(d) &&
		      ((!ci->order && n > SL_CLUSTER - SL_KEEP0_SLOTS && atomic_load(&d->kept0)) ||
		       cursor_in(d, c))))
			FAIL("I5: full cluster %u has count %u", c, n);
		if ((ci->flags == SL_CF_NONFULL || ci->flags == SL_CF_FRAG) &&
		    (n == 0 || n == SL_CLUSTER))
			FAIL("I5: cluster %u on a partial list has count %u", c, n);
	}
	if (bad != d->nr_bad)
		FAIL("I4: %llu bad slots, %llu recorded", (unsigned long long)bad,
		     (unsigned long long)d->nr_bad);
	if (inuse != d->inuse_pages)
		FAIL("I4: %llu slots in use, inuse_pages says %llu", (unsigned long long)inuse,
		     (unsigned long long)d->inuse_pages);
	return 0;
}

/* I6, I7: the allocation shadow. */
static int check_shadow(const sl_device *d, char *msg, size_t len)
{
	uint64_t slots = (uint64_t)d->nr_clusters * SL_CLUSTER;
	int ordered = d->pol->props & SL_POL_ORDERED_CLUSTERS;

	if (d->shadow_errors)
		FAIL("I7: %llu slots were allocated while already owned",
		     (unsigned long long)d->shadow_errors);
	for (uint64_t s = 0; s < slots; s++) {
		if (!(s & 0xfffff) && sli_stop_requested())
			return 0; /* a stopped run keeps none of this check */
		uint8_t sh = d->shadow[s], m = d->map[s];
		int owned = m && m != SL_SLOT_BAD && m != SL_SLOT_CACHE;
		if (owned != (sh != 0))
			FAIL("I7: slot %llu map 0x%02x shadow 0x%02x disagree",
			     (unsigned long long)s, m, sh);
		if (!sh || sh == SL_SHADOW_TAIL)
			continue;
		int order = sh - 1;
		uint64_t nr = UINT64_C(1) << order;
		if (s & (nr - 1))
			FAIL("I6: order-%d allocation at slot %llu is not aligned", order,
			     (unsigned long long)s);
		if ((s & (SL_CLUSTER - 1)) + nr > SL_CLUSTER)
			FAIL("I6: order-%d allocation at slot %llu crosses a cluster", order,
			     (unsigned long long)s);
		const sl_cluster *ci = &d->ci[sli_cluster_of(s)];
		if (ordered && order > 0 && ci->order != order)
			FAIL("I6: order-%d allocation at slot %llu in a cluster of order %u", order,
			     (unsigned long long)s, ci->order);
	}
	return 0;
}

int sl_device_check(const sl_device *d, char *msg, size_t len)
{
	if (check_lists(d, msg, len) || check_counts(d, msg, len))
		return -1;
	if (d->shadow && check_shadow(d, msg, len))
		return -1;
	if (d->pol->check)
		return d->pol->check(d, msg, len);
	return 0;
}

#ifdef SL_DEBUG
/* SL_ASSERT's failure: one line on stderr, then abort (VM_BUG_ON). */
void sli_assert_fail(const char *cond, const char *file, int line, const char *func)
{
	fprintf(stderr, "%s:%d: %s: assertion `%s' failed\n", file, line, func, cond);
	abort();
}
#endif
