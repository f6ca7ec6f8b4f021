/*
 * swaplab/reclaim.h - reclaim under a memory limit (reclaim.c;
 * docs/reclaim.md): one cgroup v1 memory group holding every process of a
 * reclaim workload (rwl.h), the classic active/inactive anon LRU of Linux
 * 6.18 without MGLRU, direct reclaim on charge, and the cost model.
 */
#ifndef SWAPLAB_RECLAIM_H
#define SWAPLAB_RECLAIM_H

#include "swaplab.h"
#include "rwl.h"

/* The cost model (docs/reclaim.md "Cost model"): nanoseconds of system time
 * per event; the predicted system time is the sum of count x coefficient. */
typedef struct sl_cost_model {
	const char *name;
	double fault_folio;        /* per anonymous folio faulted in */
	double fault_page;         /* per page of those (zeroing) */
	double fault_pmd_folio;    /* per PMD-size (2 MiB) folio faulted in, in place of
				      fault_folio + 512 fault_page for it */
	double swpout_folio;       /* per folio written out */
	double swpout_page;        /* per page written out (compression) */
	double swpin_folio;        /* per folio swapped in */
	double swpin_page;         /* per page swapped in (decompression) */
	double split;              /* per large folio split by the fallback */
	double scan_page;          /* per page the LRU scan isolated */
	double lock_wait;          /* per contended event: a folio written out or swapped
				      in while another CPU runs a live process of the run
				      (docs/kernel-findings.md F14) */
	double op;                 /* per workload operation a process executes (the
				      kernel driver's command read and acknowledgement) */
	double proc;               /* per process: fork, exec, exit and its teardown */
	double compact_move;       /* per swapped-out entry proposal-compact moved: its
				      page read from one slot and written to another, the
				      PTE rewritten (x_compact.c) */
} sl_cost_model;

/* The named default: uncalibrated until the kernel harness measures them. */
extern const sl_cost_model sl_cost_default;

typedef struct sl_rrun_result {
	uint64_t swpout[SL_NR_ORDERS];
	uint64_t swpout_fallback[SL_NR_ORDERS];
	uint64_t swpin[SL_NR_ORDERS];
	uint64_t faults_anon[SL_NR_ORDERS];
	uint64_t charge_fallback[SL_NR_ORDERS]; /* new large folios whose charge failed
						   (the fault tried a smaller order):
						   anon_fault_fallback_charge */
	uint64_t swpin_fallback_charge[SL_NR_ORDERS]; /* the same for swap-ins */
	uint64_t alloc_fail0;
	/* of those failures (swpout_fallback[k], alloc_fail0 at [0]), the ones
	 * free space could have served: sl_proc_stats' fail_free, fail_aligned */
	uint64_t fail_free[SL_NR_ORDERS], fail_aligned[SL_NR_ORDERS];
	uint64_t zero_remapped, zero_transient;
	uint64_t splits;                /* large folios split by the fallback */
	uint64_t direct_reclaim;        /* try_to_free_mem_cgroup_pages() calls */
	uint64_t pgscan, pgsteal;       /* pages isolated from / freed off the inactive list */
	uint64_t pgactivate, pgdeactivate, pgrefill; /* pages activated, deactivated, scanned on active */
	uint64_t ws_refault, ws_activate, ws_restore; /* refaults with a shadow, activated, restored (R11) */
	uint64_t oom;                   /* charges forced past the limit after the retries */
	uint64_t max_usage;             /* pages charged, peak */
	uint64_t swap_peak;             /* slots in use, peak */
	uint64_t free_clusters_min;     /* fewest clusters on the device's free list
					   after any operation (UINT64_MAX: the policy
					   keeps no free list, free_ops is 0) */
	uint64_t free_ops, ops_free_empty; /* operations after which the free list was
					   read; after how many it was empty (no PMD-size slot) */
	uint64_t procs;
	uint64_t swpout_pages, swpin_pages, fault_pages;
	uint64_t run_layout_hash;       /* every process's layout in order, at the RUN marker */
	uint64_t inuse_end;             /* slots still in use after every exit (0) */
	uint64_t checks;
	uint64_t ops;                   /* operations the processes executed (START..EXIT) */
	uint64_t lock_waits;            /* contended events (sl_cost_model.lock_wait) */
	uint64_t swap_ra, swap_ra_hit;  /* a device without SWP_SYNCHRONOUS_IO: pages read
					   ahead, faults that found one (docs/reclaim.md W1-W3) */
	uint64_t swapcache_clean;       /* clean swap-cache folios freed without a write (S4) */
	uint32_t window;                /* operations in flight at once (1: serial) */
	uint64_t reclaims_overlapped;   /* window > 1: reclaims begun while another CPU's
					   was under way */
	uint64_t clock_ns;              /* window > 1: the run's length on the runner's clock */
	double sys_seconds;             /* the cost model's prediction */
	double seconds;                 /* wall time of the model run */
	sl_dev_stats dev;
} sl_rrun_result;

