// SPDX-License-Identifier: GPL-2.0
/*
 * The fprobe and tracepoint probes behind dynprobe events, their
 * handlers, and arming them when their event is enabled (kprobes and
 * kretprobes are Rust objects, src/hooks/kprobe.rs, with handlers in
 * kprobe.c).
 *
 * fprobes (f events and function events) all share the kernel's one
 * fprobe hook, which finds the probes of a function by its address, so a
 * hit costs the same however many functions are probed. Tracepoint probes
 * (t events) are fprobes too, on the tracepoint's probestub.
 */
#include <linux/ftrace.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/tracepoint.h>
#include "dynprobe/resolved.h"
#include "internal.h"

/*
 * On x86_64 ftrace_regs holds a pt_regs whose argument, stack pointer,
 * frame pointer, ip and return value registers are valid: the same
 * fetchers serve kprobes and fprobes.
 */
static int fprobe_entry(struct fprobe *fp, unsigned long entry_ip,
			unsigned long ret_ip, struct ftrace_regs *fregs,
			void *entry_data)
{
	struct dynprobe_probe *probe =
		container_of(fp, struct dynprobe_probe, fp);
	struct pt_regs *regs = ftrace_partial_regs(fregs, NULL);

	switch (probe->kind) {
	case DYNPROBE_FPROBE_ENTRY:
		dynprobe_dispatch(probe->feed, regs, NULL, entry_ip, 0);
		break;
	case DYNPROBE_FUNCTION_ENTRY:
		dynprobe_dispatch(probe->feed, regs, NULL, ret_ip, entry_ip);
		break;
	case DYNPROBE_TRACEPOINT:
		/*
		 * The stub runs once for every registration of it (other t
		 * probes, the kernel's own); ours carries this probe as data.
		 */
		if (ftrace_regs_get_argument(fregs, 0) == (unsigned long)probe)
			dynprobe_dispatch(probe->feed, regs, NULL, entry_ip, 0);
		break;
	default:
		/* Exit events: keep what the exit needs of the entry. */
		if (fp->entry_data_size)
			dynprobe_rs_store_entry(probe->feed->def, regs, entry_data);
		break;
	}
	return 0;
}
NOKPROBE_SYMBOL(fprobe_entry);

static void fprobe_exit(struct fprobe *fp, unsigned long entry_ip,
			unsigned long ret_ip, struct ftrace_regs *fregs,
			void *entry_data)
{
	struct dynprobe_probe *probe =
		container_of(fp, struct dynprobe_probe, fp);
	struct pt_regs *regs = ftrace_partial_regs(fregs, NULL);
	const unsigned long *data = fp->entry_data_size ? entry_data : NULL;

	/*
	 * @ret_ip is what the function graph saved at entry: the rethook
	 * trampoline if a kretprobe hooked the return before it.
	 */
	ret_ip = dynprobe_real_return_address(ret_ip,
			dynprobe_return_slot(ftrace_regs_get_stack_pointer(fregs)));
	if (probe->kind == DYNPROBE_FPROBE_EXIT)
		dynprobe_dispatch(probe->feed, regs, data, entry_ip, ret_ip);
	else
		dynprobe_dispatch(probe->feed, regs, data, ret_ip, entry_ip);
}
NOKPROBE_SYMBOL(fprobe_exit);

/*
 * Whether ftrace can hook @func (it is in available_filter_functions).
 * The kernel's own check, fprobe_count_ips_from_filter(), is not
 * exported; asking for @func in the filter of an ftrace_ops that is never
 * registered answers the same question without hooking anything: by
 * address for a plain name (a lookup), by pattern for a glob (a scan of
 * every function).
 */
