/*
 * stranded_handoff.c - the two-CPU churn that measures revision 4's
 * stranded hand-offs (proposal-holes-first.md, "Revision 4", "Stranded
 * hand-offs"). Not part of the build: compile it against a C build of
 * the core (its flags: SL_DEBUG in a -DSWAPLAB_DEBUG=ON build),
 *
 *   cc -O2 -std=c11 -DSL_DEBUG -D_GNU_SOURCE -flto=auto -Icore/include \
 *      docs/proposals/stranded_handoff.c BUILD/libswaplab_core.a -lpthread -lm -o strand
 *   ./strand POLICY SLOTS FILL MIX OPS FREE_ANY SEED
 *
 * e.g. ./strand proposal-holes-first 65536 0.95 0024:0024 100000 1 1.
 * A 256 MiB zram device (65536 slots), two CPUs. MIX gives each CPU's
 * orders, equally likely ("04:0": CPU 0 swaps out 4K and 64K folios,
 * CPU 1 only 4K). Fill to FILL round-robin over the CPUs, then OPS
 * pairs: a random live folio is freed - with FREE_ANY on a random CPU (a
 * swap-in runs where the process runs now), else on the allocating one -
 * and a random CPU allocates a folio of its mix in its place; a failed
 * allocation drops the folio (the split's pages are not modelled) and the
 * next successful one refills to FILL. Prints the failures per CPU and
 * order, the hand-offs, the allocations that took a handed range
 * (handoff_takes; in a -DXP_HANDED_COUNT_ONLY build: the allocations that
 * failed with one in reach) and the invariant checker's verdict.
 * ONECPU=1 in the environment runs everything on CPU 0.
 */
#include <stdio.h>
#include <stdlib.h>
#include "swaplab/swaplab.h"

static uint64_t rng_s = 88172645463325252ull;

static uint64_t rnd(void)
{
	rng_s ^= rng_s << 13;
	rng_s ^= rng_s >> 7;
	rng_s ^= rng_s << 17;
	return rng_s;
}

typedef struct {
	uint64_t off;
	int order;
} folio;

int main(int argc, char **argv)
{
	if (argc < 8) {
		fprintf(stderr, "usage: %s POLICY SLOTS FILL MIX OPS FREE_ANY SEED\n", argv[0]);
		return 2;
	}
	const sl_policy *pol = sl_policy_find(argv[1]);
	uint64_t slots = strtoull(argv[2], 0, 0), ops = strtoull(argv[5], 0, 0);
	double fill = atof(argv[3]);
	int freeany = atoi(argv[6]), one = getenv("ONECPU") != NULL;
	int mixes[2][SL_NR_ORDERS * 2], nm[2] = { 0, 0 }, c = 0;
	char msg[256];

	for (const char *p = argv[4]; *p && c < 2; p++) {
		if (*p == ':')
			c++;
		else if (*p >= '0' && *p <= '9' && nm[c] < SL_NR_ORDERS * 2)
			mixes[c][nm[c]++] = *p - '0';
	}
	if (!pol || !nm[0] || (!nm[1] && !one)) {
		fprintf(stderr, "bad policy or mix\n");
		return 2;
	}
	rng_s ^= strtoull(argv[7], 0, 0) * 0x9E3779B97F4A7C15ull;
	sl_device *d = sl_device_create(slots, SL_DEV_ZRAM, 2, pol, 0, msg, sizeof(msg));
	folio *f = calloc(slots, sizeof(*f));
	if (!d || !f) {
		fprintf(stderr, "%s\n", d ? "out of memory" : msg);
		return 2;
	}
	uint64_t n = 0, used = 0, fails[2][SL_NR_ORDERS] = { { 0 } }, allocs[2][SL_NR_ORDERS] = { { 0 } };
	while (used < fill * (double)slots) {
		int cpu = one ? 0 : (int)(n & 1), o = mixes[cpu][rnd() % (uint64_t)nm[cpu]];
		uint64_t off = sl_swap_alloc(d, cpu, o);
		if (!off)
			break;
		f[n].off = off;
		f[n].order = o;
		n++;
		used += 1u << o;
	}
	for (uint64_t i = 0; i < ops && n; i++) {
		uint64_t v = rnd() % n;
		int acpu = one ? 0 : (int)(rnd() & 1);
		int fc = freeany && !one ? (int)(rnd() & 1) : acpu;
		sl_swap_put(d, fc, f[v].off, 1u << f[v].order);
		used -= 1u << f[v].order;
		int o = mixes[acpu][rnd() % (uint64_t)nm[acpu]];
		uint64_t off = sl_swap_alloc(d, acpu, o);
		allocs[acpu][o]++;
		if (!off) {
			fails[acpu][o]++;
			f[v] = f[--n];
			continue;
		}
		f[v].off = off;
		f[v].order = o;
		used += 1u << o;
		while (used < fill * (double)slots) {
			int o2 = mixes[acpu][rnd() % (uint64_t)nm[acpu]];
			uint64_t off2 = sl_swap_alloc(d, acpu, o2);
			allocs[acpu][o2]++;
			if (!off2) {
				fails[acpu][o2]++;
				break;
			}
			f[n].off = off2;
			f[n].order = o2;
			n++;
			used += 1u << o2;
		}
	}
	int bad = sl_device_check(d, msg, sizeof(msg));
	printf("%-22s fill %.2f mix %s freeany %d:", argv[1], fill, argv[4], freeany);
	for (int cpu = 0; cpu < 2; cpu++)
		for (int o = 0; o < SL_NR_ORDERS; o++)
			if (allocs[cpu][o])
				printf(" cpu%d/o%d fail %llu/%llu", cpu, o, (unsigned long long)fails[cpu][o],
				       (unsigned long long)allocs[cpu][o]);
	printf(" handoffs %llu takes %llu check %d%s%s\n", (unsigned long long)d->st.handoffs,
	       (unsigned long long)d->st.handoff_takes, bad, bad ? " " : "", bad ? msg : "");
	sl_device_destroy(d);
	free(f);
	return bad != 0;
}
