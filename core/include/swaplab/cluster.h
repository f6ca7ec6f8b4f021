/*
 * swaplab/cluster.h - primitives shared by the policies (sli_* = cross-file).
 *
 * List membership changes only through sli_move_cluster() and
 * sli_isolate_cluster() (inline below; swapon's sli_setup_clusters() in
 * cluster.c): they update link, length and flag together, so invariant I1
 * cannot be broken by a policy.
 * Slot ownership changes only through sli_alloc_range() and
 * sli_release_range() (device.c; their bodies, with the mode as an
 * argument, inline below): they keep count, inuse_pages and the debug
 * shadow in step (I2, I4, I7).
 */
#ifndef SWAPLAB_CLUSTER_H
#define SWAPLAB_CLUSTER_H

#include <string.h>
#include "types.h"
#include "locks.h"
#include "debug.h"

#define SL_NIL UINT32_MAX

static inline uint32_t sli_cluster_of(uint64_t off) { return (uint32_t)(off >> SL_CLUSTER_SHIFT); }
static inline uint64_t sli_cluster_offset(uint32_t c) { return (uint64_t)c << SL_CLUSTER_SHIFT; }
static inline uint32_t sli_head(const sl_device *d, int list) { return d->nr_clusters + (uint32_t)list; }

/* The cursor an allocation of `order` on `cpu` continues from: this CPU's
 * on a non-rotational device, the device's global one on a rotational. */
static inline __attribute__((always_inline)) uint64_t *sli_cursor(sl_device *d, int cpu, int order)
{
	int row = (d->flags & SL_DEV_SOLIDSTATE) ? cpu : d->nr_cpus;
	return &d->cursor[row * SL_CURSOR_STRIDE + order];
}

/* SL_POL_KEEP_FULL0 (revision 6): the order-0 slot lrm_handoff() last
 * gave this CPU's cursor and its fast path has not yet looked at, or 0 -
 * the spare entry SL_NR_ORDERS of the CPU's cursor row (the kernel would
 * add it to percpu_swap_cluster). Only that CPU reads or writes it: its
 * frees and its allocations. Solid-state devices only. */
_Static_assert(SL_NR_ORDERS < SL_CURSOR_STRIDE, "the cursor row has room for the hand-off mark");
static inline __attribute__((always_inline)) uint64_t *sli_handed0(sl_device *d, int cpu)
{
	return &d->cursor[cpu * SL_CURSOR_STRIDE + SL_NR_ORDERS];
}

/* A solid-state block device without discard: where the proposals run
 * their own order-0 path (x_holes.c holes_order0()) and so may leave free
 * slots in a cluster on the full list - revision 3's kept slots
 * (lrm_keep_full0()) and revision 4's hand-off (lrm_handoff()). On a
 * discarding or a non-block device order 0 is linux-6.18's, which never
 * looks into a full cluster, so a slot left there would be out of every
 * order-0 allocation's reach (tests
 * holes_first_hands_no_order0_slot_over_where_order0_is_6_18s,
 * holes_first_hands_no_64k_range_over_on_a_discarding_device). */
static inline int sli_own_order0_dev(const sl_device *d)
{
	const unsigned need = SL_DEV_BLKDEV | SL_DEV_SOLIDSTATE;

	return (d->flags & (need | SL_DEV_DISCARD)) == need;
}

/* The list a cluster's flag and order name, or -1 for NONE (any flag past
 * DISCARD too): the flag's list, plus the order for nonfull and frag. */
