// SPDX-License-Identifier: GPL-2.0
/*
 * The kernel's synthetic event API, as src/event/synth.rs calls it. Every
 * function used here is exported (kernel/trace/trace_events_synth.c,
 * kernel/trace/trace_events.c).
 */

#include <linux/err.h>
#include <linux/mutex.h>
#include <linux/rcupdate.h>
#include <linux/stddef.h>
#include <linux/string.h>
#include <linux/trace_events.h>
#include "dynprobe/synth.h"
#include "dynprobe/resolved.h"

static_assert(sizeof(struct dynprobe_synth_field) ==
	      sizeof(struct synth_field_desc));
static_assert(offsetof(struct dynprobe_synth_field, type) ==
	      offsetof(struct synth_field_desc, type));
static_assert(offsetof(struct dynprobe_synth_field, name) ==
	      offsetof(struct synth_field_desc, name));

int dynprobe_synth_create(const char *name,
			  struct dynprobe_synth_field *fields,
			  unsigned int n_fields)
{
	/*
	 * No owner module. A synthetic event runs only the kernel's code
	 * (its fields, print and probe are trace_events_synth.c's), so it
	 * needs nothing of dynprobe's once made. An owner would be pinned
	 * while the event is enabled, but not while a hist trigger's action
	 * refers to it: such an event cannot be deleted at unload, and its
	 * owner pointer would then point into the freed module the next time
	 * it is enabled (synth_event_reg() calls try_module_get() on it).
	 * Owned events are also deleted with a reset of every trace buffer.
	 */
	return synth_event_create(name, (struct synth_field_desc *)fields,
				  n_fields, NULL);
}

int dynprobe_synth_delete(const char *name)
{
	return synth_event_delete(name);
}

/*
 * The top instance's file of the event @name of the synthetic system,
 * held; -ENOENT when there is no such event (trace_get_event_file()
 * says -EINVAL).
 */
static struct trace_event_file *synth_file(const char *name)
{
	struct trace_event_file *file;

	file = trace_get_event_file(NULL, "synthetic", name);
	if (PTR_ERR_OR_ZERO(file) == -EINVAL)
		return ERR_PTR(-ENOENT);
	return file;
}

int dynprobe_synth_print_fmt(const char *name, char *buf, size_t len)
{
	struct trace_event_file *file;
	const char *fmt;
	int ret;

	file = synth_file(name);
	if (IS_ERR(file))
		return PTR_ERR(file);
	fmt = file->event_call->print_fmt ?: "";
	ret = strlen(fmt);
	if (len)
		strscpy(buf, fmt, len);
	trace_put_event_file(file);
	return ret;
}

int dynprobe_synth_fields(const char *name)
{
	struct trace_event_file *file;
	struct list_head *pos;
	int n = 0;

	file = synth_file(name);
	if (IS_ERR(file))
		return PTR_ERR(file);
	/* The event is held: its class and its fields stay. */
	list_for_each(pos, trace_get_fields(file->event_call))
		n++;
	trace_put_event_file(file);
	return n;
}

int dynprobe_synth_print_fmt_is(const char *name, const char *fmt, size_t len)
{
	struct trace_event_file *file;
	const char *now;
	int ret;

	file = synth_file(name);
	if (IS_ERR(file))
		return PTR_ERR(file);
	now = file->event_call->print_fmt ?: "";
	ret = strlen(now) == len && !memcmp(now, fmt, len);
	trace_put_event_file(file);
	return ret;
}

/*
 * The head of the kernel's struct synth_event (kernel/trace/trace_synth.h,
 * which no headers package carries; the same from 5.6 to 7.3): its
 * struct dyn_event, the count of hist trigger actions that trace it
 * (onmatch().trace(), .NAME(), onmax() ...), its name. The event's call
 * points back to it (call->data, register_synth_event()).
 */
struct dynprobe_synth_event_head {
	struct list_head list;		/* struct dyn_event */
	void *ops;
	int ref;
	char *name;
};

/*
 * What synth_event_delete() would refuse, checked before a clear deletes
 * any event, so that a refused clear deletes none (deleting one and
 * making it again would lose its filters, triggers and id): a hist
 * action tracing it (se->ref, destroy_synth_event()), a reference on the
 * event (trace_event_dyn_busy(): event probes, perf, trace_get_event_file
 * users; the one taken here excepted), and the tracepoint in use
 * (enabled in any instance, or by perf: trace_remove_event_call()
 * refuses). Read under event_mutex, under which each of them changes.
 */
int dynprobe_synth_busy(const char *name)
{
	struct dynprobe_synth_event_head *se;
	struct trace_event_file *file;
	struct trace_event_call *call;
	char se_name[128];
	size_t len = strlen(name) + 1;
	char *name_ptr;
	int ret;

	file = synth_file(name);
	if (IS_ERR(file))
		return PTR_ERR(file);
	call = file->event_call;
	se = call->data;
	mutex_lock(dynprobe_ksyms.event_mutex);
	/*
	 * The head is checked before it is believed: it lies before the call
	 * inside one allocation, and its name pointer, read without
	 * faulting, names this event.
	 */
	ret = -EOPNOTSUPP;
	if (!se || (void *)se >= (void *)call ||
	    (void *)call - (void *)se > 4096 ||
	    len > sizeof(se_name) ||
	    copy_from_kernel_nofault(&name_ptr, &se->name, sizeof(name_ptr)) ||
	    copy_from_kernel_nofault(se_name, name_ptr, len) ||
	    memcmp(se_name, name, len) ||
	    !(call->flags & TRACE_EVENT_FL_TRACEPOINT) || !call->tp)
		goto out;
	ret = READ_ONCE(se->ref) != 0 ||
	      atomic_read(&call->refcnt) > 1 ||
#ifdef CONFIG_PERF_EVENTS
	      call->perf_refcount != 0 ||
#endif
	      rcu_access_pointer(call->tp->funcs) != NULL;
out:
	mutex_unlock(dynprobe_ksyms.event_mutex);
	trace_put_event_file(file);
	return ret;
}
