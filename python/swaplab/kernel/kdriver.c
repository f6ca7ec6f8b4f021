/*
 * kdriver.c - swaplab-kdriver: replays a workload's operation stream on the
 * live kernel (docs/kernel-harness.md).
 *
 * The Python harness (swaplab kernel run) prepares the machine (its own zram
 * swap device, the mTHP knobs) and starts this program, which:
 *   - pins itself to --cpu;
 *   - maps region A (and B) as separate anonymous mappings, each starting
 *     exactly its --region-X-offset past a 2 MiB boundary (0: aligned; a
 *     larger range is reserved and the region placed inside it), MADV_HUGEPAGE
 *     on A, MADV_NOHUGEPAGE on B (sl_wl_regions' vmflags);
 *   - plays the same stream as the model (sl_wl_play): TOUCH writes 0x11 to
 *     every page of the range in address order, DONTNEED and PAGEOUT are the
 *     madvise calls;
 *   - at every ITER_END reads the per-size mTHP stats deltas and the layout
 *     from /proc/self/pagemap, hashes the layout (sl_layout_hash) and takes
 *     the fragmentation metrics of device 0's used slots (sl_frag_*, the
 *     model's own function: on the harness's own device every used slot
 *     holds one of the layout's pages);
 *   - writes its raw results as JSON (--json) and the final layout as one
 *     little-endian uint64 per page (--layout). Nothing parses its printed
 *     text.
 *
 * Exit status: 0 done, 1 failure (one line on stderr), 2 bad arguments.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include "swaplab/swaplab.h"

#define DRV_NAME "swaplab-kdriver"
#include "drvutil.h"

#ifndef MADV_PAGEOUT
#define MADV_PAGEOUT 21
#endif
#ifndef MADV_HUGEPAGE
#define MADV_HUGEPAGE 14
#endif
#ifndef MADV_NOHUGEPAGE
#define MADV_NOHUGEPAGE 15
#endif

/* Fragmentation metrics need a byte per slot every iteration: up to 64 GiB
 * of swap (16 MiB of map); larger devices' results carry none. */
#define FRAG_MAX_SLOTS (UINT64_C(1) << 24)

enum { ST_SWPOUT, ST_FALLBACK, ST_SWPIN, NR_ST };
static const char *const st_names[NR_ST] = { "swpout", "swpout_fallback", "swpin" };

typedef struct iter_rec {
	uint64_t v[NR_ST][SL_NR_ORDERS];
	uint64_t layout_hash;
	uint64_t swapped_pages;
	long long inuse_pages;   /* from /proc/swaps, -1 if unknown */
	long long dev_inuse[SL_MAX_SWAPFILES]; /* per --swap-dev */
	int swap_type;           /* -1: no page swapped; -2: several types */
	sl_frag_metrics frag;    /* device 0, from the layout's slots */
} iter_rec;

typedef struct drv {
	sl_wl_params p;
	const char *sysfs_root;
	const char *swap_dev[SL_MAX_SWAPFILES]; /* in swapon order: swap types 0, 1, ... */
	int nswap;
	const char *json_path;
	const char *layout_path;
	int progress;
	sl_region_spec reg[SL_MAX_REGIONS];
	int nreg;
	unsigned char *base[SL_MAX_REGIONS];
	uint64_t npages;
	int pagemap_fd;
	uint64_t *pm;            /* raw pagemap entries, npages */
	uint64_t *layout;        /* npages */
	uint8_t *slot_map;       /* device 0's slots, 1 = used: the metrics' input;
				    NULL above FRAG_MAX_SLOTS (no metrics) */
	uint64_t max_slots;
	uint64_t snap[NR_ST][SL_NR_ORDERS];
	uint64_t snap_pswpout, snap_pswpin;
	iter_rec *iters;
	int it;
	double t0;
} drv;

static uint64_t read_stat(const drv *d, int order, int st)
{
	char path[512], buf[64];
	unsigned kb = (PAGE << order) / 1024;

	snprintf(path, sizeof(path), "%s/kernel/mm/transparent_hugepage/hugepages-%ukB/stats/%s",
		 d->sysfs_root, kb, st_names[st]);
	if (read_small(path, buf, sizeof(buf)) < 0)
		die(1, "cannot read %s: %s", path, strerror(errno));
	return strtoull(buf, NULL, 10);
}

