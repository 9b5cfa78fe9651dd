// SPDX-License-Identifier: GPL-2.0
/*
 * The bench's user-space target, built in the bench guest
 * (tools/bench/guest): calls ubench_target(a, b, c, s), three register
 * arguments and a string in %cx, N times in a loop and prints the
 * loop's picoseconds per call (CLOCK_MONOTONIC: with the instruction
 * clock, thousandths of an instruction). The uprobe and uretprobe
 * events of both sides are timed on ubench_target.
 *   ubench N
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/* Built with -O1 -fno-inline: called, never inlined, never cloned. */
long ubench_target(long a, long b, long c, const char *s)
{
	__asm__ volatile("" : : "r"(s) : "memory");
	return a + b + c;
}

int main(int argc, char **argv)
{
	long i, n = argc > 1 ? atol(argv[1]) : 1000, sum = 0;
	struct timespec t0, t1;
	long long ps;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < n; i++)
		sum += ubench_target(i, 2, 3, "ubench-string");
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ps = ((t1.tv_sec - t0.tv_sec) * 1000000000LL + t1.tv_nsec - t0.tv_nsec) *
	     1000 / (n ? n : 1);
	printf("%lld %ld\n", ps, sum);
	return 0;
}
