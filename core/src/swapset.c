/*
 * swapset.c - several swap devices with priorities: swap_info[], the
 * swap_avail list and the generation's layer above the devices
 * (get_swap_pages() up to 6.14, swap_alloc_fast()/swap_alloc_slow() from
 * 6.15). One device goes straight to sl_swap_alloc()/sl_swap_put(), so a
 * single-device run is the device model alone.
 *
 * The avail list is a priority list (plist): highest priority first, a
 * device added behind those of equal priority; each device is requeued
 * behind its equal-priority siblings just before it is tried, so devices
 * of one priority take turns. A device leaves the list when it becomes
 * full and is added back (behind its equals) when a slot frees.
 *
 * Not modelled: the per-NUMA-node lists (<= 6.18) and the priority boost a
 * default-priority device gets on its own node (one node here, and zram has
 * none); swapoff.
 */
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include "swaplab/swaplab.h"
#include "swaplab/swap_slots.h"
#include "swaplab/locks.h"

static int find_avail(const sl_swapset *s, int type)
{
	for (int i = 0; i < s->navail; i++)
		if (s->avail[i] == type)
			return i;
	return -1;
}

/* plist_add() - the device behind the others of its priority. */
static void add_to_avail_list(sl_swapset *s, int type)
{
	int i = 0;

	while (i < s->navail && s->prio[s->avail[i]] >= s->prio[type])
		i++;
	memmove(s->avail + i + 1, s->avail + i, (size_t)(s->navail - i) * sizeof(int));
	s->avail[i] = type;
	s->navail++;
}

static void del_from_avail_list(sl_swapset *s, int type)
{
	int i = find_avail(s, type);

	if (i < 0)
		return;
	memmove(s->avail + i, s->avail + i + 1, (size_t)(s->navail - i - 1) * sizeof(int));
	s->navail--;
}

/* plist_requeue() - behind its equal-priority siblings. */
static void requeue(sl_swapset *s, int type)
{
	del_from_avail_list(s, type);
	add_to_avail_list(s, type);
}

static int dev_full(const sl_device *d) { return d->inuse_pages >= d->pages; }
static int set_slots_init(sl_swapset *s);

/* swap_range_alloc() / swap_range_free(): a device that filled leaves the
 * avail list, one that has a free slot again comes back. */
static void sync_avail(sl_swapset *s)
{
	for (int t = 0; t < s->nr; t++) {
		int on = find_avail(s, t) >= 0;
		if (on && dev_full(s->dev[t]))
			del_from_avail_list(s, t);
		else if (!on && !dev_full(s->dev[t]))
			add_to_avail_list(s, t);
	}
}

sl_swapset *sl_swapset_create(sl_device *const *dev, const int *prio, int n, int own, char *msg,
			      size_t len)
{
	int least_priority = -1;
	sl_swapset *s;

	if (n < 1 || n > SL_MAX_SWAPFILES) {
		snprintf(msg, len, "%d swap devices: the model takes 1 to %d", n, SL_MAX_SWAPFILES);
		return NULL;
	}
	for (int t = 0; t < n; t++) {
		if (!dev[t]) {
			snprintf(msg, len, "swap device %d is missing", t);
			return NULL;
		}
		/* one generation: a rotational device may have its own table */
		if (strcmp(dev[t]->pol->name, dev[0]->pol->name) || dev[t]->nr_cpus != dev[0]->nr_cpus ||
		    dev[t]->set) {
			snprintf(msg, len, "swap device %d differs in policy or CPUs, or has a set", t);
			return NULL;
		}
		if (prio[t] != SL_PRIO_AUTO && (prio[t] < 0 || prio[t] > SL_PRIO_MAX)) {
			snprintf(msg, len, "swap priority %d is outside 0..%d", prio[t], SL_PRIO_MAX);
			return NULL;
		}
	}
	s = calloc(1, sizeof(*s));
	if (!s)
		goto oom;
	s->nr = n;
	s->own = own;
	s->pol = dev[0]->pol;
	s->pcp_si = malloc((size_t)dev[0]->nr_cpus * SL_NR_ORDERS);
	if (!s->pcp_si)
		goto oom;
	memset(s->pcp_si, -1, (size_t)dev[0]->nr_cpus * SL_NR_ORDERS);
	for (int t = 0; t < n; t++) {
		s->dev[t] = dev[t];
		dev[t]->set = s;
		dev[t]->type = t;
		/* swapon: a priority given, or the next one below the last */
		s->prio[t] = prio[t] == SL_PRIO_AUTO ? --least_priority : prio[t];
		if (!dev_full(dev[t]))
			add_to_avail_list(s, t);
	}
	if (n > 1 && (s->pol->props & SL_POL_SLOT_CACHE) && set_slots_init(s))
		goto oom;
	return s;
oom:
	snprintf(msg, len, "out of memory for the swap devices");
	if (s) {
		s->own = 0;
		sl_swapset_destroy(s);
	}
	return NULL;
}

