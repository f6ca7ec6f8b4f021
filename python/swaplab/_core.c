/*
 * _core.c - the thin binding between Python and the C core: it converts
 * arguments and results, nothing else. Hot loops stay in the core.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <signal.h>
#include <string.h>
#include <stddef.h>
#include "swaplab/swaplab.h"
#include "swaplab/reclaim.h"

static PyObject *u64_list(const uint64_t *v, int n)
{
	PyObject *l = PyList_New(n);
	if (!l)
		return NULL;
	for (int i = 0; i < n; i++)
		PyList_SET_ITEM(l, i, PyLong_FromUnsignedLongLong(v[i]));
	return l;
}

/* d[key] = u64_list(v, n). 0, or -1 with an exception. */
static int set_u64_list(PyObject *d, const char *key, const uint64_t *v, int n)
{
	PyObject *l = u64_list(v, n);
	int rc = l ? PyDict_SetItemString(d, key, l) : -1;

	Py_XDECREF(l);
	return rc;
}

static PyObject *py_policies(PyObject *self, PyObject *args)
{
	(void)self;
	(void)args;
	PyObject *l = PyList_New(0);
	for (int i = 0; l && sl_policies[i]; i++) {
		const sl_policy *p = sl_policies[i];
		PyObject *d = Py_BuildValue("{s:s,s:s,s:s,s:O,s:O}", "name", p->name, "summary", p->summary,
					    "kernel", p->kernel, "ordered_clusters",
					    (p->props & SL_POL_ORDERED_CLUSTERS) ? Py_True : Py_False,
					    "concurrent", (p->props & SL_POL_CONCURRENT) ? Py_True : Py_False);
		if (!d || PyList_Append(l, d)) {
			Py_XDECREF(d);
			Py_DECREF(l);
			return NULL;
		}
		Py_DECREF(d);
	}
	return l;
}

static PyObject *py_workloads(PyObject *self, PyObject *args)
{
	(void)self;
	(void)args;
	PyObject *l = PyList_New(SL_NR_WORKLOADS);
	for (int w = 0; l && w < SL_NR_WORKLOADS; w++)
		PyList_SET_ITEM(l, w, PyUnicode_FromString(sl_wl_name(w)));
	return l;
}

/* Parses the workload keywords shared by run() and validate(). */
static int parse_params(PyObject *kw, sl_wl_params *p, const char **policy, int *check)
{
	static char *names[] = { "workload", "policy", "swap_bytes", "mthp_mask", "small_folios",
				 "aligned_swapin", "iterations", "seed", "rng", "cpu",
				 "region_a_bytes", "region_b_bytes", "check", "device", "cpus",
				 "migrate_every", "swap_prio", "extra_swap", "metrics", "region_a_offset",
				 "region_b_offset", NULL };
	const char *workload = NULL, *rng = "default", *device = "zram";
	unsigned long long swap = 0, seed = 1, ra = 0, rb = 0;
	unsigned int mask = 1u << 4;
	int small = 0, aligned = 0, iters = 100, cpu = 0, cpus = 1;
	unsigned int migrate = 0, offa = 0, offb = 0;
	int prio = -1, metrics = 0;
	PyObject *extra = NULL;
	PyObject *empty = PyTuple_New(0);

	*policy = "linux-6.18";
	*check = 0;
	int ok = PyArg_ParseTupleAndKeywords(empty, kw, "s|sKIppiKsiKKisiIiOpII", names, &workload,
					     policy, &swap, &mask, &small, &aligned, &iters, &seed,
					     &rng, &cpu, &ra, &rb, check, &device, &cpus, &migrate,
					     &prio, &extra, &metrics, &offa, &offb);
	Py_DECREF(empty);
	if (!ok)
		return -1;
	int w = sl_wl_lookup(workload);
	if (w < 0) {
		PyErr_Format(PyExc_ValueError, "unknown workload '%s'", workload);
		return -1;
	}
	sl_wl_defaults(p, w);
	if (swap)
		p->swap_bytes = swap;
	p->mthp_mask = mask;
	p->small_folios = small;
	p->aligned_swapin = aligned;
	p->iterations = iters;
	p->seed = seed;
	p->cpu = cpu;
	p->cpus = cpus;
	p->migrate_every = migrate;
	p->metrics = metrics;
	if (ra)
		p->region_a_bytes = ra;
	if (rb)
		p->region_b_bytes = rb;
	p->region_a_offset = offa;
	p->region_b_offset = offb;
	if (!strcmp(rng, "glibc"))
		p->rng = SL_RNG_GLIBC;
	else if (!strcmp(rng, "default"))
		p->rng = SL_RNG_DEFAULT;
	else {
		PyErr_Format(PyExc_ValueError, "unknown rng '%s'", rng);
		return -1;
	}
	int known;
	p->device = sl_device_kind(device, &known);
	if (!known) {
		PyErr_Format(PyExc_ValueError, "unknown device kind '%s'", device);
		return -1;
	}
	/* priorities: -1 is swapon without -p */
	p->swap_prio = prio < 0 ? SL_PRIO_AUTO : prio;
	if (extra && extra != Py_None) {
		PyObject *seq = PySequence_Fast(extra, "extra_swap must be a sequence");
		if (!seq)
			return -1;
		Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
		if (n > SL_MAX_SWAPFILES - 1) {
			Py_DECREF(seq);
			PyErr_Format(PyExc_ValueError, "at most %d swap devices", SL_MAX_SWAPFILES);
			return -1;
		}
		for (Py_ssize_t i = 0; i < n; i++) {
			unsigned long long bytes;
			const char *kind;
			int xp;
			if (!PyArg_ParseTuple(PySequence_Fast_GET_ITEM(seq, i), "Ksi", &bytes, &kind, &xp)) {
				Py_DECREF(seq);
				return -1;
			}
			p->extra[i].bytes = bytes;
			p->extra[i].prio = xp < 0 ? SL_PRIO_AUTO : xp;
			p->extra[i].kind = sl_device_kind(kind, &known);
			if (!known) {
				Py_DECREF(seq);
				PyErr_Format(PyExc_ValueError, "unknown device kind '%s'", kind);
				return -1;
			}
		}
		p->nr_extra = (int)n;
		Py_DECREF(seq);
	}
	char msg[256];
	if (sl_wl_validate(p, msg, sizeof(msg))) {
		PyErr_SetString(PyExc_ValueError, msg);
		return -1;
	}
	return 0;
}

