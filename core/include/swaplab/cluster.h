/*
 * swaplab/cluster.h - primitives shared by the policies (sli_* = cross-file).
 *
 * List membership changes only through sli_move_cluster() and
 * sli_isolate_cluster() (cluster.c): they update link, length and flag
 * together, so invariant I1 cannot be broken by a policy.
 * Slot ownership changes only through sli_alloc_range() and
 * sli_release_range() (device.c): they keep count, inuse_pages and the
 * debug shadow in step (I2, I4, I7).
 */
#ifndef SWAPLAB_CLUSTER_H
#define SWAPLAB_CLUSTER_H

#include "types.h"

#define SL_NIL UINT32_MAX

static inline uint32_t sli_cluster_of(uint64_t off) { return (uint32_t)(off >> SL_CLUSTER_SHIFT); }
static inline uint64_t sli_cluster_offset(uint32_t c) { return (uint64_t)c << SL_CLUSTER_SHIFT; }
static inline uint32_t sli_head(const sl_device *d, int list) { return d->nr_clusters + (uint32_t)list; }

/* The cursor an allocation of `order` on `cpu` continues from: this CPU's
 * on a non-rotational device, the device's global one on a rotational. */
static inline uint64_t *sli_cursor(sl_device *d, int cpu, int order)
{
	int row = (d->flags & SL_DEV_SOLIDSTATE) ? cpu : d->nr_cpus;
	return &d->cursor[row * SL_CURSOR_STRIDE + order];
}

/* The list a cluster's flag and order name, or -1 for NONE. */
int sli_list_of(const sl_cluster *c);
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
/* move_cluster(): puts cluster c at the tail of `list` with `flag`, taking
 * it off its current list first if it is on one; `list` must be the one
 * the flag and the cluster's order name. Must be called with the device
 * lock held (list membership is si->lock's). */
void sli_move_cluster(sl_device *d, uint32_t c, int list, int flag);
/* Takes cluster c off its list; its flag becomes NONE. Must be called
 * with the device lock held. */
void sli_isolate_cluster(sl_device *d, uint32_t c);

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

/* True when every slot of [off, off+nr) is free. */
int sli_range_free(const sl_device *d, uint64_t off, uint32_t nr);
/* The first free slot in [from, to), or `to`. */
uint64_t sli_find_free(const sl_device *d, uint64_t from, uint64_t to);

#endif
