/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dynprobe's in-kernel API: other modules create, enable, fire and delete
 * dynprobe events with it (Documentation/api.md).
 *
 * Every definition is a line of one of dynprobe's control files, run
 * exactly as a write of it would be: the same parser, limits, error_log
 * entries and errnos, and it is listed in the control files like any
 * other. The calls return 0 or a -errno, and sleep (process context),
 * except the dynprobe_synth_trace*() calls, which may run in any context.
 *
 * The module that makes a definition owns it: when that module unloads,
 * its events still there are removed (those still in use are left to the
 * control files, with a warning).
 */
#ifndef DYNPROBE_API_H
#define DYNPROBE_API_H

#include <linux/module.h>
#include <linux/types.h>

struct trace_event_file;

/* The control file a command is a line of. */
enum dynprobe_kind {
	DYNPROBE_SYNTHETIC_EVENTS,	/* synthetic_events */
	DYNPROBE_FUNCTION_EVENTS,	/* function_events */
	DYNPROBE_KPROBE_EVENTS,	/* kprobe_events */
	DYNPROBE_DYNAMIC_EVENTS,	/* dynamic_events */
};

/* The longest command, as for the control files. */
#define DYNPROBE_API_MAX_LINE 4094

/*
 * A command being built in a buffer of the caller's: see
 * dynprobe_cmd_init(). An error in any step is kept and returned by
 * the steps after it and by dynprobe_cmd_create().
 */
struct dynprobe_cmd {
	char *buf;
	unsigned int len;
	unsigned int size;
	enum dynprobe_kind kind;
	unsigned int n_args;	/* fields or arguments added */
	int err;
	bool started;
	bool closed;		/* a function event's ')' is written */
};

/* One field of a synthetic event, or argument of a function event. */
struct dynprobe_field {
	const char *type;
	const char *name;	/* NULL in a function event: skip a parameter */
};

/* Starts a command in @buf (@size bytes, at most DYNPROBE_API_MAX_LINE + 1). */
void dynprobe_cmd_init(struct dynprobe_cmd *cmd, char *buf, unsigned int size);

/* Synthetic event @name: "NAME TYPE FIELD; TYPE FIELD..." */
int dynprobe_synth_cmd_start(struct dynprobe_cmd *cmd, const char *name);
int dynprobe_synth_add_field(struct dynprobe_cmd *cmd, const char *type,
			     const char *name);

/* Function event on @func: "FUNC(TYPE NAME, ...) [-> TYPE NAME]" */
int dynprobe_function_cmd_start(struct dynprobe_cmd *cmd, const char *func);
/*
 * The next argument: parameter @name of @type; the next parameter
 * skipped ("NULL") when @name is NULL; with @type NULL, an argument
 * named from BTF: a parameter ("file"), a member chain
 * ("file->f_path.dentry->d_name.name:string"), "NAME=EXPR", or "..."
 * for every parameter.
 */
int dynprobe_function_add_arg(struct dynprobe_cmd *cmd, const char *type,
			      const char *name);
/*
 * Makes it an exit event recording the return value as @name of @type;
 * with @type NULL typed from BTF ("ret", or "ret:TYPE").
 */
int dynprobe_function_set_return(struct dynprobe_cmd *cmd, const char *type,
				 const char *name);

/*
 * Probe event, a line of kprobe_events (@kind DYNPROBE_KPROBE_EVENTS) or
 * dynamic_events (DYNPROBE_DYNAMIC_EVENTS): "TYPE[:[GRP/]EVENT] PLACE ARG...",
 * @type one of 'p', 'r' (both files), 'f', 't', 'w', 'e' (dynamic_events);
 * @event "GRP/EVENT", "EVENT" or NULL for the default name. @place is
 * one word: a symbol, a function list ("vfs_read,!vfs_write*:exit" for
 * 'f'), a watchpoint ("w@vm_swappiness:4"), a source event ("sched.
 * sched_switch" for 'e').
 */
