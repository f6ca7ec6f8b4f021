/* test_metrics.c - fragmentation metrics (core/src/metrics.c, docs/metrics.md). */
#include "t.h"
#include <math.h>

TEST(metrics_header_slot_leaves_one_block_per_order)
{
	/* two clusters, slot 0 used: cluster 1 is one order-9 block, cluster 0
	 * splits into one maximal block of each order 0..8 (1 + 2 + ... + 256) */
	uint8_t map[1024] = { 1 };
	sl_frag_metrics m;

	sl_frag_init(&m);
	sl_frag_add_map(&m, map, 1024);
	sl_frag_finish(&m);
	CHECK_EQ(m.free_slots, 1023);
	for (int k = 0; k < 9; k++) {
		CHECK_EQ(m.free_aligned[k], 2 * (512u >> k) - 1);
		CHECK_EQ(m.free_blocks[k], 1);
	}
	CHECK_EQ(m.free_aligned[9], 1);
	CHECK_EQ(m.free_blocks[9], 1);
	/* (1023 - 512) * 1000 / 1023 */
	CHECK_EQ(m.unusable_index[9], 499);
	CHECK_EQ(m.unusable_index[0], 0);
	CHECK_EQ(m.frag_index[9], -1000);
	CHECK_EQ(m.free_extents, 1);
	CHECK_EQ(m.largest_extent, 1023);
	CHECK(fabs(m.bluestore_score) < 1e-12);
	CHECK_EQ(m.has_clusters, 0);
}

TEST(metrics_alternate_slots_are_all_fragmentation)
{
	/* every even slot used: 256 free slots, none paired */
	uint8_t map[512];
	sl_frag_metrics m;

	for (int i = 0; i < 512; i++)
		map[i] = !(i & 1);
	sl_frag_init(&m);
	sl_frag_add_map(&m, map, 512);
	sl_frag_finish(&m);
	CHECK_EQ(m.free_blocks[0], 256);
	CHECK_EQ(m.free_aligned[1], 0);
	/* 1000 - (1000 + 256 * 1000 / 2) / 256 = 1000 - 503 */
	CHECK_EQ(m.frag_index[1], 497);
	CHECK_EQ(m.frag_index[0], -1000);
	CHECK_EQ(m.unusable_index[1], 1000);
	CHECK_EQ(m.free_extents, 256);
	CHECK(fabs(m.bluestore_score - 1.0) < 1e-12);
}

TEST(metrics_empty_and_full_maps)
{
	uint8_t full[512];
	sl_frag_metrics m;

	memset(full, 1, sizeof(full));
	sl_frag_init(&m);
	sl_frag_add_map(&m, full, 512);
	sl_frag_finish(&m);
	CHECK_EQ(m.free_slots, 0);
	CHECK_EQ(m.unusable_index[4], 1000);  /* no free pages: the kernel's 1000 */
	CHECK_EQ(m.frag_index[4], 0);         /* no free blocks: 0 */
	CHECK_EQ(m.free_extents, 0);
	CHECK(m.bluestore_score == 0.0);
}

/* The device walk (cluster fast paths, runs of alike clusters, cluster
 * states, cmap) against the map walk of the same device's slots: the same
 * free space. Returns the device walk's metrics in *a. */
static void check_device_against_map(sl_device *d, uint8_t *cmap, sl_frag_metrics *a)
{
	sl_frag_metrics b;

	sl_frag_init(a);
	sl_frag_add_device(a, d, cmap);
	sl_frag_finish(a);
	sl_frag_init(&b);
	sl_frag_add_map(&b, d->map, d->max);
	sl_frag_finish(&b);
	CHECK_EQ(a->free_slots, d->pages - d->inuse_pages);
	CHECK_EQ(a->free_slots, b.free_slots);
	for (int k = 0; k < SL_NR_ORDERS; k++) {
		CHECK_EQ(a->free_aligned[k], b.free_aligned[k]);
		CHECK_EQ(a->free_blocks[k], b.free_blocks[k]);
		CHECK_EQ(a->unusable_index[k], b.unusable_index[k]);
	}
	CHECK_EQ(a->free_extents, b.free_extents);
	CHECK_EQ(a->largest_extent, b.largest_extent);
	CHECK(a->bluestore_score == b.bluestore_score);
}

