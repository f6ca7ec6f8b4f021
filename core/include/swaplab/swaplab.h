/*
 * swaplab/swaplab.h - the public API of the C core.
 *
 * Four layers, each usable alone:
 *   device   a swap area and its allocator policy         (device.c, cluster.c)
 *   process  regions, folios, PTEs; faults, madvise, reclaim (process.c)
 *   workload seeded operation streams (thp-swap-v1, thp-swap) (workload.c, rng.c)
 *   run      a workload driven through process + device, with per-iteration
 *            counters and layout hashes                    (run.c)
 * The core never touches Python, /proc or system calls; the kernel driver
 * replays the same workload streams on the live kernel.
 */
#ifndef SWAPLAB_H
#define SWAPLAB_H

#include <stdint.h>
#include <stddef.h>
#include <signal.h>
#include "types.h"
#include "policy.h"
#include "locks.h"

#define SWAPLAB_VERSION "0.1.0"

/* ------------------------------------------------------------------ device */

/* Creates a device of `max` slots (slot 0 is the header; the last cluster's
 * slots past `max` are padding) driven by `pol`. debug != 0 keeps the
 * allocation shadow for invariants I6/I7. Returns NULL with a message. */
sl_device *sl_device_create(uint64_t max, unsigned flags, int nr_cpus,
			    const sl_policy *pol, int debug, char *msg, size_t len);
void sl_device_destroy(sl_device *d);

/* folio_alloc_swap(): 2^order slots for `cpu`, or 0 on failure. */
uint64_t sl_swap_alloc(sl_device *d, int cpu, int order);
/* n order-0 calls of sl_swap_alloc() in turn, in one call: out[i] the i-th
 * one's slot or 0 (through the policy's alloc_batch0 where it has one). */
void sl_swap_alloc_batch0(sl_device *d, int cpu, uint32_t n, uint64_t *out);
/* The same through the policy's alloc_pages (policy.h): one slot per page
 * in out[0 .. 2^order), not necessarily contiguous; returns the number of
 * runs of consecutive slots, or 0 on failure (or without alloc_pages). */
int sl_swap_alloc_pages(sl_device *d, int cpu, int order, uint64_t *out);
/* Drops one reference from each of nr slots starting at off (any clusters);
 * slots whose count reaches zero are freed through the policy, one call per
 * run inside a cluster. */
void sl_swap_put(sl_device *d, int cpu, uint64_t off, uint64_t nr);
/* Device kinds by name: zram, ssd, ssd-discard, hdd, file. */
unsigned sl_device_kind(const char *name, int *ok);
const char *sl_device_kind_name(unsigned flags);
/* The i-th kind's name in that order (zram first, the default), NULL past the last. */
const char *sl_device_kind_at(int i);
/* Checks invariants I1-I7 and the policy's own; 0 if all hold. */
int sl_device_check(const sl_device *d, char *msg, size_t len);
/* vm_swap_full(): over half of all swap in use. */
int sl_vm_swap_full(const sl_device *d);
/* nr_swap_pages and total_swap_pages: free and usable slots of every
 * device in d's set (d alone without one); nr_swap_pages is short of a
 * get_swap_pages() batch in progress (<= 6.13), as the kernel's counter. */
uint64_t sl_nr_swap_pages(const sl_device *d);
uint64_t sl_total_swap_pages(const sl_device *d);
/* 1 if the slot map holds 2^order free slots in a row, naturally aligned:
 * what a contiguous allocator could have given a folio of that order. A
 * scan of the map (word at a time), for failure paths and checks only.
 * hint: NULL, or where the last call at this order found one: the scan
 * starts there, wraps, and leaves the new find there. */
int sl_dev_has_free_run(const sl_device *d, int order, uint64_t *hint);

/* ------------------------------------------------------------------ swapset */

/* Several swap devices (swapon'ed areas) with priorities: swap_info[] and
 * the swap_avail list. A swap entry names a device and a slot:
 * type << SL_TYPE_SHIFT | offset, so device 0's entries are its offsets. */