static inline __attribute__((always_inline)) int sli_list_of(const sl_cluster *c)
{
	static const int8_t base[8] = {
		[SL_CF_NONE] = -1, [SL_CF_FREE] = SL_LIST_FREE, [SL_CF_NONFULL] = SL_LIST_NONFULL0,
		[SL_CF_FRAG] = SL_LIST_FRAG0, [SL_CF_FULL] = SL_LIST_FULL,
		[SL_CF_DISCARD] = SL_LIST_DISCARD, [6] = -1, [7] = -1,
	};
	/* 0xff where the list is per order (nonfull, frag) */
	static const uint8_t per_order[8] = { [SL_CF_NONFULL] = 0xff, [SL_CF_FRAG] = 0xff };

	if (c->flags > SL_CF_DISCARD)
		return -1;
	return base[c->flags] + (c->order & per_order[c->flags]);
}
/* First cluster of a list, or SL_NIL. */
static inline uint32_t sli_list_first(const sl_device *d, int list)
{
	uint32_t h = sli_head(d, list);
	uint32_t n = d->ci[h].next;
	return n == h ? SL_NIL : n;
}
static inline int sli_list_empty(const sl_device *d, int list)
{
	return sli_list_first(d, list) == SL_NIL;
}
/* list_del() for cluster c, which is on the list its flag names. */
static inline __attribute__((always_inline)) void sli_cluster_unlink(sl_device *d, uint32_t c)
{
	sl_cluster *ci = d->ci;
	int list = sli_list_of(&ci[c]);

	SL_ASSERT(list >= 0 && d->list_len[list] > 0);
	SL_ASSERT(ci[c].prev != SL_NIL && ci[c].next != SL_NIL);
	ci[ci[c].prev].next = ci[c].next;
	ci[ci[c].next].prev = ci[c].prev;
	ci[c].prev = ci[c].next = SL_NIL;
	d->list_len[list]--;
}

/* list_add_tail() of cluster c, which is on no list. */
static inline __attribute__((always_inline)) void sli_cluster_link_tail(sl_device *d, uint32_t c, int list)
{
	sl_cluster *ci = d->ci;
	uint32_t h = sli_head(d, list);
	uint32_t last = ci[h].prev;

	SL_ASSERT(ci[c].prev == SL_NIL && ci[c].next == SL_NIL);
	ci[c].prev = last;
	ci[c].next = h;
	ci[last].next = c;
	ci[h].prev = c;
	d->list_len[list]++;
}

/* The move itself: list, link and flag together (I1). No lock asserted
 * (swapon's setup_clusters() takes none). */
static inline __attribute__((always_inline)) void sli_cluster_move(sl_device *d, uint32_t c, int list, int flag)
{
	SL_ASSERT(c < d->nr_clusters);
	/* the list is the one the new flag and the cluster's order name */
	SL_ASSERT(flag != SL_CF_NONE &&
		  sli_list_of(&(sl_cluster){ .flags = (uint8_t)flag, .order = d->ci[c].order }) == list);
	if (d->ci[c].flags != SL_CF_NONE)
		sli_cluster_unlink(d, c);
	sli_cluster_link_tail(d, c, list);
	d->ci[c].flags = (uint8_t)flag;
	if (flag == SL_CF_FULL)
		d->ci[c].free_from = SL_CLUSTER; /* I8: no slot free (I5) */
}

/* move_cluster(): puts cluster c at the tail of `list` with `flag`, taking
 * it off its current list first if it is on one; `list` must be the one
 * the flag and the cluster's order name. Must be called with the device
 * lock held (list membership is si->lock's). */
static inline __attribute__((always_inline)) void sli_move_cluster(sl_device *d, uint32_t c, int list, int flag)
{
	sl_assert_dev_locked(d);
	sli_cluster_move(d, c, list, flag);
}

/* Takes cluster c off its list; its flag becomes NONE. Must be called
 * with the device lock held. */
static inline __attribute__((always_inline)) void sli_isolate_cluster(sl_device *d, uint32_t c)
{
	sl_assert_dev_locked(d);
	SL_ASSERT(c < d->nr_clusters);
	if (d->ci[c].flags == SL_CF_NONE)
		return;
	sli_cluster_unlink(d, c);
	d->ci[c].flags = SL_CF_NONE;
}

