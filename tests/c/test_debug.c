/* test_debug.c - the SL_DEBUG asserts of debug.h fire in the tests' build:
 * SL_ASSERT itself, and the lock and state contracts of the helpers (each
 * broken in a child process, which must abort with the contract's line). */
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
#include "t.h"
#include "swaplab/debug.h"
#include "swaplab/lockrework.h"

/* Runs fn(d) in a child on a fresh device of `policy`; true when it aborted
 * with `want` in its one line on stderr. */
static int dies_with(const char *policy, void (*fn)(sl_device *d), const char *want)
{
	int fds[2];
	char buf[512] = {0};
	int st = 0;

	if (pipe(fds) != 0)
		return 0;
	pid_t pid = fork();
	if (pid == 0) {
		dup2(fds[1], 2);
		fn(t_device(policy, 4096));
		_exit(0);
	}
	close(fds[1]);
	ssize_t n = read(fds[0], buf, sizeof(buf) - 1);
	close(fds[0]);
	waitpid(pid, &st, 0);
	if (!(WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT && n > 0 && strstr(buf, want))) {
		fprintf(stderr, "  child said: %s\n", n > 0 ? buf : "(nothing)");
		return 0;
	}
	return 1;
}

static void assert_two_is_three(sl_device *d)
{
	int two = 2;
	(void)d;
	SL_ASSERT(two == 3);
}

TEST(debug_assert_aborts_with_its_condition)
{
	CHECK_EQ(SL_DEBUG_ON, 1);
	CHECK(dies_with("linux-6.18", assert_two_is_three, "assertion `two == 3' failed"));
}

/* relocate_cluster() without the cluster's lock (lockdep_assert_held) */
static void relocate_unlocked(sl_device *d)
{
	lr_relocate_cluster(d, 1);
}

/* a list move without the device lock */
static void move_without_dev_lock(sl_device *d)
{
	sl_ci_lock(d, 1);
	sli_move_cluster(d, 1, SL_LIST_FRAG(0), SL_CF_FRAG);
}

/* a cluster lock taken twice: a self-deadlock on a real lock */
static void ci_locked_twice(sl_device *d)
{
	sl_ci_lock(d, 2);
	sl_ci_lock(d, 2);
}

/* an unlock of a lock not held */
static void dev_unlocked_unheld(sl_device *d)
{
	sl_dev_unlock(d);
}

/* a rotational device's global cluster used without global_cluster_lock */
static void global_cluster_unlocked(sl_device *d)
{
	lr_global_cluster_alloc(d, 0, 1);
}

TEST(debug_lock_contracts_abort_when_broken)
{
	CHECK(dies_with("linux-6.18", relocate_unlocked, "lockdep_assert_held(ci[c])"));
	CHECK(dies_with("linux-6.15", move_without_dev_lock, "lockdep_assert_held(dev)"));
	CHECK(dies_with("linux-6.18", ci_locked_twice, "assertion `!*held' failed"));
	CHECK(dies_with("linux-6.12", dev_unlocked_unheld, "assertion `*held' failed"));
	CHECK(dies_with("linux-6.18", global_cluster_unlocked, "lockdep_assert_held(global)"));
}

/* free_cluster() of a cluster still in use (VM_BUG_ON(ci->count != 0)) */
static void free_cluster_in_use(sl_device *d)
{
	uint64_t off = sl_swap_alloc(d, 0, 0);
	uint32_t c = sli_cluster_of(off);

	sl_ci_lock(d, c);
	lr_free_cluster(d, c);
}

/* partial_free_cluster() of an empty cluster */
static void partial_free_empty(sl_device *d)
{
	sl_ci_lock(d, 3);
	lr_partial_free_cluster(d, 3);
}

/* a slot released while it still holds a reference (swap_entries_free()'s
 * VM_BUG_ON on a slot that is not cache-only) */
static void release_referenced_slot(sl_device *d)
{
	uint64_t off = sl_swap_alloc(d, 0, 0);

	sl_ci_lock(d, sli_cluster_of(off));
	lr_swap_entries_free(d, off, 1);
}

/* a move onto a list the flag does not name */
static void move_to_wrong_list(sl_device *d)
{
	sl_ci_lock(d, 1);
	sl_dev_lock(d);
	sli_move_cluster(d, 1, SL_LIST_FULL, SL_CF_FRAG);
}

/* an allocation over slots in use */
static void alloc_over_used_slots(sl_device *d)
{
	uint64_t off = sl_swap_alloc(d, 0, 4);

	sl_ci_lock(d, sli_cluster_of(off));
	sli_alloc_range(d, off, 4);
}

TEST(debug_state_contracts_abort_when_broken)
{
	CHECK(dies_with("linux-6.18", free_cluster_in_use,
			"d->ci[c].count == 0 && d->ci[c].flags != SL_CF_FREE"));
	CHECK(dies_with("linux-6.18", partial_free_empty, "ci->count != 0 && ci->count != SL_CLUSTER"));
	CHECK(dies_with("linux-6.15", release_referenced_slot, "range_is(d, off, nr, SL_SLOT_CACHE)"));
	CHECK(dies_with("linux-6.18", move_to_wrong_list, "sli_list_of(&(sl_cluster){ .flags = (uint8_t)flag"));
	CHECK(dies_with("buddy", alloc_over_used_slots, "range_is(d, off, nr, SL_SLOT_FREE)"));
}

/* A policy that does not model its generation's locks (no
 * SL_POL_CONCURRENT) is not held to the lock contracts in the
 * deterministic mode; one that does is. */
TEST(debug_lock_contracts_bind_only_lock_modelling_policies)
{
	sl_device *d = t_device("linux-6.9", 4096);

	CHECK(!(d->pol->props & SL_POL_CONCURRENT));
	sli_isolate_cluster(d, sli_list_first(d, SL_LIST_FREE)); /* no lock: fine */
	sl_device_destroy(d);
	CHECK(sl_policy_find("linux-6.18")->props & SL_POL_CONCURRENT);
}
