// SPDX-License-Identifier: GPL-2.0
/*
 * The path of a hit: fetch the record once, write it into each trace
 * instance the event is enabled in, and hand it to perf. It is made of the
 * tracing core's static inline functions (soft disable, per-CPU buffers,
 * perf submission), which Rust cannot call, so it is C, in one function a
 * hit enters once. The event it writes to is a Rust object
 * (src/event/trace_event.rs), seen here through its sink; the record comes from
 * the definition's programs (dynprobe_rs_record).
 */
#include <linux/ftrace.h>
#include <linux/kallsyms.h>
#include <linux/module.h>
#include <linux/perf_event.h>
#include <linux/rcupdate.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/trace_seq.h>
#include "dynprobe/resolved.h"
#include "internal.h"

/*
 * Records are assembled in a per-CPU scratch buffer first, so that every
 * probed byte is read once; one level per context that can nest (task,
 * softirq, irq, NMI). Each level also has room for one symbol's text, for
 * a symstr argument that has less room left in its record than
 * sprint_symbol() may write (dynprobe_record_symbol()).
 */
#define SCRATCH_LEVELS 4
struct scratch {
	int level;
	u8 buf[SCRATCH_LEVELS][DYNPROBE_RECORD_MAX];
	char sym[SCRATCH_LEVELS][KSYM_SYMBOL_LEN];
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

/*
 * A symstr argument's text, "SYM+0xOFF/0xSIZE [MOD]", written into the
 * record (@buf, @len bytes) on the hit path; its length, without the NUL
 * sprint_symbol() adds. As the kernel's probe events (fetch_store_symstring())
 * it goes straight into the record, not through a buffer on the stack,
 * which may be an NMI's: when the record has less room left than
 * sprint_symbol() may write (KSYM_SYMBOL_LEN), through the scratch level
 * of the hit, and cut to @len. Only called while a hit holds a scratch
 * level: symstr makes a record of variable size, which is assembled in
 * the scratch buffer.
 */
size_t dynprobe_record_symbol(u8 *buf, size_t len, unsigned long addr)
{
	struct scratch *s = this_cpu_ptr(scratch);
	size_t n;
	char *tmp;

	if (len >= KSYM_SYMBOL_LEN)
		return sprint_symbol((char *)buf, addr);
	if (WARN_ON_ONCE(s->level < 1 || s->level > SCRATCH_LEVELS))
		return 0;
	tmp = s->sym[s->level - 1];
	n = min_t(size_t, sprint_symbol(tmp, addr), len);
	memcpy(buf, tmp, n);
	return n;
}
NOKPROBE_SYMBOL(dynprobe_record_symbol);

/*
 * The writers below are inlined into the entry points, which are NOKPROBE:
 * no part of the hit path has a symbol of its own to probe.
 */
static __always_inline void trace_record(const struct dynprobe_files *files,
			 struct pt_regs *regs, const u8 *rec, size_t len)
{
	unsigned long i;

