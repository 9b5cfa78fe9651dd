// SPDX-License-Identifier: GPL-2.0
/*
 * The one place where dynprobe resolves kernel symbols by name.
 *
 * kallsyms_lookup_name() itself is not exported since Linux 5.7; its
 * address is read from a kprobe registered on it and removed again at
 * once. Every other symbol is then looked up with it. A missing symbol
 * fails the load with a message naming it and why it is needed, unless it
 * is optional: then only the feature it serves is unavailable.
 */
#include <linux/kprobes.h>
#include <linux/module.h>
#include "dynprobe/resolved.h"
#include "dynprobe/shim.h"

struct dynprobe_kernel_symbols dynprobe_ksyms;

struct resolved_symbol {
	const char *name;
	const char *why;
	bool is_function;
	void **slot;
	bool optional;		/* the load goes on without it */
};

#define SLOT(field) ((void **)&dynprobe_ksyms.field)

static const struct resolved_symbol resolved_symbols[] = {
	{ "event_mutex", "adding and removing trace events", false,
	  SLOT(event_mutex) },
	{ "tracefs_create_dir", "creating tracefs dynprobe/", true,
	  SLOT(tracefs_create_dir) },
	{ "tracefs_remove", "removing tracefs dynprobe/ on unload", true,
	  SLOT(tracefs_remove) },
	{ "tracing_log_err", "reporting errors in error_log", true,
	  SLOT(tracing_log_err) },
	{ "trace_probe_err_text", "error_log messages that outlive the module",
	  false, SLOT(trace_probe_err_text) },
	{ "kallsyms_on_each_match_symbol", "refusing non-unique probe symbols",
	  true, SLOT(kallsyms_on_each_match_symbol) },
	{ "module_kallsyms_on_each_symbol",
	  "refusing non-unique module probe symbols", true,
	  SLOT(module_kallsyms_on_each_symbol) },
	{ .name = "tracing_reset_all_online_cpus",
	  .why = "dropping the records of removed events", .is_function = true,
	  .slot = SLOT(tracing_reset_all_online_cpus), .optional = true },
	/* Linker symbols, in kallsyms with CONFIG_KALLSYMS_ALL. */
	{ .name = "__start_BTF", .why = "BTF argument names and members",
	  .slot = SLOT(start_btf), .optional = true },
	{ .name = "__stop_BTF", .why = "BTF argument names and members",
	  .slot = SLOT(stop_btf), .optional = true },
};

/*
 * With IBT an indirect call must land on an ENDBR instruction. kprobes
 * place themselves after it, and the kernel seals (removes) ENDBR from
 * functions whose address it never takes; calling such a function through
 * a pointer would fault, so refuse it instead.
 */
/*
 * ENDBR64 (f3 0f 1e fa), compared under a mask so that this file's code
 * never contains the instruction's bytes itself.
 */
#define ENDBR64_MASKED (0xfa1e0ff3U ^ 0x01010101U)

static bool is_endbr64(u32 insn)
{
	return (insn ^ 0x01010101U) == ENDBR64_MASKED;
}

static unsigned long callable_address(const char *name, unsigned long addr)
{
#ifdef CONFIG_X86_KERNEL_IBT
	u32 insn;

	if (!copy_from_kernel_nofault(&insn, (void *)(addr - sizeof(insn)),
				      sizeof(insn)) && is_endbr64(insn))
		return addr - sizeof(insn);
	if (!copy_from_kernel_nofault(&insn, (void *)addr, sizeof(insn)) &&
	    is_endbr64(insn))
		return addr;
	if (cpu_feature_enabled(X86_FEATURE_IBT)) {
		pr_err("%s has no ENDBR (sealed by IBT): cannot call it\n",
		       name);
		return 0;
	}
#endif
	return addr;
}

static int find_kallsyms_lookup_name(void)
{
	struct kprobe kp = { .symbol_name = "kallsyms_lookup_name" };
	unsigned long addr;
	int ret;

	ret = register_kprobe(&kp);
	if (ret) {
		pr_err("cannot find kallsyms_lookup_name (kprobe: %d); needed to resolve unexported symbols\n",
		       ret);
		return ret;
	}
	addr = (unsigned long)kp.addr;
	unregister_kprobe(&kp);

	addr = callable_address("kallsyms_lookup_name", addr);
	if (!addr)
		return -ENOENT;
	dynprobe_ksyms.kallsyms_lookup_name = (void *)addr;
	return 0;
}

int dynprobe_resolve_symbols(void)
{
	int i, ret;

	ret = find_kallsyms_lookup_name();
	if (ret)
		return ret;

	for (i = 0; i < ARRAY_SIZE(resolved_symbols); i++) {
		const struct resolved_symbol *sym = &resolved_symbols[i];
		unsigned long addr;

		addr = dynprobe_ksyms.kallsyms_lookup_name(sym->name);
		if (addr && sym->is_function)
			addr = callable_address(sym->name, addr);
		if (!addr && sym->optional) {
			pr_info("kernel symbol %s not found: no %s\n",
				sym->name, sym->why);
			continue;
		}
		if (!addr) {
			pr_err("kernel symbol %s not found; needed for %s\n",
			       sym->name, sym->why);
			return -ENOENT;
		}
		*sym->slot = (void *)addr;
	}
	return 0;
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
		dynprobe_ksyms.kallsyms_on_each_match_symbol(count_symbol, name,
							     &ctx.count);
		if (ctx.count)
			return ctx.count;
	}
	dynprobe_ksyms.module_kallsyms_on_each_symbol(module,
						      count_module_symbol, &ctx);
	*module_loaded = module && ctx.module_symbols;
	return ctx.count;
}

unsigned long dynprobe_lookup_symbol(const char *name)
{
	return dynprobe_ksyms.kallsyms_lookup_name(name);
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
