// SPDX-License-Identifier: GPL-2.0
/*
 * The handlers of kprobe and kretprobe probes. The probes themselves are
 * Rust objects (src/hooks/kprobe.rs), which register them; the handlers
 * are C because they are made of the kprobes core's static inline
 * functions, and hand each hit to the hit path (hit.c).
 */
#include <linux/kprobes.h>
#include "dynprobe/resolved.h"
#include "internal.h"

static int kprobe_hit(struct kprobe *kp, struct pt_regs *regs)
{
	struct dynprobe_kprobe *probe =
		container_of(kp, struct dynprobe_kprobe, rp.kp);

	dynprobe_dispatch(probe->feed, regs, NULL, (unsigned long)kp->addr, 0);
	return 0;
}
NOKPROBE_SYMBOL(kprobe_hit);

static int kretprobe_entry(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct kretprobe *rp = get_kretprobe(ri);
	struct dynprobe_kprobe *probe;

	if (unlikely(!rp))
		return -ENOENT;
	probe = container_of(rp, struct dynprobe_kprobe, rp);
	dynprobe_rs_store_entry(probe->feed->def, regs, (unsigned long *)ri->data);
	return 0;
}
NOKPROBE_SYMBOL(kretprobe_entry);

/*
 * The caller of a function that is returning, given the address its
 * return hook found in the return address slot at @slot. Two kinds of hook
 * replace that address with a trampoline of theirs and keep the original
 * aside: kretprobes through the rethook (arch_rethook_trampoline), fprobe
 * exits through the function graph (return_to_handler). When both hook
 * one call, the one that hooks second keeps the first one's trampoline,
 * and hands it to its handlers as the return address; the first one's
 * record of the call is still there while the second's handlers run (the
 * second's trampoline runs first), so the real address is looked up in
 * it by @slot, as the stack unwinders do (unwind_recover_ret_addr()).
 * Each lookup costs a call through the redirect, paid only on such calls.
 */
unsigned long dynprobe_real_return_address(unsigned long addr,
					   unsigned long *slot)
{
	if (addr == (unsigned long)dynprobe_ksyms.rethook_trampoline &&
	    dynprobe_ksyms.have.rethook_find_ret_addr) {
		struct llist_node *cur = NULL;
		unsigned long found;

		found = dynprobe_call_rethook_find_ret_addr(current,
							    (unsigned long)slot,
							    &cur);
		if (found)
			addr = found;
	}
	if (addr == (unsigned long)dynprobe_ksyms.fgraph_return_handler &&
	    dynprobe_ksyms.have.ftrace_graph_ret_addr) {
		int idx = 0;

		addr = dynprobe_call_ftrace_graph_ret_addr(current, &idx, addr,
							   slot);
	}
	return addr;
}
NOKPROBE_SYMBOL(dynprobe_real_return_address);

static int kretprobe_hit(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct kretprobe *rp = get_kretprobe(ri);
	struct dynprobe_kprobe *probe;
	unsigned long caller;

	if (unlikely(!rp))
		return 0;
	probe = container_of(rp, struct dynprobe_kprobe, rp);
	/*
	 * The rethook trampoline has put in regs->ip the return address
	 * the first rethook on the call saved, skipping other kretprobes'
	 * trampolines (the address saved for this one,
	 * get_kretprobe_retaddr(), is a trampoline when another kretprobe
	 * hooked first). If the function graph hooked the return before
	 * any rethook, that address is return_to_handler.
	 */
	caller = dynprobe_real_return_address(instruction_pointer(regs),
			dynprobe_return_slot(kernel_stack_pointer(regs)));
	dynprobe_dispatch(probe->feed, regs,
			  rp->data_size ? (unsigned long *)ri->data : NULL,
			  (unsigned long)rp->kp.addr, caller);
	return 0;
}
NOKPROBE_SYMBOL(kretprobe_hit);

void dynprobe_kprobe_init(struct dynprobe_kprobe *probe, bool ret,
			  unsigned int entry_data_size)
{
	if (ret) {
		probe->rp.handler = kretprobe_hit;
		if (entry_data_size)
			probe->rp.entry_handler = kretprobe_entry;
		probe->rp.data_size = entry_data_size;
	} else {
		probe->rp.kp.pre_handler = kprobe_hit;
	}
}
