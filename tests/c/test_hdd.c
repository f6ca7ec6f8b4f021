/*
 * test_hdd.c - a rotational device under the <= 6.13 generations
 * (scan_hdd.c): sequential runs from si->cluster_next, the first 512 free
 * slots in a row from lowest_bit when a run ends, order 0 only.
 */
#include <stdlib.h>
#include "t.h"

static sl_device *hdd(const char *policy, uint64_t slots)
{
	char msg[256];
	sl_device *d = sl_device_create(slots, SL_DEV_BLKDEV, 1, sl_policy_find(policy), 1, msg,
					sizeof(msg));
	if (!d)
		fprintf(stderr, "  %s\n", msg);
	return d;
}

/* get_swap_pages(64, order 0) as the slot cache's refill calls it. */
static int refill(sl_device *d, uint64_t *out)
{
	return d->pol->get_swap_pages(d, 0, 64, out, 0);
}

/* Refills until `want` slots came back; returns the refills it took. */
static int take(sl_device *d, uint64_t *got, int want)
{
	uint64_t out[64];
	int n = 0, calls = 0;

	while (n < want) {
		int k = refill(d, out);
		calls++;
		if (k <= 0)
			break;
		for (int i = 0; i < k && n < want; i++)
			got[n++] = out[i];
	}
	return calls;
}

TEST(hdd_classic_runs_and_first_free_window)
{
	sl_device *d = hdd("linux-6.10", 4096);
	uint64_t out[64], got[1024];

	CHECK(d != NULL);
	if (!d)
		return;
	CHECK(d->pol != sl_policy_find("linux-6.10")); /* the rotational table */
	CHECK(!strcmp(d->pol->name, "linux-6.10"));
	/* the first call looks for 512 free slots in a row (slot 1 on); that
	 * walk of 511 slots leaves latency_ration at 2, so the scan takes a
	 * break after 3 slots ("time to take a break?") */
	CHECK_EQ(refill(d, out), 3);
	CHECK_EQ(out[0], 1);
	CHECK_EQ(out[2], 3);
	/* then sequential, 64 a call; cluster_nr runs out after 515 slots
	 * and the next run starts with another search (3 slots again) */
	CHECK_EQ(refill(d, out), 64);
	CHECK_EQ(out[0], 4);
	for (int r = 2; r < 9; r++)
		CHECK_EQ(refill(d, out), 64);
	CHECK_EQ(out[63], 515);
	CHECK_EQ(refill(d, out), 3);
	CHECK_EQ(out[0], 516);
	for (int r = 10; r < 18; r++)
		CHECK_EQ(refill(d, out), 64);
	CHECK_EQ(out[63], 1030);
	/* give back 100..699: lowest_bit drops to 100 */
	for (uint64_t o = 100; o < 700; o++)
		d->pol->release(d, o);
	CHECK_INVARIANTS(d);
	/* the run goes on at the first 512 free slots from lowest_bit,
	 * unaligned (100), sequential while slots are free (to 614); then the
	 * 85 free slots 615..699 cannot hold a run: the next starts at 1031 */
	take(d, got, 600);
	for (int i = 0; i < 515; i++)
		CHECK_EQ(got[i], 100 + (uint64_t)i);
	CHECK_EQ(got[515], 1031);
	CHECK_INVARIANTS(d);
	sl_device_destroy(d);
}

TEST(hdd_classic_no_large_folios)
{
	const char *names[] = { "linux-6.9", "linux-6.10", "nonfull-2024", "linux-6.12" };

	for (int i = 0; i < 4; i++) {
		sl_device *d = hdd(names[i], 4096);
		CHECK(d != NULL);
		if (!d)
			continue;
		CHECK_EQ(sl_swap_alloc(d, 0, 4), 0);
		CHECK_EQ(sl_swap_alloc(d, 0, 9), 0);
		/* order 0 through the slot cache: the first refill's first slot */
		CHECK_EQ(sl_swap_alloc(d, 0, 0), 1);
		CHECK_EQ(sl_swap_alloc(d, 0, 0), 2);
		CHECK_EQ(d->inuse_pages, 3); /* the first refill breaks after 3 */
		CHECK_INVARIANTS(d);
		sl_device_destroy(d);
	}
}

/* When free slots run short of a run, allocation goes on from the base and
 * then scans linearly; a full device is off the avail list. */
TEST(hdd_classic_fills_every_slot)
{
	sl_device *d = hdd("linux-6.12", 1024);
	uint64_t out[64], got = 0;
	int n;

	CHECK(d != NULL);
	if (!d)
		return;
	while ((n = refill(d, out)) > 0)
		got += (uint64_t)n;
	CHECK_EQ(got, 1023);
	CHECK_EQ(d->inuse_pages, d->pages);
	d->pol->release(d, 700);
	CHECK_EQ(refill(d, out), 1);
	CHECK_EQ(out[0], 700);
	CHECK_INVARIANTS(d);
	sl_device_destroy(d);
}
