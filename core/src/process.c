/*
 * process.c - the process side: what turns a workload into allocations and
 * frees, in the order the kernel makes them (the process-side rules 1-7 of
 * docs/workloads.md; what the live kernel added is in docs/kernel-findings.md).
 *
 * A process has regions (one VMA each, starting at a chosen offset modulo
 * 2 MiB: spec.pgoff pages), a PTE per page and the folios its PTEs map.
 * Page indices are the region's own (0 = its first page); every alignment
 * (folio orders, PMDs, page tables) is taken on the address, page pgoff +
 * index of a 2 MiB-aligned frame (the placement helpers below). PTE encoding:
 *   0                      none
 *   PTE_SWAP | entry       swap entry: device type << SL_TYPE_SHIFT | slot
 *   PTE_PRESENT | folio id resident page of that folio
 *   PTE_ZERO               the shared zero page (a split remapped a page that
 *                          was never written; reclaim skips it)
 * Each region keeps a PMD state per 2 MiB of address: no page table, a page table, or
 * a PMD-mapped THP, because a PMD-size fault needs an empty PMD, and a data
 * bit per page: the page has been written since it was last dropped (its
 * content is not all zero), which decides what a split does with it.
 *
 * Under a policy with alloc_pages (the noncontig reference, policy.h) a
 * large folio's slots need not be contiguous: reclaim stores each page's
 * entry in its PTE as it comes, and each region also records per page the
 * order + 1 of the folio it was swapped out with (swo), so that swap-in can
 * take a folio whole the way a virtual swap layer would (its virtual entries
 * are consecutive and aligned wherever the slots are). Other policies carry
 * no swo array and take the contiguous path alone.
 *
 * Kernel functions modelled (6.18): do_anonymous_page/alloc_anon_folio,
 * do_huge_pmd_anonymous_page, do_swap_page/alloc_swap_folio/can_swapin_thp,
 * zap_pte_range (MADV_DONTNEED), madvise_cold_or_pageout_pte_range +
 * reclaim_pages + shrink_folio_list (MADV_PAGEOUT).
 */
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <pthread.h>
#include "swaplab/swaplab.h"
#include "swaplab/swap_ra.h"
#include "swaplab/debug.h"
#include "swaplab/rmap.h"

#define PTE_SWAP (UINT64_C(1) << 63)
#define PTE_PRESENT (UINT64_C(1) << 62)
#define PTE_ZERO (UINT64_C(1) << 61)
#define PTE_VAL_MASK ((UINT64_C(1) << 61) - 1)
_Static_assert(PTE_VAL_MASK == SL_RMAP_ENTRY_MASK, "rmap.h reads the entry of a swap PTE");
#define PMD_PAGES 512u
/* the orders a large swap-in may take: mTHP sizes below PMD */
#define SWAPIN_ORDERS (((1u << SL_PMD_ORDER) - 1) & ~((1u << SL_MTHP_MIN_ORDER) - 1))

enum { PMD_NONE = 0, PMD_TABLE = 1, PMD_HUGE = 2 };

typedef struct folio {
	uint32_t head;     /* page index of the first page in its region */
	uint32_t mapped;   /* PTEs (or the PMD) still mapping it */
	uint8_t region;
	uint8_t order;
	uint8_t live;
	uint8_t queued;    /* on the reclaim list of the current MADV_PAGEOUT step */
} folio;

typedef struct region {
	sl_region_spec spec;
	uint64_t *pte;
	uint8_t *pmd;
	uint8_t *data;     /* per page: content not all zero */
	uint8_t *swo;      /* noncontig only: per page, order + 1 of the folio
			      it was last swapped out with */
	unsigned swapin_orders; /* the orders a large swap-in may take here (0:
				   order 0 only: small swap-in, or no mTHP) */
	uint32_t *shadow;  /* with the evicted hook: per page, the shadow its
			      last eviction left at its slot (0: none) */
} region;

/* pin_nr's mark of a swap-in fault's charge (proc_charge_swapin()) */
#define PIN_SWAPIN (UINT32_C(1) << 31)

struct sl_proc {
	sl_swapset *s;             /* the swap devices */
	sl_swapset *own;           /* a one-device set made for sl_proc_create() */
	int cpu;
	int cpu0, cpus;            /* CPUs it may run on: cpu0 .. cpu0+cpus-1 */
	uint32_t migrate_every, nalloc;
	unsigned mthp;
	int swapin_mode;
	int nreg;
	region reg[SL_MAX_REGIONS];
	folio *f;                  /* f[0] unused: id 0 means none */
	uint32_t nf, fcap;
	uint32_t *freeid;
	uint32_t nfree;
	uint32_t *queue;           /* reclaim list of one PMD step */
	uint32_t qcap;
	uint64_t *pages;           /* noncontig: one large folio's entries */
	sl_proc_stats st;
	const sl_proc_hooks *hk;   /* reclaim (reclaim.c); NULL: none */
	void *hctx;
	uint8_t *young[SL_MAX_REGIONS]; /* with hooks: per page, the PTE's accessed bit */
	uint8_t rmap;              /* a device keeps a slot -> PTE map (rmap.h) */
	uint64_t *rmap_runs;       /* with rmap: the pages a pageout step may
				      write, (first, end) pairs (proc_rmap_queued()) */
	const sl_proc_hooks *rmap_hk; /* with rmap: the caller's hooks, behind
				      proc_rmap_hooks */
	void *rmap_hctx;
	uint64_t pin_e;            /* a swap-in fault's charge: the pin_nr entries */
	uint32_t pin_nr;           /* from pin_e it read (proc_charge_swapin()),
				      PIN_SWAPIN set while it lasts */
	/* the swap cache of a device without SWP_SYNCHRONOUS_IO (with hooks
	 * only; NULL otherwise, docs/reclaim.md S1-S6): */
	uint64_t *swc;             /* [folio id] the swap entry it holds in the swap cache, 0: none */
	uint8_t *swra;             /* [folio id] PG_readahead */
	uint32_t *rac[SL_MAX_REGIONS]; /* [page] the unmapped swap-cache folio of its swap PTE */
	sl_swap_ra ra[SL_MAX_REGIONS]; /* vma->swap_readahead_info */
	/* note_failure(): where each device's last aligned free run of each
	 * order was found (sl_dev_has_free_run()'s hint) */
	uint64_t run_hint[SL_MAX_SWAPFILES][SL_NR_ORDERS];
};

static int is_swap(uint64_t pte) { return (pte & PTE_SWAP) != 0; }
static int gen_has(const sl_proc *p, unsigned prop) { return (p->s->pol->props & prop) != 0; }
static int is_present(uint64_t pte) { return (pte & PTE_PRESENT) != 0; }
static uint64_t pte_val(uint64_t pte) { return pte & PTE_VAL_MASK; }

/* ---- placement: a region starts rg->spec.pgoff pages past a 2 MiB boundary */

/* The PMD (2 MiB of address) holding page pg of the region. */
static uint32_t pmd_index(const region *rg, uint64_t pg)
{
	return (uint32_t)((rg->spec.pgoff + pg) / PMD_PAGES);
}

/* The region's page index of the first page of the PMD after the one holding
 * pg (it may lie past the region's end). */
static uint64_t pmd_end_page(const region *rg, uint64_t pg)
{
	return (uint64_t)(pmd_index(rg, pg) + 1) * PMD_PAGES - rg->spec.pgoff;
}

/* thp_vma_suitable_order() - 6.18: the naturally aligned 2^order pages of
 * address around pg lie inside the VMA; *head is then their first page. */
static int thp_vma_suitable_order(const region *rg, uint32_t pg, int order, uint32_t *head)
{
	uint64_t nr = UINT64_C(1) << order, o = rg->spec.pgoff;
	uint64_t a = (o + pg) & ~(nr - 1);

	if (a < o || a + nr > o + rg->spec.npages)
		return 0;
	*head = (uint32_t)(a - o);
	return 1;
}

/* The low `order` bits of pg's address (page units): a swap entry's offset
 * must agree with them for a large swap-in (thp_swap_suitable_orders()). */
static uint64_t addr_low_bits(const region *rg, uint32_t pg, int order)
{
	return (rg->spec.pgoff + pg) & ((UINT64_C(1) << order) - 1);
}

sl_proc *sl_proc_create(sl_device *d, int cpu, unsigned mthp_mask, int swapin_mode,
			const sl_region_spec *reg, int nreg)
{
	char msg[128];
	int prio = SL_PRIO_AUTO;
	sl_swapset *s = sl_swapset_create(&d, &prio, 1, 0, msg, sizeof(msg));
	sl_proc *p = s ? sl_proc_create_set(s, cpu, mthp_mask, swapin_mode, reg, nreg) : NULL;

	if (p)
		p->own = s;
	else
		sl_swapset_destroy(s);
	return p;
}

sl_proc *sl_proc_create_set(sl_swapset *s, int cpu, unsigned mthp_mask, int swapin_mode,
			    const sl_region_spec *reg, int nreg)
{
	sl_proc *p = calloc(1, sizeof(*p));
	uint64_t total = 0;

	if (!p)
		return NULL;
	p->s = s;
	p->cpu = p->cpu0 = cpu;
	p->cpus = 1;
	p->mthp = mthp_mask;
	p->swapin_mode = swapin_mode;
	p->nreg = nreg;
	for (int r = 0; r < nreg; r++) {
		p->reg[r].spec = reg[r];
		if (swapin_mode == SL_SWAPIN_LARGE && !(reg[r].vmflags & SL_VMA_NOHUGEPAGE))
			p->reg[r].swapin_orders = mthp_mask & SWAPIN_ORDERS;
		p->reg[r].pte = calloc(reg[r].npages, sizeof(uint64_t));
		p->reg[r].pmd = calloc((reg[r].pgoff + reg[r].npages) / PMD_PAGES + 1, 1);
		p->reg[r].data = calloc(reg[r].npages, 1);
		if (s->pol->alloc_pages)
			p->reg[r].swo = calloc(reg[r].npages, 1);
		if (!p->reg[r].pte || !p->reg[r].pmd || !p->reg[r].data ||
		    (s->pol->alloc_pages && !p->reg[r].swo))
			goto fail;
		total += reg[r].npages;
	}
	p->fcap = (uint32_t)total + 2;
	p->f = calloc(p->fcap, sizeof(folio));
	p->freeid = calloc(p->fcap, sizeof(uint32_t));
	p->qcap = PMD_PAGES;
	p->queue = calloc(p->qcap, sizeof(uint32_t));
	if (s->pol->alloc_pages)
		p->pages = calloc(SL_CLUSTER, sizeof(uint64_t));
	if (!p->f || !p->freeid || !p->queue || (s->pol->alloc_pages && !p->pages))
		goto fail;
	p->nf = 1;
	for (int t = 0; t < s->nr; t++)
		p->rmap |= s->dev[t]->rmap != NULL;
	if (p->rmap && !(p->rmap_runs = calloc(2 * PMD_PAGES, sizeof(uint64_t))))
		goto fail;
	return p;
fail:
	sl_proc_destroy(p);
	return NULL;
}

