/*
 * test_swap_slots.c - the slot-cache layer (swap_slots.c) on its contract:
 * it reaches its owner only through get / release with the owner's pointer,
 * holds swap entries (a lone device's are type 0), the devices of a set
 * share one cache, and a drain gives back every entry it held.
 */
#include <stdlib.h>
#include "t.h"
#include "swaplab/swap_slots.h"

/* An owner that hands out entries next, next + 1, ... of one type and
 * records every call. */
typedef struct fake_owner {
	int type;
	uint64_t next;
	uint64_t left;                  /* entries it can still give */
	int gets, releases;
	int last_get_n;
	const void *bad_owner;          /* a callback saw another pointer */
	uint64_t released[1024];
	int nreleased;
	int release_sizes[64];
} fake_owner;

static fake_owner *seen;

static int fake_get(void *owner, int cpu, int n, uint64_t *out)
{
	fake_owner *f = owner;
	int got = 0;

	(void)cpu;
	if (owner != seen)
		seen->bad_owner = owner;
	f->gets++;
	f->last_get_n = n;
	while (got < n && f->left) {
		out[got++] = sl_entry(f->type, f->next++);
		f->left--;
	}
	return got;
}

static void fake_release(void *owner, const uint64_t *e, int n)
{
	fake_owner *f = owner;

	if (owner != seen)
		seen->bad_owner = owner;
	if (f->releases < 64)
		f->release_sizes[f->releases] = n;
	f->releases++;
	for (int i = 0; i < n && f->nreleased < 1024; i++)
		f->released[f->nreleased++] = e[i];
}

#define PLENTY UINT64_C(1000000) /* free swap far above 5 x 64 per CPU */

/* Caches for `cpus` CPUs owned by f. */
static void fake_init(sl_swap_slots *ss, fake_owner *f, int cpus)
{
	seen = f;
	CHECK_EQ(sl_swap_slots_init(ss, cpus, 1, f, fake_get, fake_release), 0);
}

/* Every callback saw f's pointer; the caches go. */
static void fake_fini(sl_swap_slots *ss, fake_owner *f)
{
	CHECK(f->bad_owner == NULL);
	sl_swap_slots_fini(ss);
}

TEST(slots_callbacks_get_the_owner_and_batches_of_64)
{
	fake_owner f = { .type = 3, .next = 100, .left = 1000 };
	sl_swap_slots ss;

	fake_init(&ss, &f, 2);
	/* the first call activates the cache and refills it with 64 */
	CHECK_EQ(sl_swap_slots_alloc(&ss, 0, PLENTY), sl_entry(3, 100));
	CHECK_EQ(f.gets, 1);
	CHECK_EQ(f.last_get_n, SL_SWAP_SLOTS_CACHE_SIZE);
	for (int i = 1; i < SL_SWAP_SLOTS_CACHE_SIZE; i++)
		CHECK_EQ(sl_swap_slots_alloc(&ss, 0, PLENTY), sl_entry(3, 100 + i));
	CHECK_EQ(f.gets, 1);
	/* the 65th takes a new batch; CPU 1 has a cache of its own */
	CHECK_EQ(sl_swap_slots_alloc(&ss, 0, PLENTY), sl_entry(3, 164));
	CHECK_EQ(sl_swap_slots_alloc(&ss, 1, PLENTY), sl_entry(3, 228));
	CHECK_EQ(f.gets, 3);
	/* frees gather until 64 wait; the 65th releases those 64, push order */
	for (int i = 0; i < SL_SWAP_SLOTS_CACHE_SIZE; i++)
		sl_swap_slots_free(&ss, 0, sl_entry(3, 100 + i));
	CHECK_EQ(f.releases, 0);
	sl_swap_slots_free(&ss, 0, sl_entry(3, 164));
	CHECK_EQ(f.releases, 1);
	CHECK_EQ(f.release_sizes[0], SL_SWAP_SLOTS_CACHE_SIZE);
	for (int i = 0; i < SL_SWAP_SLOTS_CACHE_SIZE; i++)
		CHECK_EQ(f.released[i], sl_entry(3, 100 + i));
	fake_fini(&ss, &f);
}

