/*
 * rdriver.c - swaplab-rdriver: runs a reclaim-driven workload's process-level
 * operation stream on the live kernel (docs/kernel-harness.md, "Reclaim
 * workloads").
 *
 * The Python harness (swaplab kernel run usemem ...) prepares the machine (its
 * own zram device, the mTHP knobs, a memory cgroup with a limit) and starts
 * this program outside the cgroup. The program plays the stream and:
 *   - START: forks a child that pins itself to the op's CPU, then moves
 *     itself into the cgroup (--cgroup, by writing its pid to cgroup.procs)
 *     before it maps anything, and then executes the operations the parent
 *     sends it over a pipe, in stream order (pinned first, so that every
 *     page it charges goes through its own CPU's charge stock:
 *     docs/kernel-findings.md F37);
 *   - MMAP: the child maps a fresh anonymous private region starting on a
 *     2 MiB boundary (no madvise) and answers its address; nothing else
 *     is mapped from the region's end to the next 2 MiB boundary, so every
 *     PTE table of the region is its own (docs/kernel-findings.md F40);
 *   - TOUCH: one store (write) or one load per page, in address order;
 *     with --page-content mixed a write fills the whole page with
 *     drv_fill_mixed() instead (pages that compress about 2:1, F33);
 *   - MUNMAP, EXIT: the unmapped or exiting process's page tables are freed
 *     after an RCU grace period (x86 6.18, tlb_remove_table()); the child
 *     after its munmap and the driver after the exit wait for them
 *     (rcu_barrier(), through rcutree's do_rcu_barrier parameter, where the
 *     kernel has it), as the model frees them at once (F40). The exiting
 *     child holds the last reference to its acknowledgement pipe, so the
 *     pipe's buffer page is freed by its exit on its CPU;
 *   - PHASE: a barrier: every running child finishes what it was sent, then
 *     the counters are read (and with --phase-layouts every child's pagemap);
 *   - before each EXIT, once every operation in flight is done, the
 *     child's pagemap is read (its slot layout at exit), then the child
 *     exits and its user and system time are collected (wait4).
 * The children run concurrently, each on its CPU, but within a window of the
 * stream's order: each TOUCH and MUNMAP is acknowledged when done, and at
 * most --window of them (default 2 per CPU) are in flight, so no process runs
 * ahead of the others by more than that; within the window the interleaving
 * is the kernel's.
 *
 * With --stat-flush N the driver reads the cgroup's memory.stat before every
 * Nth TOUCH or MUNMAP it sends: a read flushes the group's statistics,
 * which reclaim and the workingset otherwise see as of the last periodic
 * flush, every 2 s (docs/kernel-findings.md F28).
 *
 * Counter snapshots hold every line of /proc/vmstat and every file of every
 * hugepages-*kB/stats directory: the harness takes the differences.
 * Writes its raw results as JSON (--json) and the layouts (--layout): one
 * little-endian uint64 per page of every recorded region, in the order of the
 * JSON's "layouts" list; a page is (swap type << 48 | offset) or all ones
 * when not swapped.
 *
 * Exit status: 0 done, 1 failure (one line on stderr), 2 bad arguments.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <sched.h>
#include <stddef.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "rstream.h"

#define DRV_NAME "swaplab-rdriver"
#include "drvutil.h"

#define NOT_SWAPPED UINT64_MAX
#define MAX_PROCS (1u << 20)

/* What the parent sends a child: an operation (rd_op) or a sync request. */
enum { CMD_OP = 1, CMD_SYNC = 2 };
typedef struct cmd {
	uint32_t what;
	rd_op op;
} cmd;

typedef struct child {
	pid_t pid;
	int cmd_fd, ack_fd;
	int running;
	uint64_t base[RD_MAX_REGIONS];
	uint64_t npages[RD_MAX_REGIONS];
	double utime, stime;
	long minflt, majflt, nvcsw, nivcsw;
} child;

