/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shared between the C shims for the hit path (hit.c) and the probe
 * handlers (kprobe.c, fprobe.c, fentry.c).
 */
#ifndef DYNPROBE_SHIM_INTERNAL_H
#define DYNPROBE_SHIM_INTERNAL_H

#include <linux/fprobe.h>
#include <linux/hashtable.h>
#include <linux/kprobes.h>
#include <linux/trace_events.h>
#include "dynprobe/resolved.h"
#include "dynprobe/shim.h"

/* hit.c: the common path of every hit. */
void dynprobe_dispatch(const struct dynprobe_feed *feed, struct pt_regs *regs,
		       const unsigned long *entry_data, unsigned long ip1,
		       unsigned long ip2);
/* The same for a hit through ftrace: @regs = ftrace_partial_regs(@fregs). */
void dynprobe_dispatch_ftrace(const struct dynprobe_feed *feed,
			      struct ftrace_regs *fregs, struct pt_regs *regs,
			      const unsigned long *entry_data,
			      unsigned long ip1, unsigned long ip2);
/*
 * A kprobe probe's pre-handler (kprobe.c registers it): the hit path
 * inlined into the handler the kprobes core calls.
 */
int dynprobe_kprobe_hit(struct kprobe *kp, struct pt_regs *regs);
/*
 * The same for a uprobe's record of words, in the probed task
 * (preemption disabled); and a uprobe's record assembled at @rec (@len
 * bytes, header included), into the event's instances and perf (its
 * header is written where triggers alone read it).
 */
void dynprobe_dispatch_user(const struct dynprobe_feed *feed,
			    struct pt_regs *regs,
			    const unsigned long *entry_data,
			    unsigned long ip1, unsigned long ip2);
void dynprobe_dispatch_user_record(const struct dynprobe_feed *feed,
				   struct pt_regs *regs, u8 *rec,
				   size_t len);
/* The same for an event probe, fed by its source event's record. */
void dynprobe_dispatch_event(const struct dynprobe_feed *feed,
			     struct pt_regs *regs, const void *source,
			     size_t source_len);
/*
 * The shared ftrace_ops' callback (fentry.c): the hit path of every entry
 * probe armed in dynprobe_fentry_probes on the function hit.
 */
void dynprobe_fentry_callback(unsigned long ip, unsigned long parent_ip,
			      struct ftrace_ops *op, struct ftrace_regs *fregs);
#define DYNPROBE_FENTRY_HASH_BITS 10
extern DECLARE_HASHTABLE(dynprobe_fentry_probes, DYNPROBE_FENTRY_HASH_BITS);

/*
 * eprobe_perf.c: an event probe's record for perf, submitted from an
 * irq_work (perf's recursion guard is taken where event probes run).
 */
void dynprobe_eprobe_perf_defer(const struct dynprobe_sink *sink,
				const u8 *rec, size_t len);
void dynprobe_eprobe_perf_sync(void);
int dynprobe_eprobe_perf_init(void);
void dynprobe_eprobe_perf_exit(void);

/* src/event/trace_event/core_callbacks.rs: every dynprobe event's reg. */
int dynprobe_rs_event_reg(struct trace_event_call *call, enum trace_reg type,
			  void *data);

/* src/event/trace_event/core_callbacks.rs: own holds on an event, clears. */
void dynprobe_rs_internal_ref(struct trace_event_call *call, int delta);
bool dynprobe_rs_event_closing(struct trace_event_call *call);

/* holds.c: around the holds dynprobe's own event probes take and drop. */
void dynprobe_internal_holds_begin(void);
void dynprobe_internal_holds_end(void);
/* Whether the current task is the one taking them. */
bool dynprobe_internal_holds(void);

/*
 * Where the return address of a function that has just returned was:
 * right below the stack pointer, which its `ret` has moved past it. Both
 * return trampolines report that stack pointer in the registers they
 * hand over (arch_rethook_trampoline_callback(), return_to_handler).
 */
static __always_inline unsigned long *dynprobe_return_slot(unsigned long sp)
{
	return (unsigned long *)sp - 1;
}

/*
 * The caller of a function that is returning, given the address its
 * return hook found in the return address slot at @slot. Two kinds of hook
 * replace that address with a trampoline of theirs and keep the original
 * aside: kretprobes through the rethook (arch_rethook_trampoline), fprobe
 * exits through the function graph (return_to_handler). When both hook
 * one call, the one that hooks second keeps the first one's trampoline,
 * and hands it to its handlers as the return address; the first one's
 * record of the call is still there while the second's handlers run (the
 * second's trampoline runs first), so the real address is looked up in
 * it by @slot, as the stack unwinders do (unwind_recover_ret_addr()).
 * Each lookup costs a call through the redirect, paid only on such calls.
 * The test is inline in each return handler: a call of its own would cost
 * every return hit. The lookups are out of line (fprobe.c's
 * dynprobe_trampoline_return_address()): the cursors they take by address
 * would give every return handler a stack canary.
 */
unsigned long dynprobe_trampoline_return_address(unsigned long addr,
						 unsigned long *slot);

static __always_inline unsigned long
dynprobe_real_return_address(unsigned long addr, unsigned long *slot)
{
	if (unlikely(addr == (unsigned long)dynprobe_ksyms.rethook_trampoline ||
		     addr == (unsigned long)dynprobe_ksyms.fgraph_return_handler))
		return dynprobe_trampoline_return_address(addr, slot);
	return addr;
}

#endif /* DYNPROBE_SHIM_INTERNAL_H */
