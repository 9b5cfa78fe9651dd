// SPDX-License-Identifier: GPL-2.0
/*
 * Memory that only the kernel's macros reach: the per-CPU hit counters
 * of the probes (src/probe/mod.rs), allocated by alloc_percpu() and summed
 * over for_each_possible_cpu() and per_cpu_ptr(), and kvfree() after an
 * RCU grace period (kvfree_rcu_mightsleep()), which the event's probe
 * lists use (src/event/trace_event.rs). Macros are what make this C; a
 * counter is freed from Rust (free_percpu() is exported).
 */
#include <linux/cpumask.h>
#include <linux/percpu.h>
#include <linux/rcupdate.h>
#include <linux/slab.h>
#include "dynprobe/shim.h"

unsigned long __percpu *dynprobe_counter_alloc(void)
{
	return alloc_percpu(unsigned long);
}

u64 dynprobe_counter_sum(unsigned long __percpu *counter)
{
	unsigned long sum = 0;
	int cpu;

	for_each_possible_cpu(cpu)
		sum += *per_cpu_ptr(counter, cpu);
	return sum;
}

void dynprobe_kvfree_rcu(void *ptr)
{
	kvfree_rcu_mightsleep(ptr);
}
