/*
 * swaplab/types.h - the swap device model: glossary, invariants, data layout.
 *
 * Glossary
 *   slot     One 4 KiB unit of a swap device, named by its offset. Offset 0 is
 *            the swap header and is never allocated.
 *   cluster  512 naturally aligned slots (2 MiB of swap, SWAPFILE_CLUSTER in
 *            the kernel). Cluster c holds slots [c*512, c*512+512).
 *   order    log2 of a folio's size in pages: 0 (4 KiB) .. 9 (2 MiB, PMD).
 *            An order-k allocation is 2^k slots, naturally aligned, inside
 *            one cluster.
 *   count    A cluster's number of non-free slots: allocated, cache-only and
 *            bad slots (the header and the padding past the device end
 *            included).
 *   list     Every cluster sits on at most one list: free, nonfull[order],
 *            frag[order], full or discard. Its flag names that list; NONE
 *            means it is isolated (taken off by an allocator).
 *   cursor   A per-CPU, per-order slot offset where the next allocation of
 *            that order continues (0 = none; slot 0 is the header).
 *   device   One swap area: the slot map, the cluster array, the lists, the
 *            cursors and counters.
 *
 * Slot map bytes follow the kernel's swap_map encoding (<= swap table
 * phase II): 0 free, 1..0x3e a swap count, 0x3f bad, 0x40 "has cache"
 * (0x40 alone = cache-only: no reference but still pinned).
 *
 * Invariants (checked by sl_device_check(), tagged in check.c):
 *   I1  a cluster is on a list  <=>  its flag != NONE, and it is on the list
 *       its flag (and, for nonfull/frag, its order) names.
 *   I2  cluster.count == number of non-free slots in the cluster; except
 *       (<= 6.13) a cluster pending discard: count 0, every slot bad.
 *   I3  sum of list lengths + isolated clusters == nr_clusters; every list's
 *       recorded length equals its real length. An isolated cluster is
 *       NONE with no links (one off every list but still linked is lost).
 *   I4  inuse_pages == sum over clusters of count minus bad slots.
 *   I5  a free cluster (count 0) has order 0; a full cluster has count 512;
 *       a cluster pending discard has count 0.
 *   I6  (debug shadow on) every live allocation of order k starts at a
 *       multiple of 2^k, lies inside one cluster, and - for policies that
 *       dedicate clusters to orders - lies in a cluster of order k, or k == 0.
 *   I7  no slot is owned by two live allocations.
 *   I8  no slot of a cluster below its free_from is free.
 */
#ifndef SWAPLAB_TYPES_H
#define SWAPLAB_TYPES_H

#include <stddef.h>
#include <stdint.h>
#include <stdatomic.h>

#define SL_CLUSTER_SHIFT 9
#define SL_CLUSTER 512u             /* SWAPFILE_CLUSTER with CONFIG_THP_SWAP */
#define SL_NR_ORDERS 10             /* SWAP_NR_ORDERS: orders 0..9 */
#define SL_PMD_ORDER 9
#define SL_MTHP_MIN_ORDER 2         /* the smallest anonymous mTHP: 16 KiB */
#define SL_PAGE_SIZE 4096u
#define SL_MAX_CPUS 256
#define SL_CACHELINE 64
/* A CPU's row of cursors: SL_NR_ORDERS used, padded to two cache lines so
 * that CPUs never write the same line (the kernel's are per-CPU data). */
#define SL_CURSOR_STRIDE 16

/* swap_map byte values */
#define SL_SLOT_FREE 0x00
#define SL_SLOT_MAX 0x3e            /* SWAP_MAP_MAX */
#define SL_SLOT_BAD 0x3f            /* SWAP_MAP_BAD */
#define SL_SLOT_CACHE 0x40          /* SWAP_HAS_CACHE */
/* swap_count(): a map byte's reference count, SWAP_HAS_CACHE (and the
 * never-modelled COUNT_CONTINUED) masked off */
#define SL_SLOT_COUNT_MASK 0x3f
/* The largest device the model takes: 2^40 slots (4 PiB of swap). */
#define SL_MAX_SLOTS (UINT64_C(1) << 40)

/* Cluster flags, in the 6.14+ enum order: flags <= SL_CF_USABLE may be
 * allocated from. Older generations use the same values for their lists. */
enum sl_cflag {
	SL_CF_NONE = 0,     /* isolated: on no list */
	SL_CF_FREE,
	SL_CF_NONFULL,
	SL_CF_FRAG,
	SL_CF_FULL,
	SL_CF_DISCARD,
};
#define SL_CF_USABLE SL_CF_FRAG

/* List ids. nonfull and frag are per order. */
enum {
	SL_LIST_FREE = 0,
	SL_LIST_NONFULL0 = 1,                        /* + order */
	SL_LIST_FRAG0 = 1 + SL_NR_ORDERS,            /* + order */
	SL_LIST_FULL = 1 + 2 * SL_NR_ORDERS,
	SL_LIST_DISCARD,
	SL_NR_LISTS
};
#define SL_LIST_NONFULL(o) (SL_LIST_NONFULL0 + (o))
#define SL_LIST_FRAG(o) (SL_LIST_FRAG0 + (o))

/* One cluster (struct swap_cluster_info) plus its list links. List heads are
 * extra entries of the same array, past the last cluster, so links are plain
 * indices. 16 bytes: four to a cache line, none across two. */