void sl_proc_destroy(sl_proc *p)
{
	if (!p)
		return;
	for (int r = 0; r < p->nreg; r++) {
		if (p->rmap && p->reg[r].pte) /* exit: its swap PTEs go */
			sl_rmap_forget_ptes(p->s, p->reg[r].pte, p->reg[r].spec.npages);
		free(p->young[r]);
		free(p->rac[r]);
		free(p->reg[r].pte);
		free(p->reg[r].pmd);
		free(p->reg[r].data);
		free(p->reg[r].swo);
		free(p->reg[r].shadow);
	}
	free(p->f);
	free(p->freeid);
	free(p->queue);
	free(p->rmap_runs);
	free(p->pages);
	free(p->swc);
	free(p->swra);
	sl_swapset_destroy(p->own);
	free(p);
}

const sl_proc_stats *sl_proc_stats_get(const sl_proc *p) { return &p->st; }
int sl_proc_charging_swapin(const sl_proc *p) { return (p->pin_nr & PIN_SWAPIN) != 0; }

void sl_proc_set_migration(sl_proc *p, int cpus, uint32_t every)
{
	p->cpus = cpus;
	p->migrate_every = every;
}

/* With migration, the scheduler moves the task on after every
 * migrate_every swap allocations. */
static void proc_migrate(sl_proc *p)
{
	if (p->migrate_every && ++p->nalloc % p->migrate_every == 0)
		p->cpu = p->cpu0 + (p->cpu - p->cpu0 + 1) % p->cpus;
}

/* folio_alloc_swap() from this task, on the CPU it runs on now. */
static uint64_t proc_alloc(sl_proc *p, int order)
{
	uint64_t off = sl_set_alloc(p->s, p->cpu, order);

	proc_migrate(p);
	return off;
}

/* A swap-out's failure at `order` (0: no slot for a page; else the folio's
 * fallback), counted as avoidable where free space could have served it:
 * sl_proc_stats' fail_free and fail_aligned. Failure paths only. */
static __attribute__((noinline, cold)) void note_failure(sl_proc *p, int order)
{
	const sl_swapset *s = p->s;

	if (!(sl_nr_swap_pages(s->dev[0]) >> order))
		return;
	p->st.fail_free[order]++;
	for (int t = 0; t < s->nr; t++) {
		if (sl_dev_has_free_run(s->dev[t], order, &p->run_hint[t][order])) {
			p->st.fail_aligned[order]++;
			return;
		}
	}
}

/* The same for noncontig: the entries land in p->pages; returns the runs. */
static int proc_alloc_pages(sl_proc *p, int order)
{
	int runs = sl_set_alloc_pages(p->s, p->cpu, order, p->pages);

	proc_migrate(p);
	return runs;
}

/* A new folio mapped at [head, head + 2^order) of region r. Every page of a
 * region has at most one folio, so ids never run out. Inline: most callers
 * map order 0. */
static inline __attribute__((always_inline)) uint32_t folio_map_new(sl_proc *p, int r,
								    uint32_t head, int order)
{
	uint32_t id = p->nfree ? p->freeid[--p->nfree] : p->nf++;
	uint32_t nr = 1u << order;
	region *rg = &p->reg[r];

	/* a folio is naturally aligned in the address space and lies inside
	 * the VMA */
	SL_ASSERT(order >= 0 && order < SL_NR_ORDERS && !addr_low_bits(rg, head, order));
	SL_ASSERT((uint64_t)head + nr <= rg->spec.npages && id > 0 && !p->f[id].live);
	p->f[id] = (folio){ .head = head, .mapped = nr, .region = (uint8_t)r,
			    .order = (uint8_t)order, .live = 1 };
	uint64_t *pte = rg->pte + head;
	for (uint32_t j = 0; j < nr; j++)
		pte[j] = PTE_PRESENT | id;
	rg->pmd[pmd_index(rg, head)] = order == SL_PMD_ORDER ? PMD_HUGE : PMD_TABLE;
	if (p->hk)
		p->hk->mapped(p->hctx, p, id, order);
	return id;
}

/* workingset_eviction() - 6.18, in __remove_mapping(): a folio reclaimed
 * after its write-out leaves a shadow in the swap cache at each of its
 * slots. The model keeps it with the page's swap PTE (one PTE per slot:
 * these processes never fork), which is where the slot's shadow is looked
 * up from at swap-in. With hooks only. */
static inline void proc_evicted(sl_proc *p, uint32_t id)
{
	if (p->hk->evicted) {
		const folio *f = &p->f[id];
		uint32_t sh = p->hk->evicted(p->hctx, p, id), nr = 1u << f->order;
		uint32_t *d = p->reg[f->region].shadow + f->head;
		for (uint32_t j = 0; j < nr; j++)
			d[j] = sh;
	}
}

/* The folio is freed; evicted: after its write-out (its shadow is kept
 * first), a constant where inlined, so that a process without hooks tests
 * what it did before. */
static inline __attribute__((always_inline)) void folio_release_x(sl_proc *p, uint32_t id,
								   const int evicted)
{
	SL_ASSERT(id > 0 && p->f[id].live);
	p->f[id].live = 0;
	p->freeid[p->nfree++] = id;
	if (p->hk) {
		if (evicted)
			proc_evicted(p, id);
		p->hk->freed(p->hctx, p, id);
	}
}

static inline void folio_release(sl_proc *p, uint32_t id) { folio_release_x(p, id, 0); }

/* A device keeps a reverse map (rmap.h): the swap PTEs of pages [s, e) of
 * region r, written by the reclaim step that just ended, now hold their
 * slots. Noted per step, not per folio, so that the swap-out paths stay as
 * they are without a map; a folio written in the same step is not moved by
 * it (a kernel's would still be in the swap cache). */
static __attribute__((noinline, cold)) void proc_rmap_note(sl_proc *p, int r, uint64_t s, uint64_t e)
{
	uint64_t *pte = p->reg[r].pte, **map = p->s->dev[0]->rmap;

	if (p->s->nr == 1 && map) {
		/* one device, with the map: a swap PTE's value is its slot */
		for (uint64_t i = s; i < e; i++)
			if (is_swap(pte[i]))
				map[pte_val(pte[i])] = &pte[i];
		return;
	}
	for (uint64_t i = s; i < e; i++)
		if (is_swap(pte[i]))
			sl_rmap_note_pte(p->s, &pte[i]);
}

/* pageout_pmd()'s step with a reverse map: the pages its queue may write,
 * p->rmap_runs[0 .. 2n) as (first, end) pairs in address order - each
 * queued folio's pages, taken before reclaim frees and reuses folio ids -
 * so that proc_rmap_note() walks only those at the step's end, not the
 * pages of the step already out. Returns n. */
static __attribute__((noinline, cold)) uint32_t proc_rmap_queued(sl_proc *p, uint32_t nq)
{
	uint64_t *runs = p->rmap_runs;
	uint32_t n = 0;

	for (uint32_t q = 0; q < nq; q++) {
		const folio *f = &p->f[p->queue[q]];
		uint64_t head = f->head, end = head + (UINT64_C(1) << f->order);
		if (n && runs[2 * n - 1] == head) {
			runs[2 * n - 1] = end;
		} else {
			runs[2 * n] = head;
			runs[2 * n + 1] = end;
			n++;
		}
	}
	return n;
}

/* The memory cgroup's charge for a new folio of 2^order (reclaim.c's
 * try_charge_memcg()); always granted without hooks. */
static int proc_charge(sl_proc *p, int order)
{
	return p->hk ? p->hk->charge(p->hctx, p, order) : 0;
}

/* proc_charge() for a swap-in fault that read nr entries from e: with a
 * reverse map they stay pinned while the charge reclaims (rmap_hk_charge()).
 * PIN_SWAPIN marks the charge as a swap-in's for the hook
 * (sl_proc_charging_swapin()), which counts a failure as the kernel's
 * swpin_fallback_charge, not anon_fault_fallback_charge. */
static int proc_charge_swapin(sl_proc *p, int order, uint64_t e, uint32_t nr)
{
	int rc;

	if (!p->hk)
		return 0;
	p->pin_e = e;
	p->pin_nr = nr | PIN_SWAPIN;
	rc = p->hk->charge(p->hctx, p, order);
	p->pin_nr = 0;
	return rc;
}

/* do_swap_page() / swap_cache_alloc_folio() - 6.18: the shadow of the
 * swap-in's first slot (swap_cache_get_shadow()) goes to
 * workingset_refault() once the new folio is charged, before
 * folio_add_lru(). */
static inline void proc_refault(sl_proc *p, const region *rg, uint32_t pg, int order)
{
	if (p->hk && p->hk->refault && rg->shadow[pg])
		p->hk->refault(p->hctx, p, rg->shadow[pg], order);
}

/* __folio_split() - 6.18: every still-mapped page of an anonymous folio
 * becomes an order-0 folio, except pages never written since they were last
 * dropped: those are remapped to the shared zero page (RMP_USE_SHARED_ZEROPAGE,
 * docs/kernel-findings.md F1). Pages no longer mapped are freed. The head
 * keeps the id when it stays a mapped folio. Returns how many pages went to
 * the zero page. */