static PyObject *iter_dict(const sl_iter_result *ir, int ndev)
{
	PyObject *d = Py_BuildValue("{s:N,s:N,s:N,s:N,s:K,s:N,s:N,s:K,s:K,s:K}", "swpout",
			     u64_list(ir->swpout, SL_NR_ORDERS), "swpout_fallback",
			     u64_list(ir->swpout_fallback, SL_NR_ORDERS), "swpout_extents",
			     u64_list(ir->swpout_extents, SL_NR_ORDERS), "swpin",
			     u64_list(ir->swpin, SL_NR_ORDERS), "alloc_fail0",
			     (unsigned long long)ir->alloc_fail0, "fail_free",
			     u64_list(ir->fail_free, SL_NR_ORDERS), "fail_aligned",
			     u64_list(ir->fail_aligned, SL_NR_ORDERS), "layout_hash",
			     (unsigned long long)ir->layout_hash, "inuse_pages",
			     (unsigned long long)ir->inuse_pages, "swapped_pages",
			     (unsigned long long)ir->swapped_pages);
	if (d && ndev > 1) {
		PyObject *l = u64_list(ir->dev_inuse, ndev);
		if (!l || PyDict_SetItemString(d, "dev_inuse", l) < 0)
			Py_CLEAR(d);
		Py_XDECREF(l);
	}
	return d;
}

static PyObject *i32_list(const int32_t *v, int n, double scale)
{
	PyObject *l = PyList_New(n);
	for (int i = 0; l && i < n; i++)
		PyList_SET_ITEM(l, i, PyFloat_FromDouble(v[i] * scale));
	return l;
}

/* One sl_frag_metrics as the result files' "frag" object (docs/metrics.md). */
static PyObject *frag_dict(const sl_frag_metrics *m)
{
	PyObject *d = Py_BuildValue("{s:K,s:N,s:N,s:N,s:N,s:K,s:K,s:d}", "free_slots",
				    (unsigned long long)m->free_slots, "free_aligned",
				    u64_list(m->free_aligned, SL_NR_ORDERS), "free_blocks",
				    u64_list(m->free_blocks, SL_NR_ORDERS), "unusable_index",
				    i32_list(m->unusable_index, SL_NR_ORDERS, 1e-3),
				    "fragmentation_index", i32_list(m->frag_index, SL_NR_ORDERS, 1e-3),
				    "free_extents", (unsigned long long)m->free_extents,
				    "largest_free_extent", (unsigned long long)m->largest_extent,
				    "bluestore_score", m->bluestore_score);
	if (!d || !m->has_clusters)
		return d;
	static const char *const state[] = { "isolated", "free", "nonfull", "frag", "full", "discard" };
	PyObject *cl = PyDict_New();
	for (int f = 0; cl && f <= SL_CF_DISCARD; f++) {
		PyObject *l = PyList_New(SL_NR_ORDERS);
		for (int o = 0; l && o < SL_NR_ORDERS; o++)
			PyList_SET_ITEM(l, o, PyLong_FromUnsignedLong(m->clusters[f][o]));
		if (!l || PyDict_SetItemString(cl, state[f], l) < 0)
			Py_CLEAR(cl);
		Py_XDECREF(l);
	}
	if (!cl || PyDict_SetItemString(d, "clusters", cl) < 0)
		Py_CLEAR(d);
	Py_XDECREF(cl);
	return d;
}

static PyObject *layout_bytes(const uint64_t *v, uint64_t n)
{
	PyObject *b = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)(n * 8));
	if (!b)
		return NULL;
	unsigned char *o = (unsigned char *)PyBytes_AS_STRING(b);
	for (uint64_t i = 0; i < n; i++)
		for (int k = 0; k < 8; k++)
			*o++ = (unsigned char)(v[i] >> (8 * k));
	return b;
}

/* ---- a run's hooks: per-iteration callback and stop on SIGINT/SIGTERM */

/* The signal that asked the running sl_run to stop (0: none). Set by the
 * handler the binding installs for the run's duration (catch_signals). */
static volatile sig_atomic_t run_stop_signo;

static void run_stop_handler(int signo)
{
	run_stop_signo = signo;
}

typedef struct run_hook_ctx {
	PyObject *on_iter;         /* callable(iteration, dict) -> stop? */
	PyThreadState *ts;         /* the released GIL's thread state */
	int ndev;
	int failed;                /* on_iter raised: the exception is set */
} run_hook_ctx;

/* Called by the core without the GIL after every iteration: takes the GIL,
 * hands the iteration to Python, releases it. A true return or an
 * exception stops the run. */
static int run_on_iter(void *ctx, int it, const sl_iter_result *ir)
{
	run_hook_ctx *h = ctx;
	int stop;

	PyEval_RestoreThread(h->ts);
	PyObject *d = iter_dict(ir, h->ndev);
	PyObject *r = d ? PyObject_CallFunction(h->on_iter, "iO", it, d) : NULL;
	Py_XDECREF(d);
	if (!r) {
		h->failed = 1;
		stop = 1;
	} else {
		stop = PyObject_IsTrue(r);
		Py_DECREF(r);
		if (stop < 0) {
			h->failed = 1;
			stop = 1;
		}
	}
	h->ts = PyEval_SaveThread();
	return stop;
}

/* Runs with the hooks: on_iter (None: no callback) and, with
 * catch_signals, SIGINT and SIGTERM stop the run between operations
 * instead of waiting for it to end. Returns sl_run_hooked's code. */
static int run_with_hooks(const sl_wl_params *p, const sl_policy *pol, int check,
			  PyObject *on_iter, int catch_signals, sl_run_result *res, int *signo,
			  char *msg, size_t len)
{
	run_hook_ctx h = { .on_iter = on_iter, .ndev = 1 + p->nr_extra };
	sl_run_hooks hooks = { .on_iter = on_iter ? run_on_iter : NULL, .ctx = &h };
	struct sigaction sa, old_int, old_term;
	int rc;

	*signo = 0;
	if (catch_signals) {
		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = run_stop_handler;
		sigemptyset(&sa.sa_mask);
		run_stop_signo = 0;
		hooks.stop = &run_stop_signo;
		sigaction(SIGINT, &sa, &old_int);
		sigaction(SIGTERM, &sa, &old_term);
	}
	h.ts = PyEval_SaveThread();
	rc = sl_run_hooked(p, pol, check, &hooks, res, msg, len);
	PyEval_RestoreThread(h.ts);
	if (catch_signals) {
		sigaction(SIGINT, &old_int, NULL);
		sigaction(SIGTERM, &old_term, NULL);
		*signo = run_stop_signo;
	}
	if (h.failed) {
		if (rc >= 0)
			sl_run_result_free(res);
		return -2;
	}
	return rc;
}

