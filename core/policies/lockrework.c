/*
 * lockrework.c - the 6.14+ cluster primitives shared by linux-6.15 and
 * linux-6.18 (swaplab/lockrework.h), with the 6.14+ locking: a cluster's
 * lock guards its slots, count and flags; the device lock guards list
 * membership only (move_cluster) and is taken inside a cluster lock, or
 * alone to isolate a cluster, which trylocks clusters and skips busy ones.
 * Without the concurrent mode (locks.h) the locks are no-ops and the trylock
 * always succeeds. The model never drops a cluster lock mid-scan: the
 * kernel does so only to reclaim cache-only slots, which do not exist here.
 *
 * Kernel range: 6.14 - 6.18. Kairui Song's series "mm, swap: rework of
 * swap allocator locks" (merged for 6.14) brought the cluster locks, the
 * isolate/relocate list discipline and the per-CPU cluster cursor; "mm,
 * swap: remove swap slot cache" (6.15) split folio_alloc_swap() into
 * swap_alloc_fast() / swap_alloc_slow(); 6.16 renamed
 * swap_entry_range_free() to swap_entries_free(); 6.18's swap table (phase
 * I) adds the table test of cluster_is_usable(). The primitives are
 * otherwise unchanged over the range.
 * Kernel functions modelled here (lr_ + the kernel name where exported):
 * move_cluster, __free_cluster, free_cluster (with
 * swap_cluster_schedule_discard), partial_free_cluster, relocate_cluster,
 * cluster_scan_range, cluster_alloc_range, alloc_swap_scan_cluster,
 * isolate_lock_cluster, alloc_swap_scan_list, swap_reclaim_full_clusters,
 * swap_entries_free, cluster_is_usable, swap_alloc_fast, swap_alloc_slow
 * (one device), folio_alloc_swap, swap_do_scheduled_discard,
 * swap_discard_work.
 * Contracts are asserted under SL_DEBUG (debug.h) where the kernel has
 * lockdep_assert_held() or VM_BUG_ON()/VM_WARN_ON().
 * The bodies are in lockrework_body.h, built once per mode. The policies
 * call the build of their table's mode directly; the lr_* functions here,
 * which pick the build by the device's mode at each call, are the
 * interface for the tests and other callers outside the hot path, and the
 * shared ops (tick, free) come in both builds.
 */

#include "swaplab/lockrework_body.h"

void lr_move_cluster(sl_device *d, uint32_t c, int list, int flag)
{
#define M(conc) lrm_move_cluster(d, c, list, flag, conc)
	SL_BY_MODE(d, M);
#undef M
}

void lr_free_cluster(sl_device *d, uint32_t c)
{
#define M(conc) lrm_free_cluster(d, c, conc)
	SL_BY_MODE(d, M);
#undef M
}

void lr_partial_free_cluster(sl_device *d, uint32_t c)
{
#define M(conc) lrm_partial_free_cluster(d, c, conc)
	SL_BY_MODE(d, M);
#undef M
}

void lr_relocate_cluster(sl_device *d, uint32_t c)
{
#define M(conc) lrm_relocate_cluster(d, c, conc)
	SL_BY_MODE(d, M);
#undef M
}

uint64_t lr_alloc_swap_scan_cluster(sl_device *d, int cpu, uint32_t c, uint64_t off, int order)
{
#define M(conc) lrm_alloc_swap_scan_cluster(d, cpu, c, off, order, conc)
	return SL_BY_MODE(d, M);
#undef M
}

uint32_t lr_isolate_lock_cluster(sl_device *d, int list)
{
#define M(conc) lrm_isolate_lock_cluster(d, list, conc)
	return SL_BY_MODE(d, M);
#undef M
}

uint64_t lr_alloc_swap_scan_list(sl_device *d, int cpu, int list, int order, int scan_all)
{
#define M(conc) lrm_alloc_swap_scan_list(d, cpu, list, order, scan_all, conc)
	return SL_BY_MODE(d, M);
#undef M
}

void lr_swap_reclaim_full_clusters(sl_device *d)
{
#define M(conc) lrm_swap_reclaim_full_clusters(d, conc)
	SL_BY_MODE(d, M);
#undef M
}

void lr_swap_entries_free(sl_device *d, uint64_t off, uint32_t nr)
{
#define M(conc) lrm_swap_entries_free(d, off, nr, conc)
	SL_BY_MODE(d, M);
#undef M
}

/* cluster_is_usable() - 6.14..6.18; with_table: 6.18's cluster_table_is_alloced(). */
int lr_cluster_is_usable(const sl_cluster *ci, int order, int with_table)
{
	return lrm_cluster_is_usable(ci, order, with_table);
}

uint64_t lr_swap_alloc_fast(sl_device *d, int cpu, int order, int with_table)
{
#define M(conc) lrm_swap_alloc_fast(d, cpu, order, with_table, conc)
	return SL_BY_MODE(d, M);
#undef M
}

uint64_t lr_steal_order0(sl_device *d, int cpu)
{
#define M(conc) lrm_steal_order0(d, cpu, conc)
	return SL_BY_MODE(d, M);
#undef M
}

uint64_t lr_alloc_fast_dev(sl_device *d, int cpu, int order, int with_table)
{
#define M(conc) lrm_alloc_fast_dev(d, cpu, order, with_table, conc)
	return SL_BY_MODE(d, M);
#undef M
}

uint64_t lr_swap_alloc_slow(sl_device *d, int cpu, int order, lr_ladder_fn ladder)
{
#define M(conc) lrm_swap_alloc_slow(d, cpu, order, ladder, conc)
	return SL_BY_MODE(d, M);
#undef M
}

uint64_t lr_folio_alloc_swap(sl_device *d, int cpu, int order, int with_table, lr_ladder_fn ladder)
{
#define M(conc) lrm_folio_alloc_swap(d, cpu, order, with_table, ladder, conc)
	return SL_BY_MODE(d, M);
#undef M
}

uint32_t lr_swap_do_scheduled_discard(sl_device *d)
{
#define M(conc) lrm_swap_do_scheduled_discard(d, conc)
	return SL_BY_MODE(d, M);
#undef M
}

uint64_t lr_global_cluster_alloc(sl_device *d, int order, int with_table)
{
#define M(conc) lrm_global_cluster_alloc(d, order, with_table, conc)
	return SL_BY_MODE(d, M);
#undef M
}

/* swap_discard_work() - 6.14..6.18, in each mode. */
void lr_swap_discard_work_det(sl_device *d)
{
	if (d->flags & SL_DEV_DISCARD)
		lrm_swap_do_scheduled_discard(d, 0);
}

void lr_swap_discard_work_conc(sl_device *d)
{
	if (d->flags & SL_DEV_DISCARD)
		lrm_swap_do_scheduled_discard(d, 1);
}

/* The free op - 6.14..6.18: swap_entries_free() of the run, in each mode. */
void lr_free_det(sl_device *d, int cpu, uint64_t off, uint32_t nr)
{
	(void)cpu;
	lrm_swap_entries_free(d, off, nr, 0);
}

void lr_free_conc(sl_device *d, int cpu, uint64_t off, uint32_t nr)
{
	(void)cpu;
	lrm_swap_entries_free(d, off, nr, 1);
}
