// SPDX-License-Identifier: GPL-2.0
/*
 * Function entry probes (f events and function events at entry, on a
 * function of the kernel image) share one ftrace_ops. Its filter holds the
 * functions of every armed entry probe; its callback (in hit.c, with the
 * rest of the hit path) finds the probes of the function hit in a hash
 * table by its ftrace call site. That is the cheapest hook ftrace offers:
 * no function-graph shadow stack and no fprobe layer, so a hit costs the
 * ftrace call, one lookup and the record. Exit probes need the return
 * hooked and stay on fprobe; so do globs and function lists.
 *
 * A module's functions come and go with it, and ftrace forgets a going
 * module's call sites only in the trace instances' own filters: another
 * ops keeps the address in its filter, and a module loaded there later
 * would be hooked by it. So, as fprobe does, arming holds the module (one
 * that is going is not hooked), and when a module goes its probes are
 * unhooked here (the event stays; it is hooked again by name at its next
 * enable, wherever the module is then).
 */
#include <linux/ftrace.h>
#include <linux/hashtable.h>
#include <linux/module.h>
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
	struct dynprobe_fentry *probe;

	hash_for_each_possible(dynprobe_fentry_probes, probe, node, addr)
		if (probe->addr == addr)
			return true;
	return false;
}

/*
 * The module whose text holds @addr, with a reference, or NULL for the
 * kernel image; -ENOENT when no live module has it (it is going, or gone).
 */
static struct module *fentry_hold_module(unsigned long addr)
{
	struct module *mod;

	if (!dynprobe_in_module_area(addr))
		return NULL;
	if (!dynprobe_ksyms.have.__module_text_address)
		return ERR_PTR(-ENOENT);
	guard(rcu)();
	mod = dynprobe_call___module_text_address(addr);
	if (!mod || !try_module_get(mod))
		return ERR_PTR(-ENOENT);
	return mod;
}

static int fentry_hook(struct dynprobe_fentry *probe)
{
	unsigned long addr = probe->addr;
	int ret = 0;

	lockdep_assert_held(&fentry_lock);
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
	hash_add_rcu(dynprobe_fentry_probes, &probe->node, addr);
	fentry_armed++;
	probe->armed = true;
	return 0;
}

int dynprobe_fentry_arm(struct dynprobe_fentry *probe)
{
	struct module *mod;
	int ret;

	guard(mutex)(&fentry_lock);
	/*
	 * Held while the filter changes: a module whose going notifier ran
	 * before this must not be hooked after it.
	 */
	mod = fentry_hold_module(probe->addr);
	if (IS_ERR(mod))
		return PTR_ERR(mod);
	ret = fentry_hook(probe);
	module_put(mod);
	return ret;
}

static void fentry_unhook(struct dynprobe_fentry *probe)
{
	unsigned long addr = probe->addr;

	lockdep_assert_held(&fentry_lock);
	hash_del_rcu(&probe->node);
	probe->armed = false;
	if (!--fentry_armed) {
		int ret = unregister_ftrace_function(&fentry_ops);

		/* ftrace is dead: the ops stays on its lists, and so must we. */
		if (ret)
			dynprobe_ftrace_stuck("the function entry probes", ret);
	}
	if (!fentry_addr_armed(addr))
		ftrace_set_filter_ip(&fentry_ops, addr, 1, 0);
}

/* Handlers of @probe may still run until the next RCU grace period. */
void dynprobe_fentry_disarm(struct dynprobe_fentry *probe)
{
	guard(mutex)(&fentry_lock);
	if (probe->armed)
		fentry_unhook(probe);
}

/*
 * A going module's probes are unhooked: its call sites leave ftrace's
 * records when it is freed, but not this ops' filter. Its functions may
 * still run until then (its exit is done); handlers that do are as safe
 * as after any disarm.
 */
static int fentry_module_notify(struct notifier_block *nb, unsigned long val,
				void *data)
{
	struct dynprobe_fentry *probe;
	struct hlist_node *tmp;
	struct module *mod = data;
	int bkt;

	if (val != MODULE_STATE_GOING)
		return NOTIFY_DONE;
	guard(mutex)(&fentry_lock);
	hash_for_each_safe(dynprobe_fentry_probes, bkt, tmp, probe, node)
		if (within_module(probe->addr, mod))
			fentry_unhook(probe);
	return NOTIFY_DONE;
}

static struct notifier_block fentry_module_nb = {
	.notifier_call = fentry_module_notify,
};

int dynprobe_fentry_init(void)
{
	return register_module_notifier(&fentry_module_nb);
}

void dynprobe_fentry_exit(void)
{
	unregister_module_notifier(&fentry_module_nb);
}
