/*
 * rwl.c - the operation streams of the reclaim-driven workloads
 * (docs/workloads-reclaim.md). Shared by the model (reclaim.c) and the
 * kernel driver, so both replay the same operations from the same seed.
 *
 * usemem   N processes map SIZE each and write it sequentially, round robin
 *          chunk_pages at a time; then `reread_passes` read passes; exit.
 * pmbench  nr_procs processes each map a working set and write it once, then make
 *          `accesses` single-page accesses, uniform or Zipf, read_pct % loads.
 * build    make -jN: `jobs` worker slots each run `generations` processes one
 *          after another; a process has a lognormal size, grows to it
 *          writing chunk by chunk, re-walks it for a uniform number of passes
 *          (a chunk stored with probability 1/4, else loaded) and exits.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "swaplab/swaplab.h"
#include "swaplab/rwl.h"

#define MiB_PAGES (256u)       /* pages per MiB */

static const char *const rwl_names[SL_NR_RWL] = { "usemem", "pmbench", "build" };

const char *sl_rwl_name(int k) { return (k >= 0 && k < SL_NR_RWL) ? rwl_names[k] : "?"; }

int sl_rwl_lookup(const char *name)
{
	for (int k = 0; k < SL_NR_RWL; k++)
		if (!strcmp(name, rwl_names[k]))
			return k;
	return -1;
}

void sl_rwl_defaults(sl_rwl_params *p, int kind)
{
	memset(p, 0, sizeof(*p));
	p->kind = kind;
	p->seed = 1;
	p->device = SL_DEV_ZRAM;
	p->mthp_mask = 1u << 4;        /* 64 KiB */
	p->nr_cpus = 2;
	p->chunk_pages = 64;
	p->swap_bytes = UINT64_C(256) << 20;
	switch (kind) {
	case SL_RWL_USEMEM:
		p->nr_procs = 8;
		p->proc_pages = 8 * MiB_PAGES;
		p->limit_pages = 40 * MiB_PAGES;
		p->reread_passes = 1;
		break;
	case SL_RWL_PMBENCH:
		p->nr_procs = 1;
		p->nr_cpus = 1;
		p->wss_pages = 64 * MiB_PAGES;
		p->limit_pages = 48 * MiB_PAGES;
		p->accesses = 200000;
		p->read_pct = 50;
		p->dist = SL_RWL_UNIFORM;
		p->zipf_s = 0.8;
		break;
	case SL_RWL_BUILD:
		p->jobs = 4;
		p->generations = 4;
		p->limit_pages = 64 * MiB_PAGES;
		p->size_median_pages = 24 * MiB_PAGES;
		p->size_sigma = 0.5;
		p->size_min_pages = 2 * MiB_PAGES;
		p->size_max_pages = 128 * MiB_PAGES;
		p->life_min_passes = 1;
		p->life_max_passes = 3;
		break;
	}
}

