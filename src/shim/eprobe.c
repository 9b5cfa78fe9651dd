// SPDX-License-Identifier: GPL-2.0
/*
 * Event probes' hook. The kernel's own event probe hooks its source event
 * with an event trigger, whose registration is not exported; what is, and
 * hands over every record of any trace event with its bytes, is perf: one
 * in-kernel counter per online CPU on the event's id (PERF_TYPE_TRACEPOINT,
 * raw samples, a period of one), whose overflow handler gets the record.
 * Perf registration is the tracing core's TRACE_REG_PERF_REGISTER, apart
 * from the trace instances': what the source event records there does not
 * change. The Rust side (src/hooks/eprobe.rs) owns the result.
 */
#include <linux/cpumask.h>
#include <linux/perf_event.h>
#include <linux/slab.h>
#include <linux/trace_events.h>
#include "internal.h"

/*
 * struct ftrace_event_field of kernel/trace/trace.h, which the tracing
 * core keeps private; as in Linux 7.2 (checked against its source).
 */
struct dynprobe_ftrace_event_field {
	struct list_head link;
	const char *name;
	const char *type;
	int filter_type;
	int offset;
	int size;
	unsigned int is_signed:1;
	unsigned int needs_test:1;
	int len;
};

struct dynprobe_eprobe {
	struct trace_event_file *source;	/* held: the source stays */
	struct perf_event **counters;		/* by CPU, NULL where none */
	const struct dynprobe_feed *feed;
	struct event_filter *filter;		/* NULL: every record */
};

/*
 * The source event with a reference (trace_get_event_file()), or an
 * ERR_PTR. ftrace's own events (ftrace/function and the like) are refused
 * as the kernel's event probes refuse them: perf on them is not a record
 * feed but a tracer.
 */
static struct trace_event_file *source_get(const char *system,
					   const char *event)
{
	struct trace_event_file *file = trace_get_event_file(NULL, system, event);

	if (IS_ERR(file))
		return file;
	if (file->event_call->flags & TRACE_EVENT_FL_IGNORE_ENABLE) {
		trace_put_event_file(file);
		return ERR_PTR(-ENODEV);
	}
	return file;
}

int dynprobe_event_source(const char *system, const char *event)
{
	struct trace_event_file *file = source_get(system, event);

	if (IS_ERR(file))
		return PTR_ERR(file);
	trace_put_event_file(file);
	return 0;
}

bool dynprobe_event_filters(void)
{
	return dynprobe_ksyms.have.create_event_filter &&
	       dynprobe_ksyms.have.free_event_filter;
}

/*
 * The filter of @filter_str for @call, made by the kernel's filter parser
 * as the kernel's event probes make theirs: under event_mutex, with the
 * error (if @log) in error_log under the top trace instance.
 */
static int filter_create(struct trace_event_call *call, char *filter_str,
			 bool log, struct event_filter **filter)
{
	int ret;

	if (!dynprobe_event_filters())
		return -EOPNOTSUPP;
	*filter = NULL;
	dynprobe_events_lock();
	ret = dynprobe_call_create_event_filter(NULL, call, filter_str, log,
						filter);
	dynprobe_events_unlock();
	if (ret) {
		dynprobe_call_free_event_filter(*filter);
		*filter = NULL;
		return -EINVAL;
	}
	return 0;
}

int dynprobe_event_filter_check(const char *system, const char *event,
				char *filter_str)
{
	struct trace_event_file *file;
	struct event_filter *filter;
	int ret;

	file = source_get(system, event);
	if (IS_ERR(file))
		return PTR_ERR(file);
	ret = filter_create(file->event_call, filter_str, true, &filter);
	if (!ret)
		dynprobe_call_free_event_filter(filter);
	trace_put_event_file(file);
	return ret;
}

static enum dynprobe_field_kind field_kind(const struct dynprobe_ftrace_event_field *f)
{
	switch (f->filter_type) {
	case FILTER_DYN_STRING:
		return DYNPROBE_FIELD_DYN_STRING;
	case FILTER_RDYN_STRING:
		return DYNPROBE_FIELD_REL_STRING;
	case FILTER_STATIC_STRING:
		return DYNPROBE_FIELD_STATIC_STRING;
	case FILTER_PTR_STRING:
		return DYNPROBE_FIELD_PTR_STRING;
	default:
		break;
	}
	switch (f->size) {
	case 1:
	case 2:
	case 4:
	case 8:
		return DYNPROBE_FIELD_VALUE;
	default:
		return DYNPROBE_FIELD_ARRAY;
	}
}