typedef struct buf {
	char *s;
	size_t len, cap;
} buf;

typedef struct drv {
	const char *cgroup;
	const char *sysfs_root;
	int rcub_fd;             /* rcutree's do_rcu_barrier, or -1 */
	const char *swap_dev;    /* --swap-dev: its slots in use are read at each snapshot */
	const char *json_path, *layout_path;
	int phase_layouts;
	uint32_t first_cpu;      /* added to every START's CPU */
	uint32_t window;         /* at most this many TOUCH / MUNMAP in flight */
	uint32_t stat_flush;     /* read memory.stat before every this many of them (0: never) */
	int page_mixed;          /* TOUCH writes whole "mixed" pages, not one byte */
	uint64_t content_seed;   /* the stream's seed: child k's content stream is seed + k */
	uint32_t stat_count;
	uint64_t stat_reads;
	int stat_fd;
	uint32_t *fifo;          /* the processes of the ops in flight, oldest first */
	uint32_t fifo_head, fifo_len, fifo_cap;
	pid_t parent_pid;
	child *ch;
	uint32_t nch;
	FILE *layout;
	uint64_t layout_pages;
	buf layouts;      /* JSON list of layout records */
	buf snaps;        /* JSON list of counter snapshots */
	uint32_t nsnaps, nlayouts;
	double t0;
	int exited;
} drv;