#define SL_MAX_SWAPFILES 8
#define SL_TYPE_SHIFT 48
#define SL_PRIO_AUTO INT32_MIN   /* swapon without -p: -2, -3, ... */
#define SL_PRIO_MAX 32767        /* swapon -p: 0..SWAP_FLAG_PRIO_MASK */
static inline uint64_t sl_entry(int type, uint64_t off)
{
	return ((uint64_t)type << SL_TYPE_SHIFT) | off;
}
static inline int sl_entry_type(uint64_t e) { return (int)(e >> SL_TYPE_SHIFT); }
static inline uint64_t sl_entry_off(uint64_t e) { return e & ((UINT64_C(1) << SL_TYPE_SHIFT) - 1); }

struct sl_swap_slots;
typedef struct sl_swapset {
	int nr;                          /* devices, by type (swapon order) */
	sl_device *dev[SL_MAX_SWAPFILES];
	int prio[SL_MAX_SWAPFILES];      /* si->prio */
	int avail[SL_MAX_SWAPFILES];     /* swap_avail_head: the types of the
					    devices that are not full, highest
					    priority first */
	int navail;
	int own;                         /* destroy the devices with the set */
	const sl_policy *pol;
	int8_t *pcp_si;                  /* [cpu * SL_NR_ORDERS + order]: 6.15+
					    percpu_swap_cluster.si, -1 = none */
	struct sl_swap_slots *slots;     /* per-CPU slot caches above several
					    devices (SL_POL_SLOT_CACHE): every
					    device's d->slots names them */
	struct sl_swap_slots *dev_slots[SL_MAX_SWAPFILES]; /* each device's own,
					    given back when the set goes */
	uint64_t alloc_fail[SL_NR_ORDERS];
} sl_swapset;

/* swapon of every device, in type order: all must share policy and CPU
 * count. prio[i] is SL_PRIO_AUTO or 0..SL_PRIO_MAX. With own, the set destroys
 * the devices. Returns NULL with a message. */
sl_swapset *sl_swapset_create(sl_device *const *dev, const int *prio, int n, int own, char *msg,
			      size_t len);
void sl_swapset_destroy(sl_swapset *s);
/* folio_alloc_swap() over the devices: the entry, or 0 on failure. */
uint64_t sl_set_alloc(sl_swapset *s, int cpu, int order);
/* n order-0 calls of sl_set_alloc() in turn: out[i] the i-th one's entry or 0. */
void sl_set_alloc_batch0(sl_swapset *s, int cpu, uint32_t n, uint64_t *out);
/* sl_swap_alloc_pages() over the devices: entries in out[], the number of
 * runs, or 0; a large folio tries the first device only. */
int sl_set_alloc_pages(sl_swapset *s, int cpu, int order, uint64_t *out);
/* sl_swap_put() of nr entries from e, all on e's device. */
void sl_set_put(sl_swapset *s, int cpu, uint64_t e, uint64_t nr);
/* Deferred work of every device (the discard workers). */
void sl_set_tick(sl_swapset *s);
/* Every slot a cache holds back to its device (drain_swap_slots_cache()). */
void sl_set_drain(sl_swapset *s);
/* Every device's invariants and the avail list's: 0 if all hold. */
int sl_set_check(const sl_swapset *s, char *msg, size_t len);
/* Slots in use over all devices. */
uint64_t sl_set_inuse(const sl_swapset *s);
static inline sl_device *sl_set_dev(const sl_swapset *s, uint64_t e)
{
	return s->dev[sl_entry_type(e)];
}

/* ------------------------------------------------------------------ rng */

enum { SL_RNG_DEFAULT = 0, SL_RNG_GLIBC = 1 };
typedef struct sl_rng {
	int kind;
	uint64_t s[4];             /* xoshiro256** state */
	int32_t r[34];             /* glibc random_r TYPE_3 window */
	int gi;
} sl_rng;
void sl_rng_init(sl_rng *r, int kind, uint64_t seed);
/* A value in [0, n): glibc: rand() % n; default: multiply-shift of 64 bits. */
uint32_t sl_rng_below(sl_rng *r, uint32_t n);
/* The next raw value: glibc rand() (31 bits), or a 64-bit xoshiro output. */
uint64_t sl_rng_next(sl_rng *r);