TEST(metrics_device_agrees_with_its_slot_map)
{
	/* the device path (cluster fast paths, cluster states) and the map path
	 * see the same free slots on a churned device */
	sl_device *d = t_device("linux-6.18", 64 * 512);
	sl_frag_metrics a;
	uint64_t live[4096];
	int nlive = 0, orders[4096];
	sl_rng r;

	sl_rng_init(&r, SL_RNG_DEFAULT, 7);
	for (int i = 0; i < 20000; i++) {
		if (nlive && (nlive == 4096 || sl_rng_below(&r, 2))) {
			int v = (int)sl_rng_below(&r, (uint32_t)nlive);
			sl_swap_put(d, 0, live[v], UINT64_C(1) << orders[v]);
			live[v] = live[--nlive];
			orders[v] = orders[nlive];
		} else {
			int o = sl_rng_below(&r, 3) ? 0 : 4;
			uint64_t off = sl_swap_alloc(d, 0, o);
			if (off) {
				live[nlive] = off;
				orders[nlive++] = o;
			}
		}
	}
	check_device_against_map(d, NULL, &a);
	CHECK(a.bluestore_score > 0.0 && a.bluestore_score < 1.0);
	uint32_t nc = 0;
	for (int f = 0; f <= SL_CF_DISCARD; f++)
		for (int o = 0; o < SL_NR_ORDERS; o++)
			nc += a.clusters[f][o];
	CHECK_EQ(nc, d->nr_clusters);
	CHECK_EQ(a.clusters[SL_CF_NONFULL][0] + a.clusters[SL_CF_FRAG][0] + a.clusters[SL_CF_FULL][0] +
		 a.clusters[SL_CF_FREE][0] + a.clusters[SL_CF_NONE][0] >= 1, 1);
	sl_device_destroy(d);
}

TEST(metrics_device_runs_of_alike_clusters)
{
	/* full clusters side by side, an emptied one between them and a long
	 * untouched tail: the walk takes runs of alike clusters at once and
	 * must still agree with the slot map and with a cluster-by-cluster
	 * count of the states */
	sl_device *d = t_device("linux-6.18", 256 * 512);
	sl_frag_metrics a;
	uint32_t want[SL_CF_DISCARD + 1][SL_NR_ORDERS] = { { 0 } };
	uint64_t off;

	for (int i = 0; i < 40 * 512 - 1; i++)
		CHECK(sl_swap_alloc(d, 0, 0) != 0);
	for (int i = 0; i < 20; i++)
		CHECK((off = sl_swap_alloc(d, 0, 4)) != 0);
	/* empty cluster 7 again, and leave one hole in cluster 9 */
	for (uint64_t s = 7 * 512; s < 8 * 512; s++)
		sl_swap_put(d, 0, s, 1);
	sl_swap_put(d, 0, 9 * 512 + 100, 1);
	sl_swap_put(d, 0, off, 16);
	uint8_t cmap[256];
	memset(cmap, 0xee, sizeof(cmap));
	for (uint32_t c = 0; c < d->nr_clusters; c++)
		want[d->ci[c].flags][d->ci[c].order]++;
	check_device_against_map(d, cmap, &a);
	for (int f = 0; f <= SL_CF_DISCARD; f++)
		for (int o = 0; o < SL_NR_ORDERS; o++)
			CHECK_EQ(a.clusters[f][o], want[f][o]);
	for (uint32_t c = 0; c < d->nr_clusters; c++)
		CHECK_EQ(cmap[c], d->ci[c].flags << 4 | d->ci[c].order);
	CHECK(want[SL_CF_FULL][0] >= 30);
	CHECK(want[SL_CF_FREE][0] >= 200);
	sl_device_destroy(d);
}
