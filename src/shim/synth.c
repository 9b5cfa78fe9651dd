// SPDX-License-Identifier: GPL-2.0
/*
 * The kernel's synthetic event API, as src/synth.rs calls it. Every
 * function used here is exported (kernel/trace/trace_events_synth.c,
 * kernel/trace/trace_events.c).
 */

#include <linux/err.h>
#include <linux/stddef.h>
#include <linux/string.h>
#include <linux/trace_events.h>
#include "dynprobe/synth.h"

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

int dynprobe_synth_print_fmt(const char *name, char *buf, size_t len)
{
	struct trace_event_file *file;
	const char *fmt;
	int ret;

	file = trace_get_event_file(NULL, "synthetic", name);
	if (IS_ERR(file))
		return PTR_ERR(file) == -EINVAL ? -ENOENT : PTR_ERR(file);
	fmt = file->event_call->print_fmt ?: "";
	ret = strlen(fmt);
	if (len)
		strscpy(buf, fmt, len);
	trace_put_event_file(file);
	return ret;
}