static void bputs(buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void bputs(buf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	for (;;) {
		va_start(ap, fmt);
		n = vsnprintf(b->s ? b->s + b->len : NULL, b->s ? b->cap - b->len : 0, fmt, ap);
		va_end(ap);
		if (n < 0)
			die(1, "formatting failed");
		if (b->s && b->len + (size_t)n < b->cap) {
			b->len += (size_t)n;
			return;
		}
		b->cap = (b->cap + (size_t)n + 1) * 2;
		b->s = realloc(b->s, b->cap);
		if (!b->s)
			die(1, "out of memory");
	}
}

/* 0, or -1 when the reader is gone (EPIPE: SIGPIPE is ignored). */
static int write_all(int fd, const void *p, size_t n, const char *what)
{
	const char *c = p;

	while (n) {
		ssize_t w = write(fd, c, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && errno == EPIPE)
			return -1;
		if (w <= 0)
			die(1, "%s: %s", what, strerror(errno));
		c += w;
		n -= (size_t)w;
	}
	return 0;
}

/* 0 on success, -1 at end of file. */
static int read_all(int fd, void *p, size_t n)
{
	char *c = p;

	while (n) {
		ssize_t r = read(fd, c, n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		c += r;
		n -= (size_t)r;
	}
	return 0;
}

/* ------------------------------------------------------------ the child */

static uint64_t map_region(uint64_t npages)
{
	uint64_t len = npages * PAGE;
	uint64_t tables = (len + ALIGN_2M - 1) & ~(ALIGN_2M - 1);
	unsigned char *raw = mmap(NULL, tables + ALIGN_2M, PROT_READ | PROT_WRITE,
				  MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	uint64_t a, start;

	if (raw == MAP_FAILED)
		_exit(3);
	a = (uint64_t)(uintptr_t)raw;
	start = (a + ALIGN_2M - 1) & ~(ALIGN_2M - 1);
	if (start > a)
		munmap(raw, start - a);
	/* the rest of the reservation, at least up to the next 2 MiB boundary
	 * after the region: its last PTE table is its own (F40) */
	munmap((void *)(uintptr_t)(start + len), a + tables + ALIGN_2M - (start + len));
	return start;
}

/* Waits for every RCU callback queued so far (rcu_barrier()), among them the
 * freeing of page tables a munmap or an exit has just queued; fd is -1 where
 * the kernel has no do_rcu_barrier parameter. */
static int rcu_barrier_wait(int fd)
{
	return fd < 0 || pwrite(fd, "1", 1, 0) == 1 ? 0 : -1;
}

static void child_main(int cmd_fd, int ack_fd, const char *cgroup, pid_t parent, uint32_t cpu,
		       int page_mixed, uint64_t content_seed, int rcub_fd)
{
	sl_rng rng;
	char path[1024], pidtxt[32];
	unsigned char *base[RD_MAX_REGIONS] = { 0 };
	uint64_t npages[RD_MAX_REGIONS] = { 0 };
	cpu_set_t set;
	cmd c;
	int fd;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(4);
	/* on its CPU before it joins the group: otherwise its first charges
	 * may go through the stock of the CPU it was forked on (F37) */
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		_exit(6);
	snprintf(path, sizeof(path), "%s/cgroup.procs", cgroup);
	snprintf(pidtxt, sizeof(pidtxt), "%d", (int)getpid());
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0 || write(fd, pidtxt, strlen(pidtxt)) != (ssize_t)strlen(pidtxt))
		_exit(5);
	close(fd);
	sl_rng_init(&rng, SL_RNG_DEFAULT, content_seed);
	for (;;) {
		if (read_all(cmd_fd, &c, sizeof(c)))
			_exit(7);
		if (c.what == CMD_SYNC) {
			char ok = 'S';
			if (write(ack_fd, &ok, 1) != 1)
				_exit(8);
			continue;
		}
		const rd_op *op = &c.op;
		switch (op->kind) {
		case RD_OP_MMAP: {
			uint64_t a = map_region(op->npages);
			base[op->region] = (unsigned char *)(uintptr_t)a;
			npages[op->region] = op->npages;
			if (write(ack_fd, &a, sizeof(a)) != sizeof(a))
				_exit(8);
			break;
		}
		case RD_OP_TOUCH: {
			volatile unsigned char *p = base[op->region];
			uint64_t end = (uint64_t)op->first + op->npages;

			if (!p || end > npages[op->region])
				_exit(9);
			if (op->write && page_mixed) {
				for (uint64_t i = op->first; i < end; i++)
					drv_fill_mixed((void *)(uintptr_t)(p + i * PAGE), &rng);
			} else if (op->write) {
				for (uint64_t i = op->first; i < end; i++)
					p[i * PAGE] = (unsigned char)(i | 1);
			} else {
				unsigned char s = 0;
				for (uint64_t i = op->first; i < end; i++)
					s ^= p[i * PAGE];
				(void)s;
			}
			if (write(ack_fd, "T", 1) != 1)
				_exit(8);
			break;
		}
		case RD_OP_MUNMAP:
			if (base[op->region])
				munmap(base[op->region], npages[op->region] * PAGE);
			base[op->region] = NULL;
			npages[op->region] = 0;
			if (rcu_barrier_wait(rcub_fd))
				_exit(12);
			if (write(ack_fd, "T", 1) != 1)
				_exit(8);
			break;
		case RD_OP_EXIT:
			_exit(0);
		default:
			_exit(10);
		}
	}
}

/* ------------------------------------------------------------ the parent */

static void child_died(drv *d, uint32_t proc) __attribute__((noreturn));

static void send_cmd(drv *d, uint32_t proc, uint32_t what, const rd_op *op)
{
	cmd c;

	memset(&c, 0, sizeof(c));
	c.what = what;
	if (op)
		c.op = *op;
	if (write_all(d->ch[proc].cmd_fd, &c, sizeof(c), "send an operation to a process"))
		child_died(d, proc);       /* its end of the pipe is gone: it died */
}

static void child_died(drv *d, uint32_t proc)
{
	int status;
	pid_t pid = d->ch[proc].pid;

	if (waitpid(pid, &status, 0) == pid) {
		if (WIFSIGNALED(status))
			die(1, "process %u (pid %d) was killed by signal %d (the memory cgroup's OOM "
			    "killer? raise the limit or the swap size)", proc, (int)pid, WTERMSIG(status));
		die(1, "process %u (pid %d) failed (exit %d)", proc, (int)pid, WEXITSTATUS(status));
	}
	die(1, "process %u (pid %d) stopped answering", proc, (int)pid);
}

static void sync_child(drv *d, uint32_t proc)
{
	char ok;

	send_cmd(d, proc, CMD_SYNC, NULL);
	if (read_all(d->ch[proc].ack_fd, &ok, 1) || ok != 'S')
		child_died(d, proc);
}

/* Waits for the oldest operation in flight, whichever process runs it. */
static void drain_one(drv *d)
{
	uint32_t q = d->fifo[d->fifo_head];
	char ok;

	d->fifo_head = (d->fifo_head + 1) % d->fifo_cap;
	d->fifo_len--;
	if (read_all(d->ch[q].ack_fd, &ok, 1) || ok != 'T')
		child_died(d, q);
}

/* Waits until every operation in flight is done: MMAP, EXIT and PHASE
 * come after everything before them, as the model plays them (until
 * kernel-findings F37 MMAP and EXIT waited only for their own process's
 * operations and older ones). START waits too (kernel-findings F41: the
 * fork's slab objects, charged to the driver's memcg, drain the object
 * stock of the driver's CPU, which an operation in flight may be using). */
static void drain_all(drv *d)
{
	while (d->fifo_len)
		drain_one(d);
}

/* Sends a TOUCH or MUNMAP, keeping at most d->window in flight: the
 * processes run concurrently, but none runs more than the window ahead of
 * the stream's order (an unbounded lead lets one process finish and exit
 * while another has most of its work left, which the stream never does). */
static void send_tracked(drv *d, uint32_t proc, const rd_op *op)
{
	while (d->fifo_len >= d->window)
		drain_one(d);
	if (d->stat_flush && ++d->stat_count == d->stat_flush) {
		/* memcg1_stat_format() flushes the group's statistics first */
		char b[8192];
		d->stat_count = 0;
		if (pread(d->stat_fd, b, sizeof(b), 0) < 0)
			die(1, "cannot read %s/memory.stat: %s", d->cgroup, strerror(errno));
		d->stat_reads++;
	}
	send_cmd(d, proc, CMD_OP, op);
	d->fifo[(d->fifo_head + d->fifo_len++) % d->fifo_cap] = proc;
}

/* The Used column (KiB) of dev's line in /proc/swaps: every slot in use
 * on it, whoever's; -1 if dev is not listed. */
static long long swap_used_kb(const char *dev, char *text, size_t len)
{
	if (read_small("/proc/swaps", text, len) < 0)
		die(1, "cannot read /proc/swaps: %s", strerror(errno));
	for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
		char name[512], type[32];
		long long size, used;
		if (sscanf(line, "%511s %31s %lld %lld", name, type, &size, &used) == 4 && !strcmp(name, dev))
			return used;
	}
	return -1;
}

static void snapshot(drv *d, const char *label, int phase)
{
	static char text[65536];
	char path[1024], val[64];
	DIR *dir;
	struct dirent *e;
	int first = 1;

	bputs(&d->snaps, "%s{\"label\":\"%s\",\"phase\":%d,\"t\":%.6f,\"vmstat\":{",
	      d->nsnaps++ ? "," : "", label, phase, now() - d->t0);
	if (read_small("/proc/vmstat", text, sizeof(text)) < 0)
		die(1, "cannot read /proc/vmstat: %s", strerror(errno));
	for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
		char name[128];
		unsigned long long v;
		if (sscanf(line, "%127s %llu", name, &v) == 2) {
			bputs(&d->snaps, "%s\"%s\":%llu", first ? "" : ",", name, v);
			first = 0;
		}
	}
	bputs(&d->snaps, "}");
	if (d->swap_dev)
		bputs(&d->snaps, ",\"swap_used_kb\":%lld", swap_used_kb(d->swap_dev, text, sizeof(text)));
	bputs(&d->snaps, ",\"mthp\":{");
	snprintf(path, sizeof(path), "%s/kernel/mm/transparent_hugepage", d->sysfs_root);
	dir = opendir(path);
	first = 1;
	while (dir && (e = readdir(dir))) {
		unsigned kb;
		DIR *sd;
		struct dirent *se;
		int sfirst = 1;
		char spath[1300];

		if (sscanf(e->d_name, "hugepages-%ukB", &kb) != 1)
			continue;
		snprintf(spath, sizeof(spath), "%s/%s/stats", path, e->d_name);
		sd = opendir(spath);
		if (!sd)
			continue;
		bputs(&d->snaps, "%s\"%u\":{", first ? "" : ",", kb);
		first = 0;
		while ((se = readdir(sd))) {
			char fpath[1600];
			if (se->d_name[0] == '.')
				continue;
			snprintf(fpath, sizeof(fpath), "%s/%s", spath, se->d_name);
			if (read_small(fpath, val, sizeof(val)) < 0)
				continue;
			bputs(&d->snaps, "%s\"%s\":%llu", sfirst ? "" : ",", se->d_name,
			      strtoull(val, NULL, 10));
			sfirst = 0;
		}
		closedir(sd);
		bputs(&d->snaps, "}");
	}
	if (dir)
		closedir(dir);
	bputs(&d->snaps, "}}");
}

