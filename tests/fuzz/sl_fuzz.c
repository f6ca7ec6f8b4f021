/*
 * sl_fuzz.c - a seeded fuzzer for the allocator core.
 *
 * Round robin over every policy, every device kind and several sets of
 * devices (one device; two of equal priority; three of falling priority
 * and mixed kinds), each case a burst of random operations on small
 * devices so that they fill, fragment and drain often:
 *   alloc  folio_alloc_swap() of a random order on a random CPU
 *   free   a whole allocation, or an aligned part of one (a partial
 *          MADV_DONTNEED)
 *   tick   the deferred work (discard workers)
 *   drain  the slot caches back to their devices
 * with the invariant checker (sl_set_check, the allocation shadow on)
 * every --check-every operations and at the end of every case, where
 * everything is freed and every device must be empty again.
 *
 *   sl_fuzz [--ops N] [--seed S] [--check-every K] [--case-ops M] [--quiet]
 *
 * N may be written 1e9. A failure prints the case, its seed and the
 * operation, and exits 1; the same --seed replays it. Built under
 * ASan+UBSan by the tests (tests/py/test_fuzz.py).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "swaplab/swaplab.h"

#define FZ_CPUS 4
#define FZ_MAX_DEVS 3

typedef struct fz_piece {
	uint64_t entry;
	uint32_t nr;
} fz_piece;

static const char *const kinds[] = { "zram", "ssd", "ssd-discard", "hdd", "file" };
#define FZ_NR_KINDS ((int)(sizeof(kinds) / sizeof(kinds[0])))
enum { FZ_SET_ONE, FZ_SET_TWO_EQUAL, FZ_SET_THREE_MIXED, FZ_NR_SETS };
static const char *const set_names[] = { "one device", "two devices, equal priority",
					 "three devices, falling priority, mixed kinds" };

/* a mix where order 0 dominates, as in reclaim, with every large order */
static const int order_mix[] = { 0, 0, 0, 0, 0, 0, 1, 2, 3, 4, 4, 4, 5, 6, 7, 8, 9 };
#define FZ_NR_MIX ((int)(sizeof(order_mix) / sizeof(order_mix[0])))

typedef struct fz_stats {
	uint64_t ops, checks, cases, skipped, allocs, alloc_fails;
} fz_stats;

static int parse_u64(const char *s, uint64_t *out)
{
	char *end;

	errno = 0;
	if (strpbrk(s, "eE.")) {
		double v = strtod(s, &end);
		if (*end || errno || v < 0 || v > 1.8e19)
			return -1;
		*out = (uint64_t)v;
		return 0;
	}
	unsigned long long v = strtoull(s, &end, 10);
	if (*end || errno || s[0] == '-' || !s[0])
		return -1;
	*out = v;
	return 0;
}

/* The devices of case `k`'s set, or NULL (a kind the policy does not model). */
static sl_swapset *make_set(const sl_policy *pol, int set, int kind, sl_rng *rng, char *msg,
			    size_t len)
{
	sl_device *dev[FZ_MAX_DEVS] = { 0 };
	int prio[FZ_MAX_DEVS], n = set == FZ_SET_ONE ? 1 : set == FZ_SET_TWO_EQUAL ? 2 : 3;

	for (int t = 0; t < n; t++) {
		int ok;
		int kd = set == FZ_SET_THREE_MIXED ? (kind + t) % FZ_NR_KINDS : kind;
		/* 2 to 12 clusters: full and fragmented within a few thousand ops */
		uint64_t slots = (uint64_t)(2 + sl_rng_below(rng, 11)) * SL_CLUSTER;
		if (sl_rng_below(rng, 4) == 0)
			slots -= sl_rng_below(rng, SL_CLUSTER); /* a partial last cluster */
		dev[t] = sl_device_create(slots, sl_device_kind(kinds[kd], &ok), FZ_CPUS, pol, 1, msg,
					  len);
		if (!dev[t]) {
			for (int u = 0; u < t; u++)
				sl_device_destroy(dev[u]);
			return NULL;
		}
		prio[t] = set == FZ_SET_ONE ? SL_PRIO_AUTO : set == FZ_SET_TWO_EQUAL ? 5 : 10 - 3 * t;
	}
	sl_swapset *s = sl_swapset_create(dev, prio, n, 1, msg, len);
	if (!s)
		for (int t = 0; t < n; t++)
			sl_device_destroy(dev[t]);
	return s;
}

