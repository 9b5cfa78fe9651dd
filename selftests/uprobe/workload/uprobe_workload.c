// SPDX-License-Identifier: GPL-2.0
/*
 * uprobe_workload: the program uprobe tests drive (see README). Its
 * arguments are commands, run in order:
 *
 *   call FUNC N   call FUNC N times, i = 0..N-1: add (uw_add(i, 100)),
 *                 negate (uw_negate(i)), strlen (uw_strlen("workload-i")),
 *                 greeting (uw_greeting(i)), fill (uw_fill(&pair, i, -i)),
 *                 lib_tick (uw_lib_tick(i)), and the program's own
 *                 step (uw_step(i)) and tick (uw_tick(i): the marker
 *                 uprobe_workload:tick when its semaphore is raised)
 *   loop FUNC     call FUNC (as call) until SIGUSR1
 *   pause         print "paused PID" and wait for SIGUSR1
 *   sem           print "sem tick=N lib_tick=M", the markers' semaphores
 *   pid           print "pid PID"
 *   fork          the child runs the remaining commands and exits; the
 *                 parent waits for it, then runs them too
 *   exec PATH ARG...  execv(PATH, [PATH, ARG...]): the rest of the line
 *   exit N        exit with status N
 *
 * Each command prints one line when done ("called FUNC N", "looped FUNC
 * N", "forked PID", "child PID exited N"). Built with -O0: the marker's
 * arguments are on the stack (-4@-20(%rbp) style).
 */
#define _SDT_HAS_SEMAPHORES 1
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sdt.h>
#include <sys/wait.h>
#include <unistd.h>
#include "uprobe_workload.h"

#define UW_FUNC __attribute__((noipa, visibility("default")))

/* Calls of uw_step(). */
long uw_generation = 1;

unsigned short uprobe_workload_tick_semaphore
	__attribute__((section(".probes"), visibility("default")));

static volatile sig_atomic_t told;

UW_FUNC int uw_step(int i)
{
	uw_generation++;
	return i * 2;
}

/* Fires the marker when a tracer raised its semaphore; returns i. */
UW_FUNC int uw_tick(int i)
{
	const char *name = "tick";

	if (uprobe_workload_tick_semaphore)
		STAP_PROBE2(uprobe_workload, tick, i, name);
	return i;
}

static int call_one(const char *func, int i)
{
	struct uw_pair pair;
	char buf[32];

	if (!strcmp(func, "add"))
		uw_add(i, 100);
	else if (!strcmp(func, "negate"))
		uw_negate(i);
	else if (!strcmp(func, "strlen")) {
		snprintf(buf, sizeof(buf), "workload-%d", i);
		uw_strlen(buf);
	} else if (!strcmp(func, "greeting"))
		uw_greeting(i);
	else if (!strcmp(func, "fill"))
		uw_fill(&pair, i, -i);
	else if (!strcmp(func, "lib_tick"))
		uw_lib_tick(i);
	else if (!strcmp(func, "step"))
		uw_step(i);
	else if (!strcmp(func, "tick"))
		uw_tick(i);
	else
		return -1;
	return 0;
}

static void on_usr1(int sig)
{
	(void)sig;
	told = 1;
}

static void usage(const char *what)
{
	fprintf(stderr, "uprobe_workload: %s\n", what);
	exit(2);
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_usr1 };
	sigset_t usr1, none;
	int i, n, status;
	long count;
	pid_t pid;

	/* One line at a time, in order, even into a file and across fork. */
	setvbuf(stdout, NULL, _IOLBF, 0);
	sigemptyset(&none);
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	/* A SIGUSR1 sent early waits for the pause or loop it is meant for. */
	sigprocmask(SIG_BLOCK, &usr1, NULL);
	sigaction(SIGUSR1, &sa, NULL);

	for (i = 1; i < argc; i++) {
		const char *cmd = argv[i];

		if (!strcmp(cmd, "call")) {
			if (i + 2 >= argc)
				usage("call FUNC N");
			n = atoi(argv[i + 2]);
			for (count = 0; count < n; count++)
				if (call_one(argv[i + 1], count))
					usage("no such function");
			printf("called %s %d\n", argv[i + 1], n);
			i += 2;
		} else if (!strcmp(cmd, "loop")) {
			if (i + 1 >= argc)
				usage("loop FUNC");
			told = 0;
			sigprocmask(SIG_UNBLOCK, &usr1, NULL);
			for (count = 0; !told; count++)
				if (call_one(argv[i + 1], count))
					usage("no such function");
			sigprocmask(SIG_BLOCK, &usr1, NULL);
			printf("looped %s %ld\n", argv[i + 1], count);
			i += 1;
		} else if (!strcmp(cmd, "pause")) {
			printf("paused %d\n", (int)getpid());
			told = 0;
			while (!told)
				sigsuspend(&none);
		} else if (!strcmp(cmd, "sem")) {
			printf("sem tick=%u lib_tick=%u\n",
			       uprobe_workload_tick_semaphore,
			       uw_lib_semaphore());
		} else if (!strcmp(cmd, "pid")) {
			printf("pid %d\n", (int)getpid());
		} else if (!strcmp(cmd, "fork")) {
			pid = fork();
			if (pid < 0)
				usage("fork failed");
			if (pid == 0)
				continue;
			printf("forked %d\n", (int)pid);
			if (waitpid(pid, &status, 0) != pid)
				usage("waitpid failed");
			printf("child %d exited %d\n", (int)pid,
			       WIFEXITED(status) ? WEXITSTATUS(status) : -1);
		} else if (!strcmp(cmd, "exec")) {
			if (i + 1 >= argc)
				usage("exec PATH [ARG...]");
			execv(argv[i + 1], argv + i + 1);
			usage("exec failed");
		} else if (!strcmp(cmd, "exit")) {
			if (i + 1 >= argc)
				usage("exit N");
			exit(atoi(argv[i + 1]));
		} else {
			usage("unknown command");
		}
	}
	return 0;
}
