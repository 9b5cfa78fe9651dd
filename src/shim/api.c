// SPDX-License-Identifier: GPL-2.0
/*
 * dynprobe's in-kernel API (include/dynprobe/api.h): the exported
 * functions. Commands are built here as text and run by the control
 * files' command path (src/api.rs, src/control.rs), so that a definition
 * made through the API is parsed, checked, logged and listed exactly as
 * one written to a control file. Tracing wraps the kernel's exported
 * synthetic event calls.
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

/* Characters a word of each sort may not hold: they would end it. */
#define NAME_STOPS " \t\n\r\v\f#;,()="
#define SYNTH_TYPE_STOPS "\n\r\v\f#;"
#define FUNC_TYPE_STOPS "\n\r\v\f#;,()="
#define FETCH_STOPS " \t\n\r\v\f#"
#define EVENT_STOPS " \t\n\r\v\f#;,()="

static int file_of(enum dynprobe_kind kind)
{
	switch (kind) {
	case DYNPROBE_SYNTHETIC_EVENTS:
		return DYNPROBE_FILE_SYNTHETIC_EVENTS;
	case DYNPROBE_FUNCTION_EVENTS:
		return DYNPROBE_FILE_FUNCTION_EVENTS;
	case DYNPROBE_KPROBE_EVENTS:
		return DYNPROBE_FILE_KPROBE_EVENTS;
	case DYNPROBE_DYNAMIC_EVENTS:
		return DYNPROBE_FILE_DYNAMIC_EVENTS;
	}
	return -EINVAL;
}

static bool word_ok(const char *word, const char *stops)
{
	return word && *word && !word[strcspn(word, stops)];
}

void dynprobe_cmd_init(struct dynprobe_cmd *cmd, char *buf, unsigned int size)
{
	memset(cmd, 0, sizeof(*cmd));
	cmd->buf = buf;
	cmd->size = size;
	if (!buf || !size)
		cmd->err = -EINVAL;
	else
		buf[0] = '\0';
}
EXPORT_SYMBOL_GPL(dynprobe_cmd_init);

/* Appends @s to the command; the first failure sticks. */
static int cmd_add(struct dynprobe_cmd *cmd, const char *s)
{
	size_t n = strlen(s);

	if (cmd->err)
		return cmd->err;
	if (n >= cmd->size - cmd->len) {
		cmd->err = -E2BIG;
		return cmd->err;
	}
	memcpy(cmd->buf + cmd->len, s, n + 1);
	cmd->len += n;
	return 0;
}

static int cmd_fail(struct dynprobe_cmd *cmd, int err)
{
	if (!cmd->err)
		cmd->err = err;
	return cmd->err;
}

/* Starts a command of @kind: refused once one is started. */
static int cmd_start(struct dynprobe_cmd *cmd, enum dynprobe_kind kind)
{
	if (cmd->err)
		return cmd->err;
	if (cmd->started || file_of(kind) < 0)
		return cmd_fail(cmd, -EINVAL);
	cmd->started = true;
	cmd->kind = kind;
	return 0;
}

int dynprobe_synth_cmd_start(struct dynprobe_cmd *cmd, const char *name)
{
	if (!word_ok(name, NAME_STOPS))
		return cmd_fail(cmd, -EINVAL);
	cmd_start(cmd, DYNPROBE_SYNTHETIC_EVENTS);
	return cmd_add(cmd, name);
}
EXPORT_SYMBOL_GPL(dynprobe_synth_cmd_start);

int dynprobe_synth_add_field(struct dynprobe_cmd *cmd, const char *type,
			     const char *name)
{
	if (!cmd->started || cmd->kind != DYNPROBE_SYNTHETIC_EVENTS ||
	    !word_ok(type, SYNTH_TYPE_STOPS) || !word_ok(name, NAME_STOPS))
		return cmd_fail(cmd, -EINVAL);
	cmd_add(cmd, cmd->n_args ? "; " : " ");
	cmd_add(cmd, type);
	cmd_add(cmd, " ");
	if (cmd_add(cmd, name))
		return cmd->err;
	cmd->n_args++;
	return 0;
}
EXPORT_SYMBOL_GPL(dynprobe_synth_add_field);

int dynprobe_function_cmd_start(struct dynprobe_cmd *cmd, const char *func)
{
	if (!word_ok(func, NAME_STOPS))
		return cmd_fail(cmd, -EINVAL);
	cmd_start(cmd, DYNPROBE_FUNCTION_EVENTS);
	cmd_add(cmd, func);
	return cmd_add(cmd, "(");
}
EXPORT_SYMBOL_GPL(dynprobe_function_cmd_start);

int dynprobe_function_add_arg(struct dynprobe_cmd *cmd, const char *type,
			      const char *name)
{
	if (!cmd->started || cmd->kind != DYNPROBE_FUNCTION_EVENTS || cmd->closed)
		return cmd_fail(cmd, -EINVAL);
	if (cmd->n_args)
		cmd_add(cmd, ", ");
	if (!name) {
		cmd_add(cmd, "NULL");
	} else {
		if (!word_ok(type, FUNC_TYPE_STOPS) ||
		    !word_ok(name, FUNC_TYPE_STOPS " \t"))
			return cmd_fail(cmd, -EINVAL);
		cmd_add(cmd, type);
		cmd_add(cmd, " ");
		cmd_add(cmd, name);
	}
	if (cmd->err)
		return cmd->err;
	cmd->n_args++;
	return 0;
}
EXPORT_SYMBOL_GPL(dynprobe_function_add_arg);

