/*
 * swaplab/lockrework.h - the cluster primitives of the 6.14+ allocator
 * ("mm, swap: rework of swap allocator locks"), identical from 6.14 to 6.18
 * and shared by the linux-6.15 and linux-6.18 policies. Each keeps its
 * kernel function's name behind the lr_ prefix.
 *
 * The generations differ only in cluster_is_usable() (6.18 also needs the
 * cluster's swap table), in the fallback ladder of cluster_alloc_swap_entry()
 * and in the initial list order; those stay in the policy files.
 */
#ifndef SWAPLAB_LOCKREWORK_H
#define SWAPLAB_LOCKREWORK_H

#include "types.h"

/* free_cluster(): count reached 0: free-list tail, order reset; on a
 * discard device the discard list instead (swap_cluster_schedule_discard()). */
void lr_free_cluster(sl_device *d, uint32_t c);
/* partial_free_cluster(): slots were freed, some remain in use. */
void lr_partial_free_cluster(sl_device *d, uint32_t c);
/* relocate_cluster(): after an allocation attempt: free, frag[order] or full. */
void lr_relocate_cluster(sl_device *d, uint32_t c);
/* isolate_lock_cluster(): the list's head taken off (SL_NIL if empty). */
uint32_t lr_isolate_lock_cluster(sl_device *d, int list);
/* alloc_swap_scan_cluster(): scan from off in steps of 2^order without wrap,
 * allocate the first free range, relocate the cluster, store this CPU's
 * cursor for `order`. Returns the slot or 0. */
uint64_t lr_alloc_swap_scan_cluster(sl_device *d, int cpu, uint32_t c, uint64_t off, int order);
/* alloc_swap_scan_list(): isolate and scan the head; with scan_all go on
 * until success or the list is empty. */
uint64_t lr_alloc_swap_scan_list(sl_device *d, int cpu, int list, int order, int scan_all);
/* swap_reclaim_full_clusters(force == false): one full cluster searched for
 * cache-only slots; none here, so it rotates to the full list's tail. */
void lr_swap_reclaim_full_clusters(sl_device *d);
/* cluster_is_usable(): flags at most FRAG, and order 0, empty or of this
 * order; with_table (6.18): the swap table must exist too, which it does
 * while the cluster holds slots or is isolated. */
int lr_cluster_is_usable(const sl_cluster *ci, int order, int with_table);
/* swap_alloc_fast(): this CPU's cursor for the order, one cluster only; an
 * emptied cluster restarts at its first slot when usable. */
uint64_t lr_swap_alloc_fast(sl_device *d, int cpu, int order, int with_table);
/* The order-0 steal at the end of cluster_alloc_swap_entry(): frag[o] then
 * nonfull[o] for o = 1..9, scanned as order 0. */
uint64_t lr_steal_order0(sl_device *d, int cpu);
/* folio_alloc_swap(): the fast path, then - unless the device is full and
 * so off the avail list - the generation's cluster_alloc_swap_entry(),
 * under the global cluster lock on a rotational device. */
typedef uint64_t (*lr_ladder_fn)(sl_device *d, int cpu, int order);
uint64_t lr_folio_alloc_swap(sl_device *d, int cpu, int order, int with_table, lr_ladder_fn ladder);
/* Its two halves on one device, for several devices (swapset.c):
 * swap_alloc_fast() from this CPU's cursor (solid-state devices only), and
 * swap_alloc_slow()'s step: the ladder, unless the device is full. */
uint64_t lr_alloc_fast_dev(sl_device *d, int cpu, int order, int with_table);
uint64_t lr_alloc_slow_dev(sl_device *d, int cpu, int order, lr_ladder_fn ladder);
/* swap_do_scheduled_discard(): every cluster on the discard list is
 * discarded and goes to the free-list tail; returns how many. The kernel
 * runs it from a worker soon after scheduling; the model from tick() between
 * workload operations, and synchronously where the allocator does. */
uint32_t lr_swap_do_scheduled_discard(sl_device *d);
/* Step 1 of cluster_alloc_swap_entry() on a rotational device: continue in
 * the device's global cluster for the order (si->global_cluster, under
 * global_cluster_lock). */
uint64_t lr_global_cluster_alloc(sl_device *d, int order, int with_table);
/* swap_discard_work(): the discard worker, as a policy's tick (between
 * workload operations). */
void lr_swap_discard_work(sl_device *d);
/* The policy free op of 6.14+: swap_entries_free() of the run. */
void lr_free(sl_device *d, int cpu, uint64_t off, uint32_t nr);
/* swap_entries_free(): release a run inside one cluster, then free or
 * partially free the cluster. */
void lr_swap_entries_free(sl_device *d, uint64_t off, uint32_t nr);

#endif
