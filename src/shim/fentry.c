// SPDX-License-Identifier: GPL-2.0
/*
 * Function entry probes (f events and function events at entry, on a
 * function of the kernel image) share one ftrace_ops. Its filter holds the
 * functions of every armed entry probe; its callback (in hit.c, with the
 * rest of the hit path) finds the probes of the function hit in a hash
 * table by its ftrace call site. That is the cheapest hook ftrace offers:
 * no function-graph shadow stack and no fprobe layer, so a hit costs the
 * ftrace call, one lookup and the record. Exit probes need the return
 * hooked and stay on fprobe; so do globs and functions of modules, whose
 * text comes and goes (fprobe follows it).
 */
#include <linux/ftrace.h>
#include <linux/hashtable.h>
#include "dynprobe/resolved.h"
#include "internal.h"

/*
 * Armed entry probes by their function's call site; RCU for the callback
 * (hit.c's dynprobe_fentry_callback()).
 */
DEFINE_HASHTABLE(dynprobe_fentry_probes, DYNPROBE_FENTRY_HASH_BITS);
/* Guards the table, the ops' filter and whether the ops is registered. */
static DEFINE_MUTEX(fentry_lock);
static unsigned int fentry_armed;

/*
 * No FTRACE_OPS_FL_RECURSION: that flag asks ftrace to wrap the callback
 * in ftrace_ops_assist_func() for recursion protection, which the
 * callback takes itself; without it the trampoline calls the callback
 * directly, as fprobe's ops is called.
 */
static struct ftrace_ops fentry_ops = {
	.func = dynprobe_fentry_callback,
};

static bool fentry_addr_armed(unsigned long addr)
{
	struct dynprobe_fprobe *probe;

	hash_for_each_possible(dynprobe_fentry_probes, probe, fentry_node,
			       addr)
		if (probe->fentry_addr == addr)
			return true;
	return false;
}

int dynprobe_fentry_arm(struct dynprobe_fprobe *probe)
{
	unsigned long addr = probe->fentry_addr;
	int ret = 0;

	guard(mutex)(&fentry_lock);
	if (!fentry_addr_armed(addr)) {
		ret = ftrace_set_filter_ip(&fentry_ops, addr, 0, 0);
		if (ret)
			return ret;
	}
	/* Never registered with an empty filter: that traces everything. */
	if (!fentry_armed) {
		ret = register_ftrace_function(&fentry_ops);
		if (ret) {
			ftrace_set_filter_ip(&fentry_ops, addr, 1, 0);
			return ret;
		}
	}
	hash_add_rcu(dynprobe_fentry_probes, &probe->fentry_node, addr);
	fentry_armed++;
	probe->fentry_armed = true;
	return 0;
}

/* Handlers of @probe may still run until the next RCU grace period. */
void dynprobe_fentry_disarm(struct dynprobe_fprobe *probe)
{
	unsigned long addr = probe->fentry_addr;

	guard(mutex)(&fentry_lock);
	if (!probe->fentry_armed)
		return;
	hash_del_rcu(&probe->fentry_node);
	probe->fentry_armed = false;
	if (!--fentry_armed) {
		int ret = unregister_ftrace_function(&fentry_ops);

		/* ftrace is dead: the ops stays on its lists, and so must we. */
		if (ret)
			dynprobe_ftrace_stuck("the function entry probes", ret);
	}
	if (!fentry_addr_armed(addr))
		ftrace_set_filter_ip(&fentry_ops, addr, 1, 0);
}
