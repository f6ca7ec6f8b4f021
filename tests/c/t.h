/*
 * t.h - the C tests' tiny runner. TEST(name) defines and registers a test;
 * CHECK* record failures with file:line and go on; main() (main.c) runs all
 * and ends with the plain line "N passed, N failed".
 */
#ifndef SL_T_H
#define SL_T_H

#include <stdio.h>
#include <stdint.h>
#include <string.h>
#include "swaplab/swaplab.h"
#include "swaplab/cluster.h"

typedef void (*t_fn)(void);
void t_register(const char *name, t_fn fn);
extern int t_failed_checks;

#define TEST(name)                                                              \
	static void name(void);                                                 \
	__attribute__((constructor)) static void reg_##name(void) { t_register(#name, name); } \
	static void name(void)

#define CHECK(cond)                                                             \
	do {                                                                    \
		if (!(cond)) {                                                  \
			t_failed_checks++;                                      \
			fprintf(stderr, "  %s:%d: CHECK(%s) failed\n", __FILE__, __LINE__, #cond); \
		}                                                               \
	} while (0)

#define CHECK_EQ(a, b)                                                          \
	do {                                                                    \
		unsigned long long a_ = (unsigned long long)(a), b_ = (unsigned long long)(b); \
		if (a_ != b_) {                                                 \
			t_failed_checks++;                                      \
			fprintf(stderr, "  %s:%d: %s == %llu, expected %s == %llu\n", __FILE__, \
				__LINE__, #a, a_, #b, b_);                      \
		}                                                               \
	} while (0)

/* Test helpers (helpers.c). */
sl_device *t_device(const char *policy, uint64_t slots);
/* n allocations of `order` on `cpu`, each of which must succeed. */
#define ALLOC_N(d, cpu, order, n) t_alloc_n(d, cpu, order, n, __FILE__, __LINE__)
void t_alloc_n(sl_device *d, int cpu, int order, int n, const char *file, int line);
/* Asserts the clusters of `list`, head to tail, are exactly want[0..n). */
#define CHECK_LIST(d, list, ...)                                                \
	do {                                                                    \
		uint32_t want_[] = { __VA_ARGS__ };                             \
		t_check_list(d, list, want_, sizeof(want_) / sizeof(want_[0]), __FILE__, __LINE__); \
	} while (0)
#define CHECK_LIST_EMPTY(d, list) t_check_list(d, list, NULL, 0, __FILE__, __LINE__)
void t_check_list(const sl_device *d, int list, const uint32_t *want, size_t n, const char *file,
		  int line);
/* Gives cpu's cursor of `order` a place (the device's last cluster, which
 * the tests leave alone), so that a free by cpu hands it nothing: the keep
 * policies' lrm_handoff() takes only an idle cursor. */
#define T_BUSY_CURSOR(d, cpu, order) (*sli_cursor(d, cpu, order) = sli_cluster_offset((d)->nr_clusters - 1))
/* Two twin devices share their state after the same operations: map,
 * clusters and lists, cursors, counters, slots in use. */
int t_same_device_state(const sl_device *a, const sl_device *b);
/* Asserts the device invariants hold. */
#define CHECK_INVARIANTS(d) t_check_invariants(d, __FILE__, __LINE__)
void t_check_invariants(const sl_device *d, const char *file, int line);

#endif
