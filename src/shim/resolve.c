// SPDX-License-Identifier: GPL-2.0
/*
 * The C half of calling unexported kernel functions (the table, the
 * lookups and the reasons are src/sys/kernel_symbols.rs): the ftrace_ops
 * filtered on dynprobe's stubs (stubs.c) that moves the instruction
 * pointer saved at a stub's ftrace call site to the body of its kernel
 * function, as live patching redirects a patched function to its
 * replacement. ftrace's trampoline restores the argument registers and
 * returns there with `ret`, which IBT does not check; the kernel function
 * then returns to the stub's caller. So CET is never touched, no text is
 * written but the stubs' own call sites (by ftrace, as for any ftrace
 * user), and no kernel function becomes a new target of indirect
 * branches. It is C for ftrace_regs' static inline accessors and because
 * the callback is the ftrace_ops' function.
 *
 * Documentation/design.md ("Calling unexported functions") has the
 * reasoning; tools/check/sealed checks the built module.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/cache.h>
#include <linux/ftrace.h>
#include <linux/kprobes.h>
#include <linux/module.h>
#include <linux/sched.h>
#include <linux/uaccess.h>
#include <asm/ibt.h>
#include "dynprobe/resolved.h"
#include "dynprobe/shim.h"

/*
 * Written only during module init (src/sys/kernel_symbols.rs): read-only
 * afterwards, so that a stray write cannot change what is called.
 */
struct dynprobe_kernel_symbols dynprobe_ksyms __ro_after_init;

/*
 * Where a function's body begins: after the ENDBR slot at its start, if it
 * has one. That slot holds ENDBR64, or once sealed the poison
 * gen_endbr_poison() writes (0f 1f 40 d6, "nopl -42(%rax)", a 4-byte NOP
 * chosen to mark former ENDBRs; arch/x86/kernel/alternative.c). Either is
 * only a landing pad for indirect branches, meaningless to a `ret`, and
 * __is_endbr() recognises both. Landing right after it is what kprobes
 * report as the function's entry (arch_adjust_kprobe_addr()), and it is
 * the function's own ftrace call site: whoever traces or live-patches the
 * kernel function still sees the call.
 */
unsigned long dynprobe_body_of(unsigned long addr)
{
#ifdef CONFIG_X86_KERNEL_IBT
	u32 insn;

	if (!copy_from_kernel_nofault(&insn, (void *)addr, sizeof(insn)) &&
	    __is_endbr(insn))
		return addr + ENDBR_INSN_SIZE;
#endif
	return addr;
}

/*
 * ftrace refuses every change once it has stopped itself (ftrace_kill(),
 * after a failed change of the kernel text: ftrace_is_dead()), and
 * unregister_ftrace_function() then fails with -ENODEV, leaving the
 * ftrace_ops on ftrace's lists with its callback in this module: freeing
 * the module would leave ftrace calling freed memory. The same if a stub
 * was not redirected during the unload (stubs.c): dynprobe/ may stay.
 * So the module is pinned (rmmod refused) from the first failure on,
 * reported once.
 */
static atomic_t ftrace_refused = ATOMIC_INIT(0);

void dynprobe_ftrace_stuck(const char *what, int err)
{
	if (atomic_xchg(&ftrace_refused, 1))
		return;
	__module_get(THIS_MODULE);
	pr_err("ftrace no longer serves %s (%d): dynprobe stays loaded\n",
	       what, err);
}

/*
 * A refusal during the unload itself (the module's exit function runs
 * with its reference count at zero, and nothing can stop it any more):
 * the unload never ends, so that the module's memory stays. The task
 * sleeps for good, counted neither as load nor as a hung task.
 */
static void park_if_ftrace_refused(void)
{
	if (!atomic_read(&ftrace_refused))
		return;
	pr_emerg("an ftrace_ops of dynprobe stays registered: this unload never ends\n");
	for (;;) {
		set_current_state(TASK_IDLE);
		schedule();
	}
}

#if defined(CONFIG_DYNAMIC_FTRACE_WITH_ARGS) || \
	defined(CONFIG_DYNAMIC_FTRACE_WITH_REGS)