static uint32_t folio_split(sl_proc *p, uint32_t id)
{
	folio f = p->f[id];
	region *rg = &p->reg[f.region];
	uint32_t nr = 1u << f.order, zeroed = 0;
	int head_kept = 0;

	SL_ASSERT(f.live && f.order > 0);
	if (p->hk)
		p->hk->split(p->hctx, p, id, 1);
	for (uint32_t j = 0; j < nr; j++) {
		uint32_t pg = f.head + j;
		if (rg->pte[pg] != (PTE_PRESENT | id))
			continue;
		if (!rg->data[pg] && gen_has(p, SL_POL_SPLIT_ZEROPAGE)) {
			rg->pte[pg] = PTE_ZERO;
			zeroed++;
		} else if (j == 0) {
			p->f[id].order = 0;
			p->f[id].mapped = 1;
			head_kept = 1;
			if (p->hk)
				p->hk->mapped(p->hctx, p, id, 0);
		} else {
			folio_map_new(p, f.region, pg, 0);
		}
	}
	if (!head_kept)
		folio_release(p, id);
	if (f.order == SL_PMD_ORDER)
		rg->pmd[pmd_index(rg, f.head)] = PMD_TABLE;
	if (p->hk)
		p->hk->split(p->hctx, p, zeroed, 0);
	p->st.zero_remapped += zeroed;
	return zeroed;
}

/* The pages around pg whose PTEs match a pattern, found lazily: [lo, hi]
 * grows only as far as an order's aligned range needs and stops for good at
 * the first page that does not match, so trying the orders from the largest
 * down reads each PTE at most once (the orders' ranges are nested). Page j
 * matches when its PTE is pat | (val + step * (j - pg)): none (0, 0, 0), or
 * swap entries consecutive with pg's (PTE_SWAP, pg's entry, 1). */
typedef struct pte_span {
	uint32_t pg, lo, hi;    /* every page in [lo, hi] matches */
	uint8_t lo_end, hi_end; /* lo - 1 (hi + 1) is known not to */
	uint64_t pat, val, step;
} pte_span;

static inline int span_match(const region *rg, const pte_span *sp, uint32_t j)
{
	return rg->pte[j] == (sp->pat | (sp->val + sp->step * ((uint64_t)j - sp->pg)));
}

/* Pages j .. j + 3 all match: one test for the four. */
static inline int span_match4(const region *rg, const pte_span *sp, uint32_t j)
{
	const uint64_t *pte = rg->pte + j;
	uint64_t want = sp->pat | (sp->val + sp->step * ((uint64_t)j - sp->pg));

	return ((pte[0] ^ want) | (pte[1] ^ (want + sp->step)) | (pte[2] ^ (want + 2 * sp->step)) |
		(pte[3] ^ (want + 3 * sp->step))) == 0;
}

/* Every page of [a, a + nr) (which holds sp->pg) matches. Always inlined:
 * each caller's constant pattern folds into its loops. */
static inline __attribute__((always_inline)) int
span_covers(const region *rg, pte_span *sp, uint32_t a, uint32_t nr)
{
	while (sp->lo > a && !sp->lo_end) {
		/* four pages at a time while they all match, then one */
		if (sp->lo >= a + 4 && span_match4(rg, sp, sp->lo - 4))
			sp->lo -= 4;
		else if (span_match(rg, sp, sp->lo - 1))
			sp->lo--;
		else
			sp->lo_end = 1;
	}
	while (sp->hi < a + nr - 1 && !sp->hi_end) {
		if (sp->hi + 4 <= a + nr - 1 && span_match4(rg, sp, sp->hi + 1))
			sp->hi += 4;
		else if (span_match(rg, sp, sp->hi + 1))
			sp->hi++;
		else
			sp->hi_end = 1;
	}
	return sp->lo <= a && sp->hi >= a + nr - 1;
}

/* do_anonymous_page() + alloc_anon_folio() - 6.18: a PMD THP
 * (do_huge_pmd_anonymous_page()) when 2 MiB is enabled, the PMD is empty and
 * its 2 MiB of address lie inside the VMA; else the largest enabled mTHP
 * order whose aligned range of address lies inside the VMA with every PTE
 * none; else order 0. At a region's edges and around holes the order thus
 * depends on where the region starts (its pgoff). */
static uint32_t fault_anon(sl_proc *p, int r, uint32_t pg)
{
	region *rg = &p->reg[r];
	int order = 0;
	uint32_t head = pg;

	if (!(rg->spec.vmflags & SL_VMA_NOHUGEPAGE) && p->mthp) {
		if ((p->mthp & (1u << SL_PMD_ORDER)) && rg->pmd[pmd_index(rg, pg)] == PMD_NONE &&
		    thp_vma_suitable_order(rg, pg, SL_PMD_ORDER, &head) && !proc_charge(p, SL_PMD_ORDER)) {
			order = SL_PMD_ORDER;
		} else {
			head = pg; /* a PMD range whose charge failed moved it */
			pte_span sp = { .pg = pg, .lo = pg, .hi = pg };
			for (int k = SL_PMD_ORDER - 1; k >= SL_MTHP_MIN_ORDER; k--) {
				uint32_t a;
				if ((p->mthp & (1u << k)) && thp_vma_suitable_order(rg, pg, k, &a) &&
				    span_covers(rg, &sp, a, 1u << k) && !proc_charge(p, k)) {
					order = k;
					head = a;
					break;
				}
			}
		}
	}
	if (order == 0)
		proc_charge(p, 0);
	folio_map_new(p, r, head, order);
	p->st.faults_anon[order]++;
	return head + (1u << order);
}

/* can_swapin_thp() - 6.18: the aligned range's PTEs are swap entries with
 * consecutive offsets, page pg's being its own (sp: the span of those). */
static int can_swapin_thp(const region *rg, pte_span *sp, uint32_t a, uint32_t nr)
{
	return span_covers(rg, sp, a, nr);
}

/* noncontig (a virtual swap layer): the aligned range [a, a + 2^k) holds
 * swap entries of one folio of order >= k that was swapped out whole (the
 * same recorded order on every page; an aligned block of that order held
 * one such folio at a time), so its virtual entries are consecutive and
 * aligned whatever its slots are. */
static int swapped_out_whole(const region *rg, uint32_t a, uint32_t nr, int k)
{
	uint8_t o = rg->swo[a];

	if (o <= k)
		return 0;
	for (uint32_t j = 0; j < nr; j++)
		if (!is_swap(rg->pte[a + j]) || rg->swo[a + j] != o)
			return 0;
	return 1;
}

/* noncontig: puts the swap entries of pages [a, a + nr), one call per run
 * of consecutive offsets. */
static void put_swap_ptes(sl_proc *p, const region *rg, uint32_t a, uint32_t nr)
{
	for (uint32_t i = 0, n; i < nr; i += n) {
		uint64_t base = pte_val(rg->pte[a + i]);
		for (n = 1; i + n < nr && rg->pte[a + i + n] == (PTE_SWAP | (base + n)); n++)
			;
		sl_set_put(p->s, p->cpu, base, n);
	}
}

/* do_swap_page() - 6.18 on a synchronous-I/O device with swap count 1: the
 * swap cache is bypassed, alloc_swap_folio() picks the largest enabled order
 * below PMD whose aligned range of address lies in the VMA and can be
 * swapped in whole (offset and address agree modulo the size), and the
 * slots are freed at once. noncontig also takes a
 * range that was swapped out as one folio, its runs of slots freed in turn.
 * fault_swap_large() is alloc_swap_folio()'s search of the large orders
 * (6.18), from k down (off: page pg's entry): it returns the page after the
 * folio it mapped, or 0 when none could be taken. */
static __attribute__((noinline)) uint32_t fault_swap_large(sl_proc *p, int r, uint32_t pg,
							   uint64_t off, int k)
{
	region *rg = &p->reg[r];
	pte_span sp = { .pg = pg, .lo = pg, .hi = pg, .pat = PTE_SWAP, .val = off, .step = 1 };
	uint32_t a4;

	_Static_assert(SL_MTHP_MIN_ORDER == 2, "the test below takes the smallest order's 4 pages");
	/* without swo every order's range holds the smallest order's: no order
	 * can be taken unless pg's aligned 4 pages lie in the VMA and hold
	 * entries consecutive with pg's */
	if (!rg->swo && (!thp_vma_suitable_order(rg, pg, SL_MTHP_MIN_ORDER, &a4) ||
			 !span_match4(rg, &sp, a4)))
		return 0;
	for (; k >= SL_MTHP_MIN_ORDER; k--) {
		uint32_t nr = 1u << k, a;
		if (!(p->mthp & (1u << k)) || !thp_vma_suitable_order(rg, pg, k, &a))
			continue;
		uint64_t base = off - (pg - a);
		if ((off & (nr - 1)) == addr_low_bits(rg, pg, k) &&
		    can_swapin_thp(rg, &sp, a, nr) && !proc_charge_swapin(p, k, base, nr)) {
			proc_refault(p, rg, a, k);
			folio_map_new(p, r, a, k);
			sl_set_put(p->s, p->cpu, base, nr);
			p->st.swpin[k]++;
			return a + nr;
		}
		/* (noncontig: no reverse map, no entry to pin) */
		if (rg->swo && swapped_out_whole(rg, a, nr, k) && !proc_charge_swapin(p, k, 0, 0)) {
			proc_refault(p, rg, a, k);
			put_swap_ptes(p, rg, a, nr);
			folio_map_new(p, r, a, k);
			p->st.swpin[k]++;
			return a + nr;
		}
	}
	return 0;
}

/* ---- the swap cache of a device without SWP_SYNCHRONOUS_IO (6.18; with
 * hooks only: docs/reclaim.md S1-S6, W1-W3). Such a swap-in reads order-0
 * folios into the swap cache, the faulting page's and those of the
 * readahead window; a folio keeps its slot while it stays there. The
 * model's one count on a slot stands for every reference the process
 * holds: its swap PTE's, the swap cache's, or both. */

/* The virtual page number of page pg: the region sits at 2 MiB (any
 * nonzero, 2 MiB-aligned base gives the same windows). */