	for (i = 0; i < files->nr; i++) {
		struct trace_event_file *file = files->file[i];
		struct trace_event_buffer fbuffer;
		struct trace_entry *entry;

		if (trace_trigger_soft_disabled(file))
			continue;
		entry = trace_event_buffer_reserve(&fbuffer, file, len);
		if (!entry)
			continue;
		fbuffer.regs = regs;
		memcpy((u8 *)entry + sizeof(*entry), rec + sizeof(*entry),
		       len - sizeof(*entry));
		trace_event_buffer_commit(&fbuffer);
	}
}

#ifdef CONFIG_PERF_EVENTS
/*
 * @fregs: the ftrace_regs of an fprobe or ftrace hit, NULL for a kprobe's
 * (whose @regs are complete). ftrace_regs are not a pt_regs perf can take:
 * at a function's exit (fgraph's return_to_handler) only the return
 * value, frame and stack pointers and ip are saved, the flags word is
 * whatever was on the stack, and ftrace_partial_regs() only ORs
 * X86_EFLAGS_FIXED into it. perf reads that word (X86_EFLAGS_FIXED:
 * unwind from these "hardware" registers; PERF_EFLAGS_EXACT and _VM: the
 * sample's misc bits, no user callchain). So, as the kernel's fprobe
 * events do (fentry_perf_func()/fexit_perf_func()), perf gets its own
 * per-CPU pt_regs filled by ftrace_fill_perf_regs(): ip, sp, kernel cs,
 * flags 0, like perf_fetch_caller_regs() for a tracepoint.
 */
static __always_inline void perf_record(struct trace_event_call *call,
					struct pt_regs *regs,
					struct ftrace_regs *fregs,
					const u8 *rec, size_t len)
{
	struct hlist_head *head = this_cpu_ptr(call->perf_events);
	struct trace_entry *entry;
	struct pt_regs *perf_regs;
	int size, rctx;

	if (hlist_empty(head))
		return;
	/* perf wants the record plus a u32 size header to be u64 aligned. */
	size = ALIGN(len + sizeof(u32), sizeof(u64)) - sizeof(u32);
	entry = perf_trace_buf_alloc(size, fregs ? &perf_regs : NULL, &rctx);
	if (!entry)
		return;
	if (fregs)
		regs = ftrace_fill_perf_regs(fregs, perf_regs);
	memcpy((u8 *)entry + sizeof(*entry), rec + sizeof(*entry),
	       len - sizeof(*entry));
	memset((u8 *)entry + len, 0, size - len);
	perf_trace_buf_submit(entry, size, rctx, call->event.type, 1, regs,
			      head, NULL);
}
#endif

/*
 * Where a hit's record comes from: the hit's registers (and a return
 * probe's entry data), or, for an event probe, its source event's record.
 * Each entry point below passes one kind as a constant, so the common path
 * carries no test for the other.
 */
struct hit {
	struct pt_regs *regs;
	/* An fprobe's or ftrace_ops' hit: @regs are its partial regs. */
	struct ftrace_regs *fregs;
	const unsigned long *entry_data;
	unsigned long ip1, ip2;
	/* An event probe's source record and its size; NULL for the rest. */
	const void *source;
	size_t source_len;
};

static __always_inline size_t fetch_record(const struct dynprobe_feed *feed,
					   const struct hit *hit, u8 *buf,
					   size_t cap)
{
	if (hit->source)
		return dynprobe_rs_record_event(feed->def, hit->regs,
						hit->source, hit->source_len,
						buf, cap);
	return dynprobe_rs_record(feed->def, hit->regs, hit->entry_data, buf,
				  cap, hit->ip1, hit->ip2);
}

/*
 * A record of one size enabled in one trace instance only (the common
 * case): the programs write it straight into the reserved ring-buffer
 * entry, as the kernel's probe events do, without a copy.
 */
static __always_inline void trace_record_direct(const struct dynprobe_feed *feed,
						struct trace_event_file *file,
						const struct hit *hit)
{
	struct trace_event_buffer fbuffer;
	struct trace_entry *entry;

	if (trace_trigger_soft_disabled(file))
		return;
	entry = trace_event_buffer_reserve(&fbuffer, file, feed->fixed_size);
	if (!entry)
		return;
	fbuffer.regs = hit->regs;
	fetch_record(feed, hit, (u8 *)entry, feed->fixed_size);
	trace_event_buffer_commit(&fbuffer);
}

/*
 * Handlers run with preemption disabled, which is an RCU read-side
 * section for the sink's set of files.
 */
static __always_inline void dispatch(const struct dynprobe_feed *feed,
				     const struct hit *hit)
{
	const struct dynprobe_sink *sink = feed->sink;
	unsigned int flags = READ_ONCE(sink->flags);
	const struct dynprobe_files *files;
	size_t len;
	u8 *rec;

	raw_cpu_inc(*feed->nhit);
	if (!flags)
		return;
	files = rcu_dereference_sched(sink->files);
	if (flags == DYNPROBE_SINK_TRACE && feed->fixed_size && files &&
	    files->nr == 1) {
		trace_record_direct(feed, files->file[0], hit);
		return;
	}
	rec = scratch_get();
	if (!rec)
		return;
	len = fetch_record(feed, hit, rec, DYNPROBE_RECORD_MAX);
	if (len >= sizeof(struct trace_entry)) {
		if ((flags & DYNPROBE_SINK_TRACE) && files)
			trace_record(files, hit->regs, rec, len);
#ifdef CONFIG_PERF_EVENTS
		if (flags & DYNPROBE_SINK_PERF)
			perf_record(sink->call, hit->regs, hit->fregs, rec,
				    len);
#endif
	}
	scratch_put();
}

void dynprobe_dispatch(const struct dynprobe_feed *feed, struct pt_regs *regs,
		       const unsigned long *entry_data, unsigned long ip1,
		       unsigned long ip2)
{
	const struct hit hit = {
		.regs = regs, .entry_data = entry_data, .ip1 = ip1, .ip2 = ip2,
	};

	dispatch(feed, &hit);
}
NOKPROBE_SYMBOL(dynprobe_dispatch);

/*
 * The same for a hit through ftrace (fprobe, fentry.c's ftrace_ops):
 * @regs are ftrace_partial_regs(@fregs), which the programs read; perf
 * gets registers of its own (perf_record()).
 */
void dynprobe_dispatch_ftrace(const struct dynprobe_feed *feed,
			      struct ftrace_regs *fregs, struct pt_regs *regs,
			      const unsigned long *entry_data,
			      unsigned long ip1, unsigned long ip2)
{
	const struct hit hit = {
		.regs = regs, .fregs = fregs, .entry_data = entry_data,
		.ip1 = ip1, .ip2 = ip2,
	};

	dispatch(feed, &hit);
}
NOKPROBE_SYMBOL(dynprobe_dispatch_ftrace);

void dynprobe_dispatch_event(const struct dynprobe_feed *feed,
			     struct pt_regs *regs, const void *source,
			     size_t source_len)
{
	const struct hit hit = {
		.regs = regs, .source = source, .source_len = source_len,
	};

	dispatch(feed, &hit);
}
NOKPROBE_SYMBOL(dynprobe_dispatch_event);

int dynprobe_events_init(void)
{
	int ret;

	scratch = alloc_percpu(struct scratch);
	if (!scratch)
		return -ENOMEM;
	/* Before any event exists: every reference on one pins the module. */
	ret = dynprobe_holds_init();
	if (ret) {
		free_percpu(scratch);
		scratch = NULL;
	}
	return ret;
}

void dynprobe_events_exit(void)
{
	dynprobe_holds_exit();
	free_percpu(scratch);
	scratch = NULL;
}

unsigned long __percpu *dynprobe_counter_alloc(void)
{
	return alloc_percpu(unsigned long);
}

void dynprobe_counter_free(unsigned long __percpu *counter)
{
	free_percpu(counter);
}

u64 dynprobe_counter_sum(unsigned long __percpu *counter)
{
	unsigned long sum = 0;
	int cpu;

	for_each_possible_cpu(cpu)
		sum += *per_cpu_ptr(counter, cpu);
	return sum;
}

void dynprobe_kvfree_rcu(void *ptr)
{
	kvfree_rcu_mightsleep(ptr);
}

void dynprobe_events_lock(void)
{
	mutex_lock(dynprobe_ksyms.event_mutex);
}

void dynprobe_events_unlock(void)
{
	mutex_unlock(dynprobe_ksyms.event_mutex);
}

void dynprobe_events_assert_held(void)
{
	lockdep_assert_held(dynprobe_ksyms.event_mutex);
}

/*
 * Whether an event @system/@name is registered, as the kernel's probe
 * events check before registering theirs (find_trace_event_call() in
 * trace_probe.c): every event in ftrace_events, the ftrace events
 * (ftrace/function and the like, which trace_get_event_file() does not
 * find) included. The caller holds event_mutex, which every change of
 * the list holds, and registers its event before releasing it: the check
 * and the registration are one step.
 */
bool dynprobe_event_name_taken(const char *system, const char *name)
{
	struct trace_event_call *call;
	const char *call_name;

	lockdep_assert_held(dynprobe_ksyms.event_mutex);
	list_for_each_entry(call, dynprobe_ksyms.ftrace_events, list) {
		if (!call->class->system || strcmp(system, call->class->system))
			continue;
		call_name = trace_event_name(call);
		if (call_name && !strcmp(name, call_name))
			return true;
	}
	return false;
}
