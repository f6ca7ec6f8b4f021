/* helpers.c - shared test helpers. */
#include <stdlib.h>
#include <string.h>
#include "t.h"

sl_device *t_device(const char *policy, uint64_t slots)
{
	char msg[256];
	const sl_policy *pol = sl_policy_find(policy);
	sl_device *d = pol ? sl_device_create(slots, SL_DEV_ZRAM, 4, pol, 1, msg, sizeof(msg)) : NULL;

	if (!d) {
		fprintf(stderr, "cannot create a %s device: %s\n", policy, pol ? msg : "no policy");
		exit(2);
	}
	return d;
}

void t_alloc_n(sl_device *d, int cpu, int order, int n, const char *file, int line)
{
	for (int i = 0; i < n; i++) {
		if (sl_swap_alloc(d, cpu, order))
			continue;
		t_failed_checks++;
		fprintf(stderr, "  %s:%d: allocation %d of %d (order %d) failed\n", file, line, i + 1, n,
			order);
		return;
	}
}

void t_check_list(const sl_device *d, int list, const uint32_t *want, size_t n, const char *file,
		  int line)
{
	uint32_t got[64];
	size_t k = 0;
	uint32_t h = sli_head(d, list);

	for (uint32_t c = d->ci[h].next; c != h && k < 64; c = d->ci[c].next)
		got[k++] = c;
	int same = k == n;
	for (size_t i = 0; same && i < n; i++)
		same = got[i] == want[i];
	if (same)
		return;
	t_failed_checks++;
	fprintf(stderr, "  %s:%d: list %d is [", file, line, list);
	for (size_t i = 0; i < k; i++)
		fprintf(stderr, "%s%u", i ? " " : "", got[i]);
	fprintf(stderr, "], expected [");
	for (size_t i = 0; i < n; i++)
		fprintf(stderr, "%s%u", i ? " " : "", want[i]);
	fprintf(stderr, "]\n");
}

void t_check_invariants(const sl_device *d, const char *file, int line)
{
	char msg[256];
	if (sl_device_check(d, msg, sizeof(msg))) {
		t_failed_checks++;
		fprintf(stderr, "  %s:%d: invariant: %s\n", file, line, msg);
	}
}

/* The state two twin devices must share after the same operations. */
int t_same_device_state(const sl_device *a, const sl_device *b)
{
	uint64_t slots = (uint64_t)a->nr_clusters * SL_CLUSTER;

	return !memcmp(a->map, b->map, slots) &&
	       !memcmp(a->ci, b->ci, (a->nr_clusters + SL_NR_LISTS) * sizeof(sl_cluster)) &&
	       !memcmp(a->cursor, b->cursor,
		       (size_t)(a->nr_cpus + 1) * SL_CURSOR_STRIDE * sizeof(uint64_t)) &&
	       !memcmp(&a->st, &b->st, sizeof(a->st)) &&
	       !memcmp(a->list_len, b->list_len, sizeof(a->list_len)) &&
	       a->inuse_pages == b->inuse_pages;
}
