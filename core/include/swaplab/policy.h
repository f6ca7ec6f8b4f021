/*
 * swaplab/policy.h - the allocator policy interface.
 *
 * A policy is one allocator generation (or a new idea) behind a small ops
 * table, selected by name from the registry (core/policies/registry.c).
 * The device (types.h) owns the slot map, the cluster array, the lists and
 * the cursors; a policy decides where an allocation goes and how clusters
 * move between lists, using the shared primitives of cluster.h.
 *
 * Contract
 *   init   called once the slot map is built (header, bad and padding slots
 *          marked and counted); puts every cluster on its first list.
 *   alloc  folio_alloc_swap() for one folio of 2^order pages on `cpu`:
 *          returns the first slot, naturally aligned, or 0 on failure. The
 *          slots come back with swap count 1 (the PTE references of a folio
 *          that was written out and left the swap cache).
 *   free   the last reference to nr slots [off, off+nr) inside one cluster
 *          was dropped (swap_entries_free()); the policy releases them,
 *          or keeps them (a free-slot cache) and releases later.
 *   check  optional policy invariants; returns 0 or writes a message.
 *   fini   releases the policy state.
 *   tick   optional: run deferred work (slot-cache flushes, workers).
 *   drain  optional: return every slot a cache holds to the device, as
 *          swapoff's drain_swap_slots_cache() does; afterwards inuse_pages
 *          counts only slots with references.
 *
 * Several devices (swapset.c): above the devices the kernel picks one by
 * priority, and that layer differs between generations, so a policy also
 * gives the per-device halves its generation's layer calls:
 *   get_swap_pages  (<= 6.13) scan_swap_map_slots() or swap_alloc_cluster()
 *          on one device: up to n slots of 2^order, order-0 ones reserved
 *          (cache-only, for the slot cache), larger ones with count 1;
 *   release (<= 6.13) one reserved slot back (the slot caches' flush);
 *   alloc_fast / alloc_slow  (6.15+) swap_alloc_fast() from this device's
 *          cursor, and cluster_alloc_swap_entry() on it;
 *   sync_discard  (6.18.4+) swap_sync_discard()'s step on one device.
 * A policy with none of them (the baselines) gets one device after another
 * in priority order, large folios only the first.
 *
 * alloc_batch0 (optional, deterministic builds only): n order-0 allocations
 *          in one call, exactly as n calls of alloc(d, cpu, 0) in turn make
 *          them (out[i] the i-th call's slot, 0 where it failed); the device
 *          counts them as it counts alloc's (sl_swap_alloc_batch0()). A
 *          caller with n allocations and nothing between them saves the
 *          calls' layers; without it the device makes the n calls.
 *
 * alloc_pages (optional, the noncontig reference): a folio's slots need not
 * be contiguous, as under a virtual swap layer. It fills out[0 .. 2^order)
 * with one slot per page (swap count 1 each, every run of them naturally
 * aligned inside one cluster) and returns how many runs of consecutive slots
 * they form, 1 .. 2^order, or 0 when it allocated nothing. The process model
 * then takes every large folio's slots through it and stores them per PTE;
 * a policy without it keeps the contiguous `alloc` path untouched.
 *
 * props also carries the process-side behaviour of the generation
 * (SL_POL_SWAPIN_LARGE, SL_POL_SPLIT_ZEROPAGE, SL_POL_SPLIT_MTHP), so a
 * history run of an old kernel uses that kernel's swap-in and split rules.
 */
#ifndef SWAPLAB_POLICY_H
#define SWAPLAB_POLICY_H

#include "types.h"

