/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Between the in-kernel API's C half (src/shim/api.c: the exports, held
 * events, synthetic-event calls) and its Rust half (src/api/commands.rs:
 * the commands; src/api/mod.rs: owners, lookups).
 */
#ifndef DYNPROBE_API_GLUE_H
#define DYNPROBE_API_GLUE_H

#include <linux/types.h>

struct trace_event_file;

/* Implemented in C: the module notifier that removes an owner's events. */
int dynprobe_api_init(void);
void dynprobe_api_exit(void);

/*
 * Implemented in Rust: the command functions of api.h themselves
 * (src/api/commands.rs), and these.
 */
/* Removes what @owner (a struct module, unloading, named @name) owns. */
void dynprobe_rs_api_owner_gone(const void *owner, const char *name);
/*
 * Gets the file of dynprobe's event @system/@event (NUL-terminated) into
 * @file, holding it (trace_get_event_file()): 1 for a synthetic event, 0
 * for a probe event, -ENOENT when dynprobe has no such event.
 */
int dynprobe_rs_api_event_get(const char *system, const char *event,
			      struct trace_event_file **file);

#endif /* DYNPROBE_API_GLUE_H */
