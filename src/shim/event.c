// SPDX-License-Identifier: GPL-2.0
/*
 * Trace events and the probes that feed them.
 *
 * Each dynprobe definition owns one struct dynprobe_event: a dynamic
 * trace_event_call (so events/GRP/EVENT has enable, filter, format,
 * trigger, hist and id like any event) and its kprobe, kretprobe or
 * fprobe. fprobes (f events and function events) all share the kernel's
 * one fprobe hook, which finds the probes of a function by its address,
 * so a hit costs the same however many functions are probed. The
 * Rust core supplies the field list, the print fmt, the record (written by
 * its fetch interpreter) and the text of `cat trace`; this file does the
 * kernel plumbing around them.
 */
#include <linux/fprobe.h>
#include <linux/ftrace.h>
#include <linux/kprobes.h>
#include <linux/module.h>
#include <linux/perf_event.h>
#include <linux/rculist.h>
#include <linux/slab.h>
#include <linux/trace_events.h>
#include <linux/trace_seq.h>
#include "dynprobe/resolved.h"
#include "dynprobe/shim.h"

/* An event file (a trace instance) this event is enabled in. */
struct file_link {
	struct trace_event_file *file;
	struct list_head list;
	struct rcu_head rcu;
};

#define EVENT_TRACE	1	/* enabled in at least one trace instance */
#define EVENT_PERF	2	/* enabled for perf */

struct dynprobe_event {
	struct trace_event_call call;
	struct trace_event_class class;
	struct trace_event_functions funcs;
	struct trace_event_fields fields[2];
	struct list_head files;
	unsigned int flags;
	enum dynprobe_probe_kind kind;
	const void *def;
	unsigned long __percpu *nhit;
	struct kretprobe rp;	/* rp.kp is the kprobe of entry probes */
	struct fprobe fp;
	char *func;		/* fprobe target */
	bool probe_registered;
};

static bool is_fprobe(const struct dynprobe_event *ev)
{
	return ev->kind >= DYNPROBE_FPROBE_ENTRY;
}

/*
 * Records are assembled in a per-CPU scratch buffer first, so that every
 * probed byte is read once; one level per context that can nest (task,
 * softirq, irq, NMI).
 */
#define SCRATCH_LEVELS 4
struct scratch {
	int level;
	u8 buf[SCRATCH_LEVELS][DYNPROBE_RECORD_MAX];
};
static struct scratch __percpu *scratch;

static u8 *scratch_get(void)
{
	struct scratch *s = this_cpu_ptr(scratch);

	if (s->level >= SCRATCH_LEVELS)
		return NULL;
	s->level++;
	barrier();
	return s->buf[s->level - 1];
}

static void scratch_put(void)
{
	barrier();
	this_cpu_ptr(scratch)->level--;
}

static struct dynprobe_event *event_of(struct trace_event_call *call)
{
	return container_of(call, struct dynprobe_event, call);
}

static void trace_record(struct dynprobe_event *ev, struct pt_regs *regs,
			 const u8 *rec, size_t len)
{
	struct file_link *link;

	list_for_each_entry_rcu(link, &ev->files, list) {
		struct trace_event_buffer fbuffer;
		struct trace_entry *entry;

		if (trace_trigger_soft_disabled(link->file))
			continue;
		entry = trace_event_buffer_reserve(&fbuffer, link->file, len);
		if (!entry)
			continue;
		fbuffer.regs = regs;
		memcpy((u8 *)entry + sizeof(*entry), rec + sizeof(*entry),
		       len - sizeof(*entry));
		trace_event_buffer_commit(&fbuffer);
	}
}

#ifdef CONFIG_PERF_EVENTS
static void perf_record(struct dynprobe_event *ev, struct pt_regs *regs,
			const u8 *rec, size_t len)
{
	struct hlist_head *head = this_cpu_ptr(ev->call.perf_events);
	struct trace_entry *entry;
	int size, rctx;

	if (hlist_empty(head))
		return;
	/* perf wants the record plus a u32 size header to be u64 aligned. */
	size = ALIGN(len + sizeof(u32), sizeof(u64)) - sizeof(u32);
	entry = perf_trace_buf_alloc(size, NULL, &rctx);
	if (!entry)
		return;
	memcpy((u8 *)entry + sizeof(*entry), rec + sizeof(*entry),
	       len - sizeof(*entry));
	memset((u8 *)entry + len, 0, size - len);
	perf_trace_buf_submit(entry, size, rctx, ev->call.event.type, 1, regs,
			      head, NULL);
}
#endif

