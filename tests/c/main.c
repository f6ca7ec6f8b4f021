/*
 * main.c - runs the registered tests; "N passed, N failed" closes.
 *
 * Every test's name starts with its file's tag (test_v6_18.c: v618_…,
 * test_process.c: process_…). `sl_tests` runs all; `sl_tests ARG…` runs
 * the tests that any ARG selects: a name equal to ARG or starting with
 * "ARG_" (a tag, or a longer prefix such as v618_discard), or, where ARG
 * holds a wildcard, a name matching it as a shell pattern ('*concurrent*'
 * for a substring). An ARG that selects nothing is an error (exit 2), so a
 * mistyped tag cannot pass by running no test. `sl_tests --list` prints the
 * names.
 */
#include <fnmatch.h>
#include <stdlib.h>
#include "t.h"

#define MAX_TESTS 512
static struct { const char *name; t_fn fn; } tests[MAX_TESTS];
static int ntests;
int t_failed_checks;

void t_register(const char *name, t_fn fn)
{
	if (ntests == MAX_TESTS) {
		fprintf(stderr, "too many tests\n");
		exit(2);
	}
	tests[ntests].name = name;
	tests[ntests].fn = fn;
	ntests++;
}

/* selects() - ARG picks `name`: equal, tag prefix "ARG_", or shell pattern. */
static int selects(const char *arg, const char *name)
{
	size_t n = strlen(arg);

	if (strpbrk(arg, "*?["))
		return fnmatch(arg, name, 0) == 0;
	return strncmp(name, arg, n) == 0 && (name[n] == '\0' || name[n] == '_');
}

static int wanted(int argc, char **argv, const char *name)
{
	if (argc < 2)
		return 1;
	for (int a = 1; a < argc; a++)
		if (selects(argv[a], name))
			return 1;
	return 0;
}

int main(int argc, char **argv)
{
	int passed = 0, failed = 0;

	if (argc == 2 && strcmp(argv[1], "--list") == 0) {
		for (int i = 0; i < ntests; i++)
			printf("%s\n", tests[i].name);
		return 0;
	}
	for (int a = 1; a < argc; a++) {
		int hits = 0;
		for (int i = 0; i < ntests; i++)
			hits += selects(argv[a], tests[i].name);
		if (!hits) {
			fprintf(stderr, "sl_tests: no test is selected by '%s'\n", argv[a]);
			return 2;
		}
	}
	for (int i = 0; i < ntests; i++) {
		if (!wanted(argc, argv, tests[i].name))
			continue;
		int before = t_failed_checks;
		tests[i].fn();
		if (t_failed_checks == before) {
			passed++;
			printf("ok   %s\n", tests[i].name);
		} else {
			failed++;
			printf("FAIL %s\n", tests[i].name);
		}
	}
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
