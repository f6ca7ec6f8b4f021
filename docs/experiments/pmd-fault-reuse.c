/*
 * pmd-fault-reuse.c - finding F23 (docs/kernel-findings.md).
 *
 * What a 2 MiB (PMD THP) anonymous fault costs on this guest, as a function
 * of how long ago the blocks it can take were freed. One pass maps a
 * 2 MiB-aligned anonymous region of N blocks of 2 MiB, madvises it
 * (MADV_HUGEPAGE, or MADV_NOHUGEPAGE for the 4K baseline), writes one byte
 * per 4 KiB page that it faults (one per block with THPs, 512 per block with
 * 4K pages), timing each block's faults with CLOCK_MONOTONIC and
 * CLOCK_THREAD_CPUTIME_ID, checks what it got (/proc/self/smaps
 * AnonHugePages; per block /proc/self/pagemap and /proc/kpageflags when they
 * are readable), and unmaps the region.
 *
 * Per mode, a first pass, then ROUNDS rounds; each round runs one pass per
 * delay D (the order of the delays rotates from round to round), sleeping D
 * seconds after the previous pass's munmap before mapping again. D = 0 is
 * the "re-map at once" case: the blocks freed by the previous pass are
 * free for microseconds.
 *
 * It changes no knob. It refuses to run unless
 * /sys/kernel/mm/transparent_hugepage/enabled reads [madvise]. It reads, and
 * records, /sys/module/page_reporting/parameters/page_reporting_order, the
 * pinned CPU's per-cpu page list counts from /proc/zoneinfo, and per pass
 * the deltas of a few /proc/vmstat counters and of its own minor faults.
 *
 * Output: one JSON document (schema swaplab.pmd-fault-reuse/1) on stdout or
 * in -o FILE; a table of medians on stderr.
 *
 * Build: cc -O2 -std=c11 -Wall -Wextra -Werror -o pmd-fault-reuse pmd-fault-reuse.c
 * Run:   taskset -c 0 ./pmd-fault-reuse [-n BLOCKS] [-r ROUNDS]
 *            [-d D1,D2,...] [-m thp|4k|both] [-o FILE]
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#define BLOCK (2UL << 20)
#define PAGE 4096UL
#define PAGES_PER_BLOCK (BLOCK / PAGE)
#define MAX_DELAYS 16
#define KPF_COMPOUND_HEAD 15
#define KPF_THP 22

static void die2(const char *fmt, ...)
{
	va_list ap;
	fputs("pmd-fault-reuse: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(2);
}

static void die1(const char *what)
{
	fprintf(stderr, "pmd-fault-reuse: %s: %s\n", what, strerror(errno));
	exit(1);
}

static int64_t now_ns(clockid_t c)
{
	struct timespec ts;
	clock_gettime(c, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* The first line of a file, newline removed; "" when it cannot be read. */
static void read_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	buf[0] = 0;
	if (!f)
		return;
	if (!fgets(buf, (int)len, f))
		buf[0] = 0;
	fclose(f);
	buf[strcspn(buf, "\n")] = 0;
}

/* The bracketed word of a sysfs choice file ("always [madvise] never"). */
static void read_choice(const char *path, char *buf, size_t len)
{
	char line[256], *a, *b;
	read_line(path, line, sizeof line);
	buf[0] = 0;
	a = strchr(line, '[');
	b = a ? strchr(a, ']') : NULL;
	if (a && b && (size_t)(b - a - 1) < len) {
		memcpy(buf, a + 1, (size_t)(b - a - 1));
		buf[b - a - 1] = 0;
	}
}

/* A JSON string body: the characters that sysfs and uname can give. */
static void json_str(FILE *o, const char *s)
{
	fputc('"', o);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fputc('\\', o);
		if ((unsigned char)*s >= 0x20)
			fputc(*s, o);
	}
	fputc('"', o);
}

/* ---- /proc/vmstat ---- */

static const char *const vm_names[] = {
	"thp_fault_alloc", "thp_fault_fallback", "thp_fault_fallback_charge",
	"compact_stall", "pgfault", "nr_free_pages",
};
#define NVM (sizeof vm_names / sizeof vm_names[0])

