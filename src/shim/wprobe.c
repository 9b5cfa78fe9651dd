// SPDX-License-Identifier: GPL-2.0
/*
 * Watchpoints' hook (w events): a wide hardware breakpoint, one per CPU
 * online when it is armed, on the watched data. Its overflow handler runs
 * in the debug exception, right after the accessing instruction, and hands
 * the hit to the hit path (hit.c) with that instruction's successor as
 * the ip, as the kernel's perf reports it. The Rust side
 * (src/probe/hook/wprobe.rs) owns the object and arms it while the event is
 * enabled: breakpoints are a scarce resource (four debug registers on
 * x86), held only then.
 *
 * A module's data lives as long as the module, and a breakpoint left on
 * it after the module is freed fires on whatever the next module, BPF
 * program or trampoline puts there. The watched address is a constant of
 * the definition ($addr, $value), so a watchpoint is bound to the module
 * whose memory holds it when it is made:
 *
 * - while armed, it holds that module: rmmod is refused ("in use") until
 *   the event is disabled, as for an event another module holds;
 * - when the module goes anyway (its init failed, or a forced unload),
 *   the module notifier disarms it before the memory is freed;
 * - once the module went, the watchpoint is not armed again, unless its
 *   symbol is at the same address again (the module was loaded again in
 *   the same place): an address place stays refused, the event has to be
 *   defined again.
 *
 * Refused when made: dynprobe's own memory (src/probe/own_text.rs, for
 * every probe kind), an address in the modules' area that no module holds (free,
 * or a BPF program's or trampoline's), a module's init memory (freed when
 * its init is done, with no notifier for it) and a module that is going.
 *
 * What makes it C: hw_breakpoint_init() and within_module() are static
 * inlines, and the overflow handler is the hit path's way in.
 */
#include <linux/err.h>
#include <linux/hw_breakpoint.h>
#include <linux/kprobes.h>
#include <linux/list.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/perf_event.h>
#include <linux/slab.h>
#include "internal.h"

struct dynprobe_wprobe {
	struct perf_event * __percpu *bp;	/* NULL while disarmed */
	const struct dynprobe_feed *feed;
	struct perf_event_attr attr;
	/* The rest only for an address in a module's memory. */
	struct list_head node;		/* on wprobes_in_modules */
	struct module *held;		/* while armed */
	bool in_module;
	bool module_gone;
};

/*
 * Guards every watchpoint's breakpoints, module and flags, and the list
 * of those in a module, which the module notifier walks.
 */
static DEFINE_MUTEX(wprobe_lock);
static LIST_HEAD(wprobes_in_modules);

static void wprobe_hit(struct perf_event *bp, struct perf_sample_data *data,
		       struct pt_regs *regs)
{
	struct dynprobe_wprobe *wp = bp->overflow_handler_context;

	dynprobe_dispatch(wp->feed, regs, NULL, instruction_pointer(regs), 0);
}
NOKPROBE_SYMBOL(wprobe_hit);

/*
 * The module whose memory holds @addr, with a reference if @hold; NULL
 * for memory that is no module's (the kernel image's, the heap). An
 * error for what cannot be watched: -ENOENT for the modules' area outside any module, a module's init
 * memory or a going module, -EOPNOTSUPP for the modules' area when
 * __module_address() was not resolved.
 */
static struct module *wprobe_module(unsigned long addr, bool hold)
{
	struct module *mod;

	lockdep_assert_held(&wprobe_lock);
	if (!dynprobe_ksyms.have.__module_address)
		return dynprobe_in_module_area(addr) ? ERR_PTR(-EOPNOTSUPP) :
						       NULL;
	guard(rcu)();
	mod = dynprobe_call___module_address(addr);
	if (!mod)
		return dynprobe_in_module_area(addr) ? ERR_PTR(-ENOENT) : NULL;
	/*
	 * A going module's notifier may have run already; the notifier of
	 * one that is coming or live runs after this (it takes the lock).
	 */
	if (mod->state == MODULE_STATE_GOING || within_module_init(addr, mod))
		return ERR_PTR(-ENOENT);
	if (hold && !try_module_get(mod))
		return ERR_PTR(-ENOENT);
	return mod;
}

