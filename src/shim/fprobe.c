// SPDX-License-Identifier: GPL-2.0
/*
 * The handlers of fprobe probes (f events, function events, and t events,
 * which are fprobes on a tracepoint's probestub), the few static inline
 * functions their Rust owners need (src/probe/hook/fprobe.rs, tprobe.rs),
 * and the module references an fprobe registered by address takes
 * (src/probe/hook/function_list.rs), and the lookup of a caller's address
 * behind a return trampoline that every return handler shares
 * (internal.h's dynprobe_real_return_address()). The handlers are C
 * because they are made of ftrace's static inline functions; they hand
 * each hit to the hit path (hit.c).
 */
#include <linux/fprobe.h>
#include <linux/ftrace.h>
#include <linux/module.h>
#include <linux/tracepoint.h>
#include "dynprobe/resolved.h"
#include "internal.h"

/*
 * On x86_64 ftrace_regs holds a pt_regs whose argument, stack pointer,
 * frame pointer, ip and return value registers are valid: the same
 * fetchers serve kprobes and fprobes.
 */
static int fprobe_entry(struct fprobe *fp, unsigned long entry_ip,
			unsigned long ret_ip, struct ftrace_regs *fregs,
			void *entry_data)
{
	struct dynprobe_fprobe *probe =
		container_of(fp, struct dynprobe_fprobe, fp);
	struct pt_regs *regs = ftrace_partial_regs(fregs, NULL);

	switch (probe->kind) {
	case DYNPROBE_FPROBE_ENTRY:
		dynprobe_dispatch_ftrace(probe->feed, fregs, regs,
					 NULL, entry_ip, 0);
		break;
	case DYNPROBE_FUNCTION_ENTRY:
		dynprobe_dispatch_ftrace(probe->feed, fregs, regs,
					 NULL, ret_ip, entry_ip);
		break;
	case DYNPROBE_TRACEPOINT:
		/*
		 * The stub runs once for every registration of it (other t
		 * probes, the kernel's own); ours carries this probe as data.
		 */
		if (ftrace_regs_get_argument(fregs, 0) == (unsigned long)probe)
			dynprobe_dispatch_ftrace(probe->feed, fregs, regs,
						 NULL, entry_ip, 0);
		break;
	default:
		/*
		 * Exit events: keep what the exit needs of the entry. Only those
		 * that keep something have this handler (dynprobe_fprobe_init()).
		 */
		dynprobe_rs_store_entry(probe->feed->def, regs, entry_data);
		break;
	}
	return 0;
}
NOKPROBE_SYMBOL(fprobe_entry);

static void fprobe_exit(struct fprobe *fp, unsigned long entry_ip,
			unsigned long ret_ip, struct ftrace_regs *fregs,
			void *entry_data)
{
	struct dynprobe_fprobe *probe =
		container_of(fp, struct dynprobe_fprobe, fp);
	struct pt_regs *regs = ftrace_partial_regs(fregs, NULL);
	const unsigned long *data = fp->entry_data_size ? entry_data : NULL;

	/*
	 * @ret_ip is what the function graph saved at entry: the rethook
	 * trampoline if a kretprobe hooked the return before it.
	 */
	ret_ip = dynprobe_real_return_address(ret_ip,
			dynprobe_return_slot(ftrace_regs_get_stack_pointer(fregs)));
	if (probe->kind == DYNPROBE_FPROBE_EXIT)
		dynprobe_dispatch_ftrace(probe->feed, fregs, regs,
					 data, entry_ip, ret_ip);
	else
		dynprobe_dispatch_ftrace(probe->feed, fregs, regs,
					 data, ret_ip, entry_ip);
}
NOKPROBE_SYMBOL(fprobe_exit);

/* internal.h's dynprobe_real_return_address(): @addr is a trampoline's. */
noinline unsigned long dynprobe_trampoline_return_address(unsigned long addr,
							  unsigned long *slot)
{
	if (addr == (unsigned long)dynprobe_ksyms.rethook_trampoline &&
	    dynprobe_ksyms.have.rethook_find_ret_addr) {
		struct llist_node *cur = NULL;
		unsigned long found;

		found = dynprobe_call_rethook_find_ret_addr(current,
							    (unsigned long)slot,
							    &cur);
		if (found)
			addr = found;
	}
	if (addr == (unsigned long)dynprobe_ksyms.fgraph_return_handler &&
	    dynprobe_ksyms.have.ftrace_graph_ret_addr) {
		int idx = 0;

		addr = dynprobe_call_ftrace_graph_ret_addr(current, &idx, addr,
							   slot);
	}
	return addr;
}
NOKPROBE_SYMBOL(dynprobe_trampoline_return_address);

void dynprobe_fprobe_init(struct dynprobe_fprobe *probe, bool exit,
			  unsigned int entry_data_size)
{
	/*
	 * An exit that keeps nothing of the entry has no entry handler: fprobe
	 * then records the return without calling one.
	 */
	if (!exit || entry_data_size)
		probe->fp.entry_handler = fprobe_entry;
	if (exit) {
		probe->fp.exit_handler = fprobe_exit;
		probe->fp.entry_data_size = entry_data_size;
	}
}

bool dynprobe_in_module_area(unsigned long addr)
{
	return addr >= MODULES_VADDR && addr < MODULES_END;
}

struct tracepoint *dynprobe_module_tracepoint(struct module *mod,
					      unsigned int i)
{
	if (i >= mod->num_tracepoints)
		return NULL;
	return tracepoint_ptr_deref(&mod->tracepoints_ptrs[i]);
}

bool dynprobe_within_module(unsigned long addr, struct module *mod)
{
	return within_module(addr, mod);
}

bool dynprobe_own_address(unsigned long addr)
{
	return within_module(addr, THIS_MODULE);
}

/*
 * An fprobe registered by address (function lists, MOD:SYM exits) holds
 * the module of each address, from the kallsyms walk that found it until
 * register_fprobe_ips() returns, as register_fprobe() does for its
 * pattern: the module cannot start going in between (rmmod fails while
 * it is held), so its going comes after the registration and fprobe's
 * module notifier unhooks it. Only a live module is held: one still in
 * its init is freed whatever its references if the init fails
 * (do_init_module()), and one going may be past fprobe's notifier; their
 * functions are not taken. It does not sleep: the walks call it from
 * their callback.
 */
struct module *dynprobe_hold_live_module(unsigned long addr)
{
	struct module *mod;

	if (!dynprobe_in_module_area(addr))
		return NULL;
	if (!dynprobe_ksyms.have.__module_text_address)
		return ERR_PTR(-EOPNOTSUPP);
	guard(rcu)();
	mod = dynprobe_call___module_text_address(addr);
	if (!mod || READ_ONCE(mod->state) != MODULE_STATE_LIVE ||
	    !try_module_get(mod))
		return ERR_PTR(-ENOENT);
	return mod;
}
