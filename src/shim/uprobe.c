// SPDX-License-Identifier: GPL-2.0
/*
 * uprobes' hook: the probed file, held from the definition to its
 * removal, and a uprobe consumer registered while the event is enabled,
 * as kernel/trace/trace_uprobe.c does for the kernel's uprobe events;
 * the per-CPU buffers a hit assembles its record in, and the pool of
 * entry-data slots of a return probe with entry arguments. Function
 * events on user functions use it too, their records with a function
 * event's header. The probe is a Rust object (src/probe/hook/uprobe.rs)
 * that owns this one. C because the consumer's handlers read
 * instruction_pointer() and user_stack_pointer(), user memory is read
 * with copy_from_user(), the file's inode is d_real_inode(), all static
 * inlines, and the buffers are alloc_percpu()'s (a macro); struct path
 * and the consumer are kept here with them.
 */
#include <linux/dcache.h>
#include <linux/err.h>
#include <linux/minmax.h>
#include <linux/mutex.h>
#include <linux/namei.h>
#include <linux/path.h>
#include <linux/percpu.h>
#include <linux/preempt.h>
#include <linux/ptrace.h>
#include <linux/sched/task.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/uaccess.h>
#include <linux/uprobes.h>
#include "internal.h"

/*
 * Where a hit's record is assembled, as trace_uprobe's uprobe_cpu_buffer:
 * user memory is read with preemption on, so that pages can be faulted
 * in, which a CPU's scratch (hit.c) does not allow; the mutex keeps the
 * buffer to one task if it migrates meanwhile. @entry holds a return
 * probe's entry words while its record is written.
 */
struct record_buffer {
	struct mutex mutex;
	unsigned long entry[DYNPROBE_UPROBE_ENTRY_WORDS];
	u8 buf[DYNPROBE_RECORD_MAX];
};
static struct record_buffer __percpu *record_buffers;
/* Armed probes using the buffers; both under record_buffers_lock. */
static unsigned int record_buffer_users;
static DEFINE_MUTEX(record_buffers_lock);

static int record_buffers_get(void)
{
	int cpu, err = 0;

	mutex_lock(&record_buffers_lock);
	if (!record_buffer_users) {
		record_buffers = alloc_percpu(struct record_buffer);
		if (record_buffers)
			for_each_possible_cpu(cpu)
				mutex_init(&per_cpu_ptr(record_buffers, cpu)->mutex);
		else
			err = -ENOMEM;
	}
	if (!err)
		record_buffer_users++;
	mutex_unlock(&record_buffers_lock);
	return err;
}

/* Once no handler of the probe that used them runs. */
static void record_buffers_put(void)
{
	mutex_lock(&record_buffers_lock);
	if (!--record_buffer_users) {
		free_percpu(record_buffers);
		record_buffers = NULL;
	}
	mutex_unlock(&record_buffers_lock);
}

static struct record_buffer *record_buffer_lock(void)
{
	struct record_buffer *rb =
		per_cpu_ptr(record_buffers, raw_smp_processor_id());

	mutex_lock(&rb->mutex);
	return rb;
}

/*
 * A return probe's entry words, from its entry to its return: one slot a
 * call, the slot's index and generation in the uprobe's cookie (the
 * __u64 the consumer's two handlers share). The pool is allocated when
 * the probe is armed and freed when it is disarmed, so that a hit never
 * allocates; a call that finds it full is a miss, recorded neither at
 * entry nor at return.
 *
 * A return may never come: uprobes free a task's pending return
 * instances when it exits or execs (uprobe_free_utask()), when its stack
 * unwinds past them (longjmp) or when calls nest deeper than they
 * follow, without calling the return handler. So a slot keeps its owner
 * (with a reference, so that it can be looked at), the owner's exec
 * count and where its stack was at entry; a full pool takes over a slot
 * whose owner has exited or exec'd since, or one of the calling task's
 * own whose frame is gone (its stack is now above it). A return whose
 * slot was taken over finds another generation there and is a miss.
 */