/* One iteration's dict, with its fragmentation metrics (and the model's
 * cluster map) when the run kept them (metrics on). */
static PyObject *run_iter_dict(const sl_run_result *res, int i)
{
	PyObject *it = iter_dict(&res->iter[i], res->ndev);

	if (it && res->frag) {
		PyObject *f = frag_dict(&res->frag[i]);
		if (f && res->cmap) {
			/* the cluster map: two hex digits (flags, order) a cluster,
			 * a byte's pair from a table (8192 clusters an iteration) */
			static char pairs[256][2];
			if (!pairs[0][0])
				for (int b = 0; b < 256; b++) {
					pairs[b][0] = "0123456789abcdef"[b >> 4];
					pairs[b][1] = "0123456789abcdef"[b & 15];
				}
			const uint8_t *row = res->cmap + (size_t)i * res->cmap_clusters;
			PyObject *txt = PyUnicode_New((Py_ssize_t)res->cmap_clusters * 2, 127);
			if (txt) {
				Py_UCS1 *o = PyUnicode_1BYTE_DATA(txt);
				for (uint32_t k = 0; k < res->cmap_clusters; k++)
					memcpy(o + 2 * k, pairs[row[k]], 2);
			}
			if (!txt || PyDict_SetItemString(f, "cluster_map", txt) < 0)
				Py_CLEAR(f);
			Py_XDECREF(txt);
		}
		if (!f || PyDict_SetItemString(it, "frag", f) < 0)
			Py_CLEAR(it);
		Py_XDECREF(f);
	}
	return it;
}

/* proposal-compact's moves and proposal-kcompact's worker (x_compact.c)
 * as d["compact"] and d["kcompact"], each only where the policy searched
 * or the worker woke. 0, or -1 with an exception. */
static int set_compact_stats(PyObject *d, const sl_dev_stats *ds)
{
	int rc = 0;

	if (ds->compact_searches) {
		PyObject *cp = Py_BuildValue("{s:K,s:K,s:K,s:K}", "searches",
					     (unsigned long long)ds->compact_searches, "windows",
					     (unsigned long long)ds->compact_windows, "moves",
					     (unsigned long long)ds->compact_moves, "aborts",
					     (unsigned long long)ds->compact_aborts);
		rc = cp ? PyDict_SetItemString(d, "compact", cp) : -1;
		Py_XDECREF(cp);
	}
	if (!rc && ds->kcompact_wakes) {
		PyObject *kc = Py_BuildValue("{s:K,s:K,s:K}", "wakes",
					     (unsigned long long)ds->kcompact_wakes, "windows",
					     (unsigned long long)ds->kcompact_windows, "moves",
					     (unsigned long long)ds->kcompact_moves);
		rc = kc ? PyDict_SetItemString(d, "kcompact", kc) : -1;
		Py_XDECREF(kc);
	}
	return rc;
}

static PyObject *run_result_dict(const sl_run_result *res, int stopped, int signo)
{
	PyObject *iters = PyList_New(res->iterations);
	for (int i = 0; iters && i < res->iterations; i++) {
		PyObject *d = run_iter_dict(res, i);
		if (!d) {
			Py_CLEAR(iters);
			break;
		}
		PyList_SET_ITEM(iters, i, d);
	}
	const sl_dev_stats *ds = &res->dev;
	PyObject *dev = Py_BuildValue("{s:N,s:N,s:N,s:K,s:K,s:K,s:K}", "alloc_ok",
				      u64_list(ds->alloc_ok, SL_NR_ORDERS), "alloc_fail",
				      u64_list(ds->alloc_fail, SL_NR_ORDERS), "alloc_fast",
				      u64_list(ds->alloc_fast, SL_NR_ORDERS), "alloc_steal",
				      (unsigned long long)ds->alloc_steal, "freed_slots",
				      (unsigned long long)ds->freed_slots, "full_reclaim_scans",
				      (unsigned long long)ds->full_reclaim_scans, "discarded_clusters",
				      (unsigned long long)ds->discarded_clusters);
	/* SL_POL_KEEP_FULL0's hand-offs (lrm_handoff()): only where there were some */
	if (dev && ds->handoffs) {
		PyObject *h = PyLong_FromUnsignedLongLong((unsigned long long)ds->handoffs);
		if (!h || PyDict_SetItemString(dev, "handoffs", h) < 0)
			Py_CLEAR(dev);
		Py_XDECREF(h);
	}
	if (dev && ds->handoff_takes) {
		PyObject *h = PyLong_FromUnsignedLongLong((unsigned long long)ds->handoff_takes);
		if (!h || PyDict_SetItemString(dev, "handoff_takes", h) < 0)
			Py_CLEAR(dev);
		Py_XDECREF(h);
	}
	if (dev && set_compact_stats(dev, ds) < 0)
		Py_CLEAR(dev);
	PyObject *devs = PyList_New(res->ndev);
	for (int t = 0; devs && t < res->ndev; t++) {
		const sl_dev_stats *st = &res->devst[t];
		PyObject *d = Py_BuildValue("{s:i,s:i,s:N,s:N,s:K}", "type", t, "prio",
					    res->dev_prio[t], "alloc_ok",
					    u64_list(st->alloc_ok, SL_NR_ORDERS), "alloc_fast",
					    u64_list(st->alloc_fast, SL_NR_ORDERS), "freed_slots",
					    (unsigned long long)st->freed_slots);
		if (!d) {
			Py_CLEAR(devs);
			break;
		}
		PyList_SET_ITEM(devs, t, d);
	}
	PyObject *stop_sig = signo ? PyLong_FromLong(signo) : (Py_INCREF(Py_None), Py_None);
	return Py_BuildValue("{s:N,s:N,s:d,s:K,s:K,s:K,s:N,s:N,s:O,s:N}", "iterations", iters,
			     "layout", layout_bytes(res->layout, res->npages), "seconds",
			     res->seconds, "max_slots", (unsigned long long)res->max_slots,
			     "npages", (unsigned long long)res->npages, "checks",
			     (unsigned long long)res->checks, "device", dev, "devices", devs,
			     "stopped", stopped ? Py_True : Py_False, "stop_signal", stop_sig);
}

