/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The interface between dynprobe's C shims and its Rust core. bindgen reads
 * this header to produce the Rust declarations, so both sides share one
 * definition.
 */
#ifndef DYNPROBE_SHIM_H
#define DYNPROBE_SHIM_H

#include <linux/types.h>
#include "dynprobe/resolved.h"

/* The files under tracefs dynprobe/. */
enum dynprobe_file {
	DYNPROBE_FILE_FUNCTION_EVENTS,
	DYNPROBE_FILE_KPROBE_EVENTS,
	DYNPROBE_FILE_DYNAMIC_EVENTS,
	DYNPROBE_FILE_KPROBE_PROFILE,
	DYNPROBE_FILE_README,
	DYNPROBE_FILE_SYNTHETIC_EVENTS,
	DYNPROBE_NR_FILES,
};

/* The longest command line a control file accepts, as the kernel's. */
#define DYNPROBE_MAX_LINE 4094

/* Implemented in C, called from Rust. */
int dynprobe_resolve_symbols(void);
void dynprobe_resolve_exit(void);
unsigned long dynprobe_lookup_symbol(const char *name);
/*
 * The kernel's probe error message at @index of its table, copied with its
 * NUL into @buf: its length, or -ENOENT (no such entry), -ERANGE (it does
 * not fit), -EFAULT.
 */
int dynprobe_kernel_err_text(unsigned int index, char *buf, size_t len);
unsigned int dynprobe_count_symbols(const char *module, const char *name,
				    bool *module_loaded);
/* The vmlinux BTF (bytes [return, return + *len)), or NULL without one. */
const u8 *dynprobe_vmlinux_btf(size_t *len);
/*
 * A copy of the BTF of loaded module @module (bytes [return, return +
 * *len)), to be freed with dynprobe_module_btf_free(); NULL when the module
 * is not loaded, has no BTF or the kernel has no module BTF. Sleeps.
 */
void *dynprobe_module_btf(const char *module, size_t *len);
void dynprobe_module_btf_free(void *blob);

/*
 * For the tracefs files (src/tracefs.rs, src/shim/tracefs.c).
 *
 * tracefs_create_file() is exported; it is declared again here, as in
 * <linux/tracefs.h>, because that header brings all of <linux/fs.h> to
 * bindgen. tracefs.c includes both, so the compiler checks they agree.
 */
struct file_operations;
struct dentry *tracefs_create_file(const char *name, umode_t mode,
				   struct dentry *parent, void *data,
				   const struct file_operations *fops);
/* FMODE_READ and FMODE_WRITE (checked in tracefs.c). */
#define DYNPROBE_FMODE_READ 0x1
#define DYNPROBE_FMODE_WRITE 0x2
void dynprobe_kmemleak_not_leak(const void *ptr);

/* Events and their probes (src/shim/event.c). */
struct dynprobe_event;
struct trace_event_call;
struct trace_seq;
struct pt_regs;

/* Largest record (trace entry included) an event writes. */
#define DYNPROBE_RECORD_MAX 4096

enum dynprobe_probe_kind {
	DYNPROBE_KPROBE,		/* kprobe: header __probe_ip */
	DYNPROBE_KRETPROBE,		/* kretprobe: __probe_func, __probe_ret_ip */
	DYNPROBE_FPROBE_ENTRY,		/* fprobe entry: __probe_ip */
	DYNPROBE_FPROBE_EXIT,		/* fprobe exit: __probe_func, __probe_ret_ip */
	DYNPROBE_FUNCTION_ENTRY,	/* function event: __parent_ip, __ip */
	DYNPROBE_FUNCTION_EXIT,		/* function exit event: __parent_ip, __ip */
	DYNPROBE_TRACEPOINT,		/* tracepoint probe: __probe_ip */
};

/* Where a probe goes: @symbol + @offset, or @addr when @symbol is NULL. */
struct dynprobe_place {
	enum dynprobe_probe_kind kind;
	const char *symbol;
	unsigned long addr;
	unsigned long offset;
	int maxactive;
	/* Bytes a return probe saves at function entry for entry arguments. */
	unsigned int entry_data_size;
	/* The record's size when it has no strings (0: it may have some). */
	unsigned int fixed_record_size;
};

