/* test_device.c - device creation limits and the invariant checker itself. */
#include "t.h"
#include "swaplab/locks.h"

TEST(device_smaller_than_a_cluster_is_refused)
{
	char msg[160];
	CHECK(sl_device_create(511, SL_DEV_ZRAM, 1, sl_policy_find("linux-6.18"), 0, msg,
			       sizeof(msg)) == NULL);
	CHECK(!strcmp(msg, "swap device of 511 slots is smaller than one cluster (512 slots)"));
}

TEST(device_one_tib_fits_in_300_mib)
{
	/* 2^28 slots: 1 byte a slot + 16 bytes a cluster */
	char msg[160];
	sl_device *d = sl_device_create(UINT64_C(1) << 28, SL_DEV_ZRAM, 1,
					sl_policy_find("linux-6.18"), 0, msg, sizeof(msg));
	CHECK(d != NULL);
	CHECK_EQ(d->nr_clusters, 524288);
	CHECK_EQ(sizeof(sl_cluster), 16);
	CHECK_EQ(sl_swap_alloc(d, 0, 4), 512);
	sl_device_destroy(d);
}

TEST(device_checker_reports_count_list_and_alignment_faults)
{
	char msg[256];
	sl_device *d = t_device("linux-6.18", 4096);

	CHECK(sl_swap_alloc(d, 0, 4) == 512);
	d->ci[1].count++;
	CHECK(sl_device_check(d, msg, sizeof(msg)) != 0);
	CHECK(!strcmp(msg, "I2: cluster 1 count 17 but 16 slots are not free"));
	d->ci[1].count--;
	d->ci[3].flags = SL_CF_FULL; /* on the free list, flag says full */
	CHECK(sl_device_check(d, msg, sizeof(msg)) != 0);
	CHECK(!strncmp(msg, "I1: cluster 3 (flags 4 order 0) is on list 0", 44));
	d->ci[3].flags = SL_CF_FREE;
	sl_ci_lock(d, 2);
	sli_alloc_range(d, 1025, 4); /* a misaligned order-4 range in cluster 2 */
	sl_dev_lock(d);
	sli_move_cluster(d, 2, SL_LIST_FRAG(4), SL_CF_FRAG);
	sl_dev_unlock(d);
	sl_ci_unlock(d, 2);
	CHECK(sl_device_check(d, msg, sizeof(msg)) != 0);
	CHECK(!strcmp(msg, "I6: order-4 allocation at slot 1025 is not aligned"));
	sl_device_destroy(d);
}

TEST(device_checker_reports_double_allocation)
{
	char msg[256];
	sl_device *d = t_device("linux-6.18", 4096);
	sl_ci_lock(d, 1);
	sli_alloc_range(d, 512, 0);
	d->map[512] = 0;  /* pretend the slot looked free */
	d->ci[1].count--;
	d->inuse_pages--;
	sli_alloc_range(d, 512, 0);
	sl_dev_lock(d);
	sli_move_cluster(d, 1, SL_LIST_FRAG(0), SL_CF_FRAG);
	sl_dev_unlock(d);
	sl_ci_unlock(d, 1);
	CHECK(sl_device_check(d, msg, sizeof(msg)) != 0);
	CHECK(!strcmp(msg, "I7: 1 slots were allocated while already owned"));
	sl_device_destroy(d);
}

/* sl_swap_alloc_batch0() makes exactly the n order-0 allocations that n
 * sl_swap_alloc() calls make (policy.h alloc_batch0): on twin devices under
 * a random churn of mixed orders, frees and the discard worker - through
 * cursor runs, cluster ends, slow paths and failures of a full device - the
 * same slots, maps, clusters, lists, cursors and counters, every policy and
 * device kind. */