static int fprobe_target_check(const char *func)
{
	static struct ftrace_ops check_ops;
	static DEFINE_MUTEX(check_lock);
	unsigned long addr = 0;
	char *glob = NULL;
	int ret;

	if (strpbrk(func, "*?[")) {
		/* ftrace_set_filter() edits the pattern it is given: a copy. */
		glob = kstrdup(func, GFP_KERNEL);
		if (!glob)
			return -ENOMEM;
	} else {
		addr = dynprobe_call_kallsyms_lookup_name(func);
		if (!addr)
			return -ENOENT;
	}
	mutex_lock(&check_lock);
	if (glob)
		ret = ftrace_set_filter(&check_ops, glob, strlen(glob), 1);
	else
		ret = ftrace_set_filter_ip(&check_ops, addr, 0, 1);
	ftrace_free_filter(&check_ops);
	mutex_unlock(&check_lock);
	kfree(glob);
	return ret ? -ENOENT : 0;
}

bool dynprobe_function_traceable(const char *func)
{
	return !fprobe_target_check(func);
}

/*
 * Tracepoint probes. A tracepoint calls each registered probe with the
 * probe's data pointer followed by the tracepoint's arguments. Its
 * probestub is an empty traceable function of exactly that prototype:
 * registered on the tracepoint with the dynprobe probe as its data, it
 * hands the fprobe placed on it the tracepoint's arguments in registers,
 * shifted by one (the parser accounts for the hidden first argument).
 *
 * A t probe may name a tracepoint of a module that is not loaded: it is
 * hooked when the module comes and unhooked when it goes, as the kernel's
 * tracepoint probes are. tprobe_lock guards the list of modules with
 * tracepoints (kept from the tracepoint module notifier, since the kernel
 * does not export its own list) and every t probe's armed/registered
 * state. It nests inside event_mutex (enable, disable) and inside the
 * tracepoint core's module list mutex (the notifier).
 */
struct tracepoint_module {
	struct list_head list;
	struct module *mod;
};

static LIST_HEAD(tracepoint_modules);
static LIST_HEAD(tracepoint_probes);
static DEFINE_MUTEX(tprobe_lock);

static struct tracepoint *find_in_module(struct module *mod, const char *name)
{
	unsigned int i;

	for (i = 0; i < mod->num_tracepoints; i++) {
		struct tracepoint *tp =
			tracepoint_ptr_deref(&mod->tracepoints_ptrs[i]);

		if (!strcmp(tp->name, name))
			return tp;
	}
	return NULL;
}

struct tracepoint_lookup {
	const char *name;
	struct tracepoint *tpoint;
};

static void tracepoint_match(struct tracepoint *tp, void *priv)
{
	struct tracepoint_lookup *lookup = priv;

	if (!lookup->tpoint && !strcmp(tp->name, lookup->name))
		lookup->tpoint = tp;
}

/* Called with tprobe_lock held. */
static struct tracepoint *find_tracepoint(const char *name)
{
	struct tracepoint_lookup lookup = { .name = name };
	struct tracepoint_module *tm;

	for_each_kernel_tracepoint(tracepoint_match, &lookup);
	if (lookup.tpoint)
		return lookup.tpoint;
	list_for_each_entry(tm, &tracepoint_modules, list) {
		lookup.tpoint = find_in_module(tm->mod, name);
		if (lookup.tpoint)
			return lookup.tpoint;
	}
	return NULL;
}

bool dynprobe_tracepoint_exists(const char *name)
{
	struct tracepoint *tp;

	mutex_lock(&tprobe_lock);
	tp = find_tracepoint(name);
	mutex_unlock(&tprobe_lock);
	return tp && tp->probestub;
}

/* Called with tprobe_lock held. */
static int hook_tracepoint(struct dynprobe_probe *probe, struct tracepoint *tp)
{
	unsigned long stub = (unsigned long)tp->probestub;
	int ret;

	if (!stub)
		return -ENOENT;
	ret = register_fprobe_ips(&probe->fp, &stub, 1);
	if (ret)
		return ret;
	ret = tracepoint_probe_register(tp, tp->probestub, probe);
	if (ret) {
		unregister_fprobe(&probe->fp);
		return ret;
	}
	probe->tpoint = tp;
	probe->registered = true;
	return 0;
}