static uint64_t swc_vpn(const region *rg, uint64_t pg)
{
	return PMD_PAGES + rg->spec.pgoff + pg;
}

/* swap_cache_alloc_folio() + swap_read_folio() - 6.18: a new order-0
 * folio for page pg's swap entry, charged first (GFP_HIGHUSER_MOVABLE:
 * it may reclaim), added to the swap cache and the LRU, read (counted as
 * a swap-in: pswpin); PG_readahead unless it is the faulting page. */
static uint32_t swc_read(sl_proc *p, int r, uint32_t pg, int ra)
{
	region *rg = &p->reg[r];
	uint32_t id;

	proc_charge(p, 0);
	SL_ASSERT(is_swap(rg->pte[pg]) && !p->rac[r][pg]);
	proc_refault(p, rg, pg, 0);
	id = p->nfree ? p->freeid[--p->nfree] : p->nf++;
	p->f[id] = (folio){ .head = pg, .mapped = 0, .region = (uint8_t)r, .order = 0, .live = 1 };
	p->swc[id] = pte_val(rg->pte[pg]);
	p->swra[id] = (uint8_t)ra;
	p->rac[r][pg] = id;
	p->st.swpin[0]++;
	p->st.swap_ra += ra != 0;
	if (p->hk)
		p->hk->mapped(p->hctx, p, id, 0);
	return id;
}

/* A swap-cache folio leaves the swap cache and is freed (its slot stays
 * with the swap PTE, or is put by the caller); evicted: by reclaim, which
 * leaves its shadow (folio_release_x()). */
static void swc_drop(sl_proc *p, uint32_t id, int evicted)
{
	folio *f = &p->f[id];

	if (!f->mapped)
		p->rac[f->region][f->head] = 0;
	p->swc[id] = 0;
	p->swra[id] = 0;
	folio_release_x(p, id, evicted);
}

/* swap_vma_readahead() - 6.18: every page of the window whose PTE is a swap
 * entry not in the swap cache is read, in address order, then the CPU's LRU
 * batch is drained; the faulting page's folio is read last if it is not
 * there (a window of 1, or reclaim took it meanwhile). Returns its id. */
static uint32_t swapin_readahead(sl_proc *p, int r, uint32_t pg)
{
	region *rg = &p->reg[r];
	uint64_t s, e, base = swc_vpn(rg, 0);
	unsigned win = 1;

	/* a rotational device turns VMA readahead off (swap_use_vma_readahead())
	 * for swap_cluster_readahead(), which is not modelled yet: the faulting
	 * page alone is read */
	if (sl_set_dev(p->s, pte_val(rg->pte[pg]))->flags & SL_DEV_SOLIDSTATE)
		win = sl_swap_vma_ra_win(&p->ra[r], swc_vpn(rg, pg), base, swc_vpn(rg, rg->spec.npages),
					 &s, &e);

	if (win > 1) {
		for (uint64_t a = s; a < e; a++) {
			uint32_t j = (uint32_t)(a - base);
			if (is_swap(rg->pte[j]) && !p->rac[r][j])
				swc_read(p, r, j, j != pg);
		}
		if (p->hk && p->hk->drain)
			p->hk->drain(p->hctx, p, 0);
	}
	return p->rac[r][pg] ? p->rac[r][pg] : swc_read(p, r, pg, 0);
}

/* do_swap_page() - 6.18 without SWP_SYNCHRONOUS_IO: the folio from the swap
 * cache (a readahead hit updates the VMA's readahead state) or from
 * swapin_readahead(); mapped, the PTE's reference dropped (swap_free_nr);
 * then should_try_to_free_swap(): a write fault (the folio's only
 * references are the cache's and the fault's, after draining the CPU's
 * LRU batch when the folio waits there) or vm_swap_full() frees the swap
 * cache and the slot (folio_free_swap()). A read fault maps the folio
 * writable but clean and leaves it in the swap cache with its slot; from
 * then on data[pg] is its PTE's dirty bit (no other use: an order-0 folio
 * is never split). */
static __attribute__((noinline)) uint32_t fault_swap_cache(sl_proc *p, int r, uint32_t pg,
							   int write)
{
	region *rg = &p->reg[r];
	uint64_t e = pte_val(rg->pte[pg]);
	uint32_t id = p->rac[r][pg];

	if (id) {
		sl_swap_update_readahead(&p->ra[r], swc_vpn(rg, pg), p->swra[id]);
		p->st.swap_ra_hit += p->swra[id];
		p->swra[id] = 0;
	} else {
		id = swapin_readahead(p, r, pg);
	}
	p->rac[r][pg] = 0;
	p->f[id].mapped = 1;
	rg->pte[pg] = PTE_PRESENT | id;
	rg->pmd[pmd_index(rg, pg)] = PMD_TABLE;
	if (write && p->hk && p->hk->drain)
		p->hk->drain(p->hctx, p, id);
	if (write || sl_vm_swap_full(sl_set_dev(p->s, e))) {
		p->swc[id] = 0;
		sl_set_put(p->s, p->cpu, e, 1);
	} else {
		rg->data[pg] = 0;
	}
	return pg + 1;
}

/* shrink_folio_list() - 6.18 for a folio already in the swap cache: no
 * folio_alloc_swap(); try_to_unmap() gives its PTE the folio's entry again;
 * a dirty folio is written to that slot (a swap-out of its size), a clean
 * one is not; then __remove_mapping() drops it from the swap cache and
 * frees it. An unmapped readahead folio is freed the same way. */
static uint32_t swc_reclaim(sl_proc *p, uint32_t id)
{
	folio *f = &p->f[id];
	region *rg = &p->reg[f->region];

	SL_ASSERT(f->live && f->order == 0);
	if (f->mapped) {
		rg->pte[f->head] = PTE_SWAP | p->swc[id];
		f->mapped = 0;
		if (rg->data[f->head]) {
			p->st.swpout[0]++;
			swc_drop(p, id, 1);
			return 0;
		}
	}
	p->st.swapcache_clean++;
	swc_drop(p, id, 1);
	return 1;
}

/* activate_locked in shrink_folio_list() - 6.18: a folio in the swap cache
 * that is activated gives its slot back when vm_swap_full()
 * (folio_free_swap(): only a folio no swap PTE refers to). */
void sl_proc_activate_swapcache(sl_proc *p, uint32_t id)
{
	if (p->swc && p->swc[id] && p->f[id].mapped && sl_vm_swap_full(sl_set_dev(p->s, p->swc[id]))) {
		sl_set_put(p->s, p->cpu, p->swc[id], 1);
		p->swc[id] = 0;
	}
}

uint32_t sl_proc_page_folio(const sl_proc *p, int r, uint64_t pg)
{
	uint64_t pte = p->reg[r].pte[pg];

	if (is_present(pte))
		return (uint32_t)pte_val(pte);
	return p->swc && is_swap(pte) ? p->rac[r][pg] : 0;
}

/* Allocates the swap cache's state when a device of the set lacks
 * SWP_SYNCHRONOUS_IO. 0 or -1 (memory). */
static int swc_init(sl_proc *p)
{
	int async = 0;

	for (int t = 0; t < p->s->nr; t++)
		async |= !(p->s->dev[t]->flags & SL_DEV_SYNCIO);
	if (!async || p->swc)
		return 0;
	p->swc = calloc(p->fcap, sizeof(uint64_t));
	p->swra = calloc(p->fcap, 1);
	if (!p->swc || !p->swra)
		return -1;
	for (int r = 0; r < p->nreg; r++)
		if (!(p->rac[r] = calloc(p->reg[r].spec.npages, sizeof(uint32_t))))
			return -1;
	return 0;
}

/* do_swap_page() - 6.18 (above): the common order-0 path inline. */
static inline __attribute__((always_inline)) uint32_t fault_swap(sl_proc *p, int r, uint32_t pg,
								  const int write, const int hooked)
{
	region *rg = &p->reg[r];
	uint64_t off = pte_val(rg->pte[pg]);

	SL_ASSERT(is_swap(rg->pte[pg]));
	/* only a process with hooks (reclaim) has a swap cache: hooked is a
	 * constant 0 where the caller knows there are none */
	if (hooked && p->swc)
		return fault_swap_cache(p, r, pg, write);
	if (rg->swapin_orders) {
		int k = SL_PMD_ORDER - 1;
		/* without swo only an order whose low bits of offset and address
		 * agree can succeed: start at the largest such order */
		uint64_t x = off ^ (rg->spec.pgoff + pg);
		if (!rg->swo && x && __builtin_ctzll(x) < k)
			k = __builtin_ctzll(x);
		/* an enabled order at or below k, from a synchronous-I/O device */
		if ((rg->swapin_orders & ((2u << k) - 1)) &&
		    (sl_set_dev(p->s, off)->flags & SL_DEV_SYNCIO)) {
			uint32_t next = fault_swap_large(p, r, pg, off, k);
			if (next)
				return next;
		}
	}
	proc_charge_swapin(p, 0, off, 1);
	if (hooked)
		proc_refault(p, rg, pg, 0);
	folio_map_new(p, r, pg, 0);
	sl_set_put(p->s, p->cpu, off, 1);
	p->st.swpin[0]++;
	return pg + 1;
}

/* The stores of sl_proc_touch: pages [first, first + n) in address order.
 * A fault maps a folio over the faulting page and the pages after it up to
 * the folio's end, which the writes then only mark written: they go in one
 * step. young: reclaim's accessed bits, or NULL (inlined twice, so that the
 * run without reclaim tests nothing per page). */
static inline __attribute__((always_inline)) void touch_range(sl_proc *p, int r, uint64_t first,
							       uint64_t n, uint8_t *young)
{
	region *rg = &p->reg[r];
	uint64_t end = first + n;

	for (uint64_t i = first; i < end;) {
		uint64_t pte = rg->pte[i], next = i + 1;
		if (!pte) {
			next = fault_anon(p, r, (uint32_t)i);
		} else if (is_swap(pte)) {
			next = fault_swap(p, r, (uint32_t)i, 1, young != NULL);
		} else if (pte == PTE_ZERO) {
			/* do_wp_page() on the zero page: a fresh order-0 folio */
			proc_charge(p, 0);
			folio_map_new(p, r, (uint32_t)i, 0);
			p->st.faults_anon[0]++;
		}
		if (next > end)
			next = end;
		if (next - i == 1) {
			rg->data[i] = 1;
			if (young)
				young[i] = 1;
		} else {
			memset(rg->data + i, 1, next - i);
			if (young)
				memset(young + i, 1, next - i);
		}
		i = next;
	}
}

