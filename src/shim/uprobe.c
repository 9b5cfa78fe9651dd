// SPDX-License-Identifier: GPL-2.0
/*
 * uprobes' hook: the probed file, held from the definition to its
 * removal, and a uprobe consumer registered while the event is enabled,
 * as kernel/trace/trace_uprobe.c does for the kernel's uprobe events.
 * The probe is a Rust object (src/probe/hook/uprobe.rs) that owns this
 * one. Function events on user functions use it too, with handlers
 * that give their records a function event's header. C because the consumer's handlers read instruction_pointer() and
 * user_stack_pointer(), and the file's inode is d_real_inode(), all
 * static inlines; struct path and the consumer are kept here with them.
 */
#include <linux/dcache.h>
#include <linux/err.h>
#include <linux/namei.h>
#include <linux/path.h>
#include <linux/preempt.h>
#include <linux/ptrace.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/uprobes.h>
#include "internal.h"

struct dynprobe_uprobe {
	struct uprobe_consumer consumer;
	/* Set while armed (uprobe_register()'s uprobe). */
	struct uprobe *uprobe;
	struct path path;
	loff_t offset;
	loff_t ref_ctr_offset;
	const struct dynprobe_feed *feed;
};

/*
 * The hit path's per-CPU scratch wants preemption off; uprobe handlers
 * run in the task with it on. The record reads user memory without
 * faulting pages in (dynprobe_user_stack_nth(), and the fetch programs'
 * user reads are copy_from_user_nofault()'s).
 */
static int uprobe_hit(struct uprobe_consumer *self, struct pt_regs *regs,
		      __u64 *data)
{
	struct dynprobe_uprobe *up =
		container_of(self, struct dynprobe_uprobe, consumer);

	preempt_disable_notrace();
	dynprobe_dispatch_user(up->feed, regs, instruction_pointer(regs), 0);
	preempt_enable_notrace();
	return 0;
}

static int uretprobe_hit(struct uprobe_consumer *self, unsigned long func,
			 struct pt_regs *regs, __u64 *data)
{
	struct dynprobe_uprobe *up =
		container_of(self, struct dynprobe_uprobe, consumer);

	preempt_disable_notrace();
	dynprobe_dispatch_user(up->feed, regs, func, instruction_pointer(regs));
	preempt_enable_notrace();
	return 0;
}

/*
 * A function event on a user function: the header is __parent_ip, __ip,
 * as a kernel function event's. At entry the return address is the word
 * at the user stack pointer; at return it is where the task returns to.
 */
static int ufunc_hit(struct uprobe_consumer *self, struct pt_regs *regs,
		     __u64 *data)
{
	struct dynprobe_uprobe *up =
		container_of(self, struct dynprobe_uprobe, consumer);

	preempt_disable_notrace();
	dynprobe_dispatch_user(up->feed, regs, dynprobe_user_stack_nth(regs, 0),
			       instruction_pointer(regs));
	preempt_enable_notrace();
	return 0;
}

static int ufunc_ret_hit(struct uprobe_consumer *self, unsigned long func,
			 struct pt_regs *regs, __u64 *data)
{
	struct dynprobe_uprobe *up =
		container_of(self, struct dynprobe_uprobe, consumer);

	preempt_disable_notrace();
	dynprobe_dispatch_user(up->feed, regs, instruction_pointer(regs), func);
	preempt_enable_notrace();
	return 0;
}

struct dynprobe_uprobe *dynprobe_uprobe_new(const char *path,
					    unsigned long offset,
					    unsigned long ref_ctr_offset,
					    bool ret,
					    const struct dynprobe_feed *feed)
{
	struct dynprobe_uprobe *up;
	int err;

	up = kzalloc_obj(*up, GFP_KERNEL);
	if (!up)
		return ERR_PTR(-ENOMEM);
	err = kern_path(path, LOOKUP_FOLLOW, &up->path);
	if (err) {
		kfree(up);
		return ERR_PTR(err);
	}
	if (!d_is_reg(up->path.dentry)) {
		path_put(&up->path);
		kfree(up);
		return ERR_PTR(-EINVAL);
	}
	up->offset = offset;
	up->ref_ctr_offset = ref_ctr_offset;
	up->feed = feed;
	if (ret)
		up->consumer.ret_handler = uretprobe_hit;
	else
		up->consumer.handler = uprobe_hit;
	return up;
}

void dynprobe_uprobe_function_event(struct dynprobe_uprobe *up)
{
	if (up->consumer.ret_handler)
		up->consumer.ret_handler = ufunc_ret_hit;
	else
		up->consumer.handler = ufunc_hit;
}

int dynprobe_uprobe_arm(struct dynprobe_uprobe *up)
{
	struct uprobe *uprobe;

	if (up->uprobe)
		return 0;
	uprobe = uprobe_register(d_real_inode(up->path.dentry), up->offset,
				 up->ref_ctr_offset, &up->consumer);
	if (IS_ERR(uprobe))
		return PTR_ERR(uprobe);
	up->uprobe = uprobe;
	return 0;
}

/*
 * As the kernel's uprobe events disable theirs: unregistered, then
 * waited for until no handler of it runs, so that the consumer can be
 * registered again or freed.
 */
void dynprobe_uprobe_disarm(struct dynprobe_uprobe *up)
{
	if (!up->uprobe)
		return;
	uprobe_unregister_nosync(up->uprobe, &up->consumer);
	uprobe_unregister_sync();
	up->uprobe = NULL;
}

void dynprobe_uprobe_free(struct dynprobe_uprobe *up)
{
	dynprobe_uprobe_disarm(up);
	path_put(&up->path);
	kfree(up);
}

int dynprobe_user_file(const char *path)
{
	struct path p;
	int err, kind;

	err = kern_path(path, LOOKUP_FOLLOW, &p);
	if (err)
		return err;
	kind = d_is_reg(p.dentry) ? 0 : 1;
	path_put(&p);
	return kind;
}

unsigned long dynprobe_user_stack_nth(struct pt_regs *regs, unsigned int n)
{
	unsigned long addr = user_stack_pointer(regs) + n * sizeof(long);
	unsigned long val;

	if (copy_from_user_nofault(&val, (const void __user *)addr,
				   sizeof(val)))
		return 0;
	return val;
}
