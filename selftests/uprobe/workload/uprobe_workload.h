/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The functions of libuprobe_workload.so that uprobe tests probe by
 * name. Their names, arguments and return values are part of the tests:
 * keep them (see README).
 */
#ifndef UPROBE_WORKLOAD_H
#define UPROBE_WORKLOAD_H

#include <stddef.h>

struct uw_pair {
	int a;
	int b;
};

/* Calls of the functions below since the library was loaded. */
extern long uw_calls;

int uw_add(int a, int b);
long uw_negate(long x);
size_t uw_strlen(const char *s);
const char *uw_greeting(int n);
int uw_fill(struct uw_pair *p, int a, int b);
long uw_lib_tick(long n);
unsigned short uw_lib_semaphore(void);

#endif
