/*
 * workload.c - the operation streams of the fragmentation workloads
 * (docs/workloads.md W1, W2). Shared by the model (run.c) and the kernel
 * driver, so both replay the same operations from the same seed.
 *
 * thp-swap-v1  the June 2024 test: no warm-up; each iteration 256 random
 *              64 KiB chunks of A are dropped and rewritten, (-s) 64 random
 *              4 KiB pages of B likewise, then A and B are paged out.
 * thp-swap     tools/mm/thp_swap_allocator_test.c: A (and B) written and
 *              paged out once; each iteration swaps 16 MiB of A back in
 *              (64 KiB chunks with -a, else 4 KiB pages), drops and
 *              rewrites 256 chunks, (-s) swaps 256 pages of B in, pages out.
 */
#include <stdio.h>
#include <string.h>
#include "swaplab/swaplab.h"

#define KiB UINT64_C(1024)
#define MiB (KiB * KiB)

static const char *const wl_names[SL_NR_WORKLOADS] = { "thp-swap-v1", "thp-swap" };

const char *sl_wl_name(int w) { return (w >= 0 && w < SL_NR_WORKLOADS) ? wl_names[w] : "?"; }

int sl_wl_lookup(const char *name)
{
	for (int w = 0; w < SL_NR_WORKLOADS; w++)
		if (!strcmp(name, wl_names[w]))
			return w;
	return -1;
}

void sl_wl_defaults(sl_wl_params *p, int workload)
{
	memset(p, 0, sizeof(*p));
	p->workload = workload;
	p->swap_bytes = 64 * MiB;
	p->mthp_mask = 1u << 4;        /* 64 KiB */
	p->iterations = 100;
	p->seed = 1;
	p->rng = SL_RNG_DEFAULT;
	p->region_a_bytes = 60 * MiB;
	p->region_b_bytes = workload == SL_WL_THP_SWAP_V1 ? 1 * MiB : 4 * MiB;
	p->chunk_bytes = 64 * KiB;
	p->device = SL_DEV_ZRAM;
	p->cpus = 1;
	p->swap_prio = SL_PRIO_AUTO;
}

static int bad_prio(int prio) { return prio != SL_PRIO_AUTO && (prio < 0 || prio > SL_PRIO_MAX); }