void sl_proc_touch(sl_proc *p, int r, uint64_t first, uint64_t n)
{
	if (p->young[r])
		touch_range(p, r, first, n, p->young[r]);
	else
		touch_range(p, r, first, n, NULL);
}

/* Loads (reclaim workloads): a page never mapped maps the shared zero page
 * (do_anonymous_page() of a read fault - 6.18), a swap PTE swaps in as a
 * write would; the PTE's accessed bit is set. */
void sl_proc_read(sl_proc *p, int r, uint64_t first, uint64_t n)
{
	region *rg = &p->reg[r];

	for (uint64_t i = first; i < first + n; i++) {
		uint64_t pte = rg->pte[i];
		if (!pte)
			rg->pte[i] = PTE_ZERO;
		else if (is_swap(pte))
			fault_swap(p, r, (uint32_t)i, 0, 1);
		if (p->young[r])
			p->young[r][i] = 1;
	}
}

/* With a reverse map the caller's hooks run behind these: a swap-in
 * fault's entries, read before its charge, stay pinned while the charge
 * reclaims (rmap.h, sl_rmap_pin_charge()); every other entry may move. */
static int rmap_hk_charge(void *ctx, sl_proc *p, int order)
{
	(void)ctx;
	return sl_rmap_pin_charge(p->s, p->rmap_hk->charge, p->rmap_hctx, p, order, p->pin_e,
				  p->pin_nr & ~PIN_SWAPIN);
}

static void rmap_hk_mapped(void *ctx, sl_proc *p, uint32_t id, int order)
{
	(void)ctx;
	p->rmap_hk->mapped(p->rmap_hctx, p, id, order);
}

static void rmap_hk_freed(void *ctx, sl_proc *p, uint32_t id)
{
	(void)ctx;
	p->rmap_hk->freed(p->rmap_hctx, p, id);
}

static void rmap_hk_split(void *ctx, sl_proc *p, uint32_t v, int start)
{
	(void)ctx;
	p->rmap_hk->split(p->rmap_hctx, p, v, start);
}

static uint32_t rmap_hk_evicted(void *ctx, sl_proc *p, uint32_t id)
{
	(void)ctx;
	return p->rmap_hk->evicted(p->rmap_hctx, p, id);
}

static void rmap_hk_refault(void *ctx, sl_proc *p, uint32_t shadow, int order)
{
	(void)ctx;
	p->rmap_hk->refault(p->rmap_hctx, p, shadow, order);
}

static const sl_proc_hooks proc_rmap_hooks = {
	.charge = rmap_hk_charge, .mapped = rmap_hk_mapped, .freed = rmap_hk_freed,
	.split = rmap_hk_split,
};
static const sl_proc_hooks proc_rmap_hooks_ws = {
	.charge = rmap_hk_charge, .mapped = rmap_hk_mapped, .freed = rmap_hk_freed,
	.split = rmap_hk_split, .evicted = rmap_hk_evicted, .refault = rmap_hk_refault,
};

int sl_proc_set_hooks(sl_proc *p, const sl_proc_hooks *hk, void *ctx)
{
	for (int r = 0; r < p->nreg; r++)
		if (!p->young[r] && !(p->young[r] = calloc(p->reg[r].spec.npages, 1)))
			return -1;
	if (swc_init(p))
		return -1;
	SL_ASSERT(!hk || !hk->evicted == !hk->refault);
	if (hk && hk->evicted)
		for (int r = 0; r < p->nreg; r++)
			if (!p->reg[r].shadow &&
			    !(p->reg[r].shadow = calloc(p->reg[r].spec.npages, sizeof(uint32_t))))
				return -1;
	p->hk = hk;
	p->hctx = ctx;
	/* The model's swap cache (device without SWP_SYNCHRONOUS_IO) holds
	 * entries the reverse map does not follow (a read-fault folio keeps
	 * its slot, swc_reclaim() gives a PTE its old entry back): this
	 * process's slots are never noted, so never moved. */
	if (p->swc)
		p->rmap = 0;
	if (p->rmap && hk) {
		p->rmap_hk = hk;
		p->rmap_hctx = ctx;
		p->hk = hk->evicted ? &proc_rmap_hooks_ws : &proc_rmap_hooks;
	}
	return 0;
}

int sl_proc_folio_order(const sl_proc *p, uint32_t id)
{
	return id > 0 && id < p->nf && p->f[id].live ? p->f[id].order : -1;
}

/* folio_referenced() - 6.18 for an anonymous folio mapped once: the PTEs
 * mapping it whose accessed bit was set, each bit cleared. */
uint32_t sl_proc_folio_referenced(sl_proc *p, uint32_t id)
{
	const folio *f = &p->f[id];
	region *rg = &p->reg[f->region];
	uint32_t nr = 1u << f->order, n = 0;

	SL_ASSERT(f->live && p->young[f->region]);
	for (uint32_t j = 0; j < nr; j++) {
		uint32_t pg = f->head + j;
		if (p->young[f->region][pg] && rg->pte[pg] == (PTE_PRESENT | id)) {
			n++;
			p->young[f->region][pg] = 0;
		}
	}
	return n;
}

/* Unmaps one present page; the folio goes when its last page does. */
static void unmap_page(sl_proc *p, region *rg, uint32_t pg)
{
	uint32_t id = (uint32_t)pte_val(rg->pte[pg]);

	rg->pte[pg] = 0;
	if (--p->f[id].mapped == 0)
		folio_release(p, id);
}

static inline __attribute__((always_inline)) void zap_range(sl_proc *p, int r, uint64_t first,
							     uint64_t n);

/* zap_range() with a swap cache (S6): a swap PTE's unmapped swap-cache
 * folio is freed with the entry (free_swap_and_cache_nr()), and the
 * swap-cache folios the zap unmaps free their slots after it, when the
 * gathered folios are freed (free_pages_and_swap_cache() ->
 * free_swap_cache()). */
static __attribute__((noinline)) void swc_zap(sl_proc *p, int r, uint64_t first, uint64_t n)
{
	region *rg = &p->reg[r];
	uint64_t *put = malloc(n * sizeof(*put)), nput = 0;

	for (uint64_t i = first; i < first + n; i++) {
		uint64_t pte = rg->pte[i];
		uint32_t id = is_present(pte) ? (uint32_t)pte_val(pte) : 0;
		if (p->rac[r][i]) {
			swc_drop(p, p->rac[r][i], 0);
		} else if (id && p->swc[id]) {
			SL_ASSERT(put);
			put[nput++] = p->swc[id];
			p->swc[id] = 0;
		}
	}
	zap_range(p, r, first, n);
	for (uint64_t k = 0; k < nput; k++)
		sl_set_put(p->s, p->cpu, put[k], 1);
	free(put);
}

/* zap_pte_range() for MADV_DONTNEED, munmap and exit - 6.18 (zap_range()):
 * with a swap cache, swc_zap(). */
void sl_proc_dontneed(sl_proc *p, int r, uint64_t first, uint64_t n)
{
	if (__builtin_expect(p->swc != NULL, 0))
		swc_zap(p, r, first, n);
	else
		zap_range(p, r, first, n);
}

/* zap_pte_range() for MADV_DONTNEED - 6.18: pages in address order; runs of
 * swap entries with consecutive offsets (swap_pte_batch(), inside one page
 * table) are put as one range (free_swap_and_cache_nr()). A PMD-mapped THP
 * is dropped whole when the range covers it, else its PMD is split. */
static inline __attribute__((always_inline)) void zap_range(sl_proc *p, int r, uint64_t first,
							     uint64_t n)
{
	region *rg = &p->reg[r];
	uint64_t end = first + n;

	for (uint64_t i = first; i < end;) {
		uint32_t pmd = pmd_index(rg, i);
		uint64_t pmd_end = pmd_end_page(rg, i);
		if (rg->pmd[pmd] == PMD_HUGE) {
			/* a PMD-mapped THP lies wholly inside the region */
			uint64_t pmd_start = pmd_end - PMD_PAGES;
			if (i == pmd_start && end >= pmd_end) {
				uint32_t id = (uint32_t)pte_val(rg->pte[i]);
				for (uint64_t j = pmd_start; j < pmd_end; j++) {
					rg->pte[j] = 0;
					rg->data[j] = 0;
				}
				folio_release(p, id);
				rg->pmd[pmd] = PMD_NONE;
				i = pmd_end;
				continue;
			}
			rg->pmd[pmd] = PMD_TABLE; /* __split_huge_pmd(): now PTE-mapped */
		}
		uint64_t stop = end < pmd_end ? end : pmd_end;
		while (i < stop) {
			uint64_t pte = rg->pte[i];
			if (is_present(pte)) {
				rg->data[i] = 0;
				unmap_page(p, rg, (uint32_t)i++);
			} else if (pte == PTE_ZERO) {
				rg->pte[i++] = 0;
			} else if (is_swap(pte)) {
				uint64_t base = pte_val(pte), nr = 1;
				uint64_t *pt = rg->pte + i;
				uint8_t *dt = rg->data + i;
				/* entries below 2^61: PTE_SWAP | (base + n) is pte + n */
				if (i + 1 < stop && pt[1] == pte + 1) {
					/* a run (a folio's): four at a time, then one */
					nr = 2;
					while (i + nr + 4 <= stop &&
					       ((pt[nr] ^ (pte + nr)) | (pt[nr + 1] ^ (pte + nr + 1)) |
						(pt[nr + 2] ^ (pte + nr + 2)) |
						(pt[nr + 3] ^ (pte + nr + 3))) == 0)
						nr += 4;
					while (i + nr < stop && pt[nr] == pte + nr)
						nr++;
					for (uint64_t j = 0; j < nr; j++)
						pt[j] = 0;
					for (uint64_t j = 0; j < nr; j++)
						dt[j] = 0;
				} else {
					pt[0] = 0;
					dt[0] = 0;
				}
				sl_set_put(p->s, p->cpu, base, nr);
				i += nr;
			} else {
				i++;
			}
		}
	}
}

