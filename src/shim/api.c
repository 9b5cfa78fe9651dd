// SPDX-License-Identifier: GPL-2.0
/*
 * dynprobe's in-kernel API (include/dynprobe/api.h): the exports. The
 * commands are Rust (src/api/commands.rs; an out-of-tree module's
 * exports are made by this C macro); holding an event and tracing it wrap
 * the kernel's exported event-file and synthetic-event calls.
 *
 * What makes it C: it defines exported symbols (EXPORT_SYMBOL_GPL, which
 * an out-of-tree Rust module cannot use), dynprobe_synth_trace() takes
 * varargs, and enabling an event names it with trace_event_name(), a
 * static inline.
 */

#include <linux/err.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/stdarg.h>
#include <linux/string.h>
#include <linux/trace_events.h>
#include "dynprobe/api.h"
#include "dynprobe/shim.h"

static_assert(sizeof(struct synth_event_trace_state) <=
	      sizeof(struct dynprobe_synth_state));
static_assert(__alignof__(struct synth_event_trace_state) <=
	      __alignof__(struct dynprobe_synth_state));
static_assert(DYNPROBE_API_MAX_LINE == DYNPROBE_MAX_LINE);

/* Most fields of a synthetic event (SYNTH_FIELDS_MAX). */
#define API_SYNTH_FIELDS_MAX 64

/* Characters an event name may not hold: they would end it. */
#define EVENT_STOPS " \t\n\r\v\f#;,()="

/* The commands, implemented in Rust (src/api/commands.rs). */
EXPORT_SYMBOL_GPL(dynprobe_cmd_init);
EXPORT_SYMBOL_GPL(dynprobe_synth_cmd_start);
EXPORT_SYMBOL_GPL(dynprobe_synth_add_field);
EXPORT_SYMBOL_GPL(dynprobe_function_cmd_start);
EXPORT_SYMBOL_GPL(dynprobe_function_add_arg);
EXPORT_SYMBOL_GPL(dynprobe_function_set_return);
EXPORT_SYMBOL_GPL(dynprobe_probe_cmd_start);
EXPORT_SYMBOL_GPL(dynprobe_probe_add_arg);
EXPORT_SYMBOL_GPL(__dynprobe_cmd_create);
EXPORT_SYMBOL_GPL(__dynprobe_create);
EXPORT_SYMBOL_GPL(__dynprobe_synth_event_create);
EXPORT_SYMBOL_GPL(__dynprobe_function_event_create);
EXPORT_SYMBOL_GPL(dynprobe_delete);

static bool word_ok(const char *word, const char *stops)
{
	return word && *word && !word[strcspn(word, stops)];
}

/* A held event: its file, and whether the synthetic calls may trace it. */
struct dynprobe_event {
	struct trace_event_file *file;
	bool synthetic;
};

struct dynprobe_event *dynprobe_event_get(const char *system,
					  const char *event)
{
	struct dynprobe_event *ev;
	int ret;

	if (!word_ok(system, EVENT_STOPS) || !word_ok(event, EVENT_STOPS))
		return ERR_PTR(-EINVAL);
	ev = kzalloc_obj(*ev, GFP_KERNEL);
	if (!ev)
		return ERR_PTR(-ENOMEM);
	ret = dynprobe_rs_api_event_get(system, event, &ev->file);
	if (ret < 0) {
		kfree(ev);
		return ERR_PTR(ret);
	}
	ev->synthetic = ret == 1;
	return ev;
}
EXPORT_SYMBOL_GPL(dynprobe_event_get);

void dynprobe_event_put(struct dynprobe_event *ev)
{
	if (IS_ERR_OR_NULL(ev))
		return;
	trace_put_event_file(ev->file);
	kfree(ev);
}
EXPORT_SYMBOL_GPL(dynprobe_event_put);

struct trace_event_file *dynprobe_event_file(struct dynprobe_event *ev)
{
	return ev->file;
}
EXPORT_SYMBOL_GPL(dynprobe_event_file);

int dynprobe_event_enable(struct dynprobe_event *ev, bool enable)
{
	struct trace_event_call *call = ev->file->event_call;

	return trace_array_set_clr_event(ev->file->tr, call->class->system,
					 trace_event_name(call), enable);
}
EXPORT_SYMBOL_GPL(dynprobe_event_enable);

int dynprobe_synth_trace(struct dynprobe_event *ev, unsigned int n, ...)
{
	u64 vals[API_SYNTH_FIELDS_MAX];
	unsigned int i;
	va_list args;

	if (!ev->synthetic || n > API_SYNTH_FIELDS_MAX)
		return -EINVAL;
	va_start(args, n);
	for (i = 0; i < n; i++)
		vals[i] = va_arg(args, u64);
	va_end(args);
	return synth_event_trace_array(ev->file, vals, n);
}
EXPORT_SYMBOL_GPL(dynprobe_synth_trace);

int dynprobe_synth_trace_array(struct dynprobe_event *ev, u64 *vals,
			       unsigned int n)
{
	if (!ev->synthetic)
		return -EINVAL;
	return synth_event_trace_array(ev->file, vals, n);
}
EXPORT_SYMBOL_GPL(dynprobe_synth_trace_array);

static struct synth_event_trace_state *kernel_state(struct dynprobe_synth_state *s)
{
	return (struct synth_event_trace_state *)s;
}

int dynprobe_synth_trace_start(struct dynprobe_event *ev,
			       struct dynprobe_synth_state *state)
{
	if (!ev->synthetic)
		return -EINVAL;
	return synth_event_trace_start(ev->file, kernel_state(state));
}
EXPORT_SYMBOL_GPL(dynprobe_synth_trace_start);

int dynprobe_synth_add_next_val(u64 val, struct dynprobe_synth_state *state)
{
	return synth_event_add_next_val(val, kernel_state(state));
}
EXPORT_SYMBOL_GPL(dynprobe_synth_add_next_val);

int dynprobe_synth_add_val(const char *field, u64 val,
			   struct dynprobe_synth_state *state)
{
	return synth_event_add_val(field, val, kernel_state(state));
}
EXPORT_SYMBOL_GPL(dynprobe_synth_add_val);

int dynprobe_synth_trace_end(struct dynprobe_synth_state *state)
{
	struct synth_event_trace_state *ks = kernel_state(state);

	/*
	 * Nothing was reserved when the event was disabled at the start:
	 * synth_event_trace_end() would commit a record that is not there.
	 */
	if (ks->disabled || !ks->entry)
		return 0;
	return synth_event_trace_end(ks);
}
EXPORT_SYMBOL_GPL(dynprobe_synth_trace_end);

/*
 * An owner's events go with it: after its exit function ran, or when its
 * init failed.
 */
static int api_module_notify(struct notifier_block *nb, unsigned long action,
			     void *data)
{
	struct module *mod = data;

	if (action == MODULE_STATE_GOING)
		dynprobe_rs_api_owner_gone(mod, mod->name);
	return NOTIFY_DONE;
}

static struct notifier_block api_module_nb = {
	.notifier_call = api_module_notify,
};

int dynprobe_api_init(void)
{
	return register_module_notifier(&api_module_nb);
}

void dynprobe_api_exit(void)
{
	unregister_module_notifier(&api_module_nb);
}