static PyObject *py_run(PyObject *self, PyObject *args, PyObject *kw)
{
	(void)self;
	(void)args;
	sl_wl_params p;
	const char *policy;
	int check, signo;
	char msg[256];
	sl_run_result res;
	PyObject *on_iter = NULL;
	int catch_signals = 0;

	/* the hooks are run()'s own keywords; the rest are the parameters */
	PyObject *params = kw ? PyDict_Copy(kw) : PyDict_New();
	if (!params)
		return NULL;
	PyObject *cs = PyDict_GetItemString(params, "catch_signals");
	if (cs && (catch_signals = PyObject_IsTrue(cs)) < 0) {
		Py_DECREF(params);
		return NULL;
	}
	on_iter = PyDict_GetItemString(params, "on_iter");
	if (on_iter == Py_None)
		on_iter = NULL;
	if (on_iter && !PyCallable_Check(on_iter)) {
		Py_DECREF(params);
		return PyErr_Format(PyExc_TypeError, "on_iter must be callable");
	}
	Py_XINCREF(on_iter);
	if ((PyDict_GetItemString(params, "catch_signals") &&
	     PyDict_DelItemString(params, "catch_signals")) ||
	    (PyDict_GetItemString(params, "on_iter") && PyDict_DelItemString(params, "on_iter")) ||
	    parse_params(params, &p, &policy, &check)) {
		Py_XDECREF(on_iter);
		Py_DECREF(params);
		return NULL;
	}
	const sl_policy *pol = sl_policy_find(policy);
	if (!pol) {
		PyErr_Format(PyExc_ValueError, "unknown policy '%s'", policy);
		Py_XDECREF(on_iter);
		Py_DECREF(params);
		return NULL;
	}
	int rc = run_with_hooks(&p, pol, check, on_iter, catch_signals, &res, &signo, msg,
				sizeof(msg));
	Py_XDECREF(on_iter);
	Py_DECREF(params);     /* policy pointed into it: used no more */
	if (rc == -2)
		return NULL;
	if (rc < 0)
		return PyErr_Format(PyExc_RuntimeError, "%s", msg);
	PyObject *out = run_result_dict(&res, rc == SL_RUN_STOPPED, signo);
	sl_run_result_free(&res);
	return out;
}

static PyObject *py_validate(PyObject *self, PyObject *args, PyObject *kw)
{
	(void)self;
	(void)args;
	sl_wl_params p;
	const char *policy;
	int check;

	if (parse_params(kw, &p, &policy, &check))
		return NULL;
	const sl_policy *pol = sl_policy_find(policy);
	if (!pol)
		return PyErr_Format(PyExc_ValueError, "unknown policy '%s'", policy);
	/* a small device of the same kind tells whether the policy models it */
	char msg[256];
	for (int t = 0; t <= p.nr_extra; t++) {
		unsigned kind = t ? p.extra[t - 1].kind : p.device;
		sl_device *d = sl_device_create(SL_CLUSTER * 2, kind, 1, pol, 0, msg, sizeof(msg));
		if (!d)
			return PyErr_Format(PyExc_ValueError, "%s", msg);
		sl_device_destroy(d);
	}
	Py_RETURN_NONE;
}

static PyObject *py_bench_alloc(PyObject *self, PyObject *args)
{
	(void)self;
	const char *policy;
	unsigned long long slots, pairs, seed;
	int order;
	double fill;
	char msg[256];
	sl_bench_alloc_result r = { 0 };

	if (!PyArg_ParseTuple(args, "sKidKK", &policy, &slots, &order, &fill, &pairs, &seed))
		return NULL;
	const sl_policy *pol = sl_policy_find(policy);
	if (!pol)
		return PyErr_Format(PyExc_ValueError, "unknown policy '%s'", policy);
	int rc;
	Py_BEGIN_ALLOW_THREADS
	rc = sl_bench_alloc(pol, slots, order, fill, pairs, seed, &r, msg, sizeof(msg));
	Py_END_ALLOW_THREADS
	if (rc)
		return PyErr_Format(PyExc_RuntimeError, "%s", msg);
	return Py_BuildValue("{s:d,s:d,s:K,s:K,s:d,s:d}", "ops_per_sec", r.ops_per_sec, "ns_per_op",
			     r.ns_per_op, "pairs", (unsigned long long)r.pairs, "failures",
			     (unsigned long long)r.failures, "fill", r.fill, "fill_seconds",
			     r.fill_seconds);
}

static const char *const lock_class_names[SL_NR_LOCK_CLASSES] = {
	[SL_LK_DEVICE] = "device", [SL_LK_CLUSTER] = "cluster", [SL_LK_LOCAL] = "local",
	[SL_LK_GLOBAL] = "global_cluster", [SL_LK_SLOTS] = "slot_cache",
};