/* ------------------------------------------------------------------ workload */

enum { SL_WL_THP_SWAP_V1 = 0, SL_WL_THP_SWAP = 1, SL_NR_WORKLOADS };

typedef struct sl_wl_params {
	int workload;              /* SL_WL_* */
	uint64_t swap_bytes;       /* device size in bytes */
	unsigned mthp_mask;        /* bit k: order k mTHP size set to "always" */
	int small_folios;          /* -s */
	int aligned_swapin;        /* -a (thp-swap only) */
	int iterations;
	uint64_t seed;
	int rng;                   /* SL_RNG_* */
	int cpu;
	uint64_t region_a_bytes;   /* 0: workload default */
	uint64_t region_b_bytes;   /* 0: workload default */
	uint32_t region_a_offset;  /* address of region A modulo 2 MiB, in bytes:
				      a multiple of 4 KiB below 2 MiB (0: aligned) */
	uint32_t region_b_offset;  /* the same for region B */
	uint32_t chunk_bytes;      /* 0: 64 KiB, the programs' chunk */
	unsigned device;           /* SL_DEV_* flags; default SL_DEV_ZRAM */
	int cpus;                  /* CPUs the task may run on: cpu .. cpu+cpus-1 */
	uint32_t migrate_every;    /* move to the next CPU every N swap allocations
				      (0: pinned to cpu) */
	int swap_prio;             /* the device's priority, SL_PRIO_AUTO: none */
	int nr_extra;              /* more devices, swapon'ed after it */
	struct sl_swap_spec {
		uint64_t bytes;
		unsigned kind;     /* SL_DEV_* */
		int prio;          /* SL_PRIO_AUTO or 0..SL_PRIO_MAX */
	} extra[SL_MAX_SWAPFILES - 1];
	int metrics;               /* sl_run: fragmentation metrics per iteration */
} sl_wl_params;

/* Fills defaults for the workload's own sizes and counts. */
void sl_wl_defaults(sl_wl_params *p, int workload);
/* Validates; returns 0 or writes a one-line message naming the problem. */
int sl_wl_validate(const sl_wl_params *p, char *msg, size_t len);
const char *sl_wl_name(int workload);
int sl_wl_lookup(const char *name);

enum { SL_REGION_A = 0, SL_REGION_B = 1, SL_MAX_REGIONS = 2 };
enum { SL_VMA_HUGEPAGE = 1, SL_VMA_NOHUGEPAGE = 2 };

typedef struct sl_region_spec {
	uint64_t npages;
	unsigned vmflags;          /* SL_VMA_* */
	uint32_t pgoff;            /* the region's first page modulo 2 MiB, in
				      pages (0..511): decides folio alignment */
} sl_region_spec;

/* Regions the workload maps: returns how many (A, then B if used). */
int sl_wl_regions(const sl_wl_params *p, sl_region_spec out[SL_MAX_REGIONS]);

enum sl_op_kind {
	SL_OP_TOUCH = 1,      /* write every page of the range, in address order */
	SL_OP_DONTNEED,       /* madvise(MADV_DONTNEED) */
	SL_OP_PAGEOUT,        /* madvise(MADV_PAGEOUT) */
	SL_OP_WARMUP_END,     /* counters start here */
	SL_OP_ITER_END,       /* one iteration done: report */
	SL_OP_DONE,
};

typedef struct sl_op {
	uint8_t kind;
	uint8_t region;
	uint32_t first;            /* page index inside the region */
	uint32_t npages;
} sl_op;

/* Plays the workload: calls emit for every operation in order (ending
 * with SL_OP_DONE). A nonzero return from emit stops the play and is
 * returned. The model and the kernel driver both play through this. */
typedef int (*sl_wl_emit)(void *ctx, const sl_op *op);
int sl_wl_play(const sl_wl_params *p, sl_wl_emit emit, void *ctx);

/* ------------------------------------------------------------------ process */

typedef struct sl_proc sl_proc;