/*
 * Called with tprobe_lock held. Stub calls already under way are not
 * hooked once the fprobe goes.
 */
static void unhook_tracepoint(struct dynprobe_probe *probe)
{
	if (!probe->registered)
		return;
	tracepoint_probe_unregister(probe->tpoint, probe->tpoint->probestub,
				    probe);
	unregister_fprobe(&probe->fp);
	probe->tpoint = NULL;
	probe->registered = false;
}

/* A tracepoint that is not there yet is hooked when its module comes. */
static int arm_tracepoint(struct dynprobe_probe *probe)
{
	struct tracepoint *tp;
	int ret = 0;

	mutex_lock(&tprobe_lock);
	probe->armed = true;
	tp = find_tracepoint(probe->func);
	if (tp)
		ret = hook_tracepoint(probe, tp);
	if (ret)
		probe->armed = false;
	mutex_unlock(&tprobe_lock);
	return ret;
}

static void disarm_tracepoint(struct dynprobe_probe *probe)
{
	mutex_lock(&tprobe_lock);
	unhook_tracepoint(probe);
	probe->armed = false;
	mutex_unlock(&tprobe_lock);
}

static void tracepoint_module_coming(struct module *mod)
{
	struct tracepoint_module *tm;
	struct dynprobe_probe *probe;

	tm = kmalloc(sizeof(*tm), GFP_KERNEL);
	if (!tm) {
		pr_warn("no memory to track tracepoints of module %s\n",
			mod->name);
		return;
	}
	tm->mod = mod;
	list_add_tail(&tm->list, &tracepoint_modules);
	list_for_each_entry(probe, &tracepoint_probes, module_list) {
		struct tracepoint *tp;

		if (!probe->armed || probe->registered)
			continue;
		tp = find_in_module(mod, probe->func);
		if (tp && hook_tracepoint(probe, tp))
			pr_warn("cannot probe tracepoint %s in module %s\n",
				probe->func, mod->name);
	}
}

static void tracepoint_module_going(struct module *mod)
{
	struct tracepoint_module *tm, *next;
	struct dynprobe_probe *probe;

	/* The tracepoint core checks that nothing stays registered. */
	list_for_each_entry(probe, &tracepoint_probes, module_list) {
		if (probe->registered &&
		    within_module((unsigned long)probe->tpoint, mod))
			unhook_tracepoint(probe);
	}
	list_for_each_entry_safe(tm, next, &tracepoint_modules, list) {
		if (tm->mod == mod) {
			list_del(&tm->list);
			kfree(tm);
		}
	}
}

static int tracepoint_module_event(struct notifier_block *nb,
				   unsigned long state, void *data)
{
	struct tp_module *tp_mod = data;

	mutex_lock(&tprobe_lock);
	if (state == MODULE_STATE_COMING)
		tracepoint_module_coming(tp_mod->mod);
	else if (state == MODULE_STATE_GOING)
		tracepoint_module_going(tp_mod->mod);
	mutex_unlock(&tprobe_lock);
	return NOTIFY_DONE;
}

static struct notifier_block tracepoint_module_nb = {
	.notifier_call = tracepoint_module_event,
};

int dynprobe_probes_init(void)
{
	/* Also reports every module with tracepoints already loaded. */
	return register_tracepoint_module_notifier(&tracepoint_module_nb);
}

void dynprobe_probes_exit(void)
{
	/* Reports every module as going, which empties the module list. */
	unregister_tracepoint_module_notifier(&tracepoint_module_nb);
}

/*
 * kprobes are registered (disabled) here, which checks the place at once;
 * fprobes are registered only while enabled, since a registered fprobe
 * hooks its function.
 */