/* Runs a reclaim workload on the model. check_every: 0 none, 1 at every
 * phase marker and exit, 2 after every operation. cost NULL: the default.
 * Returns 0, or -1 with a message. */
int sl_rrun(const sl_rwl_params *p, const sl_policy *pol, const sl_cost_model *cost,
	    int check_every, sl_rrun_result *res, char *msg, size_t len);
/* The same with `window` operations of the stream in flight at once, as the
 * kernel harness's driver keeps them (docs/kernel-harness.md --window;
 * docs/reclaim.md "Two processes at once"): each CPU executes its
 * operations in order on a clock of its own, and the CPUs take turns at
 * the points where the kernel lets another CPU act. window 1 is sl_rrun()
 * exactly; 0 is the driver's default, 2 per CPU. */
int sl_rrun_window(const sl_rwl_params *p, const sl_policy *pol, const sl_cost_model *cost,
		   uint32_t window, int check_every, sl_rrun_result *res, char *msg, size_t len);
/* The slot layouts of a run, as the kernel harness's driver records them
 * from pagemap with --phase-layouts (docs/layout-hash.md): at each phase
 * marker every live process's, in process order, and each process's as it
 * exits. `pages` holds the records one after another, one entry per page
 * (a swap offset, or all ones when the page is not out). */
typedef struct sl_rrun_layout_rec {
	int phase;                 /* the marker's SL_RPH_*, or -1: at exit */
	uint32_t proc;             /* the stream's process */
	uint64_t first, npages;    /* its pages in `pages` */
} sl_rrun_layout_rec;
typedef struct sl_rrun_layouts {
	uint64_t *pages, npages;   /* malloc()ed: the caller frees both arrays */
	sl_rrun_layout_rec *recs;
	uint32_t nrecs;
} sl_rrun_layouts;
/* sl_rrun_window() recording the layouts into *layouts, which starts
 * zeroed; the caller frees its arrays whatever the return. */
int sl_rrun_window_layout(const sl_rwl_params *p, const sl_policy *pol, const sl_cost_model *cost,
			  uint32_t window, int check_every, sl_rrun_result *res, sl_rrun_layouts *layouts,
			  char *msg, size_t len);

double sl_cost_predict(const sl_cost_model *c, const sl_rrun_result *r);

/* ---- the memory cgroup alone, for unit tests of each rule ---- */
typedef struct sl_memcg sl_memcg;
/* A group of limit_pages whose anon reclaim swaps to s. */
sl_memcg *sl_memcg_create(uint64_t limit_pages, int nr_cpus, const sl_swapset *s);
void sl_memcg_destroy(sl_memcg *m);
/* Puts p in the group (hooks set); p runs on cpu. 0 or -1. */
int sl_memcg_attach(sl_memcg *m, sl_proc *p, int cpu);
/* Takes p out (before sl_proc_destroy); its folios must be gone. */
void sl_memcg_detach(sl_memcg *m, sl_proc *p);
/* The running CPU of the faults that follow (the task that charges). */
void sl_memcg_set_cpu(sl_memcg *m, int cpu);
/* lru_add_drain() on the running CPU: its batch of new small folios, of
 * whichever process, onto the LRU (exit_mmap() and munmap() begin so). */
