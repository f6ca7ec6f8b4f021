/*
 * test_swapset.c - several swap devices with priorities (swapset.c): the
 * avail list's order and rotation, each generation's layer above the
 * devices, and a random property test over every policy.
 */
#include <stdlib.h>
#include "t.h"

static sl_swapset *t_set(const char *policy, int n, const uint64_t *slots, const unsigned *kind,
			 const int *prio, int cpus)
{
	char msg[256];
	sl_device *d[SL_MAX_SWAPFILES];
	const sl_policy *pol = sl_policy_find(policy);

	for (int t = 0; t < n; t++) {
		d[t] = sl_device_create(slots[t], kind[t], cpus, pol, 1, msg, sizeof(msg));
		if (!d[t]) {
			fprintf(stderr, "  %s\n", msg);
			return NULL;
		}
	}
	sl_swapset *s = sl_swapset_create(d, prio, n, 1, msg, sizeof(msg));
	if (!s)
		fprintf(stderr, "  %s\n", msg);
	return s;
}

#define CHECK_SET(s)                                                            \
	do {                                                                    \
		char m_[256];                                                   \
		if (sl_set_check(s, m_, sizeof(m_))) {                          \
			t_failed_checks++;                                      \
			fprintf(stderr, "  %s:%d: %s\n", __FILE__, __LINE__, m_); \
		}                                                               \
	} while (0)

static const unsigned zram2[] = { SL_DEV_ZRAM, SL_DEV_ZRAM };
static const uint64_t small2[] = { 4096, 4096 };
static const int prio55[] = { 5, 5 };

/* Lengths of the runs of consecutive allocations on one device. */
static int type_runs(sl_swapset *s, int order, int n, int *runs, int maxruns)
{
	int nruns = 0, last = -1;

	for (int i = 0; i < n; i++) {
		uint64_t e = sl_set_alloc(s, 0, order);
		if (!e)
			break;
		if (sl_entry_type(e) != last) {
			if (nruns == maxruns)
				break;
			runs[nruns++] = 0;
			last = sl_entry_type(e);
		}
		runs[nruns - 1]++;
	}
	return nruns;
}

TEST(swapset_priorities_as_swapon_sets_them)
{
	const uint64_t slots[] = { 1024, 1024, 1024 };
	const unsigned kind[] = { SL_DEV_ZRAM, SL_DEV_ZRAM, SL_DEV_ZRAM };
	const int prio[] = { SL_PRIO_AUTO, 7, SL_PRIO_AUTO };
	sl_swapset *s = t_set("linux-6.18", 3, slots, kind, prio, 1);

	CHECK(s != NULL);
	if (!s)
		return;
	/* swapon without -p: -2, then -3; highest priority first */
	CHECK_EQ(s->prio[0], -2);
	CHECK_EQ(s->prio[1], 7);
	CHECK_EQ(s->prio[2], -3);
	CHECK_EQ(s->navail, 3);
	CHECK_EQ(s->avail[0], 1);
	CHECK_EQ(s->avail[1], 0);
	CHECK_EQ(s->avail[2], 2);
	/* distinct priorities: everything goes to the highest */
	for (int i = 0; i < 100; i++)
		CHECK_EQ(sl_entry_type(sl_set_alloc(s, 0, 0)), 1);
	CHECK_SET(s);
	sl_swapset_destroy(s);
}

TEST(swapset_refuses_bad_sets)
{
	char msg[256];
	const sl_policy *pol = sl_policy_find("linux-6.18");
	sl_device *d = sl_device_create(1024, SL_DEV_ZRAM, 1, pol, 0, msg, sizeof(msg));
	int prio = 40000;

	CHECK(sl_swapset_create(&d, &prio, 1, 0, msg, sizeof(msg)) == NULL);
	CHECK(!strcmp(msg, "swap priority 40000 is outside 0..32767"));
	CHECK(sl_swapset_create(&d, &prio, 0, 0, msg, sizeof(msg)) == NULL);
	CHECK(!strcmp(msg, "0 swap devices: the model takes 1 to 8"));
	sl_device_destroy(d);
}

/* <= 6.13: the slot cache refills 64 entries from one device, and the next
 * refill requeues to the other device of the same priority. */