TEST(slots_inactive_cache_passes_through)
{
	fake_owner f = { .type = 0, .next = 1, .left = 10 };
	sl_swap_slots ss;
	uint64_t low = 5 * SL_SWAP_SLOTS_CACHE_SIZE; /* one CPU: not above 5 x 64 */

	fake_init(&ss, &f, 1);
	CHECK_EQ(sl_swap_slots_alloc(&ss, 0, low), 1);
	CHECK_EQ(f.last_get_n, 1);
	CHECK_EQ(sl_swap_slots_alloc(&ss, 0, low), 2);
	CHECK_EQ(f.gets, 2);
	sl_swap_slots_free(&ss, 0, 1);
	CHECK_EQ(f.releases, 1);
	CHECK_EQ(f.release_sizes[0], 1);
	CHECK_EQ(f.released[0], 1);
	/* an owner with nothing left: 0 */
	f.left = 0;
	CHECK_EQ(sl_swap_slots_alloc(&ss, 0, low), 0);
	fake_fini(&ss, &f);
}

/* Every entry the caches hold comes back through release(): the reserved
 * ones of each CPU (in cache order), then its pending frees. */
TEST(slots_drain_returns_every_entry)
{
	fake_owner f = { .type = 1, .next = 10, .left = 1000 };
	sl_swap_slots ss;

	fake_init(&ss, &f, 2);
	for (int i = 0; i < 5; i++)
		sl_swap_slots_alloc(&ss, 0, PLENTY);             /* 10..14, 15..73 cached */
	uint64_t e1 = sl_swap_slots_alloc(&ss, 1, PLENTY);      /* 74, 75..137 cached */
	sl_swap_slots_free(&ss, 0, sl_entry(1, 12));
	sl_swap_slots_free(&ss, 1, e1);
	sl_swap_slots_drain(&ss);
	CHECK_EQ(f.nreleased, 59 + 1 + 63 + 1);
	for (int i = 0; i < 59; i++)
		CHECK_EQ(f.released[i], sl_entry(1, 15 + i));
	CHECK_EQ(f.released[59], sl_entry(1, 12));
	for (int i = 0; i < 63; i++)
		CHECK_EQ(f.released[60 + i], sl_entry(1, 75 + i));
	CHECK_EQ(f.released[123], e1);
	/* drained caches hold nothing: a second drain releases nothing */
	int before = f.releases;
	sl_swap_slots_drain(&ss);
	CHECK_EQ(f.releases, before);
	fake_fini(&ss, &f);
}

/* Free swap falling below 2 x 64 per CPU turns the caches off and drains
 * every CPU's at once (check_cache_active()). */
TEST(slots_deactivation_drains_every_cpu)
{
	fake_owner f = { .type = 0, .next = 1, .left = 1000 };
	sl_swap_slots ss;

	fake_init(&ss, &f, 2);
	sl_swap_slots_alloc(&ss, 0, PLENTY);
	sl_swap_slots_alloc(&ss, 1, PLENTY);
	CHECK_EQ(f.nreleased, 0);
	CHECK_EQ(sl_swap_slots_alloc(&ss, 0, 2 * 2 * SL_SWAP_SLOTS_CACHE_SIZE - 1), 129);
	CHECK_EQ(f.nreleased, 2 * 63);
	CHECK_EQ(ss.active, 0);
	CHECK_EQ(f.last_get_n, 1); /* then the direct path */
	fake_fini(&ss, &f);
}

/* A device alone owns its cache: owner the device, entries of type 0, each
 * a cache-only slot of it. */
TEST(slots_lone_device_owns_a_cache_of_type0_entries)
{
	const char *pols[] = { "linux-6.9", "linux-6.10", "nonfull-2024", "linux-6.12" };

	for (size_t p = 0; p < sizeof(pols) / sizeof(pols[0]); p++) {
		sl_device *d = t_device(pols[p], 8192);
		CHECK(d && d->slots && d->slots->owner == d);
		if (!d || !d->slots)
			continue;
		uint64_t off = sl_swap_alloc(d, 0, 0);
		CHECK(off != 0 && d->map[off] == 1);
		const sl_swap_slots_cache *c = &d->slots->cpu[0];
		CHECK_EQ(c->nr, SL_SWAP_SLOTS_CACHE_SIZE - 1);
		for (int i = 0; i < c->nr; i++) {
			uint64_t e = c->slots[c->cur + i];
			CHECK_EQ(sl_entry_type(e), 0);
			CHECK_EQ(d->map[e], SL_SLOT_CACHE);
		}
		sl_swap_put(d, 0, off, 1);
		CHECK_EQ(d->slots->cpu[0].n_ret, 1);
		CHECK_EQ(d->slots->cpu[0].slots_ret[0], off);
		d->pol->drain(d);
		CHECK_EQ(d->inuse_pages, 0);
		CHECK_INVARIANTS(d);
		sl_device_destroy(d);
	}
}

