/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shared between the C shims for events (event.c) and probes (probe.c).
 */
#ifndef DYNPROBE_SHIM_INTERNAL_H
#define DYNPROBE_SHIM_INTERNAL_H

#include <linux/fprobe.h>
#include <linux/kprobes.h>
#include <linux/trace_events.h>
#include "dynprobe/shim.h"

#define EVENT_TRACE	1	/* enabled in at least one trace instance */
#define EVENT_PERF	2	/* enabled for perf */

/*
 * A trace event and the probes that feed it. Like the kernel's probe
 * events, one event may have several probes (same argument types, other
 * places); its fields and print format are those of the first definition.
 */
struct dynprobe_event {
	struct trace_event_call call;
	struct trace_event_class class;
	struct trace_event_functions funcs;
	struct trace_event_fields fields[2];
	struct list_head files;		/* struct file_link, RCU */
	unsigned int flags;		/* EVENT_TRACE | EVENT_PERF */
	const void *shape;		/* what fields and printing come from */
	struct list_head probes;	/* struct dynprobe_probe */
};

/* One probe: a kprobe, kretprobe or fprobe and the definition it runs. */
struct dynprobe_probe {
	struct list_head list;
	struct dynprobe_event *event;
	enum dynprobe_probe_kind kind;
	const void *def;
	/* The record's size if it is always the same, else 0. */
	unsigned int fixed_size;
	unsigned long __percpu *nhit;
	/* What the kind needs: a probe is one or the other. */
	union {
		struct kretprobe rp;	/* rp.kp is the kprobe of entry probes */
		struct {
			struct fprobe fp;
			/* An entry probe on fentry.c's shared ftrace_ops. */
			unsigned long fentry_addr;
			struct hlist_node fentry_node;	/* while armed */
			struct tracepoint *tpoint;	/* while a t probe is hooked */
		};
	};
	char *func;		/* fprobe target, or tracepoint name */
	bool fentry;		/* on the shared ftrace_ops, not fprobe */
	bool registered;
	bool armed;		/* t probe: its event is enabled */
	/*
	 * In module_probes while the place is in a module (MOD:SYM);
	 * t probes are all in tracepoint_probes.
	 */
	struct list_head module_list;
};

/* event.c: the common path of every hit. */
void dynprobe_dispatch(struct dynprobe_probe *probe, struct pt_regs *regs,
		       const unsigned long *entry_data, unsigned long ip1,
		       unsigned long ip2);

/* probe.c */
int dynprobe_probe_setup(struct dynprobe_probe *probe,
			 const struct dynprobe_place *place);
int dynprobe_probe_arm(struct dynprobe_probe *probe);
void dynprobe_probe_disarm(struct dynprobe_probe *probe);
void dynprobe_probe_teardown(struct dynprobe_probe *probe);
u64 dynprobe_probe_misses(struct dynprobe_probe *probe);
int dynprobe_probes_init(void);

/* fentry.c: entry probes on one shared ftrace_ops. */
bool dynprobe_fentry_suits(struct dynprobe_probe *probe);
int dynprobe_fentry_arm(struct dynprobe_probe *probe);
void dynprobe_fentry_disarm(struct dynprobe_probe *probe);
void dynprobe_probes_exit(void);

static inline bool dynprobe_is_fprobe(enum dynprobe_probe_kind kind)
{
	return kind >= DYNPROBE_FPROBE_ENTRY;
}

#endif /* DYNPROBE_SHIM_INTERNAL_H */
