/*
 * reclaim.c - reclaim under a memory limit (docs/reclaim.md, which states
 * each rule with its evidence): one cgroup v1 memory group, the classic
 * two-list anon LRU of Linux 6.18 (MGLRU off), direct reclaim when a charge
 * would pass the limit; and the runner of the reclaim workloads (rwl.h).
 *
 * The group learns of folios through the process model's hooks
 * (sl_proc_hooks): a charge before every fault's folio, mapped / freed /
 * split as folios come and go. It reclaims by handing a folio back to the
 * process model (sl_proc_reclaim_folio), whose MADV_PAGEOUT path already
 * does folio_alloc_swap by order, the split and order-0 retry, and the
 * write-out; what stays resident comes back through the hooks.
 *
 * Kernel functions modelled (6.18): try_charge_memcg, consume_stock,
 * refill_stock, drain_all_stock (mm/memcontrol.c);
 * try_to_free_mem_cgroup_pages, do_try_to_free_pages, shrink_lruvec,
 * get_scan_count, calculate_pressure_balance, shrink_list,
 * shrink_active_list, shrink_inactive_list, isolate_lru_folios,
 * shrink_folio_list, folio_check_references, inactive_is_low,
 * lru_note_cost, move_folios_to_lru's aging (mm/vmscan.c); folio_add_lru,
 * lru_add, lru_add_drain (mm/swap.c); workingset_eviction,
 * workingset_refault, workingset_test_recent (mm/workingset.c).
 */
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <time.h>
#include "swaplab/reclaim.h"
#include "swaplab/debug.h"
#include "swaplab/fiber.h"

#define SWAP_CLUSTER_MAX 32u
#define DEF_PRIORITY 12
#define MEMCG_CHARGE_BATCH 64u
#define MAX_RECLAIM_RETRIES 16
#define FOLIO_BATCH_SIZE 31u
#define SWAPPINESS 60
#define MAX_SWAPPINESS 200
#define PAGE_ALLOC_COSTLY_ORDER 3

enum { L_NONE = 0, L_INACTIVE = 1, L_ACTIVE = 2, L_ISOLATED = 3, L_BATCH = 4 };
#define SENT_PROC UINT32_MAX

typedef struct lnode {
	uint64_t prev, next;       /* handles: slot << 32 | folio id */
	uint32_t nr;               /* pages charged for it, 0: not tracked */
	uint8_t list;              /* L_* */
	uint8_t referenced;        /* PG_referenced */
	uint8_t active;            /* PG_active on its way to the LRU (a refault, R11) */
	uint8_t workingset;        /* PG_workingset: deactivated once, or restored (R11) */
} lnode;

typedef struct mproc {
	sl_memcg *m;
	sl_proc *p;
	uint32_t slot;
	int cpu;
	lnode *node;               /* by folio id */
	uint64_t cap;
} mproc;

struct sl_memcg {
	const sl_swapset *s;       /* the swap devices (can_reclaim_anon_pages) */
	uint64_t limit, usage;
	int nr_cpus;
	int cpu;                   /* the running task's CPU */
	uint64_t *stock;           /* [cpu] memcg_stock: pages charged ahead */
	uint32_t *objstock;        /* [cpu] obj_stock: bytes of slab charged ahead */
	uint8_t *objown;           /* [cpu] the obj_stock caches the group's objcg */
	uint32_t objpool;          /* the objcg's nr_charged_bytes */
	uint64_t *batch;           /* [cpu][FOLIO_BATCH_SIZE] lru_add folio batches */
	uint32_t *nbatch;
	mproc **proc;              /* by slot */
	uint32_t nproc, pcap;
	lnode sent[2];             /* list heads: inactive, active */
	uint64_t lru_pages[2];
	uint64_t lru_folios[2];
	uint64_t anon_cost;        /* lruvec->anon_cost */
	/* workingset detection (mm/workingset.c, R11) */
	uint64_t nonresident_age;  /* lruvec->nonresident_age: evictions and refault activations */
	uint64_t refaults;         /* lruvec->refaults[WORKINGSET_ANON]: activations at the
				      last reclaim's end (snapshot_refaults()) */
	uint8_t ref_active, ref_ws;/* the refault just evaluated: the folio mapped next
				      is PG_active / PG_workingset */
	uint8_t split_ws;          /* inside a split: the old folio's PG_workingset */
	uint64_t kmem;             /* kernel pages charged: page tables, slab */
	int splitting;             /* inside a split: mapped re-charges pages */
	uint64_t *born;            /* folios created while one folio was reclaimed */
	uint32_t nborn, reclaiming;
	sl_memcg_state st;
	/* two processes at once (sl_rrun_window; docs/reclaim.md "Two processes
	 * at once"): NULL yield, none of this is used */
	void (*yield)(void *ctx);  /* lets the other CPUs act up to this CPU's clock */
	void *yctx;
	double *pend;              /* [cpu] ns of reclaim work not yet on its clock */
	uint32_t *inreclaim;       /* [cpu] inside try_to_free_mem_cgroup_pages() */
	uint64_t overlapped;       /* reclaims begun while another CPU was in one */
};

static uint64_t H(uint32_t slot, uint32_t id) { return (uint64_t)slot << 32 | id; }
static uint64_t SENT(int list) { return H(SENT_PROC, (uint32_t)list - 1); }

static lnode *N(sl_memcg *m, uint64_t h)
{
	uint32_t slot = (uint32_t)(h >> 32);
	return slot == SENT_PROC ? &m->sent[(uint32_t)h] : &m->proc[slot]->node[(uint32_t)h];
}

static void lru_del(sl_memcg *m, uint64_t h)
{
	lnode *n = N(m, h);
	int l = n->list;

	SL_ASSERT(l == L_INACTIVE || l == L_ACTIVE);
	N(m, n->prev)->next = n->next;
	N(m, n->next)->prev = n->prev;
	m->lru_pages[l - 1] -= n->nr;
	m->lru_folios[l - 1]--;
	n->list = L_NONE;
}

/* lruvec_add_folio(): at the head of the list */
static void lru_add_head(sl_memcg *m, int l, uint64_t h)
{
	lnode *n = N(m, h), *s = &m->sent[l - 1];
	uint64_t sh = SENT(l);

	n->prev = sh;
	n->next = s->next;
	N(m, s->next)->prev = h;
	s->next = h;
	n->list = (uint8_t)l;
	m->lru_pages[l - 1] += n->nr;
	m->lru_folios[l - 1]++;
}

sl_memcg *sl_memcg_create(uint64_t limit_pages, int nr_cpus, const sl_swapset *s)
{
	sl_memcg *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	m->s = s;
	m->limit = limit_pages;
	m->nr_cpus = nr_cpus;
	m->stock = calloc((size_t)nr_cpus, sizeof(uint64_t));
	m->batch = calloc((size_t)nr_cpus * FOLIO_BATCH_SIZE, sizeof(uint64_t));
	m->nbatch = calloc((size_t)nr_cpus, sizeof(uint32_t));
	m->objstock = calloc((size_t)nr_cpus, sizeof(uint32_t));
	m->objown = calloc((size_t)nr_cpus, 1);
	m->born = calloc(SL_CLUSTER + 2, sizeof(uint64_t));
	if (!m->stock || !m->batch || !m->nbatch || !m->objstock || !m->objown || !m->born) {
		sl_memcg_destroy(m);
		return NULL;
	}
	for (int l = 0; l < 2; l++)
		m->sent[l].prev = m->sent[l].next = SENT(l + 1);
	return m;
}

void sl_memcg_destroy(sl_memcg *m)
{
	if (!m)
		return;
	for (uint32_t i = 0; i < m->nproc; i++)
		if (m->proc[i]) {
			free(m->proc[i]->node);
			free(m->proc[i]);
		}
	free(m->proc);
	free(m->stock);
	free(m->batch);
	free(m->nbatch);
	free(m->objstock);
	free(m->objown);
	free(m->born);
	free(m->pend);
	free(m->inreclaim);
	free(m);
}

void sl_memcg_set_cpu(sl_memcg *m, int cpu) { m->cpu = cpu; }

/* ------------------------------------------------- two processes at once */

/* The runner's clock (sl_rrun_window): ns of system time per event, the
 * calibrated 6.18 coefficients rounded (docs/data/cost-calibration-6.18.json;
 * docs/reclaim.md "Two processes at once"). Fixed here, so that the counts
 * of a run never depend on a --cost file. */
#define CLK_SCAN_PAGE 60.0      /* a page isolated */
#define CLK_REF_FOLIO 500.0     /* folio_referenced(): the rmap walk */
#define CLK_SWPOUT_FOLIO 5400.0 /* unmap, swap cache, slot, write, free */
#define CLK_SWPOUT_PAGE 0.0     /* compression: the fit gave no per-page term */

int sl_memcg_set_yield(sl_memcg *m, void (*yield)(void *ctx), void *ctx)
{
	if (!m->pend) {
		m->pend = calloc((size_t)m->nr_cpus, sizeof(double));
		m->inreclaim = calloc((size_t)m->nr_cpus, sizeof(uint32_t));
		if (!m->pend || !m->inreclaim)
			return -1;
	}
	m->yield = yield;
	m->yctx = ctx;
	return 0;
}

double sl_memcg_take_pending(sl_memcg *m, int cpu)
{
	double ns = m->pend ? m->pend[cpu] : 0;

	if (m->pend)
		m->pend[cpu] = 0;
	return ns;
}

uint64_t sl_memcg_overlapped(const sl_memcg *m) { return m->overlapped; }

/* A step of reclaim, where the other CPUs act on the group meanwhile: the
 * runner advances this CPU's clock and runs whichever CPU is behind it. */