int dynprobe_function_set_return(struct dynprobe_cmd *cmd, const char *type,
				 const char *name)
{
	if (!cmd->started || cmd->kind != DYNPROBE_FUNCTION_EVENTS || cmd->closed ||
	    !word_ok(type, FUNC_TYPE_STOPS) ||
	    !word_ok(name, FUNC_TYPE_STOPS " \t"))
		return cmd_fail(cmd, -EINVAL);
	cmd->closed = true;
	cmd_add(cmd, ") -> ");
	cmd_add(cmd, type);
	cmd_add(cmd, " ");
	return cmd_add(cmd, name);
}
EXPORT_SYMBOL_GPL(dynprobe_function_set_return);

int dynprobe_probe_cmd_start(struct dynprobe_cmd *cmd, enum dynprobe_kind kind,
			     char type, const char *event, const char *place)
{
	char head[3] = { type, ':', '\0' };

	if ((kind != DYNPROBE_KPROBE_EVENTS && kind != DYNPROBE_DYNAMIC_EVENTS) ||
	    !strchr(kind == DYNPROBE_KPROBE_EVENTS ? "pr" : "prft", type) ||
	    (event && !word_ok(event, EVENT_STOPS)) ||
	    !word_ok(place, FETCH_STOPS))
		return cmd_fail(cmd, -EINVAL);
	cmd_start(cmd, kind);
	if (event) {
		cmd_add(cmd, head);
		cmd_add(cmd, event);
	} else {
		head[1] = '\0';
		cmd_add(cmd, head);
	}
	cmd_add(cmd, " ");
	return cmd_add(cmd, place);
}
EXPORT_SYMBOL_GPL(dynprobe_probe_cmd_start);

int dynprobe_probe_add_arg(struct dynprobe_cmd *cmd, const char *name,
			   const char *fetch)
{
	if (!cmd->started ||
	    (cmd->kind != DYNPROBE_KPROBE_EVENTS && cmd->kind != DYNPROBE_DYNAMIC_EVENTS) ||
	    (name && !word_ok(name, NAME_STOPS)) || !word_ok(fetch, FETCH_STOPS))
		return cmd_fail(cmd, -EINVAL);
	cmd_add(cmd, " ");
	if (name) {
		cmd_add(cmd, name);
		cmd_add(cmd, "=");
	}
	if (cmd_add(cmd, fetch))
		return cmd->err;
	cmd->n_args++;
	return 0;
}
EXPORT_SYMBOL_GPL(dynprobe_probe_add_arg);

/* Runs one line of the control file of @kind: as a write of it would. */
static int run_line(enum dynprobe_kind kind, const char *line,
		    struct module *owner)
{
	int file = file_of(kind);

	if (file < 0 || !line || strpbrk(line, "\n"))
		return -EINVAL;
	return dynprobe_rs_api_command(file, line, strlen(line), owner);
}

int __dynprobe_cmd_create(struct dynprobe_cmd *cmd, struct module *owner)
{
	if (!cmd->err && !cmd->started)
		cmd->err = -EINVAL;
	if (cmd->kind == DYNPROBE_FUNCTION_EVENTS && !cmd->closed) {
		cmd->closed = true;
		cmd_add(cmd, ")");
	}
	if (cmd->err)
		return cmd->err;
	return run_line(cmd->kind, cmd->buf, owner);
}
EXPORT_SYMBOL_GPL(__dynprobe_cmd_create);

int __dynprobe_create(enum dynprobe_kind kind, const char *line,
		      struct module *owner)
{
	return run_line(kind, line, owner);
}
EXPORT_SYMBOL_GPL(__dynprobe_create);

int __dynprobe_synth_event_create(const char *name,
			    const struct dynprobe_field *fields,
			    unsigned int n, struct module *owner)
{
	struct dynprobe_cmd cmd;
	unsigned int i;
	char *buf;
	int ret;

	if (!fields && n)
		return -EINVAL;
	buf = kmalloc(DYNPROBE_API_MAX_LINE + 1, GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	dynprobe_cmd_init(&cmd, buf, DYNPROBE_API_MAX_LINE + 1);
	dynprobe_synth_cmd_start(&cmd, name);
	for (i = 0; i < n; i++)
		dynprobe_synth_add_field(&cmd, fields[i].type, fields[i].name);
	ret = __dynprobe_cmd_create(&cmd, owner);
	kfree(buf);
	return ret;
}
EXPORT_SYMBOL_GPL(__dynprobe_synth_event_create);

int __dynprobe_function_event_create(const char *func,
			       const struct dynprobe_field *args,
			       unsigned int n, struct module *owner)
{
	struct dynprobe_cmd cmd;
	unsigned int i;
	char *buf;
	int ret;

	if (!args && n)
		return -EINVAL;
	buf = kmalloc(DYNPROBE_API_MAX_LINE + 1, GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	dynprobe_cmd_init(&cmd, buf, DYNPROBE_API_MAX_LINE + 1);
	dynprobe_function_cmd_start(&cmd, func);
	for (i = 0; i < n; i++)
		dynprobe_function_add_arg(&cmd, args[i].type, args[i].name);
	ret = __dynprobe_cmd_create(&cmd, owner);
	kfree(buf);
	return ret;
}
EXPORT_SYMBOL_GPL(__dynprobe_function_event_create);

int dynprobe_delete(enum dynprobe_kind kind, const char *event)
{
	char *line;
	int ret;

	if (!word_ok(event, EVENT_STOPS))
		return -EINVAL;
	line = kasprintf(GFP_KERNEL, "%s%s",
			 kind == DYNPROBE_SYNTHETIC_EVENTS ? "!" : "-:", event);
	if (!line)
		return -ENOMEM;
	ret = run_line(kind, line, NULL);
	kfree(line);
	return ret;
}
EXPORT_SYMBOL_GPL(dynprobe_delete);

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