static void read_vmstat(uint64_t *pswpout, uint64_t *pswpin)
{
	static char buf[16384];
	char *s;

	*pswpout = *pswpin = 0;
	if (read_small("/proc/vmstat", buf, sizeof(buf)) < 0)
		die(1, "cannot read /proc/vmstat: %s", strerror(errno));
	if ((s = strstr(buf, "\npswpin ")))
		*pswpin = strtoull(s + 8, NULL, 10);
	if ((s = strstr(buf, "\npswpout ")))
		*pswpout = strtoull(s + 9, NULL, 10);
}

/* Used KiB of our devices in /proc/swaps, as pages, per device and in all;
 * -1 where not found. */
static long long read_inuse(const drv *d, long long *per)
{
	static char buf[16384];
	char name[256];
	unsigned long long size, used;
	long long sum = 0;
	char *line;

	for (int t = 0; t < d->nswap; t++)
		per[t] = -1;
	if (!d->nswap || read_small("/proc/swaps", buf, sizeof(buf)) < 0)
		return -1;
	for (line = strchr(buf, '\n'); line && line[1]; line = strchr(line + 1, '\n')) {
		if (sscanf(line + 1, "%255s %*s %llu %llu", name, &size, &used) != 3)
			continue;
		for (int t = 0; t < d->nswap; t++)
			if (!strcmp(name, d->swap_dev[t]))
				per[t] = (long long)(used / 4);
	}
	for (int t = 0; t < d->nswap; t++) {
		if (per[t] < 0)
			return -1;
		sum += per[t];
	}
	return sum;
}

static void snapshot(drv *d)
{
	for (int o = 1; o < SL_NR_ORDERS; o++)
		if (d->p.mthp_mask & (1u << o))
			for (int st = 0; st < NR_ST; st++)
				d->snap[st][o] = read_stat(d, o, st);
	read_vmstat(&d->snap_pswpout, &d->snap_pswpin);
}

static void read_layout(drv *d, iter_rec *r)
{
	uint64_t k = 0;
	int type = -1;

	for (int i = 0; i < d->nreg; i++) {
		size_t want = d->reg[i].npages * sizeof(uint64_t);
		off_t off = (off_t)((uintptr_t)d->base[i] / PAGE * sizeof(uint64_t));
		size_t got = 0;

		while (got < want) {
			ssize_t n = pread(d->pagemap_fd, (char *)(d->pm + k) + got, want - got,
					  off + (off_t)got);
			if (n <= 0)
				die(1, "cannot read /proc/self/pagemap: %s",
				    n < 0 ? strerror(errno) : "short read");
			got += (size_t)n;
		}
		k += d->reg[i].npages;
	}
	r->swapped_pages = 0;
	for (uint64_t j = 0; j < d->npages; j++) {
		uint64_t e = d->pm[j];

		if ((e & PM_SWAPPED) && !(e & PM_PRESENT)) {
			int t = (int)(e & PM_TYPE_MASK);

			d->layout[j] = (e >> PM_OFF_SHIFT) & PM_OFF_MASK;
			/* several devices: the entry, as the model's (type << 48) */
			if (d->nswap > 1)
				d->layout[j] = sl_entry(t, d->layout[j]);
			r->swapped_pages++;
			if (type == -1)
				type = t;
			else if (type != t)
				type = -2;
		} else {
			d->layout[j] = SL_NOT_SWAPPED;
		}
	}
	r->swap_type = type;
	r->layout_hash = sl_layout_hash(d->layout, d->npages);
}

/* The fragmentation metrics of device 0 after this iteration: slot 0 (the
 * header) and every slot of the layout used, the rest free. */