/* SWAP_CLUSTER_COLS (<= 6.17): max(64 / sizeof(ci), 64 MiB / 2 MiB) columns
 * of the initial free list. */
#define SL_SWAP_CLUSTER_COLS 32u

/* setup_clusters(): clusters holding bad slots (header, padding) go to
 * nonfull[0] with order 0, the others to the free list, taken in `cols`
 * interleaved columns (<= 6.17: 32, so list neighbours are 64 MiB apart;
 * 6.18: 1, ascending). Swapon: no lock, every cluster on no list yet. */
void sli_setup_clusters(sl_device *d, uint32_t cols);

/* Marks nr = 2^order free slots at off as used with swap count 1; sets the
 * cluster order when the cluster was empty. Must be called with the
 * cluster's lock held and every slot of the range free, inside one cluster
 * (the slot-map half of cluster_alloc_range()). */
void sli_alloc_range(sl_device *d, uint64_t off, int order);
/* The range [off, off+nr) lies inside one cluster. */
static inline int sli_in_one_cluster(uint64_t off, uint32_t nr)
{
	return nr > 0 && (off & (SL_CLUSTER - 1)) + nr <= SL_CLUSTER;
}

/* Every slot of [off, off+nr) holds `byte`. */
static inline int sli_range_is(const sl_device *d, uint64_t off, uint32_t nr, uint8_t byte)
{
	for (uint32_t i = 0; i < nr; i++)
		if (d->map[off + i] != byte)
			return 0;
	return 1;
}

/* Sets n map bytes to `byte`: a folio's worth (at most 64 bytes) in 8-byte
 * stores, inline; more through memset(). */
static inline __attribute__((always_inline)) void sli_fill(uint8_t *p, uint8_t byte, uint64_t n)
{
	if (n == 1) {
		*p = byte;
	} else if (n <= 64 && !(n & 7)) {
		uint64_t w = UINT64_C(0x0101010101010101) * byte;
		for (uint64_t i = 0; i < n; i += 8)
			memcpy(p + i, &w, 8);
	} else {
		memset(p, byte, n);
	}
}

/* sli_alloc_range() and sli_release_range() with the mode as an argument
 * (locks.h: the _m forms). */
static inline __attribute__((always_inline)) void sli_alloc_range_m(sl_device *d, uint64_t off, int order, int conc)
{
	uint32_t nr = 1u << order;
	sl_cluster *ci = &d->ci[sli_cluster_of(off)];

	sl_assert_ci_locked(d, sli_cluster_of(off));
	SL_ASSERT(order >= 0 && order < SL_NR_ORDERS && sli_in_one_cluster(off, nr));
	SL_ASSERT(off > 0 && sli_range_is(d, off, nr, SL_SLOT_FREE) && ci->count + nr <= SL_CLUSTER);
	if (ci->count == 0)
		ci->order = (uint8_t)order;
	sli_fill(d->map + off, 1, nr);
	ci->count = (uint16_t)(ci->count + nr);
	sli_inuse_add_m(d, nr, conc);
	if (d->shadow) {
		for (uint32_t i = 0; i < nr; i++)
			if (d->shadow[off + i])
				d->shadow_errors++;
		d->shadow[off] = (uint8_t)(order + 1);
		if (nr > 1)
			memset(d->shadow + off + 1, SL_SHADOW_TAIL, nr - 1);
	}
}

static inline __attribute__((always_inline)) void sli_release_range_m(sl_device *d, uint64_t off, uint32_t nr, int conc)
{
	sl_cluster *ci = &d->ci[sli_cluster_of(off)];

	/* swap_entries_free(): one cluster, in use, each slot's last
	 * reference gone (cache only) */
	sl_assert_ci_locked(d, sli_cluster_of(off));
	SL_ASSERT(sli_in_one_cluster(off, nr) && ci->count >= nr);
	SL_ASSERT(sli_range_is(d, off, nr, SL_SLOT_CACHE));
	sli_fill(d->map + off, SL_SLOT_FREE, nr);
	if (d->shadow)
		memset(d->shadow + off, 0, nr);
	ci->count = (uint16_t)(ci->count - nr);
	if ((off & (SL_CLUSTER - 1)) < ci->free_from)
		ci->free_from = (uint16_t)(off & (SL_CLUSTER - 1)); /* I8 */
	sli_inuse_add_m(d, -(int64_t)nr, conc);
	sli_stats_m(d, conc)->freed_slots += nr;
}

