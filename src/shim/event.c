// SPDX-License-Identifier: GPL-2.0
/*
 * Trace events for dynprobe definitions.
 *
 * Each event is a dynamic trace_event_call, so events/GRP/EVENT has
 * enable, filter, format, trigger, hist and id like any event. The Rust
 * core supplies the field list, the print fmt, the record (written by its
 * fetch interpreter) and the text of `cat trace`; this file does the
 * kernel plumbing around them. The probes feeding an event are in probe.c.
 */
#include <linux/module.h>
#include <linux/perf_event.h>
#include <linux/rculist.h>
#include <linux/slab.h>
#include <linux/trace_seq.h>
#include "dynprobe/resolved.h"
#include "internal.h"

/* An event file (a trace instance) this event is enabled in. */
struct file_link {
	struct trace_event_file *file;
	struct list_head list;
	struct rcu_head rcu;
};

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

/*
 * A record of one size enabled in one trace instance only (the common
 * case): the programs write it straight into the reserved ring-buffer
 * entry, as the kernel's probe events do, without a copy.
 */
static bool trace_record_direct(struct dynprobe_probe *probe,
				struct pt_regs *regs,
				const unsigned long *entry_data,
				unsigned long ip1, unsigned long ip2)
{
	struct dynprobe_event *ev = probe->event;
	struct trace_event_buffer fbuffer;
	struct trace_entry *entry;
	struct file_link *link;

	link = list_first_or_null_rcu(&ev->files, struct file_link, list);
	if (!link || !list_is_singular(&ev->files))
		return false;
	if (trace_trigger_soft_disabled(link->file))
		return true;
	entry = trace_event_buffer_reserve(&fbuffer, link->file,
					   probe->fixed_size);
	if (!entry)
		return true;
	fbuffer.regs = regs;
	dynprobe_rs_record(probe->def, regs, entry_data, (u8 *)entry,
			   probe->fixed_size, ip1, ip2);
	trace_event_buffer_commit(&fbuffer);
	return true;
}
NOKPROBE_SYMBOL(trace_record_direct);

/* The common path of every hit: fetch once, then write where enabled. */
void dynprobe_dispatch(struct dynprobe_probe *probe, struct pt_regs *regs,
		       const unsigned long *entry_data, unsigned long ip1,
		       unsigned long ip2)
{
	struct dynprobe_event *ev = probe->event;
	unsigned int flags = READ_ONCE(ev->flags);
	size_t len;
	u8 *rec;

	raw_cpu_inc(*probe->nhit);
	if (!flags)
		return;
	if (flags == EVENT_TRACE && probe->fixed_size &&
	    trace_record_direct(probe, regs, entry_data, ip1, ip2))
		return;
	rec = scratch_get();
	if (!rec)
		return;
	len = dynprobe_rs_record(probe->def, regs, entry_data, rec,
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
NOKPROBE_SYMBOL(dynprobe_dispatch);

static int arm_all(struct dynprobe_event *ev)
{
	struct dynprobe_probe *probe;
	int ret;

	list_for_each_entry(probe, &ev->probes, list) {
		ret = dynprobe_probe_arm(probe);
		if (ret) {
			list_for_each_entry_continue_reverse(probe, &ev->probes, list)
				dynprobe_probe_disarm(probe);
			return ret;
		}
	}
	return 0;
}

static void disarm_all(struct dynprobe_event *ev)
{
	struct dynprobe_probe *probe;

	list_for_each_entry(probe, &ev->probes, list)
		dynprobe_probe_disarm(probe);
}

/*
 * Enabling takes a module reference, so that rmmod is refused while an
 * event is enabled for tracing or perf. Called with event_mutex held.
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
	ret = arm_all(ev);
	if (ret) {
		if (link) {
			list_del_rcu(&link->list);
			if (list_empty(&ev->files))
				WRITE_ONCE(ev->flags, ev->flags & ~EVENT_TRACE);
			kfree_rcu(link, rcu);
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
		/*
		 * Handlers may still walk the list: free after a grace period.
		 * kfree_rcu() calls no code of this module, so no
		 * rcu_barrier() is needed before the module goes.
		 */
		kfree_rcu(found, rcu);
	} else {
		WRITE_ONCE(ev->flags, ev->flags & ~EVENT_PERF);
	}
	if (!ev->flags)
		disarm_all(ev);
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
	return dynprobe_rs_define_fields(event_of(call)->shape, call);
}

static enum print_line_t event_print(struct trace_iterator *iter, int flags,
				     struct trace_event *event)
{
	struct trace_event_call *call =
		container_of(event, struct trace_event_call, event);