int dynprobe_probe_cmd_start(struct dynprobe_cmd *cmd, enum dynprobe_kind kind,
			     char type, const char *event, const char *place);
/* Adds "NAME=FETCH" (or "FETCH" when @name is NULL). */
int dynprobe_probe_add_arg(struct dynprobe_cmd *cmd, const char *name,
			   const char *fetch);

/* Runs the command built in @cmd, owned by the calling module. */
#define dynprobe_cmd_create(cmd) __dynprobe_cmd_create(cmd, THIS_MODULE)
int __dynprobe_cmd_create(struct dynprobe_cmd *cmd, struct module *owner);

/* Runs one line of the control file @kind, owned by the calling module. */
#define dynprobe_create(kind, line) __dynprobe_create(kind, line, THIS_MODULE)
int __dynprobe_create(enum dynprobe_kind kind, const char *line,
		      struct module *owner);

/* One call: synthetic event @name with @n @fields. */
#define dynprobe_synth_event_create(name, fields, n) \
	__dynprobe_synth_event_create(name, fields, n, THIS_MODULE)
int __dynprobe_synth_event_create(const char *name,
			    const struct dynprobe_field *fields,
			    unsigned int n, struct module *owner);

/* One call: function event on @func recording @n @args at entry. */
#define dynprobe_function_event_create(func, args, n) \
	__dynprobe_function_event_create(func, args, n, THIS_MODULE)
int __dynprobe_function_event_create(const char *func,
			       const struct dynprobe_field *args,
			       unsigned int n, struct module *owner);

/*
 * Removes event @event ("[GRP/]EVENT") of the control file @kind, as
 * "-:EVENT" there ("!EVENT" in synthetic_events) would: -ENOENT when
 * there is none, -EBUSY while it is in use (enabled, its file got with
 * dynprobe_event_get(), a hist trigger).
 */
int dynprobe_delete(enum dynprobe_kind kind, const char *event);

/*
 * An event of dynprobe's, held: it cannot be removed until
 * dynprobe_event_put(). @system is "synthetic" for synthetic events, the
 * group otherwise ("functions" for function events). An ERR_PTR:
 * -ENOENT when dynprobe has no such event.
 */
struct dynprobe_event;
struct dynprobe_event *dynprobe_event_get(const char *system,
					  const char *event);
void dynprobe_event_put(struct dynprobe_event *ev);
/* The event's file, for the tracing core's calls; valid until the put. */
struct trace_event_file *dynprobe_event_file(struct dynprobe_event *ev);
/* Enables or disables the event in the top-level trace instance. */
int dynprobe_event_enable(struct dynprobe_event *ev, bool enable);

/*
 * Tracing a synthetic event (-EINVAL for another kind). All at once:
 * @n values, one per field in order (a string field's value is a
 * const char * cast to u64); a disabled event records nothing and
 * returns 0.
 */
int dynprobe_synth_trace(struct dynprobe_event *ev, unsigned int n, ...);
int dynprobe_synth_trace_array(struct dynprobe_event *ev, u64 *vals,
			       unsigned int n);

/*
 * Piecewise: a reservation in the trace buffer, filled field by field
 * (in order, or by name, not both) and committed by
 * dynprobe_synth_trace_end(), which every successful start needs (and
 * no failed one). While the event is disabled the calls succeed and
 * record nothing. The state holds no pointer to itself: it may be moved
 * between the calls. Opaque: struct synth_event_trace_state.
 */
struct dynprobe_synth_state {
	u64 space[16];
};
int dynprobe_synth_trace_start(struct dynprobe_event *ev,
			       struct dynprobe_synth_state *state);
int dynprobe_synth_add_next_val(u64 val, struct dynprobe_synth_state *state);
int dynprobe_synth_add_val(const char *field, u64 val,
			   struct dynprobe_synth_state *state);
int dynprobe_synth_trace_end(struct dynprobe_synth_state *state);

#endif /* DYNPROBE_API_H */
