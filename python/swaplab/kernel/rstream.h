/*
 * rstream.h - the operation stream swaplab-rdriver replays (rdriver.c): the
 * reclaim workloads' one generator, sl_rwl_play() (core/src/rwl.c,
 * docs/workloads-reclaim.md), which the model replays too. This header only
 * maps the driver's command-line options onto sl_rwl_params.
 */
#ifndef SWAPLAB_RSTREAM_H
#define SWAPLAB_RSTREAM_H

#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "swaplab/rwl.h"

#define RD_MAX_REGIONS SL_RWL_MAX_REGIONS

enum {
	RD_OP_START = SL_ROP_START, RD_OP_MMAP = SL_ROP_MMAP, RD_OP_TOUCH = SL_ROP_TOUCH,
	RD_OP_MUNMAP = SL_ROP_MUNMAP, RD_OP_EXIT = SL_ROP_EXIT, RD_OP_PHASE = SL_ROP_PHASE,
	RD_OP_DONE = SL_ROP_DONE
};

typedef sl_rop rd_op;
typedef sl_rwl_params rd_params;
typedef sl_rwl_emit rd_emit;

static inline int rd_u64(const char *v, uint64_t *out)
{
	char *end;

	if (!*v || *v == '-')
		return -1;
	errno = 0;
	*out = strtoull(v, &end, 10);
	return (*end || errno) ? -1 : 0;
}

/* --workload (or --preset) first: it sets the kind's defaults. 1: taken,
 * 0: not a stream option, -1: a bad value (msg says which). */
static inline int rd_set_option(rd_params *p, const char *opt, const char *v, char *msg, size_t len)
{
	static const struct { const char *opt; size_t off; int width; } u[] = {
		{ "--seed", offsetof(rd_params, seed), 64 },
		{ "--limit-pages", offsetof(rd_params, limit_pages), 64 },
		{ "--swap-bytes", offsetof(rd_params, swap_bytes), 64 },
		{ "--mthp-mask", offsetof(rd_params, mthp_mask), 32 },
		{ "--chunk-pages", offsetof(rd_params, chunk_pages), 32 },
		{ "--procs", offsetof(rd_params, nr_procs), 32 },
		{ "--proc-pages", offsetof(rd_params, proc_pages), 64 },
		{ "--reread", offsetof(rd_params, reread_passes), 32 },
		{ "--wss-pages", offsetof(rd_params, wss_pages), 64 },
		{ "--accesses", offsetof(rd_params, accesses), 64 },
		{ "--read-pct", offsetof(rd_params, read_pct), 32 },
		{ "--jobs", offsetof(rd_params, jobs), 32 },
		{ "--generations", offsetof(rd_params, generations), 32 },
		{ "--size-median-pages", offsetof(rd_params, size_median_pages), 64 },
		{ "--size-min-pages", offsetof(rd_params, size_min_pages), 64 },
		{ "--size-max-pages", offsetof(rd_params, size_max_pages), 64 },
		{ "--life-min-passes", offsetof(rd_params, life_min_passes), 32 },
		{ "--life-max-passes", offsetof(rd_params, life_max_passes), 32 },
	};
	static const struct { const char *opt; size_t off; } dbl[] = {
		{ "--zipf-s", offsetof(rd_params, zipf_s) },
		{ "--size-sigma", offsetof(rd_params, size_sigma) },
	};
	uint64_t x;

	if (!strcmp(opt, "--workload") || !strcmp(opt, "--preset")) {
		const sl_rwl_preset *pre = NULL;
		int kind;

		if (!strcmp(opt, "--preset")) {
			pre = sl_rwl_preset_lookup(v);
			if (!pre) {
				snprintf(msg, len, "unknown preset '%s'", v);
				return -1;
			}
			kind = pre->kind;
		} else if ((kind = sl_rwl_lookup(v)) < 0) {
			snprintf(msg, len, "unknown reclaim workload '%s'", v);
			return -1;
		}
		sl_rwl_defaults(p, kind);
		if (pre)
			pre->apply(p);
		return 1;
	}
	for (size_t i = 0; i < sizeof(u) / sizeof(u[0]); i++) {
		if (strcmp(opt, u[i].opt))
			continue;
		if (rd_u64(v, &x) || (u[i].width == 32 && x > UINT32_MAX)) {
			snprintf(msg, len, "%s '%s' is not a non-negative %d-bit integer", opt, v, u[i].width);
			return -1;
		}
		if (u[i].width == 64)
			*(uint64_t *)((char *)p + u[i].off) = x;
		else
			*(uint32_t *)((char *)p + u[i].off) = (uint32_t)x;
		return 1;
	}
	for (size_t i = 0; i < sizeof(dbl) / sizeof(dbl[0]); i++) {
		char *end;
		double d;

		if (strcmp(opt, dbl[i].opt))
			continue;
		errno = 0;
		d = strtod(v, &end);
		if (!*v || *end || errno || !(d >= 0)) {
			snprintf(msg, len, "%s '%s' is not a non-negative number", opt, v);
			return -1;
		}
		*(double *)((char *)p + dbl[i].off) = d;
		return 1;
	}
	if (!strcmp(opt, "--dist")) {
		if (strcmp(v, "0") && strcmp(v, "1")) {
			snprintf(msg, len, "--dist '%s' is not 0 (uniform) or 1 (zipf)", v);
			return -1;
		}
		p->dist = v[0] - '0';
		return 1;
	}
	if (!strcmp(opt, "--nr-cpus")) {
		if (rd_u64(v, &x) || x > 4096) {
			snprintf(msg, len, "--nr-cpus '%s' is not 0..4096", v);
			return -1;
		}
		p->nr_cpus = (int)x;
		return 1;
	}
	return 0;
}

static inline void rd_defaults(rd_params *p)
{
	sl_rwl_defaults(p, SL_RWL_USEMEM);
}

static inline int rd_validate(const rd_params *p, char *msg, size_t len)
{
	return sl_rwl_validate(p, msg, len);
}

static inline int rd_play(const rd_params *p, rd_emit emit, void *ctx)
{
	return sl_rwl_play(p, emit, ctx);
}

/* The resolved parameters as one JSON object (--print-params). */
static inline void rd_print_params(const rd_params *p, FILE *f)
{
	fprintf(f, "{\"workload\":\"%s\",\"seed\":%" PRIu64 ",\"limit_pages\":%" PRIu64
		",\"swap_bytes\":%" PRIu64 ",\"mthp_mask\":%u,\"nr_cpus\":%d,\"chunk_pages\":%u,"
		"\"nr_procs\":%u,\"proc_pages\":%" PRIu64 ",\"reread_passes\":%u,\"wss_pages\":%" PRIu64
		",\"accesses\":%" PRIu64 ",\"read_pct\":%u,\"dist\":%d,\"zipf_s\":%.17g,\"jobs\":%u,"
		"\"generations\":%u,\"size_median_pages\":%" PRIu64 ",\"size_sigma\":%.17g,"
		"\"size_min_pages\":%" PRIu64 ",\"size_max_pages\":%" PRIu64 ",\"life_min_passes\":%u,"
		"\"life_max_passes\":%u}\n",
		sl_rwl_name(p->kind), p->seed, p->limit_pages, p->swap_bytes, p->mthp_mask, p->nr_cpus,
		p->chunk_pages, p->nr_procs, p->proc_pages, p->reread_passes, p->wss_pages, p->accesses,
		p->read_pct, p->dist, p->zipf_s, p->jobs, p->generations, p->size_median_pages,
		p->size_sigma, p->size_min_pages, p->size_max_pages, p->life_min_passes,
		p->life_max_passes);
}

#endif
