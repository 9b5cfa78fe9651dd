// SPDX-License-Identifier: GPL-2.0
/*
 * dpbench: the target, the trigger and the "limit" contenders of
 * `make bench` (tools/bench/run, tools/bench/guest).
 *
 * dpbench_target(a, b, c, s) is a traceable, never-inlined function with
 * three register arguments, a kernel string argument (%cx) and a return
 * value. dpbench_idle_1000 ... dpbench_idle_1999 are 1000 traceable
 * functions that are never called: the "other" events of the scale test
 * sit on them, so they are enabled but never hit.
 *
 * The second target, in the kernel image, is mktime64(): where users put
 * their function events (vfs_read, schedule...) dynprobe hooks functions
 * of the kernel image through its shared ftrace_ops, those of modules
 * through fprobe, so both are timed. mktime64() is traceable, exported,
 * pure arithmetic with six register arguments, and nothing in the bench
 * guest calls it: its callers convert dates of RTC chips and of disk file
 * systems (FAT, ISO 9660, UDF...), which the guest has none of
 * (Documentation/benchmarks.md says how that was checked).
 *
 * Control file /sys/kernel/debug/dpbench/ctl, one command per write:
 *   target module|vmlinux
 *	which function run, prun and the hooks below use: dpbench_target
 *	(the default) or mktime64
 *   hook none|kprobe|ftrace|kprobe_rb|ftrace_rb|fprobe
 *	installs one of the in-module hooks on the target (none removes):
 *	kprobe     a bare kprobe, empty pre_handler
 *	ftrace     a bare ftrace_ops (register_ftrace_function, filter on the
 *		   target only), empty callback, FTRACE_OPS_FL_RECURSION
 *	*_rb       the same, plus a raw ring-buffer write per hit:
 *		   ring_buffer_lock_reserve() of rbsize bytes, filled with a
 *		   trace_entry-like header, the ip and the three arguments,
 *		   ring_buffer_unlock_commit(). The buffer is our own
 *		   (ring_buffer_alloc, 1 MiB per CPU, overwrite mode), not a
 *		   trace instance: this is the floor any trace event pays.
 *   rbsize BYTES   record size of the raw write (default 40, the size of a
 *		    kprobe or fprobe event with three 8-byte fields)
 *   run N	calls the target N times in a tight loop (mktime64 with
 *		arguments that change with each call)
 *   prun N	the same with a pause of a pseudo-random 0 to 255 turns of an
 *		empty loop before each call: for a profiler that samples
 *		every P instructions (tools/bench/run --profile), the tight
 *		loop repeats exactly and a sample would land on the same
 *		few instructions of each call; the pause spreads them
 * Reading ctl gives the last run: "ns_per_call_x1000 total_ns N".
 */
#include <linux/module.h>
#include <linux/debugfs.h>
#include <linux/kprobes.h>
#include <linux/ftrace.h>
#include <linux/fprobe.h>
#include <linux/ring_buffer.h>
#include <linux/ktime.h>
#include <linux/uaccess.h>
#include <linux/mutex.h>
#include <linux/sched.h>
#include <linux/time.h>

#define DPBENCH_NOINLINE noinline __noipa __used

static const char dpbench_string[] = "dpbench-string-argument";

long dpbench_target(unsigned long a, unsigned long b, unsigned long c,
		    const char *s);

DPBENCH_NOINLINE long dpbench_target(unsigned long a, unsigned long b,
				     unsigned long c, const char *s)
{
	return (long)(a ^ b ^ c) + s[0];
}
EXPORT_SYMBOL_GPL(dpbench_target);

/* 1000 distinct traceable functions, never called. */
#define I(n) unsigned long dpbench_idle_##n(unsigned long x); \
	DPBENCH_NOINLINE unsigned long dpbench_idle_##n(unsigned long x) \
	{ return x * n; }
