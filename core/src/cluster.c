/*
 * cluster.c - cluster lists: the only place list membership changes.
 *
 * Lists are circular and doubly linked through indices into d->ci; the
 * heads are the SL_NR_LISTS entries past the last cluster, so a list head
 * and a cluster share one representation, as list_head does in the kernel.
 */
#include "swaplab/cluster.h"
#include "swaplab/debug.h"

/* The list of each flag; nonfull and frag add the cluster's order. */
static const int8_t list_base[] = {
	[SL_CF_NONE] = -1, [SL_CF_FREE] = SL_LIST_FREE, [SL_CF_NONFULL] = SL_LIST_NONFULL0,
	[SL_CF_FRAG] = SL_LIST_FRAG0, [SL_CF_FULL] = SL_LIST_FULL, [SL_CF_DISCARD] = SL_LIST_DISCARD,
};

int sli_list_of(const sl_cluster *c)
{
	if (c->flags > SL_CF_DISCARD)
		return -1;
	int per_order = c->flags == SL_CF_NONFULL || c->flags == SL_CF_FRAG;
	return list_base[c->flags] + (per_order ? c->order : 0);
}

/* list_del() for cluster c, which is on the list its flag names. */
static void cluster_unlink(sl_device *d, uint32_t c)
{
	sl_cluster *ci = d->ci;
	int list = sli_list_of(&ci[c]);

	SL_ASSERT(list >= 0 && d->list_len[list] > 0);
	SL_ASSERT(ci[c].prev != SL_NIL && ci[c].next != SL_NIL);
	ci[ci[c].prev].next = ci[c].next;
	ci[ci[c].next].prev = ci[c].prev;
	ci[c].prev = ci[c].next = SL_NIL;
	d->list_len[list]--;
}

/* list_add_tail() of cluster c, which is on no list. */
static void cluster_link_tail(sl_device *d, uint32_t c, int list)
{
	sl_cluster *ci = d->ci;
	uint32_t h = sli_head(d, list);
	uint32_t last = ci[h].prev;

	SL_ASSERT(ci[c].prev == SL_NIL && ci[c].next == SL_NIL);
	ci[c].prev = last;
	ci[c].next = h;
	ci[last].next = c;
	ci[h].prev = c;
	d->list_len[list]++;
}

/* The move itself: list, link and flag together (I1). */
static void cluster_move(sl_device *d, uint32_t c, int list, int flag)
{
	SL_ASSERT(c < d->nr_clusters);
	/* the list is the one the new flag and the cluster's order name */
	SL_ASSERT(flag != SL_CF_NONE &&
		  sli_list_of(&(sl_cluster){ .flags = (uint8_t)flag, .order = d->ci[c].order }) == list);
	if (d->ci[c].flags != SL_CF_NONE)
		cluster_unlink(d, c);
	cluster_link_tail(d, c, list);
	d->ci[c].flags = (uint8_t)flag;
}

/* Must be called with the device lock held (si->lock guards the lists). */
void sli_move_cluster(sl_device *d, uint32_t c, int list, int flag)
{
	sl_assert_dev_locked(d);
	cluster_move(d, c, list, flag);
}

/* Must be called with the device lock held. */
void sli_isolate_cluster(sl_device *d, uint32_t c)
{
	sl_assert_dev_locked(d);
	SL_ASSERT(c < d->nr_clusters);
	if (d->ci[c].flags == SL_CF_NONE)
		return;
	cluster_unlink(d, c);
	d->ci[c].flags = SL_CF_NONE;
}

/* swapon, before the device is in use: no lock, as in the kernel. */
void sli_setup_clusters(sl_device *d, uint32_t cols)
{
	for (uint32_t j = 0; j < cols; j++) {
		for (uint32_t c = j; c < d->nr_clusters; c += cols) {
			/* inc_cluster_info_page(): counted, on no list yet */
			SL_ASSERT(d->ci[c].count <= SL_CLUSTER && d->ci[c].flags == SL_CF_NONE);
			if (d->ci[c].count)
				cluster_move(d, c, SL_LIST_NONFULL(0), SL_CF_NONFULL);
			else
				cluster_move(d, c, SL_LIST_FREE, SL_CF_FREE);
		}
	}
}