static inline void mc_yield(sl_memcg *m)
{
	if (m->yield)
		m->yield(m->yctx);
}

/* ---------------------------------------------------------------- charge */

/* drain_stock() - 6.18: the CPU's charged-ahead pages go back. */
static void drain_stock(sl_memcg *m, int cpu)
{
	m->usage -= m->stock[cpu];
	m->stock[cpu] = 0;
}

/* refill_stock() - 6.18: a charge's surplus kept for the CPU's next
 * charges; a stock above one batch is drained whole. */
static void refill_stock(sl_memcg *m, int cpu, uint64_t nr)
{
	m->stock[cpu] += nr;
	if (m->stock[cpu] > MEMCG_CHARGE_BATCH)
		drain_stock(m, cpu);
}

static uint64_t margin(const sl_memcg *m) { return m->usage < m->limit ? m->limit - m->usage : 0; }

static uint64_t try_to_free_mem_cgroup_pages(sl_memcg *m, uint64_t nr);

/* try_charge_memcg() - 6.18 for one group with no memsw counter (cgroup
 * v1's memory.limit_in_bytes alone): the CPU's stock first; else a batch
 * of 64 pages, or just nr; over the limit, a caller that may not block
 * (a large folio's THP gfp without MADV_HUGEPAGE) fails, others reclaim and
 * retry, drain every stock once, and after MAX_RECLAIM_RETRIES fruitless
 * rounds go past the limit (the OOM killer, counted, not modelled). */
static int try_charge_memcg(sl_memcg *m, uint64_t nr, int may_reclaim)
{
	uint64_t batch = nr > MEMCG_CHARGE_BATCH ? nr : MEMCG_CHARGE_BATCH;
	int retries = MAX_RECLAIM_RETRIES, drained = 0;

	for (;;) {
		if (nr <= MEMCG_CHARGE_BATCH && m->stock[m->cpu] >= nr) {
			m->stock[m->cpu] -= nr; /* consume_stock() */
			return 0;
		}
		if (m->usage + batch <= m->limit) {
			m->usage += batch;
			if (batch > nr)
				refill_stock(m, m->cpu, batch - nr);
			return 0;
		}
		if (batch > nr) {
			batch = nr;
			continue;
		}
		if (!may_reclaim)
			return -1;
		uint64_t got = try_to_free_mem_cgroup_pages(m, nr);
		if (margin(m) >= nr)
			continue;
		if (!drained) {
			for (int c = 0; c < m->nr_cpus; c++) {
				drain_stock(m, c);
				sl_memcg_obj_stock_foreign(m, c);
			}
			drained = 1;
			continue;
		}
		if (got && nr <= (1u << PAGE_ALLOC_COSTLY_ORDER))
			continue;
		if (retries-- > 0)
			continue;
		m->st.oom++;
		m->usage += nr;
		return 0;
	}
}

/* ---------------------------------------------------------------- hooks */

static void lru_add_drain(sl_memcg *m);

/* lru_add() - 6.18: a folio leaving the CPU's batch goes to the head of
 * the inactive list, or of the active one with PG_active (a refault the
 * workingset activated, R11). */
static void lru_add(sl_memcg *m, uint64_t h)
{
	lnode *n = N(m, h);
	int l = n->active ? L_ACTIVE : L_INACTIVE;

	n->active = 0;
	lru_add_head(m, l, h);
}

/* folio_add_lru() - 6.18: a small folio waits in the CPU's batch; a large
 * one joins the batch and moves it onto the LRU at once
 * (folio_batch_add_and_move(): !folio_may_be_lru_cached()), so the small
 * folios waiting there go on before it, in order (kernel-findings F15);
 * so does the batch's last place. */
static void folio_add_lru(sl_memcg *m, uint64_t h)
{
	lnode *n = N(m, h);
	int c = m->cpu;

	if (n->nr > 1) {
		lru_add_drain(m);
		lru_add(m, h);
		return;
	}
	n->list = L_BATCH;
	m->batch[(size_t)c * FOLIO_BATCH_SIZE + m->nbatch[c]++] = h;
	if (m->nbatch[c] == FOLIO_BATCH_SIZE) {
		for (uint32_t i = 0; i < FOLIO_BATCH_SIZE; i++)
			lru_add(m, m->batch[(size_t)c * FOLIO_BATCH_SIZE + i]);
		m->nbatch[c] = 0;
	}
}

/* lru_add_drain() - 6.18: the current CPU's batch onto the LRU. */
static void lru_add_drain(sl_memcg *m)
{
	int c = m->cpu;

	for (uint32_t i = 0; i < m->nbatch[c]; i++)
		lru_add(m, m->batch[(size_t)c * FOLIO_BATCH_SIZE + i]);
	m->nbatch[c] = 0;
}

void sl_memcg_lru_add_drain(sl_memcg *m) { lru_add_drain(m); }

/* A folio leaving a batch before it reached the LRU (freed meanwhile). */
static void batch_remove(sl_memcg *m, uint64_t h)
{
	for (int c = 0; c < m->nr_cpus; c++) {
		uint64_t *b = m->batch + (size_t)c * FOLIO_BATCH_SIZE;
		for (uint32_t i = 0; i < m->nbatch[c]; i++)
			if (b[i] == h) {
				memmove(b + i, b + i + 1, (m->nbatch[c] - i - 1) * sizeof(*b));
				m->nbatch[c]--;
				return;
			}
	}
	SL_ASSERT(0);
}

/* Takes a tracked folio off whatever holds it. */
static void untrack(sl_memcg *m, uint64_t h)
{
	lnode *n = N(m, h);

	if (n->list == L_INACTIVE || n->list == L_ACTIVE)
		lru_del(m, h);
	else if (n->list == L_BATCH)
		batch_remove(m, h);
	n->list = L_NONE;
	n->nr = 0;
	n->referenced = 0;
	n->active = 0;
	n->workingset = 0;
}

/* A large folio's failed charge is counted as the kernel counts it: a
 * swap-in's (swpin_fallback_charge) or a new folio's
 * (anon_fault_fallback_charge). */
static int hk_charge(void *ctx, sl_proc *p, int order)
{
	mproc *mp = ctx;
	if (try_charge_memcg(mp->m, UINT64_C(1) << order, order == 0)) {
		if (sl_proc_charging_swapin(p))
			mp->m->st.swpin_fallback_charge[order]++;
		else
			mp->m->st.charge_fallback[order]++;
		return -1;
	}
	return 0;
}

static void hk_mapped(void *ctx, sl_proc *p, uint32_t id, int order)
{
	mproc *mp = ctx;
	sl_memcg *m = mp->m;
	uint64_t h = H(mp->slot, id);
	lnode *n = &mp->node[id];
	(void)p;

	SL_ASSERT(id < mp->cap && n->nr == 0);
	n->nr = 1u << order;
	n->referenced = 0;
	/* a split's pages keep the folio's PG_workingset; a refault's folio
	 * takes what workingset_refault() gave it */
	n->active = m->ref_active;
	n->workingset = m->splitting ? m->split_ws : m->ref_ws;
	m->ref_active = m->ref_ws = 0;
	if (m->splitting)
		m->usage += n->nr; /* a page of a split folio keeps its charge */
	if (m->reclaiming) {
		/* split off while its folio is reclaimed: on the reclaim list */
		n->list = L_ISOLATED;
		m->born[m->nborn++] = h;
		return;
	}
	folio_add_lru(m, h);
}

static void hk_freed(void *ctx, sl_proc *p, uint32_t id)
{
	mproc *mp = ctx;
	lnode *n = &mp->node[id];
	(void)p;

	if (!n->nr)
		return; /* split: already uncharged */
	mp->m->usage -= n->nr;
	untrack(mp->m, H(mp->slot, id));
}

static void hk_split(void *ctx, sl_proc *p, uint32_t v, int start)
{
	mproc *mp = ctx;
	sl_memcg *m = mp->m;
	(void)p;

	if (start) {
		/* __folio_split(): the old folio goes; its pages come back as
		 * order-0 folios (mapped) or to the zero page (uncharged) */
		m->usage -= mp->node[v].nr;
		m->split_ws = mp->node[v].workingset;
		untrack(m, H(mp->slot, v));
		m->splitting = 1;
	} else {
		m->splitting = 0;
	}
}

/* lru_add_drain() after swap readahead, or before a write fault maps a
 * swap-cache folio still in the CPU's batch (do_swap_page() - 6.18). */
static void hk_drain(void *ctx, sl_proc *p, uint32_t id)
{
	mproc *mp = ctx;
	(void)p;

	if (!id || mp->node[id].list == L_BATCH)
		lru_add_drain(mp->m);
}

/* Shadows (R11). 30 bits of age, as EVICTION_MASK's modular distance; the
 * top bit marks a shadow (0 is none); bit 0 is PG_workingset. */
#define SHADOW_PRESENT (UINT32_C(1) << 31)
#define AGE_MASK ((UINT64_C(1) << 30) - 1)

/* workingset_eviction() - 6.18 (mm/workingset.c): the shadow of a folio
 * the group's reclaim evicts holds the group's nonresident age before it
 * and its PG_workingset; the age then grows by its pages. */
static uint32_t hk_evicted(void *ctx, sl_proc *p, uint32_t id)
{
	mproc *mp = ctx;
	sl_memcg *m = mp->m;
	const lnode *n = &mp->node[id];
	uint32_t sh = SHADOW_PRESENT | (uint32_t)(m->nonresident_age & AGE_MASK) << 1 | n->workingset;
	(void)p;

	m->nonresident_age += n->nr;
	return sh;
}

static void lru_note_cost(sl_memcg *m, uint64_t nr_io, uint64_t nr_rotated);

