// SPDX-License-Identifier: GPL-2.0
/*
 * Holds on dynprobe's events keep dynprobe loaded.
 *
 * A dynprobe event is a dynamic trace event (TRACE_EVENT_FL_DYNAMIC): the
 * tracing core counts its users in the event's own reference count
 * (trace_event_try_get_ref() -> trace_event_dyn_try_get_ref()), which
 * makes removing a held event fail with EBUSY. But nothing ties that count
 * to a module: for a dynamic event the tracing core takes no module
 * reference (call->module shares its storage with the count). The kernel's
 * event probes, enable_event triggers, perf, and other modules through
 * trace_get_event_file() can hold one of our events without enabling it,
 * and rmmod would then free the code its callbacks (reg, print,
 * define_fields) are made of while the event stays registered.
 *
 * So each reference taken on one of our events also takes one on this
 * module, and each one dropped drops it: a kprobe on
 * trace_event_dyn_try_get_ref() pins the module before the count goes up,
 * a kretprobe on trace_event_dyn_put_ref() unpins it once the count is
 * down. rmmod is refused (EWOULDBLOCK, "in use") while anything holds an
 * event; an event nothing holds is removed at unload as before. Every
 * taker of such a reference holds event_mutex (trace_get_event_file(),
 * perf_trace_init(), the event probes' and the event triggers' parsers),
 * as dynprobe does when it adds or removes an event, so "listed" below
 * cannot change under a get.
 *
 * dynprobe's own event probes hold their source event too (its file and
 * their perf counters). On one of dynprobe's events those holds are
 * internal: they do not pin the module (module exit removes the event
 * probes before their sources), and they are counted in the event
 * (dynprobe_rs_internal_ref()), so that a clear that removes an event
 * probe together with its source is not refused for the probe's holds.
 * The control path marks itself as the internal holder around them.
 *
 * What makes it C: the handlers read the hooked function's argument with
 * regs_get_kernel_argument(), a static inline, and run where a probe
 * fires.
 */
#include <linux/kprobes.h>
#include <linux/module.h>
#include <linux/poison.h>
#include <linux/trace_events.h>
#include "internal.h"

/*
 * What a get is redirected to while the module is going away: dynamic,
 * never listed, so trace_event_dyn_try_get_ref() refuses it and its caller
 * gets an error instead of a reference on an event about to go.
 */
static struct trace_event_call refused_call = {
	.flags = TRACE_EVENT_FL_DYNAMIC,
};

/*
 * The task taking or dropping dynprobe's own holds, or NULL. Set and
 * cleared around event probes' attach and detach and the worker that
 * makes their counters on CPUs coming online, one task at a time (all
 * under eprobes_lock, eprobe.c).
 */
static struct task_struct *internal_holder;

void dynprobe_internal_holds_begin(void)
{
	WRITE_ONCE(internal_holder, current);
}

void dynprobe_internal_holds_end(void)
{
	WRITE_ONCE(internal_holder, NULL);
}

bool dynprobe_internal_holds(void)
{
	return READ_ONCE(internal_holder) == current;
}
NOKPROBE_SYMBOL(dynprobe_internal_holds);

/* One of dynprobe's trace events (src/event/trace_event.rs sets this reg). */
static bool dynprobe_call(const struct trace_event_call *call)
{
	return call && call != &refused_call && call->class &&
	       call->class->reg == dynprobe_rs_event_reg;
}
NOKPROBE_SYMBOL(dynprobe_call);

/* In ftrace_events: the only state in which a get of it succeeds. */
static bool listed(const struct trace_event_call *call)
{
	const struct list_head *next = READ_ONCE(call->list.next);

	/* Zeroed until added (Opaque::zeroed), poisoned once removed. */
	return next && next != LIST_POISON1;
}
NOKPROBE_SYMBOL(listed);

static int get_ref_pre(struct kprobe *kp, struct pt_regs *regs)
{
	struct trace_event_call *call =
		(void *)regs_get_kernel_argument(regs, 0);

	if (!dynprobe_call(call) || !listed(call))
		return 0;
	if (dynprobe_internal_holds()) {
		dynprobe_rs_internal_ref(call, 1);
		return 0;
	}
	/* A clear is removing it, or the module is going away with it. */
	if (dynprobe_rs_event_closing(call) || !try_module_get(THIS_MODULE)) {
		/* x86_64: the first argument is in %di. */
		regs->di = (unsigned long)&refused_call;
		return 0;
	}
	return 0;
}
NOKPROBE_SYMBOL(get_ref_pre);

static struct kprobe get_ref_probe = {
	.symbol_name = "trace_event_dyn_try_get_ref",
	.pre_handler = get_ref_pre,
};

static int put_ref_entry(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct trace_event_call *call =
		(void *)regs_get_kernel_argument(regs, 0);

	if (!dynprobe_call(call))
		return 1;	/* not ours: no return handler for this call */
	if (dynprobe_internal_holds()) {
		/* Counted down first: the control path reads it, not now. */
		dynprobe_rs_internal_ref(call, -1);
		return 1;
	}
	return 0;
}
NOKPROBE_SYMBOL(put_ref_entry);

static int put_ref_return(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	/*
	 * The count is down. If this was the last reference, the module may
	 * be unloaded from here on: its exit unregisters this kretprobe,
	 * which waits for running handlers (synchronize_rcu()).
	 */
	module_put(THIS_MODULE);
	return 0;
}
NOKPROBE_SYMBOL(put_ref_return);

static struct kretprobe put_ref_probe = {
	.kp.symbol_name = "trace_event_dyn_put_ref",
	.entry_handler = put_ref_entry,
	.handler = put_ref_return,
	/*
	 * Puts do not sleep; concurrent ones are few. A put that finds no
	 * free instance (nmissed) leaves its module reference taken: rmmod
	 * is then refused, never let through under a holder.
	 */
	.maxactive = 64,
};

int dynprobe_holds_init(void)
{
	int ret;

	ret = register_kprobe(&get_ref_probe);
	if (ret) {
		pr_err("dynprobe: cannot hook trace_event_dyn_try_get_ref (%d): holds on events could not keep the module loaded\n",
		       ret);
		return ret;
	}
	ret = register_kretprobe(&put_ref_probe);
	if (ret) {
		pr_err("dynprobe: cannot hook trace_event_dyn_put_ref (%d): holds on events could not keep the module loaded\n",
		       ret);
		unregister_kprobe(&get_ref_probe);
		return ret;
	}
	return 0;
}

/* Module exit, once no event is left (so no get or put is for ours). */
void dynprobe_holds_exit(void)
{
	unregister_kretprobe(&put_ref_probe);
	unregister_kprobe(&get_ref_probe);
}
