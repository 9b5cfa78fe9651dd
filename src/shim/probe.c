// SPDX-License-Identifier: GPL-2.0
/*
 * The probes behind dynprobe events: kprobes, kretprobes and fprobes,
 * their handlers, and arming them when their event is enabled.
 *
 * fprobes (f events and function events) all share the kernel's one
 * fprobe hook, which finds the probes of a function by its address, so a
 * hit costs the same however many functions are probed.
 */
#include <linux/ftrace.h>
#include <linux/module.h>
#include <linux/slab.h>
#include "internal.h"

static int kprobe_hit(struct kprobe *kp, struct pt_regs *regs)
{
	struct dynprobe_probe *probe =
		container_of(kp, struct dynprobe_probe, rp.kp);

	dynprobe_dispatch(probe, regs, NULL, (unsigned long)kp->addr, 0);
	return 0;
}
NOKPROBE_SYMBOL(kprobe_hit);

static int kretprobe_entry(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct kretprobe *rp = get_kretprobe(ri);
	struct dynprobe_probe *probe;

	if (unlikely(!rp))
		return -ENOENT;
	probe = container_of(rp, struct dynprobe_probe, rp);
	dynprobe_rs_store_entry(probe->def, regs, (unsigned long *)ri->data);
	return 0;
}
NOKPROBE_SYMBOL(kretprobe_entry);

static int kretprobe_hit(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct kretprobe *rp = get_kretprobe(ri);
	struct dynprobe_probe *probe;

	if (unlikely(!rp))
		return 0;
	probe = container_of(rp, struct dynprobe_probe, rp);
	dynprobe_dispatch(probe, regs,
			  rp->data_size ? (unsigned long *)ri->data : NULL,
			  (unsigned long)rp->kp.addr, get_kretprobe_retaddr(ri));
	return 0;
}
NOKPROBE_SYMBOL(kretprobe_hit);

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
		dynprobe_dispatch(probe, regs, NULL, entry_ip, 0);
		break;
	case DYNPROBE_FUNCTION_ENTRY:
		dynprobe_dispatch(probe, regs, NULL, ret_ip, entry_ip);
		break;
	default:
		/* Exit events: keep what the exit needs of the entry. */
		if (fp->entry_data_size)
			dynprobe_rs_store_entry(probe->def, regs, entry_data);
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

	if (probe->kind == DYNPROBE_FPROBE_EXIT)
		dynprobe_dispatch(probe, regs, data, entry_ip, ret_ip);
	else
		dynprobe_dispatch(probe, regs, data, ret_ip, entry_ip);
}
NOKPROBE_SYMBOL(fprobe_exit);

/*
 * Whether ftrace can hook @func (it is in available_filter_functions).
 * The kernel's own check, fprobe_count_ips_from_filter(), is not
 * exported; matching the name into the filter of an ftrace_ops that is
 * never registered asks ftrace the same question without hooking anything.
 */
static int fprobe_target_check(const char *func)
{
	static struct ftrace_ops check_ops;
	static DEFINE_MUTEX(check_lock);
	int ret;

	mutex_lock(&check_lock);
	/* ftrace_set_filter() does not modify the name it is given. */
	ret = ftrace_set_filter(&check_ops, (unsigned char *)func, strlen(func), 1);
	ftrace_free_filter(&check_ops);
	mutex_unlock(&check_lock);
	return ret ? -ENOENT : 0;
}

bool dynprobe_function_traceable(const char *func)
{
	return !fprobe_target_check(func);
}

/*
 * kprobes are registered (disabled) here, which checks the place at once;
 * fprobes are registered only while enabled, since a registered fprobe
 * hooks its function.
 */
int dynprobe_probe_setup(struct dynprobe_probe *probe,
			 const struct dynprobe_place *place)
{
	struct kprobe *kp = &probe->rp.kp;
	int ret;

	probe->kind = place->kind;
	probe->nhit = alloc_percpu(unsigned long);
	if (!probe->nhit)
		return -ENOMEM;

	if (dynprobe_is_fprobe(probe->kind)) {
		if (!place->symbol)
			return -EINVAL;
		probe->func = kstrdup(place->symbol, GFP_KERNEL);
		if (!probe->func)
			return -ENOMEM;
		probe->fp.entry_handler = fprobe_entry;
		if (probe->kind == DYNPROBE_FPROBE_EXIT ||
		    probe->kind == DYNPROBE_FUNCTION_EXIT) {
			probe->fp.exit_handler = fprobe_exit;
			probe->fp.entry_data_size = place->entry_data_size;
		}
		return fprobe_target_check(probe->func);
	}

	if (place->symbol) {
		kp->symbol_name = kstrdup(place->symbol, GFP_KERNEL);
		if (!kp->symbol_name)
			return -ENOMEM;
		kp->offset = place->offset;
	} else {
		kp->addr = (kprobe_opcode_t *)place->addr;
	}
	kp->flags = KPROBE_FLAG_DISABLED;
	if (probe->kind == DYNPROBE_KRETPROBE) {
		probe->rp.handler = kretprobe_hit;
		if (place->entry_data_size)
			probe->rp.entry_handler = kretprobe_entry;
		probe->rp.data_size = place->entry_data_size;
		probe->rp.maxactive = place->maxactive;
		ret = register_kretprobe(&probe->rp);
	} else {
		kp->pre_handler = kprobe_hit;
		ret = register_kprobe(kp);
	}
	if (!ret)
		probe->registered = true;
	return ret;
}

int dynprobe_probe_arm(struct dynprobe_probe *probe)
{
	int ret;

	switch (probe->kind) {
	case DYNPROBE_KPROBE:
		return enable_kprobe(&probe->rp.kp);
	case DYNPROBE_KRETPROBE:
		return enable_kretprobe(&probe->rp);
	default:
		ret = register_fprobe(&probe->fp, probe->func, NULL);
		if (!ret)
			probe->registered = true;
		return ret;
	}
}

void dynprobe_probe_disarm(struct dynprobe_probe *probe)
{
	switch (probe->kind) {
	case DYNPROBE_KPROBE:
		disable_kprobe(&probe->rp.kp);
		break;
	case DYNPROBE_KRETPROBE:
		disable_kretprobe(&probe->rp);
		break;
	default:
		if (probe->registered)
			unregister_fprobe(&probe->fp);
		probe->registered = false;
		break;
	}
}

/* Returns once no handler of the probe runs any more, and frees it. */
void dynprobe_probe_teardown(struct dynprobe_probe *probe)
{
	if (probe->registered) {
		if (dynprobe_is_fprobe(probe->kind))
			unregister_fprobe(&probe->fp);
		else if (probe->kind == DYNPROBE_KRETPROBE)
			unregister_kretprobe(&probe->rp);
		else
			unregister_kprobe(&probe->rp.kp);
	}
	kfree(probe->rp.kp.symbol_name);
	kfree(probe->func);
	free_percpu(probe->nhit);
	kfree(probe);
}

u64 dynprobe_probe_misses(struct dynprobe_probe *probe)
{
	if (dynprobe_is_fprobe(probe->kind))
		return probe->fp.nmissed;
	if (probe->kind == DYNPROBE_KRETPROBE)
		return probe->rp.kp.nmissed + probe->rp.nmissed;
	return probe->rp.kp.nmissed;
}