/* In a set every device's d->slots names the set's one cache (owner the
 * set); the devices get their own back when the set goes. */
TEST(slots_set_devices_share_one_cache)
{
	char msg[256];
	const sl_policy *pol = sl_policy_find("linux-6.10");
	sl_device *d[3];
	sl_swap_slots *own[3];
	const int prio[] = { 5, 5, 5 };

	for (int t = 0; t < 3; t++) {
		d[t] = sl_device_create(4096, SL_DEV_ZRAM, 2, pol, 1, msg, sizeof(msg));
		CHECK(d[t] != NULL);
		if (!d[t])
			return;
		own[t] = d[t]->slots;
	}
	sl_swapset *s = sl_swapset_create(d, prio, 3, 0, msg, sizeof(msg));
	CHECK(s && s->slots && s->slots->owner == s);
	if (!s || !s->slots)
		return;
	for (int t = 0; t < 3; t++) {
		CHECK(d[t]->slots == s->slots);
		CHECK(s->dev_slots[t] == own[t] && own[t] != s->slots);
	}
	/* equal priorities take turns per refill: the cache's entries name
	 * their devices; a free on device 2 lands in the one cache, typed */
	uint64_t e0 = sl_set_alloc(s, 0, 0);
	uint64_t e1 = sl_set_alloc(s, 1, 0);
	CHECK(sl_entry_type(e0) != sl_entry_type(e1));
	const sl_swap_slots_cache *c = &s->slots->cpu[1];
	for (int i = 0; i < c->nr; i++)
		CHECK_EQ(sl_entry_type(c->slots[c->cur + i]), sl_entry_type(e1));
	sl_set_put(s, 1, e1, 1);
	CHECK_EQ(s->slots->cpu[1].n_ret, 1);
	CHECK_EQ(s->slots->cpu[1].slots_ret[0], e1);
	CHECK_EQ(own[sl_entry_type(e1)]->cpu[1].n_ret, 0);
	/* the drain gives every cached slot back to its device */
	sl_set_drain(s);
	CHECK_EQ(sl_set_inuse(s), 1);
	CHECK_EQ(sl_set_dev(s, e0)->map[sl_entry_off(e0)], 1);
	sl_set_put(s, 0, e0, 1);
	sl_set_drain(s);
	CHECK_EQ(sl_set_inuse(s), 0);
	sl_swapset_destroy(s);
	for (int t = 0; t < 3; t++) {
		CHECK(d[t]->slots == own[t]);
		CHECK_EQ(d[t]->type, 0);
		CHECK(d[t]->set == NULL);
		/* alone again: its own cache, type-0 entries */
		uint64_t off = sl_swap_alloc(d[t], 0, 0);
		CHECK(off != 0);
		CHECK_EQ(sl_entry_type(own[t]->cpu[0].slots[own[t]->cpu[0].cur]), 0);
		sl_swap_put(d[t], 0, off, 1);
		d[t]->pol->drain(d[t]);
		CHECK_EQ(d[t]->inuse_pages, 0);
		CHECK_INVARIANTS(d[t]);
		sl_device_destroy(d[t]);
	}
}

/* The concurrent mode gives the caches their own per-CPU locks. */
TEST(slots_concurrent_mode_locks_the_cache)
{
	sl_device *d = t_device("linux-6.12", 8192);

	CHECK(d && d->slots && d->slots->lock == NULL);
	if (!d)
		return;
	CHECK_EQ(sl_device_concurrent(d), 0);
	CHECK(d->slots->lock != NULL);
	uint64_t off = sl_swap_alloc(d, 1, 0);
	CHECK(off != 0);
	sl_swap_put(d, 1, off, 1);
	d->pol->drain(d);
	CHECK_EQ(d->inuse_pages, 0);
	sl_device_destroy(d);
}