void sl_memcg_lru_add_drain(sl_memcg *m);
typedef struct sl_memcg_state {
	uint64_t usage, limit, stock;   /* stock: charged ahead on the CPUs */
	uint64_t inactive, active;      /* pages on each anon LRU */
	uint64_t nr_inactive, nr_active;/* folios */
	uint64_t direct_reclaim, pgscan, pgsteal, pgactivate, pgdeactivate, pgrefill, oom;
	/* pages swapped in with a shadow, of those activated by their refault
	 * distance, and of those PG_workingset restored (vmstat
	 * workingset_refault_anon, workingset_activate_anon,
	 * workingset_restore_anon; R11) */
	uint64_t ws_refault, ws_activate, ws_restore;
	/* large folios whose charge failed: new ones (the kernel's
	 * anon_fault_fallback_charge) and swap-ins (swpin_fallback_charge) */
	uint64_t charge_fallback[SL_NR_ORDERS];
	uint64_t swpin_fallback_charge[SL_NR_ORDERS];
	uint64_t kmem;                  /* kernel pages charged (not on an LRU): page
	                                   tables and slab pages (C5, C6) */
} sl_memcg_state;
void sl_memcg_state_get(const sl_memcg *m, sl_memcg_state *st);
/* Pages charged to the group now (sl_memcg_state's usage). */
uint64_t sl_memcg_usage(const sl_memcg *m);
/* The i-th folio from the tail of the inactive (active = 0) or active list:
 * its process and folio id; 0 if none. */
int sl_memcg_lru_at(const sl_memcg *m, int active, uint64_t i, sl_proc **p, uint32_t *id);
/* try_to_free_mem_cgroup_pages() for nr pages: pages reclaimed. */
uint64_t sl_memcg_reclaim(sl_memcg *m, uint64_t nr);
/* Steps of it: shrink_inactive_list() / shrink_active_list() of
 * nr_to_scan pages (pages freed for the first), called in pieces of at
 * most SWAP_CLUSTER_MAX (32) pages as the kernel's callers do. */
uint64_t sl_memcg_shrink_inactive_list(sl_memcg *m, uint64_t nr_to_scan);
void sl_memcg_shrink_active_list(sl_memcg *m, uint64_t nr_to_scan);
/* shrink_lruvec() at one priority with deactivation allowed, for a
 * reclaim of SWAP_CLUSTER_MAX pages: pages reclaimed. */
uint64_t sl_memcg_shrink_lruvec(sl_memcg *m, int priority);
/* Kernel memory charged to the group (a process's page tables: 6.18
 * allocates them with __GFP_ACCOUNT), nr pages: charged like an order-0
 * folio (reclaiming if need be), never on an LRU; uncharged, when freed,
 * into the running CPU's charge stock (docs/reclaim.md C5). */
void sl_memcg_charge_kmem(sl_memcg *m, uint64_t nr);
void sl_memcg_uncharge_kmem(sl_memcg *m, uint64_t nr);
/* Accounted slab objects (SLAB_ACCOUNT caches) of bytes (at most a page),
 * allocated and freed on the running CPU: its object stock (obj_stock)
 * charges a page of kernel memory when it holds too few bytes, and
 * returns whole pages beyond one to the CPU's charge stock when they come
 * back (docs/reclaim.md C6). */
void sl_memcg_slab_alloc(sl_memcg *m, uint32_t bytes);
void sl_memcg_slab_free(sl_memcg *m, uint32_t bytes);
/* Another objcg's slab activity on cpu drains its obj_stock (C7). */
void sl_memcg_obj_stock_foreign(sl_memcg *m, int cpu);
/* LRU and charge consistency: 0 or -1 with a message. */
int sl_memcg_check(const sl_memcg *m, char *msg, size_t len);
/* Two processes at once (sl_rrun_window): yield(ctx) is called at the
 * steps of reclaim where another CPU acts on the group meanwhile (before
 * an LRU isolation, between the folios of shrink_folio_list()); the pages that
 * reclaim frees are then uncharged a folio batch (31) at a time, and the
 * reclaim work done since the last call is kept per CPU for the caller's
 * clock (sl_memcg_take_pending, ns). 0 or -1 (memory). */
int sl_memcg_set_yield(sl_memcg *m, void (*yield)(void *ctx), void *ctx);
double sl_memcg_take_pending(sl_memcg *m, int cpu);
/* Reclaims begun while another CPU's reclaim was under way. */
uint64_t sl_memcg_overlapped(const sl_memcg *m);

#endif
