// SPDX-License-Identifier: GPL-2.0
/*
 * The program entry_args.tc and fault_in.tc probe, built in the guest
 * at test time:
 * probed(a, s, depth) calls itself @depth times (one pending return a
 * level), with @s a string the probes read.
 *   entry_args N        s is a literal; depth N
 *   entry_args exit N   the same, but the innermost call exits the
 *                       process, leaving N + 1 returns pending
 *   entry_args sleep N  the same, but the innermost call sleeps 3 s
 *   entry_args fork N   the same, but the innermost call forks: the
 *                       child returns through the N + 1 pending calls
 *                       and exits, then the parent returns
 *   entry_args map FILE s is the start of FILE, mapped and never touched
 *                       before the call: its page is faulted in by the
 *                       probe's read or not at all
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

static int exit_inside, sleep_inside, fork_inside;

/* The parent waits for the child to be done. */
static void fork_and_wait(void)
{
	pid_t pid = fork();

	if (pid > 0)
		waitpid(pid, NULL, 0);
}

/* Built with -O0: never inlined, its recursion kept. */
long probed(long a, const char *s, long depth)
{
	long r = a;

	if (depth > 0)
		r += probed(a + 1, s, depth - 1);
	else if (exit_inside)
		_exit(0);
	else if (sleep_inside)
		sleep(3);
	else if (fork_inside)
		fork_and_wait();
	__asm__ volatile("" : : "r"(s) : "memory");
	return r;
}

int main(int argc, char **argv)
{
	const char *s = "entry-string";
	long depth = 0;
	int fd;

	if (argc == 3 && !strcmp(argv[1], "map")) {
		fd = open(argv[2], O_RDONLY);
		if (fd < 0)
			return 1;
		s = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, fd, 0);
		if (s == MAP_FAILED)
			return 1;
	} else if (argc == 3 && !strcmp(argv[1], "exit")) {
		exit_inside = 1;
		depth = atol(argv[2]);
	} else if (argc == 3 && !strcmp(argv[1], "fork")) {
		fork_inside = 1;
		depth = atol(argv[2]);
	} else if (argc == 3 && !strcmp(argv[1], "sleep")) {
		sleep_inside = 1;
		depth = atol(argv[2]);
	} else if (argc == 2) {
		depth = atol(argv[1]);
	}
	probed(7, s, depth);
	return 0;
}
