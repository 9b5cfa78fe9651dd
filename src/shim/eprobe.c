// SPDX-License-Identifier: GPL-2.0
/*
 * Event probes' hook. The kernel's own event probe hooks its source event
 * with an event trigger, whose registration is not exported; what is, and
 * hands over every record of any trace event with its bytes, is perf: one
 * in-kernel counter per online CPU on the event's id (PERF_TYPE_TRACEPOINT,
 * raw samples, a period of one), whose overflow handler gets the record.
 * Perf registration is the tracing core's TRACE_REG_PERF_REGISTER, apart
 * from the trace instances': what the source event records there does not
 * change. The Rust side (src/probe/hook/eprobe.rs) owns the result.
 *
 * The counters follow CPU hotplug. Perf detaches a CPU's counters when
 * the CPU goes down and does not bring them back; a CPU that comes up
 * has none. Two dynamic hotplug states see the changes: one among the
 * online states (after perf's own, CPUHP_AP_PERF_ONLINE, so a counter can
 * be made there) for a CPU coming up, one among the prepare states, run
 * once the CPU is dead (perf's counters on it are detached by then), for
 * one going down. Neither makes or releases a counter itself: that takes
 * event_mutex (perf_trace_init(), perf_trace_destroy()), and the tracing
 * core takes the CPU hotplug lock under event_mutex (a tracepoint's
 * static key), so a hotplug callback that waited for event_mutex could
 * deadlock with it. The callbacks mark the CPU and queue a worker, which
 * makes and releases counters outside the hotplug lock, under
 * eprobes_lock as attach and detach do. A CPU that comes online is thus
 * traced from shortly after, not from the moment it is online.
 *
 * What makes it C: the hotplug states (cpuhp_setup_state_nocalls(),
 * cpuhp_remove_state_nocalls(): static inlines), the CPU and list
 * iterators (for_each_online_cpu(), list_for_each_entry(): macros) and
 * the overflow handler perf calls.
 */
#include <linux/cpu.h>
#include <linux/cpuhotplug.h>
#include <linux/cpumask.h>
#include <linux/mutex.h>
#include <linux/perf_event.h>
#include <linux/slab.h>
#include <linux/trace_events.h>
#include <linux/workqueue.h>
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
	struct list_head link;			/* in eprobes */
	struct trace_event_file *source;	/* held: the source stays */
	struct perf_event **counters;		/* by CPU, NULL where none */
	const struct dynprobe_feed *feed;
	struct event_filter *filter;		/* NULL: every record */
	struct perf_event_attr attr;		/* of each counter */
};

/*
 * Every attached event probe, and every event probe's counters. Also
 * what keeps dynprobe's internal holds (holds.c) to one task at a time:
 * they are marked only under it. Taken before event_mutex and perf's
 * locks, never under the CPU hotplug lock.
 */
static DEFINE_MUTEX(eprobes_lock);
static LIST_HEAD(eprobes);
/* CPUs that went down since the worker last looked: their counters are dead. */
static struct cpumask dead_cpus;
static void eprobes_follow(struct work_struct *work);
static DECLARE_WORK(eprobes_work, eprobes_follow);
static int online_state = -1, dead_state = -1;

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
	mutex_lock(dynprobe_ksyms.event_mutex);
	ret = dynprobe_call_create_event_filter(NULL, call, filter_str, log,
						filter);
	mutex_unlock(dynprobe_ksyms.event_mutex);
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
 * function (src/event/mod.rs).
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

/* Makes @eprobe's counter on @cpu; -ENODEV if @cpu is not online for perf. */
static int counter_make(struct dynprobe_eprobe *eprobe, int cpu)
{
	struct perf_event *counter;

	lockdep_assert_held(&eprobes_lock);
	counter = perf_event_create_kernel_counter(&eprobe->attr, cpu, NULL,
						   eprobe_overflow, eprobe);
	if (IS_ERR(counter))
		return PTR_ERR(counter);
	eprobe->counters[cpu] = counter;
	return 0;
}

static void counter_release(struct dynprobe_eprobe *eprobe, int cpu)
{
	lockdep_assert_held(&eprobes_lock);
	if (!eprobe->counters[cpu])
		return;
	perf_event_release_kernel(eprobe->counters[cpu]);
	eprobe->counters[cpu] = NULL;
}

/*
 * Releases what eprobe_attach() took, under eprobes_lock with dynprobe's
 * internal holds marked (holds.c), as they were taken.
 */
static void eprobe_free(struct dynprobe_eprobe *eprobe)
{
	int cpu;

	for_each_possible_cpu(cpu)
		counter_release(eprobe, cpu);
	/*
	 * A handler interrupted on its CPU by the removal may still run:
	 * handlers run with preemption disabled, so after a grace period
	 * none does.
	 */
	synchronize_rcu();
	/* Nor is a record of it left for perf. */
	dynprobe_eprobe_perf_sync();
	if (eprobe->filter)
		dynprobe_call_free_event_filter(eprobe->filter);
	trace_put_event_file(eprobe->source);
	kfree(eprobe->counters);
	kfree(eprobe);
}

