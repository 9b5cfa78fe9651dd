// SPDX-License-Identifier: GPL-2.0
/*
 * Whether a trace event name is taken, asked before dynprobe registers an
 * event of that name (src/event/trace_event.rs). It walks the tracing
 * core's list of events with list_for_each_entry() and reads each name
 * with trace_event_name(): a macro and a static inline make it C.
 */
#include <linux/list.h>
#include <linux/lockdep.h>
#include <linux/mutex.h>
#include <linux/string.h>
#include <linux/trace_events.h>
#include "dynprobe/resolved.h"
#include "dynprobe/shim.h"

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
