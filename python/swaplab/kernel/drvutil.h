/*
 * drvutil.h - what the kernel drivers (kdriver.c, rdriver.c, mdriver.c)
 * need: the pagemap entry's fields, the one-line error exit, a monotonic
 * clock, parsing an integer option, reading a small file and the "mixed"
 * page content. Each driver defines DRV_NAME (its program name) before
 * including this.
 */
#ifndef SWAPLAB_DRVUTIL_H
#define SWAPLAB_DRVUTIL_H

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "swaplab/swaplab.h"

/* The page size and the fields of a /proc/PID/pagemap entry. */
#define PAGE 4096u
#define ALIGN_2M (UINT64_C(2) << 20)
#define PM_SWAPPED (UINT64_C(1) << 62)
#define PM_PRESENT (UINT64_C(1) << 63)
#define PM_TYPE_MASK UINT64_C(0x1f)
#define PM_OFF_SHIFT 5
#define PM_OFF_MASK ((UINT64_C(1) << 50) - 1) /* bits 5..54 */

static void die(int code, const char *fmt, ...) __attribute__((noreturn, format(printf, 2, 3)));
static void die(int code, const char *fmt, ...)
{
	va_list ap;

	fputs(DRV_NAME ": ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(code);
}

/* A non-negative integer option (decimal, 0x hex or 0 octal), or exit 2. */
static inline uint64_t parse_u64(const char *s, const char *opt)
{
	char *end;

	errno = 0;
	unsigned long long v = strtoull(s, &end, 0);
	if (errno || end == s || *end || *s == '-')
		die(2, "%s '%s' is not a non-negative integer", opt, s);
	return (uint64_t)v;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Reads a whole small file into buf; returns its length or -1. */
static ssize_t read_small(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -1;
	buf[n] = 0;
	return n;
}

/*
 * A page of the "mixed" content: 8-byte words, half zero, a quarter small
 * integers, a quarter random (pointer-like). lzo-rle compresses it about
 * 2:1, as it does ordinary anonymous memory (kernel-findings F32, F33).
 */
static inline void drv_fill_mixed(void *page, sl_rng *r)
{
	uint64_t *w = page;

	for (unsigned i = 0; i < PAGE / 8; i++) {
		uint64_t x = sl_rng_next(r);

		switch (x & 3) {
		case 0:
		case 1: w[i] = 0; break;
		case 2: w[i] = (x >> 8) & 0xff; break;
		default: w[i] = sl_rng_next(r); break;
		}
	}
}

#endif