static int check(sl_swapset *s, fz_stats *st, const char *what, uint64_t op)
{
	char msg[256];

	st->checks++;
	if (sl_set_check(s, msg, sizeof(msg))) {
		fprintf(stderr, "sl_fuzz: invariant broken %s %llu: %s\n", what,
			(unsigned long long)op, msg);
		return -1;
	}
	return 0;
}

/* One case: `ops` random operations, then everything freed. */
static int run_case(sl_swapset *s, sl_rng *rng, uint64_t ops, uint64_t check_every,
		    fz_stats *st)
{
	uint64_t cap = 0, nlive = 0;

	for (int t = 0; t < s->nr; t++)
		cap += s->dev[t]->pages;
	fz_piece *live = calloc(cap + 1, sizeof(*live));
	if (!live) {
		fprintf(stderr, "sl_fuzz: out of memory\n");
		return -1;
	}
	int rc = 0;
	for (uint64_t i = 0; i < ops && !rc; i++) {
		int cpu = (int)sl_rng_below(rng, FZ_CPUS);
		uint32_t r = sl_rng_below(rng, 1000);
		uint64_t used = sl_set_inuse(s);
		/* lean to allocating below 70 % and to freeing above 90 % */
		uint32_t alloc_pm = used * 10 < cap * 7 ? 620 : used * 10 < cap * 9 ? 480 : 380;
		if (r < 8) {
			sl_set_tick(s);
		} else if (r < 12) {
			sl_set_drain(s);
		} else if (nlive == 0 || r < 12 + alloc_pm) {
			int order = order_mix[sl_rng_below(rng, FZ_NR_MIX)];
			uint64_t e = sl_set_alloc(s, cpu, order);
			st->allocs++;
			if (!e) {
				st->alloc_fails++;
			} else if (nlive < cap) {
				live[nlive++] = (fz_piece){ e, 1u << order };
			} else {
				fprintf(stderr, "sl_fuzz: more allocations than slots\n");
				rc = -1;
			}
		} else {
			uint64_t v = sl_rng_below(rng, (uint32_t)nlive);
			fz_piece pc = live[v];
			if (pc.nr > 1 && sl_rng_below(rng, 4) == 0) {
				/* free an aligned part: the first or the last half */
				uint32_t h = pc.nr / 2;
				int first = (int)sl_rng_below(rng, 2);
				sl_set_put(s, cpu, first ? pc.entry : pc.entry + h, h);
				live[v] = (fz_piece){ first ? pc.entry + h : pc.entry, h };
			} else {
				sl_set_put(s, cpu, pc.entry, pc.nr);
				live[v] = live[--nlive];
			}
		}
		st->ops++;
		if (!rc && check_every && (i + 1) % check_every == 0)
			rc = check(s, st, "after operation", i + 1);
	}
	while (nlive) {
		nlive--;
		sl_set_put(s, (int)sl_rng_below(rng, FZ_CPUS), live[nlive].entry, live[nlive].nr);
	}
	sl_set_drain(s);
	sl_set_tick(s);
	if (!rc && sl_set_inuse(s)) {
		fprintf(stderr, "sl_fuzz: %llu slots still in use after freeing everything\n",
			(unsigned long long)sl_set_inuse(s));
		rc = -1;
	}
	if (!rc)
		rc = check(s, st, "after freeing everything, operation", ops);
	free(live);
	return rc;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: sl_fuzz [--ops N] [--seed S] [--check-every K] [--case-ops M] [--quiet]\n"
		   "  --ops N          operations in all (default 1000000; 1e9 for hours)\n"
		   "  --seed S         seed of every random choice (default 1)\n"
		   "  --check-every K  invariant check every K operations (default 16; 0: at case ends)\n"
		   "  --case-ops M     operations per case before its devices are rebuilt (default 20000)\n");
}

