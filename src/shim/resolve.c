// SPDX-License-Identifier: GPL-2.0
/*
 * The one place where dynprobe resolves kernel symbols by name, and the
 * redirect through which it calls the unexported functions among them.
 *
 * kallsyms_lookup_name() itself is not exported since Linux 5.7; where its
 * body begins is read from a kprobe registered on it and removed again at
 * once. Every other symbol is then looked up with it. A missing symbol
 * fails the load with a message naming it and why it is needed, unless it
 * is optional: then only the feature it serves is unavailable.
 *
 * None of these functions is ever called through a pointer. With IBT the
 * kernel seals every function whose address vmlinux never takes (the
 * ENDBR at its start is overwritten at boot), which includes all of them,
 * and an indirect call to a sealed function is a #CP fault. dynprobe calls
 * instead, directly, a stub of its own with the same prototype
 * (dynprobe_call_<function>() in stubs.c), and the ftrace_ops below,
 * filtered on the stubs, moves the instruction pointer saved at the
 * stub's ftrace call site to the body of the kernel function, as live
 * patching redirects a patched function to its replacement. ftrace's
 * trampoline restores the argument registers and returns there with
 * `ret`, which IBT does not check; the kernel function then returns to
 * the stub's caller. So CET is never touched, no text is written but the
 * stubs' own call sites (by ftrace, as for any ftrace user), and no kernel
 * function becomes a new target of indirect branches.
 *
 * Documentation/design.md ("Calling unexported functions") has the
 * reasoning; tools/check-sealed checks the built module.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cache.h>
#include <linux/ftrace.h>
#include <linux/kallsyms.h>
#include <linux/kprobes.h>
#include <linux/module.h>
#include <linux/uaccess.h>
#include <asm/ibt.h>
#include "dynprobe/resolved.h"
#include "dynprobe/shim.h"

/*
 * Written only during module init: read-only afterwards, like the
 * function bodies below, so that a stray write cannot redirect a call.
 */
struct dynprobe_kernel_symbols dynprobe_ksyms __ro_after_init;

struct resolved_symbol {
	const char *name;
	const char *why;
	bool optional;		/* the load goes on without it */
	/* A function: where its body is kept, its stub, its have flag. */
	unsigned long *body;
	unsigned long stub;
	bool *have;
	/* An object: its entry in dynprobe_ksyms. */
	void **slot;
};

#define REQUIRED false
#define OPTIONAL true

/*
 * Every kernel symbol dynprobe resolves, and why. FUNCTION(name, ...) is
 * called through dynprobe_call_<name>() and the redirect; OBJECT(name,
 * field, ...) is used through its address, kept in dynprobe_ksyms.<field>.
 * kallsyms_lookup_name comes first: it is found by kprobe, the rest with it.
 */
