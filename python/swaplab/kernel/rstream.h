/*
 * rstream.h - the operation stream swaplab-rdriver replays (rdriver.c).
 *
 * The operations are those of the reclaim workloads' process-level stream:
 * START (a process, pinned to a CPU), MMAP (a fresh anonymous region of
 * npages), TOUCH (pages [first, first + npages) of a region in address order,
 * one store or one load each), MUNMAP, EXIT, PHASE (a marker: phase `first`
 * begins) and DONE (end: every process has exited).
 *
 * Not yet shared with the model: this is the driver's own usemem generator
 * (N processes, each maps SIZE and writes it sequentially, `reread` read
 * passes, touches interleaved round robin `chunk` pages at a time).
 */
#ifndef SWAPLAB_RSTREAM_H
#define SWAPLAB_RSTREAM_H

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RD_MAX_REGIONS 2

enum { RD_OP_START = 1, RD_OP_MMAP, RD_OP_TOUCH, RD_OP_MUNMAP, RD_OP_EXIT, RD_OP_PHASE, RD_OP_DONE };
enum { RD_PH_SETUP = 0, RD_PH_RUN = 1 };

typedef struct rd_op {
	uint8_t kind;
	uint8_t write;
	uint8_t region;
	uint8_t pad;
	uint32_t proc;
	uint32_t cpu;
	uint32_t first;
	uint32_t npages;
} rd_op;

typedef struct rd_params {
	uint32_t nr_procs;
	uint64_t proc_pages;       /* at most UINT32_MAX (rd_op.npages) */
	uint32_t reread;
	uint32_t chunk;
	uint32_t nr_cpus;
	uint32_t first_cpu;
} rd_params;

typedef int (*rd_emit)(void *ctx, const rd_op *op);

static inline void rd_defaults(rd_params *p)
{
	memset(p, 0, sizeof(*p));
	p->nr_procs = 2;
	p->proc_pages = 16384;
	p->chunk = 64;
	p->nr_cpus = 1;
}

static inline int rd_u64(const char *v, uint64_t *out)
{
	char *end;

	if (!*v || *v == '-')
		return -1;
	*out = strtoull(v, &end, 10);
	return *end ? -1 : 0;
}

/* 1: taken, 0: not a stream option, -1: a bad value (msg says which). */
static inline int rd_set_option(rd_params *p, const char *opt, const char *v, char *msg, size_t len)
{
	uint64_t x;

	if (rd_u64(v, &x) || x > UINT32_MAX) {
		snprintf(msg, len, "%s '%s' is not a non-negative 32-bit integer", opt, v);
		return -1;
	}
	if (!strcmp(opt, "--procs"))
		p->nr_procs = (uint32_t)x;
	else if (!strcmp(opt, "--proc-pages"))
		p->proc_pages = x;
	else if (!strcmp(opt, "--reread"))
		p->reread = (uint32_t)x;
	else if (!strcmp(opt, "--chunk-pages"))
		p->chunk = (uint32_t)x;
	else if (!strcmp(opt, "--nr-cpus"))
		p->nr_cpus = (uint32_t)x;
	else if (!strcmp(opt, "--first-cpu"))
		p->first_cpu = (uint32_t)x;
	else
		return 0;
	return 1;
}

static inline int rd_validate(const rd_params *p, char *msg, size_t len)
{
	if (!p->nr_procs || p->nr_procs > 4096)
		snprintf(msg, len, "--procs must be 1..4096");
	else if (!p->proc_pages)
		snprintf(msg, len, "--proc-pages must be at least 1");
	else if (!p->chunk)
		snprintf(msg, len, "--chunk-pages must be at least 1");
	else if (!p->nr_cpus)
		snprintf(msg, len, "--nr-cpus must be at least 1");
	else
		return 0;
	return -1;
}

static inline int rd_touch_pass(const rd_params *p, rd_emit emit, void *ctx, int write)
{
	rd_op op;
	int r;

	for (uint64_t first = 0; first < p->proc_pages; first += p->chunk)
		for (uint32_t i = 0; i < p->nr_procs; i++) {
			uint64_t n = p->proc_pages - first < p->chunk ? p->proc_pages - first : p->chunk;
			memset(&op, 0, sizeof(op));
			op.kind = RD_OP_TOUCH;
			op.write = (uint8_t)write;
			op.proc = i;
			op.first = (uint32_t)first;
			op.npages = (uint32_t)n;
			if ((r = emit(ctx, &op)))
				return r;
		}
	return 0;
}

/* usemem: every process starts and maps its region; phase SETUP: the
 * sequential write; phase RUN: the read passes; every process exits. */
static inline int rd_play(const rd_params *p, rd_emit emit, void *ctx)
{
	rd_op op;
	int r;

	for (uint32_t i = 0; i < p->nr_procs; i++) {
		memset(&op, 0, sizeof(op));
		op.kind = RD_OP_START;
		op.proc = i;
		op.cpu = p->first_cpu + i % p->nr_cpus;
		if ((r = emit(ctx, &op)))
			return r;
		op.kind = RD_OP_MMAP;
		op.npages = (uint32_t)p->proc_pages;
		if ((r = emit(ctx, &op)))
			return r;
	}
	memset(&op, 0, sizeof(op));
	op.kind = RD_OP_PHASE;
	op.first = RD_PH_SETUP;
	if ((r = emit(ctx, &op)) || (r = rd_touch_pass(p, emit, ctx, 1)))
		return r;
	op.first = RD_PH_RUN;
	if ((r = emit(ctx, &op)))
		return r;
	for (uint32_t k = 0; k < p->reread; k++)
		if ((r = rd_touch_pass(p, emit, ctx, 0)))
			return r;
	for (uint32_t i = 0; i < p->nr_procs; i++) {
		memset(&op, 0, sizeof(op));
		op.kind = RD_OP_EXIT;
		op.proc = i;
		if ((r = emit(ctx, &op)))
			return r;
	}
	memset(&op, 0, sizeof(op));
	op.kind = RD_OP_DONE;
	return emit(ctx, &op);
}

#endif