static void layout_frag(drv *d, sl_frag_metrics *m)
{
	memset(d->slot_map, 0, d->max_slots);
	d->slot_map[0] = 1;
	for (uint64_t j = 0; j < d->npages; j++) {
		uint64_t e = d->layout[j];

		if (e != SL_NOT_SWAPPED && !sl_entry_type(e) && e < d->max_slots)
			d->slot_map[e] = 1;
	}
	sl_frag_init(m);
	sl_frag_add_map(m, d->slot_map, d->max_slots);
	sl_frag_finish(m);
}

static void iter_end(drv *d)
{
	iter_rec *r = &d->iters[d->it];
	uint64_t pswpout, pswpin, big_out = 0, big_in = 0;

	memset(r, 0, sizeof(*r));
	for (int o = 1; o < SL_NR_ORDERS; o++) {
		if (!(d->p.mthp_mask & (1u << o)))
			continue;
		for (int st = 0; st < NR_ST; st++) {
			uint64_t v = read_stat(d, o, st);

			r->v[st][o] = v - d->snap[st][o];
			d->snap[st][o] = v;
		}
		big_out += r->v[ST_SWPOUT][o] << o;
		big_in += r->v[ST_SWPIN][o] << o;
	}
	/* order 0 has no per-size stats: the pages of pswpout/pswpin that the
	 * large sizes do not account for (system-wide counters) */
	read_vmstat(&pswpout, &pswpin);
	r->v[ST_SWPOUT][0] = pswpout - d->snap_pswpout >= big_out ? pswpout - d->snap_pswpout - big_out : 0;
	r->v[ST_SWPIN][0] = pswpin - d->snap_pswpin >= big_in ? pswpin - d->snap_pswpin - big_in : 0;
	d->snap_pswpout = pswpout;
	d->snap_pswpin = pswpin;
	read_layout(d, r);
	if (d->slot_map)
		layout_frag(d, &r->frag);
	r->inuse_pages = read_inuse(d, r->dev_inuse);
	d->it++;
	if (d->progress) {
		fprintf(stderr, "\rswaplab-kdriver: iteration %d/%d", d->it, d->p.iterations);
		if (d->it == d->p.iterations)
			fputc('\n', stderr);
	}
}

static int emit(void *ctx, const sl_op *op)
{
	drv *d = ctx;
	unsigned char *addr;
	size_t len;

	if (op->kind == SL_OP_TOUCH || op->kind == SL_OP_DONTNEED || op->kind == SL_OP_PAGEOUT) {
		if (op->region >= d->nreg || (uint64_t)op->first + op->npages > d->reg[op->region].npages)
			die(1, "operation outside region %d", op->region);
		addr = d->base[op->region] + (size_t)op->first * PAGE;
		len = (size_t)op->npages * PAGE;
	} else {
		addr = NULL;
		len = 0;
	}
	switch (op->kind) {
	case SL_OP_TOUCH:
		/* every page written, in address order */
		for (size_t off = 0; off < len; off += PAGE)
			memset(addr + off, 0x11, PAGE);
		break;
	case SL_OP_DONTNEED:
		if (madvise(addr, len, MADV_DONTNEED))
			die(1, "madvise(MADV_DONTNEED): %s", strerror(errno));
		break;
	case SL_OP_PAGEOUT:
		if (madvise(addr, len, MADV_PAGEOUT))
			die(1, "madvise(MADV_PAGEOUT): %s", strerror(errno));
		break;
	case SL_OP_WARMUP_END:
		snapshot(d);
		break;
	case SL_OP_ITER_END:
		iter_end(d);
		break;
	default:
		break;
	}
	return 0;
}

/* Maps npages at exactly pgoff pages past a 2 MiB boundary: reserves 4 MiB
 * more than the region, places the region inside and unmaps the rest. */