typedef struct sl_proc_stats {
	uint64_t swpout[SL_NR_ORDERS];          /* folios written whole */
	uint64_t swpout_fallback[SL_NR_ORDERS]; /* large folios split for lack of slots */
	uint64_t swpout_extra_runs[SL_NR_ORDERS]; /* noncontig: runs of consecutive slots
						   swpout's folios took beyond one each */
	uint64_t swpin[SL_NR_ORDERS];           /* folios swapped in, by order */
	uint64_t alloc_fail0;                   /* order-0 swap-out that found no slot */
	/* failures that free space could have served (docs/proposals/grid.md,
	 * "avoidable failures"): at [0] order-0 failures, at [k] fallbacks of
	 * order k, counted while the devices had >= 2^k free slots (free) and
	 * while one held a naturally aligned free run of 2^k (aligned) */
	uint64_t fail_free[SL_NR_ORDERS];
	uint64_t fail_aligned[SL_NR_ORDERS];
	uint64_t faults_anon[SL_NR_ORDERS];     /* anonymous folios created */
	uint64_t splits;                        /* folios split by MADV_PAGEOUT range cuts */
	uint64_t zero_remapped;                 /* never-written pages a split mapped to the zero page */
	uint64_t zero_transient;                /* of those, reclaimed after a fallback: slot taken and freed */
	/* the swap cache of a device without SWP_SYNCHRONOUS_IO (reclaim only) */
	uint64_t swap_ra;                       /* pages read ahead (vmstat swap_ra) */
	uint64_t swap_ra_hit;                   /* faults that found a read-ahead page (swap_ra_hit) */
	uint64_t swapcache_clean;               /* clean swap-cache folios reclaimed without a write */
} sl_proc_stats;

enum {
	SL_SWAPIN_LARGE = 0,   /* 6.18 on a synchronous-I/O device: mTHP swap-in */
	SL_SWAPIN_ORDER0 = 1,  /* <= 6.12: always order 0 */
};

sl_proc *sl_proc_create(sl_device *d, int cpu, unsigned mthp_mask, int swapin_mode,
			const sl_region_spec *reg, int nreg);
/* The same over several devices (the set stays the caller's). */
sl_proc *sl_proc_create_set(sl_swapset *s, int cpu, unsigned mthp_mask, int swapin_mode,
			    const sl_region_spec *reg, int nreg);
void sl_proc_destroy(sl_proc *p);
/* The task moves to the next of `cpus` CPUs (from its own, round robin)
 * after every `every` swap allocations; every == 0 pins it. */
void sl_proc_set_migration(sl_proc *p, int cpus, uint32_t every);
void sl_proc_touch(sl_proc *p, int region, uint64_t first, uint64_t n);
void sl_proc_dontneed(sl_proc *p, int region, uint64_t first, uint64_t n);
void sl_proc_pageout(sl_proc *p, int region, uint64_t first, uint64_t n);
const sl_proc_stats *sl_proc_stats_get(const sl_proc *p);
/* Inside the charge hook: whether the charge is a swap-in fault's. */
int sl_proc_charging_swapin(const sl_proc *p);
/* The layout: one uint64 per page of every region in order, the swap
 * entry (the offset, on device 0) or SL_NOT_SWAPPED. `out` must hold sl_proc_npages() entries. */
#define SL_NOT_SWAPPED UINT64_C(0xFFFFFFFFFFFFFFFF)
uint64_t sl_proc_npages(const sl_proc *p);
void sl_proc_layout(const sl_proc *p, uint64_t *out);
/* Checks the process model's own invariants against the device. With
 * exclusive, the process owns every reference on the device (P1 both ways);
 * without, its swap PTEs only must be backed by counts. */
int sl_proc_check(const sl_proc *p, int exclusive, char *msg, size_t len);

/* Reclaim (reclaim.c) hooks into a process: all required when set.
 *   charge  before a folio of 2^order is mapped by a fault or swap-in: the
 *           memory cgroup's try_charge; 0 granted, else the fault tries the
 *           next smaller order (order 0 is always granted)
 *   mapped  folio id now maps 2^order pages (new, swapped in, or a page of a
 *           split folio)
 *   freed   folio id is gone (unmapped, or written out and freed)
 *   split   start = 1: folio `v` is about to be split (its mapped pages come
 *           back through mapped); start = 0: the split ended, `v` pages went
 *           to the shared zero page */