TEST(swapset_6_12_equal_priority_takes_turns_per_refill)
{
	sl_swapset *s = t_set("linux-6.12", 2, small2, zram2, prio55, 1);
	int runs[8];

	CHECK(s != NULL);
	if (!s)
		return;
	CHECK_EQ(type_runs(s, 0, 256, runs, 8), 4);
	for (int i = 0; i < 4; i++)
		CHECK_EQ(runs[i], 64);
	/* large folios come straight from get_swap_pages(): one device each */
	for (int i = 0; i < 8; i++)
		CHECK_EQ(sl_entry_type(sl_set_alloc(s, 0, 4)), i % 2);
	CHECK_SET(s);
	sl_swapset_destroy(s);
}

/* 6.15+: the per-CPU cursor names a device; the allocator changes device
 * only when the cursor's cluster is used up (device rotation per consumed
 * cluster, as the 6.15 patch says). Cluster 0 holds the header: 511 slots. */
TEST(swapset_6_18_equal_priority_turns_per_cluster)
{
	sl_swapset *s = t_set("linux-6.18", 2, small2, zram2, prio55, 1);
	int runs[8];

	CHECK(s != NULL);
	if (!s)
		return;
	CHECK_EQ(type_runs(s, 0, 2046, runs, 8), 4);
	CHECK_EQ(runs[0], 511);
	CHECK_EQ(runs[1], 511);
	CHECK_EQ(runs[2], 512);
	CHECK_EQ(runs[3], 512);
	CHECK_EQ(s->pcp_si[0], 1);
	CHECK_SET(s);
	sl_swapset_destroy(s);
}

TEST(swapset_6_15_turns_per_free_cluster)
{
	sl_swapset *s = t_set("linux-6.15", 2, small2, zram2, prio55, 1);
	int runs[8];

	CHECK(s != NULL);
	if (!s)
		return;
	/* 6.15 takes a free cluster first: whole clusters from the start */
	CHECK_EQ(type_runs(s, 0, 2048, runs, 8), 4);
	for (int i = 0; i < 4; i++)
		CHECK_EQ(runs[i], 512);
	/* order 4: 32 folios per cluster, then the other device */
	CHECK_EQ(type_runs(s, 4, 64, runs, 8), 2);
	CHECK_EQ(runs[0], 32);
	CHECK_EQ(runs[1], 32);
	CHECK_SET(s);
	sl_swapset_destroy(s);
}

/* A large folio tries only the first device on the avail list; order 0
 * goes on to the next. A full device leaves the list and comes back when
 * a slot frees. */
static void large_first_device_only(const char *policy)
{
	const uint64_t slots[] = { 512, 4096 };
	const int prio[] = { 10, 1 };
	sl_swapset *s = t_set(policy, 2, slots, zram2, prio, 1);
	uint64_t e, first = 0;

	CHECK(s != NULL);
	if (!s)
		return;
	/* device 0 is one cluster holding the header: no room for order 4 */
	CHECK_EQ(sl_set_alloc(s, 0, 4), 0);
	CHECK_EQ(s->alloc_fail[4], 1);
	for (int i = 0; i < 511; i++) {
		e = sl_set_alloc(s, 0, 0);
		CHECK_EQ(sl_entry_type(e), 0);
		if (i == 100)
			first = e;
	}
	sl_set_drain(s);
	CHECK_EQ(s->dev[0]->inuse_pages, 511);
	CHECK_EQ(s->navail, 1); /* full: off the list */
	e = sl_set_alloc(s, 0, 4);
	CHECK_EQ(sl_entry_type(e), 1);
	CHECK_EQ(sl_entry_off(e) % 16, 0);
	CHECK_SET(s);
	sl_set_put(s, 0, first, 1);
	sl_set_drain(s);
	CHECK_EQ(s->navail, 2);
	CHECK_EQ(s->avail[0], 0);
	CHECK_EQ(sl_set_alloc(s, 0, 0), first);
	CHECK_SET(s);
	sl_swapset_destroy(s);
}

TEST(swapset_large_folio_tries_first_device_only_6_18)
{
	large_first_device_only("linux-6.18");
}

