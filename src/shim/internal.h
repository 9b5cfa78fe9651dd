/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shared between the C shims for the hit path (hit.c) and the probe
 * handlers (kprobe.c, fprobe.c, fentry.c).
 */
#ifndef DYNPROBE_SHIM_INTERNAL_H
#define DYNPROBE_SHIM_INTERNAL_H

#include <linux/fprobe.h>
#include <linux/kprobes.h>
#include <linux/trace_events.h>
#include "dynprobe/shim.h"

/* hit.c: the common path of every hit. */
void dynprobe_dispatch(const struct dynprobe_feed *feed, struct pt_regs *regs,
		       const unsigned long *entry_data, unsigned long ip1,
		       unsigned long ip2);

/* kprobe.c: the caller of a returning function (see there). */
unsigned long dynprobe_real_return_address(unsigned long addr,
					   unsigned long *slot);

/*
 * Where the return address of a function that has just returned was:
 * right below the stack pointer, which its `ret` has moved past it. Both
 * return trampolines report that stack pointer in the registers they
 * hand over (arch_rethook_trampoline_callback(), return_to_handler).
 */
static __always_inline unsigned long *dynprobe_return_slot(unsigned long sp)
{
	return (unsigned long *)sp - 1;
}

#endif /* DYNPROBE_SHIM_INTERNAL_H */