static PyObject *py_bench_threads(PyObject *self, PyObject *args, PyObject *kw)
{
	(void)self;
	static char *names[] = { "policy", "slots", "threads", "fill", "orders", "ops", "seed",
				 "concurrent", "check_every", "recent", NULL };
	const char *policy;
	unsigned long long slots, ops, seed = 1, check_every = 0;
	int threads, concurrent = 1, recent = 0;
	double fill;
	PyObject *orders;
	sl_bench_threads_params p = { 0 };
	sl_bench_threads_result r;
	char msg[256];

	if (!PyArg_ParseTupleAndKeywords(args, kw, "sKidOK|KpKp", names, &policy, &slots, &threads,
					 &fill, &orders, &ops, &seed, &concurrent, &check_every, &recent))
		return NULL;
	p.pol = sl_policy_find(policy);
	if (!p.pol)
		return PyErr_Format(PyExc_ValueError, "unknown policy '%s'", policy);
	PyObject *seq = PySequence_Fast(orders, "orders must be a sequence");
	if (!seq)
		return NULL;
	Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
	for (Py_ssize_t i = 0; i < n && i < SL_NR_ORDERS; i++)
		p.orders[i] = (int)PyLong_AsLong(PySequence_Fast_GET_ITEM(seq, i));
	Py_DECREF(seq);
	if (PyErr_Occurred())
		return NULL;
	p.norders = (int)(n < SL_NR_ORDERS ? n : SL_NR_ORDERS);
	p.slots = slots;
	p.threads = threads;
	p.fill = fill;
	p.ops = ops;
	p.seed = seed;
	p.concurrent = concurrent;
	p.check_every = check_every;
	p.recent = recent;
	int rc;
	Py_BEGIN_ALLOW_THREADS
	rc = sl_bench_threads(&p, &r, msg, sizeof(msg));
	Py_END_ALLOW_THREADS
	if (rc)
		return PyErr_Format(PyExc_RuntimeError, "%s", msg);
	PyObject *locks = PyDict_New();
	for (int c = 0; locks && c < SL_NR_LOCK_CLASSES; c++) {
		PyObject *d = Py_BuildValue("{s:K,s:K,s:K,s:K}", "acquisitions",
					    (unsigned long long)r.locks[c].acquisitions, "contended",
					    (unsigned long long)r.locks[c].contended, "wait_ns",
					    (unsigned long long)r.locks[c].wait_ns, "trylock_failed",
					    (unsigned long long)r.locks[c].trylock_failed);
		if (!d || PyDict_SetItemString(locks, lock_class_names[c], d)) {
			Py_XDECREF(d);
			Py_DECREF(locks);
			return NULL;
		}
		Py_DECREF(d);
	}
	return Py_BuildValue("{s:d,s:d,s:K,s:d,s:d,s:d,s:N,s:N,s:N,s:d,s:K}", "ops_per_sec",
			     r.ops_per_sec, "seconds", r.seconds, "ops", (unsigned long long)r.ops,
			     "lat_p50_ns", r.lat_p50_ns, "lat_p99_ns", r.lat_p99_ns, "lat_max_ns",
			     r.lat_max_ns, "locks", locks, "alloc_ok", u64_list(r.alloc_ok, SL_NR_ORDERS),
			     "alloc_fail", u64_list(r.alloc_fail, SL_NR_ORDERS), "fill", r.fill,
			     "map_hash", (unsigned long long)r.map_hash);
}

static PyObject *py_layout_hash(PyObject *self, PyObject *arg)
{
	(void)self;
	Py_buffer b;
	if (PyObject_GetBuffer(arg, &b, PyBUF_SIMPLE))
		return NULL;
	if (b.len % 8) {
		PyBuffer_Release(&b);
		return PyErr_Format(PyExc_ValueError, "layout length %zd is not a multiple of 8", b.len);
	}
	uint64_t n = (uint64_t)b.len / 8, h;
	uint64_t *v = PyMem_Malloc((size_t)(n ? n : 1) * 8);
	if (!v) {
		PyBuffer_Release(&b);
		return PyErr_NoMemory();
	}
	const unsigned char *s = b.buf;
	for (uint64_t i = 0; i < n; i++) {
		v[i] = 0;
		for (int k = 0; k < 8; k++)
			v[i] |= (uint64_t)s[i * 8 + k] << (8 * k);
	}
	h = sl_layout_hash(v, n);
	PyMem_Free(v);
	PyBuffer_Release(&b);
	return PyLong_FromUnsignedLongLong(h);
}

static PyObject *py_frag_metrics(PyObject *self, PyObject *arg)
{
	(void)self;
	Py_buffer b;
	sl_frag_metrics m;
	if (PyObject_GetBuffer(arg, &b, PyBUF_SIMPLE))
		return NULL;
	sl_frag_init(&m);
	Py_BEGIN_ALLOW_THREADS
	sl_frag_add_map(&m, b.buf, (uint64_t)b.len);
	sl_frag_finish(&m);
	Py_END_ALLOW_THREADS
	PyBuffer_Release(&b);
	return frag_dict(&m);
}

/* ------------------------------------------------------------ reclaim workloads */

/* The fields of sl_rwl_params by name, so that Python sees a plain dict
 * (docs/workloads-reclaim.md names them the same way). */
enum { F_U32, F_U64, F_INT, F_DBL };
static const struct rwl_field {
	const char *name;
	size_t off;
	int type;
} rwl_fields[] = {
#define FLD(n, t) { #n, offsetof(sl_rwl_params, n), t }
	FLD(seed, F_U64), FLD(limit_pages, F_U64), FLD(swap_bytes, F_U64), FLD(mthp_mask, F_U32),
	FLD(nr_cpus, F_INT), FLD(chunk_pages, F_U32), FLD(nr_procs, F_U32), FLD(proc_pages, F_U64),
	FLD(reread_passes, F_U32), FLD(wss_pages, F_U64), FLD(accesses, F_U64), FLD(read_pct, F_U32),
	FLD(dist, F_INT), FLD(zipf_s, F_DBL), FLD(jobs, F_U32), FLD(generations, F_U32),
	FLD(size_median_pages, F_U64), FLD(size_sigma, F_DBL), FLD(size_min_pages, F_U64),
	FLD(size_max_pages, F_U64), FLD(life_min_passes, F_U32), FLD(life_max_passes, F_U32),
#undef FLD
};
#define NR_RWL_FIELDS (sizeof(rwl_fields) / sizeof(rwl_fields[0]))

static PyObject *rwl_dict(const sl_rwl_params *p)
{
	PyObject *d = PyDict_New();
	for (size_t i = 0; d && i < NR_RWL_FIELDS; i++) {
		const char *at = (const char *)p + rwl_fields[i].off;
		PyObject *v;
		switch (rwl_fields[i].type) {
		case F_U32: v = PyLong_FromUnsignedLong(*(const uint32_t *)at); break;
		case F_U64: v = PyLong_FromUnsignedLongLong(*(const uint64_t *)at); break;
		case F_INT: v = PyLong_FromLong(*(const int *)at); break;
		default: v = PyFloat_FromDouble(*(const double *)at); break;
		}
		if (!v || PyDict_SetItemString(d, rwl_fields[i].name, v)) {
			Py_XDECREF(v);
			Py_CLEAR(d);
			break;
		}
		Py_DECREF(v);
	}
	if (d) {
		PyObject *w = PyUnicode_FromString(sl_rwl_name(p->kind));
		PyObject *k = PyUnicode_FromString(sl_device_kind_name(p->device));
		if (!w || !k || PyDict_SetItemString(d, "workload", w) || PyDict_SetItemString(d, "device", k))
			Py_CLEAR(d);
		Py_XDECREF(w);
		Py_XDECREF(k);
	}
	return d;
}

