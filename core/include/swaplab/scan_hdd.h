/*
 * swaplab/scan_hdd.h - the allocator of a rotational device up to 6.13:
 * no cluster_info, so scan_swap_map_slots() takes its HDD path (allocate
 * sequentially for SWAPFILE_CLUSTER - 1 slots from si->cluster_next, then
 * look from lowest_bit for the first 512 free slots in a row, unaligned),
 * order 0 only: no mTHP and no PMD THP swap-out on such a device (no
 * cluster, no free-cluster list). Unchanged from 6.9 to 6.13, so linux-6.9,
 * linux-6.10, nonfull-2024 and linux-6.12 share it (their `rotational`
 * table), each with its own process-side props and free rule.
 *
 * The kernel keeps no cluster lists here; the model keeps them as
 * bookkeeping for the invariant checker only (count 0: free list, 512:
 * full, else nonfull[0]); allocation never reads them.
 */
#ifndef SWAPLAB_SCAN_HDD_H
#define SWAPLAB_SCAN_HDD_H

#include "policy.h"

int hd_init(sl_device *d);
void hd_fini(sl_device *d);
uint64_t hd_folio_alloc_swap(sl_device *d, int cpu, int order);
/* free_swap_slot() for every slot (<= 6.10 and nonfull-2024) */
void hd_free_slots(sl_device *d, int cpu, uint64_t off, uint32_t nr);
/* 6.12: a run freed together skips the slot cache */
void hd_free_range_direct(sl_device *d, int cpu, uint64_t off, uint32_t nr);
int hd_get_swap_pages(sl_device *d, int cpu, int n, uint64_t *out, int order);
void hd_release(sl_device *d, uint64_t off);
void hd_drain(sl_device *d);
int hd_check(const sl_device *d, char *msg, size_t len);

/* The rotational table of a <= 6.13 generation. */
#define SL_HDD_CLASSIC_POLICY(name_, props_, free_)                              \
	{ .name = (name_), .summary = "rotational device: the <= 6.13 HDD scan", \
	  .kernel = "", .props = (props_) | SL_POL_SLOT_CACHE, .init = hd_init,   \
	  .fini = hd_fini, .alloc = hd_folio_alloc_swap, .free = (free_),         \
	  .check = hd_check, .drain = hd_drain, .get_swap_pages = hd_get_swap_pages, \
	  .release = hd_release }

#endif