typedef struct sl_proc_hooks {
	int (*charge)(void *ctx, sl_proc *p, int order);
	void (*mapped)(void *ctx, sl_proc *p, uint32_t id, int order);
	void (*freed)(void *ctx, sl_proc *p, uint32_t id);
	void (*split)(void *ctx, sl_proc *p, uint32_t v, int start);
	/* optional: lru_add_drain() of the running CPU, or (id != 0) only if
	 * folio id still waits in its batch (a swap-in through the swap cache) */
	void (*drain)(void *ctx, sl_proc *p, uint32_t id);
	/* optional, both or neither (workingset shadows, docs/reclaim.md R11):
	 * evicted: folio id was written out and is about to be freed; returns
	 * the shadow its slots keep (nonzero); refault: a swap-in of 2^order
	 * pages whose first slot kept `shadow` was charged, before its folio
	 * is mapped */
	uint32_t (*evicted)(void *ctx, sl_proc *p, uint32_t id);
	void (*refault)(void *ctx, sl_proc *p, uint32_t shadow, int order);
} sl_proc_hooks;
/* Sets the hooks (and keeps a PTE accessed bit per page); 0 or -1 (memory). */
int sl_proc_set_hooks(sl_proc *p, const sl_proc_hooks *hk, void *ctx);
/* Loads of the range: the zero page where nothing is mapped, swap-in where
 * a swap PTE is (sl_proc_touch stores). */
void sl_proc_read(sl_proc *p, int region, uint64_t first, uint64_t n);
/* The live folio's order, or -1. */
int sl_proc_folio_order(const sl_proc *p, uint32_t id);
/* folio_referenced(): its accessed PTEs, each cleared. */
uint32_t sl_proc_folio_referenced(sl_proc *p, uint32_t id);
/* Swaps the folio out as shrink_folio_list() does (fallback split included),
 * slots from `cpu`; what stays resident is reported through the hooks.
 * Returns the pages freed without a write (a clean swap-cache folio, S3 of
 * docs/reclaim.md), else 0. */
uint32_t sl_proc_reclaim_folio(sl_proc *p, uint32_t id, int cpu);
/* activate_locked's swap-cache step (reclaim.c): with vm_swap_full(), an
 * activated folio in the swap cache gives its slot back. */
void sl_proc_activate_swapcache(sl_proc *p, uint32_t id);
/* The folio mapping page pg, or (a swap PTE) its unmapped swap-cache folio;
 * 0 if none. */
uint32_t sl_proc_page_folio(const sl_proc *p, int r, uint64_t pg);

/* The layout hash (docs/layout-hash.md): FNV-1a 64 over the little-endian
 * bytes of the layout. */
uint64_t sl_layout_hash(const uint64_t *layout, uint64_t n);
/* sl_proc_layout() and sl_layout_hash() of it in one pass; *swapped: the
 * pages that are swapped out. */
uint64_t sl_proc_layout_hash(const sl_proc *p, uint64_t *out, uint64_t *swapped);
/* The layout as 16-bit codes, for hashing later (sl_layout_hash16()): a
 * swap entry below the hash tables' bound as itself, a page not swapped
 * out as SL_SNAP16_NONE. Returns 0, or -1 where an entry fits neither (the
 * codes are then incomplete: hash that layout with sl_proc_layout_hash()).
 * *swapped: the pages that are swapped out. */
#define SL_SNAP16_NONE 0xFFFFu
int sl_proc_layout_snap16(const sl_proc *p, uint16_t *out, uint64_t *swapped);
/* The layout hash of k (1..4) such snapshots of n codes each, side by side
 * (their FNV-1a chains are independent): out[j] = sl_layout_hash() of the
 * layout snap[j] codes. */
void sl_layout_hash16(const uint16_t *const *snap, int k, uint64_t n, uint64_t *out);