/* workingset_refault() + workingset_test_recent() - 6.18 (classic LRU):
 * the refault distance, the age now less the shadow's, against the
 * workingset size, the group's active anon pages while swap has a free
 * slot (its file lists are empty); within it the folio is activated
 * (PG_active before folio_add_lru()) and the age grows by its pages; a
 * shadow with PG_workingset restores it and notes the refault as anon
 * reclaim cost (lru_note_cost_refault()). The kernel reads the list sizes
 * from the group's statistics as of their last flush; the model's are
 * exact (kernel-findings F28). */
static void hk_refault(void *ctx, sl_proc *p, uint32_t shadow, int order)
{
	mproc *mp = ctx;
	sl_memcg *m = mp->m;
	uint64_t nr = UINT64_C(1) << order, eviction = (shadow >> 1) & AGE_MASK;
	uint64_t distance = (m->nonresident_age - eviction) & AGE_MASK;
	uint64_t wss = sl_nr_swap_pages(m->s->dev[0]) ? m->lru_pages[1] : 0;
	(void)p;

	m->st.ws_refault += nr;
	if (distance > wss)
		return;
	m->ref_active = 1;
	m->nonresident_age += nr;
	m->st.ws_activate += nr;
	if (shadow & 1) {
		m->ref_ws = 1;
		lru_note_cost(m, nr, 0);
		m->st.ws_restore += nr;
	}
}

static const sl_proc_hooks memcg_hooks = {
	.charge = hk_charge, .mapped = hk_mapped, .freed = hk_freed, .split = hk_split,
	.drain = hk_drain, .evicted = hk_evicted, .refault = hk_refault,
};

/* __memcg_kmem_charge_page() - 6.18: a __GFP_ACCOUNT page (a page table:
 * GFP_PGTABLE_USER) charges the group through try_charge_memcg() with
 * GFP_KERNEL, which may reclaim; it is on no LRU. */
void sl_memcg_charge_kmem(sl_memcg *m, uint64_t nr)
{
	try_charge_memcg(m, nr, 1);
	m->kmem += nr;
}

/* __memcg_kmem_uncharge_page() - 6.18: obj_cgroup_uncharge_pages() puts a
 * freed kernel page's charge into the freeing CPU's stock (refill_stock()),
 * not back to the counter; a stock past one batch is drained whole. */
void sl_memcg_uncharge_kmem(sl_memcg *m, uint64_t nr)
{
	SL_ASSERT(m->kmem >= nr);
	m->kmem -= nr;
	refill_stock(m, m->cpu, nr);
}

/* refill_obj_stock() - 6.18: freed bytes, or a fresh page's rest, go into
 * the CPU's obj_stock. A stock that caches another objcg is drained first
 * (drain_obj_stock()) and takes over whatever the group's objcg holds in
 * nr_charged_bytes; a free, or a refill that switched the stock, returns
 * the whole pages beyond one (obj_cgroup_uncharge_pages(): into the CPU's
 * memcg_stock). */
static void refill_obj_stock(sl_memcg *m, uint32_t nr, int allow_uncharge)
{
	uint32_t *b = &m->objstock[m->cpu];

	if (!m->objown[m->cpu]) {
		m->objown[m->cpu] = 1;
		*b = m->objpool;
		m->objpool = 0;
		allow_uncharge = 1;
	}
	*b += nr;
	if (allow_uncharge && *b > SL_PAGE_SIZE) {
		uint32_t pages = *b / SL_PAGE_SIZE;
		*b %= SL_PAGE_SIZE;
		SL_ASSERT(m->kmem >= pages);
		m->kmem -= pages;
		refill_stock(m, m->cpu, pages);
	}
}

/* Slab objects of a SLAB_ACCOUNT cache (vm_area_struct, anon_vma,
 * anon_vma_chain), 6.18: obj_cgroup_charge() takes the bytes from the
 * CPU's obj_stock if it caches the group's objcg and holds enough
 * (consume_obj_stock()); otherwise obj_cgroup_charge_pages() charges one
 * page through try_charge_memcg() (GFP_KERNEL_ACCOUNT: may reclaim) and the
 * page's rest is refilled. Frees go back through refill_obj_stock() on the
 * freeing CPU (C6). */
void sl_memcg_slab_alloc(sl_memcg *m, uint32_t bytes)
{
	uint32_t *b = &m->objstock[m->cpu];

	SL_ASSERT(bytes <= SL_PAGE_SIZE);
	if (m->objown[m->cpu] && *b >= bytes) {
		*b -= bytes;
		return;
	}
	sl_memcg_charge_kmem(m, 1);
	refill_obj_stock(m, SL_PAGE_SIZE - bytes, 0);
}

void sl_memcg_slab_free(sl_memcg *m, uint32_t bytes)
{
	refill_obj_stock(m, bytes, 1);
}

/* drain_obj_stock() - 6.18: another objcg's slab activity on the CPU (the
 * harness's own, charged to the memcg it runs in), or drain_all_stock(),
 * drains the CPU's obj_stock of the group's bytes: the whole pages are
 * uncharged from the counter at once (memcg_uncharge()), the rest is added
 * to the objcg's nr_charged_bytes, which the next stock to cache the
 * group's objcg, on any CPU, takes over (C7). */
void sl_memcg_obj_stock_foreign(sl_memcg *m, int cpu)
{
	uint32_t *b = &m->objstock[cpu], pages;

	if (!m->objown[cpu])
		return;
	pages = *b / SL_PAGE_SIZE;
	SL_ASSERT(m->kmem >= pages && m->usage >= pages);
	m->kmem -= pages;
	m->usage -= pages;
	m->objpool += *b % SL_PAGE_SIZE;
	*b = 0;
	m->objown[cpu] = 0;
}

int sl_memcg_attach(sl_memcg *m, sl_proc *p, int cpu)
{
	mproc *mp = calloc(1, sizeof(*mp));

	if (!mp)
		return -1;
	mp->cap = sl_proc_npages(p) + 2; /* folio ids stay below pages + 2 */
	mp->node = calloc(mp->cap, sizeof(lnode));
	if (m->nproc == m->pcap) {
		uint32_t nc = m->pcap ? 2 * m->pcap : 16;
		mproc **np = realloc(m->proc, nc * sizeof(*np));
		if (!np)
			goto fail;
		m->proc = np;
		m->pcap = nc;
	}
	if (!mp->node || sl_proc_set_hooks(p, &memcg_hooks, mp))
		goto fail;
	mp->m = m;
	mp->p = p;
	mp->cpu = cpu;
	mp->slot = m->nproc;
	m->proc[m->nproc++] = mp;
	return 0;
fail:
	free(mp->node);
	free(mp);
	return -1;
}

static mproc *find(const sl_memcg *m, const sl_proc *p)
{
	for (uint32_t i = m->nproc; i-- > 0;)
		if (m->proc[i] && m->proc[i]->p == p)
			return m->proc[i];
	return NULL;
}

void sl_memcg_detach(sl_memcg *m, sl_proc *p)
{
	mproc *mp = find(m, p);

	if (!mp)
		return;
	for (uint64_t id = 0; id < mp->cap; id++)
		if (mp->node[id].nr) {
			m->usage -= mp->node[id].nr;
			untrack(m, H(mp->slot, (uint32_t)id));
		}
	m->proc[mp->slot] = NULL;
	free(mp->node);
	free(mp);
}

/* ---------------------------------------------------------------- reclaim */

typedef struct scan_control {
	uint64_t nr_to_reclaim, nr_reclaimed;
	int priority;
	int may_deactivate, force_deactivate, skipped_deactivate;
} scan_control;

/* inactive_is_low() - 6.18: inactive * ratio < active, the ratio
 * int_sqrt(10 * GiB of both lists), at least 1. */
static int inactive_is_low(const sl_memcg *m)
{
	uint64_t inactive = m->lru_pages[0], active = m->lru_pages[1];
	uint64_t gb = (inactive + active) >> 18, ratio = 1;

	if (gb) {
		uint64_t x = 10 * gb, r = 0;
		while ((r + 1) * (r + 1) <= x)
			r++;
		ratio = r;
	}
	return inactive * ratio < active;
}

/* lru_note_cost() - 6.18: anon reclaim cost, written pages weighted by
 * SWAP_CLUSTER_MAX plus rotated ones; halved once it passes a quarter of
 * the LRU pages. */
static void lru_note_cost(sl_memcg *m, uint64_t nr_io, uint64_t nr_rotated)
{
	m->anon_cost += nr_io * SWAP_CLUSTER_MAX + nr_rotated;
	if (m->anon_cost > (m->lru_pages[0] + m->lru_pages[1]) / 4)
		m->anon_cost /= 2;
}

/* isolate_lru_folios() - 6.18: folios off the list's tail, whole, until
 * nr_to_scan pages were scanned; returns how many, pages in *scanned. */
static uint32_t isolate_lru_folios(sl_memcg *m, int l, uint64_t nr_to_scan, uint64_t *out,
				   uint64_t *scanned)
{
	uint32_t n = 0;
	uint64_t scan = 0;

	while (scan < nr_to_scan && m->sent[l - 1].prev != SENT(l)) {
		uint64_t h = m->sent[l - 1].prev;
		scan += N(m, h)->nr;
		lru_del(m, h);
		N(m, h)->list = L_ISOLATED;
		out[n++] = h;
	}
	*scanned = scan;
	return n;
}

/* shrink_active_list() - 6.18: every isolated anon folio is deactivated
 * (its accessed bits read and cleared by folio_referenced(), which keeps
 * only executable file folios active), to the inactive head in order. */