#define RESOLVED_SYMBOLS(FUNCTION, OBJECT)				\
	FUNCTION(kallsyms_lookup_name, REQUIRED,			\
		 "resolving the other symbols, @SYM fetch args and SYM+OFF places") \
	OBJECT(event_mutex, event_mutex, REQUIRED,			\
	       "adding and removing trace events")			\
	FUNCTION(tracefs_create_dir, REQUIRED,				\
		 "creating tracefs dynprobe/")				\
	FUNCTION(tracefs_remove, REQUIRED,				\
		 "removing tracefs dynprobe/ on unload")		\
	FUNCTION(tracing_log_err, REQUIRED,				\
		 "reporting errors in error_log")			\
	OBJECT(trace_probe_err_text, trace_probe_err_text, REQUIRED,	\
	       "error_log messages that outlive the module")		\
	FUNCTION(kallsyms_on_each_match_symbol, REQUIRED,		\
		 "refusing non-unique probe symbols")			\
	FUNCTION(module_kallsyms_on_each_symbol, REQUIRED,		\
		 "refusing non-unique module probe symbols")		\
	FUNCTION(tracing_reset_all_online_cpus, OPTIONAL,		\
		 "dropping the records of removed events")		\
	/*								\
	 * Return probes whose return a kretprobe and the function	\
	 * graph both hooked: the trampolines are only compared with	\
	 * the return address, never called.				\
	 */								\
	FUNCTION(rethook_find_ret_addr, OPTIONAL,			\
		 "the caller on fprobe exits behind a kretprobe")	\
	OBJECT(arch_rethook_trampoline, rethook_trampoline, OPTIONAL,	\
	       "the caller on fprobe exits behind a kretprobe")	\
	FUNCTION(ftrace_graph_ret_addr, OPTIONAL,			\
		 "the caller on kretprobes behind an fprobe exit")	\
	OBJECT(return_to_handler, fgraph_return_handler, OPTIONAL,	\
	       "the caller on kretprobes behind an fprobe exit")	\
	FUNCTION(create_event_filter, OPTIONAL,				\
		 "filters of event probes")				\
	FUNCTION(free_event_filter, OPTIONAL,				\
		 "filters of event probes")				\
	/* Linker symbols, in kallsyms with CONFIG_KALLSYMS_ALL. */	\
	OBJECT(__start_BTF, start_btf, OPTIONAL,			\
	       "BTF argument names and members")			\
	OBJECT(__stop_BTF, stop_btf, OPTIONAL,				\
	       "BTF argument names and members")

/*
 * Where each resolved function's body begins (after its ENDBR slot), 0
 * while not resolved. Only the redirect reads these; they are kept here,
 * as numbers, so that no other code can call a function through them, and
 * read-only once the module is initialised: the redirect lands on them
 * with a `ret`, which IBT does not check, so they must not be writable.
 */
#define BODY_FIELD(sym, opt, reason)	unsigned long sym;
#define NO_FIELD(sym, field, opt, reason)

static struct {
	RESOLVED_SYMBOLS(BODY_FIELD, NO_FIELD)
} bodies __ro_after_init;