/* Fills p from a dict of the fields (missing ones keep their value). */
static int rwl_from_dict(sl_rwl_params *p, PyObject *d)
{
	for (size_t i = 0; i < NR_RWL_FIELDS; i++) {
		PyObject *v = PyDict_GetItemString(d, rwl_fields[i].name);
		char *at = (char *)p + rwl_fields[i].off;
		if (!v)
			continue;
		if (rwl_fields[i].type == F_DBL) {
			double x = PyFloat_AsDouble(v);
			if (x == -1.0 && PyErr_Occurred())
				return -1;
			*(double *)at = x;
			continue;
		}
		unsigned long long x = PyLong_AsUnsignedLongLong(v);
		if (PyErr_Occurred())
			return -1;
		if ((rwl_fields[i].type == F_U32 && x > UINT32_MAX) ||
		    (rwl_fields[i].type == F_INT && x > INT32_MAX)) {
			PyErr_Format(PyExc_ValueError, "%s %llu is too large", rwl_fields[i].name, x);
			return -1;
		}
		if (rwl_fields[i].type == F_U32)
			*(uint32_t *)at = (uint32_t)x;
		else if (rwl_fields[i].type == F_U64)
			*(uint64_t *)at = x;
		else
			*(int *)at = (int)x;
	}
	PyObject *dv = PyDict_GetItemString(d, "device");
	if (dv) {
		const char *name = PyUnicode_AsUTF8(dv);
		int known;
		if (!name)
			return -1;
		p->device = sl_device_kind(name, &known);
		if (!known) {
			PyErr_Format(PyExc_ValueError, "unknown device kind '%s'", name);
			return -1;
		}
	}
	return 0;
}

/* rwl_params(workload=None, preset=None): the defaults of a reclaim
 * workload, or a preset's parameters. */
static PyObject *py_rwl_params(PyObject *self, PyObject *args, PyObject *kw)
{
	(void)self;
	static char *kws[] = { "workload", "preset", NULL };
	const char *wl = NULL, *pre = NULL;
	sl_rwl_params p;
	if (!PyArg_ParseTupleAndKeywords(args, kw, "|zz", kws, &wl, &pre))
		return NULL;
	if (pre) {
		const sl_rwl_preset *pr = sl_rwl_preset_lookup(pre);
		if (!pr)
			return PyErr_Format(PyExc_ValueError, "unknown preset '%s'", pre);
		sl_rwl_defaults(&p, pr->kind);
		pr->apply(&p);
	} else {
		int k = wl ? sl_rwl_lookup(wl) : -1;
		if (k < 0)
			return PyErr_Format(PyExc_ValueError, "unknown reclaim workload '%s'", wl ? wl : "");
		sl_rwl_defaults(&p, k);
	}
	return rwl_dict(&p);
}

static PyObject *py_rwl_workloads(PyObject *self, PyObject *args)
{
	(void)self;
	(void)args;
	PyObject *l = PyList_New(0), *pl = PyList_New(0);
	for (int k = 0; l && k < SL_NR_RWL; k++) {
		PyObject *n = PyUnicode_FromString(sl_rwl_name(k));
		if (!n || PyList_Append(l, n))
			Py_CLEAR(l);
		Py_XDECREF(n);
	}
	for (int i = 0; pl && sl_rwl_preset_at(i); i++) {
		const sl_rwl_preset *pr = sl_rwl_preset_at(i);
		PyObject *d = Py_BuildValue("{s:s,s:s,s:s}", "name", pr->name, "source", pr->source,
					    "workload", sl_rwl_name(pr->kind));
		if (!d || PyList_Append(pl, d))
			Py_CLEAR(pl);
		Py_XDECREF(d);
	}
	if (!l || !pl) {
		Py_XDECREF(l);
		Py_XDECREF(pl);
		return NULL;
	}
	return Py_BuildValue("{s:N,s:N}", "workloads", l, "presets", pl);
}

static const struct cost_field {
	const char *name;
	size_t off;
} cost_fields[] = {
#define CF(n) { #n, offsetof(sl_cost_model, n) }
	CF(fault_folio), CF(fault_page), CF(fault_pmd_folio), CF(swpout_folio), CF(swpout_page),
	CF(swpin_folio), CF(swpin_page), CF(split), CF(scan_page), CF(lock_wait), CF(op), CF(proc),
	CF(compact_move),
#undef CF
};
#define NR_COST_FIELDS (sizeof(cost_fields) / sizeof(cost_fields[0]))

static PyObject *cost_dict(const sl_cost_model *c)
{
	PyObject *d = Py_BuildValue("{s:s}", "name", c->name);
	for (size_t i = 0; d && i < NR_COST_FIELDS; i++) {
		PyObject *v = PyFloat_FromDouble(*(const double *)((const char *)c + cost_fields[i].off));
		if (!v || PyDict_SetItemString(d, cost_fields[i].name, v))
			Py_CLEAR(d);
		Py_XDECREF(v);
	}
	return d;
}

static PyObject *py_cost_default(PyObject *self, PyObject *args)
{
	(void)self;
	(void)args;
	return cost_dict(&sl_cost_default);
}

/* The records of sl_rrun_layouts as the kernel harness writes its own
 * ("label", "phase", "proc", "first", "npages"), or None. */
static PyObject *layout_recs(const sl_rrun_layouts *y, int want)
{
	if (!want)
		Py_RETURN_NONE;
	PyObject *l = PyList_New(0);
	for (uint32_t i = 0; l && i < y->nrecs; i++) {
		const sl_rrun_layout_rec *r = &y->recs[i];
		PyObject *d = Py_BuildValue("{s:s,s:i,s:I,s:K,s:K}", "label", r->phase < 0 ? "exit" : "phase",
					    "phase", r->phase, "proc", (unsigned int)r->proc, "first",
					    (unsigned long long)r->first, "npages", (unsigned long long)r->npages);
		if (!d || PyList_Append(l, d)) {
			Py_XDECREF(d);
			Py_CLEAR(l);
			break;
		}
		Py_DECREF(d);
	}
	return l;
}