/* Writes a folio to the slots at off: its PTEs become swap entries. Under
 * noncontig (the region keeps swo) a large folio's slots are e[0 .. nr),
 * forming `runs` runs; its order is recorded per page. */
static void swap_out(sl_proc *p, uint32_t id, uint64_t off, const uint64_t *e, uint32_t runs)
{
	folio *f = &p->f[id];
	region *rg = &p->reg[f->region];
	uint32_t nr = 1u << f->order;
	uint64_t *pte = rg->pte + f->head;

	if (!rg->swo) {
		/* folio_alloc_swap() gave 2^order slots, naturally aligned */
		SL_ASSERT(f->live && off && !(sl_entry_off(off) & (nr - 1)));
		for (uint32_t j = 0; j < nr; j++)
			pte[j] = PTE_SWAP | (off + j);
	} else {
		for (uint32_t j = 0; j < nr; j++)
			pte[j] = PTE_SWAP | (e ? e[j] : off + j); /* noncontig only: not hot */
		memset(rg->swo + f->head, f->order + 1, nr);
		p->st.swpout_extra_runs[f->order] += runs - 1;
	}
	if (f->order == SL_PMD_ORDER)
		rg->pmd[pmd_index(rg, f->head)] = PMD_TABLE; /* unmapping splits the PMD */
	p->st.swpout[f->order]++;
	folio_release_x(p, id, 1);
}

/* One order-0 folio through shrink_folio_list(): a slot, or it stays
 * resident (activate_locked). */
static inline __attribute__((always_inline)) void reclaim_order0_slot(sl_proc *p, uint32_t id,
									uint64_t off)
{
	folio *f = &p->f[id];
	region *rg = &p->reg[f->region];

	f->queued = 0;
	if (!off) {
		p->st.alloc_fail0++;
		note_failure(p, 0);
	} else if (rg->swo) {
		swap_out(p, id, off, NULL, 1);
	} else {
		/* swap_out() of one page */
		SL_ASSERT(f->live && f->order == 0);
		rg->pte[f->head] = PTE_SWAP | off;
		p->st.swpout[0]++;
		folio_release_x(p, id, 1);
	}
}

/* reclaim_order0_slot() with its slot allocated here (one call). */
static inline __attribute__((always_inline)) void reclaim_order0(sl_proc *p, uint32_t id)
{
	reclaim_order0_slot(p, id, proc_alloc(p, 0));
}

/* Slot allocations nothing else comes between go to the device in one
 * call (sl_set_alloc_batch0(): the same slots, in the same order), unless
 * the task migrates between them or hooks watch the folios. */
static int proc_can_batch(const sl_proc *p) { return !p->migrate_every && !p->hk; }

/* One page of a folio split by the fallback, in the order shrink_folio_list()
 * meets it. A page the split remapped to the zero page left an unmapped,
 * zero-filled folio on the list: reclaim still allocates it a slot, the
 * write-out only sets the zeromap, and dropping the swap cache frees the slot
 * again - a slot taken and given back (docs/kernel-findings.md F2). */
static void reclaim_split_page(sl_proc *p, region *rg, uint32_t pg)
{
	uint64_t pte = rg->pte[pg];

	if (is_present(pte)) {
		reclaim_order0(p, (uint32_t)pte_val(pte));
	} else if (pte == PTE_ZERO) {
		uint64_t off = proc_alloc(p, 0);
		if (off)
			sl_set_put(p->s, p->cpu, off, 1);
		p->st.zero_transient++;
	}
}

static inline __attribute__((always_inline)) int split_reclaim_slot(sl_proc *p, region *rg,
								    uint32_t id, uint32_t pg,
								    int is_head, uint64_t off);

/* One page of the folio `id` in split_reclaim(): folio_split()'s step for
 * it, then reclaim_split_page()'s. Returns 1 when the head page stays
 * resident as the order-0 folio `id`. */
static inline __attribute__((always_inline)) int split_reclaim_page(sl_proc *p, region *rg,
								    uint32_t id, uint32_t pg,
								    int is_head, int zp)
{
	if (rg->pte[pg] != (PTE_PRESENT | id)) {
		reclaim_split_page(p, rg, pg); /* the split leaves it alone */
		return 0;
	}
	if (!rg->data[pg] && zp) {
		rg->pte[pg] = PTE_ZERO;
		p->st.zero_remapped++;
		reclaim_split_page(p, rg, pg);
		return 0;
	}
	return split_reclaim_slot(p, rg, id, pg, is_head, proc_alloc(p, 0));
}

/* The page's write-out to the slot `off` its allocation gave, or (0) its
 * staying resident. */
static inline __attribute__((always_inline)) int split_reclaim_slot(sl_proc *p, region *rg,
								    uint32_t id, uint32_t pg,
								    int is_head, uint64_t off)
{
	if (off) {
		rg->pte[pg] = PTE_SWAP | off;
		p->st.swpout[0]++;
		return 0;
	}
	/* no slot: the page stays resident, an order-0 folio of its own */
	p->st.alloc_fail0++;
	note_failure(p, 0);
	if (!is_head) {
		folio_map_new(p, p->f[id].region, pg, 0);
		return 0;
	}
	p->f[id].order = 0;
	p->f[id].mapped = 1;
	p->f[id].queued = 0;
	return 1;
}

/* reclaim_folio()'s fallback where no hook watches folios and PTEs hold
 * contiguous entries: folio_split() and the reclaim of each page it leaves,
 * page by page in reclaim's order. A page gets a folio of its own only when
 * its slot allocation fails and it stays resident; folio ids are not
 * observable without hooks, and the allocations, PTEs, PMD and counters are
 * those of folio_split() followed by reclaim_split_page() on every page. */
static __attribute__((noinline)) void split_reclaim(sl_proc *p, region *rg, uint32_t id)
{
	folio f = p->f[id];
	uint32_t nr = 1u << f.order, n = 0;
	int zp = gen_has(p, SL_POL_SPLIT_ZEROPAGE), desc = gen_has(p, SL_POL_SPLIT_DESCENDING);
	int batch = proc_can_batch(p), kept = 0;
	/* the pages met since the last other step that only need a slot
	 * (mapped by the folio, written or no zero page): one allocation
	 * call for them all, as no step comes between their allocations */
	uint32_t pend[PMD_PAGES];
	uint64_t off[PMD_PAGES];

	if (f.order == SL_PMD_ORDER)
		rg->pmd[pmd_index(rg, f.head)] = PMD_TABLE;
	/* the head, then the rest ascending or (6.15+) from the last down */
	for (uint32_t k = 0; k <= nr; k++) {
		uint32_t pg = f.head + (k == 0 ? 0 : desc ? nr - k : k);
		if (k < nr && batch && rg->pte[pg] == (PTE_PRESENT | id) && (rg->data[pg] || !zp)) {
			pend[n++] = pg;
			continue;
		}
		if (n) {
			sl_set_alloc_batch0(p->s, p->cpu, n, off);
			for (uint32_t i = 0; i < n; i++)
				kept |= split_reclaim_slot(p, rg, id, pend[i], pend[i] == f.head, off[i]);
			n = 0;
		}
		if (k < nr)
			kept |= split_reclaim_page(p, rg, id, pg, k == 0, zp);
	}
	if (!kept)
		folio_release(p, id);
}

/* shrink_folio_list() - 6.18, for one folio taken off the list: allocate
 * swap for its order; a large folio that gets none is split to order 0
 * (swpout_fallback for its size), the head retried at order 0, then the
 * split-off pages, in descending address order, before the next folio.
 * noncontig: the slots come through alloc_pages, contiguous or not. */
static void reclaim_folio(sl_proc *p, uint32_t id)
{
	folio *f = &p->f[id];
	int order = f->order;

	if (order == 0) {
		reclaim_order0(p, id);
		return;
	}
	/* noncontig: the slots land in p->pages; `off` is then their runs */
	uint64_t off = p->pages ? (uint64_t)proc_alloc_pages(p, order) : proc_alloc(p, order);
	if (off) {
		f->queued = 0;
		swap_out(p, id, off, p->pages, p->pages ? (uint32_t)off : 1);
		return;
	}
	uint32_t head = f->head, nr = 1u << order;
	region *rg = &p->reg[f->region];
	p->st.swpout_fallback[order]++;
	note_failure(p, order);
	if (!p->hk && !rg->swo) {
		split_reclaim(p, rg, id);
		return;
	}
	folio_split(p, id);
	reclaim_split_page(p, rg, head);
	if (gen_has(p, SL_POL_SPLIT_DESCENDING)) {
		for (uint32_t j = nr - 1; j >= 1; j--)
			reclaim_split_page(p, rg, head + j);
	} else {
		for (uint32_t j = 1; j < nr; j++)
			reclaim_split_page(p, rg, head + j);
	}
}

/* shrink_folio_list()'s swap-out of one isolated folio (reclaim.c) by the
 * reclaiming task on `cpu`: the MADV_PAGEOUT path's reclaim_folio(), slots
 * taken from that CPU's cursors. */
uint32_t sl_proc_reclaim_folio(sl_proc *p, uint32_t id, int cpu)
{
	int own = p->cpu, r = p->f[id].region;
	uint64_t head = p->f[id].head, nr = UINT64_C(1) << p->f[id].order;

	if (p->swc && p->swc[id])
		return swc_reclaim(p, id);

	p->cpu = cpu;
	reclaim_folio(p, id);
	p->cpu = own;
	if (p->rmap)
		proc_rmap_note(p, r, head, head + nr);
	return 0;
}

static void queue_folio(sl_proc *p, uint32_t *nq, uint32_t id)
{
	if (id == 0 || !p->f[id].live)
		abort(); /* only live folios are reclaimed */
	p->f[id].queued = 1;
	p->queue[(*nq)++] = id;
}

/* reclaim_order0() of n order-0 folios in turn, their slots from one
 * allocation call (proc_can_batch()). */
