/*
 * rng.c - the two random sources of a workload.
 *
 * default  xoshiro256** seeded through splitmix64 from the run's seed;
 *          sl_rng_below(n) = (top 32 bits * n) >> 32 (multiply-shift).
 * glibc    the sequence of glibc's rand() (random_r, TYPE_3, degree 31,
 *          separation 3) from srand(seed); seed 1 is what a program that
 *          never calls srand() gets. sl_rng_below(n) = rand() % n, as the
 *          published test programs compute it.
 * docs/workloads.md states both; tests pin them to known values.
 */
#include "swaplab/swaplab.h"

static uint64_t splitmix64(uint64_t *x)
{
	uint64_t z = (*x += UINT64_C(0x9e3779b97f4a7c15));
	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

static uint64_t xoshiro_next(uint64_t s[4])
{
	uint64_t out = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return out;
}

/* glibc's additive generator keeps the last 34 words; word i is
 * word[i-31] + word[i-3] (mod 2^32) and rand() returns it shifted right. */
static uint32_t glibc_step(sl_rng *r)
{
	int i = r->gi;
	uint32_t v = (uint32_t)r->r[(i + 34 - 31) % 34] + (uint32_t)r->r[(i + 34 - 3) % 34];
	r->r[i] = (int32_t)v;
	r->gi = (i + 1) % 34;
	return v;
}

static void glibc_seed(sl_rng *r, uint32_t seed)
{
	int32_t w[34];
	if (seed == 0)
		seed = 1; /* srand(0) behaves as srand(1) */
	w[0] = (int32_t)seed;
	for (int i = 1; i < 31; i++) {
		/* 16807 * w mod (2^31 - 1), Schrage's method as glibc computes it */
		int32_t hi = w[i - 1] / 127773, lo = w[i - 1] % 127773;
		int32_t v = 16807 * lo - 2836 * hi;
		w[i] = v < 0 ? v + 2147483647 : v;
	}
	for (int i = 31; i < 34; i++)
		w[i] = w[i - 31];
	for (int i = 0; i < 34; i++)
		r->r[i] = w[i];
	r->gi = 0; /* the next word written replaces the oldest */
	for (int i = 34; i < 344; i++)
		glibc_step(r); /* glibc discards the first 310 outputs */
}

void sl_rng_init(sl_rng *r, int kind, uint64_t seed)
{
	r->kind = kind;
	if (kind == SL_RNG_GLIBC) {
		glibc_seed(r, (uint32_t)seed);
		return;
	}
	uint64_t x = seed;
	for (int i = 0; i < 4; i++)
		r->s[i] = splitmix64(&x);
}

uint64_t sl_rng_next(sl_rng *r)
{
	if (r->kind == SL_RNG_GLIBC)
		return glibc_step(r) >> 1;
	return xoshiro_next(r->s);
}

uint32_t sl_rng_below(sl_rng *r, uint32_t n)
{
	if (r->kind == SL_RNG_GLIBC)
		return (uint32_t)(sl_rng_next(r) % n);
	return (uint32_t)(((sl_rng_next(r) >> 32) * n) >> 32);
}
