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
#include "debug.h"

/* Lock contracts, as the kernel states them with lockdep_assert_held()
 * (asserted under SL_DEBUG): "ci locked" is the cluster's lock, "si->lock"
 * the device lock (list membership), "global" si->global_cluster_lock,
 * "local" this CPU's percpu_swap_cluster lock. */

/* free_cluster(): count reached 0: free-list tail, order reset; on a
 * discard device the discard list instead (swap_cluster_schedule_discard()).
 * Must be called with ci locked; takes and drops si->lock. The cluster must
 * be empty and not already free. */
void lr_free_cluster(sl_device *d, uint32_t c);
/* partial_free_cluster(): slots were freed, some remain in use: to
 * nonfull[order]. Must be called with ci locked (count strictly between 0
 * and 512); takes and drops si->lock. */
void lr_partial_free_cluster(sl_device *d, uint32_t c);
/* relocate_cluster(): after an allocation attempt: free, frag[order] or
 * full; a cluster pending discard stays where it is. Must be called with ci
 * locked; takes and drops si->lock. */
void lr_relocate_cluster(sl_device *d, uint32_t c);
/* isolate_lock_cluster(): the list's first cluster whose lock could be
 * taken, off its list with flag NONE (SL_NIL if none). Must be called with
 * no lock held; takes and drops si->lock; returns with ci locked. */
uint32_t lr_isolate_lock_cluster(sl_device *d, int list);
/* alloc_swap_scan_cluster(): scan from off (inside c, 2^order-aligned) in
 * steps of 2^order without wrap, allocate the first free range, relocate the
 * cluster, store this CPU's cursor for `order`. Returns the slot or 0.
 * Must be called with ci locked; drops it. */
uint64_t lr_alloc_swap_scan_cluster(sl_device *d, int cpu, uint32_t c, uint64_t off, int order);
/* alloc_swap_scan_list(): isolate and scan the head; with scan_all go on
 * until success or the list is empty. Must be called with no cluster
 * locked; takes and drops si->lock and each cluster's lock. */
uint64_t lr_alloc_swap_scan_list(sl_device *d, int cpu, int list, int order, int scan_all);
/* swap_reclaim_full_clusters(force == false): one full cluster searched for
 * cache-only slots; none here, so it rotates to the full list's tail. Must
 * be called with no cluster locked; takes and drops si->lock and ci. */
void lr_swap_reclaim_full_clusters(sl_device *d);
/* cluster_is_usable(): flags at most FRAG, and order 0, empty or of this
 * order; with_table (6.18): the swap table must exist too, which it does
 * while the cluster holds slots or is isolated. Called with ci locked (it
 * reads flags and count); a pure test. */
int lr_cluster_is_usable(const sl_cluster *ci, int order, int with_table);
/* swap_alloc_fast(): this CPU's cursor for the order, one cluster only; an
 * emptied cluster restarts at its first slot when usable. Takes and drops
 * the cursor's ci (callers hold local, or global on a rotational device). */
uint64_t lr_swap_alloc_fast(sl_device *d, int cpu, int order, int with_table);
/* The order-0 steal at the end of cluster_alloc_swap_entry(): frag[o] then
 * nonfull[o] for o = 1..9, scanned as order 0. Locks as
 * lr_alloc_swap_scan_list(). */
uint64_t lr_steal_order0(sl_device *d, int cpu);
/* folio_alloc_swap(): the fast path, then - unless the device is full and
 * so off the avail list - the generation's cluster_alloc_swap_entry(),
 * under the global cluster lock on a rotational device. Must be called with
 * no lock held; takes and drops local, then global on a rotational device,
 * si->lock and cluster locks inside. */
typedef uint64_t (*lr_ladder_fn)(sl_device *d, int cpu, int order);
uint64_t lr_folio_alloc_swap(sl_device *d, int cpu, int order, int with_table, lr_ladder_fn ladder);
/* Its two halves on one device, also the per-device steps for several
 * devices (swapset.c): swap_alloc_fast() from this CPU's cursor (solid-state
 * devices only), and swap_alloc_slow() with this device alone on the avail
 * list: the ladder, unless the device is full. Must be called with no
 * cluster locked; lr_swap_alloc_slow() takes and drops global on a
 * rotational device around the ladder (which asserts it). */