/* ------------------------------------------------------------------ metrics */

/* Fragmentation of the free slots (metrics.c, docs/metrics.md). Fill with
 * sl_frag_init(), any number of sl_frag_add_*() (devices are pooled), then
 * sl_frag_finish(). */
typedef struct sl_frag_metrics {
	uint64_t free_slots;
	uint64_t free_aligned[SL_NR_ORDERS]; /* free naturally aligned ranges of 2^k slots */
	uint64_t free_blocks[SL_NR_ORDERS];  /* of those, the maximal ones (buddy free_area) */
	int32_t unusable_index[SL_NR_ORDERS];/* mm/vmstat.c, thousandths: 0..1000 */
	int32_t frag_index[SL_NR_ORDERS];    /* mm/vmstat.c, thousandths: -1000 (a request
						would succeed) or 0..1000 */
	uint64_t free_extents;               /* maximal runs of free slots */
	uint64_t largest_extent;
	double bluestore_score;              /* Ceph BlueStore, over the extents: 0..1 */
	int has_clusters;                    /* clusters[] filled (devices, not maps) */
	uint32_t clusters[SL_CF_DISCARD + 1][SL_NR_ORDERS]; /* [flag][order] */
	/* accumulators */
	uint64_t run;
	double score_sum;
} sl_frag_metrics;

void sl_frag_init(sl_frag_metrics *m);
/* A slot map of nslots bytes (0: free), e.g. one built from a layout. */
void sl_frag_add_map(sl_frag_metrics *m, const uint8_t *map, uint64_t nslots);
/* cmap: NULL, or one byte a cluster filled with its state, flags << 4 |
 * order (the result's cluster map) */
void sl_frag_add_device(sl_frag_metrics *m, const sl_device *d, uint8_t *cmap);
/* cmap: the first device's cluster map row, or NULL */
void sl_frag_add_set(sl_frag_metrics *m, const sl_swapset *s, uint8_t *cmap);
void sl_frag_finish(sl_frag_metrics *m);

/* ------------------------------------------------------------------ run */

typedef struct sl_iter_result {
	uint64_t swpout[SL_NR_ORDERS];
	uint64_t swpout_fallback[SL_NR_ORDERS];
	uint64_t swpout_extents[SL_NR_ORDERS]; /* runs of consecutive slots those
						  folios took: one each, more under noncontig */
	uint64_t swpin[SL_NR_ORDERS];
	uint64_t alloc_fail0;
	uint64_t fail_free[SL_NR_ORDERS];    /* sl_proc_stats' avoidable failures */
	uint64_t fail_aligned[SL_NR_ORDERS];
	uint64_t layout_hash;
	uint64_t inuse_pages;
	uint64_t swapped_pages;    /* pages of the regions that are swapped out */
	uint64_t dev_inuse[SL_MAX_SWAPFILES]; /* inuse_pages by device */
} sl_iter_result;

typedef struct sl_run_result {
	int iterations;
	sl_iter_result *iter;      /* [iterations] */
	uint64_t *layout;          /* final layout, npages entries */
	uint64_t npages;
	uint64_t max_slots;
	double seconds;            /* wall time of the run */
	sl_dev_stats dev;          /* summed over the devices */
	int ndev;
	sl_dev_stats devst[SL_MAX_SWAPFILES];
	int dev_prio[SL_MAX_SWAPFILES];   /* as swapon set them */
	uint64_t checks;           /* invariant checks performed */
	sl_frag_metrics *frag;     /* [iterations] with metrics on, else NULL */
	uint8_t *cmap;             /* with metrics on and device 0 of at most
				      SL_CMAP_MAX clusters: [iterations][cmap_clusters],
				      flags << 4 | order per cluster; else NULL */
	uint32_t cmap_clusters;
} sl_run_result;
#define SL_CMAP_MAX 8192u

/* Runs a workload on the model. check_every: 0 none, 1 after every
 * iteration, 2 after every operation. Returns 0, or -1 with a message. */
int sl_run(const sl_wl_params *p, const sl_policy *pol, int check_every,
	   sl_run_result *res, char *msg, size_t len);

