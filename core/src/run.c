/*
 * run.c - one workload through the process model and a device: per
 * iteration the per-size counters and the layout hash; the final layout.
 */
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <time.h>
#include "swaplab/swaplab.h"

#define RUN_SNAPS 4

typedef struct run_ctx {
	sl_swapset *s;
	sl_proc *p;
	sl_run_result *res;
	int check_every;
	sl_proc_stats base;        /* counters at the start of the iteration */
	uint64_t fail0_base;
	uint64_t *layout;
	int keep_layout;           /* iter_end keeps each iteration's layout in it */
	/* without a hook that reads them at an iteration's end, the layout
	 * hashes of RUN_SNAPS iterations are computed side by side from
	 * snapshots (sl_layout_hash16()); defer: may do so */
	int defer, nsnap;
	uint16_t *snap[4];
	int snap_it[4];
	int it;
	int done;                  /* iterations finished */
	const sl_run_hooks *hooks;
	char *msg;
	size_t len;
} run_ctx;

static int run_check(run_ctx *c)
{
	char m[256];

	c->res->checks++;
	if (sl_set_check(c->s, m, sizeof(m)) || sl_proc_check(c->p, 1, m, sizeof(m))) {
		snprintf(c->msg, c->len, "invariant broken in iteration %d: %s", c->it, m);
		return -1;
	}
	return 0;
}

/* The layout hashes of the iterations snapshotted so far. */
static void hash_snaps(run_ctx *c)
{
	uint64_t h[RUN_SNAPS];

	sl_layout_hash16((const uint16_t *const *)c->snap, c->nsnap, c->res->npages, h);
	for (int j = 0; j < c->nsnap; j++)
		c->res->iter[c->snap_it[j]].layout_hash = h[j];
	c->nsnap = 0;
}

static void iter_end(run_ctx *c)
{
	const sl_proc_stats *st = sl_proc_stats_get(c->p);
	sl_iter_result *ir = &c->res->iter[c->it - 1];

	for (int o = 0; o < SL_NR_ORDERS; o++) {
		ir->swpout[o] = st->swpout[o] - c->base.swpout[o];
		ir->swpout_fallback[o] = st->swpout_fallback[o] - c->base.swpout_fallback[o];
		ir->swpout_extents[o] = ir->swpout[o] + st->swpout_extra_runs[o] -
					c->base.swpout_extra_runs[o];
		ir->swpin[o] = st->swpin[o] - c->base.swpin[o];
		ir->fail_free[o] = st->fail_free[o] - c->base.fail_free[o];
		ir->fail_aligned[o] = st->fail_aligned[o] - c->base.fail_aligned[o];
	}
	ir->alloc_fail0 = st->alloc_fail0 - c->base.alloc_fail0;
	if (c->defer && !sl_proc_layout_snap16(c->p, c->snap[c->nsnap], &ir->swapped_pages)) {
		c->snap_it[c->nsnap++] = c->it - 1;
		if (c->nsnap == RUN_SNAPS)
			hash_snaps(c);
	} else {
		ir->layout_hash = sl_proc_layout_hash(c->p, c->keep_layout ? c->layout : NULL,
						      &ir->swapped_pages);
	}
	ir->inuse_pages = sl_set_inuse(c->s);
	for (int t = 0; t < c->s->nr; t++)
		ir->dev_inuse[t] = c->s->dev[t]->inuse_pages;
	if (c->res->frag) {
		/* the first device's walk also fills the cluster map's row */
		sl_frag_metrics *m = &c->res->frag[c->it - 1];
		sl_frag_init(m);
		sl_frag_add_set(m, c->s, c->res->cmap ?
				c->res->cmap + (size_t)(c->it - 1) * c->res->cmap_clusters : NULL);
		sl_frag_finish(m);
	}
	c->base = *st;
}

_Thread_local volatile sig_atomic_t *sli_tl_stop;

