/*
 * mdriver.c - swaplab-mdriver: what one swap-entry move's copy costs on a
 * zram device of this kernel (docs/kernel-findings.md F32).
 *
 * proposal-compact moves swapped-out entries from one slot to another. No
 * kernel does that, so its cost cannot be measured whole; this measures the
 * I/O part on the live kernel. The harness (swaplab kernel move-cost) makes
 * a zram device of its own that is NOT swap and starts this program, which:
 *   - pins itself to --cpu and opens the device with O_DIRECT;
 *   - writes every second 4 KiB block (--slots blocks in all) with the
 *     --content pages, so half of the blocks hold a page, half are free;
 *   - times --moves reads of an empty block (the syscall and block-layer
 *     path with no data: zram returns zeroes for an unwritten slot);
 *   - makes --moves moves: a used block chosen at random is read
 *     (decompressed), written to a free block chosen at random
 *     (compressed) and discarded (its zsmalloc object freed); each of the
 *     three steps is timed on CLOCK_MONOTONIC, and the loop's system and
 *     user time come from getrusage();
 *   - reads zram's mm_stat after the fill and after the moves, so that the
 *     content is described by its measured compression;
 *   - writes its results as JSON (--json). Nothing parses its printed text.
 *
 * Exit status: 0 done, 1 failure (one line on stderr), 2 bad arguments.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <linux/fs.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

#include "swaplab/swaplab.h"

#define DRV_NAME "swaplab-mdriver"
#include "drvutil.h"

enum { STEP_READ, STEP_WRITE, STEP_DISCARD, STEP_EMPTY_READ, NR_STEPS };
static const char *const step_name[NR_STEPS] = { "read", "write", "discard", "empty_read" };

enum { C_SAME, C_BYTE, C_MIXED, C_RANDOM, NR_CONTENTS };
static const char *const content_name[NR_CONTENTS] = { "same", "byte", "mixed", "random" };

/* mm_stat's first fields, written as a list: the harness names them
 * (machine.py ZRAM_MM_STAT, zram's documentation). */
#define NR_MM 9

/*
 * One page of the given content, different for every (slot, generation):
 *   same   - every byte 0x11, as swaplab-kdriver writes (zram keeps a
 *            same-filled page as its value, without compressing it);
 *   byte   - zeroes with one byte set at the start, as swaplab-rdriver's
 *            stores leave an anonymous page;
 *   mixed  - drv_fill_mixed(): compresses about as ordinary anonymous
 *            memory does, which mm_stat in the result measures;
 *   random - incompressible (zram stores it whole, a "huge" page).
 */
static void fill_page(unsigned char *buf, int content, sl_rng *r, uint64_t tag)
{
	uint64_t *w = (uint64_t *)buf;

	switch (content) {
	case C_SAME:
		memset(buf, 0x11, PAGE);
		break;
	case C_BYTE:
		memset(buf, 0, PAGE);
		buf[0] = (unsigned char)(tag | 1);
		break;
	case C_MIXED:
		drv_fill_mixed(buf, r);
		break;
	default:
		for (unsigned i = 0; i < PAGE / 8; i++)
			w[i] = sl_rng_next(r);
		break;
	}
}

static void read_mm_stat(const char *path, uint64_t out[NR_MM])
{
	char buf[512];
	char *p = buf;

	if (read_small(path, buf, sizeof(buf)) < 0)
		die(1, "cannot read %s: %s", path, strerror(errno));
	for (int i = 0; i < NR_MM; i++) {
		char *end;

		errno = 0;
		out[i] = strtoull(p, &end, 10);
		if (end == p || errno)
			die(1, "%s has fewer than %d fields", path, NR_MM);
		p = end;
	}
}