/* Appends the layout of every mapped region of proc to the layout file. */
static void record_layout(drv *d, uint32_t proc, const char *label, int phase)
{
	char path[64];
	child *c = &d->ch[proc];
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/pagemap", (int)c->pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		die(1, "cannot open %s: %s", path, strerror(errno));
	for (int r = 0; r < RD_MAX_REGIONS; r++) {
		uint64_t n = c->npages[r], swapped = 0, present = 0;
		uint64_t *pm;
		size_t want;

		if (!n)
			continue;
		pm = malloc(n * 8);
		if (!pm)
			die(1, "out of memory");
		want = (size_t)n * 8;
		if (pread(fd, pm, want, (off_t)(c->base[r] / PAGE * 8)) != (ssize_t)want)
			die(1, "cannot read %s: %s", path, strerror(errno));
		for (uint64_t i = 0; i < n; i++) {
			uint64_t e = pm[i];
			if (e & PM_SWAPPED) {
				pm[i] = ((e & PM_TYPE_MASK) << 48) | ((e >> PM_OFF_SHIFT) & PM_OFF_MASK);
				swapped++;
			} else {
				present += !!(e & PM_PRESENT);
				pm[i] = NOT_SWAPPED;
			}
		}
		if (fwrite(pm, 8, n, d->layout) != n)
			die(1, "cannot write %s: %s", d->layout_path, strerror(errno));
		free(pm);
		bputs(&d->layouts, "%s{\"label\":\"%s\",\"phase\":%d,\"proc\":%u,\"region\":%d,"
		      "\"npages\":%" PRIu64 ",\"first\":%" PRIu64 ",\"swapped\":%" PRIu64
		      ",\"present\":%" PRIu64 ",\"addr\":%" PRIu64,
		      d->nlayouts++ ? "," : "", label, phase, proc, r, n, d->layout_pages,
		      swapped, present, c->base[r]);
		if (d->swap_dev) {
			/* every slot in use on our device as this layout is read */
			static char text[65536];
			bputs(&d->layouts, ",\"swap_used_kb\":%lld", swap_used_kb(d->swap_dev, text, sizeof(text)));
		}
		bputs(&d->layouts, "}");
		d->layout_pages += n;
	}
	close(fd);
}