/* The common path of every hit: fetch once, then write where enabled. */
static void dispatch(struct dynprobe_event *ev, struct pt_regs *regs,
		     const unsigned long *entry_data, unsigned long ip1,
		     unsigned long ip2)
{
	unsigned int flags = READ_ONCE(ev->flags);
	size_t len;
	u8 *rec;

	raw_cpu_inc(*ev->nhit);
	if (!flags)
		return;
	rec = scratch_get();
	if (!rec)
		return;
	len = dynprobe_rs_record(ev->def, regs, entry_data, rec,
				 DYNPROBE_RECORD_MAX, ip1, ip2);
	if (len >= sizeof(struct trace_entry)) {
		if (flags & EVENT_TRACE)
			trace_record(ev, regs, rec, len);
#ifdef CONFIG_PERF_EVENTS
		if (flags & EVENT_PERF)
			perf_record(ev, regs, rec, len);
#endif
	}
	scratch_put();
}

static int kprobe_hit(struct kprobe *kp, struct pt_regs *regs)
{
	struct dynprobe_event *ev = container_of(kp, struct dynprobe_event, rp.kp);

	dispatch(ev, regs, NULL, (unsigned long)kp->addr, 0);
	return 0;
}
NOKPROBE_SYMBOL(kprobe_hit);

static int kretprobe_entry(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct kretprobe *rp = get_kretprobe(ri);
	struct dynprobe_event *ev;

	if (unlikely(!rp))
		return -ENOENT;
	ev = container_of(rp, struct dynprobe_event, rp);
	if (rp->data_size)
		dynprobe_rs_store_entry(ev->def, regs, (unsigned long *)ri->data);
	return 0;
}
NOKPROBE_SYMBOL(kretprobe_entry);