void sl_swapset_destroy(sl_swapset *s)
{
	if (!s)
		return;
	if (s->slots) {
		if (!s->own)
			sl_swap_slots_drain(s->slots); /* devices outlive the set */
		for (int t = 0; t < s->nr; t++)
			s->dev[t]->slots = s->dev_slots[t];
		sl_swap_slots_fini(s->slots);
		free(s->slots);
	}
	for (int t = 0; t < s->nr; t++) {
		if (s->own) {
			sl_device_destroy(s->dev[t]);
		} else if (s->dev[t]) {
			s->dev[t]->set = NULL;
			s->dev[t]->type = 0; /* alone again */
		}
	}
	free(s->pcp_si);
	free(s);
}

/* Walks the avail list as plist_for_each_entry_safe() does, requeueing
 * each device before trying it; try() returns nonzero to stop. If the next
 * device left the list meanwhile, start over (the kernel's start_over). */
typedef int (*try_fn)(sl_swapset *s, int type, void *ctx);
static int walk_avail(sl_swapset *s, try_fn try, void *ctx)
{
	int i = 0, guard = 0;

	/* slots freed since the last operation (a slot-cache drain inside this
	 * allocation) put their device back first, as swap_range_free() does */
	sync_avail(s);
	while (i < s->navail) {
		int t = s->avail[i];
		int next = i + 1 < s->navail ? s->avail[i + 1] : -1;
		requeue(s, t);
		int rc = try(s, t, ctx);
		if (rc)
			return rc;
		if (next < 0)
			break;
		i = find_avail(s, next);
		if (i < 0) {
			if (++guard > SL_MAX_SWAPFILES)
				break;
			i = 0;
		}
	}
	return 0;
}

typedef struct gsp_ctx {
	int cpu, n, order, got;
	uint64_t *out;
} gsp_ctx;

static int try_get_swap_pages(sl_swapset *s, int t, void *ctx)
{
	gsp_ctx *g = ctx;
	sl_device *d = s->dev[t];

	g->got = d->pol->get_swap_pages(d, g->cpu, g->n, g->out, g->order);
	for (int i = 0; i < g->got; i++)
		g->out[i] = sl_entry(t, g->out[i]);
	/* stop at the first device that gave anything; a large folio tries
	 * only the first device */
	return g->got > 0 || g->order > 0;
}

/* get_swap_pages() - <= 6.14: up to n entries of `order` from the first
 * device that has any, at most what is free over all devices; large folios
 * try one device only. */
static int get_swap_pages(sl_swapset *s, int cpu, int n, uint64_t *out, int order)
{
	uint64_t free_pages = sl_nr_swap_pages(s->dev[0]);
	gsp_ctx g = { .cpu = cpu, .order = order, .out = out };
	if ((free_pages >> order) == 0)
		return 0;
	if ((uint64_t)n > (free_pages >> order))
		n = (int)(free_pages >> order);
	g.n = n;
	walk_avail(s, try_get_swap_pages, &g);
	sync_avail(s);
	return g.got;
}

/* The slot caches above the devices (swap_slots.h get): order 0. */
static int set_slots_get(void *owner, int cpu, int n, uint64_t *out)
{
	return get_swap_pages(owner, cpu, n, out, 0);
}

/* swapcache_free_entries() - <= 6.13, the slot caches' release above
 * several devices: the entries sorted by type (more than one swap device)
 * and freed device by device under its si->lock; the kernel's sort is not
 * stable, the model's is: within a device, push order. */