int sl_wl_validate(const sl_wl_params *p, char *msg, size_t len)
{
	if (p->workload < 0 || p->workload >= SL_NR_WORKLOADS)
		return snprintf(msg, len, "unknown workload"), -1;
	if (p->swap_bytes < SL_CLUSTER * SL_PAGE_SIZE)
		return snprintf(msg, len, "swap size %llu bytes is smaller than one cluster (2 MiB)",
				(unsigned long long)p->swap_bytes), -1;
	if (p->mthp_mask & ~UINT32_C(0x3fc))
		return snprintf(msg, len, "mTHP sizes must be 16K..2M"), -1;
	if (p->iterations < 0)
		return snprintf(msg, len, "iterations must not be negative"), -1;
	if (p->aligned_swapin && p->workload != SL_WL_THP_SWAP)
		return snprintf(msg, len, "--aligned-swapin applies to thp-swap only"), -1;
	if (p->chunk_bytes < SL_PAGE_SIZE || (p->chunk_bytes & (p->chunk_bytes - 1)))
		return snprintf(msg, len, "chunk size must be a power of two of at least 4K"), -1;
	if (p->region_a_bytes < p->chunk_bytes || p->region_a_bytes % p->chunk_bytes)
		return snprintf(msg, len, "region A size must be a non-zero multiple of the %u KiB chunk",
				p->chunk_bytes / 1024), -1;
	/* pages are indexed in 32 bits: both regions together stay below 2^31 */
	if (p->region_a_bytes / SL_PAGE_SIZE >= (UINT64_C(1) << 31) ||
	    (p->small_folios &&
	     p->region_a_bytes / SL_PAGE_SIZE + p->region_b_bytes / SL_PAGE_SIZE >= (UINT64_C(1) << 31)))
		return snprintf(msg, len, "regions larger than 8 TiB in all are not supported"), -1;
	if (p->small_folios &&
	    (p->region_b_bytes < SL_PAGE_SIZE || p->region_b_bytes % SL_PAGE_SIZE ||
	     p->region_b_bytes / SL_PAGE_SIZE > UINT32_MAX))
		return snprintf(msg, len, "region B size must be a non-zero multiple of 4K"), -1;
	if (p->region_a_offset % SL_PAGE_SIZE || p->region_a_offset >= SL_CLUSTER * SL_PAGE_SIZE)
		return snprintf(msg, len, "region A offset %u is not a multiple of 4K below 2M",
				p->region_a_offset), -1;
	if (p->region_b_offset % SL_PAGE_SIZE || p->region_b_offset >= SL_CLUSTER * SL_PAGE_SIZE)
		return snprintf(msg, len, "region B offset %u is not a multiple of 4K below 2M",
				p->region_b_offset), -1;
	if (p->cpu < 0 || p->cpu >= SL_MAX_CPUS)
		return snprintf(msg, len, "cpu must be in 0..%d", SL_MAX_CPUS - 1), -1;
	if (p->cpus < 1 || p->cpu + p->cpus > SL_MAX_CPUS)
		return snprintf(msg, len, "--cpus must be in 1..%d", SL_MAX_CPUS - p->cpu), -1;
	if (p->migrate_every && p->cpus < 2)
		return snprintf(msg, len, "--migrate-every needs --cpus of at least 2"), -1;
	if (p->nr_extra < 0 || p->nr_extra > SL_MAX_SWAPFILES - 1)
		return snprintf(msg, len, "at most %d swap devices", SL_MAX_SWAPFILES), -1;
	if (bad_prio(p->swap_prio))
		return snprintf(msg, len, "swap priority %d is outside 0..%d", p->swap_prio, SL_PRIO_MAX), -1;
	for (int i = 0; i < p->nr_extra; i++) {
		if (p->extra[i].bytes < SL_CLUSTER * SL_PAGE_SIZE)
			return snprintf(msg, len, "swap device %d of %llu bytes is smaller than one cluster (2 MiB)",
					i + 1, (unsigned long long)p->extra[i].bytes), -1;
		if (bad_prio(p->extra[i].prio))
			return snprintf(msg, len, "swap priority %d is outside 0..%d", p->extra[i].prio, SL_PRIO_MAX), -1;
	}
	return 0;
}

int sl_wl_regions(const sl_wl_params *p, sl_region_spec out[SL_MAX_REGIONS])
{
	out[0].npages = p->region_a_bytes / SL_PAGE_SIZE;
	out[0].vmflags = SL_VMA_HUGEPAGE;
	out[0].pgoff = p->region_a_offset / SL_PAGE_SIZE;
	if (!p->small_folios)
		return 1;
	out[1].npages = p->region_b_bytes / SL_PAGE_SIZE;
	out[1].vmflags = SL_VMA_NOHUGEPAGE;
	out[1].pgoff = p->region_b_offset / SL_PAGE_SIZE;
	return 2;
}

/* The emitting helpers return emit's verdict so that a stop propagates. */
#define EMIT(k, r, f, n)                                                        \
	do {                                                                    \
		sl_op op_ = { .kind = (k), .region = (r), .first = (f), .npages = (n) }; \
		int rc_ = emit(ctx, &op_);                                      \
		if (rc_)                                                        \
			return rc_;                                             \
	} while (0)

/* MADV_DONTNEED then write one range: the fresh-folio step of both tests. */
static int drop_and_write(sl_wl_emit emit, void *ctx, int region, uint32_t first, uint32_t n)
{
	EMIT(SL_OP_DONTNEED, region, first, n);
	EMIT(SL_OP_TOUCH, region, first, n);
	return 0;
}

/* Both tests' fresh folios: 256 random chunks of region A dropped and
 * written again (each a new large folio where the chunk allows one). */
static int rewrite_chunks(const sl_wl_params *p, const sl_region_spec *reg, sl_rng *rng,
			  sl_wl_emit emit, void *ctx)
{
	uint32_t cp = p->chunk_bytes / SL_PAGE_SIZE;
	uint32_t nchunks = (uint32_t)(reg[0].npages / cp);

	for (int i = 0; i < 256; i++) {
		uint32_t c = sl_rng_below(rng, nchunks);
		int rc = drop_and_write(emit, ctx, 0, c * cp, cp);
		if (rc)
			return rc;
	}
	return 0;
}