TEST(swapset_large_folio_tries_first_device_only_6_12)
{
	large_first_device_only("linux-6.12");
}

TEST(swapset_one_device_is_the_device_alone)
{
	char msg[256];
	const sl_policy *pol = sl_policy_find("linux-6.12");
	sl_device *a = sl_device_create(8192, SL_DEV_ZRAM, 2, pol, 1, msg, sizeof(msg));
	sl_device *b = sl_device_create(8192, SL_DEV_ZRAM, 2, pol, 1, msg, sizeof(msg));
	int prio = SL_PRIO_AUTO;
	sl_swapset *s = sl_swapset_create(&b, &prio, 1, 0, msg, sizeof(msg));
	sl_rng rng;

	CHECK(s && !s->slots);
	if (!s)
		return;
	sl_rng_init(&rng, SL_RNG_DEFAULT, 3);
	for (int i = 0; i < 3000; i++) {
		int cpu = (int)sl_rng_below(&rng, 2), order = sl_rng_below(&rng, 3) ? 0 : 4;
		CHECK_EQ(sl_set_alloc(s, cpu, order), sl_swap_alloc(a, cpu, order));
	}
	CHECK(!memcmp(a->map, b->map, (size_t)a->nr_clusters * SL_CLUSTER));
	sl_swapset_destroy(s);
	CHECK(b->set == NULL);
	sl_device_destroy(a);
	sl_device_destroy(b);
}

typedef struct piece { uint64_t e; uint32_t nr; } piece;

static const int order_mix[] = { 0, 0, 0, 0, 0, 2, 4, 4, 9 };

/* Random allocations and frees over three devices, two of one priority:
 * every device's invariants and the avail list's after every operation
 * early on, then every 256. */
static uint64_t set_property(const char *policy, const unsigned *kind, uint64_t ops)
{
	const uint64_t slots[] = { 3000, 2048, 1536 };
	const int prio[] = { 3, 3, SL_PRIO_AUTO };
	char msg[256];
	sl_device *d[3];
	const sl_policy *pol = sl_policy_find(policy);
	uint64_t nlive = 0, allocs = 0, total = 0;
	sl_rng rng;

	for (int t = 0; t < 3; t++) {
		d[t] = sl_device_create(slots[t], kind[t], 2, pol, 1, msg, sizeof(msg));
		if (!d[t]) {
			while (t--)
				sl_device_destroy(d[t]);
			return 0; /* a kind this policy does not model */
		}
		total += d[t]->pages;
	}
	sl_swapset *s = sl_swapset_create(d, prio, 3, 1, msg, sizeof(msg));
	piece *live = calloc(total, sizeof(piece));
	CHECK(s && live);
	if (!s || !live)
		return 0;
	sl_rng_init(&rng, SL_RNG_DEFAULT, 11);
	for (uint64_t i = 0; i < ops; i++) {
		int cpu = (int)sl_rng_below(&rng, 2);
		uint64_t inuse = sl_set_inuse(s);
		if (nlive == 0 || sl_rng_below(&rng, 100) < (inuse * 100 < total * 85 ? 60 : 40)) {
			int order = order_mix[sl_rng_below(&rng, sizeof(order_mix) / sizeof(int))];
			uint64_t e = sl_set_alloc(s, cpu, order);
			if (e) {
				CHECK(sl_entry_off(e) % (1u << order) == 0);
				live[nlive++] = (piece){ e, 1u << order };
				allocs++;
			}
		} else {
			uint64_t v = sl_rng_below(&rng, (uint32_t)nlive);
			sl_set_put(s, cpu, live[v].e, live[v].nr);
			live[v] = live[--nlive];
		}
		if (sl_rng_below(&rng, 64) == 0)
			sl_set_tick(s);
		if ((i < 5000 || i % 256 == 0) && sl_set_check(s, msg, sizeof(msg))) {
			t_failed_checks++;
			fprintf(stderr, "  %s: op %llu: %s\n", policy, (unsigned long long)i, msg);
			break;
		}
	}
	while (nlive--)
		sl_set_put(s, 0, live[nlive].e, live[nlive].nr);
	sl_set_drain(s);
	sl_set_tick(s);
	CHECK_EQ(sl_set_inuse(s), 0);
	CHECK_SET(s);
	CHECK_EQ(s->navail, 3);
	free(live);
	sl_swapset_destroy(s);
	return allocs;
}