TEST(device_alloc_batch0_equals_single_allocations)
{
	static const char *const kinds[] = { "zram", "ssd-discard", "hdd" };
	enum { SLOTS = 12 * SL_CLUSTER - 100, STEPS = 300 };
	static uint64_t held[SLOTS], batch[3 * SL_CLUSTER / 2];
	static uint32_t held_nr[SLOTS];
	char msg[256];

	for (int pi = 0; sl_policies[pi]; pi++) {
		for (size_t ki = 0; ki < sizeof(kinds) / sizeof(kinds[0]); ki++) {
			int ok;
			unsigned kind = sl_device_kind(kinds[ki], &ok);
			sl_device *a = sl_device_create(SLOTS, kind, 2, sl_policies[pi], 1, msg, sizeof(msg));
			sl_device *b = sl_device_create(SLOTS, kind, 2, sl_policies[pi], 1, msg, sizeof(msg));
			uint32_t nheld = 0, bad = 0;
			sl_rng rng;

			if (!a || !b) { /* a policy that does not model the kind */
				sl_device_destroy(a);
				sl_device_destroy(b);
				continue;
			}
			sl_rng_init(&rng, SL_RNG_DEFAULT, 7 + (uint64_t)pi);
			for (int step = 0; step < STEPS && !bad; step++) {
				uint32_t r = sl_rng_below(&rng, 8), cpu = sl_rng_below(&rng, 2);
				if (r < 3) {
					/* a batch of up to a cluster and a half */
					uint32_t n = 1 + sl_rng_below(&rng, 3 * SL_CLUSTER / 2);
					sl_swap_alloc_batch0(b, (int)cpu, n, batch);
					for (uint32_t i = 0; i < n; i++) {
						uint64_t off = sl_swap_alloc(a, (int)cpu, 0);
						bad += off != batch[i];
						if (off && nheld < SLOTS) {
							held[nheld] = off;
							held_nr[nheld++] = 1;
						}
					}
				} else if (r < 5) {
					int order = (int)sl_rng_below(&rng, 5);
					uint64_t off = sl_swap_alloc(a, (int)cpu, order);
					bad += off != sl_swap_alloc(b, (int)cpu, order);
					if (off && nheld < SLOTS) {
						held[nheld] = off;
						held_nr[nheld++] = 1u << order;
					}
				} else if (nheld) {
					/* free a third of what is held, at random */
					for (uint32_t k = nheld / 3 + 1; k && nheld; k--) {
						uint32_t j = sl_rng_below(&rng, nheld);
						sl_swap_put(a, (int)cpu, held[j], held_nr[j]);
						sl_swap_put(b, (int)cpu, held[j], held_nr[j]);
						held[j] = held[--nheld];
						held_nr[j] = held_nr[nheld];
					}
					if (a->pol->tick) {
						a->pol->tick(a);
						b->pol->tick(b);
					}
				}
				if (!t_same_device_state(a, b) || sl_device_check(b, msg, sizeof(msg)))
					bad++;
			}
			if (bad)
				fprintf(stderr, "  policy %s, %s: the batch differs\n", sl_policies[pi]->name,
					kinds[ki]);
			CHECK_EQ(bad, 0);
			sl_device_destroy(a);
			sl_device_destroy(b);
		}
	}
}

/* sl_dev_has_free_run() by definition: some naturally aligned 2^order
 * slots all free (map byte 0). */
static int free_run_reference(const sl_device *d, int order)
{
	const uint64_t n = UINT64_C(1) << order, slots = (uint64_t)d->nr_clusters * SL_CLUSTER;

	for (uint64_t s = 0; s + n <= slots; s += n) {
		uint64_t i = 0;
		while (i < n && !d->map[s + i])
			i++;
		if (i == n)
			return 1;
	}
	return 0;
}

TEST(device_free_run_search_matches_the_definition)
{
	sl_device *d = t_device("first-fit", 4096);
	const uint64_t slots = (uint64_t)d->nr_clusters * SL_CLUSTER;
	uint64_t x = 0x9e3779b97f4a7c15u;
	int found[SL_NR_ORDERS] = { 0 }, missed[SL_NR_ORDERS] = { 0 };

	/* the new device: everything but slot 0 (the header) is free */
	for (int o = 0; o < SL_NR_ORDERS; o++)
		CHECK_EQ(sl_dev_has_free_run(d, o, NULL), 1);
	/* random maps from nearly empty to nearly full, and runs of free
	 * slots one short of each alignment */
	for (int round = 0; round < 400; round++) {
		unsigned busy = 1 + round % 64; /* of 64 slots */
		for (uint64_t s = 1; s < slots; s++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			d->map[s] = (x & 63) < busy ? (uint8_t)(1 + (x >> 8) % SL_SLOT_BAD) : 0;
		}
		if (round % 5 >= 3) {
			/* one free run of 2^o, everything else busy: aligned, or
			 * at an odd offset (no aligned run of 2^o in it) */
			int o = 1 + (round / 5) % (SL_NR_ORDERS - 1);
			uint64_t at = (UINT64_C(1) << o) * (1 + round % 3) + (round % 5 == 4);
			memset(d->map, 1, slots);
			memset(d->map + at, 0, UINT64_C(1) << o);
		}
		if (round % 50 == 49)
			memset(d->map, 1, slots); /* full */
		for (int o = 0; o < SL_NR_ORDERS; o++) {
			int want = free_run_reference(d, o);
			/* from the start, and from a hint anywhere (the scan wraps) */
			uint64_t hint = x % (slots / 4);
			CHECK_EQ(sl_dev_has_free_run(d, o, NULL), want);
			CHECK_EQ(sl_dev_has_free_run(d, o, &hint), want);
			found[o] += want;
			missed[o] += !want;
		}
	}
	/* both answers came up at every order */
	for (int o = 0; o < SL_NR_ORDERS; o++)
		CHECK(found[o] > 0 && missed[o] > 0);
	CHECK_EQ(sl_dev_has_free_run(d, -1, NULL), 0);
	CHECK_EQ(sl_dev_has_free_run(d, SL_NR_ORDERS, NULL), 0);
	memset(d->map, 0, slots); /* the fixture's destroy does not look */
	sl_device_destroy(d);
}