static void shrink_active_list(sl_memcg *m, uint64_t nr_to_scan)
{
	uint64_t hold[SWAP_CLUSTER_MAX], scanned;
	uint32_t n;

	lru_add_drain(m);
	mc_yield(m);
	n = isolate_lru_folios(m, L_ACTIVE, nr_to_scan, hold, &scanned);
	m->st.pgrefill += scanned;
	if (m->yield)
		m->pend[m->cpu] += CLK_SCAN_PAGE * (double)scanned + CLK_REF_FOLIO * n;
	for (uint32_t i = 0; i < n; i++) {
		mproc *mp = m->proc[hold[i] >> 32];
		sl_proc_folio_referenced(mp->p, (uint32_t)hold[i]);
		N(m, hold[i])->workingset = 1; /* folio_set_workingset() */
		lru_add_head(m, L_INACTIVE, hold[i]);
		m->st.pgdeactivate += N(m, hold[i])->nr;
	}
}

enum { FOLIOREF_RECLAIM, FOLIOREF_KEEP, FOLIOREF_ACTIVATE };

/* folio_check_references() - 6.18 for a mapped anon folio: a young
 * mapping sets PG_referenced; with PG_referenced already set it activates,
 * else the folio is kept for another trip; none reclaims. folio_referenced()
 * counts mappings (VMAs) with a young PTE, not young PTEs: the process
 * model's folio has one, so a large folio written whole counts 1 like a
 * small one (docs/kernel-findings.md F12). */
static int folio_check_references(sl_memcg *m, uint64_t h)
{
	mproc *mp = m->proc[h >> 32];
	lnode *n = N(m, h);
	uint32_t young = sl_proc_folio_referenced(mp->p, (uint32_t)h);
	int was = n->referenced;

	n->referenced = 0;
	if (young) {
		n->referenced = 1;
		return was ? FOLIOREF_ACTIVATE : FOLIOREF_KEEP;
	}
	return FOLIOREF_RECLAIM;
}

/* shrink_folio_list() - 6.18 for isolated anon folios, in list order:
 * references first; a folio to reclaim is swapped out by the process model
 * (by order, split and order-0 retry on failure, from this CPU); written
 * folios leave the swap cache and are freed at once (synchronous write);
 * what could not get a slot is activated (activate_locked); the survivors
 * go back to the heads of their lists in order. Returns pages freed. */
static uint64_t shrink_folio_list(sl_memcg *m, const uint64_t *list, uint32_t n,
				  uint64_t *nr_pageout)
{
	uint64_t freed = 0, activated = 0;
	const int conc = m->yield != NULL; /* two processes at once */

	for (uint32_t i = 0; i < n; i++) {
		uint64_t h = list[i];
		lnode *nd = N(m, h);
		if (conc) {
			if (i)
				mc_yield(m); /* cond_resched() between folios */
			m->pend[m->cpu] += CLK_REF_FOLIO;
		}
		int ref = folio_check_references(m, h);
		if (ref == FOLIOREF_ACTIVATE) {
			sl_proc_activate_swapcache(m->proc[h >> 32]->p, (uint32_t)h);
			lru_add_head(m, L_ACTIVE, h);
			m->st.pgactivate += nd->nr;
			activated += nd->nr;
			continue;
		}
		if (ref == FOLIOREF_KEEP) {
			lru_add_head(m, L_INACTIVE, h);
			continue;
		}
		mproc *mp = m->proc[h >> 32];
		uint64_t before = m->usage, clean;
		m->nborn = 0;
		m->born[m->nborn++] = h;
		m->reclaiming = 1;
		clean = sl_proc_reclaim_folio(mp->p, (uint32_t)h, m->cpu);
		m->reclaiming = 0;
		/* pages whose folio got no slot stay resident: activate_locked */
		for (uint32_t j = 0; j < m->nborn; j++) {
			lnode *b = N(m, m->born[j]);
			if (b->nr && b->list == L_ISOLATED) {
				lru_add_head(m, L_ACTIVE, m->born[j]);
				m->st.pgactivate += b->nr;
				activated += b->nr;
			}
		}
		uint64_t got = before - m->usage;
		freed += got;
		/* a clean swap-cache folio is freed without pageout() */
		*nr_pageout += got - clean;
		/* uncharged already, folio by folio: on cgroup v1 (the harness's
		 * memory.limit_in_bytes, with memsw accounting) __remove_mapping()
		 * calls memcg1_swapout() (mm/memcontrol-v1.c - 6.18), which
		 * uncharges the swapped-out folio's pages from the group's memory
		 * counter at once; mem_cgroup_uncharge_folios() at the end of the
		 * folio batch finds nothing left to uncharge (kernel-findings F24) */
		if (conc && got)
			m->pend[m->cpu] += CLK_SWPOUT_FOLIO + CLK_SWPOUT_PAGE * (double)got;
	}
	/* move_folios_to_lru() - 6.18: a folio put back active ages the
	 * non-resident entries (workingset_age_nonresident(), R11) */
	m->nonresident_age += activated;
	return freed;
}

/* shrink_inactive_list() - 6.18 */
static uint64_t shrink_inactive_list(sl_memcg *m, uint64_t nr_to_scan)
{
	uint64_t hold[SWAP_CLUSTER_MAX], scanned, pageout = 0, got;
	uint32_t n;

	lru_add_drain(m);
	mc_yield(m);
	n = isolate_lru_folios(m, L_INACTIVE, nr_to_scan, hold, &scanned);
	m->st.pgscan += scanned;
	if (m->yield)
		m->pend[m->cpu] += CLK_SCAN_PAGE * (double)scanned;
	got = shrink_folio_list(m, hold, n, &pageout);
	m->st.pgsteal += got;
	lru_note_cost(m, pageout, scanned > got ? scanned - got : 0);
	return got;
}

/* get_scan_count() - 6.18 for a group whose LRU holds anon folios only:
 * nothing while no swap slot is free (can_reclaim_anon_pages()); at
 * priority 0 each list's size (SCAN_EQUAL); else size >> priority scaled by
 * the anon share of calculate_pressure_balance() at swappiness 60, with no
 * file cost (SCAN_FRACT). */
static void get_scan_count(const sl_memcg *m, const scan_control *sc, uint64_t nr[2])
{
	uint64_t total = m->anon_cost, anon_cost = total + m->anon_cost, file_cost = total;
	uint64_t ap, fp;

	total = anon_cost + file_cost;
	ap = SWAPPINESS * (total + 1) / (anon_cost + 1);
	fp = (MAX_SWAPPINESS - SWAPPINESS) * (total + 1) / (file_cost + 1);
	for (int l = 0; l < 2; l++) {
		uint64_t scan = m->lru_pages[l] >> sc->priority;
		if (!sl_nr_swap_pages(m->s->dev[0]))
			scan = 0;
		else if (sc->priority)
			scan = scan * ap / (ap + fp);
		nr[l] = scan;
	}
}

/* shrink_lruvec() - 6.18: the inactive and active lists in turns of at most
 * SWAP_CLUSTER_MAX pages while the inactive target lasts (what is left of
 * the active one is dropped) or until enough was reclaimed; then one batch
 * deactivated if the inactive list is low. Inlined by force: with the test
 * entry as a second caller the compiler stopped inlining it into
 * do_try_to_free_pages() (+0.5 % instructions on a kbuild-v5 run). */
static inline __attribute__((always_inline)) void shrink_lruvec(sl_memcg *m, scan_control *sc)
{
	uint64_t nr[2], reclaimed = 0;

	get_scan_count(m, sc, nr);
	while (nr[0]) {
		for (int l = 0; l < 2; l++) {
			if (!nr[l])
				continue;
			uint64_t k = nr[l] < SWAP_CLUSTER_MAX ? nr[l] : SWAP_CLUSTER_MAX;
			nr[l] -= k;
			if (l == 0)
				reclaimed += shrink_inactive_list(m, k);
			else if (sc->may_deactivate)
				shrink_active_list(m, k); /* shrink_list() */
			else
				sc->skipped_deactivate = 1;
		}
		if (reclaimed >= sc->nr_to_reclaim)
			break;
	}
	sc->nr_reclaimed += reclaimed;
	if (inactive_is_low(m))
		shrink_active_list(m, SWAP_CLUSTER_MAX);
}

static uint64_t do_try_to_free_pages(sl_memcg *m, scan_control *scp);

/* try_to_free_mem_cgroup_pages() - 6.18: nr_to_reclaim max(nr,
 * SWAP_CLUSTER_MAX). With two processes at once, a reclaim begun while
 * another CPU's is under way counts as overlapped. */
static uint64_t try_to_free_mem_cgroup_pages(sl_memcg *m, uint64_t nr)
{
	scan_control sc = { .nr_to_reclaim = nr > SWAP_CLUSTER_MAX ? nr : SWAP_CLUSTER_MAX };
	uint64_t got;

	m->st.direct_reclaim++;
	if (!m->yield)
		return do_try_to_free_pages(m, &sc);
	for (int c = 0; c < m->nr_cpus; c++)
		if (c != m->cpu && m->inreclaim[c]) {
			m->overlapped++;
			break;
		}
	m->inreclaim[m->cpu]++;
	got = do_try_to_free_pages(m, &sc);
	m->inreclaim[m->cpu]--;
	return got;
}

/* do_try_to_free_pages() - 6.18: priorities 12 down to 0 until
 * nr_to_reclaim pages are reclaimed; the active list is deactivated when
 * the inactive one is low (prepare_scan_control()); nothing reclaimed with
 * deactivation skipped retries once with it forced. */
