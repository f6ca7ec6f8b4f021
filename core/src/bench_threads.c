/*
 * bench_threads.c - alloc/free churn from several threads on one shared
 * device, each thread a CPU with its own cursors (and slot caches), under
 * the policy's real locks (locks.h).
 *
 * Setup (one thread, deterministic): fill the device to the fill level with
 * the order mix, round-robin over the CPUs; each CPU owns what it
 * allocated. Run: every thread, from a common start, does `ops` pairs: free
 * one of its own folios chosen uniformly (a swap-in of a page swapped out at
 * any time before), allocate a new folio of a random order of the mix in
 * its place (a swap-out). With `recent`, the victim is one of the CPU's last
 * SL_BT_RECENT folios instead: short-lived swap entries, whose frees land in
 * the clusters the CPUs are allocating from. Every SL_BT_SAMPLE-th pair is
 * timed for the latency figures, by the time-stamp counter where there is
 * one (converted to ns with the thread's own clock over the run), so that
 * timing costs the pairs next to nothing. With check_every, all threads meet at a barrier every
 * check_every pairs and thread 0 runs the invariant checker on the quiet
 * device (the stress test).
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "swaplab/swaplab.h"
#include "swaplab/locks.h"

#define SL_BT_SAMPLE 16u

/* A cheap timestamp for the sampled latencies: the TSC on x86 (ticks),
 * CLOCK_MONOTONIC ns elsewhere; bt_worker calibrates ticks to ns. */
static inline uint64_t bt_ticks(void)
{
#if defined(__x86_64__) || defined(__i386__)
	return __builtin_ia32_rdtsc();
#else
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
#endif
}

typedef struct bt_piece {
	uint64_t off;
	uint32_t nr;
} bt_piece;

/* One per thread, on cache lines of its own (written on every pair). */
typedef struct bt_thread {
	_Alignas(SL_CACHELINE) struct bt_shared *sh;
	int cpu;
	pthread_t tid;
	bt_piece *ring;            /* this CPU's folios on the device */
	uint32_t nring, cap;
	sl_rng rng;
	sl_lockstat locks[SL_NR_LOCK_CLASSES];
	sl_dev_stats dev;
	uint64_t *lat;             /* sampled pair latencies, ticks (bt_ticks) */
	uint64_t nlat;
	double ns_per_tick;
	double seconds;
	uint64_t attempts[SL_NR_ORDERS];
} bt_thread;

typedef struct bt_shared {
	const sl_bench_threads_params *p;
	sl_device *d;
	pthread_barrier_t check;
	atomic_int go;             /* 0 wait, 1 run, -1 abort (a thread failed to start) */
	int check_failed;
	uint64_t checks;
	char msg[256];
} bt_shared;

static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int pick_order(const sl_bench_threads_params *p, sl_rng *rng)
{
	return p->orders[sl_rng_below(rng, (uint32_t)p->norders)];
}

/* One free+alloc pair on cpu: the victim is a random ring entry. */
static void churn_pair(sl_device *d, bt_thread *t, const sl_bench_threads_params *p)
{
	uint32_t v = sl_rng_below(&t->rng, t->nring);

	/* recent: a window of the last SL_BT_RECENT entries, where each new
	 * folio replaces its victim, so the window holds the newest folios */
	if (p->recent && t->nring > SL_BT_RECENT)
		v = t->nring - 1 - sl_rng_below(&t->rng, SL_BT_RECENT);
	int order = pick_order(p, &t->rng);

	if (t->ring[v].off)
		sl_swap_put(d, t->cpu, t->ring[v].off, t->ring[v].nr);
	t->attempts[order]++;
	t->ring[v].off = sl_swap_alloc(d, t->cpu, order);
	t->ring[v].nr = 1u << order;
}

/* All threads quiet at the barrier; thread 0 checks the device. */
static void quiescent_check(bt_thread *t)
{
	bt_shared *sh = t->sh;

	pthread_barrier_wait(&sh->check);
	if (t->cpu == 0) {
		char m[200];
		sh->checks++;
		if (!sh->check_failed && sl_device_check(sh->d, m, sizeof(m))) {
			sh->check_failed = 1;
			snprintf(sh->msg, sizeof(sh->msg), "check %llu: %s",
				 (unsigned long long)sh->checks, m);
		}
	}
	pthread_barrier_wait(&sh->check);
}

