// SPDX-License-Identifier: GPL-2.0
/*
 * The handlers of kprobe and kretprobe probes. The probes themselves are
 * Rust objects (src/probe/hook/kprobe.rs), which register them; the handlers
 * are C because they are made of the kprobes core's static inline
 * functions, and hand each hit to the hit path (hit.c). The checks the
 * kernel's kprobe events make before registering a probe are here too.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/ftrace.h>
#include <linux/kallsyms.h>
#include <linux/kprobes.h>
#include <linux/mutex.h>
#include <linux/security.h>
#include <linux/slab.h>
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

int dynprobe_lockdown_kprobes(void)
{
	return security_locked_down(LOCKDOWN_KPROBES);
}

#if defined(CONFIG_DYNAMIC_FTRACE) && \
	!defined(CONFIG_KPROBE_EVENTS_ON_NOTRACE)

/*
 * Never registered: only asked, under its lock, whether ftrace would hook
 * an address. ftrace_location_range(), which the kernel asks, is not
 * exported.
 */
static struct ftrace_ops notrace_check_ops;
static DEFINE_MUTEX(notrace_check_lock);

/*
 * Whether the function starting at @start has an ftrace call site (1) or
 * not (0): ftrace takes a function's start into a filter only then
 * (ftrace_location() maps SYM+0 to the call site anywhere in SYM's
 * extent), as ftrace_location_range() over the extent answers. -ENOMEM
 * when the filter could not be made: no answer.
 */
static int ftrace_site_in(unsigned long start)
{
	int ret;

	mutex_lock(&notrace_check_lock);
	ret = ftrace_set_filter_ip(&notrace_check_ops, start, 0, 1);
	ftrace_free_filter(&notrace_check_ops);
	mutex_unlock(&notrace_check_lock);
	if (ret == -ENOMEM)
		return ret;
	return !ret;
}

/*
 * __within_notrace_func(): @addr is in a function kallsyms knows (its
 * name goes to @sym, KSYM_SYMBOL_LEN bytes) that has no ftrace call site.
 * The name and the start come from sprint_symbol()'s "SYM+0xOFF/0xSIZE
 * [MOD]" (kallsyms_lookup_size_offset() is not exported either); an
 * address kallsyms does not know prints as "0x...".
 */
static int notrace_at(unsigned long addr, char *sym)
{
	unsigned long offset, size;
	char *plus;
	int site;

	if (!addr)
		return 0;
	sprint_symbol(sym, addr);
	plus = strrchr(sym, '+');
	if (!plus || sscanf(plus, "+%lx/%lx", &offset, &size) != 2)
		return 0;
	*plus = '\0';
	site = ftrace_site_in(addr - offset);
	return site < 0 ? site : !site;
}

/*
 * within_notrace_func() of kernel/trace/trace_kprobe.c: a suffixed copy
 * of a function (SYM.constprop.0, SYM.cold, ...) has no call site of its
 * own, and counts as notrace only if the function it was made from,
 * when kallsyms has it, is.
 */
static int within_notrace_func(unsigned long addr)
{
	unsigned long base;
	char *sym, *dot;
	int ret;

	/* Out of memory is no answer: the probe is refused with ENOMEM. */
	sym = kmalloc(KSYM_SYMBOL_LEN, GFP_KERNEL);
	if (!sym)
		return -ENOMEM;
	ret = notrace_at(addr, sym);
	if (ret <= 0)
		goto out;
	dot = strchr(sym, '.');
	if (dot) {
		*dot = '\0';
		base = dynprobe_call_kallsyms_lookup_name(sym);
		if (base)
			ret = notrace_at(base, sym);
	}
out:
	kfree(sym);
	return ret;
}
#else
static int within_notrace_func(unsigned long addr)
{
	return 0;
}
#endif

/*
 * What __register_trace_kprobe() checks before it registers a kprobe of
 * the kernel's kprobe events: lockdown (-EPERM), then a place in a
 * function ftrace cannot trace, which includes the tracing core's own
 * (-EINVAL), and dynprobe's own text (-EINVAL). The kprobe blacklist is register_kprobe()'s to check. The
 * address is trace_kprobe_address()'s: the symbol's plus the offset.
 */
int dynprobe_kprobe_precheck(struct kprobe *kp)
{
	unsigned long addr;
	int ret;

	ret = dynprobe_lockdown_kprobes();
	if (ret)
		return ret;
	if (kp->symbol_name) {
		addr = dynprobe_call_kallsyms_lookup_name(kp->symbol_name);
		if (addr)
			addr += kp->offset;
	} else {
		addr = (unsigned long)kp->addr;
	}
	ret = within_notrace_func(addr);
	if (ret < 0)
		return ret;
	if (ret) {
		pr_warn("Could not probe notrace function %ps\n", (void *)addr);
		return -EINVAL;
	}
	/*
	 * dynprobe's own code runs while a hit is recorded; the kprobe
	 * blacklist holds only the handler path, and a kernel with
	 * KPROBE_EVENTS_ON_NOTRACE would take the rest.
	 */
	if (dynprobe_own_address(addr)) {
		pr_warn("Could not probe dynprobe's own %ps\n", (void *)addr);
		return -EINVAL;
	}
	return 0;
}