static void start_child(drv *d, const rd_op *op)
{
	int cmdp[2], ackp[2];
	child *c;
	pid_t pid;

	if (op->proc != d->nch || op->proc >= MAX_PROCS)
		die(1, "the stream starts process %u out of order", op->proc);
	d->ch = realloc(d->ch, sizeof(child) * (d->nch + 1));
	if (!d->ch)
		die(1, "out of memory");
	c = &d->ch[d->nch++];
	memset(c, 0, sizeof(*c));
	if (pipe2(cmdp, O_CLOEXEC) || pipe2(ackp, O_CLOEXEC))
		die(1, "pipe: %s", strerror(errno));
	fcntl(cmdp[1], F_SETPIPE_SZ, 1 << 20);
	fflush(NULL);
	pid = fork();
	if (pid < 0)
		die(1, "fork: %s", strerror(errno));
	if (pid == 0) {
		close(cmdp[1]);
		close(ackp[0]);
		/* the other children's pipe ends: held open here, a child's
		 * acknowledgement pipe (its buffer page charged to the group)
		 * would outlive that child's exit (F40) */
		for (uint32_t i = 0; i + 1 < d->nch; i++)
			if (d->ch[i].running) {
				close(d->ch[i].cmd_fd);
				close(d->ch[i].ack_fd);
			}
		child_main(cmdp[0], ackp[1], d->cgroup, getppid(), d->first_cpu + op->cpu, d->page_mixed,
			   d->content_seed + d->nch - 1, d->rcub_fd);
		_exit(11);
	}
	close(cmdp[0]);
	close(ackp[1]);
	c->pid = pid;
	c->cmd_fd = cmdp[1];
	c->ack_fd = ackp[0];
	c->running = 1;
}

