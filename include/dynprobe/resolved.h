/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Kernel symbols dynprobe needs that Linux 7.2 does not export. They are
 * resolved once, at load, by src/sys/kernel_symbols.rs (which lists each with
 * the reason it is needed); nothing else looks symbols up by name.
 *
 * Objects are used through their addresses. Functions are never called
 * through a pointer: on a kernel with IBT, Linux seals every function whose
 * address vmlinux does not take (its ENDBR is overwritten at boot), and all
 * of these are sealed, so an indirect call to one would be a #CP fault.
 * Each is instead called, by a direct call, through a stub of ours with the
 * same prototype, dynprobe_call_<function>() (src/shim/stubs.c), that an
 * ftrace_ops of src/shim/resolve.c redirects into the kernel function's
 * body. Where those bodies are stays private to src/sys/kernel_symbols.rs: no
 * other code can form a pointer to call.
 */
#ifndef DYNPROBE_RESOLVED_H
#define DYNPROBE_RESOLVED_H

#include <linux/types.h>

struct dentry;
struct event_filter;
struct list_head;
struct llist_node;
struct mutex;
struct static_key;
struct task_struct;
struct trace_array;
struct trace_event_call;

struct dynprobe_kernel_symbols {
	/*
	 * Which functions were resolved: call them, through their stubs,
	 * only then. The load fails without one of the required ones; the
	 * optional ones are marked OPTIONAL in src/sys/kernel_symbols.rs.
	 */
	struct {
		bool kallsyms_lookup_name;
		bool tracefs_create_dir;
		bool tracefs_remove;
		bool tracing_log_err;
		bool kallsyms_on_each_match_symbol;
		bool module_kallsyms_on_each_symbol;
		bool kallsyms_on_each_symbol;
		bool tracing_reset_all_online_cpus;
		bool rethook_find_ret_addr;
		bool ftrace_graph_ret_addr;
		bool create_event_filter;
		bool free_event_filter;
		bool __module_text_address;
		bool __module_address;
	} have;

	/* kernel/trace/trace_events.c: held around trace_add/remove_event_call. */
	struct mutex *event_mutex;
	/*
	 * kernel/trace/trace_events.c: every registered event, walked with
	 * event_mutex held to refuse a name that exists, as the kernel's
	 * probe events do (find_trace_event_call()).
	 */
	struct list_head *ftrace_events;
	/*
	 * kernel/trace/trace_probe.c: the probe events' message table.
	 * error_log keeps a pointer to the message table, not a copy, so the
	 * table must outlive this module: we log with the kernel's own.
	 */
	const char **trace_probe_err_text;
	/*
	 * include/asm-generic/vmlinux.lds.h: the bounds of the vmlinux BTF
	 * (section .BTF), for argument names, types and members
	 * (<argname>, $arg*, ->field). Optional: without them these
	 * features answer that BTF is not available.
	 */
	const u8 *start_btf;
	const u8 *stop_btf;
	/*
	 * arch/x86/kernel/rethook.c, arch/x86/kernel/ftrace_64.S: where a
	 * kretprobe (rethook) and the function graph (fprobe exits) make a
	 * hooked function return. Code, but only compared with return
	 * addresses, never called or jumped to. Optional, with the
	 * function that recovers the address each hides (below).
	 */
	const void *rethook_trampoline;
	const void *fgraph_return_handler;
	/*
	 * kernel/trace/trace.c: what the fast record path (src/shim/hit.c)
	 * must see to leave out trace_event_buffer_commit()'s layers: the
	 * static keys of tp_printk and of trace exports (while either is
	 * on, records take the full path), and the per-CPU flag the full
	 * path sets so that the next sched_switch saves the task's comm for
	 * `cat trace`. Optional: without them every record takes the full
	 * path.
	 */
	struct static_key *tracepoint_printk_key;
	struct static_key *trace_event_exports_enabled;
	unsigned long trace_taskinfo_save;	/* a per-CPU variable's address */
};

extern struct dynprobe_kernel_symbols dynprobe_ksyms;

/*
 * The stubs, each with the prototype of the kernel function it stands for
 * in the 7.2 source. Calling one calls that function; a stub's own body
 * runs only if the redirect is missing, which is a bug: it warns and
 * returns an error (0, NULL or -EOPNOTSUPP) or does nothing.
 */