static unsigned char *map_region(uint64_t npages, unsigned vmflags, uint32_t pgoff)
{
	size_t len = (size_t)npages * PAGE;
	size_t over = len + 2 * ALIGN_2M;
	unsigned char *raw = mmap(NULL, over, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uintptr_t start, end;

	if (raw == MAP_FAILED)
		die(1, "mmap of %zu bytes: %s", over, strerror(errno));
	start = (((uintptr_t)raw + ALIGN_2M - 1) & ~(uintptr_t)(ALIGN_2M - 1)) + (uintptr_t)pgoff * PAGE;
	end = start + len;
	if (start > (uintptr_t)raw)
		munmap(raw, start - (uintptr_t)raw);
	if ((uintptr_t)raw + over > end)
		munmap((void *)end, (uintptr_t)raw + over - end);
	if (madvise((void *)start, len, (vmflags & SL_VMA_HUGEPAGE) ? MADV_HUGEPAGE : MADV_NOHUGEPAGE))
		die(1, "madvise(%s): %s", (vmflags & SL_VMA_HUGEPAGE) ? "MADV_HUGEPAGE" : "MADV_NOHUGEPAGE",
		    strerror(errno));
	return (unsigned char *)start;
}

static void put_u64_array(FILE *f, const uint64_t *v, int n)
{
	fputc('[', f);
	for (int i = 0; i < n; i++)
		fprintf(f, "%s%" PRIu64, i ? ", " : "", v[i]);
	fputc(']', f);
}

static void put_i32_array(FILE *f, const int32_t *v, int n)
{
	fputc('[', f);
	for (int i = 0; i < n; i++)
		fprintf(f, "%s%" PRId32, i ? ", " : "", v[i]);
	fputc(']', f);
}

/* An iteration's metrics as the core computed them: the indices in integer
 * thousandths, the score exact (%.17g); the harness turns them into the
 * result files' "frag" object. */
static void put_frag(FILE *f, const sl_frag_metrics *m)
{
	fprintf(f, ", \"frag\": {\"free_slots\": %" PRIu64 ", \"free_aligned\": ", m->free_slots);
	put_u64_array(f, m->free_aligned, SL_NR_ORDERS);
	fputs(", \"free_blocks\": ", f);
	put_u64_array(f, m->free_blocks, SL_NR_ORDERS);
	fputs(", \"unusable_index_milli\": ", f);
	put_i32_array(f, m->unusable_index, SL_NR_ORDERS);
	fputs(", \"fragmentation_index_milli\": ", f);
	put_i32_array(f, m->frag_index, SL_NR_ORDERS);
	fprintf(f, ", \"free_extents\": %" PRIu64 ", \"largest_free_extent\": %" PRIu64
		", \"bluestore_score\": %.17g}", m->free_extents, m->largest_extent, m->bluestore_score);
}

static void write_outputs(const drv *d, double seconds)
{
	char tmp[4096];
	FILE *f;

	snprintf(tmp, sizeof(tmp), "%s.tmp", d->json_path);
	if (!(f = fopen(tmp, "w")))
		die(1, "cannot write %s: %s", tmp, strerror(errno));
	fprintf(f, "{\n \"driver\": \"swaplab-kdriver\",\n \"version\": \"%s\",\n", SWAPLAB_VERSION);
	fprintf(f, " \"workload\": \"%s\",\n \"npages\": %" PRIu64 ",\n \"seconds\": %.6f,\n",
		sl_wl_name(d->p.workload), d->npages, seconds);
	fprintf(f, " \"regions\": [");
	for (int i = 0; i < d->nreg; i++)
		fprintf(f, "%s{\"npages\": %" PRIu64 ", \"address\": \"0x%" PRIxPTR "\", \"offset\": %" PRIuPTR "}",
			i ? ", " : "", d->reg[i].npages, (uintptr_t)d->base[i],
			(uintptr_t)d->base[i] & (uintptr_t)(ALIGN_2M - 1));
	fprintf(f, "],\n \"final_layout_hash\": %" PRIu64 ",\n \"iterations\": [", sl_layout_hash(d->layout, d->npages));
	for (int i = 0; i < d->it; i++) {
		const iter_rec *r = &d->iters[i];

		fprintf(f, "%s\n  {", i ? "," : "");
		for (int st = 0; st < NR_ST; st++) {
			fprintf(f, "\"%s\": ", st_names[st]);
			put_u64_array(f, r->v[st], SL_NR_ORDERS);
			fputs(", ", f);
		}
		fprintf(f, "\"layout_hash\": %" PRIu64 ", \"swapped_pages\": %" PRIu64
			", \"inuse_pages\": %lld, \"swap_type\": %d",
			r->layout_hash, r->swapped_pages, r->inuse_pages, r->swap_type);
		if (d->nswap > 1) {
			fputs(", \"dev_inuse\": [", f);
			for (int t = 0; t < d->nswap; t++)
				fprintf(f, "%s%lld", t ? ", " : "", r->dev_inuse[t]);
			fputc(']', f);
		}
		if (d->slot_map)
			put_frag(f, &r->frag);
		fputc('}', f);
	}
	fprintf(f, "\n ]\n}\n");
	if (fclose(f))
		die(1, "cannot write %s: %s", tmp, strerror(errno));
	if (rename(tmp, d->json_path))
		die(1, "cannot rename %s: %s", tmp, strerror(errno));

	if (!(f = fopen(d->layout_path, "wb")))
		die(1, "cannot write %s: %s", d->layout_path, strerror(errno));
	for (uint64_t j = 0; j < d->npages; j++) {
		unsigned char le[8];

		for (int b = 0; b < 8; b++)
			le[b] = (unsigned char)(d->layout[j] >> (8 * b));
		fwrite(le, 1, 8, f);
	}
	if (fclose(f))
		die(1, "cannot write %s: %s", d->layout_path, strerror(errno));
}

static void usage(void)
{
	fprintf(stderr,
		"usage: swaplab-kdriver --workload NAME --json PATH --layout PATH [--swap-bytes N]\n"
		"         [--mthp-mask M] [--small-folios] [--aligned-swapin] [--iterations N]\n"
		"         [--seed S] [--rng default|glibc] [--cpu C] [--region-a-bytes N]\n"
		"         [--region-b-bytes N] [--region-a-offset N] [--region-b-offset N]\n"
		"         [--sysfs-root DIR] [--swap-dev PATH]\n"
		"         [--parent-pid PID] [--progress]\n"
		"Started by 'swaplab kernel run', which prepares the machine; see docs/kernel-harness.md.\n");
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "workload", required_argument, NULL, 'w' },
		{ "swap-bytes", required_argument, NULL, 'S' },
		{ "mthp-mask", required_argument, NULL, 'm' },
		{ "small-folios", no_argument, NULL, 's' },
		{ "aligned-swapin", no_argument, NULL, 'a' },
		{ "iterations", required_argument, NULL, 'i' },
		{ "seed", required_argument, NULL, 'e' },
		{ "rng", required_argument, NULL, 'r' },
		{ "cpu", required_argument, NULL, 'c' },
		{ "region-a-bytes", required_argument, NULL, 'A' },
		{ "region-b-bytes", required_argument, NULL, 'B' },
		{ "region-a-offset", required_argument, NULL, 'O' },
		{ "region-b-offset", required_argument, NULL, 'Q' },
		{ "sysfs-root", required_argument, NULL, 'y' },
		{ "swap-dev", required_argument, NULL, 'd' },
		{ "json", required_argument, NULL, 'j' },
		{ "layout", required_argument, NULL, 'l' },
		{ "parent-pid", required_argument, NULL, 'P' },
		{ "progress", no_argument, NULL, 'g' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	drv d;
	const char *workload = NULL, *rng = "default";
	uint64_t swap = 0, mask = 1u << 4, iters = 100, seed = 1, cpu = 0, ra = 0, rb = 0, ppid = 0;
	uint64_t oa = 0, ob = 0;
	int small = 0, aligned = 0, c;
	char msg[256];
	sigset_t none;

	memset(&d, 0, sizeof(d));
	d.sysfs_root = "/sys";
	/* the harness blocks SIGINT/SIGTERM while it starts us */
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);

	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'w': workload = optarg; break;
		case 'S': swap = parse_u64(optarg, "--swap-bytes"); break;
		case 'm': mask = parse_u64(optarg, "--mthp-mask"); break;
		case 's': small = 1; break;
		case 'a': aligned = 1; break;
		case 'i': iters = parse_u64(optarg, "--iterations"); break;
		case 'e': seed = parse_u64(optarg, "--seed"); break;
		case 'r': rng = optarg; break;
		case 'c': cpu = parse_u64(optarg, "--cpu"); break;
		case 'A': ra = parse_u64(optarg, "--region-a-bytes"); break;
		case 'B': rb = parse_u64(optarg, "--region-b-bytes"); break;
		case 'O': oa = parse_u64(optarg, "--region-a-offset"); break;
		case 'Q': ob = parse_u64(optarg, "--region-b-offset"); break;
		case 'y': d.sysfs_root = optarg; break;
		case 'd':
			if (d.nswap == SL_MAX_SWAPFILES)
				die(2, "at most %d --swap-dev", SL_MAX_SWAPFILES);
			d.swap_dev[d.nswap++] = optarg;
			break;
		case 'j': d.json_path = optarg; break;
		case 'l': d.layout_path = optarg; break;
		case 'P': ppid = parse_u64(optarg, "--parent-pid"); break;
		case 'g': d.progress = 1; break;
		case 'h': usage(); return 0;
		default: usage(); return 2;
		}
	}
	if (optind != argc)
		die(2, "unexpected argument '%s'", argv[optind]);
	if (!workload || !d.json_path || !d.layout_path)
		die(2, "--workload, --json and --layout are required");
	int w = sl_wl_lookup(workload);
	if (w < 0)
		die(2, "unknown workload '%s'", workload);
	sl_wl_defaults(&d.p, w);
	if (swap)
		d.p.swap_bytes = swap;
	if (mask > UINT32_MAX || iters > INT32_MAX || cpu > INT32_MAX || oa > UINT32_MAX || ob > UINT32_MAX)
		die(2, "a parameter is out of range");
	d.p.mthp_mask = (unsigned)mask;
	d.p.small_folios = small;
	d.p.aligned_swapin = aligned;
	d.p.iterations = (int)iters;
	d.p.seed = seed;
	d.p.cpu = (int)cpu;
	if (ra)
		d.p.region_a_bytes = ra;
	if (rb)
		d.p.region_b_bytes = rb;
	d.p.region_a_offset = (uint32_t)oa;
	d.p.region_b_offset = (uint32_t)ob;
	if (!strcmp(rng, "glibc"))
		d.p.rng = SL_RNG_GLIBC;
	else if (!strcmp(rng, "default"))
		d.p.rng = SL_RNG_DEFAULT;
	else
		die(2, "unknown rng '%s'", rng);
	if (sl_wl_validate(&d.p, msg, sizeof(msg)))
		die(2, "%s", msg);

	/* die with the harness: a kill -9 of it must not leave us holding swap */
	if (ppid) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if ((uint64_t)getppid() != ppid)
			die(1, "the harness (pid %" PRIu64 ") is gone", ppid);
	}

	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(d.p.cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		die(1, "cannot pin to cpu %d: %s", d.p.cpu, strerror(errno));

	d.nreg = sl_wl_regions(&d.p, d.reg);
	for (int i = 0; i < d.nreg; i++) {
		d.base[i] = map_region(d.reg[i].npages, d.reg[i].vmflags, d.reg[i].pgoff);
		d.npages += d.reg[i].npages;
	}
	d.pm = calloc(d.npages, sizeof(uint64_t));
	d.layout = calloc(d.npages, sizeof(uint64_t));
	d.iters = calloc((size_t)d.p.iterations + 1, sizeof(iter_rec));
	d.max_slots = d.p.swap_bytes / PAGE;
	if (d.max_slots && d.max_slots <= FRAG_MAX_SLOTS && !(d.slot_map = malloc(d.max_slots)))
		die(1, "out of memory");
	if (!d.pm || !d.layout || !d.iters)
		die(1, "out of memory");
	d.pagemap_fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	if (d.pagemap_fd < 0)
		die(1, "cannot open /proc/self/pagemap: %s", strerror(errno));

	d.t0 = now();
	sl_wl_play(&d.p, emit, &d);
	double seconds = now() - d.t0;
	if (d.it == 0) {
		/* no iteration: the layout after the warm-up */
		iter_rec tmp;
		read_layout(&d, &tmp);
	}
	write_outputs(&d, seconds);
	return 0;
}
