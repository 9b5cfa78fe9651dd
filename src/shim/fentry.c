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
 * enable, wherever the module is then). A module's init text goes
 * earlier, when its init is done: its probes are unhooked when it goes
 * live, as kprobes does, and init text is hooked only while the module
 * is coming. A load that fails after the module came sends it GOING, as
 * an unload does.
 *
 * Unhooking must not fail for want of memory, and removing an address
 * from an ftrace filter copies the filter. So a probe leaves the table
 * first (its callback finds nothing there: no record is written), then
 * its address leaves the filter; if ftrace cannot drop it, the address
 * stays hooked to a callback that ignores it until the filter is rebuilt
 * from the table at the next arm, or freed (which needs no memory) when
 * the last probe is unhooked.
 *
 * What makes it C: the hash table the callback reads (DEFINE_HASHTABLE(),
 * hash_add_rcu(), hash_for_each_possible(): macros), within_module() (a
 * static inline), and the callback itself, which is the hit path's
 * (hit.c).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/ftrace.h>
#include <linux/hashtable.h>
#include <linux/module.h>
#include <linux/printk.h>
#include <linux/slab.h>
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
/* The filter holds addresses no armed probe has: ftrace could not drop them. */
static bool fentry_filter_stale;

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
 * kernel image; -ENOENT when no live module has it (it is going, or
 * gone), or it is init text and the module is no longer coming (its
 * notifier for going live may have run already: init text hooked after
 * it would stay hooked once freed).
 */
static struct module *fentry_hold_module(unsigned long addr)
{
	struct module *mod;

	lockdep_assert_held(&fentry_lock);
	if (!dynprobe_in_module_area(addr))
		return NULL;
	if (!dynprobe_ksyms.have.__module_text_address)
		return ERR_PTR(-ENOENT);
	guard(rcu)();
	mod = dynprobe_call___module_text_address(addr);
	if (!mod)
		return ERR_PTR(-ENOENT);
	if (within_module_init(addr, mod) && mod->state != MODULE_STATE_COMING)
		return ERR_PTR(-ENOENT);
	if (!try_module_get(mod))
		return ERR_PTR(-ENOENT);
	return mod;
}

/*
 * The filter made again from the armed probes and @addr, which drops the
 * addresses ftrace could not remove before. If this fails too, they stay
 * (they are harmless) and @addr is added as usual.
 */
static int fentry_rebuild_filter(unsigned long addr)
{
	struct dynprobe_fentry *probe;
	unsigned long *ips;
	unsigned int n = 0;
	int bkt, ret;

	lockdep_assert_held(&fentry_lock);
	ips = kmalloc_array(fentry_armed + 1, sizeof(*ips), GFP_KERNEL);
	if (!ips)
		return -ENOMEM;
	hash_for_each(dynprobe_fentry_probes, bkt, probe, node)
		if (n < fentry_armed)
			ips[n++] = probe->addr;
	ips[n++] = addr;
	ret = ftrace_set_filter_ips(&fentry_ops, ips, n, 0, 1);
	kfree(ips);
	if (!ret)
		fentry_filter_stale = false;
	return ret;
}

static int fentry_hook(struct dynprobe_fentry *probe)
{
	unsigned long addr = probe->addr;
	int ret = 0;

	lockdep_assert_held(&fentry_lock);
	if (fentry_filter_stale && !fentry_rebuild_filter(addr)) {
		/* @addr is in the filter now. */
	} else if (!fentry_addr_armed(addr)) {
		ret = ftrace_set_filter_ip(&fentry_ops, addr, 0, 0);
		if (ret)
			return ret;
	}
	/*
	 * Never registered with an empty filter: that traces everything.
	 * The filter is emptied whenever the ops is unregistered.
	 */
	if (!fentry_armed) {
		ret = register_ftrace_function(&fentry_ops);
		if (ret) {
			/* Left registered only by a dead ftrace. */
			if (!(fentry_ops.flags & FTRACE_OPS_FL_ENABLED))
				ftrace_free_filter(&fentry_ops);
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
	unsigned int header_words;
	struct module *mod;
	int ret;

	/*
	 * What the callback's record of words relies on (hit.c's struct
	 * hit, fentry): an entry probe has no entry data, so its word table
	 * reads registers only (src/probe/mod.rs' word_table()), and its
	 * header is a function event's two ips or an f event's one. So does
	 * the table of a record of words and a string.
	 */
	if (probe->feed.words)
		header_words = probe->feed.header_words;
	else if (probe->feed.header_words & DYNPROBE_STRING_TABLE)
		header_words = probe->feed.header_words & DYNPROBE_HEADER_IPS;
	else
		header_words = probe->kind == DYNPROBE_FUNCTION_ENTRY ? 2 : 1;
	if (WARN_ON_ONCE(header_words !=
			 (probe->kind == DYNPROBE_FUNCTION_ENTRY ? 2 : 1)))
		return -EINVAL;
	if (WARN_ON_ONCE(!dynprobe_feed_reads_regs_only(&probe->feed)))
		return -EINVAL;
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

/*
 * Needs no memory to take the probe out: see the top of the file for what
 * is left when ftrace cannot drop its address from the filter.
 */
static void fentry_unhook(struct dynprobe_fentry *probe)
{
	unsigned long addr = probe->addr;
	int ret;

	lockdep_assert_held(&fentry_lock);
	hash_del_rcu(&probe->node);
	probe->armed = false;
	if (!--fentry_armed) {
		ret = unregister_ftrace_function(&fentry_ops);
		/* ftrace is dead: the ops stays on its lists, and so must we. */
		if (ret) {
			dynprobe_ftrace_stuck("the function entry probes", ret);
			return;
		}
		/* Frees the filter's hash, stale addresses and all. */
		ftrace_free_filter(&fentry_ops);
		fentry_filter_stale = false;
		return;
	}
	if (fentry_addr_armed(addr))
		return;
	ret = ftrace_set_filter_ip(&fentry_ops, addr, 1, 0);
	if (ret) {
		fentry_filter_stale = true;
		pr_warn_ratelimited("ftrace kept %pS in the entry probes' filter (%d): it calls a callback that ignores it until the filter is rebuilt\n",
				    (void *)addr, ret);
	}
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
 * as after any disarm. A module going live frees its init text the same
 * way (ftrace_free_mem(), after this): its probes there are unhooked,
 * while ftrace still has their records and can drop them from the
 * filter. A module whose init failed goes with its init text: it is
 * within the module then.
 */
static int fentry_module_notify(struct notifier_block *nb, unsigned long val,
				void *data)
{
	struct dynprobe_fentry *probe;
	struct hlist_node *tmp;
	struct module *mod = data;
	int bkt;

	if (val != MODULE_STATE_GOING && val != MODULE_STATE_LIVE)
		return NOTIFY_DONE;
	guard(mutex)(&fentry_lock);
	hash_for_each_safe(dynprobe_fentry_probes, bkt, tmp, probe, node) {
		if (val == MODULE_STATE_LIVE ?
		    within_module_init(probe->addr, mod) :
		    within_module(probe->addr, mod))
			fentry_unhook(probe);
	}
	return NOTIFY_DONE;
}

/*
 * First in the chain: a load that fails in a later COMING notifier sends
 * GOING only to those before it.
 */
static struct notifier_block fentry_module_nb = {
	.notifier_call = fentry_module_notify,
	.priority = INT_MAX,
};

int dynprobe_fentry_init(void)
{
	return register_module_notifier(&fentry_module_nb);
}

void dynprobe_fentry_exit(void)
{
	unregister_module_notifier(&fentry_module_nb);
}