int dynprobe_event_field(const char *system, const char *event,
			 const char *name, struct dynprobe_event_field *out)
{
	struct trace_event_file *file = source_get(system, event);
	struct dynprobe_ftrace_event_field *f;
	struct list_head *head;
	int ret = -ENOENT;

	if (IS_ERR(file))
		return PTR_ERR(file);
	/* The reference keeps the event, and with it its fields. */
	head = trace_get_fields(file->event_call);
	list_for_each_entry(f, head, link) {
		if (strcmp(f->name, name))
			continue;
		out->offset = f->offset;
		out->size = f->size;
		out->is_signed = f->is_signed;
		out->kind = field_kind(f);
		ret = 0;
		break;
	}
	trace_put_event_file(file);
	return ret;
}

/*
 * Runs where the source event fires, with preemption disabled (the
 * tracepoint's perf path, or a probe's), in any context up to NMI. The
 * record goes to the hit path, which hands it to the event probe's record
 * function (src/event.rs).
 */
static void eprobe_overflow(struct perf_event *counter,
			    struct perf_sample_data *data, struct pt_regs *regs)
{
	const struct dynprobe_eprobe *eprobe = counter->overflow_handler_context;
	const struct dynprobe_feed *feed = eprobe->feed;
	struct perf_raw_record *raw = data->raw;

	/* Nothing to do unless the event probe itself is enabled. */
	if (!raw || !(data->sample_flags & PERF_SAMPLE_RAW) ||
	    !READ_ONCE(feed->sink->flags))
		return;
	/* The raw sample is the source's record, as the filter reads it. */
	if (eprobe->filter && !filter_match_preds(eprobe->filter, raw->frag.data))
		return;
	dynprobe_dispatch_event(feed, regs, raw->frag.data, raw->frag.size);
}
NOKPROBE_SYMBOL(eprobe_overflow);

/*
 * Releases what eprobe_attach() took; with dynprobe's internal holds
 * marked (holds.c), as they were taken.
 */
static void eprobe_free(struct dynprobe_eprobe *eprobe)
{
	int cpu;

	for_each_possible_cpu(cpu) {
		if (eprobe->counters[cpu])
			perf_event_release_kernel(eprobe->counters[cpu]);
	}
	/*
	 * A handler interrupted on its CPU by the removal may still run:
	 * handlers run with preemption disabled, so after a grace period
	 * none does.
	 */
	synchronize_rcu();
	if (eprobe->filter)
		dynprobe_call_free_event_filter(eprobe->filter);
	trace_put_event_file(eprobe->source);
	kfree(eprobe->counters);
	kfree(eprobe);
}

void dynprobe_eprobe_detach(struct dynprobe_eprobe *eprobe)
{
	dynprobe_internal_holds_begin();
	eprobe_free(eprobe);
	dynprobe_internal_holds_end();
}

/*
 * The event probe's holds on its source (the file, the perf counters)
 * are dynprobe's own: on one of dynprobe's events they do not keep the
 * module loaded, and a clear that removes both is not refused for them.
 */
static struct dynprobe_eprobe *eprobe_attach(const char *system,
					     const char *event, char *filter,
					     struct dynprobe_feed *feed)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_TRACEPOINT,
		.size = sizeof(attr),
		.sample_period = 1,
		.sample_type = PERF_SAMPLE_RAW,
	};
	struct dynprobe_eprobe *eprobe;
	int cpu;

	eprobe = kzalloc(sizeof(*eprobe), GFP_KERNEL);
	if (!eprobe)
		return ERR_PTR(-ENOMEM);
	eprobe->counters = kcalloc(nr_cpu_ids, sizeof(*eprobe->counters),
				   GFP_KERNEL);
	if (!eprobe->counters) {
		kfree(eprobe);
		return ERR_PTR(-ENOMEM);
	}
	eprobe->source = source_get(system, event);
	if (IS_ERR(eprobe->source)) {
		int err = PTR_ERR(eprobe->source);

		kfree(eprobe->counters);
		kfree(eprobe);
		return ERR_PTR(err);
	}
	eprobe->feed = feed;
	if (filter) {
		int err = filter_create(eprobe->source->event_call, filter,
					false, &eprobe->filter);

		if (err) {
			eprobe_free(eprobe);
			return ERR_PTR(err);
		}
	}
	attr.config = eprobe->source->event_call->event.type;
	for_each_online_cpu(cpu) {
		struct perf_event *counter;

		counter = perf_event_create_kernel_counter(&attr, cpu, NULL,
							   eprobe_overflow,
							   eprobe);
		if (IS_ERR(counter)) {
			eprobe_free(eprobe);
			return ERR_CAST(counter);
		}
		eprobe->counters[cpu] = counter;
	}
	return eprobe;
}

struct dynprobe_eprobe *dynprobe_eprobe_attach(const char *system,
					       const char *event,
					       char *filter,
					       struct dynprobe_feed *feed)
{
	struct dynprobe_eprobe *eprobe;

	dynprobe_internal_holds_begin();
	eprobe = eprobe_attach(system, event, filter, feed);
	dynprobe_internal_holds_end();
	return eprobe;
}