static uint64_t do_try_to_free_pages(sl_memcg *m, scan_control *scp)
{
	scan_control sc = *scp;

	for (;;) {
		for (sc.priority = DEF_PRIORITY; sc.priority >= 0; sc.priority--) {
			/* prepare_scan_control(): refaults activated since the
			 * last reclaim (R11), or a low inactive list */
			sc.may_deactivate = sc.force_deactivate || m->st.ws_activate != m->refaults ||
					    inactive_is_low(m);
			shrink_lruvec(m, &sc);
			if (sc.nr_reclaimed >= sc.nr_to_reclaim)
				break;
		}
		m->refaults = m->st.ws_activate; /* snapshot_refaults() */
		if (sc.nr_reclaimed || !sc.skipped_deactivate || sc.force_deactivate)
			return sc.nr_reclaimed;
		sc.force_deactivate = 1;
		sc.skipped_deactivate = 0;
	}
}

uint64_t sl_memcg_reclaim(sl_memcg *m, uint64_t nr) { return try_to_free_mem_cgroup_pages(m, nr); }
/* The steps for the tests, in pieces of at most SWAP_CLUSTER_MAX pages as
 * the kernel's callers ask (isolation holds at most that many folios). */
static uint64_t shrink_list_in_steps(sl_memcg *m, int active, uint64_t nr)
{
	uint64_t got = 0;
	do {
		uint64_t k = nr < SWAP_CLUSTER_MAX ? nr : SWAP_CLUSTER_MAX;
		if (active)
			shrink_active_list(m, k);
		else
			got += shrink_inactive_list(m, k);
		nr -= k;
	} while (nr);
	return got;
}

uint64_t sl_memcg_shrink_inactive_list(sl_memcg *m, uint64_t nr) { return shrink_list_in_steps(m, 0, nr); }
void sl_memcg_shrink_active_list(sl_memcg *m, uint64_t nr) { shrink_list_in_steps(m, 1, nr); }
uint64_t sl_memcg_shrink_lruvec(sl_memcg *m, int priority)
{
	scan_control sc = { .nr_to_reclaim = SWAP_CLUSTER_MAX, .priority = priority, .may_deactivate = 1 };
	shrink_lruvec(m, &sc);
	return sc.nr_reclaimed;
}

/* ---------------------------------------------------------------- state */

uint64_t sl_memcg_usage(const sl_memcg *m) { return m->usage; }

void sl_memcg_state_get(const sl_memcg *m, sl_memcg_state *st)
{
	*st = m->st;
	st->usage = m->usage;
	st->limit = m->limit;
	st->stock = 0;
	for (int c = 0; c < m->nr_cpus; c++)
		st->stock += m->stock[c];
	st->inactive = m->lru_pages[0];
	st->active = m->lru_pages[1];
	st->nr_inactive = m->lru_folios[0];
	st->nr_active = m->lru_folios[1];
	st->kmem = m->kmem;
}

int sl_memcg_lru_at(const sl_memcg *m, int active, uint64_t i, sl_proc **p, uint32_t *id)
{
	uint64_t h = m->sent[active ? 1 : 0].prev;

	while (h != SENT(active ? L_ACTIVE : L_INACTIVE)) {
		if (i-- == 0) {
			*p = m->proc[h >> 32]->p;
			*id = (uint32_t)h;
			return 1;
		}
		h = N((sl_memcg *)m, h)->prev;
	}
	return 0;
}

int sl_memcg_check(const sl_memcg *m, char *msg, size_t len)
{
	uint64_t pages[2] = { 0, 0 }, folios[2] = { 0, 0 }, tracked = 0, stock = 0;

	for (int l = 0; l < 2; l++)
		for (uint64_t h = m->sent[l].next; h != SENT(l + 1); h = N((sl_memcg *)m, h)->next) {
			const lnode *n = N((sl_memcg *)m, h);
			if (n->list != l + 1 || !n->nr)
				return snprintf(msg, len, "R1: a folio on LRU list %d is marked %d", l, n->list), -1;
			if (sl_proc_folio_order(m->proc[h >> 32]->p, (uint32_t)h) < 0)
				return snprintf(msg, len, "R1: a dead folio is on LRU list %d", l), -1;
			pages[l] += n->nr;
			folios[l]++;
		}
	for (int l = 0; l < 2; l++)
		if (pages[l] != m->lru_pages[l] || folios[l] != m->lru_folios[l])
			return snprintf(msg, len, "R2: LRU list %d counts %llu pages, holds %llu", l,
					(unsigned long long)m->lru_pages[l], (unsigned long long)pages[l]), -1;
	for (uint32_t s = 0; s < m->nproc; s++) {
		const mproc *mp = m->proc[s];
		if (!mp)
			continue;
		for (uint64_t id = 0; id < mp->cap; id++) {
			const lnode *n = &mp->node[id];
			int order = sl_proc_folio_order(mp->p, (uint32_t)id);
			if ((order >= 0) != (n->nr != 0) || (order >= 0 && n->nr != (1u << order)))
				return snprintf(msg, len, "R3: folio %llu of order %d is tracked with %u pages",
						(unsigned long long)id, order, n->nr), -1;
			tracked += n->nr;
		}
	}
	for (int c = 0; c < m->nr_cpus; c++)
		stock += m->stock[c];
	if (tracked + stock + m->kmem != m->usage)
		return snprintf(msg, len, "R4: usage %llu but folios %llu + stock %llu + kmem %llu",
				(unsigned long long)m->usage, (unsigned long long)tracked,
				(unsigned long long)stock, (unsigned long long)m->kmem), -1;
	return 0;
}

/* ---------------------------------------------------------------- cost */

/* Uncalibrated placeholders (docs/reclaim.md): orders of magnitude of a
 * 4 KiB fault, LZO-class compression and decompression on zram, a folio
 * split; to be replaced by the kernel harness's fit. */
const sl_cost_model sl_cost_default = {
	.name = "uncalibrated-v0",
	.fault_folio = 1000, .fault_page = 250,
	.fault_pmd_folio = 1000 + 250 * SL_CLUSTER, /* a 2M fault as 512 small pages */
	.swpout_folio = 2000, .swpout_page = 3000,
	.swpin_folio = 1500, .swpin_page = 1200,
	.split = 5000, .scan_page = 60, .lock_wait = 0, .op = 0, .proc = 0,
	/* a page swapped in and out again: swpin and swpout, folio and page */
	.compact_move = 1500 + 1200 + 2000 + 3000,
};

double sl_cost_predict(const sl_cost_model *c, const sl_rrun_result *r)
{
	double ns = 0;

	/* a PMD-size fault has its own coefficient (calibrated 0.18 ms for a
	 * block reused within the run; one the VM's host had taken back costs
	 * 5.6 ms, which is not modelled: kernel-findings F22): its folio and
	 * pages are left out of the per-folio and per-page fault terms */
	uint64_t pmd = r->faults_anon[SL_PMD_ORDER];
	ns += c->fault_pmd_folio * (double)pmd;
	for (int o = 0; o < SL_NR_ORDERS; o++) {
		if (o != SL_PMD_ORDER)
			ns += c->fault_folio * (double)r->faults_anon[o];
		ns += c->swpout_folio * (double)r->swpout[o];
		ns += c->swpin_folio * (double)r->swpin[o];
		ns += c->split * (double)r->swpout_fallback[o];
	}
	ns += c->fault_page * (double)(r->fault_pages - (pmd << SL_PMD_ORDER));
	ns += c->swpout_page * (double)r->swpout_pages;
	ns += c->swpin_page * (double)r->swpin_pages;
	ns += c->scan_page * (double)(r->pgscan + r->pgrefill);
	ns += c->lock_wait * (double)r->lock_waits + c->op * (double)r->ops + c->proc * (double)r->procs;
	ns += c->compact_move * (double)(r->dev.compact_moves + r->dev.kcompact_moves);
	return ns * 1e-9;
}

/* ---------------------------------------------------------------- runner */

typedef struct rproc {
	sl_proc *p;
	int cpu;
	int state;                 /* 0 unborn, 1 started, 2 mapped, 3 exited */
	uint8_t *pt;               /* per 2 MiB of the region: its PTE table exists */
	uint64_t npt;              /* kernel pages charged: the PTE tables and the
	                              harness's pipe page (C5) */
	int anon;                  /* the region's anon_vma and its chain entry exist */
} rproc;

typedef struct rrun {
	const sl_rwl_params *prm;
	sl_swapset *s;
	sl_memcg *m;
	int swapin_mode;
	rproc *pr;
	uint32_t npr, cap;
	int check_every;
	int track_free;            /* the policy keeps a free-cluster list */
	uint32_t *live;            /* [cpu] started processes not yet exited */
	sl_rrun_result *res;
	sl_rrun_layouts *lay;      /* sl_rrun_window_layout(): the layouts recorded */
	char *msg;
	size_t len;
} rrun;

#define PTE_TABLE_PAGES 512u   /* pages one PTE table maps (x86-64) */

/* The object sizes of the harness kernel's SLAB_ACCOUNT caches (C6):
 * vm_area_struct, anon_vma, anon_vma_chain (/sys/kernel/slab/NAME/slab_size;
 * mm/vma_init.c, mm/rmap.c anon_vma_init()). */
#define SLAB_VMA 192u
#define SLAB_ANON_VMA 104u
#define SLAB_AVC 64u

/* The harness driver runs on the run's first CPU (kernel-findings F41):
 * its own slab objects, charged to the memcg it runs in, drain that CPU's
 * obj_stock of the group's bytes (C7). */
#define HARNESS_DRIVER_CPU 0

/* __pte_alloc() - 6.18: the first fault in a 2 MiB range allocates its PTE
 * table (a PMD-size THP fault deposits one too), GFP_PGTABLE_USER, charged
 * to the group before the fault's folio (kernel-findings F13); the first
 * fault of the region then prepares its anon_vma (C6). Whether a PMD table
 * is needed too depends on the address layout (F40): none is charged. The
 * region is 2 MiB aligned, so page i is in table i / 512. */