/*
 * With ftrace_regs carrying the arguments (x86_64), ftrace_caller honours
 * a changed instruction pointer without SAVE_REGS, as for live patching.
 * PERMANENT: while the redirect is registered, ftrace cannot be switched
 * off through sysctl kernel.ftrace_enabled, which would leave the stubs
 * running their own bodies.
 */
#ifdef CONFIG_DYNAMIC_FTRACE_WITH_ARGS
#define REDIRECT_FLAGS	(FTRACE_OPS_FL_IPMODIFY | FTRACE_OPS_FL_PERMANENT)

static __always_inline void redirect_to(struct ftrace_regs *fregs,
					unsigned long ip)
{
	ftrace_regs_set_instruction_pointer(fregs, ip);
}
#else
#define REDIRECT_FLAGS	(FTRACE_OPS_FL_SAVE_REGS | FTRACE_OPS_FL_IPMODIFY | \
			 FTRACE_OPS_FL_PERMANENT)

static __always_inline void redirect_to(struct ftrace_regs *fregs,
					unsigned long ip)
{
	instruction_pointer_set(ftrace_get_regs(fregs), ip);
}
#endif

/*
 * Runs at the ftrace call site of a stub (@ip: the stub, or just after its
 * ENDBR). It calls only dynprobe_rs_redirect_body(), which reads the
 * table and the bodies, written before the first call of the stub
 * concerned, so it needs no recursion protection and no RCU; notrace and
 * kept from kprobes because it runs inside ftrace's trampoline. A stub
 * whose function is not resolved is left alone: its body then reports the
 * bug.
 */
static void notrace redirect_call(unsigned long ip, unsigned long parent_ip,
				  struct ftrace_ops *op,
				  struct ftrace_regs *fregs)
{
	unsigned long body = dynprobe_rs_redirect_body(ip, ENDBR_INSN_SIZE);

	if (body)
		redirect_to(fregs, body);
}
NOKPROBE_SYMBOL(redirect_call);

static struct ftrace_ops redirect_ops = {
	.func = redirect_call,
	.flags = REDIRECT_FLAGS,
};

static bool redirect_registered;

int dynprobe_redirect_register(const unsigned long *stubs, unsigned int n)
{
	int ret;

	ret = ftrace_set_filter_ips(&redirect_ops, (unsigned long *)stubs, n,
				    0, 1);
	if (ret) {
		pr_err("cannot hook the stubs for calling unexported kernel functions (ftrace filter: %d)\n",
		       ret);
		return ret;
	}
	ret = register_ftrace_function(&redirect_ops);
	if (ret) {
		pr_err("cannot register the ftrace_ops that calls unexported kernel functions (%d%s)\n",
		       ret, ret == -EBUSY ?
		       ": kernel.ftrace_enabled is 0, or another ftrace_ops modifies the instruction pointer on a stub" :
		       "");
		ftrace_free_filter(&redirect_ops);
		return ret;
	}
	redirect_registered = true;
	return 0;
}

void dynprobe_redirect_unregister(void)
{
	int ret;

	if (!redirect_registered)
		return;
	/* Waits until no CPU can be in redirect_call() any more. */
	ret = unregister_ftrace_function(&redirect_ops);
	if (ret)
		dynprobe_ftrace_stuck("the redirect of calls to unexported functions",
				      ret);
	else
		ftrace_free_filter(&redirect_ops);
	redirect_registered = false;
	/* Last at unload and on a failed load: every other ops is gone. */
	park_if_ftrace_refused();
}

#else /* no ftrace_ops may change the instruction pointer */

int dynprobe_redirect_register(const unsigned long *stubs, unsigned int n)
{
	pr_err("this kernel cannot redirect calls with ftrace (no CONFIG_DYNAMIC_FTRACE_WITH_ARGS or CONFIG_DYNAMIC_FTRACE_WITH_REGS): dynprobe cannot call the unexported functions it needs\n");
	return -EOPNOTSUPP;
}

void dynprobe_redirect_unregister(void)
{
	park_if_ftrace_refused();
}

#endif