static int kretprobe_hit(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct kretprobe *rp = get_kretprobe(ri);
	struct dynprobe_event *ev;

	if (unlikely(!rp))
		return 0;
	ev = container_of(rp, struct dynprobe_event, rp);
	dispatch(ev, regs, rp->data_size ? (unsigned long *)ri->data : NULL,
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
	struct dynprobe_event *ev = container_of(fp, struct dynprobe_event, fp);
	struct pt_regs *regs = ftrace_partial_regs(fregs, NULL);

	switch (ev->kind) {
	case DYNPROBE_FPROBE_ENTRY:
		dispatch(ev, regs, NULL, entry_ip, 0);
		break;
	case DYNPROBE_FUNCTION_ENTRY:
		dispatch(ev, regs, NULL, ret_ip, entry_ip);
		break;
	default:
		/* Exit events: keep what the exit needs of the entry. */
		if (fp->entry_data_size)
			dynprobe_rs_store_entry(ev->def, regs, entry_data);
		break;
	}
	return 0;
}
NOKPROBE_SYMBOL(fprobe_entry);

static void fprobe_exit(struct fprobe *fp, unsigned long entry_ip,
			unsigned long ret_ip, struct ftrace_regs *fregs,
			void *entry_data)
{
	struct dynprobe_event *ev = container_of(fp, struct dynprobe_event, fp);
	struct pt_regs *regs = ftrace_partial_regs(fregs, NULL);
	const unsigned long *data = fp->entry_data_size ? entry_data : NULL;

	if (ev->kind == DYNPROBE_FPROBE_EXIT)
		dispatch(ev, regs, data, entry_ip, ret_ip);
	else
		dispatch(ev, regs, data, ret_ip, entry_ip);
}
NOKPROBE_SYMBOL(fprobe_exit);

/*
 * kprobes stay registered (disabled) from creation; fprobes are registered
 * only while enabled, since a registered fprobe hooks its function.
 */
static int arm_probe(struct dynprobe_event *ev)
{
	int ret;

	switch (ev->kind) {
	case DYNPROBE_KPROBE:
		return enable_kprobe(&ev->rp.kp);
	case DYNPROBE_KRETPROBE:
		return enable_kretprobe(&ev->rp);
	default:
		ret = register_fprobe(&ev->fp, ev->func, NULL);
		if (!ret)
			ev->probe_registered = true;
		return ret;
	}
}

static void disarm_probe(struct dynprobe_event *ev)
{
	switch (ev->kind) {
	case DYNPROBE_KPROBE:
		disable_kprobe(&ev->rp.kp);
		break;
	case DYNPROBE_KRETPROBE:
		disable_kretprobe(&ev->rp);
		break;
	default:
		if (ev->probe_registered)
			unregister_fprobe(&ev->fp);
		ev->probe_registered = false;
		break;
	}
}

static void free_link(struct rcu_head *head)
{
	kfree(container_of(head, struct file_link, rcu));
}

/*
 * Enabling takes a module reference, so that rmmod is refused while an
 * event is enabled for tracing or perf.
 */
static int enable_event(struct dynprobe_event *ev, struct trace_event_file *file)
{
	bool was_enabled = ev->flags;
	struct file_link *link = NULL;
	int ret;

	if (!try_module_get(THIS_MODULE))
		return -ENODEV;
	if (file) {
		link = kmalloc(sizeof(*link), GFP_KERNEL);
		if (!link) {
			module_put(THIS_MODULE);
			return -ENOMEM;
		}
		link->file = file;
		list_add_tail_rcu(&link->list, &ev->files);
		WRITE_ONCE(ev->flags, ev->flags | EVENT_TRACE);
	} else {
		WRITE_ONCE(ev->flags, ev->flags | EVENT_PERF);
	}
	if (was_enabled)
		return 0;
	ret = arm_probe(ev);
	if (ret) {
		if (link) {
			list_del_rcu(&link->list);
			if (list_empty(&ev->files))
				WRITE_ONCE(ev->flags, ev->flags & ~EVENT_TRACE);
			call_rcu(&link->rcu, free_link);
		} else {
			WRITE_ONCE(ev->flags, ev->flags & ~EVENT_PERF);
		}
		module_put(THIS_MODULE);
	}
	return ret;
}

static int disable_event(struct dynprobe_event *ev, struct trace_event_file *file)
{
	if (file) {
		struct file_link *link, *found = NULL;

		list_for_each_entry(link, &ev->files, list) {
			if (link->file == file) {
				found = link;
				break;
			}
		}
		if (!found)
			return -ENOENT;
		list_del_rcu(&found->list);
		if (list_empty(&ev->files))
			WRITE_ONCE(ev->flags, ev->flags & ~EVENT_TRACE);
		/* Handlers may still walk the list: free after a grace period. */
		call_rcu(&found->rcu, free_link);
	} else {
		WRITE_ONCE(ev->flags, ev->flags & ~EVENT_PERF);
	}
	if (!ev->flags)
		disarm_probe(ev);
	module_put(THIS_MODULE);
	return 0;
}

static int event_reg(struct trace_event_call *call, enum trace_reg type,
		     void *data)
{
	struct dynprobe_event *ev = event_of(call);

	switch (type) {
	case TRACE_REG_REGISTER:
		return enable_event(ev, data);
	case TRACE_REG_UNREGISTER:
		return disable_event(ev, data);
#ifdef CONFIG_PERF_EVENTS
	case TRACE_REG_PERF_REGISTER:
		return enable_event(ev, NULL);
	case TRACE_REG_PERF_UNREGISTER:
		return disable_event(ev, NULL);
	case TRACE_REG_PERF_OPEN:
	case TRACE_REG_PERF_CLOSE:
	case TRACE_REG_PERF_ADD:
	case TRACE_REG_PERF_DEL:
		return 0;
#endif
	}
	return 0;
}

static int event_define_fields(struct trace_event_call *call)
{
	return dynprobe_rs_define_fields(event_of(call)->def, call);
}

static enum print_line_t event_print(struct trace_iterator *iter, int flags,
				     struct trace_event *event)
{
	struct trace_event_call *call =
		container_of(event, struct trace_event_call, event);

	dynprobe_rs_print(event_of(call)->def, &iter->seq, (u8 *)iter->ent,
			  iter->ent_size);
	return trace_handle_return(&iter->seq);
}

int dynprobe_define_field(struct trace_event_call *call, const char *type,
			  const char *name, int offset, int size,
			  bool is_signed)
{
	return trace_define_field(call, type, name, offset, size, is_signed,
				  FILTER_OTHER);
}

void dynprobe_seq_write(struct trace_seq *s, const u8 *data, size_t len)
{
	trace_seq_putmem(s, data, len);
}

static void free_event(struct dynprobe_event *ev)
{
	kfree(ev->call.print_fmt);
	kfree(ev->call.name);
	kfree(ev->class.system);
	kfree(ev->rp.kp.symbol_name);
	kfree(ev->func);
	free_percpu(ev->nhit);
	kfree(ev);
}

/*
 * Whether ftrace can hook @func (it is in available_filter_functions).
 * The kernel's own check, fprobe_count_ips_from_filter(), is not
 * exported; matching the name into the filter of an ftrace_ops that is
 * never registered asks ftrace the same question without hooking anything.
 */
static int fprobe_target_check(char *func)
{
	static struct ftrace_ops check_ops;
	static DEFINE_MUTEX(check_lock);
	int ret;

	mutex_lock(&check_lock);
	ret = ftrace_set_filter(&check_ops, func, strlen(func), 1);
	ftrace_free_filter(&check_ops);
	mutex_unlock(&check_lock);
	return ret ? -ENOENT : 0;
}

static int register_probe(struct dynprobe_event *ev,
			  const struct dynprobe_place *place)
{
	struct kprobe *kp = &ev->rp.kp;

	if (is_fprobe(ev)) {
		if (!place->symbol)
			return -EINVAL;
		ev->func = kstrdup(place->symbol, GFP_KERNEL);
		if (!ev->func)
			return -ENOMEM;
		ev->fp.entry_handler = fprobe_entry;
		if (ev->kind == DYNPROBE_FPROBE_EXIT ||
		    ev->kind == DYNPROBE_FUNCTION_EXIT) {
			ev->fp.exit_handler = fprobe_exit;
			ev->fp.entry_data_size = place->entry_data_size;
		}
		/* Registered when enabled; check the target exists now. */
		return fprobe_target_check(ev->func);
	}
	if (place->symbol) {
		kp->symbol_name = kstrdup(place->symbol, GFP_KERNEL);
		if (!kp->symbol_name)
			return -ENOMEM;
		kp->offset = place->offset;
	} else {
		kp->addr = (kprobe_opcode_t *)place->addr;
	}
	/* Registered disabled: enabling the event arms it. */
	kp->flags = KPROBE_FLAG_DISABLED;
	if (ev->kind == DYNPROBE_KRETPROBE) {
		ev->rp.handler = kretprobe_hit;
		ev->rp.entry_handler = place->entry_data_size ? kretprobe_entry : NULL;
		ev->rp.data_size = place->entry_data_size;
		ev->rp.maxactive = place->maxactive;
		return register_kretprobe(&ev->rp);
	}
	kp->pre_handler = kprobe_hit;
	return register_kprobe(kp);
}

static void unregister_probe(struct dynprobe_event *ev)
{
	if (!ev->probe_registered)
		return;
	if (is_fprobe(ev)) {
		unregister_fprobe(&ev->fp);
		ev->probe_registered = false;
		return;
	}
	if (ev->kind == DYNPROBE_KRETPROBE)
		unregister_kretprobe(&ev->rp);
	else
		unregister_kprobe(&ev->rp.kp);
	ev->probe_registered = false;
}

/* Whether an event of this name already exists anywhere in tracefs. */
static bool event_exists(const char *group, const char *name)
{
	struct trace_event_file *file = trace_get_event_file(NULL, group, name);

	if (IS_ERR(file))
		return false;
	trace_put_event_file(file);
	return true;
}

struct dynprobe_event *dynprobe_event_create(const char *group,
					     const char *name,
					     const char *print_fmt,
					     const struct dynprobe_place *place,
					     const void *def, int *err)
{
	struct dynprobe_event *ev;
	int ret = -ENOMEM;

	ev = kzalloc(sizeof(*ev), GFP_KERNEL);
	if (!ev)
		goto fail;
	INIT_LIST_HEAD(&ev->files);
	INIT_LIST_HEAD(&ev->class.fields);
	ev->kind = place->kind;
	ev->def = def;
	ev->nhit = alloc_percpu(unsigned long);
	ev->call.name = kstrdup(name, GFP_KERNEL);
	ev->class.system = kstrdup(group, GFP_KERNEL);
	ev->call.print_fmt = kstrdup(print_fmt, GFP_KERNEL);
	if (!ev->nhit || !ev->call.name || !ev->class.system ||
	    !ev->call.print_fmt)
		goto fail_free;

	ev->fields[0].type = TRACE_FUNCTION_TYPE;
	ev->fields[0].define_fields = event_define_fields;
	ev->class.fields_array = ev->fields;
	ev->class.reg = event_reg;
	ev->funcs.trace = event_print;
	ev->call.class = &ev->class;
	ev->call.event.funcs = &ev->funcs;
	ev->call.flags = TRACE_EVENT_FL_DYNAMIC |
		(is_fprobe(ev) ? TRACE_EVENT_FL_FPROBE : TRACE_EVENT_FL_KPROBE);

	ret = register_probe(ev, place);
	if (ret)
		goto fail_free;
	ev->probe_registered = !is_fprobe(ev);

	/* Checked before taking event_mutex, which the lookup takes itself. */
	if (event_exists(group, name)) {
		ret = -EEXIST;
		goto fail_unregister;
	}
	mutex_lock(dynprobe_ksyms.event_mutex);
	if (!register_trace_event(&ev->call.event)) {
		ret = -ENODEV;
	} else {
		ret = trace_add_event_call(&ev->call);
		if (ret)
			unregister_trace_event(&ev->call.event);
	}
	mutex_unlock(dynprobe_ksyms.event_mutex);
	if (ret)
		goto fail_unregister;
	return ev;

fail_unregister:
	unregister_probe(ev);
fail_free:
	free_event(ev);
fail:
	*err = ret;
	return NULL;
}

int dynprobe_event_destroy(struct dynprobe_event *ev)
{
	int ret;

	mutex_lock(dynprobe_ksyms.event_mutex);
	/*
	 * trace_remove_event_call() only refuses enabled events; open event
	 * files and hist triggers hold the dynamic reference count instead.
	 */
	if (dynprobe_event_busy(ev))
		ret = -EBUSY;
	else
		ret = trace_remove_event_call(&ev->call);
	mutex_unlock(dynprobe_ksyms.event_mutex);
	if (ret)
		return ret;
	/* Returns once no handler runs any more (it waits for RCU). */
	unregister_probe(ev);
	/* File links are freed through call_rcu: let them go first. */
	rcu_barrier();
	free_event(ev);
	return 0;
}

bool dynprobe_event_busy(struct dynprobe_event *ev)
{
	/* trace_event_dyn_busy() is not exported; it reads the same count. */
	return READ_ONCE(ev->flags) || atomic_read(&ev->call.refcnt);
}

void dynprobe_event_counts(struct dynprobe_event *ev, u64 *hits, u64 *misses)
{
	unsigned long sum = 0;
	int cpu;

	for_each_possible_cpu(cpu)
		sum += *per_cpu_ptr(ev->nhit, cpu);
	*hits = sum;
	if (is_fprobe(ev))
		*misses = ev->fp.nmissed;
	else
		*misses = ev->rp.kp.nmissed;
	if (ev->kind == DYNPROBE_KRETPROBE)
		*misses += ev->rp.nmissed;
}

int dynprobe_events_init(void)
{
	scratch = alloc_percpu(struct scratch);
	return scratch ? 0 : -ENOMEM;
}

void dynprobe_events_exit(void)
{
	free_percpu(scratch);
	scratch = NULL;
}