static __attribute__((noinline)) void reclaim_order0_run(sl_proc *p, const uint32_t *ids,
							 uint32_t n)
{
	uint64_t off[PMD_PAGES];

	SL_ASSERT(n <= PMD_PAGES);
	sl_set_alloc_batch0(p->s, p->cpu, n, off);
	for (uint32_t i = 0; i < n; i++)
		reclaim_order0_slot(p, ids[i], off[i]);
}

/* The first page at or after i, before e, with a present PTE (else e). */
static uint64_t next_present(const region *rg, uint64_t i, uint64_t e)
{
	const uint64_t *pte = rg->pte;

	for (; i + 4 <= e; i += 4)
		if ((pte[i] | pte[i + 1] | pte[i + 2] | pte[i + 3]) & PTE_PRESENT)
			break;
	for (; i < e; i++)
		if (is_present(pte[i]))
			return i;
	return e;
}

/* madvise_cold_or_pageout_pte_range() for one PMD's part [s, e) of the
 * range, then reclaim_pages() on what it isolated (address order). A large
 * folio not wholly mapped inside [s, e) is split first and its pages are
 * taken one by one. With a reverse map the swap PTEs the step wrote are
 * noted at its end, only in its queued folios' pages. */
static void pageout_pmd(sl_proc *p, int r, uint64_t s, uint64_t e)
{
	region *rg = &p->reg[r];
	uint32_t pmd = pmd_index(rg, s), nq = 0, nruns = 0;

	if (rg->pmd[pmd] == PMD_HUGE) {
		/* a PMD-mapped THP lies wholly inside the region */
		uint64_t head = pmd_end_page(rg, s) - PMD_PAGES;
		uint32_t id = (uint32_t)pte_val(rg->pte[head]);
		if (s == head && e == s + PMD_PAGES) {
			queue_folio(p, &nq, id);
			goto reclaim;
		}
		folio_split(p, id);
		p->st.splits++;
	}
	for (uint64_t i = next_present(rg, s, e); i < e; i = next_present(rg, i + 1, e)) {
		uint32_t id = (uint32_t)pte_val(rg->pte[i]);
		folio *f = &p->f[id];
		if (f->queued)
			continue;
		if (f->order) {
			uint32_t nr = 1u << f->order;
			int whole = f->mapped == nr && f->head >= s && f->head + nr <= e;
			if (whole && gen_has(p, SL_POL_SPLIT_MTHP)) {
				/* <= 6.9 split every PTE-mapped large folio here; the
				 * model counts it as a fallback of its size */
				p->st.swpout_fallback[f->order]++;
				whole = 0;
			}
			if (!whole) {
				folio_split(p, id);
				p->st.splits++;
				if (!is_present(rg->pte[i]))
					continue; /* now the zero page */
				id = (uint32_t)pte_val(rg->pte[i]);
			} else {
				/* every page of a wholly mapped folio maps it: the
				 * rest of them would only find it queued */
				queue_folio(p, &nq, id);
				i = f->head + nr - 1;
				continue;
			}
		}
		queue_folio(p, &nq, id);
	}
reclaim:
	if (p->rmap)
		nruns = proc_rmap_queued(p, nq);
	for (uint32_t q = 0, n; q < nq; q += n) {
		n = 1;
		if (p->f[p->queue[q]].order || !proc_can_batch(p)) {
			reclaim_folio(p, p->queue[q]);
			continue;
		}
		/* a run of order-0 folios: their slots in one allocation call */
		while (q + n < nq && p->f[p->queue[q + n]].order == 0)
			n++;
		if (n == 1)
			reclaim_order0(p, p->queue[q]);
		else
			reclaim_order0_run(p, p->queue + q, n);
	}
	for (uint32_t k = 0; k < nruns; k++)
		proc_rmap_note(p, r, p->rmap_runs[2 * k], p->rmap_runs[2 * k + 1]);
}

void sl_proc_pageout(sl_proc *p, int r, uint64_t first, uint64_t n)
{
	uint64_t end = first + n;

	for (uint64_t s = first; s < end;) {
		uint64_t e = pmd_end_page(&p->reg[r], s);
		if (e > end)
			e = end;
		pageout_pmd(p, r, s, e);
		s = e;
	}
}

uint64_t sl_proc_npages(const sl_proc *p)
{
	uint64_t n = 0;
	for (int r = 0; r < p->nreg; r++)
		n += p->reg[r].spec.npages;
	return n;
}

void sl_proc_layout(const sl_proc *p, uint64_t *out)
{
	for (int r = 0; r < p->nreg; r++) {
		const region *rg = &p->reg[r];
		for (uint64_t i = 0; i < rg->spec.npages; i++)
			*out++ = is_swap(rg->pte[i]) ? pte_val(rg->pte[i]) : SL_NOT_SWAPPED;
	}
}

#define FNV_OFFSET UINT64_C(0xcbf29ce484222325)
#define FNV_PRIME UINT64_C(0x100000001b3)
#define FNV_PRIME_POW7                                                                      \
	(FNV_PRIME * FNV_PRIME * FNV_PRIME * FNV_PRIME * FNV_PRIME * FNV_PRIME * FNV_PRIME)
#define FNV_PRIME_POW8 (FNV_PRIME_POW7 * FNV_PRIME)

/*
 * The layout hash in two chains. Write the FNV-1a state as h = g + l, l its
 * low byte. A step (h ^ b) * P changes only the low byte before the
 * multiply, so it equals g * P + step(l), and step(l) < 2^64 depends on l
 * and b alone. Over the 8 bytes of an entry v:
 *
 *	fnv_entry(h, v) = g * P^8 + fnv_entry(l, v)
 *
 * and the next low byte is fnv_entry(l, v)'s. So the low bytes form a
 * chain of their own (8 bits of state: a table lookup per entry), and the
 * high part g' = g * P^8 + (fnv_entry(l, v) with its low byte cleared) is
 * a multiply-add whose addend is known as soon as l is. The serial chain of
 * the byte-wise definition (xor, multiply, xor, multiply for a 2-byte
 * entry) becomes an xor and a load; the values are the same.
 *
 * fnv_lo16[u ^ l] is the low byte of fnv_entry(l, u) for an entry u below
 * 2^16 (every slot of a device up to 256 MiB): u's high byte is that of
 * u ^ l and its low byte is l ^ (u ^ l)'s. Its rows (high bytes) are filled
 * once per process, as far as the devices need. fnv_ff[l] is
 * fnv_entry(l, SL_NOT_SWAPPED), the eight 0xff bytes from the low byte l.
 */
static uint64_t fnv_ff[256];
static uint8_t fnv_lo16[1u << 16];
static uint64_t fnv_k16[1u << 16];
static _Atomic unsigned fnv_lo16_rows;
static pthread_mutex_t fnv_lock = PTHREAD_MUTEX_INITIALIZER;

/* The byte-wise steps over the entry v from the state h. */
static uint64_t fnv_bytes(uint64_t h, uint64_t v)
{
	for (int b = 0; b < 8; b++)
		h = (h ^ ((v >> (8 * b)) & 0xff)) * FNV_PRIME;
	return h;
}

/* Fills fnv_ff and the first `rows` rows of fnv_lo16; returns the entries
 * below which fnv_lo16 holds (rows * 256). */
static uint64_t fnv_tables(unsigned rows)
{
	unsigned have = atomic_load_explicit(&fnv_lo16_rows, memory_order_acquire);

	if (have < rows) {
		pthread_mutex_lock(&fnv_lock);
		have = atomic_load_explicit(&fnv_lo16_rows, memory_order_relaxed);
		if (!have)
			for (unsigned l = 0; l < 256; l++)
				fnv_ff[l] = fnv_bytes(l, SL_NOT_SWAPPED);
		for (unsigned b = have; b < rows; b++)
			for (unsigned x = 0; x < 256; x++) {
				uint64_t e = ((x * FNV_PRIME) ^ b) * FNV_PRIME_POW7;
				fnv_lo16[b << 8 | x] = (uint8_t)e;
				fnv_k16[b << 8 | x] = e & ~UINT64_C(0xff);
			}
		if (rows > have)
			atomic_store_explicit(&fnv_lo16_rows, rows, memory_order_release);
		pthread_mutex_unlock(&fnv_lock);
		have = rows > have ? rows : have;
	}
	return (uint64_t)have << 8;
}

/* fnv_entry(l, v) for an entry at or above fnv_lo16's rows (not SL_NOT_SWAPPED),
 * l < 256: a zero
 * byte only multiplies by the prime, so the entry's zero top bytes take one
 * multiply by a power of it. */
static uint64_t fnv_entry_low(unsigned l, uint64_t v)
{
	static const uint64_t pw[9] = {
		UINT64_C(1), FNV_PRIME, FNV_PRIME * FNV_PRIME, FNV_PRIME * FNV_PRIME * FNV_PRIME,
		FNV_PRIME * FNV_PRIME * FNV_PRIME * FNV_PRIME,
		FNV_PRIME * FNV_PRIME * FNV_PRIME * FNV_PRIME * FNV_PRIME,
		FNV_PRIME * FNV_PRIME * FNV_PRIME * FNV_PRIME * FNV_PRIME * FNV_PRIME,
		FNV_PRIME_POW7, FNV_PRIME_POW8,
	};
	uint64_t h = l;
	int nb = 0;

	for (uint64_t t = v; t; t >>= 8)
		nb++;
	for (int b = 0; b < nb; b++)
		h = (h ^ ((v >> (8 * b)) & 0xff)) * FNV_PRIME;
	return h * pw[8 - nb];
}

/* One entry through both chains: an entry below fnv_tables()' bound (a
 * table row and a multiply-add whose multiply waits for no load)... */
static inline __attribute__((always_inline)) void fnv_step_table(uint64_t *g, unsigned *l,
								 uint64_t v)
{
	uint64_t x = v ^ *l;

	*g = *g * FNV_PRIME_POW8 + fnv_k16[x];
	*l = fnv_lo16[x];
}