int main(int argc, char **argv)
{
	uint64_t total = 1000000, seed = 1, check_every = 16, case_ops = 20000;
	int quiet = 0;

	for (int i = 1; i < argc; i++) {
		uint64_t *dst = !strcmp(argv[i], "--ops")         ? &total :
				!strcmp(argv[i], "--seed")        ? &seed :
				!strcmp(argv[i], "--check-every") ? &check_every :
				!strcmp(argv[i], "--case-ops")    ? &case_ops : NULL;
		if (!strcmp(argv[i], "--quiet")) {
			quiet = 1;
		} else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			usage(stdout);
			return 0;
		} else if (!dst || i + 1 >= argc || parse_u64(argv[i + 1], dst)) {
			fprintf(stderr, "sl_fuzz: bad argument '%s'\n", argv[i]);
			usage(stderr);
			return 2;
		} else {
			i++;
		}
	}
	if (!case_ops) {
		fprintf(stderr, "sl_fuzz: --case-ops must be at least 1\n");
		return 2;
	}
	int npol = 0;
	while (sl_policies[npol])
		npol++;
	const int ncases = npol * FZ_NR_KINDS * FZ_NR_SETS;
	fz_stats st = { 0 };
	struct timespec t0, t1, tp;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	tp = t0;
	for (uint64_t k = 0; st.ops < total; k++) {
		int c = (int)(k % (uint64_t)ncases);
		const sl_policy *pol = sl_policies[c % npol];
		int kind = (c / npol) % FZ_NR_KINDS, set = c / (npol * FZ_NR_KINDS);
		uint64_t case_seed = seed * 0x9E3779B97F4A7C15ull + k;
		sl_rng rng;
		char msg[256];

		sl_rng_init(&rng, SL_RNG_DEFAULT, case_seed);
		sl_swapset *s = make_set(pol, set, kind, &rng, msg, sizeof(msg));
		if (!s) {
			st.skipped++;
			if (k + 1 >= (uint64_t)ncases && !st.cases) {
				fprintf(stderr, "sl_fuzz: no case could be built: %s\n", msg);
				return 1;
			}
			continue;
		}
		uint64_t n = total - st.ops < case_ops ? total - st.ops : case_ops;
		if (run_case(s, &rng, n, check_every, &st)) {
			fprintf(stderr, "sl_fuzz: case %llu: policy %s, %s, %s (seed %llu)\n",
				(unsigned long long)k, pol->name, kinds[kind], set_names[set],
				(unsigned long long)seed);
			sl_swapset_destroy(s);
			return 1;
		}
		sl_swapset_destroy(s);
		st.cases++;
		clock_gettime(CLOCK_MONOTONIC, &t1);
		if (!quiet && t1.tv_sec - tp.tv_sec >= 60) {
			tp = t1;
			fprintf(stderr, "sl_fuzz: %llu of %llu operations, %llu cases\n",
				(unsigned long long)st.ops, (unsigned long long)total,
				(unsigned long long)st.cases);
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	double secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
	printf("sl_fuzz: ok: %llu operations in %llu cases of %d kinds (%llu skipped: kinds a policy "
	       "does not model), %llu checks, %llu of %llu allocations failed, seed %llu, %.1f s, "
	       "%.0f ops/s\n",
	       (unsigned long long)st.ops, (unsigned long long)st.cases, ncases,
	       (unsigned long long)st.skipped, (unsigned long long)st.checks,
	       (unsigned long long)st.alloc_fails, (unsigned long long)st.allocs,
	       (unsigned long long)seed, secs, secs > 0 ? (double)st.ops / secs : 0.0);
	return 0;
}
