/*
 * cluster-dump.c - the cluster states behind each swap-out fallback, for
 * docs/findings/mixed-size-fallback.md. A debugging tool, not part of the
 * package: it plays a workload on the model with the named policy wrapped
 * so that every failed allocation can print the device's lists and, per
 * cluster order, how many clusters, free slots and aligned free holes of
 * the failing size there are.
 *
 * Build (after the C core is built, e.g. cmake -S . -B build -DSWAPLAB_PYTHON=OFF
 * && cmake --build build):
 *   cc -O1 -D_GNU_SOURCE -I core/include docs/findings/cluster-dump.c \
 *      build/libswaplab_core.a -lpthread -o cluster-dump
 * Run:
 *   ./cluster-dump POLICY WORKLOAD MTHP FLAGS ITERATIONS [SEED [SWAP_MIB [ITERS]]]
 *   e.g. ./cluster-dump linux-6.18 thp-swap 16K,64K,256K,1M a 50 1 64 1,2,50
 * MTHP: sizes in K (16K..2048K, or 2M); FLAGS: any of a (-a), s (-s), or -;
 * ITERS: the iterations to report (default all). For each reported
 * iteration: the first failure of each order with the lists then, and the
 * cumulative swpout / fallback counts at its end.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "swaplab/swaplab.h"
#include "swaplab/cluster.h"

static sl_policy wrapped;
static const sl_policy *inner;
static int iter;
static unsigned seen;
static const char *iters;

static int reported(void)
{
	char b[16];

	if (!iters)
		return 1;
	snprintf(b, sizeof(b), ",%d,", iter);
	return strstr(iters, b) != NULL;
}

/* Aligned runs of 2^k free slots in cluster c. */
static uint32_t holes(const sl_device *d, uint32_t c, int k)
{
	uint32_t n = 0, nr = 1u << k;

	for (uint64_t off = sli_cluster_offset(c); off < sli_cluster_offset(c) + SL_CLUSTER; off += nr)
		n += (uint32_t)sli_range_free(d, off, nr);
	return n;
}

static void dump(sl_device *d, int cpu, int k)
{
	uint32_t minc = SL_CLUSTER;

	printf("[it %d] order %d fails: %llu of %llu slots in use; free %u full %u", iter, k,
	       (unsigned long long)d->inuse_pages, (unsigned long long)d->pages,
	       d->list_len[SL_LIST_FREE], d->list_len[SL_LIST_FULL]);
	for (int o = 0; o < SL_NR_ORDERS; o++)
		if (d->list_len[SL_LIST_NONFULL(o)] || d->list_len[SL_LIST_FRAG(o)])
			printf(" nonfull[%d] %u frag[%d] %u", o, d->list_len[SL_LIST_NONFULL(o)], o,
			       d->list_len[SL_LIST_FRAG(o)]);
	printf("\n");
	for (int o = 0; o < SL_NR_ORDERS; o++) {
		uint32_t nc = 0, fs = 0, h = 0, hc = 0, by[SL_CF_DISCARD + 1] = { 0 };
		for (uint32_t c = 0; c < d->nr_clusters; c++) {
			const sl_cluster *ci = &d->ci[c];
			if (ci->count == 0 || ci->order != o)
				continue;
			nc++;
			by[ci->flags]++;
			fs += SL_CLUSTER - ci->count;
			uint32_t x = holes(d, c, k);
			h += x;
			hc += x > 0;
			if (c && ci->count < minc)
				minc = ci->count;
		}
		if (nc)
			printf("  order-%d clusters %u (nonfull %u, frag %u, full %u): %u free slots, "
			       "%u aligned %u-slot holes in %u clusters\n",
			       o, nc, by[SL_CF_NONFULL], by[SL_CF_FRAG], by[SL_CF_FULL], fs, h, 1u << k, hc);
	}
	printf("  emptiest cluster (not 0) holds %u entries; cursor[%d] %llu\n", minc, k,
	       (unsigned long long)*sli_cursor(d, cpu, k));
}

