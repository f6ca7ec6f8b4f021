/*
 * test_property.c - random mixed-order alloc/free sequences over every
 * policy in the registry, with the invariant checker on. Frees are whole
 * allocations or aligned halves of one (MADV_DONTNEED of part of a folio).
 * SWAPLAB_SLOW_TESTS=1 runs ten times as many operations.
 */
#include <stdlib.h>
#include "t.h"

typedef struct piece { uint64_t off; uint32_t nr; } piece;

static const int order_mix[] = { 0, 0, 0, 0, 0, 2, 3, 4, 4, 4, 5, 6, 9 };

static uint64_t run_policy(const sl_policy *pol, unsigned kind, uint64_t slots, uint64_t ops,
			   uint64_t seed)
{
	char msg[256];
	sl_device *d = sl_device_create(slots, kind, 4, pol, 1, msg, sizeof(msg));
	piece *live;
	uint64_t nlive = 0, allocs = 0;
	sl_rng rng;

	if (!d)
		return 0; /* a device kind this policy does not model */
	live = calloc(slots, sizeof(piece));
	CHECK(live != NULL);
	if (!live)
		return 0;
	sl_rng_init(&rng, SL_RNG_DEFAULT, seed);
	for (uint64_t i = 0; i < ops; i++) {
		int cpu = (int)sl_rng_below(&rng, 4);
		/* keep the device busy around 60-95 % so every list gets traffic */
		int do_alloc = nlive == 0 ||
			       sl_rng_below(&rng, 100) < (d->inuse_pages * 100 < d->pages * 80 ? 60 : 40);
		if (do_alloc) {
			int order = order_mix[sl_rng_below(&rng, sizeof(order_mix) / sizeof(int))];
			uint64_t off = sl_swap_alloc(d, cpu, order);
			if (off) {
				uint32_t nr = 1u << order;
				CHECK(off % nr == 0);
				CHECK(off / SL_CLUSTER == (off + nr - 1) / SL_CLUSTER);
				live[nlive++] = (piece){ off, nr };
				allocs++;
			}
		} else {
			uint64_t v = sl_rng_below(&rng, (uint32_t)nlive);
			piece pc = live[v];
			if (pc.nr > 1 && sl_rng_below(&rng, 4) == 0) {
				/* free one half, keep the other */
				uint32_t h = pc.nr / 2;
				int first = (int)sl_rng_below(&rng, 2);
				sl_swap_put(d, cpu, first ? pc.off : pc.off + h, h);
				live[v] = (piece){ first ? pc.off + h : pc.off, h };
			} else {
				sl_swap_put(d, cpu, pc.off, pc.nr);
				live[v] = live[--nlive];
			}
		}
		if (d->pol->tick && sl_rng_below(&rng, 64) == 0)
			d->pol->tick(d); /* deferred work now and then */
		/* the checker walks the whole device: after every one of the
		 * first 2000 operations, every 16th to 20000, every 512th
		 * after (every one to 20000 was 80 % of this test's time) */
		if (i < 2000 || (i < 20000 && i % 16 == 0) || i % 512 == 0) {
			if (sl_device_check(d, msg, sizeof(msg))) {
				t_failed_checks++;
				fprintf(stderr, "  %s: op %llu: %s\n", pol->name, (unsigned long long)i, msg);
				break;
			}
		}
	}
	/* everything freed: every cluster but the header's is free again */
	while (nlive) {
		nlive--;
		sl_swap_put(d, 0, live[nlive].off, live[nlive].nr);
	}
	/* d->pol: a rotational device of a <= 6.13 generation has its own table */
	if (d->pol->drain)
		d->pol->drain(d); /* slot caches give back what they hold */
	if (d->pol->tick)
		d->pol->tick(d);
	CHECK_EQ(d->inuse_pages, 0);
	CHECK_INVARIANTS(d);
	free(live);
	sl_device_destroy(d);
	return allocs;
}

TEST(property_random_mixed_orders_every_policy)
{
	uint64_t scale = getenv("SWAPLAB_SLOW_TESTS") ? 10 : 1;
	for (int i = 0; sl_policies[i]; i++) {
		const sl_policy *pol = sl_policies[i];
		uint64_t a = 0;
		a += run_policy(pol, SL_DEV_ZRAM, 2048, 600000 * scale, 1);   /* 4 clusters */
		a += run_policy(pol, SL_DEV_ZRAM, 12800, 1000000 * scale, 2); /* 25 clusters */
		a += run_policy(pol, SL_DEV_ZRAM, 5000, 400000 * scale, 3);   /* partial last cluster */
		CHECK(a > 500000 * scale);
		/* other device kinds, where the policy models them */
		run_policy(pol, SL_DEV_BLKDEV, 5000, 200000 * scale, 4);
		run_policy(pol, SL_DEV_BLKDEV | SL_DEV_SOLIDSTATE | SL_DEV_DISCARD, 5000, 200000 * scale, 5);
		run_policy(pol, SL_DEV_SOLIDSTATE, 5000, 100000 * scale, 6);
	}
}
