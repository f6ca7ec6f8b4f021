/* main.c - runs every registered test; "N passed, N failed" closes. */
#include <stdlib.h>
#include "t.h"

#define MAX_TESTS 256
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

int main(int argc, char **argv)
{
	int passed = 0, failed = 0;

	for (int i = 0; i < ntests; i++) {
		if (argc > 1 && !strstr(tests[i].name, argv[1]))
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
