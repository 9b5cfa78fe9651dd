// SPDX-License-Identifier: GPL-2.0
/*
 * The bench's system-call target, built in the bench guest
 * (tools/bench/guest): the contenders that run a reader of their own
 * (bpftrace) are timed on __do_sys_getppid, called from user space, so
 * that the reader can run while the loop does: a loop in the kernel
 * (bench/dpbench.c's) is never preempted by it.
 *   sysloop N [PID]   calls getppid() N times and prints the loop's
 *                     picoseconds per call (CLOCK_MONOTONIC: with the
 *                     instruction clock, thousandths of an instruction)
 *                     and, with PID, the CPU time of process PID
 *                     (all its threads) in nanoseconds when the loop
 *                     ended; else 0
 *   sysloop -c PID    prints the CPU time of process PID in nanoseconds
 * With one vCPU, the loop's clock counts everything that ran while it
 * ran, the reader included; what the reader does after the loop (drain
 * the records left) is its CPU time from the loop's end until it has
 * drained them, which tools/bench/guest reads with -c and adds.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/types.h>

static long long ns(struct timespec t)
{
	return t.tv_sec * 1000000000LL + t.tv_nsec;
}

/* CPU time of every thread of process pid, in ns; -1 if it is gone. */
static long long cpu_ns(pid_t pid)
{
	struct timespec t;
	clockid_t clk;

	if (clock_getcpuclockid(pid, &clk) || clock_gettime(clk, &t))
		return -1;
	return ns(t);
}

int main(int argc, char **argv)
{
	struct timespec t0, t1;
	long i, n, sum = 0;
	long long reader;
	pid_t pid;

	if (argc == 3 && !strcmp(argv[1], "-c")) {
		printf("%lld\n", cpu_ns(atoi(argv[2])));
		return 0;
	}
	if (argc < 2 || argc > 3) {
		fprintf(stderr, "usage: sysloop N [PID] | sysloop -c PID\n");
		return 2;
	}
	n = atol(argv[1]);
	pid = argc == 3 ? atoi(argv[2]) : 0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	/* glibc caches no parent pid: each call is the system call. */
	for (i = 0; i < n; i++)
		sum += getppid();
	clock_gettime(CLOCK_MONOTONIC, &t1);
	reader = pid ? cpu_ns(pid) : 0;
	printf("%lld %lld %ld\n", (ns(t1) - ns(t0)) * 1000 / (n ? n : 1),
	       reader, sum);
	return 0;
}