struct entry_slot {
	struct task_struct *owner;	/* NULL: free */
	u64 exec_id;
	unsigned long sp;
	u32 gen;
	u32 next_free;
	unsigned long data[];
};

#define NO_SLOT U32_MAX
/* Slots of a pool: at least this many, or two per possible CPU. */
#define ENTRY_SLOTS_MIN 32

struct entry_pool {
	spinlock_t lock;
	u32 nr, words, stride, free, gen;
	u8 slots[];
};

static struct entry_slot *slot_at(struct entry_pool *pool, u32 i)
{
	return (struct entry_slot *)(pool->slots + (size_t)i * pool->stride);
}

static struct entry_pool *entry_pool_new(u32 words)
{
	u32 nr = max_t(u32, ENTRY_SLOTS_MIN, 2 * num_possible_cpus());
	u32 stride = struct_size_t(struct entry_slot, data, words);
	struct entry_pool *pool;
	u32 i;

	pool = kvzalloc(sizeof(*pool) + (size_t)nr * stride, GFP_KERNEL);
	if (!pool)
		return NULL;
	spin_lock_init(&pool->lock);
	pool->nr = nr;
	pool->words = words;
	pool->stride = stride;
	for (i = 0; i < nr; i++)
		slot_at(pool, i)->next_free = i + 1 < nr ? i + 1 : NO_SLOT;
	pool->free = 0;
	return pool;
}

/* Once no handler runs: the references on the owners go with it. */
static void entry_pool_free(struct entry_pool *pool)
{
	u32 i;

	for (i = 0; i < pool->nr; i++)
		if (slot_at(pool, i)->owner)
			put_task_struct(slot_at(pool, i)->owner);
	kvfree(pool);
}

/* Whether @slot's return can no longer come; @sp is the caller's stack. */
static bool slot_dead(const struct entry_slot *slot, unsigned long sp)
{
	const struct task_struct *t = slot->owner;

	if (READ_ONCE(t->self_exec_id) != slot->exec_id)
		return true;
	if (t == current)
		return slot->sp <= sp;
	return READ_ONCE(t->flags) & PF_EXITING;
}

/*
 * A slot for the current task's call, with @data's pool->words words;
 * false when the pool is full. @sp: the user stack at entry.
 */
static bool entry_slot_claim(struct entry_pool *pool, unsigned long sp,
			     const unsigned long *data, __u64 *cookie)
{
	struct task_struct *stale = NULL;
	struct entry_slot *slot;
	u32 i = pool->nr;

	spin_lock(&pool->lock);
	if (pool->free != NO_SLOT) {
		i = pool->free;
		slot = slot_at(pool, i);
		pool->free = slot->next_free;
	} else {
		for (i = 0; i < pool->nr; i++)
			if (slot_dead(slot_at(pool, i), sp))
				break;
		if (i == pool->nr) {
			spin_unlock(&pool->lock);
			return false;
		}
		slot = slot_at(pool, i);
		stale = slot->owner;
	}
	slot->owner = get_task_struct(current);
	slot->exec_id = current->self_exec_id;
	slot->sp = sp;
	if (!++pool->gen)
		pool->gen = 1;
	slot->gen = pool->gen;
	memcpy(slot->data, data, pool->words * sizeof(*data));
	*cookie = (u64)slot->gen << 32 | i;
	spin_unlock(&pool->lock);
	if (stale)
		put_task_struct(stale);
	return true;
}

/*
 * The entry words of @cookie's call into @data; false if its slot was
 * taken over. The slot is freed by its owner's return; a forked child,
 * which returns through a copy of its parent's pending returns, reads
 * it while its parent has not returned.
 */
static bool entry_slot_take(struct entry_pool *pool, __u64 cookie,
			    unsigned long *data)
{
	u32 i = lower_32_bits(cookie);
	struct task_struct *owner = NULL;
	struct entry_slot *slot;
	bool found = false;

	if (i >= pool->nr)
		return false;
	slot = slot_at(pool, i);
	spin_lock(&pool->lock);
	if (slot->owner && slot->gen == upper_32_bits(cookie)) {
		memcpy(data, slot->data, pool->words * sizeof(*data));
		found = true;
		if (slot->owner == current) {
			owner = slot->owner;
			slot->owner = NULL;
			slot->next_free = pool->free;
			pool->free = i;
		}
	}
	spin_unlock(&pool->lock);
	/* The current task's own reference: never its last. */
	if (owner)
		put_task_struct(owner);
	return found;
}

