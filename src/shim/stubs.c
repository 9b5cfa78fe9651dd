// SPDX-License-Identifier: GPL-2.0
/*
 * The stubs through which dynprobe calls the unexported kernel functions it
 * resolves (see src/sys/kernel_symbols.rs, resolve.c and
 * include/dynprobe/resolved.h).
 *
 * Each stub has the prototype of its kernel function and is called by a
 * direct call. Its first instruction after ENDBR is the ftrace call site;
 * resolve.c's ftrace_ops, filtered on the stubs, sets the saved instruction
 * pointer to the kernel function's body, and ftrace's trampoline returns
 * there with the stub's arguments in their registers and the caller's
 * return address on the stack: the kernel function runs as if called
 * directly. No indirect branch reaches it, so its sealed ENDBR does not
 * matter.
 *
 * So the code after the call site is never meant to run. It does only if
 * the redirect is missing (not registered yet, or ftrace failed): that is
 * a bug, reported once (rate-limited after that), the module is pinned
 * (redirect_missing()), and the stub returns an error or does nothing,
 * which every caller handles.
 *
 * The stubs live in this file of their own, and __noipa (GCC's noipa)
 * keeps its interprocedural passes from looking into them, so that no
 * caller can assume anything from the body the redirect skips: not its
 * return value, not the registers or memory it leaves alone, not that two
 * stubs are the same code (Clang has no noipa; there the separate file and
 * OPTIMIZER_HIDE_VAR() do it, without LTO). They stay traceable (no
 * notrace): the ftrace call site is the redirect. Kprobes are kept off
 * them: a kprobe whose handler sets the instruction pointer (as error
 * injection's does) would replace the redirect. BPF trampolines are kept
 * off by Kbuild building this file without debug information: the stubs
 * have no BTF, which fentry/fexit programs need to name their target.
 *
 * What makes it C: each stub is a compiled function with an ftrace call
 * site of its own, built with the C flags that give it one and kept
 * opaque by __noipa and OPTIMIZER_HIDE_VAR() (a compiler attribute and a
 * macro).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/bug.h>
#include <linux/compiler.h>
#include <linux/err.h>
#include <linux/ftrace.h>
#include <linux/kallsyms.h>
#include <linux/kprobes.h>
#include <linux/module.h>
#include <linux/ratelimit.h>
#include <linux/rethook.h>
#include <linux/tracefs.h>
#include "dynprobe/resolved.h"
#include "dynprobe/shim.h"

/* Where the kernel's headers declare the function, the prototypes must match. */
#define SAME_PROTOTYPE(func) \
	static_assert(__same_type(&dynprobe_call_##func, &func))

#ifdef CONFIG_KALLSYMS
SAME_PROTOTYPE(kallsyms_lookup_name);
SAME_PROTOTYPE(kallsyms_on_each_match_symbol);
SAME_PROTOTYPE(kallsyms_on_each_symbol);
#ifdef CONFIG_MODULES
SAME_PROTOTYPE(module_kallsyms_on_each_symbol);
#endif
#endif
SAME_PROTOTYPE(tracefs_create_dir);
#ifdef CONFIG_MODULES
SAME_PROTOTYPE(__module_text_address);
SAME_PROTOTYPE(__module_address);
#endif
SAME_PROTOTYPE(tracefs_remove);
SAME_PROTOTYPE(rethook_find_ret_addr);
/* Without the function graph tracer, ftrace.h has an inline of it. */
SAME_PROTOTYPE(ftrace_graph_ret_addr);

/*
 * A stub's own body runs when ftrace did not redirect the call: the
 * redirect is not registered, or ftrace stopped (ftrace_kill() after a
 * failed change of the kernel text leaves call sites half patched and
 * refuses every later change). The first time it is a WARN (a bug, or
 * the state a bug left); later calls, which may come on every file
 * operation, only a rate-limited line. And the module is pinned for good:
 * the stubs' functions are not called any more, so an unload could not
 * remove dynprobe/ (tracefs_remove()) and would leave files whose
 * operations are in freed memory, a use after free on their next open.
 * rmmod is refused instead. During init that pin is moot: init fails (its
 * first call through a stub checks the redirect) and the module goes,
 * having created nothing.
 */
static atomic_t redirect_failed = ATOMIC_INIT(0);

/* notrace: this file keeps ftrace call sites for the stubs alone. */
static notrace long redirect_missing(const char *func, long ret)
{
	if (!atomic_xchg(&redirect_failed, 1)) {
		__module_get(THIS_MODULE);
		/* pr_err too: without CONFIG_BUG, WARN says nothing. */
		pr_err("call to %s was not redirected by ftrace; not called. dynprobe stays loaded: it could not remove its files\n",
		       func);
		WARN_ON(1);
	} else {
		pr_err_ratelimited("call to %s was not redirected by ftrace; not called\n",
				   func);
	}
	/*
	 * During the unload the pin is too late: dynprobe/ may stay behind,
	 * so the unload must not end (resolve.c).
	 */
	if (THIS_MODULE->state == MODULE_STATE_GOING)
		dynprobe_ftrace_stuck("the calls to unexported functions",
				      -ENODEV);
	/* Opaque to the optimizer, whatever the build. */
	OPTIMIZER_HIDE_VAR(ret);
	return ret;
}

noinline __noipa unsigned long
dynprobe_call_kallsyms_lookup_name(const char *name)
{
	return redirect_missing("kallsyms_lookup_name", 0);
}
NOKPROBE_SYMBOL(dynprobe_call_kallsyms_lookup_name);

noinline __noipa struct dentry *
dynprobe_call_tracefs_create_dir(const char *name, struct dentry *parent)
{
	return ERR_PTR(redirect_missing("tracefs_create_dir", -EOPNOTSUPP));
}
NOKPROBE_SYMBOL(dynprobe_call_tracefs_create_dir);

noinline __noipa void dynprobe_call_tracefs_remove(struct dentry *dentry)
{
	redirect_missing("tracefs_remove", 0);
}
NOKPROBE_SYMBOL(dynprobe_call_tracefs_remove);

noinline __noipa void
dynprobe_call_tracing_log_err(struct trace_array *tr, const char *loc,
			      const char *cmd, const char **errs, u8 type,
			      u16 pos)
{
	redirect_missing("tracing_log_err", 0);
}
NOKPROBE_SYMBOL(dynprobe_call_tracing_log_err);

noinline __noipa int
dynprobe_call_kallsyms_on_each_match_symbol(int (*fn)(void *, unsigned long),
					    const char *name, void *data)
{
	return redirect_missing("kallsyms_on_each_match_symbol", -EOPNOTSUPP);
}
NOKPROBE_SYMBOL(dynprobe_call_kallsyms_on_each_match_symbol);

noinline __noipa int
dynprobe_call_kallsyms_on_each_symbol(int (*fn)(void *, const char *,
					       unsigned long),
				      void *data)
{
	return redirect_missing("kallsyms_on_each_symbol", -EOPNOTSUPP);
}
NOKPROBE_SYMBOL(dynprobe_call_kallsyms_on_each_symbol);

noinline __noipa int
dynprobe_call_module_kallsyms_on_each_symbol(const char *modname,
					     int (*fn)(void *, const char *,
						       unsigned long),
					     void *data)
{
	return redirect_missing("module_kallsyms_on_each_symbol", -EOPNOTSUPP);
}
NOKPROBE_SYMBOL(dynprobe_call_module_kallsyms_on_each_symbol);

noinline __noipa void dynprobe_call_tracing_reset_all_online_cpus(void)
{
	redirect_missing("tracing_reset_all_online_cpus", 0);
}
NOKPROBE_SYMBOL(dynprobe_call_tracing_reset_all_online_cpus);

noinline __noipa unsigned long
dynprobe_call_rethook_find_ret_addr(struct task_struct *tsk,
				    unsigned long frame,
				    struct llist_node **cur)
{
	return redirect_missing("rethook_find_ret_addr", 0);
}
NOKPROBE_SYMBOL(dynprobe_call_rethook_find_ret_addr);

noinline __noipa unsigned long
dynprobe_call_ftrace_graph_ret_addr(struct task_struct *task, int *idx,
				    unsigned long ret, unsigned long *retp)
{
	return redirect_missing("ftrace_graph_ret_addr", ret);
}
NOKPROBE_SYMBOL(dynprobe_call_ftrace_graph_ret_addr);

noinline __noipa int
dynprobe_call_create_event_filter(struct trace_array *tr,
				  struct trace_event_call *call,
				  char *filter_str, bool set_str,
				  struct event_filter **filterp)
{
	return redirect_missing("create_event_filter", -EOPNOTSUPP);
}
NOKPROBE_SYMBOL(dynprobe_call_create_event_filter);

noinline __noipa void dynprobe_call_free_event_filter(struct event_filter *filter)
{
	redirect_missing("free_event_filter", 0);
}
NOKPROBE_SYMBOL(dynprobe_call_free_event_filter);

noinline __noipa struct module *
dynprobe_call___module_text_address(unsigned long addr)
{
	redirect_missing("__module_text_address", 0);
	return NULL;
}
NOKPROBE_SYMBOL(dynprobe_call___module_text_address);

noinline __noipa struct module *
dynprobe_call___module_address(unsigned long addr)
{
	redirect_missing("__module_address", 0);
	return NULL;
}
NOKPROBE_SYMBOL(dynprobe_call___module_address);
