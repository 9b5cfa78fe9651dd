// SPDX-License-Identifier: GPL-2.0
/*
 * Watchpoints' hook (w events): a wide hardware breakpoint, one per CPU
 * online when it is armed, on the watched data. Its overflow handler runs
 * in the debug exception, right after the accessing instruction, and hands
 * the hit to the hit path (hit.c) with that instruction's successor as
 * the ip, as the kernel's perf reports it. The Rust side
 * (src/probe/wprobe.rs) owns the object and arms it while the event is
 * enabled: breakpoints are a scarce resource (four debug registers on
 * x86), held only then.
 */
#include <linux/err.h>
#include <linux/hw_breakpoint.h>
#include <linux/kprobes.h>
#include <linux/perf_event.h>
#include <linux/slab.h>
#include "internal.h"

struct dynprobe_wprobe {
	struct perf_event * __percpu *bp;	/* NULL while disarmed */
	const struct dynprobe_feed *feed;
	struct perf_event_attr attr;
};

static void wprobe_hit(struct perf_event *bp, struct perf_sample_data *data,
		       struct pt_regs *regs)
{
	struct dynprobe_wprobe *wp = bp->overflow_handler_context;

	dynprobe_dispatch(wp->feed, regs, NULL, instruction_pointer(regs), 0);
}
NOKPROBE_SYMBOL(wprobe_hit);

struct dynprobe_wprobe *dynprobe_wprobe_new(unsigned long addr, u32 len,
					    u32 type,
					    const struct dynprobe_feed *feed)
{
	struct dynprobe_wprobe *wp = kzalloc(sizeof(*wp), GFP_KERNEL);

	if (!wp)
		return NULL;
	wp->feed = feed;
	hw_breakpoint_init(&wp->attr);
	wp->attr.bp_addr = addr;
	wp->attr.bp_len = len;
	wp->attr.bp_type = type;
	return wp;
}

int dynprobe_wprobe_arm(struct dynprobe_wprobe *wp)
{
	struct perf_event * __percpu *bp;

	if (wp->bp)
		return 0;
	/*
	 * The architecture checks the type, length and alignment here: x86
	 * refuses to watch reads alone (-EINVAL), as the debug registers
	 * cannot.
	 */
	bp = register_wide_hw_breakpoint(&wp->attr, wprobe_hit, wp);
	if (IS_ERR_PCPU(bp))
		return PTR_ERR_PCPU(bp);
	wp->bp = bp;
	return 0;
}

/*
 * Releasing the breakpoints removes them from every CPU by a call there,
 * which waits for a handler running on that CPU: none runs afterwards.
 */
void dynprobe_wprobe_disarm(struct dynprobe_wprobe *wp)
{
	if (!wp->bp)
		return;
	unregister_wide_hw_breakpoint(wp->bp);
	wp->bp = NULL;
}

void dynprobe_wprobe_free(struct dynprobe_wprobe *wp)
{
	if (!wp)
		return;
	dynprobe_wprobe_disarm(wp);
	kfree(wp);
}