static void read_vmstat(long long *v)
{
	char name[64];
	long long x;
	FILE *f = fopen("/proc/vmstat", "r");
	size_t i;
	for (i = 0; i < NVM; i++)
		v[i] = -1;
	if (!f)
		die1("/proc/vmstat");
	while (fscanf(f, "%63s %lld", name, &x) == 2)
		for (i = 0; i < NVM; i++)
			if (!strcmp(name, vm_names[i]))
				v[i] = x;
	fclose(f);
}

/* ---- /proc/zoneinfo: the per-cpu page list of one CPU, per zone ---- */

struct pcp {
	char zone[16];
	long count, high;
};

/* Fills up to max zones' pcp count/high of cpu; returns how many. */
static int read_pcp(int cpu, struct pcp *p, int max)
{
	char line[256], zone[16] = "";
	int n = 0, in_cpu = 0, c;
	long v;
	FILE *f = fopen("/proc/zoneinfo", "r");
	if (!f)
		return 0;
	while (fgets(line, sizeof line, f)) {
		char z[16];
		if (sscanf(line, "Node %*d, zone %15s", z) == 1) {
			snprintf(zone, sizeof zone, "%s", z);
			in_cpu = 0;
		} else if (sscanf(line, " cpu: %d", &c) == 1) {
			in_cpu = (c == cpu);
			if (in_cpu && n < max) {
				snprintf(p[n].zone, sizeof p[n].zone, "%s", zone);
				p[n].count = p[n].high = -1;
				n++;
			}
		} else if (in_cpu && sscanf(line, " count: %ld", &v) == 1) {
			p[n - 1].count = v;
		} else if (in_cpu && sscanf(line, " high: %ld", &v) == 1) {
			p[n - 1].high = v;
		} else if (in_cpu && strstr(line, "vm stats threshold")) {
			in_cpu = 0;
		}
	}
	fclose(f);
	return n;
}

/* ---- /proc/self/smaps: AnonHugePages of the VMAs inside [a, a+len) ---- */

static long anon_huge_kb(uintptr_t a, size_t len)
{
	char line[512];
	unsigned long s, e;
	char perm[8];
	int inside = 0;
	long total = 0, kb;
	FILE *f = fopen("/proc/self/smaps", "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof line, f)) {
		if (sscanf(line, "%lx-%lx %7s", &s, &e, perm) == 3)
			inside = s >= a && e <= a + len;
		else if (inside && sscanf(line, "AnonHugePages: %ld kB", &kb) == 1)
			total += kb;
	}
	fclose(f);
	return total;
}

/* ---- one pass ---- */

struct pass {
	const char *mode;     /* "thp" or "4k" */
	double delay;         /* requested; < 0: the first pass */
	double since_free_s;  /* measured: munmap of the previous pass to mmap */
	int64_t *wall_ns;     /* per block */
	int64_t *cpu_ns;      /* per block */
	uint64_t *pfn;        /* per page faulted (1 per block with thp); 0: unknown */
	int *blk_reused;      /* per block: its faulted pages that the previous pass had */
	int n_thp_heads;      /* blocks whose first page is a THP head (kpageflags) */
	int n_thp_pages;      /* pages mapped by a THP (kpageflags), of all pages */
	long anon_huge_kb;
	long minflt;
	long long vm_delta[NVM];
	double reuse;         /* share of faulted pfns that the previous pass had; < 0 unknown */
	struct pcp pcp[4];
	int npcp;
};

static int pagemap_fd = -1, kpf_fd = -1;

static uint64_t pfn_of(uintptr_t va)
{
	uint64_t e;
	if (pagemap_fd < 0 || pread(pagemap_fd, &e, 8, (off_t)(va / PAGE * 8)) != 8)
		return 0;
	if (!(e >> 63 & 1))
		return 0;
	return e & ((1ULL << 55) - 1);
}

static uint64_t kflags(uint64_t pfn)
{
	uint64_t f;
	if (kpf_fd < 0 || !pfn || pread(kpf_fd, &f, 8, (off_t)(pfn * 8)) != 8)
		return 0;
	return f;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return x < y ? -1 : x > y;
}