/* Marks slots [off, off+n) (inside one cluster, all free) as holding the
 * cache only (0x40): reserved by a slot cache, not yet handed out. Must be
 * called with the cluster's lock held. */
void sli_reserve_range(sl_device *d, uint64_t off, uint32_t n);
/* Hands out one slot a slot cache reserved (0x40): it becomes the folio's
 * slot with swap count 1. Must be called with the cluster's lock held. */
void sli_take_reserved(sl_device *d, uint64_t off);
/* Releases nr slots inside one cluster, each holding the cache only (0x40:
 * its last reference dropped): map -> free, count and usage down. Must be
 * called with the cluster's lock held. Does not touch lists (the policy
 * relocates the cluster). */
void sli_release_range(sl_device *d, uint64_t off, uint32_t nr);

/* <= 6.13 swap_cluster_schedule_discard() / swap_do_scheduled_discard():
 * an empty cluster's slots are marked bad while its discard is pending, so
 * no scan takes them (on), and free again after it (off). Count and usage
 * do not change: the slots were freed before (count 0). */
void sli_mark_discarding(sl_device *d, uint32_t c, int on);

/* Eight map bytes from p, slot p+j in bits 8j..8j+7 (any byte order):
 * for the word-at-a-time (SWAR) scans of the map. */
static inline __attribute__((always_inline)) uint64_t sli_map_load8(const uint8_t *p)
{
	uint64_t x;

	memcpy(&x, p, sizeof(x));
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	x = __builtin_bswap64(x);
#endif
	return x;
}

/* 1 in each byte of a map word that is not SL_SLOT_FREE (zero), 0 in the
 * others: adding 0x7f to a byte's low seven bits carries into its high bit
 * when they are not all zero (no carry leaves the byte), and the byte's
 * own high bit covers the rest. */
static inline __attribute__((always_inline)) uint64_t sli_map_nz(uint64_t x)
{
	const uint64_t low7 = UINT64_C(0x7f7f7f7f7f7f7f7f), high = UINT64_C(0x8080808080808080);

	return ((((x & low7) + low7) | x) & high) >> 7;
}

/* True when every slot of [off, off+nr) is free. */
static inline __attribute__((always_inline)) int sli_range_free(const sl_device *d, uint64_t off, uint32_t nr)
{
	const uint8_t *p = d->map + off;

	if (nr < 8) {
		for (uint32_t i = 0; i < nr; i++)
			if (p[i])
				return 0;
		return 1;
	}
	for (uint32_t i = 0; i < nr; i += 8) {
		uint64_t w;
		memcpy(&w, p + i, 8);
		if (w)
			return 0;
	}
	return 1;
}

/* The first free slot in [from, to), or `to`. A scan from a cluster's
 * first slot starts at its free_from (I8: nothing below it is free). */
static inline __attribute__((always_inline)) uint64_t sli_find_free(const sl_device *d, uint64_t from, uint64_t to)
{
	if (from >= to)
		return to;
	if (!d->map[from])
		return from; /* the cursor's own slot: the common case */
	if (!(from & (SL_CLUSTER - 1))) {
		from += d->ci[sli_cluster_of(from)].free_from;
		if (from >= to)
			return to;
		if (!d->map[from])
			return from; /* one slot released since the cluster was full */
	}
	const uint8_t *p = memchr(d->map + from, 0, to - from);
	return p ? (uint64_t)(p - d->map) : to;
}

#endif