static void pgtables_charge(rrun *c, rproc *r, uint64_t first, uint64_t n)
{
	for (uint64_t t = first / PTE_TABLE_PAGES; n && t <= (first + n - 1) / PTE_TABLE_PAGES; t++) {
		if (r->pt[t])
			continue;
		sl_memcg_charge_kmem(c->m, 1);
		r->npt++;
		r->pt[t] = 1;
		if (!r->anon) {
			/* the first fault's anon_vma_prepare(), after its PTE table */
			sl_memcg_slab_alloc(c->m, SLAB_ANON_VMA);
			sl_memcg_slab_alloc(c->m, SLAB_AVC);
			r->anon = 1;
		}
	}
}

/* free_pgtables() at munmap and exit: every table uncharged, into the
 * process's CPU's stock (C5); the first `keep` pages stay charged (at a
 * munmap the harness's pipe page, which lives until the exit). */
static void pgtables_free(rrun *c, rproc *r, uint64_t keep)
{
	if (r->npt > keep)
		sl_memcg_uncharge_kmem(c->m, r->npt - keep);
	r->npt = keep;
	if (r->pt)
		memset(r->pt, 0, (sl_proc_npages(r->p) + PTE_TABLE_PAGES - 1) / PTE_TABLE_PAGES);
}

static void add_stats(sl_rrun_result *r, const sl_proc_stats *st)
{
	for (int o = 0; o < SL_NR_ORDERS; o++) {
		r->swpout[o] += st->swpout[o];
		r->swpout_fallback[o] += st->swpout_fallback[o];
		r->fail_free[o] += st->fail_free[o];
		r->fail_aligned[o] += st->fail_aligned[o];
		r->swpin[o] += st->swpin[o];
		r->faults_anon[o] += st->faults_anon[o];
		r->swpout_pages += st->swpout[o] << o;
		r->swpin_pages += st->swpin[o] << o;
		r->fault_pages += st->faults_anon[o] << o;
		r->splits += st->swpout_fallback[o];
	}
	r->alloc_fail0 += st->alloc_fail0;
	r->zero_remapped += st->zero_remapped;
	r->zero_transient += st->zero_transient;
	r->swap_ra += st->swap_ra;
	r->swap_ra_hit += st->swap_ra_hit;
	r->swapcache_clean += st->swapcache_clean;
}

static int rr_check(rrun *c)
{
	char m2[200];

	c->res->checks++;
	if (sl_memcg_check(c->m, m2, sizeof(m2)) || sl_set_check(c->s, m2, sizeof(m2))) {
		snprintf(c->msg, c->len, "invariant broken: %s", m2);
		return -1;
	}
	for (uint32_t i = 0; i < c->npr; i++)
		if (c->pr[i].state == 2 && sl_proc_check(c->pr[i].p, 0, m2, sizeof(m2))) {
			snprintf(c->msg, c->len, "invariant broken in process %u: %s", i, m2);
			return -1;
		}
	return 0;
}

/* One record of sl_rrun_window_layout() for process i (phase: the
 * marker's, -1 at exit): the space for its layout at the end of the run's
 * layouts, for the caller to fill. NULL if memory ran out (the rest of the
 * run goes on without records; nrecs tells). */
static uint64_t *layout_record(rrun *c, uint32_t i, int phase)
{
	sl_rrun_layouts *y = c->lay;
	uint64_t n = sl_proc_npages(c->pr[i].p);
	uint64_t *pages = realloc(y->pages, (y->npages + n) * sizeof(*pages));
	sl_rrun_layout_rec *recs = realloc(y->recs, (y->nrecs + 1) * sizeof(*recs));

	if (pages)
		y->pages = pages;
	if (recs)
		y->recs = recs;
	if (!pages || !recs)
		return NULL;
	y->recs[y->nrecs++] = (sl_rrun_layout_rec){ .phase = phase, .proc = i, .first = y->npages, .npages = n };
	y->npages += n;
	return y->pages + y->npages - n;
}

/* At a phase marker: every live process's layout hash, chained in process
 * order (the RUN marker's is run_layout_hash); the layouts are recorded too
 * when the caller asked for them. */
static uint64_t layouts_at_marker(rrun *c, int phase)
{
	uint64_t h = UINT64_C(0xcbf29ce484222325), swapped;

	for (uint32_t i = 0; i < c->npr; i++) {
		if (c->pr[i].state != 2)
			continue;
		uint64_t *out = c->lay ? layout_record(c, i, phase) : NULL;
		h = (h ^ sl_proc_layout_hash(c->pr[i].p, out, &swapped)) * UINT64_C(0x100000001b3);
	}
	return h;
}

static void proc_exit(rrun *c, rproc *r)
{
	/* the layout the process leaves, as the kernel harness's driver reads
	 * it from pagemap just before the process exits */
	if (r->state == 2 && c->lay) {
		uint64_t *out = layout_record(c, (uint32_t)(r - c->pr), -1);
		if (out)
			sl_proc_layout(r->p, out);
	}
	if (r->state == 2) {
		/* the driver reads the exit's layout (/proc/PID/pagemap opened) */
		sl_memcg_obj_stock_foreign(c->m, HARNESS_DRIVER_CPU);
		/* exit_mmap(): every PTE zapped, every slot put */
		sl_memcg_set_cpu(c->m, r->cpu);
		lru_add_drain(c->m); /* first the CPU's batch (exit_mmap()) */
		sl_proc_dontneed(r->p, 0, 0, sl_proc_npages(r->p));
		/* free_pgtables() unlinks the anon_vmas and remove_vma() frees
		 * the VMAs in address order: the region's among those the
		 * process inherited at fork, charged to the driver's memcg (C7) */
		sl_memcg_obj_stock_foreign(c->m, r->cpu);
		if (r->anon) {
			sl_memcg_slab_free(c->m, SLAB_ANON_VMA + SLAB_AVC);
			sl_memcg_obj_stock_foreign(c->m, r->cpu);
		}
		sl_memcg_slab_free(c->m, SLAB_VMA);
		sl_memcg_obj_stock_foreign(c->m, r->cpu);
		/* the pipe page (exit_files()) and the page tables (after the
		 * RCU grace period the driver waits for) */
		pgtables_free(c, r, 0);
		r->anon = 0;
		free(r->pt);
		r->pt = NULL;
		add_stats(c->res, sl_proc_stats_get(r->p));
		sl_memcg_detach(c->m, r->p);
		sl_proc_destroy(r->p);
		r->p = NULL;
	}
	/* the driver reaps it (the task_struct freed on the driver's CPU) */
	sl_memcg_obj_stock_foreign(c->m, HARNESS_DRIVER_CPU);
	r->state = 3;
}

/* Folios written out and swapped in so far by the live processes. */
static uint64_t live_events(const rrun *c)
{
	uint64_t n = 0;

	for (uint32_t i = 0; i < c->npr; i++) {
		if (c->pr[i].state != 2)
			continue;
		const sl_proc_stats *st = sl_proc_stats_get(c->pr[i].p);
		for (int o = 0; o < SL_NR_ORDERS; o++)
			n += st->swpout[o] + st->swpin[o];
	}
	return n;
}

/* Another CPU than cpu runs a live process of the run. */
static int contended(const rrun *c, int cpu)
{
	for (int k = 0; k < c->prm->nr_cpus; k++)
		if (k != cpu && c->live[k])
			return 1;
	return 0;
}

/* The checks and bookkeeping before an operation: the process's slot and
 * state; the running CPU; the count of operations. *rp: the process (NULL
 * for PHASE and DONE). */
static int rr_prologue(rrun *c, const sl_rop *op, rproc **rp)
{
	rproc *r = NULL;

	if (sli_stop_requested())
		return snprintf(c->msg, c->len, "stopped"), -1;
	if (op->kind != SL_ROP_PHASE && op->kind != SL_ROP_DONE) {
		if (op->proc >= c->cap) {
			uint32_t nc = c->cap ? c->cap : 64;
			while (nc <= op->proc)
				nc *= 2;
			rproc *np = realloc(c->pr, nc * sizeof(*np));
			if (!np)
				return snprintf(c->msg, c->len, "out of memory"), -1;
			memset(np + c->cap, 0, (nc - c->cap) * sizeof(*np));
			c->pr = np;
			c->cap = nc;
		}
		if (op->proc >= c->npr)
			c->npr = op->proc + 1;
		r = &c->pr[op->proc];
		if (op->kind != SL_ROP_START && r->state != (op->kind == SL_ROP_MMAP ? 1 : 2))
			return snprintf(c->msg, c->len, "operation %d on process %u in state %d", op->kind,
					op->proc, r->state), -1;
		sl_memcg_set_cpu(c->m, r->cpu);
		c->res->ops++;
	}
	*rp = r;
	return 0;
}

/* A TOUCH: the page tables its range needs, then its stores or loads. */
static void rr_touch(rrun *c, rproc *r, const sl_rop *op)
{
	pgtables_charge(c, r, op->first, op->npages);
	if (op->write)
		sl_proc_touch(r->p, 0, op->first, op->npages);
	else
		sl_proc_read(r->p, 0, op->first, op->npages);
}