int sl_rwl_validate(const sl_rwl_params *p, char *msg, size_t len)
{
	const uint64_t max_pages = UINT64_C(1) << 31;

	if (p->kind < 0 || p->kind >= SL_NR_RWL)
		return snprintf(msg, len, "unknown reclaim workload"), -1;
	if (p->swap_bytes < SL_CLUSTER * SL_PAGE_SIZE)
		return snprintf(msg, len, "swap size %llu bytes is smaller than one cluster (2 MiB)",
				(unsigned long long)p->swap_bytes), -1;
	if (p->mthp_mask & ~UINT32_C(0x3fc))
		return snprintf(msg, len, "mTHP sizes must be 16K..2M"), -1;
	if (p->limit_pages < 2 * SL_CLUSTER)
		return snprintf(msg, len, "memory limit must be at least 4 MiB"), -1;
	if (p->nr_cpus < 1 || p->nr_cpus > SL_MAX_CPUS)
		return snprintf(msg, len, "--cpus must be in 1..%d", SL_MAX_CPUS), -1;
	if (p->chunk_pages < 1 || p->chunk_pages > (1u << 20))
		return snprintf(msg, len, "chunk must be 1..1048576 pages"), -1;
	switch (p->kind) {
	case SL_RWL_USEMEM:
		if (p->nr_procs < 1 || p->nr_procs > 100000)
			return snprintf(msg, len, "usemem needs 1..100000 processes"), -1;
		if (p->proc_pages < 1 || p->proc_pages >= max_pages)
			return snprintf(msg, len, "usemem size must be 4K..8T"), -1;
		if (p->reread_passes > 1000)
			return snprintf(msg, len, "at most 1000 re-read passes"), -1;
		break;
	case SL_RWL_PMBENCH:
		if (p->nr_procs < 1 || p->nr_procs > 4096)
			return snprintf(msg, len, "pmbench needs 1..4096 processes"), -1;
		if (p->wss_pages < 1 || p->wss_pages >= max_pages)
			return snprintf(msg, len, "pmbench working set must be 4K..8T"), -1;
		if (p->read_pct > 100)
			return snprintf(msg, len, "read percentage must be 0..100"), -1;
		if (p->dist != SL_RWL_UNIFORM && p->dist != SL_RWL_ZIPF)
			return snprintf(msg, len, "distribution must be uniform or zipf"), -1;
		if (p->dist == SL_RWL_ZIPF && !(p->zipf_s > 0 && p->zipf_s <= 10))
			return snprintf(msg, len, "Zipf exponent must be in (0, 10]"), -1;
		if (p->dist == SL_RWL_ZIPF && p->wss_pages > (UINT64_C(1) << 26))
			return snprintf(msg, len, "Zipf working set must be at most 256 GiB"), -1;
		break;
	case SL_RWL_BUILD:
		if (p->jobs < 1 || p->jobs > 4096)
			return snprintf(msg, len, "build -j must be 1..4096"), -1;
		if (p->generations < 1 || p->generations > 100000)
			return snprintf(msg, len, "build generations must be 1..100000"), -1;
		if (p->size_min_pages < 1 || p->size_min_pages > p->size_max_pages ||
		    p->size_max_pages >= max_pages)
			return snprintf(msg, len, "build process sizes need 4K <= min <= max < 8T"), -1;
		if (p->size_median_pages < 1 || !(p->size_sigma >= 0 && p->size_sigma <= 4))
			return snprintf(msg, len, "build size median must be positive and sigma in 0..4"), -1;
		if (p->life_min_passes > p->life_max_passes || p->life_max_passes > 1000)
			return snprintf(msg, len, "build lifetime passes need min <= max <= 1000"), -1;
		break;
	}
	return 0;
}

#define EMIT(...)                                                               \
	do {                                                                    \
		sl_rop op_ = { __VA_ARGS__ };                                   \
		int rc_ = emit(ctx, &op_);                                      \
		if (rc_)                                                        \
			return rc_;                                             \
	} while (0)

/* A uniform double in [0, 1) from 53 bits of the generator. */
static double unit(sl_rng *r) { return (double)(sl_rng_next(r) >> 11) * (1.0 / 9007199254740992.0); }

static int play_usemem(const sl_rwl_params *p, sl_rwl_emit emit, void *ctx)
{
	uint32_t n = p->nr_procs;
	uint64_t npg = p->proc_pages;

	for (uint32_t i = 0; i < n; i++) {
		EMIT(.kind = SL_ROP_START, .proc = i, .cpu = i % (uint32_t)p->nr_cpus);
		EMIT(.kind = SL_ROP_MMAP, .proc = i, .npages = (uint32_t)npg);
	}
	EMIT(.kind = SL_ROP_PHASE, .first = SL_RPH_SETUP);
	for (uint32_t pass = 0; pass <= p->reread_passes; pass++) {
		if (pass == 1)
			EMIT(.kind = SL_ROP_PHASE, .first = SL_RPH_RUN);
		for (uint64_t at = 0; at < npg; at += p->chunk_pages) {
			uint32_t c = (uint32_t)(npg - at < p->chunk_pages ? npg - at : p->chunk_pages);
			for (uint32_t i = 0; i < n; i++)
				EMIT(.kind = SL_ROP_TOUCH, .write = pass == 0, .proc = i,
				     .first = (uint32_t)at, .npages = c);
		}
	}
	for (uint32_t i = 0; i < n; i++)
		EMIT(.kind = SL_ROP_EXIT, .proc = i);
	return 0;
}