/* What a caller may hook into a run (sl_run_hooked): both optional.
 *   on_iter  called after every finished iteration (it from 1) with its
 *            counters; a nonzero return stops the run there.
 *   stop     a flag (a signal handler may set it) polled before every
 *            operation, around every check and inside long checks. */
typedef struct sl_run_hooks {
	int (*on_iter)(void *ctx, int it, const sl_iter_result *ir);
	void *ctx;
	volatile sig_atomic_t *stop;
} sl_run_hooks;

/* sl_run's return when a hook stopped the run: res holds the finished
 * iterations (res->iterations of them) and the layout after the last. */
#define SL_RUN_STOPPED 1

/* sl_run with hooks (NULL: none). Returns 0, SL_RUN_STOPPED, or -1 with a
 * message. */
int sl_run_hooked(const sl_wl_params *p, const sl_policy *pol, int check_every,
		  const sl_run_hooks *hooks, sl_run_result *res, char *msg, size_t len);

/* The stop flag of the run on this thread (NULL outside a hooked run):
 * long loops of the core poll it through sli_stop_requested(). */
extern _Thread_local volatile sig_atomic_t *sli_tl_stop;
static inline int sli_stop_requested(void)
{
	return sli_tl_stop && *sli_tl_stop;
}
void sl_run_result_free(sl_run_result *res);

/* Swap-in mode a policy's generation implies (6.18: large on zram). */
int sl_policy_swapin_mode(const sl_policy *pol);

/* ------------------------------------------------------------------ bench */

typedef struct sl_bench_alloc_result {
	double ops_per_sec;        /* alloc+free pairs per second */
	double ns_per_op;
	uint64_t pairs;
	uint64_t failures;
	double fill;               /* achieved fill fraction at the end */
	double fill_seconds;
} sl_bench_alloc_result;

/* Fills a device of `slots` slots to `fill` with order-`order` allocations,
 * then runs `pairs` free+alloc pairs. Returns 0 or -1 with a message. */
int sl_bench_alloc(const sl_policy *pol, uint64_t slots, int order, double fill,
		   uint64_t pairs, uint64_t seed, sl_bench_alloc_result *out,
		   char *msg, size_t len);

/* ------------------------------------------------------------------ threads */

typedef struct sl_bench_threads_params {
	const sl_policy *pol;
	uint64_t slots;            /* device size */
	int threads;               /* one CPU each */
	double fill;               /* fill level before the run, 0..1 */
	int orders[SL_NR_ORDERS];  /* the mix: each entry equally likely */
	int norders;
	uint64_t ops;              /* free+alloc pairs per thread */
	uint64_t seed;
	int concurrent;            /* real locks (else no locks: one thread only) */
	uint64_t check_every;      /* stress: invariant check at a barrier every N pairs */
	int recent;                /* victims among the CPU's last SL_BT_RECENT folios
				      (0: any of its folios, uniformly) */
} sl_bench_threads_params;

#define SL_BT_RECENT 4096u

typedef struct sl_bench_threads_result {
	double ops_per_sec;        /* pairs per second, all threads */
	double seconds;            /* the slowest thread's run */
	uint64_t ops;
	double lat_p50_ns, lat_p99_ns, lat_max_ns; /* per pair, every 8th timed */
	sl_lockstat locks[SL_NR_LOCK_CLASSES];
	uint64_t alloc_ok[SL_NR_ORDERS];
	uint64_t alloc_fail[SL_NR_ORDERS];
	uint64_t handoffs, handoff_takes; /* SL_POL_KEEP_FULL0 (sl_dev_stats) */
	uint64_t checks;
	double fill;               /* at the end */
	uint64_t map_hash;         /* FNV-1a 64 of the slot map at the end */
} sl_bench_threads_result;

/* Runs the churn of bench_threads.c. Returns 0, or -1 with a message (an
 * invariant broken at a quiescent point included). */
int sl_bench_threads(const sl_bench_threads_params *p, sl_bench_threads_result *r, char *msg,
		     size_t len);

#endif