/* Whether ftrace can hook @func (fprobes and function events). */
bool dynprobe_function_traceable(const char *func);
/* Whether a tracepoint named @name exists (t probes). */
bool dynprobe_tracepoint_exists(const char *name);

int dynprobe_events_init(void);
void dynprobe_events_exit(void);
/*
 * @shape (what the event's fields and text come from) and each probe's
 * @def (what its handler runs) are Rust objects passed back in the
 * dynprobe_rs_* callbacks; Rust frees them only after the event or probe
 * is torn down. An event is created with its first probe (returned
 * through @first); more probes with the same argument types can be added
 * to it.
 */
struct dynprobe_probe;
struct dynprobe_event *dynprobe_event_create(const char *group,
					     const char *name,
					     const char *print_fmt,
					     const struct dynprobe_place *place,
					     const void *shape, const void *def,
					     struct dynprobe_probe **first,
					     int *err);
struct dynprobe_probe *dynprobe_probe_add(struct dynprobe_event *ev,
					  const struct dynprobe_place *place,
					  const void *def, int *err);
/* -EBUSY while the event is in use; -EINVAL for the event's last probe. */
int dynprobe_probe_remove(struct dynprobe_event *ev,
			  struct dynprobe_probe *probe);
/*
 * Removing events takes two steps, so that a batch of removals is one
 * decision: with event_mutex held (dynprobe_events_lock), unlink takes
 * the event out of tracefs, or answers -EBUSY (nothing changed) while it
 * is enabled or referenced; nothing can enable it in between, as enabling
 * takes event_mutex too. After the unlock, free tears the probes down,
 * waiting for their running handlers outside event_mutex, and frees the
 * event.
 */
void dynprobe_events_lock(void);
void dynprobe_events_unlock(void);
int dynprobe_event_unlink(struct dynprobe_event *ev);
void dynprobe_event_free(struct dynprobe_event *ev);
bool dynprobe_event_busy(struct dynprobe_event *ev);
void dynprobe_probe_counts(struct dynprobe_probe *probe, u64 *hits,
			   u64 *misses);
int dynprobe_define_field(struct trace_event_call *call, const char *type,
			  const char *name, int offset, int size,
			  bool is_signed);
void dynprobe_seq_write(struct trace_seq *s, const u8 *data, size_t len);

/* Fault-tolerant reads and register access for the fetchers (src/shim/fetch.c). */
int dynprobe_read_kernel(void *dst, unsigned long addr, size_t len);
int dynprobe_read_user(void *dst, unsigned long addr, size_t len);
bool dynprobe_is_user_address(unsigned long addr);
void dynprobe_current_comm(u8 *dst, size_t len);
size_t dynprobe_sprint_symbol(u8 *buf, size_t len, unsigned long addr,
			      bool with_offset);
unsigned long dynprobe_regs_arg(struct pt_regs *regs, unsigned int n);
unsigned long dynprobe_dentry_name_offset(void);
unsigned long dynprobe_file_dentry_offset(void);
unsigned long dynprobe_regs_stack_nth(struct pt_regs *regs, unsigned int n);

/* Implemented in Rust, called from the probe handlers and event callbacks. */
size_t dynprobe_rs_record(const void *def, struct pt_regs *regs,
			  const unsigned long *entry_data, u8 *buf, size_t cap,
			  unsigned long ip1, unsigned long ip2);
void dynprobe_rs_store_entry(const void *def, struct pt_regs *regs,
			     unsigned long *entry_data);
int dynprobe_rs_define_fields(const void *shape,
			      struct trace_event_call *call);
void dynprobe_rs_print(const void *shape, struct trace_seq *s,
		       const u8 *entry, size_t len);

#include "dynprobe/synth.h"

#endif /* DYNPROBE_SHIM_H */
