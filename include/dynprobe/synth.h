/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Synthetic events through the kernel's exported synthetic event API
 * (src/shim/synth.c, used by src/event/synth.rs).
 */
#ifndef DYNPROBE_SYNTH_H
#define DYNPROBE_SYNTH_H

#include <linux/types.h>

/* One field of an event: struct synth_field_desc (synth.c checks). */
struct dynprobe_synth_field {
	const char *type;
	const char *name;
};

/*
 * Creates synthetic event @name with @n_fields @fields, owned by no
 * module (synth.c says why): 0 or the kernel's -errno.
 */
int dynprobe_synth_create(const char *name,
			  struct dynprobe_synth_field *fields,
			  unsigned int n_fields);
/* Deletes synthetic event @name: 0, -ENOENT, or -EBUSY when it is in use. */
int dynprobe_synth_delete(const char *name);
/*
 * Whether deleting synthetic event @name would fail with -EBUSY now: 1
 * or 0; -ENOENT when there is no such event, -EOPNOTSUPP when the
 * kernel's event does not look as synth.c expects (nothing then says it
 * is free).
 */
int dynprobe_synth_busy(const char *name);
/*
 * The print fmt of the event @name of the synthetic system: its length,
 * copied into @buf cut to @len - 1 bytes and NUL-terminated; -ENOENT when
 * there is no such event.
 */
int dynprobe_synth_print_fmt(const char *name, char *buf, size_t len);
/*
 * Whether the print fmt of the event @name of the synthetic system is the
 * @len bytes at @fmt: 1 or 0, without allocating; -ENOENT when there is
 * no such event.
 */
int dynprobe_synth_print_fmt_is(const char *name, const char *fmt, size_t len);
/*
 * How many fields the tracing core defined for the event @name of the
 * synthetic system; -ENOENT when there is no such event.
 */
int dynprobe_synth_fields(const char *name);

#endif /* DYNPROBE_SYNTH_H */