	dynprobe_rs_print(event_of(call)->shape, &iter->seq, (u8 *)iter->ent,
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
	kfree(ev);
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

static struct dynprobe_probe *new_probe(struct dynprobe_event *ev,
					const struct dynprobe_place *place,
					const void *def, int *err)
{
	struct dynprobe_probe *probe;
	int ret;

	probe = kzalloc(sizeof(*probe), GFP_KERNEL);
	if (!probe) {
		*err = -ENOMEM;
		return NULL;
	}
	INIT_LIST_HEAD(&probe->list);
	INIT_LIST_HEAD(&probe->module_list);
	probe->event = ev;
	probe->def = def;
	probe->fixed_size = place->fixed_record_size;
	ret = dynprobe_probe_setup(probe, place);
	if (ret) {
		dynprobe_probe_teardown(probe);
		*err = ret;
		return NULL;
	}
	return probe;
}

struct dynprobe_event *dynprobe_event_create(const char *group,
					     const char *name,
					     const char *print_fmt,
					     const struct dynprobe_place *place,
					     const void *shape, const void *def,
					     struct dynprobe_probe **first,
					     int *err)
{
	struct dynprobe_probe *probe;
	struct dynprobe_event *ev;
	int ret = -ENOMEM;

	ev = kzalloc(sizeof(*ev), GFP_KERNEL);
	if (!ev)
		goto fail;
	INIT_LIST_HEAD(&ev->files);
	INIT_LIST_HEAD(&ev->probes);
	INIT_LIST_HEAD(&ev->class.fields);
	ev->shape = shape;
	ev->call.name = kstrdup(name, GFP_KERNEL);
	ev->class.system = kstrdup(group, GFP_KERNEL);
	ev->call.print_fmt = kstrdup(print_fmt, GFP_KERNEL);
	if (!ev->call.name || !ev->class.system || !ev->call.print_fmt)
		goto fail_free;

	ev->fields[0].type = TRACE_FUNCTION_TYPE;
	ev->fields[0].define_fields = event_define_fields;
	ev->class.fields_array = ev->fields;
	ev->class.reg = event_reg;
	ev->funcs.trace = event_print;
	ev->call.class = &ev->class;
	ev->call.event.funcs = &ev->funcs;
	ev->call.flags = TRACE_EVENT_FL_DYNAMIC |
		(dynprobe_is_fprobe(place->kind) ? TRACE_EVENT_FL_FPROBE :
						   TRACE_EVENT_FL_KPROBE);

	/* Checked before taking event_mutex, which the lookup takes itself. */
	if (event_exists(group, name)) {
		ret = -EEXIST;
		goto fail_free;
	}
	probe = new_probe(ev, place, def, &ret);
	if (!probe)
		goto fail_free;
	list_add_tail(&probe->list, &ev->probes);

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
		goto fail_probe;
	*first = probe;
	return ev;

fail_probe:
	dynprobe_probe_teardown(probe);
fail_free:
	free_event(ev);
fail:
	*err = ret;
	return NULL;
}

struct dynprobe_probe *dynprobe_probe_add(struct dynprobe_event *ev,
					  const struct dynprobe_place *place,
					  const void *def, int *err)
{
	struct dynprobe_probe *probe = new_probe(ev, place, def, err);
	int ret = 0;

	if (!probe)
		return NULL;
	mutex_lock(dynprobe_ksyms.event_mutex);
	if (ev->flags)
		ret = dynprobe_probe_arm(probe);
	if (!ret)
		list_add_tail(&probe->list, &ev->probes);
	mutex_unlock(dynprobe_ksyms.event_mutex);
	if (ret) {
		dynprobe_probe_teardown(probe);
		*err = ret;
		return NULL;
	}
	return probe;
}

int dynprobe_probe_remove(struct dynprobe_event *ev,
			  struct dynprobe_probe *probe)
{
	int ret = 0;

	mutex_lock(dynprobe_ksyms.event_mutex);
	if (dynprobe_event_busy(ev))
		ret = -EBUSY;
	else if (list_is_singular(&ev->probes))
		ret = -EINVAL;	/* the last probe goes with its event */
	else
		list_del(&probe->list);
	mutex_unlock(dynprobe_ksyms.event_mutex);
	if (!ret)
		dynprobe_probe_teardown(probe);
	return ret;
}

void dynprobe_events_lock(void)
{
	mutex_lock(dynprobe_ksyms.event_mutex);
}

void dynprobe_events_unlock(void)
{
	/*
	 * Records of removed events cannot be printed any more. The tracing
	 * core marked the buffers that held them; only those are emptied,
	 * so after a batch that removed nothing this changes nothing (the
	 * kernel's dyn_events_release_all calls it the same way).
	 */
	if (dynprobe_ksyms.have.tracing_reset_all_online_cpus)
		dynprobe_call_tracing_reset_all_online_cpus();
	mutex_unlock(dynprobe_ksyms.event_mutex);
}

int dynprobe_event_unlink(struct dynprobe_event *ev)
{
	lockdep_assert_held(dynprobe_ksyms.event_mutex);
	/*
	 * trace_remove_event_call() only refuses enabled events; hist
	 * triggers and perf hold the dynamic reference count instead.
	 */
	if (dynprobe_event_busy(ev))
		return -EBUSY;
	return trace_remove_event_call(&ev->call);
}

void dynprobe_event_free(struct dynprobe_event *ev)
{
	struct dynprobe_probe *probe, *tmp;

	/* Each teardown returns once no handler of the probe runs. */
	list_for_each_entry_safe(probe, tmp, &ev->probes, list) {
		list_del(&probe->list);
		dynprobe_probe_teardown(probe);
	}
	free_event(ev);
}

bool dynprobe_event_busy(struct dynprobe_event *ev)
{
	/* trace_event_dyn_busy() is not exported; it reads the same count. */
	return READ_ONCE(ev->flags) || atomic_read(&ev->call.refcnt);
}

void dynprobe_probe_counts(struct dynprobe_probe *probe, u64 *hits,
			   u64 *misses)
{
	unsigned long sum = 0;
	int cpu;

	for_each_possible_cpu(cpu)
		sum += *per_cpu_ptr(probe->nhit, cpu);
	*hits = sum;
	*misses = dynprobe_probe_misses(probe);
}

int dynprobe_events_init(void)
{
	int ret;

	scratch = alloc_percpu(struct scratch);
	if (!scratch)
		return -ENOMEM;
	ret = dynprobe_probes_init();
	if (ret) {
		free_percpu(scratch);
		scratch = NULL;
	}
	return ret;
}

void dynprobe_events_exit(void)
{
	dynprobe_probes_exit();
	free_percpu(scratch);
	scratch = NULL;
}
