// SPDX-License-Identifier: GPL-2.0
/*
 * What the fetch interpreter needs from the kernel in a probe handler:
 * fault-tolerant memory reads, register arguments and stack slots (inline
 * helpers in the kernel, so wrapped here), the current comm and symbol
 * names. None of these sleep.
 */
#include <linux/dcache.h>
#include <linux/fs.h>
#include <linux/kallsyms.h>
#include <linux/kprobes.h>
#include <linux/ptrace.h>
#include <linux/sched.h>
#include <linux/uaccess.h>
#include "dynprobe/shim.h"

int dynprobe_read_kernel(void *dst, unsigned long addr, size_t len)
{
	return copy_from_kernel_nofault(dst, (void *)addr, len) ? -EFAULT : 0;
}
NOKPROBE_SYMBOL(dynprobe_read_kernel);

int dynprobe_read_user(void *dst, unsigned long addr, size_t len)
{
	return copy_from_user_nofault(dst, (void __user *)addr, len) ? -EFAULT : 0;
}
NOKPROBE_SYMBOL(dynprobe_read_user);

/* The user/kernel split of the kernel's own probe fetches (TASK_SIZE). */
bool dynprobe_is_user_address(unsigned long addr)
{
	return addr < TASK_SIZE;
}
NOKPROBE_SYMBOL(dynprobe_is_user_address);

void dynprobe_current_comm(u8 *dst, size_t len)
{
	strscpy_pad((char *)dst, current->comm, min_t(size_t, len, TASK_COMM_LEN));
}
NOKPROBE_SYMBOL(dynprobe_current_comm);

/* $current: the address of the current task's task_struct. */
unsigned long dynprobe_current_task(void)
{
	return (unsigned long)current;
}
NOKPROBE_SYMBOL(dynprobe_current_task);

/*
 * this_cpu_ptr() of a fetched value, as the kernel's FETCH_OP_CPU_PTR
 * takes it: handlers run with preemption off, so the CPU stays.
 */
unsigned long dynprobe_this_cpu_ptr(unsigned long addr)
{
	return (unsigned long)this_cpu_ptr((void __percpu *)addr);
}
NOKPROBE_SYMBOL(dynprobe_this_cpu_ptr);

/*
 * For the control and print paths, never a probe's hit (which has
 * dynprobe_record_symbol()): it puts KSYM_SYMBOL_LEN bytes on the stack.
 * As the tracing core prints a symbol (trace_seq_print_sym()): with the
 * offset, sprint_symbol()'s "SYM+0xOFF/0xSIZE [MOD]"; without, only the
 * name, as kallsyms_lookup() gives it (unexported): the " [MOD]" that
 * sprint_symbol_no_offset() adds for module symbols is cut off.
 */
size_t dynprobe_sprint_symbol(u8 *buf, size_t len, unsigned long addr,
			      bool with_offset)
{
	char tmp[KSYM_SYMBOL_LEN];
	size_t n;

	if (with_offset) {
		sprint_symbol(tmp, addr);
	} else {
		char *mod;

		sprint_symbol_no_offset(tmp, addr);
		mod = strrchr(tmp, ' ');
		if (mod && mod[1] == '[')
			*mod = '\0';
	}
	n = strnlen(tmp, sizeof(tmp));
	n = min(n, len);
	memcpy(buf, tmp, n);
	return n;
}

unsigned long dynprobe_regs_arg(struct pt_regs *regs, unsigned int n)
{
	return regs_get_kernel_argument(regs, n);
}
NOKPROBE_SYMBOL(dynprobe_regs_arg);

unsigned long dynprobe_regs_stack_nth(struct pt_regs *regs, unsigned int n)
{
	return regs_get_kernel_stack_nth(regs, n);
}
NOKPROBE_SYMBOL(dynprobe_regs_stack_nth);

/* Layout facts the :%pd and :%pD fetch types need (dentry name, file path). */
unsigned long dynprobe_dentry_name_offset(void)
{
	return offsetof(struct dentry, d_name.name);
}

unsigned long dynprobe_file_dentry_offset(void)
{
	return offsetof(struct file, f_path.dentry);
}
