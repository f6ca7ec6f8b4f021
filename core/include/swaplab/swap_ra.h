/*
 * swaplab/swap_ra.h - VMA-based swap readahead (swap_ra.c; docs/reclaim.md
 * rules W1-W3): the window a swap-in fault on a device without
 * SWP_SYNCHRONOUS_IO reads around the faulting page, and the per-VMA state
 * that sizes it from the readahead hits since the last fault.
 *
 * Addresses are virtual page numbers (the kernel's PFN_DOWN(address)).
 */
#ifndef SWAPLAB_SWAP_RA_H
#define SWAPLAB_SWAP_RA_H

#include <stdint.h>

#define SL_PAGE_CLUSTER 3          /* vm.page-cluster's default */
#define SL_SWAP_RA_ORDER_CEILING 5 /* 64-bit */
#define SL_SWAP_RA_HITS_MAX 63     /* SWAP_RA_HITS_MASK: PAGE_SHIFT / 2 bits */

/* vma->swap_readahead_info: the last fault's page, its window, the
 * readahead hits since. All zero: never set (read as 4 hits). */
typedef struct sl_swap_ra {
	uint64_t addr;
	uint32_t win;
	uint32_t hits;
} sl_swap_ra;

/* __swapin_nr_pages() - 6.18: the window from the hits, the last fault's
 * page and window, at most max_pages. */
unsigned sl_swapin_nr_pages(uint64_t prev, uint64_t cur, unsigned hits, unsigned max_pages,
			    unsigned prev_win);
/* swap_vma_ra_win() - 6.18: the window of a fault at page faddr of the
 * VMA [vm_start, vm_end): updates ra (the fault's page and window, hits 0)
 * and returns the window; for a window above 1, [*start, *end) is the
 * range to read, inside the VMA and faddr's PMD. */
unsigned sl_swap_vma_ra_win(sl_swap_ra *ra, uint64_t faddr, uint64_t vm_start, uint64_t vm_end,
			    uint64_t *start, uint64_t *end);
/* swap_update_readahead() - 6.18, VMA readahead: a fault found its folio
 * in the swap cache at page addr; readahead: the folio had PG_readahead
 * (a hit, counted up to SL_SWAP_RA_HITS_MAX). The window is kept. */
void sl_swap_update_readahead(sl_swap_ra *ra, uint64_t addr, int readahead);

#endif