static int64_t last_munmap_ns;

static void run_pass(struct pass *p, size_t nblocks, int cpu, const uint64_t *prev_pfn,
		     size_t prev_n)
{
	int thp = !strcmp(p->mode, "thp");
	size_t npf = thp ? nblocks : nblocks * PAGES_PER_BLOCK; /* pages faulted */
	size_t raw_len = (nblocks + 1) * BLOCK, b, i, hits = 0, known = 0;
	long long v0[NVM], v1[NVM];
	struct rusage r0, r1;
	char *raw, *a;

	p->npcp = read_pcp(cpu, p->pcp, 4);
	read_vmstat(v0);
	getrusage(RUSAGE_SELF, &r0);
	p->since_free_s = last_munmap_ns ? (now_ns(CLOCK_MONOTONIC) - last_munmap_ns) / 1e9 : -1;
	raw = mmap(NULL, raw_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (raw == MAP_FAILED)
		die1("mmap");
	a = (char *)(((uintptr_t)raw + BLOCK - 1) & ~(BLOCK - 1));
	if (madvise(a, nblocks * BLOCK, thp ? MADV_HUGEPAGE : MADV_NOHUGEPAGE))
		die1("madvise");
	for (b = 0; b < nblocks; b++) {
		volatile char *blk = a + b * BLOCK;
		int64_t w0 = now_ns(CLOCK_MONOTONIC), c0 = now_ns(CLOCK_THREAD_CPUTIME_ID);
		if (thp)
			blk[0] = 1;
		else
			for (i = 0; i < PAGES_PER_BLOCK; i++)
				blk[i * PAGE] = 1;
		p->cpu_ns[b] = now_ns(CLOCK_THREAD_CPUTIME_ID) - c0;
		p->wall_ns[b] = now_ns(CLOCK_MONOTONIC) - w0;
	}
	getrusage(RUSAGE_SELF, &r1);
	read_vmstat(v1);
	for (i = 0; i < NVM; i++)
		p->vm_delta[i] = v1[i] - v0[i];
	p->minflt = r1.ru_minflt - r0.ru_minflt;
	p->anon_huge_kb = anon_huge_kb((uintptr_t)a, nblocks * BLOCK);
	p->n_thp_heads = p->n_thp_pages = 0;
	for (i = 0; i < nblocks * PAGES_PER_BLOCK; i++) {
		uint64_t pfn = pfn_of((uintptr_t)a + i * PAGE), f = kflags(pfn);
		if (i % PAGES_PER_BLOCK == 0 && (f >> KPF_THP & 1) && (f >> KPF_COMPOUND_HEAD & 1))
			p->n_thp_heads++;
		if (f >> KPF_THP & 1)
			p->n_thp_pages++;
		if (thp ? i % PAGES_PER_BLOCK == 0 : 1)
			p->pfn[thp ? i / PAGES_PER_BLOCK : i] = pfn;
	}
	if (munmap(raw, raw_len))
		die1("munmap");
	last_munmap_ns = now_ns(CLOCK_MONOTONIC);
	p->reuse = -1;
	memset(p->blk_reused, 0, nblocks * sizeof *p->blk_reused);
	if (prev_pfn && prev_n) {
		for (i = 0; i < npf; i++) {
			if (!p->pfn[i])
				continue;
			known++;
			if (bsearch(&p->pfn[i], prev_pfn, prev_n, sizeof *prev_pfn, cmp_u64)) {
				hits++;
				p->blk_reused[thp ? i : i / PAGES_PER_BLOCK]++;
			}
		}
		if (known)
			p->reuse = (double)hits / (double)known;
	}
}

/* ---- statistics and output ---- */

static double quantile(int64_t *v, size_t n, double q) /* v sorted */
{
	double pos = q * (double)(n - 1);
	size_t lo = (size_t)pos;
	double fr = pos - (double)lo;
	if (lo + 1 >= n)
		return (double)v[n - 1];
	return (double)v[lo] * (1 - fr) + (double)v[lo + 1] * fr;
}

static void print_i64s(FILE *o, const int64_t *v, size_t n)
{
	size_t i;
	fputc('[', o);
	for (i = 0; i < n; i++)
		fprintf(o, "%s%lld", i ? "," : "", (long long)v[i]);
	fputc(']', o);
}

static void case_label(char *buf, size_t len, double d)
{
	if (d < 0)
		snprintf(buf, len, "first");
	else
		snprintf(buf, len, "%g", d);
}

/* Pooled per-block times of one case, in one clock. */
struct pool {
	int64_t *all, *ru, *nr; /* every block; blocks reused from the previous pass; others */
	size_t n, nru, nnr, over;
};

#define EXPENSIVE_NS 2000000 /* a block "costs milliseconds": above 2 ms */

static void pool_json(FILE *o, const char *name, struct pool *q)
{
	qsort(q->all, q->n, sizeof *q->all, cmp_i64);
	qsort(q->ru, q->nru, sizeof *q->ru, cmp_i64);
	qsort(q->nr, q->nnr, sizeof *q->nr, cmp_i64);
	fprintf(o, ",\n     \"%s\": {\"median\": %.1f, \"p10\": %.1f, \"p25\": %.1f, \"p75\": %.1f,"
		   " \"p90\": %.1f, \"min\": %.1f, \"max\": %.1f, \"share_over_2ms\": %.3f,"
		   " \"reused\": %zu, \"reused_median\": ",
		name, quantile(q->all, q->n, .5) / 1e3, quantile(q->all, q->n, .1) / 1e3,
		quantile(q->all, q->n, .25) / 1e3, quantile(q->all, q->n, .75) / 1e3,
		quantile(q->all, q->n, .9) / 1e3, q->all[0] / 1e3, q->all[q->n - 1] / 1e3,
		(double)q->over / (double)q->n, q->nru);
	if (q->nru)
		fprintf(o, "%.1f", quantile(q->ru, q->nru, .5) / 1e3);
	else
		fputs("null", o);
	fprintf(o, ", \"other\": %zu, \"other_median\": ", q->nnr);
	if (q->nnr)
		fprintf(o, "%.1f}", quantile(q->nr, q->nnr, .5) / 1e3);
	else
		fputs("null}", o);
}

/*
 * One case (mode, delay): every block's fault time pooled over its passes,
 * in both clocks, and split by whether the block's pages were the previous
 * pass's (THP: the same head pfn; 4K: at least half of its 512 pfns). The
 * table on tab shows the thread CPU time (what wait4 counts as system time).
 */
static void print_case(FILE *o, FILE *tab, struct pass *ps, size_t np, const char *mode,
		       double d, size_t nblocks, int *first_case)
{
	size_t i, b, c, npass = 0, nreuse = 0;
	struct pool q[2]; /* 0: wall, 1: cpu */
	int64_t *sum = malloc(np * sizeof *sum);
	double reuse = 0, since = 0;
	int need = !strcmp(mode, "thp") ? 1 : (int)(PAGES_PER_BLOCK / 2);
	char lab[32];
	memset(q, 0, sizeof q);
	for (c = 0; c < 2; c++) {
		q[c].all = malloc(np * nblocks * sizeof *q[c].all);
		q[c].ru = malloc(np * nblocks * sizeof *q[c].ru);
		q[c].nr = malloc(np * nblocks * sizeof *q[c].nr);
		if (!q[c].all || !q[c].ru || !q[c].nr)
			die1("malloc");
	}
	if (!sum)
		die1("malloc");
	for (i = 0; i < np; i++) {
		int64_t s = 0;
		if (strcmp(ps[i].mode, mode) || ps[i].delay != d)
			continue;
		for (b = 0; b < nblocks; b++) {
			for (c = 0; c < 2; c++) {
				int64_t t = c ? ps[i].cpu_ns[b] : ps[i].wall_ns[b];
				q[c].all[q[c].n++] = t;
				q[c].over += t > EXPENSIVE_NS;
				if (ps[i].reuse < 0)
					continue;
				if (ps[i].blk_reused[b] >= need)
					q[c].ru[q[c].nru++] = t;
				else
					q[c].nr[q[c].nnr++] = t;
			}
			s += ps[i].cpu_ns[b];
		}
		sum[npass++] = s;
		since += ps[i].since_free_s;
		if (ps[i].reuse >= 0) {
			reuse += ps[i].reuse;
			nreuse++;
		}
	}
	if (npass) {
		case_label(lab, sizeof lab, d);
		qsort(sum, npass, sizeof *sum, cmp_i64);
		fprintf(o, "%s\n    {\"mode\": \"%s\", \"delay\": \"%s\", \"passes\": %zu, \"blocks_timed\": %zu,"
			   " \"mean_since_free_s\": %.3f, \"mean_pfn_reuse\": ",
			*first_case ? "" : ",", mode, lab, npass, q[0].n, since / (double)npass);
		if (nreuse)
			fprintf(o, "%.3f", reuse / (double)nreuse);
		else
			fputs("null", o);
		fprintf(o, ",\n     \"pass_cpu_ms\": {\"median\": %.2f, \"min\": %.2f, \"max\": %.2f}",
			quantile(sum, npass, .5) / 1e6, sum[0] / 1e6, sum[npass - 1] / 1e6);
		pool_json(o, "block_wall_us", &q[0]);
		pool_json(o, "block_cpu_us", &q[1]);
		fputc('}', o);
		fprintf(tab, "%-4s %-6s %6zu %9.1f %9.1f %9.1f %9.1f %6.2f %6.2f %5zu %9.1f %5zu %9.1f\n",
			mode, lab, npass, quantile(q[1].all, q[1].n, .5) / 1e3,
			quantile(q[1].all, q[1].n, .1) / 1e3, quantile(q[1].all, q[1].n, .9) / 1e3,
			quantile(q[0].all, q[0].n, .5) / 1e3, (double)q[1].over / (double)q[1].n,
			nreuse ? reuse / (double)nreuse : -1.0, q[1].nru,
			q[1].nru ? quantile(q[1].ru, q[1].nru, .5) / 1e3 : -1.0, q[1].nnr,
			q[1].nnr ? quantile(q[1].nr, q[1].nnr, .5) / 1e3 : -1.0);
		*first_case = 0;
	}
	for (c = 0; c < 2; c++)
		free(q[c].all), free(q[c].ru), free(q[c].nr);
	free(sum);
}

static void print_pass(FILE *o, const struct pass *p, size_t nblocks, int first)
{
	size_t i;
	int thp = !strcmp(p->mode, "thp");
	char lab[32];
	case_label(lab, sizeof lab, p->delay);
	fprintf(o, "%s\n    {\"mode\": \"%s\", \"delay\": \"%s\", \"since_free_s\": %.3f,"
		   " \"anon_huge_kb\": %ld, \"thp_heads\": %d, \"thp_pages\": %d, \"minflt\": %ld,"
		   " \"pfn_reuse\": ",
		first ? "" : ",", p->mode, lab, p->since_free_s, p->anon_huge_kb, p->n_thp_heads,
		p->n_thp_pages, p->minflt);
	if (p->reuse >= 0)
		fprintf(o, "%.3f", p->reuse);
	else
		fputs("null", o);
	fputs(", \"vmstat_delta\": {", o);
	for (i = 0; i < NVM; i++)
		fprintf(o, "%s\"%s\": %lld", i ? ", " : "", vm_names[i], p->vm_delta[i]);
	fputs("}, \"pcp_before\": [", o);
	for (i = 0; i < (size_t)p->npcp; i++)
		fprintf(o, "%s{\"zone\": \"%s\", \"count\": %ld, \"high\": %ld}", i ? ", " : "",
			p->pcp[i].zone, p->pcp[i].count, p->pcp[i].high);
	fputs("],\n     \"block_wall_ns\": ", o);
	print_i64s(o, p->wall_ns, nblocks);
	fputs(",\n     \"block_cpu_ns\": ", o);
	print_i64s(o, p->cpu_ns, nblocks);
	fputs(",\n     \"block_reused_pages\": [", o);
	for (i = 0; i < nblocks; i++)
		fprintf(o, "%s%d", i ? "," : "", p->reuse < 0 ? -1 : p->blk_reused[i]);
	fputc(']', o);
	if (thp) {
		fputs(",\n     \"block_pfn\": [", o);
		for (i = 0; i < nblocks; i++)
			fprintf(o, "%s%llu", i ? "," : "", (unsigned long long)p->pfn[i]);
		fputc(']', o);
	}
	fputc('}', o);
}

static size_t parse_delays(const char *s, double *d)
{
	size_t n = 0;
	char *end;
	while (*s) {
		if (n == MAX_DELAYS)
			die2("at most %d delays", MAX_DELAYS);
		errno = 0;
		d[n] = strtod(s, &end);
		if (end == s || errno || d[n] < 0 || d[n] > 600 || (*end && *end != ','))
			die2("bad delay list: %s", s);
		n++;
		s = *end ? end + 1 : end;
	}
	if (!n)
		die2("empty delay list");
	return n;
}

static long parse_pos(const char *s, const char *what, long max)
{
	char *end;
	long v;
	errno = 0;
	v = strtol(s, &end, 10);
	if (end == s || *end || errno || v < 1 || v > max)
		die2("bad %s: %s (1..%ld)", what, s, max);
	return v;
}

static void sleep_s(double d)
{
	struct timespec ts = {(time_t)d, (long)((d - (double)(time_t)d) * 1e9)};
	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

int main(int argc, char **argv)
{
	size_t nblocks = 32, rounds = 7, ndel, nmodes = 2, m, r, j, np = 0, i;
	double delays[MAX_DELAYS], max_delay = 0;
	const char *modes[2] = {"thp", "4k"}, *out = NULL;
	char enabled[32], defrag[32], pmd_enabled[32], order[32], kpo[32], date[64];
	struct utsname un;
	struct pass *ps;
	FILE *o;
	int opt, cpu, first;
	time_t t0 = time(NULL);

	ndel = parse_delays("0,0.5,1,2,3,5", delays);
	opterr = 0;
	while ((opt = getopt(argc, argv, "n:r:d:m:o:")) != -1) {
		switch (opt) {
		case 'n': nblocks = (size_t)parse_pos(optarg, "block count", 4096); break;
		case 'r': rounds = (size_t)parse_pos(optarg, "round count", 1000); break;
		case 'd': ndel = parse_delays(optarg, delays); break;
		case 'm':
			if (!strcmp(optarg, "thp") || !strcmp(optarg, "4k")) {
				modes[0] = optarg;
				nmodes = 1;
			} else if (strcmp(optarg, "both")) {
				die2("bad mode: %s (thp, 4k or both)", optarg);
			}
			break;
		case 'o': out = optarg; break;
		default:
			die2("bad option or missing value: -%c; usage: pmd-fault-reuse [-n BLOCKS] [-r ROUNDS] [-d D1,D2,...]"
			     " [-m thp|4k|both] [-o FILE]", optopt);
		}
	}
	if (optind != argc)
		die2("unexpected argument: %s", argv[optind]);
	for (j = 0; j < ndel; j++)
		if (delays[j] > max_delay)
			max_delay = delays[j];

	read_choice("/sys/kernel/mm/transparent_hugepage/enabled", enabled, sizeof enabled);
	if (strcmp(enabled, "madvise"))
		die2("/sys/kernel/mm/transparent_hugepage/enabled reads [%s], not [madvise]; refusing",
		     enabled);
	read_choice("/sys/kernel/mm/transparent_hugepage/defrag", defrag, sizeof defrag);
	read_choice("/sys/kernel/mm/transparent_hugepage/hugepages-2048kB/enabled", pmd_enabled,
		    sizeof pmd_enabled);
	read_line("/sys/module/page_reporting/parameters/page_reporting_order", order, sizeof order);
	read_line("/sys/kernel/mm/transparent_hugepage/khugepaged/defrag", kpo, sizeof kpo);
	uname(&un);
	cpu = sched_getcpu();
	pagemap_fd = open("/proc/self/pagemap", O_RDONLY);
	kpf_fd = open("/proc/kpageflags", O_RDONLY);

	ps = calloc(nmodes * (1 + rounds * ndel), sizeof *ps);
	if (!ps)
		die1("calloc");
	for (m = 0; m < nmodes; m++) {
		int thp = !strcmp(modes[m], "thp");
		size_t npf = thp ? nblocks : nblocks * PAGES_PER_BLOCK;
		uint64_t *prev = malloc(npf * sizeof *prev);
		size_t prev_n = 0;
		if (!prev)
			die1("malloc");
		for (r = 0; r <= rounds; r++) {
			for (j = 0; j < (r ? ndel : 1); j++) {
				struct pass *p = &ps[np++];
				p->mode = modes[m];
				p->delay = r ? delays[(j + r - 1) % ndel] : -1;
				p->wall_ns = malloc(nblocks * sizeof *p->wall_ns);
				p->cpu_ns = malloc(nblocks * sizeof *p->cpu_ns);
				p->pfn = malloc(npf * sizeof *p->pfn);
				p->blk_reused = malloc(nblocks * sizeof *p->blk_reused);
				if (!p->wall_ns || !p->cpu_ns || !p->pfn || !p->blk_reused)
					die1("malloc");
				if (r)
					sleep_s(p->delay);
				else if (m)
					sleep_s(max_delay); /* a later mode's first pass */
				run_pass(p, nblocks, cpu, prev_n ? prev : NULL, prev_n);
				for (i = prev_n = 0; i < npf; i++)
					if (p->pfn[i])
						prev[prev_n++] = p->pfn[i];
				qsort(prev, prev_n, sizeof *prev, cmp_u64);
				if (thp ? p->anon_huge_kb != (long)(nblocks * 2048)
					: p->anon_huge_kb != 0)
					fprintf(stderr, "pmd-fault-reuse: warning: %s pass got AnonHugePages %ld kB\n",
						p->mode, p->anon_huge_kb);
			}
		}
		free(prev);
	}

	o = out ? fopen(out, "w") : stdout;
	if (!o)
		die1(out);
	strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", gmtime(&t0));
	fputs("{\"schema\": \"swaplab.pmd-fault-reuse/1\",\n \"date\": ", o);
	json_str(o, date);
	fputs(", \"kernel\": ", o);
	json_str(o, un.release);
	fprintf(o, ", \"cpu\": %d, \"blocks\": %zu, \"rounds\": %zu,\n \"delays_s\": [", cpu, nblocks,
		rounds);
	for (j = 0; j < ndel; j++)
		fprintf(o, "%s%g", j ? ", " : "", delays[j]);
	fputs("],\n \"knobs\": {\"enabled\": ", o);
	json_str(o, enabled);
	fputs(", \"defrag\": ", o);
	json_str(o, defrag);
	fputs(", \"hugepages-2048kB\": ", o);
	json_str(o, pmd_enabled);
	fputs(", \"khugepaged_defrag\": ", o);
	json_str(o, kpo);
	fputs(", \"page_reporting_order\": ", o);
	if (*order)
		fputs(order, o);
	else
		fputs("null", o);
	fprintf(o, "},\n \"pagemap_readable\": %s, \"kpageflags_readable\": %s,\n \"cases\": [",
		pagemap_fd >= 0 ? "true" : "false", kpf_fd >= 0 ? "true" : "false");
	fprintf(stderr, "(thread CPU time per 2 MiB block, us; wall median; share of blocks over 2 ms CPU;\n"
			" pfn reuse; blocks reused from the previous pass and the others, with their CPU medians)\n"
			"mode delay  passes   cpu_med   cpu_p10   cpu_p90  wall_med  >2ms  reuse n_reu   reu_med n_oth   oth_med\n");
	first = 1;
	for (m = 0; m < nmodes; m++) {
		print_case(o, stderr, ps, np, modes[m], -1, nblocks, &first);
		for (j = 0; j < ndel; j++)
			print_case(o, stderr, ps, np, modes[m], delays[j], nblocks, &first);
	}
	fputs("\n ],\n \"passes\": [", o);
	for (i = 0; i < np; i++)
		print_pass(o, &ps[i], nblocks, i == 0);
	fputs("\n ]}\n", o);
	if (out && fclose(o))
		die1(out);
	return 0;
}