static void *bt_worker(void *arg)
{
	bt_thread *t = arg;
	bt_shared *sh = t->sh;
	const sl_bench_threads_params *p = sh->p;

	sl_tl_lockstat = t->locks;
	sl_tl_devstats = &t->dev;
	while (!atomic_load_explicit(&sh->go, memory_order_acquire))
		; /* everyone starts together */
	if (atomic_load_explicit(&sh->go, memory_order_acquire) < 0)
		return NULL;
	double t0 = now_s();
	uint64_t k0 = bt_ticks();
	for (uint64_t i = 0; i < p->ops; i++) {
		if (i % SL_BT_SAMPLE == 0) {
			uint64_t a = bt_ticks();
			churn_pair(sh->d, t, p);
			t->lat[t->nlat++] = bt_ticks() - a;
		} else {
			churn_pair(sh->d, t, p);
		}
		if (p->check_every && (i + 1) % p->check_every == 0)
			quiescent_check(t);
	}
	uint64_t k1 = bt_ticks();
	t->seconds = now_s() - t0;
	t->ns_per_tick = k1 > k0 ? t->seconds * 1e9 / (double)(k1 - k0) : 1.0;
	sl_tl_lockstat = NULL;
	sl_tl_devstats = NULL;
	return NULL;
}

/* Fills the device to the level, round-robin over CPUs, on this thread. */
static void bt_fill(sl_device *d, bt_thread *th, int n, const sl_bench_threads_params *p)
{
	uint64_t target = (uint64_t)((double)d->pages * p->fill);
	sl_rng rng;

	sl_rng_init(&rng, SL_RNG_DEFAULT, p->seed);
	for (uint64_t k = 0; d->inuse_pages < target; k++) {
		bt_thread *t = &th[k % (uint64_t)n];
		int order = pick_order(p, &rng);
		uint64_t off = sl_swap_alloc(d, t->cpu, order);
		if (!off)
			break;
		if (t->nring < t->cap)
			t->ring[t->nring++] = (bt_piece){ off, 1u << order };
	}
	for (int i = 0; i < n; i++)
		if (!th[i].nring)
			th[i].nring = 1; /* an empty slot to allocate into */
}