static void exit_child(drv *d, uint32_t proc, const rd_op *op)
{
	child *c = &d->ch[proc];
	struct rusage ru;
	int status;

	drain_all(d);  /* the layout at exit is not read while another process runs */
	sync_child(d, proc);
	record_layout(d, proc, "exit", -1);
	send_cmd(d, proc, CMD_OP, op);
	close(c->cmd_fd);
	close(c->ack_fd);  /* the child's exit drops the pipe's last reference */
	if (wait4(c->pid, &status, 0, &ru) != c->pid)
		die(1, "wait4: %s", strerror(errno));
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		child_died(d, proc);
	if (rcu_barrier_wait(d->rcub_fd))
		die(1, "cannot write rcutree's do_rcu_barrier: %s", strerror(errno));
	c->running = 0;
	c->utime = ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6;
	c->stime = ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
	c->minflt = ru.ru_minflt;
	c->majflt = ru.ru_majflt;
	c->nvcsw = ru.ru_nvcsw;
	c->nivcsw = ru.ru_nivcsw;
	d->exited++;
}

static int emit(void *ctx, const rd_op *op)
{
	drv *d = ctx;

	if (op->kind != RD_OP_START && op->kind != RD_OP_PHASE && op->kind != RD_OP_DONE &&
	    (op->proc >= d->nch || !d->ch[op->proc].running))
		die(1, "the stream names process %u, which is not running", op->proc);
	switch (op->kind) {
	case RD_OP_START:
		drain_all(d);  /* the fork drains the driver CPU's object stock (F41) */
		start_child(d, op);
		break;
	case RD_OP_MMAP: {
		child *c = &d->ch[op->proc];
		uint64_t a;
		if (op->region >= RD_MAX_REGIONS)
			die(1, "region %u out of range", op->region);
		drain_all(d);
		send_cmd(d, op->proc, CMD_OP, op);
		if (read_all(c->ack_fd, &a, sizeof(a)))
			child_died(d, op->proc);
		c->base[op->region] = a;
		c->npages[op->region] = op->npages;
		break;
	}
	case RD_OP_TOUCH:
		send_tracked(d, op->proc, op);
		break;
	case RD_OP_MUNMAP:
		send_tracked(d, op->proc, op);
		d->ch[op->proc].npages[op->region] = 0;
		break;
	case RD_OP_EXIT:
		exit_child(d, op->proc, op);
		break;
	case RD_OP_PHASE:
		drain_all(d);
		for (uint32_t p = 0; p < d->nch; p++)
			if (d->ch[p].running)
				sync_child(d, p);
		snapshot(d, "phase", (int)op->first);
		if (d->phase_layouts)
			for (uint32_t p = 0; p < d->nch; p++)
				if (d->ch[p].running)
					record_layout(d, p, "phase", (int)op->first);
		break;
	case RD_OP_DONE:
		for (uint32_t p = 0; p < d->nch; p++)
			if (d->ch[p].running)
				die(1, "the stream ended with process %u still running", p);
		break;
	default:
		die(1, "unknown operation kind %u", op->kind);
	}
	return 0;
}