static int probe_setup(struct dynprobe_probe *probe,
		       const struct dynprobe_place *place)
{
	probe->kind = place->kind;
	/* kprobes and kretprobes are src/hooks/kprobe.rs's. */
	if (!dynprobe_is_fprobe(probe->kind) || !place->symbol)
		return -EINVAL;
	probe->func = kstrdup(place->symbol, GFP_KERNEL);
	if (!probe->func)
		return -ENOMEM;
	probe->fentry = dynprobe_fentry_suits(probe);
	probe->fp.entry_handler = fprobe_entry;
	if (probe->kind == DYNPROBE_TRACEPOINT) {
		mutex_lock(&tprobe_lock);
		list_add_tail(&probe->module_list, &tracepoint_probes);
		mutex_unlock(&tprobe_lock);
	}
	if (probe->kind == DYNPROBE_FPROBE_EXIT ||
	    probe->kind == DYNPROBE_FUNCTION_EXIT) {
		probe->fp.exit_handler = fprobe_exit;
		probe->fp.entry_data_size = place->entry_data_size;
	}
	/* The parser has checked that ftrace can hook the target. */
	return 0;
}

struct dynprobe_probe *dynprobe_probe_create(const struct dynprobe_place *place,
					     struct dynprobe_feed *feed,
					     int *err)
{
	struct dynprobe_probe *probe;
	int ret;

	probe = kzalloc(sizeof(*probe), GFP_KERNEL);
	if (!probe) {
		*err = -ENOMEM;
		return NULL;
	}
	INIT_LIST_HEAD(&probe->module_list);
	probe->feed = feed;
	ret = probe_setup(probe, place);
	if (ret) {
		dynprobe_probe_teardown(probe);
		*err = ret;
		return NULL;
	}
	return probe;
}

int dynprobe_probe_arm(struct dynprobe_probe *probe)
{
	int ret;

	if (probe->kind == DYNPROBE_TRACEPOINT) {
		ret = arm_tracepoint(probe);
		if (ret)
			pr_warn("cannot probe tracepoint %s: %d\n", probe->func, ret);
		return ret;
	}
	if (probe->fentry) {
		ret = dynprobe_fentry_arm(probe);
		if (ret)
			pr_warn("cannot hook %s: %d\n", probe->func, ret);
		return ret;
	}
	/* By name is a lookup; a glob scans every symbol. */
	if (strpbrk(probe->func, "*?["))
		ret = register_fprobe(&probe->fp, probe->func, NULL);
	else
		ret = register_fprobe_syms(&probe->fp,
					   (const char **)&probe->func, 1);
	if (ret)
		pr_warn("cannot register fprobe on %s: %d\n", probe->func, ret);
	else
		probe->registered = true;
	return ret;
}

void dynprobe_probe_disarm(struct dynprobe_probe *probe)
{
	if (probe->kind == DYNPROBE_TRACEPOINT) {
		disarm_tracepoint(probe);
		return;
	}
	if (probe->fentry)
		dynprobe_fentry_disarm(probe);
	else if (probe->registered)
		unregister_fprobe(&probe->fp);
	probe->registered = false;
}

/* Returns once no handler of the probe runs any more, and frees it. */
void dynprobe_probe_teardown(struct dynprobe_probe *probe)
{
	if (probe->kind == DYNPROBE_TRACEPOINT) {
		mutex_lock(&tprobe_lock);
		unhook_tracepoint(probe);
		if (!list_empty(&probe->module_list))
			list_del(&probe->module_list);
		mutex_unlock(&tprobe_lock);
	} else if (probe->fentry) {
		dynprobe_fentry_disarm(probe);
		/* Its callbacks run with preemption disabled. */
		synchronize_rcu();
	} else if (probe->registered) {
		unregister_fprobe(&probe->fp);
	}
	kfree(probe->func);
	kfree(probe);
}

u64 dynprobe_probe_misses(struct dynprobe_probe *probe)
{
	/* The shared hook's recursion misses are nobody's in particular. */
	if (probe->fentry)
		return 0;
	return probe->fp.nmissed;
}
