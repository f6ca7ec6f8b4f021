/*
 * bench.c - allocator churn: fill a device to a level with order-k
 * allocations, then time free+alloc pairs.
 *
 * Victims come from a ring of the most recent allocations (SL_BENCH_RING
 * entries): the freed slot is a random one of them and the new allocation
 * takes its place. The ring keeps the harness's own cost independent of the
 * device size, so the figures show the allocator's.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "swaplab/swaplab.h"

#define SL_BENCH_RING 8192u

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

int sl_bench_alloc(const sl_policy *pol, uint64_t slots, int order, double fill,
		   uint64_t pairs, uint64_t seed, sl_bench_alloc_result *out,
		   char *msg, size_t len)
{
	sl_device *d = sl_device_create(slots, SL_DEV_ZRAM, 1, pol, 0, msg, len);
	uint64_t *ring = calloc(SL_BENCH_RING, sizeof(uint64_t));
	uint64_t nr = UINT64_C(1) << order, target, nring = 0, failures = 0;
	sl_rng rng;
	int rc = -1;

	if (!d || !ring) {
		if (d)
			snprintf(msg, len, "out of memory for the benchmark ring");
		goto out;
	}
	if (fill <= 0.0 || fill >= 1.0) {
		snprintf(msg, len, "fill must be between 0 and 1");
		goto out;
	}
	sl_rng_init(&rng, SL_RNG_DEFAULT, seed);
	target = (uint64_t)((double)d->pages * fill);
	double t0 = now();
	while (d->inuse_pages + nr <= target) {
		uint64_t off = sl_swap_alloc(d, 0, order);
		if (!off)
			break;
		ring[nring++ % SL_BENCH_RING] = off;
	}
	out->fill_seconds = now() - t0;
	if (nring == 0) {
		snprintf(msg, len, "the device took no order-%d allocation", order);
		goto out;
	}
	uint64_t ringn = nring < SL_BENCH_RING ? nring : SL_BENCH_RING;
	t0 = now();
	for (uint64_t i = 0; i < pairs; i++) {
		uint32_t v = sl_rng_below(&rng, (uint32_t)ringn);
		if (ring[v])
			sl_swap_put(d, 0, ring[v], nr);
		ring[v] = sl_swap_alloc(d, 0, order);
		failures += ring[v] == 0;
	}
	double dt = now() - t0;
	out->pairs = pairs;
	out->failures = failures;
	out->ops_per_sec = dt > 0 ? (double)pairs / dt : 0;
	out->ns_per_op = pairs ? dt * 1e9 / (double)pairs : 0;
	out->fill = (double)d->inuse_pages / (double)d->pages;
	rc = 0;
out:
	free(ring);
	sl_device_destroy(d);
	return rc;
}