/* The Zipf CDF over ranks 1..n, exponent s: cdf[i] = P(rank <= i + 1). */
static double *zipf_cdf(uint64_t n, double s)
{
	double *cdf = malloc(n * sizeof(*cdf));
	double sum = 0;

	if (!cdf)
		return NULL;
	for (uint64_t i = 0; i < n; i++)
		cdf[i] = (sum += pow((double)(i + 1), -s));
	for (uint64_t i = 0; i < n; i++)
		cdf[i] /= sum;
	cdf[n - 1] = 1.0;
	return cdf;
}

/* The rank - 1 of u in the CDF: the first i with u < cdf[i]. */
static uint64_t zipf_draw(const double *cdf, uint64_t n, double u)
{
	uint64_t lo = 0, hi = n - 1;

	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;
		if (u < cdf[mid])
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

static int play_pmbench(const sl_rwl_params *p, sl_rng *rng, sl_rwl_emit emit, void *ctx)
{
	uint64_t n = p->wss_pages;
	uint32_t np = p->nr_procs;
	double *cdf = NULL;
	int rc = 0;

	for (uint32_t i = 0; i < np; i++) {
		EMIT(.kind = SL_ROP_START, .proc = i, .cpu = i % (uint32_t)p->nr_cpus);
		EMIT(.kind = SL_ROP_MMAP, .proc = i, .npages = (uint32_t)n);
	}
	EMIT(.kind = SL_ROP_PHASE, .first = SL_RPH_SETUP);
	for (uint64_t at = 0; at < n; at += p->chunk_pages) {
		uint32_t c = (uint32_t)(n - at < p->chunk_pages ? n - at : p->chunk_pages);
		for (uint32_t i = 0; i < np; i++)
			EMIT(.kind = SL_ROP_TOUCH, .write = 1, .proc = i, .first = (uint32_t)at,
			     .npages = c);
	}
	EMIT(.kind = SL_ROP_PHASE, .first = SL_RPH_RUN);
	if (p->dist == SL_RWL_ZIPF && !(cdf = zipf_cdf(n, p->zipf_s)))
		return -1;
	/* accesses per process, the processes taking turns access by access */
	for (uint64_t a = 0; a < p->accesses && !rc; a++) {
		for (uint32_t i = 0; i < np && !rc; i++) {
			uint64_t pg = cdf ? zipf_draw(cdf, n, unit(rng)) : sl_rng_below(rng, (uint32_t)n);
			sl_rop op = { .kind = SL_ROP_TOUCH, .proc = i, .first = (uint32_t)pg, .npages = 1 };
			op.write = sl_rng_below(rng, 100) >= p->read_pct;
			rc = emit(ctx, &op);
		}
	}
	free(cdf);
	if (rc)
		return rc;
	for (uint32_t i = 0; i < np; i++)
		EMIT(.kind = SL_ROP_EXIT, .proc = i);
	return 0;
}

/* A lognormal size clamped to [min, max], a multiple of nothing: pages. */
static uint64_t build_size(const sl_rwl_params *p, sl_rng *rng)
{
	/* Box-Muller: one normal deviate from two uniforms */
	double u1 = unit(rng), u2 = unit(rng);
	double z = sqrt(-2.0 * log(1.0 - u1)) * cos(6.283185307179586 * u2);
	double v = (double)p->size_median_pages * exp(p->size_sigma * z);
	uint64_t s = v < 1 ? 1 : v >= 9e18 ? UINT64_MAX : (uint64_t)v;

	if (s < p->size_min_pages)
		s = p->size_min_pages;
	if (s > p->size_max_pages)
		s = p->size_max_pages;
	return s;
}

typedef struct build_slot {
	uint32_t proc;             /* the running process */
	uint32_t gen;              /* its generation, 0-based; generations: done */
	uint64_t size;
	uint64_t at;               /* next page of the current pass */
	uint32_t pass, passes;     /* pass 0 grows (writes); 1..passes re-walk */
} build_slot;

static int build_start(const sl_rwl_params *p, sl_rng *rng, build_slot *s, uint32_t slot,
		       uint32_t *next_proc, sl_rwl_emit emit, void *ctx)
{
	s->proc = (*next_proc)++;
	s->size = build_size(p, rng);
	s->passes = p->life_min_passes +
		    sl_rng_below(rng, p->life_max_passes - p->life_min_passes + 1);
	s->at = 0;
	s->pass = 0;
	if (slot == 0)
		EMIT(.kind = SL_ROP_PHASE, .first = SL_RPH_GEN, .npages = s->gen);
	EMIT(.kind = SL_ROP_START, .proc = s->proc, .cpu = slot % (uint32_t)p->nr_cpus);
	EMIT(.kind = SL_ROP_MMAP, .proc = s->proc, .npages = (uint32_t)s->size);
	return 0;
}

static int play_build(const sl_rwl_params *p, sl_rng *rng, sl_rwl_emit emit, void *ctx)
{
	uint32_t jobs = p->jobs, next_proc = 0, running = jobs;
	build_slot *slot = calloc(jobs, sizeof(*slot));
	int rc = 0;

	if (!slot)
		return -1;
	for (uint32_t j = 0; j < jobs && !rc; j++)
		rc = build_start(p, rng, &slot[j], j, &next_proc, emit, ctx);
	if (!rc) {
		sl_rop ph = { .kind = SL_ROP_PHASE, .first = SL_RPH_RUN };
		rc = emit(ctx, &ph);
	}
	while (running && !rc) {
		for (uint32_t j = 0; j < jobs && !rc; j++) {
			build_slot *s = &slot[j];
			if (s->gen >= p->generations)
				continue;
			uint64_t left = s->size - s->at;
			uint32_t c = (uint32_t)(left < p->chunk_pages ? left : p->chunk_pages);
			sl_rop op = { .kind = SL_ROP_TOUCH, .proc = s->proc, .first = (uint32_t)s->at,
				      .npages = c };
			op.write = s->pass == 0 || sl_rng_below(rng, 4) == 0;
			if ((rc = emit(ctx, &op)))
				break;
			s->at += c;
			if (s->at < s->size)
				continue;
			s->at = 0;
			if (++s->pass <= s->passes)
				continue;
			sl_rop ex = { .kind = SL_ROP_EXIT, .proc = s->proc };
			if ((rc = emit(ctx, &ex)))
				break;
			if (++s->gen >= p->generations)
				running--;
			else
				rc = build_start(p, rng, s, j, &next_proc, emit, ctx);
		}
	}
	free(slot);
	return rc;
}

int sl_rwl_play(const sl_rwl_params *p, sl_rwl_emit emit, void *ctx)
{
	sl_rng rng;
	int rc;

	sl_rng_init(&rng, SL_RNG_DEFAULT, p->seed);
	if (p->kind == SL_RWL_USEMEM)
		rc = play_usemem(p, emit, ctx);
	else if (p->kind == SL_RWL_PMBENCH)
		rc = play_pmbench(p, &rng, emit, ctx);
	else
		rc = play_build(p, &rng, emit, ctx);
	if (rc)
		return rc;
	EMIT(.kind = SL_ROP_DONE);
	return 0;
}

/* ------------------------------------------------------------------ presets */

/* usemem-2024: 70 processes x 1 GiB in a 40 GiB memcg, 35 GiB ramdisk swap
 * (2024 mTHP swap-out series); scaled by 1/64 in every size. */
static void pre_usemem_2024(sl_rwl_params *p)
{
	p->nr_procs = 70;
	p->proc_pages = 16 * MiB_PAGES;
	p->limit_pages = 640 * MiB_PAGES;
	p->swap_bytes = UINT64_C(560) << 20;
	p->reread_passes = 0;
}

/* usemem-n48-16g: usemem -n 48 1G on a 16 GiB machine, brd swap; 1/64
 * (the swap size was not given: 64 GiB assumed, room for the 32 GiB over
 * the memory with margin). */
static void pre_usemem_n48(sl_rwl_params *p)
{
	p->nr_procs = 48;
	p->proc_pages = 16 * MiB_PAGES;
	p->limit_pages = 256 * MiB_PAGES;
	p->swap_bytes = UINT64_C(1024) << 20;
	p->reread_passes = 0;
}

/* kbuild-v5: the v5 cover letter's zram test, 4 GiB zram under a 1 GiB
 * limit, every mTHP size, make -j32. Every memory size scaled by 1/8 (limit,
 * swap, compiler sizes), the counts kept: 32 jobs, each with its 1/32 share
 * of the limit as published. The compiler median (13 MiB, ~104 MiB unscaled)
 * is set so the run uses 85-95 % of the device, as the published 2M fallback
 * says the measured one was (docs/workloads-reclaim.md, "kbuild-v5"). */
static void pre_kbuild_v5(sl_rwl_params *p)
{
	p->jobs = 32;
	p->generations = 16;
	p->limit_pages = 128 * MiB_PAGES;
	p->swap_bytes = UINT64_C(512) << 20;
	p->mthp_mask = 0x3fc;
	p->size_median_pages = 13 * MiB_PAGES;
	p->size_min_pages = MiB_PAGES / 4;
	p->size_max_pages = 32 * MiB_PAGES;
}

/* make-j96-768m: make -j96 in a 768 MiB memcg, 10 GiB zram, 4K pages only;
 * scaled by 1/8 (12 jobs in 96 MiB, 1280 MiB zram). */
static void pre_j96_768m(sl_rwl_params *p)
{
	p->jobs = 12;
	p->generations = 3;
	p->limit_pages = 96 * MiB_PAGES;
	p->swap_bytes = UINT64_C(1280) << 20;
	p->mthp_mask = 0;
}

/* make-j96-1152m-64k: the same in 1152 MiB with the 64K size; 1/8. */
static void pre_j96_1152m(sl_rwl_params *p)
{
	pre_j96_768m(p);
	p->limit_pages = 144 * MiB_PAGES;
	p->mthp_mask = 1u << 4;
}

/* pmbench-2020: 16 pmbench processes, working sets much larger than the
 * memory, 80/20 reads/writes, random (Huang Ying, per-CPU scan base, 2020;
 * the sizes were not published): 16 x 8 MiB in 64 MiB, 2 CPUs. */
static void pre_pmbench_2020(sl_rwl_params *p)
{
	p->nr_procs = 16;
	p->nr_cpus = 2;
	p->wss_pages = 8 * MiB_PAGES;
	p->limit_pages = 64 * MiB_PAGES;
	p->accesses = 8192;
	p->read_pct = 80;
	p->mthp_mask = 0;
}

static const sl_rwl_preset presets[] = {
	{ "usemem-2024", "2024 mTHP swap-out series: usemem 70 x 1G in a 40G memcg, 35G brd swap",
	  SL_RWL_USEMEM, pre_usemem_2024 },
	{ "usemem-n48-16g", "usemem -n 48 1G on a 16G machine with brd swap", SL_RWL_USEMEM,
	  pre_usemem_n48 },
	{ "pmbench-2020", "per-CPU scan base (2020): 16-process pmbench, 80/20 random, WSS > memory",
	  SL_RWL_PMBENCH, pre_pmbench_2020 },
	{ "kbuild-v5", "v5 cover letter: kernel build, 4G zram under a 1G limit, every mTHP size",
	  SL_RWL_BUILD, pre_kbuild_v5 },
	{ "make-j96-768m", "make -j96 in a 768M memcg with 10G zram, 4K pages", SL_RWL_BUILD,
	  pre_j96_768m },
	{ "make-j96-1152m-64k", "make -j96 in a 1152M memcg with 10G zram, 64K mTHP", SL_RWL_BUILD,
	  pre_j96_1152m },
};

const sl_rwl_preset *sl_rwl_preset_at(int i)
{
	return (i >= 0 && i < (int)(sizeof(presets) / sizeof(presets[0]))) ? &presets[i] : NULL;
}

const sl_rwl_preset *sl_rwl_preset_lookup(const char *name)
{
	for (int i = 0; sl_rwl_preset_at(i); i++)
		if (!strcmp(presets[i].name, name))
			return &presets[i];
	return NULL;
}