static double tv_seconds(struct timeval tv)
{
	return (double)tv.tv_sec + tv.tv_usec / 1e6;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Sorts v and prints {"median", "p10", "p90", "mean"} in nanoseconds. */
static void put_dist(FILE *f, const char *name, double *v, uint64_t n, int last)
{
	double sum = 0;

	for (uint64_t i = 0; i < n; i++)
		sum += v[i];
	qsort(v, n, sizeof(*v), cmp_double);
	fprintf(f, "  \"%s\": {\"median\": %.1f, \"p10\": %.1f, \"p90\": %.1f, \"mean\": %.1f}%s\n",
		name, v[n / 2] * 1e9, v[n / 10] * 1e9, v[n * 9 / 10] * 1e9, sum / n * 1e9, last ? "" : ",");
}

static void put_mm(FILE *f, const char *name, const uint64_t mm[NR_MM])
{
	fprintf(f, "  \"%s\": [", name);
	for (int i = 0; i < NR_MM; i++)
		fprintf(f, "%s%" PRIu64, i ? ", " : "", mm[i]);
	fprintf(f, "],\n");
}

static void rw_block(int fd, unsigned char *buf, uint64_t slot, int write_it)
{
	ssize_t n = write_it ? pwrite(fd, buf, PAGE, (off_t)(slot * PAGE))
			     : pread(fd, buf, PAGE, (off_t)(slot * PAGE));

	if (n != (ssize_t)PAGE)
		die(1, "%s of block %" PRIu64 ": %s", write_it ? "write" : "read", slot,
		    n < 0 ? strerror(errno) : "short transfer");
}

static void usage(void)
{
	fprintf(stderr,
		"usage: swaplab-mdriver --dev PATH --mm-stat PATH --json PATH [--slots N]\n"
		"         [--moves N] [--content same|byte|mixed|random] [--seed S] [--cpu C]\n"
		"         [--parent-pid PID]\n"
		"Started by 'swaplab kernel move-cost', which makes the zram device; see\n"
		"docs/kernel-findings.md F32.\n");
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "dev", required_argument, NULL, 'd' },
		{ "mm-stat", required_argument, NULL, 'M' },
		{ "json", required_argument, NULL, 'j' },
		{ "slots", required_argument, NULL, 'n' },
		{ "moves", required_argument, NULL, 'm' },
		{ "content", required_argument, NULL, 'C' },
		{ "seed", required_argument, NULL, 'e' },
		{ "cpu", required_argument, NULL, 'c' },
		{ "parent-pid", required_argument, NULL, 'P' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *dev = NULL, *mm_path = NULL, *json_path = NULL, *content_arg = "mixed";
	uint64_t slots = 8192, moves = 100000, seed = 1, cpu = 0, ppid = 0;
	int c, content = -1;
	sigset_t none;

	/* the harness blocks SIGINT/SIGTERM while it starts us */
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);

	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'd': dev = optarg; break;
		case 'M': mm_path = optarg; break;
		case 'j': json_path = optarg; break;
		case 'n': slots = parse_u64(optarg, "--slots"); break;
		case 'm': moves = parse_u64(optarg, "--moves"); break;
		case 'C': content_arg = optarg; break;
		case 'e': seed = parse_u64(optarg, "--seed"); break;
		case 'c': cpu = parse_u64(optarg, "--cpu"); break;
		case 'P': ppid = parse_u64(optarg, "--parent-pid"); break;
		case 'h': usage(); return 0;
		default: usage(); return 2;
		}
	}
	if (optind != argc)
		die(2, "unexpected argument '%s'", argv[optind]);
	if (!dev || !mm_path || !json_path)
		die(2, "--dev, --mm-stat and --json are required");
	for (int i = 0; i < NR_CONTENTS; i++)
		if (!strcmp(content_arg, content_name[i]))
			content = i;
	if (content < 0)
		die(2, "unknown content '%s'", content_arg);
	if (slots < 4 || slots % 2 || slots > UINT32_MAX || moves < 10 || moves > UINT32_MAX
	    || cpu > INT32_MAX)
		die(2, "a parameter is out of range");

	if (ppid) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if ((uint64_t)getppid() != ppid)
			die(1, "the harness (pid %" PRIu64 ") is gone", ppid);
	}
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET((int)cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		die(1, "cannot pin to cpu %d: %s", (int)cpu, strerror(errno));

	int fd = open(dev, O_RDWR | O_DIRECT | O_CLOEXEC);
	if (fd < 0)
		die(1, "cannot open %s: %s", dev, strerror(errno));
	unsigned char *buf;
	if (posix_memalign((void **)&buf, PAGE, PAGE))
		die(1, "out of memory");
	uint32_t half = (uint32_t)(slots / 2);
	uint32_t *used = malloc(sizeof(*used) * half), *spare = malloc(sizeof(*spare) * half);
	double *t[NR_STEPS];
	for (int s = 0; s < NR_STEPS; s++)
		if (!(t[s] = malloc(sizeof(double) * moves)))
			die(1, "out of memory");
	if (!used || !spare)
		die(1, "out of memory");
	sl_rng r;
	sl_rng_init(&r, SL_RNG_DEFAULT, seed);

	/* the fill: even blocks hold a page, odd ones are free */
	for (uint32_t i = 0; i < half; i++) {
		used[i] = 2 * i;
		spare[i] = 2 * i + 1;
		fill_page(buf, content, &r, used[i]);
		rw_block(fd, buf, used[i], 1);
	}
	uint64_t mm_fill[NR_MM], mm_end[NR_MM];
	read_mm_stat(mm_path, mm_fill);

	for (uint64_t k = 0; k < moves; k++) {
		uint32_t slot = spare[sl_rng_below(&r, half)];
		double t0 = now();

		rw_block(fd, buf, slot, 0);
		t[STEP_EMPTY_READ][k] = now() - t0;
	}

	struct rusage ru0, ru1;
	getrusage(RUSAGE_SELF, &ru0);
	double w0 = now();
	for (uint64_t k = 0; k < moves; k++) {
		uint32_t i = sl_rng_below(&r, half), j = sl_rng_below(&r, half);
		uint32_t from = used[i], to = spare[j];
		uint64_t range[2] = { (uint64_t)from * PAGE, PAGE };
		double t0 = now(), t1, t2, t3;

		rw_block(fd, buf, from, 0);
		t1 = now();
		rw_block(fd, buf, to, 1);
		t2 = now();
		if (ioctl(fd, BLKDISCARD, range))
			die(1, "discard of block %" PRIu32 ": %s", from, strerror(errno));
		t3 = now();
		t[STEP_READ][k] = t1 - t0;
		t[STEP_WRITE][k] = t2 - t1;
		t[STEP_DISCARD][k] = t3 - t2;
		used[i] = to;
		spare[j] = from;
	}
	double wall = now() - w0;
	getrusage(RUSAGE_SELF, &ru1);
	read_mm_stat(mm_path, mm_end);

	char tmp[4096];
	snprintf(tmp, sizeof(tmp), "%s.tmp", json_path);
	FILE *f = fopen(tmp, "w");
	if (!f)
		die(1, "cannot write %s: %s", tmp, strerror(errno));
	fprintf(f, "{\n  \"schema\": \"swaplab.mdriver/1\",\n  \"content\": \"%s\",\n", content_name[content]);
	fprintf(f, "  \"slots\": %" PRIu64 ",\n  \"moves\": %" PRIu64 ",\n  \"seed\": %" PRIu64 ",\n"
		"  \"cpu\": %" PRIu64 ",\n", slots, moves, seed, cpu);
	fprintf(f, "  \"wall_s\": %.6f,\n  \"sys_s\": %.6f,\n  \"user_s\": %.6f,\n", wall,
		tv_seconds(ru1.ru_stime) - tv_seconds(ru0.ru_stime),
		tv_seconds(ru1.ru_utime) - tv_seconds(ru0.ru_utime));
	put_mm(f, "mm_stat_filled", mm_fill);
	put_mm(f, "mm_stat_end", mm_end);
	fprintf(f, "  \"steps_ns\": {\n");
	for (int s = 0; s < NR_STEPS; s++)
		put_dist(f, step_name[s], t[s], moves, s == NR_STEPS - 1);
	fprintf(f, "  }\n}\n");
	if (fclose(f))
		die(1, "cannot write %s: %s", tmp, strerror(errno));
	if (rename(tmp, json_path))
		die(1, "cannot rename %s: %s", tmp, strerror(errno));
	return 0;
}