uint64_t lr_alloc_fast_dev(sl_device *d, int cpu, int order, int with_table);
uint64_t lr_swap_alloc_slow(sl_device *d, int cpu, int order, lr_ladder_fn ladder);
/* swap_do_scheduled_discard(): every cluster on the discard list is
 * discarded and goes to the free-list tail (__free_cluster()); returns how
 * many. The kernel runs it from a worker soon after scheduling; the model
 * from tick() between workload operations, and synchronously where the
 * allocator does. Must be called with no cluster locked; takes and drops
 * si->lock to find each cluster, then its ci. */
uint32_t lr_swap_do_scheduled_discard(sl_device *d);
/* Step 1 of cluster_alloc_swap_entry() on a rotational device: continue in
 * the device's global cluster for the order (si->global_cluster). Must be
 * called with global held; takes and drops the cluster's ci. */
uint64_t lr_global_cluster_alloc(sl_device *d, int order, int with_table);
/* The first steps of cluster_alloc_swap_entry() - 6.15+: a regular swap
 * file serves order 0 only, and a rotational device continues in its global
 * cluster for the order first (lr_global_cluster_alloc(), global held by
 * swap_alloc_slow()). Returns 1 when the ladder ends there (*found: the
 * slot, or 0: a swap file's large folio), 0 to go on down the ladder. */
/* move_cluster() - 6.14..6.18: with ci locked, the list move takes and
 * drops the device lock; the flag must change. */
void lr_move_cluster(sl_device *d, uint32_t c, int list, int flag);
static inline int lr_ladder_head(sl_device *d, int order, int with_table, uint64_t *found)
{
	SL_ASSERT(order >= 0 && order < SL_NR_ORDERS);
	*found = 0;
	if (order > 0 && !(d->flags & SL_DEV_BLKDEV))
		return 1;
	if (!(d->flags & SL_DEV_SOLIDSTATE))
		*found = lr_global_cluster_alloc(d, order, with_table);
	return *found != 0;
}
/* The ops below and the 6.14+ policies' own are built once per mode
 * (lockrework_body.h): NAME_det holds no lock call and no test of the
 * mode, NAME_conc takes the real locks. A policy's registered table holds
 * the _det builds and names, in `concurrent`, the table of its _conc
 * builds, which sl_device_concurrent() gives the device (policy.h). */

/* swap_discard_work(): the discard worker, as a policy's tick (between
 * workload operations). Locks as lr_swap_do_scheduled_discard(). */
void lr_swap_discard_work_det(sl_device *d);
void lr_swap_discard_work_conc(sl_device *d);
/* The policy free op of 6.14+: swap_entries_free() of the run. Called with
 * ci locked (SL_POL_FREE_UNDER_CI_LOCK: sl_swap_put() holds it). The
 * device's put recognises these two and inlines their body (device.c). */
void lr_free_det(sl_device *d, int cpu, uint64_t off, uint32_t nr);
void lr_free_conc(sl_device *d, int cpu, uint64_t off, uint32_t nr);
/* The ops every 6.14+ table takes from here, in mode m (det or conc). */
#define LR_SHARED_OPS(m) .free = lr_free_##m, .tick = lr_swap_discard_work_##m

/* NAME_det and NAME_conc, the two builds of an op or a ladder of the shape
 * (d, cpu, order) -> slot, from its body NAME_m(d, cpu, order, conc):
 * inlined where called directly (a ladder, once lrm_folio_alloc_swap()
 * is), out of line in the ops tables. */
#define LR_BUILD_BOTH(name)                                                  \
	static inline __attribute__((always_inline)) uint64_t                \
	name##_det(sl_device *d, int cpu, int order)                         \
	{                                                                    \
		return name##_m(d, cpu, order, 0);                           \
	}                                                                    \
	static inline __attribute__((always_inline)) uint64_t                \
	name##_conc(sl_device *d, int cpu, int order)                        \
	{                                                                    \
		return name##_m(d, cpu, order, 1);                           \
	}
/* The build of a ladder NAME_det / NAME_conc for the mode conc (a
 * constant where a body is built once per mode). */
#define LR_PICK(name, conc) ((conc) ? name##_conc : name##_det)
/* swap_entries_free() (6.16+; swap_entry_range_free() in 6.14/6.15):
 * release a run inside one cluster, each slot's last reference dropped,
 * then free_cluster() or partial_free_cluster(). Must be called with ci
 * locked; takes and drops si->lock for the list move. */
void lr_swap_entries_free(sl_device *d, uint64_t off, uint32_t nr);

#endif