struct dynprobe_uprobe {
	struct uprobe_consumer consumer;
	/* Set while armed (uprobe_register()'s uprobe). */
	struct uprobe *uprobe;
	/* A return probe's entry words, while armed; NULL without them. */
	struct entry_pool *pool;
	u32 entry_words;
	atomic_long_t misses;
	struct path path;
	loff_t offset;
	loff_t ref_ctr_offset;
	const struct dynprobe_feed *feed;
	/* A function event's: records start __parent_ip, __ip. */
	bool function_event;
};

/*
 * A hit's record. A record of words (registers and entry words only)
 * reads no memory and is written as the other probes' are, with
 * preemption off; any other is assembled in this CPU's record buffer,
 * its user memory read where pages can be faulted in, then copied to the
 * event's instances and perf. @rb: the buffer if the caller holds it.
 */
static void uprobe_record(const struct dynprobe_feed *feed,
			  struct pt_regs *regs, struct record_buffer *rb,
			  const unsigned long *entry_data, unsigned long ip1,
			  unsigned long ip2)
{
	struct record_buffer *own = NULL;
	size_t len;

	if (feed->words) {
		preempt_disable_notrace();
		dynprobe_dispatch_user(feed, regs, entry_data, ip1, ip2);
		preempt_enable_notrace();
		return;
	}
	this_cpu_inc(*feed->nhit);
	if (!READ_ONCE(feed->sink->flags))
		return;
	if (!rb)
		rb = own = record_buffer_lock();
	len = dynprobe_rs_record_user(feed->def, regs, entry_data, rb->buf,
				      sizeof(rb->buf), ip1, ip2);
	preempt_disable_notrace();
	dynprobe_dispatch_user_record(feed, regs, rb->buf, len);
	preempt_enable_notrace();
	if (own)
		mutex_unlock(&own->mutex);
}

static int uprobe_hit(struct uprobe_consumer *self, struct pt_regs *regs,
		      __u64 *data)
{
	struct dynprobe_uprobe *up =
		container_of(self, struct dynprobe_uprobe, consumer);

	unsigned long ip = instruction_pointer(regs);

	/* A function event's parent is the return address on the stack. */
	if (up->function_event)
		uprobe_record(up->feed, regs, NULL, NULL,
			      dynprobe_user_stack_nth(regs, 0), ip);
	else
		uprobe_record(up->feed, regs, NULL, NULL, ip, 0);
	return 0;
}

/*
 * A return probe's entry: its entry words into a slot, whose cookie the
 * return gets; none left, the call is a miss and its return is not
 * followed (UPROBE_HANDLER_IGNORE).
 */
static int uretprobe_entry(struct uprobe_consumer *self, struct pt_regs *regs,
			   __u64 *data)
{
	struct dynprobe_uprobe *up =
		container_of(self, struct dynprobe_uprobe, consumer);
	struct record_buffer *rb = record_buffer_lock();
	bool claimed;

	dynprobe_rs_store_entry_user(up->feed->def, regs, rb->entry);
	claimed = entry_slot_claim(up->pool, user_stack_pointer(regs),
				   rb->entry, data);
	mutex_unlock(&rb->mutex);
	if (claimed)
		return 0;
	atomic_long_inc(&up->misses);
	return UPROBE_HANDLER_IGNORE;
}

static int uretprobe_hit(struct uprobe_consumer *self, unsigned long func,
			 struct pt_regs *regs, __u64 *data)
{
	struct dynprobe_uprobe *up =
		container_of(self, struct dynprobe_uprobe, consumer);
	unsigned long ip1 = func, ip2 = instruction_pointer(regs);
	struct record_buffer *rb;