#define I10(p) I(p##0) I(p##1) I(p##2) I(p##3) I(p##4) I(p##5) I(p##6) \
	I(p##7) I(p##8) I(p##9)
#define I100(p) I10(p##0) I10(p##1) I10(p##2) I10(p##3) I10(p##4) \
	I10(p##5) I10(p##6) I10(p##7) I10(p##8) I10(p##9)
I100(10) I100(11) I100(12) I100(13) I100(14)
I100(15) I100(16) I100(17) I100(18) I100(19)

struct dpbench_rec {		/* what a 3-argument event records */
	unsigned short type;
	unsigned char flags, preempt_count;
	int pid;
	unsigned long ip, a, b, c;
};

static struct trace_buffer *rb;
static unsigned int rbsize = sizeof(struct dpbench_rec);

static __always_inline void raw_write(unsigned long ip, unsigned long a,
				      unsigned long b, unsigned long c)
{
	struct ring_buffer_event *ev = ring_buffer_lock_reserve(rb, rbsize);
	struct dpbench_rec *r;

	if (!ev)
		return;
	r = ring_buffer_event_data(ev);
	if (rbsize >= sizeof(*r)) {
		r->type = 1;
		r->flags = 0;
		r->preempt_count = preempt_count();
		r->pid = current->pid;
		r->ip = ip;
		r->a = a;
		r->b = b;
		r->c = c;
	}
	ring_buffer_unlock_commit(rb);
}

static int kp_empty(struct kprobe *p, struct pt_regs *regs)
{
	return 0;
}

static int kp_rb(struct kprobe *p, struct pt_regs *regs)
{
	raw_write(instruction_pointer(regs), regs->di, regs->si, regs->dx);
	return 0;
}

static void ft_empty(unsigned long ip, unsigned long parent_ip,
		     struct ftrace_ops *op, struct ftrace_regs *fregs)
{
}

static void ft_rb(unsigned long ip, unsigned long parent_ip,
		  struct ftrace_ops *op, struct ftrace_regs *fregs)
{
	raw_write(ip, ftrace_regs_get_argument(fregs, 0),
		  ftrace_regs_get_argument(fregs, 1),
		  ftrace_regs_get_argument(fregs, 2));
}

/*
 * A bare fprobe with an empty entry handler: the floor under any
 * fprobe-based event (the kernel's fprobe events, dynprobe's function and
 * `f` events all ride the same fprobe layer).
 */
static int fp_empty(struct fprobe *fp, unsigned long entry_ip,
		    unsigned long ret_ip, struct ftrace_regs *fregs,
		    void *entry_data)
{
	return 0;
}

static bool on_vmlinux;

static struct kprobe kp;
static struct ftrace_ops fops;
static struct fprobe fp;
static enum { H_NONE, H_KPROBE, H_FTRACE, H_FPROBE } hooked;

static void unhook(void)
{
	if (hooked == H_KPROBE)
		unregister_kprobe(&kp);
	if (hooked == H_FPROBE)
		unregister_fprobe(&fp);
	if (hooked == H_FTRACE) {
		unregister_ftrace_function(&fops);
		ftrace_free_filter(&fops);
	}
	hooked = H_NONE;
}

static int hook(const char *how)
{
	static char module_sym[] = "dpbench_target", vmlinux_sym[] = "mktime64";
	char *sym = on_vmlinux ? vmlinux_sym : module_sym;
	int ret;

	unhook();
	if (!strcmp(how, "none"))
		return 0;
	if (!strcmp(how, "kprobe") || !strcmp(how, "kprobe_rb")) {
		memset(&kp, 0, sizeof(kp));
		kp.symbol_name = sym;
		kp.pre_handler = strcmp(how, "kprobe") ? kp_rb : kp_empty;
		ret = register_kprobe(&kp);
		if (!ret)
			hooked = H_KPROBE;
		return ret;
	}
	if (!strcmp(how, "ftrace") || !strcmp(how, "ftrace_rb")) {
		memset(&fops, 0, sizeof(fops));
		fops.func = strcmp(how, "ftrace") ? ft_rb : ft_empty;
		fops.flags = FTRACE_OPS_FL_RECURSION;
		ret = ftrace_set_filter(&fops, sym, strlen(sym), 1);
		if (ret)
			return ret;
		ret = register_ftrace_function(&fops);
		if (ret) {
			ftrace_free_filter(&fops);
			return ret;
		}
		hooked = H_FTRACE;
		return 0;
	}
	if (!strcmp(how, "fprobe")) {
		memset(&fp, 0, sizeof(fp));
		fp.entry_handler = fp_empty;
		ret = register_fprobe(&fp, sym, NULL);
		if (!ret)
			hooked = H_FPROBE;
		return ret;
	}
	return -EINVAL;
}

static DEFINE_MUTEX(lock);
static u64 last_total, last_n;
/* run() stores its sum here, so that its calls are not optimised away. */
static long sink;

static void run(u64 n, bool pause)
{
	const char *s = dpbench_string;
	long acc = 0;
	u32 x = 2463534242u;	/* xorshift32 state: the same pauses each run */
	u64 i, t0, t1;
	unsigned int k;

	t0 = ktime_get_ns();
	for (i = 0; i < n; i++) {
		if (pause) {
			x ^= x << 13;
			x ^= x >> 17;
			x ^= x << 5;
			for (k = x & 255; k; k--)
				barrier();
		}
		if (on_vmlinux)
			acc += mktime64(2000 + (i & 31), 1 + (i & 7), 1 + (i & 15),
					i & 15, i & 31, i & 31);
		else
			acc += dpbench_target(i, i + 1, i + 2, s);
	}
	t1 = ktime_get_ns();
	WRITE_ONCE(sink, acc);
	last_total = t1 - t0;
	last_n = n;
}

static ssize_t ctl_write(struct file *f, const char __user *ubuf, size_t len,
			 loff_t *ppos)
{
	char buf[64], *arg;
	u64 n;
	int ret;

	if (len >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, len))
		return -EFAULT;
	buf[len] = 0;
	strim(buf);
	arg = strchr(buf, ' ');
	if (!arg)
		return -EINVAL;
	*arg++ = 0;
	arg = skip_spaces(arg);

	mutex_lock(&lock);
	if (!strcmp(buf, "target")) {
		ret = 0;
		if (!strcmp(arg, "vmlinux") || !strcmp(arg, "module")) {
			unhook();
			on_vmlinux = arg[0] == 'v';
		} else {
			ret = -EINVAL;
		}
	} else if (!strcmp(buf, "hook")) {
		ret = hook(arg);
	} else if (!strcmp(buf, "rbsize")) {
		ret = kstrtou64(arg, 0, &n);
		if (!ret && (n < 8 || n > 1024))
			ret = -EINVAL;
		if (!ret)
			rbsize = n;
	} else if (!strcmp(buf, "run") || !strcmp(buf, "prun")) {
		ret = kstrtou64(arg, 0, &n);
		if (!ret && (!n || n > 100000000))
			ret = -EINVAL;
		if (!ret)
			run(n, buf[0] == 'p');
	} else {
		ret = -EINVAL;
	}
	mutex_unlock(&lock);
	return ret ?: len;
}

static ssize_t ctl_read(struct file *f, char __user *ubuf, size_t len,
			loff_t *ppos)
{
	char buf[80];
	int n;

	mutex_lock(&lock);
	n = scnprintf(buf, sizeof(buf), "%llu %llu %llu\n",
		      last_n ? div64_u64(last_total * 1000, last_n) : 0,
		      last_total, last_n);
	mutex_unlock(&lock);
	return simple_read_from_buffer(ubuf, len, ppos, buf, n);
}

static const struct file_operations ctl_fops = {
	.owner = THIS_MODULE,
	.read = ctl_read,
	.write = ctl_write,
	.llseek = default_llseek,
};

static struct dentry *dir;

static int __init dpbench_init(void)
{
	rb = ring_buffer_alloc(1 << 20, RB_FL_OVERWRITE);
	if (!rb)
		return -ENOMEM;
	dir = debugfs_create_dir("dpbench", NULL);
	debugfs_create_file("ctl", 0600, dir, NULL, &ctl_fops);
	return 0;
}

static void __exit dpbench_exit(void)
{
	debugfs_remove(dir);
	mutex_lock(&lock);
	unhook();
	mutex_unlock(&lock);
	ring_buffer_free(rb);
}

module_init(dpbench_init);
module_exit(dpbench_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("dynprobe benchmark: target, trigger and bare-hook contenders");