enum {
	/* Large allocations always land in a cluster of their own order
	 * (cluster.order == order): invariant I6 checks it. */
	SL_POL_ORDERED_CLUSTERS = 1u << 0,
	/* The generation swaps mTHP folios in whole on synchronous-I/O devices
	 * (6.13+); without it every swap-in is order 0. */
	SL_POL_SWAPIN_LARGE = 1u << 1,
	/* Splits of anonymous folios map never-written pages to the shared zero
	 * page (6.12+, docs/kernel-findings.md F1/F2). */
	SL_POL_SPLIT_ZEROPAGE = 1u << 2,
	/* Large folios below PMD size cannot be swapped out whole (<= 6.9):
	 * reclaim splits them before asking for slots. */
	SL_POL_SPLIT_MTHP = 1u << 3,
	/* A fallback split's pages are reclaimed head first, then the last page
	 * down to the second (6.15+ __folio_split); without it, ascending. */
	SL_POL_SPLIT_DESCENDING = 1u << 4,
	/* The policy runs under real locks (locks.h, sl_device_concurrent()). */
	SL_POL_CONCURRENT = 1u << 5,
	/* Frees happen under the cluster lock that dropped the counts (6.14+
	 * swap_entries_put_map); without it, after it is released (<= 6.13). */
	SL_POL_FREE_UNDER_CI_LOCK = 1u << 6,
	/* Order-0 allocations and frees pass through per-CPU slot caches
	 * (<= 6.13, swap_slots.h); with several devices the caches sit above
	 * them (one per CPU, not per device). */
	SL_POL_SLOT_CACHE = 1u << 7,
	/* A cluster pending discard has its slots marked bad (<= 6.13
	 * swap_cluster_schedule_discard()); from 6.14 its flag alone keeps
	 * allocators out. */
	SL_POL_DISCARD_MARKS_BAD = 1u << 8,
	/* The policy moves swapped-out entries: the device keeps a reverse
	 * map from each slot to its PTE (rmap.h), which the process model
	 * fills (proposal-compact). */
	SL_POL_RMAP = 1u << 9,
	/* A free that leaves a full cluster with a hole hands the freed range
	 * to the freeing CPU's idle cursor (lrm_handoff(), revision 4); else,
	 * while swap is plentiful, a slot freed in a full order-0 cluster that
	 * keeps it nearly full leaves the cluster on the full list (revision
	 * 3, lrm_keep_full0()). Neither moves a list or takes the device
	 * lock; order 0 takes kept slots back before it steals
	 * (proposal-holes-first revisions 3 and 4). Invariant I5 allows both. */
	SL_POL_KEEP_FULL0 = 1u << 10,
};
/* SL_POL_KEEP_FULL0: the orders whose fast path such a policy builds with
 * LR_KEEP (lockrework_body.h) and so the orders lrm_handoff() serves:
 * order 0 (proposal-holes) and proposal-holes-first's 1..4 */
#ifndef SL_KEEP_HANDOFF_MAX_ORDER
#define SL_KEEP_HANDOFF_MAX_ORDER 4 /* -DSL_KEEP_HANDOFF_MAX_ORDER=0: order 0 only */
#endif
/* SL_POL_KEEP_FULL0, revision 6: an order-0 free also hands its slot to
 * the CPU's idle cursor in a cluster still on nonfull[0] or frag[0], when
 * it leaves at most this many slots free there (lrm_handoff()); and the
 * CPU's fast path takes a handed slot alone (holes_alloc_fast0()).
 * -DSL_HANDOFF0_SLOTS=0 builds revision 4 (neither). */
#ifndef SL_HANDOFF0_SLOTS
#define SL_HANDOFF0_SLOTS 8u
#endif
/* SL_POL_KEEP_FULL0: kept while fewer slots than this are free in the
 * cluster, and while at least SL_KEEP0_MIN_FREE slots are free */
#define SL_KEEP0_SLOTS 32u
#define SL_KEEP0_MIN_FREE 16384u /* 64 MiB */

typedef struct sl_policy {
	const char *name;       /* CLI name, e.g. "linux-6.18" */
	const char *summary;    /* one line for `swaplab policies` */
	const char *kernel;     /* kernel range modelled, "" for new ideas */
	unsigned props;         /* SL_POL_* */
	int (*init)(sl_device *d);
	void (*fini)(sl_device *d);
	uint64_t (*alloc)(sl_device *d, int cpu, int order);
	void (*free)(sl_device *d, int cpu, uint64_t off, uint32_t nr);
	int (*check)(const sl_device *d, char *msg, size_t len);
	void (*tick)(sl_device *d);
	void (*drain)(sl_device *d);
	int (*get_swap_pages)(sl_device *d, int cpu, int n, uint64_t *out, int order);
	void (*release)(sl_device *d, uint64_t off);
	uint64_t (*alloc_fast)(sl_device *d, int cpu, int order);
	uint64_t (*alloc_slow)(sl_device *d, int cpu, int order);
	uint32_t (*sync_discard)(sl_device *d);
	int (*alloc_pages)(sl_device *d, int cpu, int order, uint64_t *out);
	void (*alloc_batch0)(sl_device *d, int cpu, uint32_t n, uint64_t *out);
	/* <= 6.13: the same generation on a rotational device, which has no
	 * cluster_info and so another allocator (scan_hdd.h); the device
	 * takes this table at creation. */
	const struct sl_policy *rotational;
	/* The same policy built for the concurrent mode (6.14+, lockrework.h):
	 * this table's ops are then the deterministic builds, with no lock
	 * call and no test of the mode, and sl_device_concurrent() gives the
	 * device this one instead. NULL: one build for both modes, whose lock
	 * calls test d->lk (the <= 6.13 policies), or no concurrent mode. */
	const struct sl_policy *concurrent;
} sl_policy;

/* The registry: every policy, in history order, NULL-terminated. */
extern const sl_policy *const sl_policies[];
const sl_policy *sl_policy_find(const char *name);

#endif