static void swapcache_free_entries(void *owner, const uint64_t *e, int n)
{
	const sl_swapset *s = owner;
	uint32_t present = 0;

	/* swap_info_get_cont() takes a device's lock only when the next
	 * entry's type differs: devices with no entry here are not locked */
	for (int i = 0; i < n; i++)
		present |= UINT32_C(1) << sl_entry_type(e[i]);
	for (int t = 0; t < s->nr; t++) {
		sl_device *d = s->dev[t];
		if (!(present >> t & 1))
			continue;
		sl_dev_lock(d);
		for (int i = 0; i < n; i++)
			if (sl_entry_type(e[i]) == t)
				d->pol->release(d, sl_entry_off(e[i]));
		sl_dev_unlock(d);
	}
}

/* One cache per CPU above every device: each device's d->slots names it
 * while the set lasts (its own cache, drained, waits in dev_slots[]). */
static int set_slots_init(sl_swapset *s)
{
	sl_swap_slots *ss = calloc(1, sizeof(*ss));

	if (!ss || sl_swap_slots_init(ss, s->dev[0]->nr_cpus, 1, s, set_slots_get,
				       swapcache_free_entries)) {
		free(ss);
		return -1;
	}
	s->slots = ss;
	for (int t = 0; t < s->nr; t++) {
		s->dev_slots[t] = s->dev[t]->slots;
		if (s->dev_slots[t])
			sl_swap_slots_drain(s->dev_slots[t]);
		s->dev[t]->slots = s->slots;
	}
	return 0;
}

typedef struct slow_ctx {
	int cpu, order;
	uint64_t e;
} slow_ctx;

/* swap_alloc_slow()'s step on one device (6.15+: cluster_alloc_swap_entry());
 * for the baselines, the device's whole allocator. A large folio tries the
 * first device only. */
static int try_alloc(sl_swapset *s, int t, void *ctx)
{
	slow_ctx *c = ctx;
	const sl_policy *pol = s->dev[t]->pol;
	uint64_t off = (pol->alloc_slow ? pol->alloc_slow : pol->alloc)(s->dev[t], c->cpu, c->order);

	if (off)
		c->e = sl_entry(t, off);
	return off || c->order > 0;
}

/* swap_alloc_slow() - 6.15..6.18: rotate the avail list and switch to a
 * new cluster on the first device that has one (for the baselines, the
 * same walk over their whole allocators). */
static uint64_t swap_alloc_slow(sl_swapset *s, int cpu, int order)
{
	slow_ctx c = { .cpu = cpu, .order = order };

	walk_avail(s, try_alloc, &c);
	return c.e;
}

/* folio_alloc_swap() - 6.15+: the CPU's cursor names a device and a slot;
 * else swap_alloc_slow() over the avail list. */
static uint64_t folio_alloc_swap_lr(sl_swapset *s, int cpu, int order)
{
	int t = s->pcp_si[cpu * SL_NR_ORDERS + order];

	if (t >= 0 && (s->dev[t]->flags & SL_DEV_SOLIDSTATE)) {
		uint64_t off = s->dev[t]->pol->alloc_fast(s->dev[t], cpu, order);
		if (off)
			return sl_entry(t, off);
	}
	return swap_alloc_slow(s, cpu, order);
}

/* swap_sync_discard() - 6.18.4+: in priority order, the pending discards
 * of the first device that has any; whether a cluster came back (the
 * caller retries, the other devices keep theirs). */
static int swap_sync_discard(sl_swapset *s)
{
	sync_avail(s);
	for (int i = 0; i < s->navail; i++)
		if (s->dev[s->avail[i]]->pol->sync_discard(s->dev[s->avail[i]]))
			return 1;
	return 0;
}

/* sl_set_alloc() with several devices: out of line, so that the one
 * device's call below saves no registers for it. */
static __attribute__((noinline)) uint64_t set_alloc_many(sl_swapset *s, int cpu, int order)
{
	uint64_t e = 0;

	if (order < 0 || order >= SL_NR_ORDERS)
		return 0;
	if (s->pol->alloc_slow) {
		do {
			e = folio_alloc_swap_lr(s, cpu, order);
		} while (!e && order == 0 && s->pol->sync_discard && swap_sync_discard(s));
	} else if (s->pol->get_swap_pages) {
		if (order == 0 && s->slots)
			e = sl_swap_slots_alloc(s->slots, cpu, sl_nr_swap_pages(s->dev[0]));
		else if (get_swap_pages(s, cpu, 1, &e, order) != 1)
			e = 0;
		if (e && order == 0) /* the reserved slot to its folio */
			sli_take_reserved_locked(sl_set_dev(s, e), sl_entry_off(e));
	} else {
		e = swap_alloc_slow(s, cpu, order);
	}
	sync_avail(s);
	if (e)
		sli_stats(sl_set_dev(s, e))->alloc_ok[order]++;
	else
		s->alloc_fail[order]++;
	return e;
}