static void write_json(drv *d, double wall)
{
	FILE *f = fopen(d->json_path, "w");
	double ut = 0, st = 0;

	if (!f)
		die(1, "cannot write %s: %s", d->json_path, strerror(errno));
	for (uint32_t p = 0; p < d->nch; p++) {
		ut += d->ch[p].utime;
		st += d->ch[p].stime;
	}
	fprintf(f, "{\"schema\":\"swaplab.rdriver/1\",\"nprocs\":%u,\"wall_seconds\":%.6f,"
		"\"user_seconds\":%.6f,\"sys_seconds\":%.6f,\"layout_pages\":%" PRIu64 ",\"stat_reads\":%" PRIu64
		",\"rcu_barrier\":%s,\"driver_cpu\":%u,\"procs\":[", d->nch, wall, ut, st, d->layout_pages,
		d->stat_reads, d->rcub_fd >= 0 ? "true" : "false", d->first_cpu);
	for (uint32_t p = 0; p < d->nch; p++)
		fprintf(f, "%s{\"pid\":%d,\"user_seconds\":%.6f,\"sys_seconds\":%.6f,\"minflt\":%ld,"
			"\"majflt\":%ld,\"nvcsw\":%ld,\"nivcsw\":%ld}", p ? "," : "", (int)d->ch[p].pid,
			d->ch[p].utime, d->ch[p].stime, d->ch[p].minflt, d->ch[p].majflt,
			d->ch[p].nvcsw, d->ch[p].nivcsw);
	fprintf(f, "],\"snapshots\":[%s],\"layouts\":[%s]}\n", d->snaps.s ? d->snaps.s : "",
		d->layouts.s ? d->layouts.s : "");
	if (fclose(f))
		die(1, "cannot write %s: %s", d->json_path, strerror(errno));
}

static void usage(void)
{
	fputs("usage: swaplab-rdriver --cgroup DIR --json PATH --layout PATH [--sysfs-root DIR]\n"
	      "       [--parent-pid PID] [--first-cpu C] [--window N] [--stat-flush N] [--phase-layouts]\n"
	      "       [--swap-dev PATH]\n"
	      "       [--page-content byte|mixed]\n"
	      "       STREAM-OPTIONS (rstream.h)\n"
	      "       swaplab-rdriver --print-params STREAM-OPTIONS\n", stderr);
	exit(2);
}

