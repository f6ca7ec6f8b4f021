/*
 * swap_ra.c - VMA-based swap readahead of Linux 6.18 (mm/swap_state.c:
 * __swapin_nr_pages, swap_vma_ra_win, swap_update_readahead), in page
 * numbers. docs/reclaim.md W1-W3 states the rules; process.c reads the
 * window into the swap cache.
 */
#include "swaplab/swap_ra.h"

/* __swapin_nr_pages() - 6.18 */
unsigned sl_swapin_nr_pages(uint64_t prev, uint64_t cur, unsigned hits, unsigned max_pages,
			    unsigned prev_win)
{
	unsigned pages = hits + 2;

	if (pages == 2) {
		/* no hits: only a fault next to the last one reads ahead */
		if (cur != prev + 1 && cur + 1 != prev)
			pages = 1;
	} else {
		unsigned up = 4;
		while (up < pages)
			up <<= 1;
		pages = up;
	}
	if (pages > max_pages)
		pages = max_pages;
	/* the window shrinks by at most half a fault */
	if (pages < prev_win / 2)
		pages = prev_win / 2;
	return pages;
}

static uint64_t max3(uint64_t a, uint64_t b, uint64_t c)
{
	uint64_t m = a > b ? a : b;
	return m > c ? m : c;
}

static uint64_t min3(uint64_t a, uint64_t b, uint64_t c)
{
	uint64_t m = a < b ? a : b;
	return m < c ? m : c;
}

/* swap_vma_ra_win() - 6.18 */
unsigned sl_swap_vma_ra_win(sl_swap_ra *ra, uint64_t faddr, uint64_t vm_start, uint64_t vm_end,
			    uint64_t *start, uint64_t *end)
{
	unsigned max_win = 1u << (SL_PAGE_CLUSTER < SL_SWAP_RA_ORDER_CEILING ? SL_PAGE_CLUSTER
									  : SL_SWAP_RA_ORDER_CEILING);
	uint64_t prev = ra->addr, left, pmd = faddr & ~UINT64_C(511);
	/* GET_SWAP_RA_VAL(): a VMA that never faulted starts with 4 hits */
	unsigned hits = (ra->addr | ra->win | ra->hits) ? ra->hits : 4, win;

	if (max_win == 1)
		return 1;
	win = sl_swapin_nr_pages(prev, faddr, hits, max_win, ra->win);
	ra->addr = faddr;
	ra->win = win;
	ra->hits = 0;
	if (win == 1)
		return 1;
	if (faddr == prev + 1)
		left = faddr;                    /* going up: the window starts here */
	else if (prev == faddr + 1)
		left = faddr + 1 >= win ? faddr + 1 - win : 0; /* going down: it ends here */
	else
		left = faddr >= (win - 1) / 2 ? faddr - (win - 1) / 2 : 0;
	*start = max3(left, vm_start, pmd);
	*end = min3(left + win, vm_end, pmd + 512);
	return win;
}

/* swap_update_readahead() - 6.18, VMA readahead on */
void sl_swap_update_readahead(sl_swap_ra *ra, uint64_t addr, int readahead)
{
	unsigned hits = (ra->addr | ra->win | ra->hits) ? ra->hits : 4;

	if (readahead && hits < SL_SWAP_RA_HITS_MAX)
		hits++;
	ra->addr = addr;
	ra->hits = hits;
}
