/* test_debug.c - the SL_DEBUG asserts of debug.h fire in the tests' build. */
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
#include "t.h"
#include "swaplab/debug.h"

TEST(debug_assert_aborts_with_its_condition)
{
	int fds[2];

	CHECK_EQ(SL_DEBUG_ON, 1);
	CHECK(pipe(fds) == 0);
	pid_t pid = fork();
	if (pid == 0) {
		dup2(fds[1], 2);
		int two = 2;
		SL_ASSERT(two == 3);
		_exit(0);
	}
	close(fds[1]);
	char buf[256] = {0};
	ssize_t n = read(fds[0], buf, sizeof(buf) - 1);
	close(fds[0]);
	int st = 0;
	waitpid(pid, &st, 0);
	CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT);
	CHECK(n > 0 && strstr(buf, "assertion `two == 3' failed") != NULL);
}
