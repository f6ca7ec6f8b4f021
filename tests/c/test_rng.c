/* test_rng.c - both random sources, pinned. */
#include <stdlib.h>
#include "t.h"

TEST(rng_glibc_matches_libc_rand)
{
	unsigned seeds[] = { 1, 42, 12345 };
	for (int k = 0; k < 3; k++) {
		sl_rng r;
		sl_rng_init(&r, SL_RNG_GLIBC, seeds[k]);
		srand(seeds[k]);
		int same = 1;
		for (int i = 0; i < 100000 && same; i++)
			same = (int)sl_rng_next(&r) == rand();
		CHECK(same);
	}
}

TEST(rng_glibc_unseeded_sequence)
{
	sl_rng r;
	sl_rng_init(&r, SL_RNG_GLIBC, 1);
	CHECK_EQ(sl_rng_next(&r), 1804289383);
	CHECK_EQ(sl_rng_next(&r), 846930886);
	CHECK_EQ(sl_rng_next(&r), 1681692777);
	CHECK_EQ(sl_rng_below(&r, 960), 1714636915u % 960);
}

TEST(rng_default_is_pinned)
{
	sl_rng r;
	sl_rng_init(&r, SL_RNG_DEFAULT, 1);
	CHECK_EQ(sl_rng_next(&r), UINT64_C(0xb3f2af6d0fc710c5));
	CHECK_EQ(sl_rng_below(&r, 960), 499);
	sl_rng_init(&r, SL_RNG_DEFAULT, 1);
	sl_rng s;
	sl_rng_init(&s, SL_RNG_DEFAULT, 2);
	CHECK(sl_rng_next(&r) != sl_rng_next(&s));
}
