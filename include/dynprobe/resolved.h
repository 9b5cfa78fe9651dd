/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Kernel symbols dynprobe needs that Linux 7.2 does not export, with the C
 * types they have in the 7.2 source. They are resolved once, at load, by
 * src/shim/resolve.c; nothing else looks symbols up by name.
 */
#ifndef DYNPROBE_RESOLVED_H
#define DYNPROBE_RESOLVED_H

#include <linux/types.h>

struct dentry;
struct mutex;
struct trace_array;

struct dynprobe_kernel_symbols {
	/* kernel/kallsyms.c: @SYM fetch args, SYM+OFF places, the rest of this table. */
	unsigned long (*kallsyms_lookup_name)(const char *name);
	/* kernel/trace/trace_events.c: held around trace_add/remove_event_call. */
	struct mutex *event_mutex;
	/* fs/tracefs/inode.c: our own directory, and removing it on unload. */
	struct dentry *(*tracefs_create_dir)(const char *name, struct dentry *parent);
	void (*tracefs_remove)(struct dentry *dentry);
	/* kernel/trace/trace.c: error_log entries with the caret. */
	void (*tracing_log_err)(struct trace_array *tr, const char *loc,
				const char *cmd, const char **errs, u8 type,
				u16 pos);
	/*
	 * kernel/trace/trace_probe.c: the probe events' message table.
	 * error_log keeps a pointer to the message table, not a copy, so the
	 * table must outlive this module: we log with the kernel's own.
	 */
	const char **trace_probe_err_text;
	/*
	 * kernel/kallsyms.c, kernel/module/kallsyms.c: counting the symbols
	 * of a name, so that a probe on a non-unique symbol is refused
	 * (NON_UNIQ_SYMBOL) as the kernel's kprobe events refuse it.
	 */
	int (*kallsyms_on_each_match_symbol)(int (*fn)(void *, unsigned long),
					     const char *name, void *data);
	int (*module_kallsyms_on_each_symbol)(const char *modname,
					      int (*fn)(void *, const char *,
							unsigned long),
					      void *data);
	/*
	 * kernel/trace/trace.c: after events are removed, empties the ring
	 * buffers that hold their records (the tracing core marks them), as
	 * the kernel's probe events do; else `cat trace` shows those records
	 * as of an unknown type. Optional: without it they stay.
	 */
	void (*tracing_reset_all_online_cpus)(void);
	/*
	 * include/asm-generic/vmlinux.lds.h: the bounds of the vmlinux BTF
	 * (section .BTF), for argument names, types and members
	 * (<argname>, $arg*, ->field). Optional: without them these
	 * features answer that BTF is not available.
	 */
	const u8 *start_btf;
	const u8 *stop_btf;
};

extern struct dynprobe_kernel_symbols dynprobe_ksyms;

#endif /* DYNPROBE_RESOLVED_H */