uint64_t sl_set_alloc(sl_swapset *s, int cpu, int order)
{
	if (s->nr == 1)
		return sl_swap_alloc(s->dev[0], cpu, order);
	return set_alloc_many(s, cpu, order);
}

void sl_set_alloc_batch0(sl_swapset *s, int cpu, uint32_t n, uint64_t *out)
{
	if (s->nr == 1) {
		sl_swap_alloc_batch0(s->dev[0], cpu, n, out);
		return;
	}
	for (uint32_t i = 0; i < n; i++)
		out[i] = set_alloc_many(s, cpu, 0);
}

typedef struct pages_ctx {
	int cpu, order, runs;
	uint64_t *out;
} pages_ctx;

/* One device's alloc_pages for the walk; a large folio tries the first only. */
static int try_alloc_pages(sl_swapset *s, int t, void *ctx)
{
	pages_ctx *c = ctx;

	c->runs = s->dev[t]->pol->alloc_pages(s->dev[t], c->cpu, c->order, c->out);
	for (uint32_t j = 0; c->runs && j < 1u << c->order; j++)
		c->out[j] = sl_entry(t, c->out[j]);
	return c->runs || c->order > 0;
}

int sl_set_alloc_pages(sl_swapset *s, int cpu, int order, uint64_t *out)
{
	pages_ctx c = { .cpu = cpu, .order = order, .out = out };

	if (s->nr == 1)
		return sl_swap_alloc_pages(s->dev[0], cpu, order, out);
	if (order < 0 || order >= SL_NR_ORDERS || !s->pol->alloc_pages)
		return 0;
	walk_avail(s, try_alloc_pages, &c);
	sync_avail(s);
	if (c.runs)
		sli_stats(sl_set_dev(s, out[0]))->alloc_ok[order]++;
	else
		s->alloc_fail[order]++;
	return c.runs;
}

void sl_set_put(sl_swapset *s, int cpu, uint64_t e, uint64_t nr)
{
	sl_swap_put(sl_set_dev(s, e), cpu, sl_entry_off(e), nr);
	if (s->nr > 1)
		sync_avail(s);
}

void sl_set_tick(sl_swapset *s)
{
	for (int t = 0; t < s->nr; t++)
		if (s->dev[t]->pol->tick)
			s->dev[t]->pol->tick(s->dev[t]);
}

void sl_set_drain(sl_swapset *s)
{
	if (s->slots)
		sl_swap_slots_drain(s->slots);
	for (int t = 0; t < s->nr; t++)
		if (s->dev[t]->pol->drain)
			s->dev[t]->pol->drain(s->dev[t]);
	if (s->nr > 1)
		sync_avail(s);
}

uint64_t sl_set_inuse(const sl_swapset *s)
{
	uint64_t n = 0;

	for (int t = 0; t < s->nr; t++)
		n += s->dev[t]->inuse_pages;
	return n;
}

int sl_set_check(const sl_swapset *s, char *msg, size_t len)
{
	char m[200];

	for (int t = 0; t < s->nr; t++) {
		const sl_device *d = s->dev[t];
		int on = find_avail(s, t) >= 0;
		if (sl_device_check(d, m, sizeof(m))) {
			snprintf(msg, len, "device %d: %s", t, m);
			return -1;
		}
		if (s->nr > 1 && on == dev_full(d)) {
			snprintf(msg, len, "S1: device %d is %s but %s the avail list", t,
				 dev_full(d) ? "full" : "not full", on ? "on" : "off");
			return -1;
		}
	}
	for (int i = 1; i < s->navail; i++)
		if (s->prio[s->avail[i - 1]] < s->prio[s->avail[i]]) {
			snprintf(msg, len, "S2: avail list out of priority order at %d", i);
			return -1;
		}
	return 0;
}