struct dynprobe_wprobe *dynprobe_wprobe_new(unsigned long addr, u32 len,
					    u32 type,
					    const struct dynprobe_feed *feed)
{
	struct dynprobe_wprobe *wp = kzalloc(sizeof(*wp), GFP_KERNEL);
	struct module *mod;

	if (!wp)
		return ERR_PTR(-ENOMEM);
	wp->feed = feed;
	hw_breakpoint_init(&wp->attr);
	wp->attr.bp_addr = addr;
	wp->attr.bp_len = len;
	wp->attr.bp_type = type;
	INIT_LIST_HEAD(&wp->node);

	/*
	 * The address is aligned to the length (src/lang): the bytes watched
	 * are in the page of the first, in one module or none.
	 */
	guard(mutex)(&wprobe_lock);
	mod = wprobe_module(addr, false);
	if (IS_ERR(mod)) {
		kfree(wp);
		return ERR_CAST(mod);
	}
	if (mod) {
		wp->in_module = true;
		list_add(&wp->node, &wprobes_in_modules);
	}
	return wp;
}

int dynprobe_wprobe_arm(struct dynprobe_wprobe *wp, unsigned long resolved)
{
	struct perf_event * __percpu *bp;
	struct module *mod = NULL;

	guard(mutex)(&wprobe_lock);
	if (wp->bp)
		return 0;
	if (wp->in_module) {
		if (wp->module_gone && resolved != wp->attr.bp_addr)
			return -ENOENT;
		mod = wprobe_module(wp->attr.bp_addr, true);
		if (IS_ERR_OR_NULL(mod))
			return mod ? PTR_ERR(mod) : -ENOENT;
		/* Its symbol is there again, in a live module. */
		wp->module_gone = false;
	}
	/*
	 * The architecture checks the type, length and alignment here: x86
	 * refuses to watch reads alone (-EINVAL), as the debug registers
	 * cannot.
	 */
	bp = register_wide_hw_breakpoint(&wp->attr, wprobe_hit, wp);
	if (IS_ERR_PCPU(bp)) {
		module_put(mod);
		return PTR_ERR_PCPU(bp);
	}
	wp->bp = bp;
	wp->held = mod;
	return 0;
}

/*
 * Releasing the breakpoints removes them from every CPU by a call there,
 * which waits for a handler running on that CPU: none runs afterwards.
 * Then the module may go.
 */
static void wprobe_release(struct dynprobe_wprobe *wp)
{
	lockdep_assert_held(&wprobe_lock);
	if (!wp->bp)
		return;
	unregister_wide_hw_breakpoint(wp->bp);
	wp->bp = NULL;
	module_put(wp->held);
	wp->held = NULL;
}

void dynprobe_wprobe_disarm(struct dynprobe_wprobe *wp)
{
	guard(mutex)(&wprobe_lock);
	wprobe_release(wp);
}

void dynprobe_wprobe_free(struct dynprobe_wprobe *wp)
{
	if (!wp)
		return;
	scoped_guard(mutex, &wprobe_lock) {
		wprobe_release(wp);
		list_del(&wp->node);
	}
	kfree(wp);
}

/*
 * A module that goes while a watchpoint on it is armed (its init failed:
 * the load frees it whatever its count; or a forced unload) is freed
 * right after this: the breakpoints go first. Armed or not, the
 * watchpoint is not armed on that memory again.
 */
static int wprobe_module_notify(struct notifier_block *nb, unsigned long val,
				void *data)
{
	struct dynprobe_wprobe *wp;
	struct module *mod = data;

	if (val != MODULE_STATE_GOING)
		return NOTIFY_DONE;
	guard(mutex)(&wprobe_lock);
	list_for_each_entry(wp, &wprobes_in_modules, node) {
		if (!within_module(wp->attr.bp_addr, mod))
			continue;
		wprobe_release(wp);
		wp->module_gone = true;
	}
	return NOTIFY_DONE;
}

/*
 * First in the chain: a load that fails in a later COMING notifier calls
 * GOING only on those before it.
 */
static struct notifier_block wprobe_module_nb = {
	.notifier_call = wprobe_module_notify,
	.priority = INT_MAX,
};

int dynprobe_wprobe_init(void)
{
	return register_module_notifier(&wprobe_module_nb);
}

void dynprobe_wprobe_exit(void)
{
	unregister_module_notifier(&wprobe_module_nb);
}
