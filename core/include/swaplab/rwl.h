/*
 * swaplab/rwl.h - reclaim-driven workloads (issue 13; docs/workloads-reclaim.md).
 *
 * The fragmentation workloads (sl_wl_play) page out with MADV_PAGEOUT; these
 * leave every swap-out to reclaim under a memory limit. As for them, one
 * generator (rwl.c, sl_rwl_play) turns a seed and the parameters into one
 * stream of process-level operations, and both the model (reclaim.c) and the
 * kernel driver replay that stream, so the two never differ in what ran.
 *
 * The stream is global and ordered: operations of different processes are
 * interleaved in the order they are emitted (round robin over the running
 * processes, `chunk_pages` pages of touches at a time). The model executes it
 * in that order; a kernel driver gives each process (a forked child, pinned
 * to `cpu`) its own operations in stream order and may run the children
 * concurrently, the interleaving then being the kernel's.
 *
 * Processes are numbered 0, 1, ... in the order of their START; a number is
 * never reused. Every process maps at most SL_RWL_MAX_REGIONS anonymous
 * private regions, each a fresh VMA of `npages` 4 KiB pages starting 2 MiB
 * aligned, with no madvise (the mTHP sizes' "always"/"inherit" setting
 * decides the fault order, process-side rule 1 of docs/workloads.md without
 * MADV_HUGEPAGE: the enabled sizes set to "always").
 */
#ifndef SWAPLAB_RWL_H
#define SWAPLAB_RWL_H

#include <stdint.h>
#include <stddef.h>

#define SL_RWL_MAX_REGIONS 2

enum sl_rwl_kind {
	SL_RWL_USEMEM = 0,         /* N processes each write SIZE sequentially */
	SL_RWL_PMBENCH = 1,        /* random reads/writes over a working set */
	SL_RWL_BUILD = 2,          /* make -jN: short-lived processes of varied size */
	SL_NR_RWL
};

enum { SL_RWL_UNIFORM = 0, SL_RWL_ZIPF = 1 };

typedef struct sl_rwl_params {
	int kind;                  /* SL_RWL_* */
	uint64_t seed;
	/* the machine */
	uint64_t limit_pages;      /* the memory cgroup's limit (memory.limit_in_bytes
				      / 4 KiB): every process of the run is in it */
	uint64_t swap_bytes;       /* the swap device's size */
	unsigned device;           /* SL_DEV_* (zram by default) */
	unsigned mthp_mask;        /* bit k: the order-k mTHP size is "always" */
	int nr_cpus;               /* CPUs the processes are pinned to: a process
				      runs on (its worker slot) % nr_cpus */
	uint32_t chunk_pages;      /* interleaving: touches are emitted this many
				      pages at a time per process (default 64) */
	/* usemem */
	uint32_t nr_procs;         /* usemem -n; pmbench processes */
	uint64_t proc_pages;       /* usemem SIZE, in pages */
	uint32_t reread_passes;    /* read passes over the whole region after the write */
	/* pmbench (nr_procs processes, each its own working set) */
	uint64_t wss_pages;        /* working set per process (one region, written once first) */
	uint64_t accesses;         /* random single-page accesses per process after that */
	uint32_t read_pct;         /* percentage of accesses that read (0..100) */
	int dist;                  /* SL_RWL_UNIFORM or SL_RWL_ZIPF */
	double zipf_s;             /* Zipf exponent (> 0), page rank 1 hottest */
	/* build */
	uint32_t jobs;             /* make -j: worker slots, each runs one process at a time */
	uint32_t generations;      /* processes per worker slot, run one after another */
	uint64_t size_median_pages;/* compiler process size: lognormal, median ... */
	double size_sigma;         /* ... and sigma of ln(size) */
	uint64_t size_min_pages, size_max_pages; /* clamp */
	uint32_t life_min_passes, life_max_passes; /* lifetime: re-touch passes over
				      the process's memory after it grew, uniform */
} sl_rwl_params;

enum sl_rop_kind {
	SL_ROP_START = 1,          /* proc starts, pinned to cpu */
	SL_ROP_MMAP,               /* proc maps region (fresh anonymous VMA) of npages */
	SL_ROP_TOUCH,              /* proc accesses pages [first, first+npages) of region
				      in address order; write: 1 store, 0 load */
	SL_ROP_MUNMAP,             /* proc unmaps the whole region */
	SL_ROP_EXIT,               /* proc exits: every folio and swap entry freed */
	SL_ROP_PHASE,              /* marker: phase `first` begins (SL_RPH_*) */
	SL_ROP_DONE,               /* end of stream: every process has exited */
};

enum sl_rwl_phase {
	SL_RPH_SETUP = 0,          /* allocation / first write */
	SL_RPH_RUN = 1,            /* the measured accesses (reread, random, compile) */
	SL_RPH_GEN = 2,            /* build: generation `npages` begins */
};

typedef struct sl_rop {
	uint8_t kind;              /* SL_ROP_* */
	uint8_t write;             /* TOUCH: 1 store, 0 load */
	uint8_t region;            /* 0 .. SL_RWL_MAX_REGIONS-1 */
	uint8_t pad;
	uint32_t proc;             /* process number */
	uint32_t cpu;              /* START: the CPU */
	uint32_t first;            /* TOUCH: first page; PHASE: SL_RPH_* */
	uint32_t npages;           /* MMAP, TOUCH: pages; PHASE GEN: generation */
} sl_rop;

/* Defaults (scaled down to seconds on 2 CPUs) of the kind. */
void sl_rwl_defaults(sl_rwl_params *p, int kind);
/* Validates; 0 or -1 with a one-line message naming the problem. */
int sl_rwl_validate(const sl_rwl_params *p, char *msg, size_t len);
const char *sl_rwl_name(int kind);
int sl_rwl_lookup(const char *name);

/* Plays the stream: emit for every operation in order, ending with
 * SL_ROP_DONE; a nonzero return from emit stops the play and is returned.
 * The model and the kernel driver both play through this. */
typedef int (*sl_rwl_emit)(void *ctx, const sl_rop *op);
int sl_rwl_play(const sl_rwl_params *p, sl_rwl_emit emit, void *ctx);

/* Presets: the published runs scaled down (docs/workloads-reclaim.md). */
typedef struct sl_rwl_preset {
	const char *name;
	const char *source;        /* the public run it scales down */
	int kind;
	/* fills p (after sl_rwl_defaults of kind) */
	void (*apply)(sl_rwl_params *p);
} sl_rwl_preset;
/* The i-th preset, NULL past the last; by name, NULL if none. */
const sl_rwl_preset *sl_rwl_preset_at(int i);
const sl_rwl_preset *sl_rwl_preset_lookup(const char *name);

#endif