/* The operation's effect, TOUCH excepted. */
static int rr_other(rrun *c, rproc *r, const sl_rop *op)
{
	switch (op->kind) {
	case SL_ROP_START:
		r->cpu = (int)op->cpu;
		r->state = 1;
		/* the driver forks it; it joins the group through an open
		 * cgroup.procs on its own CPU: both the driver's memcg's (C7) */
		sl_memcg_obj_stock_foreign(c->m, HARNESS_DRIVER_CPU);
		sl_memcg_obj_stock_foreign(c->m, r->cpu % c->prm->nr_cpus);
		c->live[r->cpu % c->prm->nr_cpus]++;
		c->res->procs++;
		break;
	case SL_ROP_MMAP: {
		sl_region_spec spec = { .npages = op->npages, .vmflags = 0, .pgoff = 0 };
		if (op->region != 0)
			return snprintf(c->msg, c->len, "a second region per process is not modelled yet"), -1;
		sl_memcg_set_cpu(c->m, (int)op->cpu);
		r->p = sl_proc_create_set(c->s, r->cpu, c->prm->mthp_mask, c->swapin_mode, &spec, 1);
		r->pt = calloc((op->npages + PTE_TABLE_PAGES - 1) / PTE_TABLE_PAGES + 1, 1);
		if (!r->p || !r->pt || sl_memcg_attach(c->m, r->p, r->cpu))
			return snprintf(c->msg, c->len, "out of memory"), -1;
		/* mmap() allocates the VMA; the driver's child then unmaps the
		 * reservation's head and tail to align the region, each a
		 * split (a VMA allocated, the cut one freed), and acknowledges
		 * with the region's address: its pipe's buffer page (C5, C6) */
		sl_memcg_set_cpu(c->m, r->cpu);
		sl_memcg_slab_alloc(c->m, SLAB_VMA);
		for (int cut = 0; cut < 2; cut++) {
			sl_memcg_slab_alloc(c->m, SLAB_VMA);
			sl_memcg_slab_free(c->m, SLAB_VMA);
		}
		sl_memcg_charge_kmem(c->m, 1);
		r->npt = 1;
		r->state = 2;
		break;
	}
	case SL_ROP_MUNMAP:
		/* munmap(): the region's PTEs zapped and slots put; the process
		 * lives on (a later touch faults afresh), its slab objects (C6)
		 * kept until it exits; the CPU's batch goes onto the LRU
		 * first (the munmap path's lru_add_drain(), as in unmap_region()) */
		lru_add_drain(c->m);
		sl_proc_dontneed(r->p, 0, 0, sl_proc_npages(r->p));
		pgtables_free(c, r, 1); /* the pipe page lives on (C5) */
		break;
	case SL_ROP_EXIT:
		if (r->state == 1 || r->state == 2)
			c->live[r->cpu % c->prm->nr_cpus]--;
		proc_exit(c, r);
		if (c->check_every && rr_check(c))
			return -1;
		break;
	case SL_ROP_PHASE:
		/* the driver's counters snapshot opens files (C7) */
		sl_memcg_obj_stock_foreign(c->m, HARNESS_DRIVER_CPU);
		if (op->first == SL_RPH_RUN)
			c->res->run_layout_hash = layouts_at_marker(c, SL_RPH_RUN);
		else if (c->lay)
			layouts_at_marker(c, (int)op->first);
		if (c->check_every && rr_check(c))
			return -1;
		break;
	default:
		break;
	}
	return 0;
}

/* The peaks and the free-list counts after an operation; check_every 2:
 * the invariants (check 0: not now, an operation of another CPU is
 * under way). */
static int rr_epilogue(rrun *c, int check)
{
	uint64_t usage = sl_memcg_usage(c->m);
	if (usage > c->res->max_usage)
		c->res->max_usage = usage;
	uint64_t inuse = sl_set_inuse(c->s);
	if (inuse > c->res->swap_peak)
		c->res->swap_peak = inuse;
	if (c->track_free) {
		uint32_t nfree = c->s->dev[0]->list_len[SL_LIST_FREE];
		c->res->free_ops++;
		c->res->ops_free_empty += nfree == 0;
		if (nfree < c->res->free_clusters_min)
			c->res->free_clusters_min = nfree;
	}
	if (check && c->check_every == 2 && rr_check(c))
		return -1;
	return 0;
}

/* One operation of the stream, serially (window 1). */
static int rr_emit(void *ctx, const sl_rop *op)
{
	rrun *c = ctx;
	rproc *r;

	if (rr_prologue(c, op, &r))
		return -1;
	if (op->kind == SL_ROP_TOUCH) {
		int busy = contended(c, r->cpu % c->prm->nr_cpus);
		uint64_t before = busy ? live_events(c) : 0;
		rr_touch(c, r, op);
		if (busy)
			c->res->lock_waits += live_events(c) - before;
	} else if (rr_other(c, r, op)) {
		return -1;
	}
	return rr_epilogue(c, 1);
}

/* ------------------------------------------------ two processes at once */

/* sl_rrun_window() (docs/reclaim.md "Two processes at once"): the kernel
 * driver's window (rdriver.c) with the CPUs interleaved in time. The
 * driver keeps `window` TOUCH / MUNMAP operations in flight, sends the next
 * one when the oldest is acknowledged, and runs START, MMAP, EXIT and
 * PHASE only when everything sent before them is done. Each CPU executes
 * the operations sent to its processes in the order sent, on a fiber of
 * its own with a clock of its own (ns of system time, the calibrated
 * coefficients: CLK_*). The memory cgroup calls back (mc_yield) at the
 * steps of reclaim: before an LRU isolation and between the folios of
 * shrink_folio_list(); there the running CPU's clock is advanced by the
 * work since its last call (its faults and swap-ins included), and if
 * another CPU's next step comes earlier that CPU runs first (ties: the
 * lower CPU). Faults between two reclaim steps run as one block: a yield at
 * every charge made the write pass's large charges fail where the kernel's
 * do not (kernel-findings F21). Deterministic: no thread, no random
 * choice. */

#define CLK_OP 5600.0          /* an operation: the pipe read and the acknowledgement */
#define CLK_FAULT_FOLIO 900.0  /* a fault's fixed cost */
#define CLK_FAULT_PAGE 1000.0  /* zeroing a page */
#define CLK_SWPIN_FOLIO 800.0
#define CLK_SWPIN_PAGE 3200.0  /* decompressing a page */
#define WIN_STACK_BYTES (UINT32_C(1) << 20)

enum { WOP_QUEUED = 0, WOP_RUNNING = 1, WOP_DONE = 2 };

typedef struct wop {
	sl_rop op;
	int cpu;
	int state;                 /* WOP_* */
	double sent, done;         /* ns on the clock */
} wop;

typedef struct wcpu {
	sl_fiber *fib;
	struct wrun *w;
	int id;
	wop *cur;                  /* the operation it runs, or NULL */
	double clock;              /* ns */
	uint64_t seen[4];          /* the running process's fault and swap-in
				      folios and pages already on the clock */
} wcpu;

typedef struct wrun {
	rrun *c;
	uint32_t window;
	wop *ring;                 /* the operations in flight, oldest first */
	uint32_t head, n;
	wcpu *cpu;
	int ncpu;
	sl_fiber *main;
	int cur;                   /* the CPU whose fiber runs; -1: the driver */
	wop *finished;             /* set by a fiber that completed its operation */
	double driver;             /* ns: when the driver sends its next operation */
	uint64_t events;           /* live_events() at the last attribution */
	int rc;
} wrun;

static wop *w_at(wrun *w, uint32_t i) { return &w->ring[(w->head + i) % w->window]; }

/* Fault and swap-in folios and pages of the process so far. */
static void w_counts(const sl_proc_stats *st, uint64_t v[4])
{
	v[0] = v[1] = v[2] = v[3] = 0;
	for (int o = 0; o < SL_NR_ORDERS; o++) {
		v[0] += st->faults_anon[o];
		v[1] += st->faults_anon[o] << o;
		v[2] += st->swpin[o];
		v[3] += st->swpin[o] << o;
	}
}

/* Puts the work cpu did since its last turn on its clock: the reclaim
 * work the group kept, the faults and swap-ins of its process. */
static void w_account(wrun *w, wcpu *k)
{
	uint64_t v[4];

	k->clock += sl_memcg_take_pending(w->c->m, k->id);
	if (!k->cur)
		return;
	w_counts(sl_proc_stats_get(w->c->pr[k->cur->op.proc].p), v);
	k->clock += CLK_FAULT_FOLIO * (double)(v[0] - k->seen[0]) +
		    CLK_FAULT_PAGE * (double)(v[1] - k->seen[1]) +
		    CLK_SWPIN_FOLIO * (double)(v[2] - k->seen[2]) +
		    CLK_SWPIN_PAGE * (double)(v[3] - k->seen[3]);
	memcpy(k->seen, v, sizeof(v));
}

/* The oldest operation in flight that cpu has not run yet. */
static wop *w_next(wrun *w, int cpu)
{
	for (uint32_t i = 0; i < w->n; i++) {
		wop *o = w_at(w, i);
		if (o->cpu == cpu && o->state == WOP_QUEUED)
			return o;
	}
	return NULL;
}

/* When cpu's next step would run: now if it is inside an operation, else
 * when its next operation can start; -1 if it has nothing to do. */
static double w_when(wrun *w, int cpu)
{
	wcpu *k = &w->cpu[cpu];
	wop *o;

	if (k->cur)
		return k->clock;
	if (!(o = w_next(w, cpu)))
		return -1;
	return o->sent > k->clock ? o->sent : k->clock;
}

/* The memory cgroup's yield: the running CPU's work goes on its clock; if
 * another CPU's next step is earlier, the driver's loop runs it first. */
static void w_yield(void *ctx)
{
	wrun *w = ctx;
	wcpu *k;

	if (w->cur < 0)
		return;
	k = &w->cpu[w->cur];
	w_account(w, k);
	for (int d = 0; d < w->ncpu; d++) {
		double t = d == k->id ? -1 : w_when(w, d);
		if (t >= 0 && t < k->clock) {
			sl_fiber_switch(k->fib, w->main);
			sl_memcg_set_cpu(w->c->m, k->id);
			return;
		}
	}
}

