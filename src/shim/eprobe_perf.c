// SPDX-License-Identifier: GPL-2.0
/*
 * Event probes' records for perf. An event probe runs inside perf's
 * overflow handler of its source event's counter (eprobe.c), where perf
 * holds its recursion guard for the context: a sample submitted from
 * there finds the guard taken (perf_trace_buf_alloc() returns NULL) and
 * is lost. That is why the kernel's own event probes never reach perf.
 * dynprobe's copy the record into a per-CPU queue instead and submit it
 * from an irq_work on the same CPU, which runs in hard interrupt context
 * as soon as interrupts are on again, with the guard free.
 *
 * What the sample carries: the event probe's record as the trace has
 * it, and the registers of the submission (perf_fetch_caller_regs(), as
 * a tracepoint's perf path takes them): its ip is in the irq_work, and a
 * callchain (perf record -g) goes through the interrupt into the code
 * that was interrupted, which is where the source event fired unless
 * that code ran with interrupts off (then it is where they came on
 * again). The task a sample belongs to is the one running then: the same
 * one, except for a source event that fires with interrupts off right
 * before a context switch (sched_switch), whose records a per-task perf
 * session may see in the next task. Records from NMI context are not
 * queued (the queue is not NMI-safe), nor those that find the queue full
 * (DEFERRED_BYTES before the irq_work has run); both only for perf.
 *
 * What makes it C: perf's submission (perf_trace_buf_alloc(),
 * perf_fetch_caller_regs(), perf_trace_buf_submit(): static inlines), the
 * per-CPU queue (alloc_percpu(), this_cpu_ptr(): macros) and its
 * irq_work (IRQ_WORK_INIT_HARD(), a macro).
 */
#include <linux/irq_work.h>
#include <linux/percpu.h>
#include <linux/perf_event.h>
#include <linux/trace_events.h>
#include "internal.h"

/* Room for two records of the largest size. */
#define DEFERRED_BYTES (2 * DYNPROBE_RECORD_MAX)

struct deferred_record {
	const struct dynprobe_sink *sink;
	u32 len;
	u8 rec[] __aligned(8);
};

struct deferred_queue {
	struct irq_work work;
	/* Bytes of @bytes in use; changed with interrupts off on its CPU. */
	unsigned int used;
	u8 bytes[DEFERRED_BYTES] __aligned(8);
};

static struct deferred_queue __percpu *queues;

static size_t record_room(size_t len)
{
	return ALIGN(sizeof(struct deferred_record) + len, 8);
}

/*
 * In hard interrupt context on the CPU that queued the record. The sink's
 * perf_events list lives while DYNPROBE_SINK_PERF is set: perf frees it
 * after clearing the flag (TRACE_REG_PERF_UNREGISTER) and waiting for a
 * grace period, which this handler, with interrupts off, holds back.
 */
static void submit(const struct dynprobe_sink *sink, const u8 *rec, size_t len)
{
	struct trace_event_call *call = dynprobe_sink_call(sink);
	struct trace_entry *entry;
	struct hlist_head *head;
	struct pt_regs *regs;
	int size, rctx;

	if (!(READ_ONCE(sink->flags) & DYNPROBE_SINK_PERF) ||
	    !READ_ONCE(call->perf_events))
		return;
	head = this_cpu_ptr(call->perf_events);
	if (hlist_empty(head))
		return;
	/* perf wants the record plus a u32 size header to be u64 aligned. */
	size = ALIGN(len + sizeof(u32), sizeof(u64)) - sizeof(u32);
	entry = perf_trace_buf_alloc(size, &regs, &rctx);
	if (!entry)
		return;
	perf_fetch_caller_regs(regs);
	memcpy((u8 *)entry + sizeof(*entry), rec + sizeof(*entry),
	       len - sizeof(*entry));
	memset((u8 *)entry + len, 0, size - len);
	perf_trace_buf_submit(entry, size, rctx, call->event.type, 1, regs,
			      head, NULL);
}

/*
 * The irq_work. A record queued while it runs (an event probe on an
 * event probe's event, fed by the submission) is submitted in the same
 * pass: the queue is bounded, so the pass is.
 */
static void deferred_submit(struct irq_work *work)
{
	struct deferred_queue *q = container_of(work, struct deferred_queue, work);
	unsigned int at = 0;

	while (at < q->used) {
		const struct deferred_record *r = (void *)(q->bytes + at);

		at += record_room(r->len);
		submit(r->sink, r->rec, r->len);
	}
	q->used = 0;
}

void dynprobe_eprobe_perf_defer(const struct dynprobe_sink *sink,
				const u8 *rec, size_t len)
{
	struct deferred_record *r;
	struct deferred_queue *q;
	unsigned long flags;

	if (in_nmi() || len < sizeof(struct trace_entry) ||
	    len > DYNPROBE_RECORD_MAX)
		return;
	local_irq_save(flags);
	q = this_cpu_ptr(queues);
	if (q->used + record_room(len) <= sizeof(q->bytes)) {
		r = (struct deferred_record *)(q->bytes + q->used);
		r->sink = sink;
		r->len = len;
		memcpy(r->rec, rec, len);
		q->used += record_room(len);
		irq_work_queue(&q->work);
	}
	local_irq_restore(flags);
}
NOKPROBE_SYMBOL(dynprobe_eprobe_perf_defer);

/*
 * Once no event probe's handler can queue a record for a sink (its
 * counters released, a grace period past): waits until none is left
 * queued, so the sink may go.
 */
void dynprobe_eprobe_perf_sync(void)
{
	int cpu;

	for_each_possible_cpu(cpu)
		irq_work_sync(&per_cpu_ptr(queues, cpu)->work);
}

int dynprobe_eprobe_perf_init(void)
{
	int cpu;

	queues = alloc_percpu(struct deferred_queue);
	if (!queues)
		return -ENOMEM;
	/* Hard: on PREEMPT_RT too it runs in interrupt context, on its CPU. */
	for_each_possible_cpu(cpu)
		per_cpu_ptr(queues, cpu)->work = IRQ_WORK_INIT_HARD(deferred_submit);
	return 0;
}

void dynprobe_eprobe_perf_exit(void)
{
	if (!queues)
		return;
	dynprobe_eprobe_perf_sync();
	free_percpu(queues);
	queues = NULL;
}