/* An iteration is over: report it; SL_RUN_STOPPED when a hook asks. */
static int iter_done(run_ctx *c)
{
	c->done = c->it;
	if (c->hooks && c->hooks->on_iter &&
	    c->hooks->on_iter(c->hooks->ctx, c->it, &c->res->iter[c->it - 1]))
		return SL_RUN_STOPPED;
	c->it++;
	return sli_stop_requested() ? SL_RUN_STOPPED : 0;
}

static int run_op(void *ctx, const sl_op *op)
{
	run_ctx *c = ctx;

	if (sli_stop_requested())
		return SL_RUN_STOPPED;
	switch (op->kind) {
	case SL_OP_TOUCH:
		sl_proc_touch(c->p, op->region, op->first, op->npages);
		break;
	case SL_OP_DONTNEED:
		sl_proc_dontneed(c->p, op->region, op->first, op->npages);
		break;
	case SL_OP_PAGEOUT:
		sl_proc_pageout(c->p, op->region, op->first, op->npages);
		break;
	case SL_OP_WARMUP_END:
		c->base = *sl_proc_stats_get(c->p);
		c->it = 1;
		return c->check_every ? run_check(c) : 0;
	case SL_OP_ITER_END:
		iter_end(c);
		if (c->check_every && run_check(c))
			return -1;
		return iter_done(c);
	default:
		return 0;
	}
	/* deferred kernel work (the discard worker) runs between operations */
	sl_set_tick(c->s);
	if (c->check_every >= 2)
		return run_check(c);
	return 0;
}

int sl_policy_swapin_mode(const sl_policy *pol)
{
	return (pol->props & SL_POL_SWAPIN_LARGE) ? SL_SWAPIN_LARGE : SL_SWAPIN_ORDER0;
}

int sl_run(const sl_wl_params *p, const sl_policy *pol, int check_every,
	   sl_run_result *res, char *msg, size_t len)
{
	return sl_run_hooked(p, pol, check_every, NULL, res, msg, len);
}

