// SPDX-License-Identifier: GPL-2.0
/*
 * The handlers of kprobe and kretprobe probes. The probes themselves are
 * Rust objects (src/probe/hook/kprobe.rs), which register them; the handlers
 * are C because they are made of the kprobes core's static inline
 * functions (get_kretprobe(), instruction_pointer(),
 * kernel_stack_pointer()), and hand each hit to the hit path (hit.c);
 * a kprobe's own handler is hit.c's, which the hit path is inlined into.
 * Lockdown's check of kprobes is here too: security_locked_down() is a
 * static inline without CONFIG_SECURITY. What else the kernel's kprobe
 * events check before registering a probe is Rust's
 * (src/probe/notrace.rs).
 */
#include <linux/kprobes.h>
#include <linux/security.h>
#include "internal.h"

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
		probe->rp.kp.pre_handler = dynprobe_kprobe_hit;
	}
}

int dynprobe_lockdown_kprobes(void)
{
	return security_locked_down(LOCKDOWN_KPROBES);
}