typedef struct sl_cluster {
	uint16_t count;
	uint8_t flags;
	uint8_t order;
	uint32_t prev, next;
	/* The model's own, no kernel field: no slot of the cluster below this
	 * offset in it is free (I8). A scan from the cluster's first slot -
	 * the kernel's, over the used prefix - starts there instead
	 * (sli_find_free()) and finds the same slot. Set to the end when the
	 * cluster moves to the full list, lowered by a release below it. */
	uint16_t free_from;
} sl_cluster;

/* Device properties (the kernel's si->flags that steer allocation). */
enum {
	SL_DEV_BLKDEV = 1u << 0,      /* SWP_BLKDEV: a block device, not a file */
	SL_DEV_SOLIDSTATE = 1u << 1,  /* non-rotational */
	SL_DEV_DISCARD = 1u << 2,     /* SWP_PAGE_DISCARD */
	SL_DEV_SYNCIO = 1u << 3,      /* SWP_SYNCHRONOUS_IO (zram) */
};
#define SL_DEV_ZRAM (SL_DEV_BLKDEV | SL_DEV_SOLIDSTATE | SL_DEV_SYNCIO)

/* Allocator-side counters of one device. */
typedef struct sl_dev_stats {
	uint64_t alloc_ok[SL_NR_ORDERS];
	uint64_t alloc_fail[SL_NR_ORDERS];
	uint64_t alloc_fast[SL_NR_ORDERS];   /* served by the per-CPU cursor */
	uint64_t alloc_steal;                /* order-0 taken from a higher-order cluster */
	uint64_t handoffs;                   /* freed ranges handed to the freeing CPU's cursor
						(SL_POL_KEEP_FULL0: lrm_handoff()) */
	uint64_t handoff_takes;              /* such ranges another allocation took before it
						failed (xp_handed_cluster()) */
	uint64_t freed_slots;
	uint64_t full_reclaim_scans;
	uint64_t discarded_clusters;         /* through the discard list */
	/* proposal-compact (x_compact.c): window searches, windows freed and
	   allocated, entries moved (each one page copied), searches given up
	   after some moves (an order-0 slot for a move could not be had) */
	uint64_t compact_searches, compact_windows, compact_moves, compact_aborts;
	/* proposal-kcompact's worker (x_compact.c): wake-ups served, windows
	   it freed, entries it moved (each one page copied) - counted apart
	   from the allocation-time step's above */
	uint64_t kcompact_wakes, kcompact_windows, kcompact_moves;
} sl_dev_stats;

struct sl_policy;
struct sl_locks;
struct sl_swapset;
struct sl_swap_slots;
struct sl_dbg_locks;

typedef struct sl_device {
	/* read-mostly: every operation reads these */
	uint64_t max;             /* si->max: slots [0, max) exist */
	uint64_t pages;           /* usable slots: max - 1 - bad */
	uint32_t nr_clusters;     /* ceil(max / 512) */
	unsigned flags;           /* SL_DEV_* */
	int nr_cpus;
	uint8_t *map;             /* nr_clusters * 512 bytes; padding is BAD */
	sl_cluster *ci;           /* nr_clusters clusters, then SL_NR_LISTS heads */
	uint64_t *cursor;         /* [cpu * SL_CURSOR_STRIDE + order], 0 = none; row
				   nr_cpus is the device's global cursor
				   (si->global_cluster, rotational devices) */
	const struct sl_policy *pol;
	void *pstate;             /* the policy's own state */
	uint8_t *shadow;          /* debug: order+1 at an allocation's first
				   slot, SL_SHADOW_TAIL on its other slots */
	uint64_t nr_bad;          /* header, bad and padding slots */
	struct sl_locks *lk;      /* concurrent mode (locks.h), else NULL */
	/* sl_swap_put()'s build for the mode and the policy, picked once
	 * (sli_device_pick_mode(), device.c) */
	void (*put)(struct sl_device *d, int cpu, uint64_t off, uint64_t nr);
	struct sl_swapset *set;   /* the swap devices it belongs to, or NULL */
	int type;                 /* its index there (swp_type()); 0 alone */
	struct sl_swap_slots *slots; /* order-0 slot caches (<= 6.14, swap_slots.h):
				   its own alone, its set's one in a set; or NULL */
	uint64_t **rmap;          /* slot -> the PTE holding it (rmap.h), for a
				   policy with SL_POL_RMAP; else NULL */
	/* written by every allocation and free: a line of its own */
	_Alignas(SL_CACHELINE) _Atomic uint64_t inuse_pages; /* allocated +
				   cache-only slots; atomic for the concurrent mode */
	_Atomic uint64_t gsp_held; /* <= 6.13: slots get_swap_pages() took off
				   nr_swap_pages for the batch it is scanning for
				   and has not allocated yet (scan_classic.h) */
	/* written on every list move, under the device lock */
	_Alignas(SL_CACHELINE) uint32_t list_len[SL_NR_LISTS];
	/* SL_POL_KEEP_FULL0: a cluster on the full list may hold kept free
	 * slots (set on a keep under the cluster lock, cleared by the walk that
	 * finds none); 0 for every other policy */
	_Atomic uint32_t kept0;
	/* proposal-holes-first revision 5: bit o set once a folio of order o
	 * has asked this device for a slot (x_proposal.h xp_note_order());
	 * 0 for every other policy */
	_Atomic uint32_t orders_seen;
	/* single-threaded counters (threads keep their own: locks.h) */
	_Alignas(SL_CACHELINE) sl_dev_stats st;
	uint64_t shadow_errors;   /* I7 violations seen at allocation time */
#ifdef SL_DEBUG
	struct sl_dbg_locks *dbg; /* held-ness of the deterministic mode (locks.h) */
#endif
} sl_device;

#define SL_SHADOW_TAIL 0x80

#endif