	/* A function exit event's header is __parent_ip, __ip too. */
	if (up->function_event)
		swap(ip1, ip2);
	if (!up->pool) {
		uprobe_record(up->feed, regs, NULL, NULL, ip1, ip2);
		return 0;
	}
	rb = record_buffer_lock();
	if (data && entry_slot_take(up->pool, *data, rb->entry))
		uprobe_record(up->feed, regs, rb, rb->entry, ip1, ip2);
	else
		atomic_long_inc(&up->misses);
	mutex_unlock(&rb->mutex);
	return 0;
}

struct dynprobe_uprobe *dynprobe_uprobe_new(const char *path,
					    unsigned long offset,
					    unsigned long ref_ctr_offset,
					    bool ret, unsigned int entry_words,
					    const struct dynprobe_feed *feed)
{
	struct dynprobe_uprobe *up;
	int err;

	if (entry_words > DYNPROBE_UPROBE_ENTRY_WORDS || (entry_words && !ret))
		return ERR_PTR(-EINVAL);
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
	up->entry_words = entry_words;
	atomic_long_set(&up->misses, 0);
	if (ret) {
		up->consumer.ret_handler = uretprobe_hit;
		/* Both handlers: the entry's cookie reaches the return. */
		if (entry_words)
			up->consumer.handler = uretprobe_entry;
	} else {
		up->consumer.handler = uprobe_hit;
	}
	return up;
}

void dynprobe_uprobe_function_event(struct dynprobe_uprobe *up)
{
	up->function_event = true;
}

int dynprobe_uprobe_arm(struct dynprobe_uprobe *up)
{
	struct uprobe *uprobe;
	int err;

	if (up->uprobe)
		return 0;
	err = record_buffers_get();
	if (err)
		return err;
	if (up->entry_words) {
		up->pool = entry_pool_new(up->entry_words);
		if (!up->pool) {
			record_buffers_put();
			return -ENOMEM;
		}
	}
	uprobe = uprobe_register(d_real_inode(up->path.dentry), up->offset,
				 up->ref_ctr_offset, &up->consumer);
	if (IS_ERR(uprobe)) {
		if (up->pool)
			entry_pool_free(up->pool);
		up->pool = NULL;
		record_buffers_put();
		return PTR_ERR(uprobe);
	}
	up->uprobe = uprobe;
	return 0;
}

/*
 * As the kernel's uprobe events disable theirs: unregistered, then
 * waited for until no handler of it runs, so that the consumer can be
 * registered again or freed, and its buffers and pool with it. The
 * consumer's next registration has a new id, so pending returns of this
 * one never reach it.
 */
void dynprobe_uprobe_disarm(struct dynprobe_uprobe *up)
{
	if (!up->uprobe)
		return;
	uprobe_unregister_nosync(up->uprobe, &up->consumer);
	uprobe_unregister_sync();
	up->uprobe = NULL;
	if (up->pool)
		entry_pool_free(up->pool);
	up->pool = NULL;
	record_buffers_put();
}

void dynprobe_uprobe_free(struct dynprobe_uprobe *up)
{
	dynprobe_uprobe_disarm(up);
	path_put(&up->path);
	kfree(up);
}

u64 dynprobe_uprobe_misses(const struct dynprobe_uprobe *up)
{
	return atomic_long_read(&up->misses);
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

/*
 * Reads of the probed task's memory in its uprobe handler, where pages
 * can be faulted in, as trace_uprobe's probe_mem_read() and
 * fetch_store_string().
 */
int dynprobe_uprobe_read(void *dst, unsigned long addr, size_t len)
{
	return copy_from_user(dst, (const void __user *)addr, len) ? -EFAULT : 0;
}

long dynprobe_uprobe_read_str(u8 *dst, unsigned long addr, long len)
{
	return strncpy_from_user((char *)dst, (const char __user *)addr, len);
}

unsigned long dynprobe_user_stack_nth(struct pt_regs *regs, unsigned int n)
{
	unsigned long addr = user_stack_pointer(regs) + n * sizeof(long);
	unsigned long val;

	if (copy_from_user(&val, (const void __user *)addr, sizeof(val)))
		return 0;
	return val;
}