TEST(swapset_property_every_policy)
{
	const unsigned solid[] = { SL_DEV_ZRAM, SL_DEV_ZRAM, SL_DEV_BLKDEV | SL_DEV_SOLIDSTATE };
	const unsigned mixed[] = { SL_DEV_BLKDEV, SL_DEV_BLKDEV | SL_DEV_SOLIDSTATE | SL_DEV_DISCARD,
				   SL_DEV_SOLIDSTATE };
	const unsigned rotational[] = { SL_DEV_BLKDEV, SL_DEV_ZRAM, SL_DEV_BLKDEV };
	uint64_t scale = getenv("SWAPLAB_SLOW_TESTS") ? 10 : 1;

	for (int i = 0; sl_policies[i]; i++) {
		const char *name = sl_policies[i]->name;
		CHECK(set_property(name, solid, 40000 * scale) > 10000);
		CHECK(set_property(name, rotational, 40000 * scale) > 10000);
		uint64_t a = set_property(name, mixed, 40000 * scale);
		/* the 6.14+ generations and the baselines model every kind */
		if (sl_policies[i]->alloc_slow || !sl_policies[i]->get_swap_pages)
			CHECK(a > 10000);
	}
}

/* A slot-cache drain inside an allocation (the caches deactivate when free
 * swap runs low) frees slots of a full device; swap_range_free() puts it
 * back on the avail list at once, so the direct allocation that follows
 * takes the higher-priority device. */
TEST(swapset_drained_device_rejoins_before_the_walk)
{
	const uint64_t slots[] = { 1024, 1024 };
	const int prio[] = { 10, 5 };
	sl_swapset *s = t_set("linux-6.12", 2, slots, zram2, prio, 2);
	int bad = 0;

	CHECK(s != NULL);
	if (!s)
		return;
	CHECK(sl_set_alloc(s, 1, 0) != 0); /* CPU 1's cache holds 63 of device 0 */
	for (int n = 0; n < 1800; n++) {
		uint64_t e = sl_set_alloc(s, 0, 0);
		if (!e)
			break;
		sl_device *d0 = s->dev[0];
		if (sl_entry_type(e) == 1 && d0->inuse_pages < d0->pages)
			bad++;
	}
	CHECK_EQ(bad, 0);
	CHECK_SET(s);
	sl_swapset_destroy(s);
}

/* 6.18.4+: an order-0 failure discards on the first device (priority
 * order) that has pending discards, then retries; the others keep theirs. */
TEST(swapset_6_18_sync_discard_stops_at_first_device)
{
	const uint64_t slots[] = { 1024, 1024 };
	const unsigned disc[] = { SL_DEV_BLKDEV | SL_DEV_SOLIDSTATE | SL_DEV_DISCARD,
				  SL_DEV_BLKDEV | SL_DEV_SOLIDSTATE | SL_DEV_DISCARD };
	const int prio[] = { 10, 5 };
	sl_swapset *s = t_set("linux-6.18", 2, slots, disc, prio, 1);
	uint64_t e;
	int n = 0;

	CHECK(s != NULL);
	if (!s)
		return;
	while ((e = sl_set_alloc(s, 0, 0)))
		n++;
	CHECK_EQ(n, 2 * 1023);
	for (int t = 0; t < 2; t++)
		sl_set_put(s, 0, sl_entry(t, 512), 512);
	CHECK_EQ(s->dev[0]->list_len[SL_LIST_DISCARD], 1);
	CHECK_EQ(s->dev[1]->list_len[SL_LIST_DISCARD], 1);
	e = sl_set_alloc(s, 0, 0);
	CHECK_EQ(e, sl_entry(0, 512));
	CHECK_EQ(s->dev[0]->list_len[SL_LIST_DISCARD], 0);
	CHECK_EQ(s->dev[1]->list_len[SL_LIST_DISCARD], 1);
	CHECK_SET(s);
	sl_swapset_destroy(s);
}
