// SPDX-License-Identifier: GPL-2.0
/*
 * libuprobe_workload.so: the shared library of the uprobe workload, its
 * functions with integer, pointer and string arguments and return values,
 * a global variable and an SDT marker with a semaphore
 * (uprobe_workload:lib_tick). Built with -O2: the marker's arguments are
 * registers (-8@%rdi style). noipa keeps every call a real call.
 */
#define _SDT_HAS_SEMAPHORES 1
#include <stdio.h>
#include <sys/sdt.h>
#include "uprobe_workload.h"

#define UW_FUNC __attribute__((noipa, visibility("default")))

long uw_calls = 1;

/* The marker's semaphore: SDT names it PROVIDER_NAME_semaphore. */
unsigned short uprobe_workload_lib_tick_semaphore
	__attribute__((section(".probes"), visibility("default")));

UW_FUNC int uw_add(int a, int b)
{
	uw_calls++;
	return a + b;
}

UW_FUNC long uw_negate(long x)
{
	uw_calls++;
	return -x;
}

UW_FUNC size_t uw_strlen(const char *s)
{
	size_t n = 0;

	uw_calls++;
	while (s[n])
		n++;
	return n;
}

/* A string of its own, written before it is returned (so its page is in). */
UW_FUNC const char *uw_greeting(int n)
{
	static char buf[32];

	uw_calls++;
	snprintf(buf, sizeof(buf), "hello-%d", n);
	return buf;
}

UW_FUNC int uw_fill(struct uw_pair *p, int a, int b)
{
	uw_calls++;
	p->a = a;
	p->b = b;
	return a + b;
}

/* Fires the marker when a tracer raised its semaphore; returns n. */
UW_FUNC long uw_lib_tick(long n)
{
	uw_calls++;
	if (uprobe_workload_lib_tick_semaphore)
		STAP_PROBE1(uprobe_workload, lib_tick, n);
	return n;
}

UW_FUNC unsigned short uw_lib_semaphore(void)
{
	return uprobe_workload_lib_tick_semaphore;
}
