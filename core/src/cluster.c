/*
 * cluster.c - cluster lists: their first filling at swapon.
 *
 * Lists are circular and doubly linked through indices into d->ci; the
 * heads are the SL_NR_LISTS entries past the last cluster, so a list head
 * and a cluster share one representation, as list_head does in the kernel.
 * The list operations themselves are inline in cluster.h (every
 * allocation and free goes through them).
 */
#include "swaplab/cluster.h"
#include "swaplab/debug.h"

/* swapon, before the device is in use: no lock, as in the kernel. */
void sli_setup_clusters(sl_device *d, uint32_t cols)
{
	for (uint32_t j = 0; j < cols; j++) {
		for (uint32_t c = j; c < d->nr_clusters; c += cols) {
			/* inc_cluster_info_page(): counted, on no list yet */
			SL_ASSERT(d->ci[c].count <= SL_CLUSTER && d->ci[c].flags == SL_CF_NONE);
			if (d->ci[c].count)
				sli_cluster_move(d, c, SL_LIST_NONFULL(0), SL_CF_NONFULL);
			else
				sli_cluster_move(d, c, SL_LIST_FREE, SL_CF_FREE);
		}
	}
}
