// SPDX-License-Identifier: GPL-2.0
/*
 * Function entry probes (f events and function events at entry, on a
 * function of the kernel image) share one ftrace_ops. Its filter holds the
 * functions of every armed entry probe; its callback finds the probes of
 * the function hit in a hash table by its ftrace call site. That is the
 * cheapest hook ftrace offers: no function-graph shadow stack and no
 * fprobe layer, so a hit costs the ftrace call, one lookup and the record. Exit probes need
 * the return hooked and stay on fprobe; so do globs and functions of
 * modules, whose text comes and goes (fprobe follows it).
 */
#include <linux/ftrace.h>
#include <linux/hashtable.h>
#include <linux/trace_recursion.h>
#include <linux/uaccess.h>
#include "dynprobe/resolved.h"
#include "internal.h"

#define FENTRY_HASH_BITS 10

/* Armed entry probes by their function's call site; RCU for the callback. */
static DEFINE_HASHTABLE(fentry_probes, FENTRY_HASH_BITS);
/* Guards the table, the ops' filter and whether the ops is registered. */
static DEFINE_MUTEX(fentry_lock);
static unsigned int fentry_armed;

static void fentry_callback(unsigned long ip, unsigned long parent_ip,
			    struct ftrace_ops *op, struct ftrace_regs *fregs);

/*
 * No FTRACE_OPS_FL_RECURSION: that flag asks ftrace to wrap the callback
 * in ftrace_ops_assist_func() for recursion protection, which the
 * callback takes itself; without it the trampoline calls the callback
 * directly, as fprobe's ops is called.
 */
static struct ftrace_ops fentry_ops = {
	.func = fentry_callback,
};

/*
 * The ftrace call site of the function at @addr, the ip its hits report:
 * after its ENDBR, or the poison IBT sealing left in its place. Worked out
 * once, when the probe is made, so the hit looks its ip up as it comes.
 */
unsigned long dynprobe_fentry_site(unsigned long addr)
{
#ifdef CONFIG_X86_KERNEL_IBT
	u32 insn;

	if (!copy_from_kernel_nofault(&insn, (void *)addr, sizeof(insn)) &&
	    __is_endbr(insn))
		return addr + ENDBR_INSN_SIZE;
#endif
	return addr;
}

static void fentry_callback(unsigned long ip, unsigned long parent_ip,
			    struct ftrace_ops *op, struct ftrace_regs *fregs)
{
	struct dynprobe_fprobe *probe;
	struct pt_regs *regs;
	int bit;

	/* As fprobe: nothing is recorded where RCU does not watch. */
	if (!rcu_is_watching())
		return;
	/* Also disables preemption, which the table's readers rely on. */
	bit = ftrace_test_recursion_trylock(ip, parent_ip);
	if (bit < 0)
		return;
	regs = ftrace_partial_regs(fregs, NULL);
	hash_for_each_possible_rcu_notrace(fentry_probes, probe, fentry_node,
					   ip) {
		if (probe->fentry_addr != ip)
			continue;
		/* The call site, as fprobe reports it (after an ENDBR). */
		if (probe->kind == DYNPROBE_FUNCTION_ENTRY)
			dynprobe_dispatch_ftrace(probe->feed, fregs, regs,
						 NULL, parent_ip, ip);
		else
			dynprobe_dispatch_ftrace(probe->feed, fregs, regs,
						 NULL, ip, 0);
	}
	ftrace_test_recursion_unlock(bit);
}
NOKPROBE_SYMBOL(fentry_callback);

static bool fentry_addr_armed(unsigned long addr)
{
	struct dynprobe_fprobe *probe;

	hash_for_each_possible(fentry_probes, probe, fentry_node, addr)
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
	hash_add_rcu(fentry_probes, &probe->fentry_node, addr);
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