/* rrun(params: dict, policy, check=0, cost=None, window=1, layout=False):
 * runs a reclaim workload (window: operations in flight at once,
 * sl_rrun_window; 0 the kernel driver's default of 2 per CPU); layout: the
 * result's "layout_bytes" are the layouts the run recorded
 * (sl_rrun_window_layout(): at each phase marker and at each exit) as a
 * layout dump (little-endian uint64 per page) and "layouts" their records
 * (label "phase" with the marker's phase, or "exit" with -1; proc, first,
 * npages); both None without. */
static PyObject *py_rrun(PyObject *self, PyObject *args, PyObject *kw)
{
	(void)self;
	static char *kws[] = { "params", "policy", "check", "cost", "window", "layout", NULL };
	PyObject *pd, *cd = NULL, *lay, *recs;
	const char *policy = "linux-6.18", *wl;
	int check = 0, rc, want_layout = 0;
	sl_rrun_layouts y = { 0 };
	unsigned int window = 1;
	sl_rwl_params p;
	sl_cost_model cost = sl_cost_default;
	sl_rrun_result r;
	char msg[256] = "";

	if (!PyArg_ParseTupleAndKeywords(args, kw, "O!|siOIp", kws, &PyDict_Type, &pd, &policy, &check, &cd,
					 &window, &want_layout))
		return NULL;
	PyObject *wv = PyDict_GetItemString(pd, "workload");
	if (!wv || !(wl = PyUnicode_AsUTF8(wv)) || sl_rwl_lookup(wl) < 0)
		return PyErr_Occurred() ? NULL : PyErr_Format(PyExc_ValueError, "params need a reclaim workload");
	sl_rwl_defaults(&p, sl_rwl_lookup(wl));
	if (rwl_from_dict(&p, pd))
		return NULL;
	if (cd && cd != Py_None) {
		if (!PyDict_Check(cd))
			return PyErr_Format(PyExc_TypeError, "cost must be a dict");
		for (size_t i = 0; i < NR_COST_FIELDS; i++) {
			PyObject *v = PyDict_GetItemString(cd, cost_fields[i].name);
			if (!v)
				continue;
			double x = PyFloat_AsDouble(v);
			if (x == -1.0 && PyErr_Occurred())
				return NULL;
			*(double *)((char *)&cost + cost_fields[i].off) = x;
		}
		cost.name = "custom";
	}
	const sl_policy *pol = sl_policy_find(policy);
	if (!pol)
		return PyErr_Format(PyExc_ValueError, "unknown policy '%s'", policy);
	if (sl_rwl_validate(&p, msg, sizeof(msg)))
		return PyErr_Format(PyExc_ValueError, "%s", msg);
	Py_BEGIN_ALLOW_THREADS
	rc = sl_rrun_window_layout(&p, pol, &cost, window, check, &r, want_layout ? &y : NULL, msg, sizeof(msg));
	Py_END_ALLOW_THREADS
	if (rc) {
		free(y.pages);
		free(y.recs);
		return PyErr_Format(PyExc_RuntimeError, "%s", msg);
	}
	if (want_layout) {
		lay = layout_bytes(y.pages, y.npages);
	} else {
		lay = Py_None;
		Py_INCREF(lay);
	}
	recs = lay ? layout_recs(&y, want_layout) : NULL;
	free(y.pages);
	free(y.recs);
	if (!recs) {
		Py_XDECREF(lay);
		return NULL;
	}
	PyObject *params = rwl_dict(&p), *costd = cost_dict(&cost);
	PyObject *out = Py_BuildValue(
		"{s:N,s:N,s:N,s:N,s:N,s:N,s:N,s:N,s:K,s:K,s:K,s:K,s:K,s:K,s:K,s:K,s:K,s:K,s:K,s:K,s:K,s:K,"
		"s:K,s:K,s:K,s:K,s:K,s:K,s:K,s:K,s:K,s:K,s:K,s:K,s:K,s:K,s:K,s:K,s:K,s:I,s:K,s:K,s:d,s:d,"
		"s:N,s:N,s:N,s:N}",
		"swpout", u64_list(r.swpout, SL_NR_ORDERS),
		"swpout_fallback", u64_list(r.swpout_fallback, SL_NR_ORDERS),
		"swpin", u64_list(r.swpin, SL_NR_ORDERS),
		"faults_anon", u64_list(r.faults_anon, SL_NR_ORDERS),
		"charge_fallback", u64_list(r.charge_fallback, SL_NR_ORDERS),
		"swpin_fallback_charge", u64_list(r.swpin_fallback_charge, SL_NR_ORDERS),
		"dev_alloc_ok", u64_list(r.dev.alloc_ok, SL_NR_ORDERS),
		"dev_alloc_fail", u64_list(r.dev.alloc_fail, SL_NR_ORDERS),
		"alloc_fail0", (unsigned long long)r.alloc_fail0,
		"zero_remapped", (unsigned long long)r.zero_remapped,
		"zero_transient", (unsigned long long)r.zero_transient,
		"splits", (unsigned long long)r.splits,
		"direct_reclaim", (unsigned long long)r.direct_reclaim,
		"pgscan", (unsigned long long)r.pgscan,
		"pgsteal", (unsigned long long)r.pgsteal,
		"pgactivate", (unsigned long long)r.pgactivate,
		"pgdeactivate", (unsigned long long)r.pgdeactivate,
		"workingset_refault", (unsigned long long)r.ws_refault,
		"workingset_activate", (unsigned long long)r.ws_activate,
		"workingset_restore", (unsigned long long)r.ws_restore,
		"pgrefill", (unsigned long long)r.pgrefill,
		"oom", (unsigned long long)r.oom,
		"max_usage", (unsigned long long)r.max_usage,
		"swap_peak", (unsigned long long)r.swap_peak,
		"free_clusters_min", (unsigned long long)r.free_clusters_min,
		"free_ops", (unsigned long long)r.free_ops,
		"ops_free_empty", (unsigned long long)r.ops_free_empty,
		"procs", (unsigned long long)r.procs,
		"swpout_pages", (unsigned long long)r.swpout_pages,
		"swpin_pages", (unsigned long long)r.swpin_pages,
		"fault_pages", (unsigned long long)r.fault_pages,
		"run_layout_hash", (unsigned long long)r.run_layout_hash,
		"inuse_end", (unsigned long long)r.inuse_end,
		"checks", (unsigned long long)r.checks,
		"lock_waits", (unsigned long long)r.lock_waits,
		"ops", (unsigned long long)r.ops,
		"swap_ra", (unsigned long long)r.swap_ra,
		"swap_ra_hit", (unsigned long long)r.swap_ra_hit,
		"swapcache_clean", (unsigned long long)r.swapcache_clean,
		"window", (unsigned int)r.window,
		"reclaims_overlapped", (unsigned long long)r.reclaims_overlapped,
		"clock_ns", (unsigned long long)r.clock_ns,
		"sys_seconds", r.sys_seconds,
		"seconds", r.seconds,
		"params", params, "cost", costd, "layout_bytes", lay, "layouts", recs);
	/* SL_POL_KEEP_FULL0's hand-offs and the allocations that took such a
	 * range before they failed (lrm_handoff(), xp_handed_cluster()) */
	if (out && (r.dev.handoffs || r.dev.handoff_takes)) {
		PyObject *h = Py_BuildValue("{s:K,s:K}", "handoffs", (unsigned long long)r.dev.handoffs,
					    "handoff_takes", (unsigned long long)r.dev.handoff_takes);
		if (!h || PyDict_SetItemString(out, "dev_handoffs", h) < 0)
			Py_CLEAR(out);
		Py_XDECREF(h);
	}
	if (out && set_compact_stats(out, &r.dev) < 0)
		Py_CLEAR(out);
	/* the avoidable failures (docs/proposals/grid.md) */
	if (out && (set_u64_list(out, "fail_free", r.fail_free, SL_NR_ORDERS) < 0 ||
		    set_u64_list(out, "fail_aligned", r.fail_aligned, SL_NR_ORDERS) < 0))
		Py_CLEAR(out);
	return out;
}