#define FUNCTION_ENTRY(sym, opt, reason)				\
	{ .name = #sym, .why = reason, .optional = opt,			\
	  .body = &bodies.sym, .have = &dynprobe_ksyms.have.sym,	\
	  .stub = (unsigned long)dynprobe_call_##sym },
#define OBJECT_ENTRY(sym, field, opt, reason)				\
	{ .name = #sym, .why = reason, .optional = opt,			\
	  .slot = (void **)&dynprobe_ksyms.field },

static const struct resolved_symbol resolved_symbols[] = {
	RESOLVED_SYMBOLS(FUNCTION_ENTRY, OBJECT_ENTRY)
};

/*
 * The same list, one ELF note (owner "dynprobe", type 1) per symbol, in a
 * section of the .ko that is not loaded, .note.dynprobe: "function NAME
 * stub STUB" or "object NAME". tools/check-sealed reads it to check that
 * every resolved function is reached only through its stub, and that no
 * object is a function the kernel seals.
 */
#define MANIFEST_LINE(line)						\
	asm(".pushsection .note.dynprobe, \"\", @note\n\t"		\
	    ".balign 4\n\t"						\
	    ".long 2f - 1f, 4f - 3f, 1\n"				\
	    "1:\t.asciz \"dynprobe\"\n"					\
	    "2:\t.balign 4\n"						\
	    "3:\t.asciz \"" line "\"\n"					\
	    "4:\t.balign 4\n\t"						\
	    ".popsection");
#define FUNCTION_MANIFEST(sym, opt, reason)				\
	MANIFEST_LINE("function " #sym " stub dynprobe_call_" #sym)
#define OBJECT_MANIFEST(sym, field, opt, reason)			\
	MANIFEST_LINE("object " #sym)

RESOLVED_SYMBOLS(FUNCTION_MANIFEST, OBJECT_MANIFEST)

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
static unsigned long body_of(unsigned long addr)
{
#ifdef CONFIG_X86_KERNEL_IBT
	u32 insn;

	if (!copy_from_kernel_nofault(&insn, (void *)addr, sizeof(insn)) &&
	    __is_endbr(insn))
		return addr + ENDBR_INSN_SIZE;
#endif
	return addr;
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
 * ENDBR). It calls nothing and reads only the table and the bodies, which
 * are written before the first call of the stub concerned, so it
 * needs no recursion protection and no RCU; notrace and kept from kprobes
 * because it runs inside ftrace's trampoline. A stub whose function is
 * not resolved is left alone: its body then reports the bug.
 */
static void notrace redirect_call(unsigned long ip, unsigned long parent_ip,
				  struct ftrace_ops *op,
				  struct ftrace_regs *fregs)
{
	int i;

	for (i = 0; i < ARRAY_SIZE(resolved_symbols); i++) {
		const struct resolved_symbol *sym = &resolved_symbols[i];
		unsigned long body;

		if (!sym->stub ||
		    (ip != sym->stub && ip != sym->stub + ENDBR_INSN_SIZE))
			continue;
		body = READ_ONCE(*sym->body);
		if (body)
			redirect_to(fregs, body);
		return;
	}
}
NOKPROBE_SYMBOL(redirect_call);

static struct ftrace_ops redirect_ops = {
	.func = redirect_call,
	.flags = REDIRECT_FLAGS,
};

static bool redirect_registered;

static int redirect_init(void)
{
	unsigned long stubs[ARRAY_SIZE(resolved_symbols)];
	unsigned int i, n = 0;
	int ret;

	for (i = 0; i < ARRAY_SIZE(resolved_symbols); i++) {
		if (resolved_symbols[i].stub)
			stubs[n++] = resolved_symbols[i].stub;
	}
	ret = ftrace_set_filter_ips(&redirect_ops, stubs, n, 0, 1);
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

static void redirect_exit(void)
{
	if (!redirect_registered)
		return;
	/* Waits until no CPU can be in redirect_call() any more. */
	unregister_ftrace_function(&redirect_ops);
	ftrace_free_filter(&redirect_ops);
	redirect_registered = false;
}

#else /* no ftrace_ops may change the instruction pointer */

static int redirect_init(void)
{
	pr_err("this kernel cannot redirect calls with ftrace (no CONFIG_DYNAMIC_FTRACE_WITH_ARGS or CONFIG_DYNAMIC_FTRACE_WITH_REGS): dynprobe cannot call the unexported functions it needs\n");
	return -EOPNOTSUPP;
}

static void redirect_exit(void)
{
}

#endif

static int find_kallsyms_lookup_name(void)
{
	struct kprobe kp = { .symbol_name = "kallsyms_lookup_name" };
	int ret;

	ret = register_kprobe(&kp);
	if (ret) {
		pr_err("cannot find kallsyms_lookup_name (kprobe: %d); needed to resolve unexported symbols\n",
		       ret);
		return ret;
	}
	/* A kprobe on a function sits after its ENDBR slot: the body. */
	WRITE_ONCE(bodies.kallsyms_lookup_name, (unsigned long)kp.addr);
	unregister_kprobe(&kp);
	return 0;
}

/*
 * Resolves every symbol and registers the redirect. On failure nothing
 * stays registered.
 */
int dynprobe_resolve_symbols(void)
{
	int i, ret;

	ret = find_kallsyms_lookup_name();
	if (ret)
		return ret;
	ret = redirect_init();
	if (ret)
		goto fail;

	for (i = 0; i < ARRAY_SIZE(resolved_symbols); i++) {
		const struct resolved_symbol *sym = &resolved_symbols[i];
		unsigned long addr;

		addr = dynprobe_call_kallsyms_lookup_name(sym->name);
		if (addr && sym->body)
			addr = body_of(addr);
		if (sym->body == &bodies.kallsyms_lookup_name) {
			/*
			 * It finds itself where its kprobe is only if the
			 * call just made reached it.
			 */
			if (addr == bodies.kallsyms_lookup_name) {
				*sym->have = true;
				continue;
			}
			pr_err("kallsyms_lookup_name, called through its stub, does not find itself: calls to unexported functions do not work\n");
			ret = -ENOENT;
			goto fail;
		}
		if (!addr && sym->optional) {
			pr_info("kernel symbol %s not found: no %s\n",
				sym->name, sym->why);
			continue;
		}
		if (!addr) {
			pr_err("kernel symbol %s not found; needed for %s\n",
			       sym->name, sym->why);
			ret = -ENOENT;
			goto fail;
		}
		if (sym->body) {
			WRITE_ONCE(*sym->body, addr);
			*sym->have = true;
		} else {
			*sym->slot = (void *)addr;
		}
	}
	return 0;

fail:
	dynprobe_resolve_exit();
	return ret;
}

/*
 * Called at module exit after everything else, and on a failed load once
 * nothing uses the stubs any more. The table is left as it is: it is
 * read-only by then, and freed with the module.
 */
void dynprobe_resolve_exit(void)
{
	redirect_exit();
}

/*
 * The kernel's table has no end marker and its length is not exported:
 * an index is read only if kallsyms puts its slot inside the table's
 * symbol. A symbol reaches to the next one, so alignment padding after
 * the table may pass as slots; they hold no message the caller accepts.
 */
int dynprobe_kernel_err_text(unsigned int index, char *buf, size_t len)
{
	const char **table = dynprobe_ksyms.trace_probe_err_text;
	char owner[KSYM_SYMBOL_LEN];
	const char *text;
	size_t i;

	if (!table || !len || len > INT_MAX)
		return -ENOENT;
	sprint_symbol_no_offset(owner, (unsigned long)&table[index]);
	if (strcmp(owner, "trace_probe_err_text"))
		return -ENOENT;
	if (copy_from_kernel_nofault(&text, &table[index], sizeof(text)))
		return -EFAULT;
	if (!text)
		return -ENOENT;
	/* strncpy_from_kernel_nofault() is not exported: byte by byte. */
	for (i = 0; i < len; i++) {
		if (copy_from_kernel_nofault(&buf[i], &text[i], 1))
			return -EFAULT;
		if (!buf[i])
			return i;
	}
	return -ERANGE;
}

static int count_symbol(void *data, unsigned long unused)
{
	(*(unsigned int *)data)++;
	return 0;
}

struct symbol_count {
	const char *name;
	unsigned int count;
	unsigned int module_symbols;
};

static int count_module_symbol(void *data, const char *name,
			       unsigned long unused)
{
	struct symbol_count *ctx = data;

	ctx->module_symbols++;
	if (!strcmp(name, ctx->name))
		ctx->count++;
	return 0;
}

/*
 * How many symbols are called @name: in vmlinux if there are any there
 * (module symbols do not shadow them), else in @module or all modules.
 * With @module, *@module_loaded tells whether that module is loaded (a
 * loaded module has symbols), so that a name missing from it can be told
 * from a module that may still come.
 */
unsigned int dynprobe_count_symbols(const char *module, const char *name,
				    bool *module_loaded)
{
	struct symbol_count ctx = { .name = name };

	if (!module) {
		dynprobe_call_kallsyms_on_each_match_symbol(count_symbol, name,
							    &ctx.count);
		if (ctx.count)
			return ctx.count;
	}
	dynprobe_call_module_kallsyms_on_each_symbol(module,
						     count_module_symbol, &ctx);
	*module_loaded = module && ctx.module_symbols;
	return ctx.count;
}

unsigned long dynprobe_lookup_symbol(const char *name)
{
	return dynprobe_call_kallsyms_lookup_name(name);
}

/*
 * The vmlinux BTF blob, or NULL when its bounds were not found or make no
 * sense. It is read-only data that lives as long as the kernel.
 */
const u8 *dynprobe_vmlinux_btf(size_t *len)
{
	const u8 *start = dynprobe_ksyms.start_btf;
	const u8 *stop = dynprobe_ksyms.stop_btf;

	if (!start || !stop || stop <= start)
		return NULL;
	*len = stop - start;
	return start;
}