int main(int argc, char **argv)
{
	drv d;
	rd_params p;
	char msg[256];
	int i, print_params = 0;

	memset(&d, 0, sizeof(d));
	d.sysfs_root = "/sys";
	rd_defaults(&p);
	for (i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		int r;

		if (!strcmp(a, "--phase-layouts")) {
			d.phase_layouts = 1;
			continue;
		}
		if (!strcmp(a, "--print-params")) {
			print_params = 1;
			continue;
		}
		if (!v)
			usage();
		if (!strcmp(a, "--cgroup"))
			d.cgroup = v;
		else if (!strcmp(a, "--json"))
			d.json_path = v;
		else if (!strcmp(a, "--layout"))
			d.layout_path = v;
		else if (!strcmp(a, "--sysfs-root"))
			d.sysfs_root = v;
		else if (!strcmp(a, "--swap-dev"))
			d.swap_dev = v;
		else if (!strcmp(a, "--parent-pid"))
			d.parent_pid = (pid_t)atoi(v);
		else if (!strcmp(a, "--first-cpu"))
			d.first_cpu = (uint32_t)atoi(v);
		else if (!strcmp(a, "--window"))
			d.window = (uint32_t)atoi(v);
		else if (!strcmp(a, "--stat-flush"))
			d.stat_flush = (uint32_t)atoi(v);
		else if (!strcmp(a, "--page-content")) {
			if (strcmp(v, "byte") && strcmp(v, "mixed"))
				die(2, "unknown page content '%s'", v);
			d.page_mixed = !strcmp(v, "mixed");
		}
		else if ((r = rd_set_option(&p, a, v, msg, sizeof(msg))) < 0)
			die(2, "%s", msg);
		else if (r == 0)
			usage();
		i++;
	}
	if (rd_validate(&p, msg, sizeof(msg)))
		die(2, "%s", msg);
	d.content_seed = p.seed;
	if (print_params) {
		rd_print_params(&p, stdout);
		return 0;
	}
	if (!d.cgroup || !d.json_path || !d.layout_path)
		usage();
	{
		/* on the run's first CPU, where the model puts the driver: its
		 * own slab objects (a fork, an open file) are charged to the
		 * memcg it runs in and drain that CPU's object stock of the
		 * group's bytes (kernel-findings F41) */
		cpu_set_t set;
		CPU_ZERO(&set);
		CPU_SET(d.first_cpu, &set);
		if (sched_setaffinity(0, sizeof(set), &set))
			die(1, "cannot pin the driver to CPU %u: %s", d.first_cpu, strerror(errno));
	}
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (d.parent_pid && getppid() != d.parent_pid)
		die(1, "the harness is gone");
	/* a child that dies (an OOM kill) closes its pipe: a write then fails
	 * with EPIPE and the driver says which child died and how */
	signal(SIGPIPE, SIG_IGN);
	{
		sigset_t s;
		sigemptyset(&s);
		sigaddset(&s, SIGINT);
		sigaddset(&s, SIGTERM);
		sigprocmask(SIG_UNBLOCK, &s, NULL);
	}
	if (!d.window)                 /* two operations per CPU in flight */
		d.window = 2 * (uint32_t)(p.nr_cpus > 0 ? p.nr_cpus : 1);
	d.fifo_cap = d.window + 1;
	if (d.stat_flush) {
		char path[4096];
		snprintf(path, sizeof(path), "%s/memory.stat", d.cgroup);
		d.stat_fd = open(path, O_RDONLY | O_CLOEXEC);
		if (d.stat_fd < 0)
			die(1, "cannot read %s: %s", path, strerror(errno));
	}
	{
		/* each write runs one rcu_barrier() and sets nothing (F40); the
		 * children inherit the descriptor, opened before any of them */
		char path[4096];
		snprintf(path, sizeof(path), "%s/module/rcutree/parameters/do_rcu_barrier", d.sysfs_root);
		d.rcub_fd = open(path, O_WRONLY | O_CLOEXEC);
	}
	d.fifo = calloc(d.fifo_cap, sizeof(*d.fifo));
	if (!d.fifo)
		die(1, "out of memory");
	d.layout = fopen(d.layout_path, "wb");
	if (!d.layout)
		die(1, "cannot write %s: %s", d.layout_path, strerror(errno));
	d.t0 = now();
	snapshot(&d, "start", -1);
	rd_play(&p, emit, &d);
	snapshot(&d, "end", -1);
	if (fclose(d.layout))
		die(1, "cannot write %s: %s", d.layout_path, strerror(errno));
	write_json(&d, now() - d.t0);
	return 0;
}