/* ... and any other: SL_NOT_SWAPPED, or an entry at or above the bound. */
static inline void fnv_step_other(uint64_t *g, unsigned *l, uint64_t v)
{
	uint64_t e = v == SL_NOT_SWAPPED ? fnv_ff[*l] : fnv_entry_low(*l, v);

	*l = (unsigned)(e & 0xff);
	*g = *g * FNV_PRIME_POW8 + (e & ~UINT64_C(0xff));
}

uint64_t sl_layout_hash(const uint64_t *layout, uint64_t n)
{
	uint64_t lim = fnv_tables(256), g = FNV_OFFSET & ~UINT64_C(0xff);
	unsigned l = FNV_OFFSET & 0xff;

	for (uint64_t i = 0; i < n; i++) {
		if (layout[i] < lim)
			fnv_step_table(&g, &l, layout[i]);
		else
			fnv_step_other(&g, &l, layout[i]);
	}
	return g + l;
}

/* sl_proc_layout_hash()'s loop, with or without the layout (`save`). */
static inline __attribute__((always_inline)) uint64_t
proc_layout_hash_m(const sl_proc *p, uint64_t *out, uint64_t *swapped, const int save)
{
	/* the rows device 0's offsets reach; other devices' entries are above
	 * 2^48 */
	uint64_t slots = (uint64_t)p->s->dev[0]->nr_clusters * SL_CLUSTER;
	uint64_t lim = fnv_tables(slots >= (1u << 16) ? 256 : (unsigned)((slots + 255) >> 8));
	uint64_t g = FNV_OFFSET & ~UINT64_C(0xff), other = 0, all = 0;
	unsigned l = FNV_OFFSET & 0xff;

	for (int r = 0; r < p->nreg; r++) {
		const uint64_t *pte = p->reg[r].pte;
		uint64_t np = p->reg[r].spec.npages;
		for (uint64_t i = 0; i < np; i++) {
			/* a swap PTE's entry, or (not a swap PTE) a value above lim */
			uint64_t v = pte[i] - PTE_SWAP;
			if (v < lim) {
				fnv_step_table(&g, &l, v);
			} else {
				v = is_swap(pte[i]) ? pte_val(pte[i]) : SL_NOT_SWAPPED;
				other += !is_swap(pte[i]);
				fnv_step_other(&g, &l, v);
			}
			if (save)
				out[i] = v;
		}
		all += np;
		if (save)
			out += np;
	}
	*swapped = all - other;
	return g + l;
}

/* Out of line: the loop keeps its constants and both chains in registers. */
__attribute__((noinline)) uint64_t sl_proc_layout_hash(const sl_proc *p, uint64_t *out,
						       uint64_t *swapped)
{
	return out ? proc_layout_hash_m(p, out, swapped, 1) : proc_layout_hash_m(p, NULL, swapped, 0);
}

int sl_proc_layout_snap16(const sl_proc *p, uint16_t *out, uint64_t *swapped)
{
	/* the rows device 0's offsets reach, as in proc_layout_hash_m(); the
	 * code SL_SNAP16_NONE is no entry's */
	uint64_t slots = (uint64_t)p->s->dev[0]->nr_clusters * SL_CLUSTER;
	uint64_t lim = fnv_tables(slots >= (1u << 16) ? 256 : (unsigned)((slots + 255) >> 8));
	uint64_t other = 0, all = 0, bad = 0;

	if (lim > SL_SNAP16_NONE)
		lim = SL_SNAP16_NONE;
	for (int r = 0; r < p->nreg; r++) {
		const uint64_t *pte = p->reg[r].pte;
		uint64_t np = p->reg[r].spec.npages;
		for (uint64_t i = 0; i < np; i++) {
			uint64_t v = pte[i] - PTE_SWAP;
			uint64_t sw = is_swap(pte[i]);
			out[i] = (uint16_t)(v < lim ? v : SL_SNAP16_NONE);
			other += !sw;
			bad |= sw & (v >= lim);
		}
		all += np;
		out += np;
	}
	*swapped = all - other;
	return bad ? -1 : 0;
}

/* sl_layout_hash16() for K chains, K a constant. */
static inline __attribute__((always_inline)) void layout_hash16_m(const uint16_t *const *snap,
								  uint64_t n, uint64_t *out,
								  const int K)
{
	uint64_t g[4];
	unsigned l[4];

	for (int j = 0; j < K; j++) {
		g[j] = FNV_OFFSET & ~UINT64_C(0xff);
		l[j] = FNV_OFFSET & 0xff;
	}
	for (uint64_t i = 0; i < n; i++) {
		for (int j = 0; j < K; j++) {
			unsigned v = snap[j][i];
			if (v != SL_SNAP16_NONE)
				fnv_step_table(&g[j], &l[j], v);
			else
				fnv_step_other(&g[j], &l[j], SL_NOT_SWAPPED);
		}
	}
	for (int j = 0; j < K; j++)
		out[j] = g[j] + l[j];
}

void sl_layout_hash16(const uint16_t *const *snap, int k, uint64_t n, uint64_t *out)
{
	/* every code below SL_SNAP16_NONE is an entry whose table row
	 * sl_proc_layout_snap16() filled */
	switch (k) {
	case 4:
		layout_hash16_m(snap, n, out, 4);
		break;
	case 3:
		layout_hash16_m(snap, n, out, 3);
		break;
	case 2:
		layout_hash16_m(snap, n, out, 2);
		break;
	default:
		layout_hash16_m(snap, n, out, 1);
		break;
	}
}

/* P1: every swap PTE holds one reference to its slot, and (exclusive) every
 * reference belongs to a PTE; P2: every live folio's mapped count equals
 * the PTEs that map it. */
/* P3: a swap-cache folio is live and order 0; mapped, it holds its slot's
 * reference (counted into refs); unmapped (read ahead), it is the one its
 * page's swap PTE names, which holds the reference; every page's cached
 * folio is such a one. */
static int swc_check(const sl_proc *p, uint8_t **refs, char *msg, size_t len)
{
	for (uint32_t id = 1; id < p->nf; id++) {
		uint64_t e = p->swc[id];
		const folio *f = &p->f[id];
		if (!e)
			continue;
		const region *rg = &p->reg[f->region];
		if (!f->live || f->order)
			return snprintf(msg, len, "P3: swap-cache folio %u is dead or large", id), -1;
		if (f->mapped)
			refs[sl_entry_type(e)][sl_entry_off(e)]++;
		else if (rg->pte[f->head] != (PTE_SWAP | e) || p->rac[f->region][f->head] != id)
			return snprintf(msg, len, "P3: unmapped swap-cache folio %u is not its page's", id), -1;
	}
	for (int r = 0; r < p->nreg; r++)
		for (uint64_t i = 0; i < p->reg[r].spec.npages; i++) {
			uint32_t id = p->rac[r][i];
			if (id && (id >= p->nf || !p->swc[id] || p->f[id].head != i || p->f[id].mapped))
				return snprintf(msg, len, "P3: page %llu names swap-cache folio %u wrongly",
						(unsigned long long)i, id), -1;
		}
	return 0;
}

int sl_proc_check(const sl_proc *p, int exclusive, char *msg, size_t len)
{
	const sl_swapset *set = p->s;
	uint8_t *refs[SL_MAX_SWAPFILES] = { 0 };
	uint32_t *maps = calloc(p->nf, sizeof(uint32_t));
	int rc = 0;

	for (int t = 0; t < set->nr; t++)
		if (!(refs[t] = calloc((size_t)set->dev[t]->nr_clusters * SL_CLUSTER, 1)))
			maps = (free(maps), NULL);
	if (!maps) {
		snprintf(msg, len, "out of memory in the checker");
		rc = -1;
		goto out;
	}
	for (int r = 0; r < p->nreg && !rc; r++) {
		const region *rg = &p->reg[r];
		for (uint64_t i = 0; i < rg->spec.npages; i++) {
			uint64_t pte = rg->pte[i];
			if (is_swap(pte)) {
				uint64_t e = pte_val(pte), off = sl_entry_off(e);
				int t = sl_entry_type(e);
				if (t >= set->nr ||
				    off >= (uint64_t)set->dev[t]->nr_clusters * SL_CLUSTER ||
				    refs[t][off]++ == 0xff) {
					snprintf(msg, len, "P1: region %d page %llu has bad swap entry %llu", r,
						 (unsigned long long)i, (unsigned long long)e);
					rc = -1;
					break;
				}
				if (p->rmap && set->dev[t]->rmap &&
				    sl_rmap_pte(set->dev[t], off) != &rg->pte[i]) {
					snprintf(msg, len, "R2: region %d page %llu holds slot %llu, "
						 "the reverse map does not name it", r,
						 (unsigned long long)i, (unsigned long long)e);
					rc = -1;
					break;
				}
			} else if (is_present(pte)) {
				uint32_t id = (uint32_t)pte_val(pte);
				if (id >= p->nf || !p->f[id].live) {
					snprintf(msg, len, "P2: region %d page %llu maps dead folio %u", r,
						 (unsigned long long)i, id);
					rc = -1;
					break;
				}
				maps[id]++;
			}
		}
	}
	if (p->swc && !rc)
		rc = swc_check(p, refs, msg, len);
	for (int t = 0; t < set->nr && !rc; t++) {
		const sl_device *d = set->dev[t];
		uint64_t slots = (uint64_t)d->nr_clusters * SL_CLUSTER;
		for (uint64_t s = 0; s < slots && !rc; s++) {
			uint8_t m = d->map[s];
			unsigned cnt = (m == SL_SLOT_BAD) ? 0 : (m & SL_SLOT_COUNT_MASK);
			if (exclusive ? cnt != refs[t][s] : cnt < refs[t][s]) {
				snprintf(msg, len, "P1: slot %llu has count %u but %u swap PTEs",
					 (unsigned long long)sl_entry(t, s), cnt, refs[t][s]);
				rc = -1;
			}
		}
	}
	for (uint32_t id = 1; id < p->nf && !rc; id++) {
		if (p->f[id].live && p->f[id].mapped != maps[id]) {
			snprintf(msg, len, "P2: folio %u records %u mappings, PTEs show %u", id,
				 p->f[id].mapped, maps[id]);
			rc = -1;
		}
	}
out:
	for (int t = 0; t < set->nr; t++)
		free(refs[t]);
	free(maps);
	return rc;
}