static uint64_t wrapped_alloc(sl_device *d, int cpu, int order)
{
	uint64_t off = inner->alloc(d, cpu, order);

	if (!off && !(seen & (1u << order)) && reported()) {
		seen |= 1u << order;
		dump(d, cpu, order);
	}
	return off;
}

static int play(void *ctx, const sl_op *op)
{
	sl_proc *p = ctx;

	switch (op->kind) {
	case SL_OP_TOUCH: sl_proc_touch(p, op->region, op->first, op->npages); break;
	case SL_OP_DONTNEED: sl_proc_dontneed(p, op->region, op->first, op->npages); break;
	case SL_OP_PAGEOUT: sl_proc_pageout(p, op->region, op->first, op->npages); break;
	case SL_OP_WARMUP_END: iter = 1; seen = 0; break;
	case SL_OP_ITER_END:
		if (reported()) {
			const sl_proc_stats *st = sl_proc_stats_get(p);
			printf("[it %d] end, since the start: swpout/fallback", iter);
			for (int o = 1; o < SL_NR_ORDERS; o++)
				if (st->swpout[o] || st->swpout_fallback[o])
					printf(" %uK %llu/%llu", 4u << o, (unsigned long long)st->swpout[o],
					       (unsigned long long)st->swpout_fallback[o]);
			printf("\n");
		}
		iter++;
		seen = 0;
		break;
	}
	return 0;
}

int main(int argc, char **argv)
{
	sl_wl_params p;
	sl_region_spec reg[SL_MAX_REGIONS];
	char msg[256], *s;

	if (argc < 6 || !(inner = sl_policy_find(argv[1])) || sl_wl_lookup(argv[2]) < 0) {
		fprintf(stderr, "usage: cluster-dump POLICY WORKLOAD MTHP FLAGS ITERATIONS [SEED [SWAP_MIB [ITERS]]]\n");
		return 2;
	}
	sl_wl_defaults(&p, sl_wl_lookup(argv[2]));
	p.mthp_mask = 0;
	for (s = strtok(argv[3], ","); s; s = strtok(NULL, ",")) {
		unsigned long kb = strtoul(s, NULL, 10) * (strchr(s, 'M') ? 1024 : 1);
		for (int o = 2; o < SL_NR_ORDERS; o++)
			if (kb == 4ul << o)
				p.mthp_mask |= 1u << o;
	}
	p.aligned_swapin = strchr(argv[4], 'a') != NULL;
	p.small_folios = strchr(argv[4], 's') != NULL;
	p.iterations = atoi(argv[5]);
	p.seed = argc > 6 ? strtoull(argv[6], NULL, 10) : 1;
	if (argc > 7)
		p.swap_bytes = strtoull(argv[7], NULL, 10) << 20;
	iters = argc > 8 ? argv[8] : NULL;
	if (iters) {
		/* ",1,2," so that strstr finds whole numbers */
		static char b[256];
		snprintf(b, sizeof(b), ",%s,", iters);
		iters = b;
	}
	if (sl_wl_validate(&p, msg, sizeof(msg))) {
		fprintf(stderr, "%s\n", msg);
		return 2;
	}
	wrapped = *inner;
	wrapped.alloc = wrapped_alloc;
	sl_device *d = sl_device_create(p.swap_bytes / SL_PAGE_SIZE, p.device, 1, &wrapped, 0, msg,
					sizeof(msg));
	if (!d) {
		fprintf(stderr, "%s\n", msg);
		return 2;
	}
	sl_proc *pr = sl_proc_create(d, 0, p.mthp_mask, sl_policy_swapin_mode(inner), reg,
				     sl_wl_regions(&p, reg));
	iter = 0;
	sl_wl_play(&p, play, pr);
	sl_proc_destroy(pr);
	sl_device_destroy(d);
	return 0;
}