/* FNV-1a 64 of the slot map: equal maps, equal runs. */
static uint64_t map_hash(const sl_device *d)
{
	uint64_t h = UINT64_C(0xcbf29ce484222325), n = (uint64_t)d->nr_clusters * SL_CLUSTER;
	for (uint64_t i = 0; i < n; i++) {
		h ^= d->map[i];
		h *= UINT64_C(0x100000001b3);
	}
	return h;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static void bt_collect(bt_thread *th, int n, bt_shared *sh, sl_bench_threads_result *r)
{
	uint64_t nlat = 0, *all;
	double slowest = 0;

	for (int i = 0; i < n; i++) {
		nlat += th[i].nlat;
		if (th[i].seconds > slowest)
			slowest = th[i].seconds;
		for (int c = 0; c < SL_NR_LOCK_CLASSES; c++) {
			r->locks[c].acquisitions += th[i].locks[c].acquisitions;
			r->locks[c].contended += th[i].locks[c].contended;
			r->locks[c].wait_ns += th[i].locks[c].wait_ns;
			r->locks[c].trylock_failed += th[i].locks[c].trylock_failed;
		}
		for (int o = 0; o < SL_NR_ORDERS; o++) {
			r->alloc_ok[o] += th[i].dev.alloc_ok[o];
			r->alloc_fail[o] += th[i].dev.alloc_fail[o];
		}
		r->handoffs += th[i].dev.handoffs;
		r->handoff_takes += th[i].dev.handoff_takes;
	}
	r->ops = sh->p->ops * (uint64_t)n;
	r->seconds = slowest;
	r->ops_per_sec = slowest > 0 ? (double)r->ops / slowest : 0;
	all = malloc((nlat ? nlat : 1) * sizeof(uint64_t));
	if (all) {
		uint64_t k = 0;
		for (int i = 0; i < n; i++)
			for (uint64_t j = 0; j < th[i].nlat; j++)
				all[k++] = (uint64_t)((double)th[i].lat[j] * th[i].ns_per_tick + 0.5);
		qsort(all, nlat, sizeof(uint64_t), cmp_u64);
		if (nlat) {
			r->lat_p50_ns = (double)all[nlat / 2];
			r->lat_p99_ns = (double)all[(nlat * 99) / 100];
			r->lat_max_ns = (double)all[nlat - 1];
		}
		free(all);
	}
	r->checks = sh->checks;
}

/* Frees every ring entry and drains the caches: a device back to empty,
 * checked once more (the stress test's end). */
static int bt_empty(sl_device *d, bt_thread *th, int n, char *msg, size_t len)
{
	for (int i = 0; i < n; i++)
		for (uint32_t j = 0; j < th[i].nring; j++)
			if (th[i].ring[j].off)
				sl_swap_put(d, th[i].cpu, th[i].ring[j].off, th[i].ring[j].nr);
	if (d->pol->drain)
		d->pol->drain(d);
	return sl_device_check(d, msg, len);
}

int sl_bench_threads(const sl_bench_threads_params *p, sl_bench_threads_result *r, char *msg,
		     size_t len)
{
	bt_shared sh = { .p = p };
	bt_thread *th = NULL;
	int n = p->threads, rc = -1;

	memset(r, 0, sizeof(*r));
	if (n < 1 || n > SL_MAX_CPUS || p->norders < 1 || p->norders > SL_NR_ORDERS ||
	    !(p->pol->props & SL_POL_CONCURRENT) || (n > 1 && !p->concurrent)) {
		snprintf(msg, len, n < 1 || n > SL_MAX_CPUS ? "threads must be in 1..256" :
			 p->norders < 1 || p->norders > SL_NR_ORDERS ? "between 1 and 10 orders" :
			 !(p->pol->props & SL_POL_CONCURRENT) ? "policy has no concurrent mode" :
			 "several threads need the locks (concurrent)");
		return -1;
	}
	for (int i = 0; i < p->norders; i++) {
		if (p->orders[i] < 0 || p->orders[i] >= SL_NR_ORDERS) {
			snprintf(msg, len, "order %d is outside 0..9", p->orders[i]);
			return -1;
		}
	}
	sh.d = sl_device_create(p->slots, SL_DEV_ZRAM, n, p->pol, p->check_every > 0, msg, len);
	th = aligned_alloc(SL_CACHELINE, (size_t)n * sizeof(*th));
	if (!sh.d || !th)
		goto out;
	memset(th, 0, (size_t)n * sizeof(*th));
	if (p->concurrent && sl_device_concurrent(sh.d)) {
		snprintf(msg, len, "out of memory for the locks");
		goto out;
	}
	/* a ring holds the folios the fill gives its CPU: at most the fill's
	 * pages in the smallest order of the mix, shared round robin */
	int min_order = p->orders[0];
	for (int i = 1; i < p->norders; i++)
		if (p->orders[i] < min_order)
			min_order = p->orders[i];
	uint64_t cap = (uint64_t)((double)p->slots * p->fill) / (UINT64_C(1) << min_order) /
		       (uint64_t)n + 2;
	if (cap > UINT32_MAX) {
		snprintf(msg, len, "%llu folios per thread after the fill: the benchmark holds at most %u "
			 "(a smaller --size, a lower --fill or more threads)", (unsigned long long)cap,
			 UINT32_MAX);
		goto out;
	}
	for (int i = 0; i < n; i++) {
		th[i].sh = &sh;
		th[i].cpu = i;
		sl_rng_init(&th[i].rng, SL_RNG_DEFAULT, p->seed * 1000003u + (uint64_t)i + 1);
		th[i].lat = calloc(p->ops / SL_BT_SAMPLE + 1, sizeof(uint64_t));
		th[i].cap = (uint32_t)cap;
		th[i].ring = calloc(th[i].cap, sizeof(bt_piece));
		if (!th[i].lat || !th[i].ring) {
			snprintf(msg, len, "out of memory for the %s of thread %d (%llu entries)",
				 th[i].lat ? "folio ring" : "latency samples", i,
				 th[i].lat ? (unsigned long long)cap :
					     (unsigned long long)(p->ops / SL_BT_SAMPLE + 1));
			goto out;
		}
	}
	bt_fill(sh.d, th, n, p);
	sh.d->st = (sl_dev_stats){ 0 };
	pthread_barrier_init(&sh.check, NULL, (unsigned)n);
	int started = 1;
	while (started < n && pthread_create(&th[started].tid, NULL, bt_worker, &th[started]) == 0)
		started++;
	atomic_store_explicit(&sh.go, started == n ? 1 : -1, memory_order_release);
	if (started == n)
		bt_worker(&th[0]);
	for (int i = 1; i < started; i++)
		pthread_join(th[i].tid, NULL);
	pthread_barrier_destroy(&sh.check);
	if (started < n) {
		snprintf(msg, len, "could start only %d of %d threads", started, n);
		goto out;
	}
	if (!sh.d->lk)
		th[0].dev = sh.d->st; /* without locks the device kept the counters */
	bt_collect(th, n, &sh, r);
	r->fill = (double)sh.d->inuse_pages / (double)sh.d->pages;
	r->map_hash = map_hash(sh.d);
	if (sh.check_failed) {
		snprintf(msg, len, "%s", sh.msg);
		goto out;
	}
	if (p->check_every && bt_empty(sh.d, th, n, msg, len))
		goto out;
	rc = 0;
out:
	for (int i = 0; th && i < n; i++) {
		free(th[i].lat);
		free(th[i].ring);
	}
	free(th);
	sl_device_destroy(sh.d);
	return rc;
}
