/*
 * cluster.c - cluster lists: the only place list membership changes.
 *
 * Lists are circular and doubly linked through indices into d->ci; the
 * heads are the SL_NR_LISTS entries past the last cluster, so a list head
 * and a cluster share one representation, as list_head does in the kernel.
 */
#include "swaplab/cluster.h"

int sli_list_of(const sl_cluster *c)
{
	switch (c->flags) {
	case SL_CF_FREE: return SL_LIST_FREE;
	case SL_CF_NONFULL: return SL_LIST_NONFULL(c->order);
	case SL_CF_FRAG: return SL_LIST_FRAG(c->order);
	case SL_CF_FULL: return SL_LIST_FULL;
	case SL_CF_DISCARD: return SL_LIST_DISCARD;
	default: return -1;
	}
}

/* list_del() for cluster c, which is on the list its flag names. */
static void cluster_unlink(sl_device *d, uint32_t c)
{
	sl_cluster *ci = d->ci;
	int list = sli_list_of(&ci[c]);

	ci[ci[c].prev].next = ci[c].next;
	ci[ci[c].next].prev = ci[c].prev;
	ci[c].prev = ci[c].next = SL_NIL;
	d->list_len[list]--;
}

/* list_add_tail() */
static void cluster_link_tail(sl_device *d, uint32_t c, int list)
{
	sl_cluster *ci = d->ci;
	uint32_t h = sli_head(d, list);
	uint32_t last = ci[h].prev;

	ci[c].prev = last;
	ci[c].next = h;
	ci[last].next = c;
	ci[h].prev = c;
	d->list_len[list]++;
}

void sli_move_cluster(sl_device *d, uint32_t c, int list, int flag)
{
	if (d->ci[c].flags != SL_CF_NONE)
		cluster_unlink(d, c);
	cluster_link_tail(d, c, list);
	d->ci[c].flags = (uint8_t)flag;
}

void sli_isolate_cluster(sl_device *d, uint32_t c)
{
	if (d->ci[c].flags == SL_CF_NONE)
		return;
	cluster_unlink(d, c);
	d->ci[c].flags = SL_CF_NONE;
}
