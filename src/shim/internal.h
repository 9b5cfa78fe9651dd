/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shared between the C shims for the hit path (hit.c) and probes (probe.c,
 * fentry.c).
 */
#ifndef DYNPROBE_SHIM_INTERNAL_H
#define DYNPROBE_SHIM_INTERNAL_H

#include <linux/fprobe.h>
#include <linux/kprobes.h>
#include <linux/trace_events.h>
#include "dynprobe/shim.h"

/* One fprobe or tracepoint probe and the definition it runs. */
struct dynprobe_probe {
	struct dynprobe_feed *feed;	/* what a hit runs and where it writes */
	enum dynprobe_probe_kind kind;
	struct fprobe fp;
	/* An entry probe on fentry.c's shared ftrace_ops. */
	unsigned long fentry_addr;
	struct hlist_node fentry_node;	/* while armed */
	struct tracepoint *tpoint;	/* while a t probe is hooked */
	char *func;		/* fprobe target, or tracepoint name */
	bool fentry;		/* on the shared ftrace_ops, not fprobe */
	bool registered;
	bool armed;		/* t probe: its event is enabled */
	/* t probes are all in tracepoint_probes. */
	struct list_head module_list;
};

/* hit.c: the common path of every hit. */
void dynprobe_dispatch(const struct dynprobe_feed *feed, struct pt_regs *regs,
		       const unsigned long *entry_data, unsigned long ip1,
		       unsigned long ip2);

/* kprobe.c: the caller of a returning function (see there). */
unsigned long dynprobe_real_return_address(unsigned long addr,
					   unsigned long *slot);

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

/* probe.c: its notifiers. */
int dynprobe_probes_init(void);
void dynprobe_probes_exit(void);

/* fentry.c: entry probes on one shared ftrace_ops. */
bool dynprobe_fentry_suits(struct dynprobe_probe *probe);
int dynprobe_fentry_arm(struct dynprobe_probe *probe);
void dynprobe_fentry_disarm(struct dynprobe_probe *probe);

static inline bool dynprobe_is_fprobe(enum dynprobe_probe_kind kind)
{
	return kind >= DYNPROBE_FPROBE_ENTRY;
}

#endif /* DYNPROBE_SHIM_INTERNAL_H */