/* A CPU's fiber: runs the operation the loop started on it, reports it
 * done, and waits for the next. */
static void w_fiber(void *arg)
{
	wcpu *k = arg;
	wrun *w = k->w;

	for (;;) {
		wop *o = k->cur;
		rrun *c = w->c;
		rproc *r = &c->pr[o->op.proc];
		rr_touch(c, r, &o->op); /* the only kind sent in flight */
		w_account(w, k);
		o->state = WOP_DONE;
		o->done = k->clock;
		k->cur = NULL;
		w->finished = o;
		sl_fiber_switch(k->fib, w->main);
	}
}

/* Runs the CPUs, earliest first, until the operation `until` is done (NULL:
 * every operation in flight). */
static int w_run(wrun *w, const wop *until)
{
	for (;;) {
		int busy = 0, best = -1;
		double bt = 0;
		if (until) {
			busy = until->state != WOP_DONE;
		} else {
			for (uint32_t i = 0; i < w->n; i++)
				busy |= w_at(w, i)->state != WOP_DONE;
		}
		if (!busy)
			return 0;
		for (int d = 0; d < w->ncpu; d++) {
			double t = w_when(w, d);
			if (t >= 0 && (best < 0 || t < bt)) {
				best = d;
				bt = t;
			}
		}
		if (best < 0)
			return snprintf(w->c->msg, w->c->len, "window runner: nothing to run"), -1;
		wcpu *k = &w->cpu[best];
		if (!k->cur) {
			k->cur = w_next(w, best);
			k->cur->state = WOP_RUNNING;
			k->clock = bt + CLK_OP;
			w_counts(sl_proc_stats_get(w->c->pr[k->cur->op.proc].p), k->seen);
		}
		w->cur = best;
		w->finished = NULL;
		sl_memcg_set_cpu(w->c->m, best);
		sl_fiber_switch(w->main, k->fib);
		w->cur = -1;
		if (w->rc)
			return -1;
		if (w->finished) {
			/* lock_waits: the swap events since the last attribution,
			 * when another CPU runs a live process */
			if (w->ncpu > 1) {
				uint64_t ev = live_events(w->c);
				if (contended(w->c, w->finished->cpu))
					w->c->res->lock_waits += ev - w->events;
				w->events = ev;
			}
			int idle = 1;
			for (int d = 0; d < w->ncpu; d++)
				idle &= !w->cpu[d].cur;
			if (rr_epilogue(w->c, idle))
				return -1;
		}
	}
}

/* The oldest operation in flight, done, leaves the window; the driver
 * reads its acknowledgement. */
static void w_pop(wrun *w)
{
	wop *o = w_at(w, 0);

	if (o->done > w->driver)
		w->driver = o->done;
	w->head = (w->head + 1) % w->window;
	w->n--;
}

static int rr_emit_window(void *ctx, const sl_rop *op)
{
	wrun *w = ctx;
	rrun *c = w->c;
	rproc *r;

	if (op->kind == SL_ROP_TOUCH) {
		while (w->n >= w->window) {
			if (w_run(w, w_at(w, 0)))
				return -1;
			w_pop(w);
		}
		if (rr_prologue(c, op, &r))
			return -1;
		wop *o = w_at(w, w->n++);
		o->op = *op;
		o->cpu = r->cpu % c->prm->nr_cpus;
		o->state = WOP_QUEUED;
		o->sent = w->driver;
		return 0;
	}
	/* START, MMAP, MUNMAP, EXIT, PHASE, DONE: after everything in flight
	 * (MUNMAP too, unlike the driver: no process then holds folios of
	 * another isolated) */
	if (w_run(w, NULL))
		return -1;
	while (w->n)
		w_pop(w);
	for (int d = 0; d < w->ncpu; d++)
		if (w->cpu[d].clock > w->driver)
			w->driver = w->cpu[d].clock;
	if (rr_prologue(c, op, &r) || rr_other(c, r, op))
		return -1;
	if (w->ncpu > 1)
		w->events = live_events(c);
	return rr_epilogue(c, 1);
}

/* Plays the stream with `window` operations in flight. */
static int rr_play_window(rrun *c, uint32_t window)
{
	wrun w = { .c = c, .window = window, .ncpu = c->prm->nr_cpus, .cur = -1 };
	int rc = -1;

	w.ring = calloc(window, sizeof(*w.ring));
	w.cpu = calloc((size_t)w.ncpu, sizeof(*w.cpu));
	w.main = sl_fiber_main();
	if (!w.ring || !w.cpu || !w.main || sl_memcg_set_yield(c->m, w_yield, &w))
		goto out;
	for (int d = 0; d < w.ncpu; d++) {
		w.cpu[d].w = &w;
		w.cpu[d].id = d;
		if (!(w.cpu[d].fib = sl_fiber_create(w_fiber, &w.cpu[d], WIN_STACK_BYTES)))
			goto out;
	}
	rc = sl_rwl_play(c->prm, rr_emit_window, &w);
	double end = w.driver;
	for (int d = 0; d < w.ncpu; d++)
		if (w.cpu[d].clock > end)
			end = w.cpu[d].clock;
	c->res->clock_ns = (uint64_t)end;
	c->res->reclaims_overlapped = sl_memcg_overlapped(c->m);
out:
	if (rc && !c->msg[0])
		snprintf(c->msg, c->len, "out of memory");
	sl_memcg_set_yield(c->m, NULL, NULL);
	for (int d = 0; w.cpu && d < w.ncpu; d++)
		sl_fiber_destroy(w.cpu[d].fib);
	sl_fiber_destroy(w.main);
	free(w.cpu);
	free(w.ring);
	return rc;
}

int sl_rrun(const sl_rwl_params *p, const sl_policy *pol, const sl_cost_model *cost,
	    int check_every, sl_rrun_result *res, char *msg, size_t len)
{
	return sl_rrun_window(p, pol, cost, 1, check_every, res, msg, len);
}

int sl_rrun_window(const sl_rwl_params *p, const sl_policy *pol, const sl_cost_model *cost,
		   uint32_t window, int check_every, sl_rrun_result *res, char *msg, size_t len)
{
	return sl_rrun_window_layout(p, pol, cost, window, check_every, res, NULL, msg, len);
}

int sl_rrun_window_layout(const sl_rwl_params *p, const sl_policy *pol, const sl_cost_model *cost,
			  uint32_t window, int check_every, sl_rrun_result *res, sl_rrun_layouts *layouts,
			  char *msg, size_t len)
{
	rrun c = { .prm = p, .check_every = check_every, .res = res, .lay = layouts, .msg = msg, .len = len };
	struct timespec t0, t1;
	sl_device *d;
	int prio = SL_PRIO_AUTO, rc;

	memset(res, 0, sizeof(*res));
	res->free_clusters_min = UINT64_MAX;
	if (len)
		msg[0] = 0;
	if (sl_rwl_validate(p, msg, len))
		return -1;
	d = sl_device_create(p->swap_bytes / SL_PAGE_SIZE, p->device, p->nr_cpus, pol, check_every > 0,
			     msg, len);
	if (!d)
		return -1;
	if (!(c.s = sl_swapset_create(&d, &prio, 1, 1, msg, len))) {
		sl_device_destroy(d);
		return -1;
	}
	c.swapin_mode = sl_policy_swapin_mode(pol);
	/* the cluster policies start with every cluster on the free list; the
	 * baselines keep none, and get no free-list counts */
	c.track_free = c.s->dev[0]->list_len[SL_LIST_FREE] > 0;
	c.live = calloc((size_t)p->nr_cpus, sizeof(*c.live));
	if (!c.live || !(c.m = sl_memcg_create(p->limit_pages, p->nr_cpus, c.s))) {
		free(c.live);
		sl_swapset_destroy(c.s);
		return snprintf(msg, len, "out of memory"), -1;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (!window)
		window = 2 * (uint32_t)p->nr_cpus; /* the kernel driver's default */
	res->window = window;
	rc = window == 1 ? sl_rwl_play(p, rr_emit, &c) : rr_play_window(&c, window);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (rc && !msg[0])
		snprintf(msg, len, "out of memory");
	for (uint32_t i = 0; i < c.npr; i++) {
		if (c.pr[i].state == 2) {
			sl_memcg_detach(c.m, c.pr[i].p);
			sl_proc_destroy(c.pr[i].p);
		}
		free(c.pr[i].pt);
	}
	if (!rc) {
		sl_memcg_state st;
		sl_memcg_state_get(c.m, &st);
		res->direct_reclaim = st.direct_reclaim;
		res->pgscan = st.pgscan;
		res->pgsteal = st.pgsteal;
		res->pgactivate = st.pgactivate;
		res->pgdeactivate = st.pgdeactivate;
		res->ws_refault = st.ws_refault;
		res->ws_activate = st.ws_activate;
		res->ws_restore = st.ws_restore;
		res->pgrefill = st.pgrefill;
		res->oom = st.oom;
		memcpy(res->charge_fallback, st.charge_fallback, sizeof(res->charge_fallback));
		memcpy(res->swpin_fallback_charge, st.swpin_fallback_charge, sizeof(res->swpin_fallback_charge));
		sl_set_drain(c.s); /* slot caches (<= 6.13) give back what they hold */
		res->inuse_end = sl_set_inuse(c.s);
		res->dev = c.s->dev[0]->st;
		res->seconds = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
		res->sys_seconds = sl_cost_predict(cost ? cost : &sl_cost_default, res);
	}
	free(c.pr);
	free(c.live);
	sl_memcg_destroy(c.m);
	sl_swapset_destroy(c.s);
	return rc ? -1 : 0;
}