void dynprobe_eprobe_detach(struct dynprobe_eprobe *eprobe)
{
	mutex_lock(&eprobes_lock);
	dynprobe_internal_holds_begin();
	list_del(&eprobe->link);
	eprobe_free(eprobe);
	dynprobe_internal_holds_end();
	mutex_unlock(&eprobes_lock);
}

/*
 * The worker the hotplug callbacks queue: releases the counters of CPUs
 * that went down, then makes those missing on online CPUs. A CPU marked
 * dead is unmarked before any counter is made, and a counter made on a
 * CPU is made while perf has it online: if it goes down after, it is
 * marked again, and the worker queued again. A CPU that went down and
 * came back before the worker ran has its dead counter replaced.
 */
static void eprobes_follow(struct work_struct *work)
{
	struct dynprobe_eprobe *eprobe;
	int cpu;

	mutex_lock(&eprobes_lock);
	dynprobe_internal_holds_begin();
	for_each_possible_cpu(cpu) {
		if (!cpumask_test_and_clear_cpu(cpu, &dead_cpus))
			continue;
		list_for_each_entry(eprobe, &eprobes, link)
			counter_release(eprobe, cpu);
	}
	list_for_each_entry(eprobe, &eprobes, link) {
		for_each_online_cpu(cpu) {
			int err;

			if (eprobe->counters[cpu])
				continue;
			err = counter_make(eprobe, cpu);
			/* -ENODEV: down again since; its callback requeues. */
			if (err && err != -ENODEV)
				pr_warn_ratelimited("dynprobe: event probe on %s: no counter on CPU %d: %d\n",
						    trace_event_name(eprobe->source->event_call),
						    cpu, err);
		}
	}
	dynprobe_internal_holds_end();
	mutex_unlock(&eprobes_lock);
}

/* Hotplug callbacks: no lock, no perf call (see the top of the file). */
static int eprobes_cpu_online(unsigned int cpu)
{
	queue_work(system_wq, &eprobes_work);
	return 0;
}

static int eprobes_cpu_dead(unsigned int cpu)
{
	cpumask_set_cpu(cpu, &dead_cpus);
	queue_work(system_wq, &eprobes_work);
	return 0;
}

int dynprobe_eprobe_init(void)
{
	int ret;

	ret = dynprobe_eprobe_perf_init();
	if (ret)
		return ret;
	ret = cpuhp_setup_state_nocalls(CPUHP_AP_ONLINE_DYN,
					"dynprobe/eprobe:online",
					eprobes_cpu_online, NULL);
	if (ret < 0) {
		dynprobe_eprobe_perf_exit();
		return ret;
	}
	online_state = ret;
	ret = cpuhp_setup_state_nocalls(CPUHP_BP_PREPARE_DYN,
					"dynprobe/eprobe:dead",
					NULL, eprobes_cpu_dead);
	if (ret < 0) {
		cpuhp_remove_state_nocalls(online_state);
		online_state = -1;
		dynprobe_eprobe_perf_exit();
		return ret;
	}
	dead_state = ret;
	return 0;
}

/* With no event probe left; after it, no worker runs. */
void dynprobe_eprobe_exit(void)
{
	if (dead_state >= 0)
		cpuhp_remove_state_nocalls(dead_state);
	if (online_state >= 0)
		cpuhp_remove_state_nocalls(online_state);
	dead_state = online_state = -1;
	cancel_work_sync(&eprobes_work);
	dynprobe_eprobe_perf_exit();
}

/*
 * The event probe's holds on its source (the file, the perf counters)
 * are dynprobe's own: on one of dynprobe's events they do not keep the
 * module loaded, and a clear that removes both is not refused for them.
 * Called under eprobes_lock with them marked.
 */
static struct dynprobe_eprobe *eprobe_attach(const char *system,
					     const char *event, char *filter,
					     struct dynprobe_feed *feed)
{
	struct dynprobe_eprobe *eprobe;
	int cpu;

	eprobe = kzalloc_obj(*eprobe, GFP_KERNEL);
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
	eprobe->attr = (struct perf_event_attr) {
		.type = PERF_TYPE_TRACEPOINT,
		.size = sizeof(eprobe->attr),
		.config = eprobe->source->event_call->event.type,
		.sample_period = 1,
		.sample_type = PERF_SAMPLE_RAW,
	};
	/*
	 * A CPU that comes online from here on is the worker's: it runs
	 * after this (eprobes_lock) and finds the probe listed.
	 */
	for_each_online_cpu(cpu) {
		int err = counter_make(eprobe, cpu);

		/* -ENODEV: going down; the worker has it. */
		if (err && err != -ENODEV) {
			eprobe_free(eprobe);
			return ERR_PTR(err);
		}
	}
	list_add(&eprobe->link, &eprobes);
	return eprobe;
}

struct dynprobe_eprobe *dynprobe_eprobe_attach(const char *system,
					       const char *event,
					       char *filter,
					       struct dynprobe_feed *feed)
{
	struct dynprobe_eprobe *eprobe;

	mutex_lock(&eprobes_lock);
	dynprobe_internal_holds_begin();
	eprobe = eprobe_attach(system, event, filter, feed);
	dynprobe_internal_holds_end();
	mutex_unlock(&eprobes_lock);
	return eprobe;
}