int sl_run_hooked(const sl_wl_params *p, const sl_policy *pol, int check_every,
		  const sl_run_hooks *hooks, sl_run_result *res, char *msg, size_t len)
{
	sl_region_spec reg[SL_MAX_REGIONS];
	run_ctx c = { .res = res, .check_every = check_every, .hooks = hooks, .msg = msg,
		      .len = len };
	volatile sig_atomic_t *outer_stop = sli_tl_stop;
	struct timespec t0, t1;
	int rc = -1, played = -1;

	memset(res, 0, sizeof(*res));
	if (sl_wl_validate(p, msg, len))
		return -1;
	int nreg = sl_wl_regions(p, reg);
	uint64_t max = p->swap_bytes / SL_PAGE_SIZE;
	sl_device *dev[SL_MAX_SWAPFILES] = { 0 };
	int prio[SL_MAX_SWAPFILES], n = 1 + p->nr_extra;
	dev[0] = sl_device_create(max, p->device, p->cpu + p->cpus, pol, check_every > 0, msg, len);
	prio[0] = p->swap_prio;
	for (int t = 1; t < n && dev[t - 1]; t++) {
		dev[t] = sl_device_create(p->extra[t - 1].bytes / SL_PAGE_SIZE, p->extra[t - 1].kind,
					  p->cpu + p->cpus, pol, check_every > 0, msg, len);
		prio[t] = p->extra[t - 1].prio;
	}
	if (dev[n - 1])
		c.s = sl_swapset_create(dev, prio, n, 1, msg, len);
	if (!c.s) {
		for (int t = 0; t < n; t++)
			sl_device_destroy(dev[t]);
		return -1;
	}
	c.p = sl_proc_create_set(c.s, p->cpu, p->mthp_mask, sl_policy_swapin_mode(pol), reg, nreg);
	if (c.p)
		sl_proc_set_migration(c.p, p->cpus, p->migrate_every);
	res->iterations = p->iterations;
	res->npages = c.p ? sl_proc_npages(c.p) : 0;
	res->max_slots = max;
	res->iter = calloc((size_t)p->iterations + 1, sizeof(sl_iter_result));
	c.layout = calloc(res->npages + 1, sizeof(uint64_t));
	for (int j = 0; j < RUN_SNAPS && c.p; j++)
		if (!(c.snap[j] = malloc((res->npages + 1) * sizeof(uint16_t))))
			c.p = (sl_proc_destroy(c.p), NULL);
	if (p->metrics) {
		res->frag = calloc((size_t)p->iterations + 1, sizeof(sl_frag_metrics));
		if (c.s->dev[0]->nr_clusters <= SL_CMAP_MAX) {
			res->cmap_clusters = c.s->dev[0]->nr_clusters;
			res->cmap = calloc((size_t)p->iterations + 1, res->cmap_clusters);
		}
	}
	if (!c.p || !res->iter || !c.layout ||
	    (p->metrics && (!res->frag || (res->cmap_clusters && !res->cmap)))) {
		snprintf(msg, len, "out of memory for the run");
		goto out;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (hooks && hooks->stop)
		sli_tl_stop = hooks->stop;
	/* a stop flag can end the run inside an iteration, whose layout is then
	 * the last finished one's: kept at every iteration's end. Without one
	 * the run ends only at an iteration's end (a hook's verdict), where
	 * the layout is still that iteration's. */
	c.keep_layout = sli_tl_stop != NULL;
	c.defer = !c.keep_layout && !(hooks && hooks->on_iter);
	played = sl_wl_play(p, run_op, &c);
	sli_tl_stop = outer_stop;
	if (played < 0)
		goto out;
	if (c.nsnap)
		hash_snaps(&c);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	res->seconds = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
	if (played == SL_RUN_STOPPED) {
		/* the finished iterations, and the layout after the last of them
		 * (iter_end kept it in c.layout, or nothing has changed since) */
		res->iterations = c.done;
		if (!c.done || !c.keep_layout)
			sl_proc_layout(c.p, c.layout);
	} else {
		sl_proc_layout(c.p, c.layout);
	}
	res->layout = c.layout;
	c.layout = NULL;
	res->ndev = c.s->nr;
	for (int t = 0; t < c.s->nr; t++) {
		const sl_dev_stats *st = &c.s->dev[t]->st;
		res->devst[t] = *st;
		res->dev_prio[t] = c.s->prio[t];
		for (int o = 0; o < SL_NR_ORDERS; o++) {
			res->dev.alloc_ok[o] += st->alloc_ok[o];
			res->dev.alloc_fail[o] += st->alloc_fail[o];
			res->dev.alloc_fast[o] += st->alloc_fast[o];
		}
		res->dev.alloc_steal += st->alloc_steal;
		res->dev.handoffs += st->handoffs;
		res->dev.handoff_takes += st->handoff_takes;
		res->dev.freed_slots += st->freed_slots;
		res->dev.full_reclaim_scans += st->full_reclaim_scans;
		res->dev.discarded_clusters += st->discarded_clusters;
		res->dev.compact_searches += st->compact_searches;
		res->dev.compact_windows += st->compact_windows;
		res->dev.compact_moves += st->compact_moves;
		res->dev.compact_aborts += st->compact_aborts;
		res->dev.kcompact_wakes += st->kcompact_wakes;
		res->dev.kcompact_windows += st->kcompact_windows;
		res->dev.kcompact_moves += st->kcompact_moves;
	}
	for (int o = 0; o < SL_NR_ORDERS; o++)
		res->dev.alloc_fail[o] += c.s->alloc_fail[o];
	rc = played == SL_RUN_STOPPED ? SL_RUN_STOPPED : 0;
out:
	free(c.layout);
	for (int j = 0; j < RUN_SNAPS; j++)
		free(c.snap[j]);
	sl_proc_destroy(c.p);
	sl_swapset_destroy(c.s);
	if (rc < 0)
		sl_run_result_free(res);
	return rc;
}

void sl_run_result_free(sl_run_result *res)
{
	free(res->iter);
	free(res->layout);
	free(res->frag);
	free(res->cmap);
	res->frag = NULL;
	res->cmap = NULL;
	res->iter = NULL;
	res->layout = NULL;
}