/* kernel/kallsyms.c: @SYM fetch args, SYM+OFF places, the rest of this table. */
unsigned long dynprobe_call_kallsyms_lookup_name(const char *name);
/* fs/tracefs/inode.c: our own directory, and removing it on unload. */
struct dentry *dynprobe_call_tracefs_create_dir(const char *name,
						struct dentry *parent);
void dynprobe_call_tracefs_remove(struct dentry *dentry);
/* kernel/trace/trace.c: error_log entries with the caret. */
void dynprobe_call_tracing_log_err(struct trace_array *tr, const char *loc,
				   const char *cmd, const char **errs, u8 type,
				   u16 pos);
/*
 * kernel/kallsyms.c, kernel/module/kallsyms.c: counting the symbols of a
 * name, so that a probe on a non-unique symbol is refused
 * (NON_UNIQ_SYMBOL) as the kernel's kprobe events refuse it.
 */
int dynprobe_call_kallsyms_on_each_match_symbol(int (*fn)(void *,
							  unsigned long),
						const char *name, void *data);
int dynprobe_call_module_kallsyms_on_each_symbol(const char *modname,
						 int (*fn)(void *, const char *,
							   unsigned long),
						 void *data);
/*
 * kernel/kallsyms.c: every symbol of the kernel image, for the function
 * lists of f lines (`vfs_*,!vfs_fsync*`), which fprobe's own glob takes
 * only one of. Optional: call it only if dynprobe_ksyms has it.
 */
int dynprobe_call_kallsyms_on_each_symbol(int (*fn)(void *, const char *,
						    unsigned long),
					  void *data);
/*
 * kernel/trace/trace.c: after events are removed, empties the ring
 * buffers that hold their records (the tracing core marks them), as the
 * kernel's probe events do; else `cat trace` shows those records as of an
 * unknown type. Optional: call it only if dynprobe_ksyms has it.
 */
void dynprobe_call_tracing_reset_all_online_cpus(void);
/*
 * kernel/trace/rethook.c, kernel/trace/fgraph.c: the return address that
 * a rethook (kretprobes) or the function graph (fprobe exits) saved for
 * the call whose return address is at @frame or @retp, as the stack
 * unwinders recover it (arch/x86/include/asm/unwind.h). A return probe
 * needs them when the other kind hooked the same return first, and so
 * saved the first one's trampoline as the return address. Optional:
 * call each only if dynprobe_ksyms has it.
 */
unsigned long dynprobe_call_rethook_find_ret_addr(struct task_struct *tsk,
						  unsigned long frame,
						  struct llist_node **cur);
unsigned long dynprobe_call_ftrace_graph_ret_addr(struct task_struct *task,
						  int *idx, unsigned long ret,
						  unsigned long *retp);
/*
 * kernel/trace/trace_events_filter.c: an event probe's filter of its
 * source event's records, parsed by the kernel's filter parser (which
 * logs a bad filter in error_log itself) and matched with the exported
 * filter_match_preds(). Optional, both or neither: without them event
 * probes refuse filters. struct event_filter is the tracing core's own.
 */
int dynprobe_call_create_event_filter(struct trace_array *tr,
				      struct trace_event_call *call,
				      char *filter_str, bool set_str,
				      struct event_filter **filterp);
void dynprobe_call_free_event_filter(struct event_filter *filter);
/*
 * kernel/module/main.c: the module whose text holds an address, called
 * under RCU, so that arming an entry probe on a module's function holds
 * that module meanwhile, as fprobe does (a module that is going is not
 * hooked). Optional: without it, module functions use fprobe.
 */
struct module *dynprobe_call___module_text_address(unsigned long addr);
/*
 * kernel/module/main.c: the module whose memory (text or data) holds an
 * address, called under RCU, so that a watchpoint on a module's data
 * holds that module while it is armed and is never left on its memory
 * once it is freed. Optional: without it, watchpoints in the modules'
 * area are refused.
 */
struct module *dynprobe_call___module_address(unsigned long addr);

#endif /* DYNPROBE_RESOLVED_H */