static PyMethodDef methods[] = {
	{ "policies", py_policies, METH_NOARGS, "Every policy: name, summary, kernel." },
	{ "workloads", py_workloads, METH_NOARGS, "Every workload name." },
	{ "run", (PyCFunction)(void (*)(void))py_run, METH_VARARGS | METH_KEYWORDS,
	  "Run a workload on the model." },
	{ "validate", (PyCFunction)(void (*)(void))py_validate, METH_VARARGS | METH_KEYWORDS,
	  "Check workload parameters; ValueError names the problem." },
	{ "bench_alloc", py_bench_alloc, METH_VARARGS, "Alloc/free churn benchmark." },
	{ "bench_threads", (PyCFunction)(void (*)(void))py_bench_threads, METH_VARARGS | METH_KEYWORDS,
	  "Multi-threaded churn under the policy's locks." },
	{ "layout_hash", py_layout_hash, METH_O, "FNV-1a 64 of a layout dump." },
	{ "rwl_workloads", py_rwl_workloads, METH_NOARGS, "Reclaim workloads and their presets." },
	{ "rwl_params", (PyCFunction)(void (*)(void))py_rwl_params, METH_VARARGS | METH_KEYWORDS,
	  "A reclaim workload's defaults or a preset's parameters." },
	{ "rrun", (PyCFunction)(void (*)(void))py_rrun, METH_VARARGS | METH_KEYWORDS,
	  "Run a reclaim workload under its memory limit on the model." },
	{ "cost_default", py_cost_default, METH_NOARGS, "The default cost model's coefficients." },
	{ "frag_metrics", py_frag_metrics, METH_O,
	  "Fragmentation metrics of a slot map: one byte per slot, 0 = free (docs/metrics.md)." },
	{ NULL, NULL, 0, NULL },
};

static struct PyModuleDef module = {
	PyModuleDef_HEAD_INIT, "swaplab._core", "The swaplab C core.", -1, methods,
	NULL, NULL, NULL, NULL,
};

/* The core's constants, from its headers, so that Python never re-declares
 * one (tests/py/test_constants.py pins the values). */
static int add_constants(PyObject *m)
{
	static const struct { const char *name; long long v; } ints[] = {
		{ "PAGE_SIZE", SL_PAGE_SIZE },             /* bytes in a page and a slot */
		{ "CLUSTER_SLOTS", SL_CLUSTER },           /* SWAPFILE_CLUSTER */
		{ "CLUSTER_BYTES", (long long)SL_CLUSTER * SL_PAGE_SIZE },
		{ "NR_ORDERS", SL_NR_ORDERS },             /* SWAP_NR_ORDERS: orders 0..9 */
		{ "PMD_ORDER", SL_PMD_ORDER },
		{ "MTHP_MIN_ORDER", SL_MTHP_MIN_ORDER },   /* the smallest anonymous mTHP */
		{ "MAX_SWAPFILES", SL_MAX_SWAPFILES },     /* devices in one swap set */
		{ "PRIO_MAX", SL_PRIO_MAX },               /* swapon -p 0..PRIO_MAX */
		{ "MAX_CPUS", SL_MAX_CPUS },
		{ "TYPE_SHIFT", SL_TYPE_SHIFT },           /* entry = type << TYPE_SHIFT | offset */
		{ "BT_RECENT", SL_BT_RECENT },             /* bench threads --recent: the newest folios */
	};
	for (size_t i = 0; i < sizeof(ints) / sizeof(ints[0]); i++) {
		PyObject *v = PyLong_FromLongLong(ints[i].v);
		if (!v || PyModule_AddObject(m, ints[i].name, v)) {
			Py_XDECREF(v);
			return -1;
		}
	}
	int n = 0;
	while (sl_device_kind_at(n))
		n++;
	PyObject *kinds = PyTuple_New(n);
	for (int i = 0; kinds && i < n; i++) {
		PyObject *k = PyUnicode_FromString(sl_device_kind_at(i));
		if (!k) {
			Py_CLEAR(kinds);
			break;
		}
		PyTuple_SET_ITEM(kinds, i, k);
	}
	if (!kinds || PyModule_AddObject(m, "DEVICE_KINDS", kinds)) {
		Py_XDECREF(kinds);
		return -1;
	}
	if (PyModule_AddStringConstant(m, "VERSION", SWAPLAB_VERSION))
		return -1;
	return 0;
}

PyMODINIT_FUNC PyInit__core(void);
PyMODINIT_FUNC PyInit__core(void)
{
	PyObject *m = PyModule_Create(&module);
	if (m && add_constants(m)) {
		Py_DECREF(m);
		return NULL;
	}
	return m;
}