/* The end of an iteration: every region paged out (MADV_PAGEOUT). */
static int pageout_all(const sl_region_spec *reg, int nreg, sl_wl_emit emit, void *ctx)
{
	for (int r = 0; r < nreg; r++)
		EMIT(SL_OP_PAGEOUT, r, 0, (uint32_t)reg[r].npages);
	EMIT(SL_OP_ITER_END, 0, 0, 0);
	return 0;
}

static int play_v1(const sl_wl_params *p, const sl_region_spec *reg, int nreg, sl_rng *rng,
		   sl_wl_emit emit, void *ctx)
{
	int rc;

	EMIT(SL_OP_WARMUP_END, 0, 0, 0);
	for (int it = 1; it <= p->iterations; it++) {
		if ((rc = rewrite_chunks(p, reg, rng, emit, ctx)))
			return rc;
		if (nreg > 1) {
			for (int i = 0; i < 64; i++) {
				uint32_t pg = sl_rng_below(rng, (uint32_t)reg[1].npages);
				if ((rc = drop_and_write(emit, ctx, 1, pg, 1)))
					return rc;
			}
		}
		if ((rc = pageout_all(reg, nreg, emit, ctx)))
			return rc;
	}
	return 0;
}

static int play_v2(const sl_wl_params *p, const sl_region_spec *reg, int nreg, sl_rng *rng,
		   sl_wl_emit emit, void *ctx)
{
	uint32_t cp = p->chunk_bytes / SL_PAGE_SIZE;
	uint32_t nchunks = (uint32_t)(reg[0].npages / cp);
	uint32_t npages = (uint32_t)reg[0].npages;
	/* 16 MiB of swap-in per iteration either way */
	uint32_t swapin_bytes = 16u << 20;
	int rc;

	/* warm-up: each region written, then paged out, A before B */
	for (int r = 0; r < nreg; r++) {
		EMIT(SL_OP_TOUCH, r, 0, (uint32_t)reg[r].npages);
		EMIT(SL_OP_PAGEOUT, r, 0, (uint32_t)reg[r].npages);
	}
	EMIT(SL_OP_WARMUP_END, 0, 0, 0);
	for (int it = 1; it <= p->iterations; it++) {
		if (p->aligned_swapin) {
			for (uint32_t i = 0; i < swapin_bytes / p->chunk_bytes; i++) {
				uint32_t c = sl_rng_below(rng, nchunks);
				EMIT(SL_OP_TOUCH, 0, c * cp, cp);
			}
		} else {
			for (uint32_t i = 0; i < swapin_bytes / SL_PAGE_SIZE; i++) {
				uint32_t pg = sl_rng_below(rng, npages);
				EMIT(SL_OP_TOUCH, 0, pg, 1);
			}
		}
		if ((rc = rewrite_chunks(p, reg, rng, emit, ctx)))
			return rc;
		if (nreg > 1) {
			for (int i = 0; i < 256; i++) {
				uint32_t pg = sl_rng_below(rng, (uint32_t)reg[1].npages);
				EMIT(SL_OP_TOUCH, 1, pg, 1);
			}
		}
		if ((rc = pageout_all(reg, nreg, emit, ctx)))
			return rc;
	}
	return 0;
}

int sl_wl_play(const sl_wl_params *p, sl_wl_emit emit, void *ctx)
{
	sl_region_spec reg[SL_MAX_REGIONS];
	int nreg = sl_wl_regions(p, reg);
	sl_rng rng;
	int rc;

	sl_rng_init(&rng, p->rng, p->seed);
	if (p->workload == SL_WL_THP_SWAP_V1)
		rc = play_v1(p, reg, nreg, &rng, emit, ctx);
	else
		rc = play_v2(p, reg, nreg, &rng, emit, ctx);
	if (rc)
		return rc;
	EMIT(SL_OP_DONE, 0, 0, 0);
	return 0;
}
