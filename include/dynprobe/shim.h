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

/* The longest command line a control file accepts, as the kernel's. */
#define DYNPROBE_MAX_LINE 4094

/*
 * Implemented in C, called from Rust (src/sys/kernel_symbols.rs). The
 * redirect of the stubs of unexported functions (src/shim/resolve.c):
 * registering it on the @n stub addresses at @stubs, and unregistering
 * it; where a function's body begins, after its ENDBR slot.
 */
int dynprobe_redirect_register(const unsigned long *stubs, unsigned int n);
void dynprobe_redirect_unregister(void);
/*
 * An ftrace_ops of dynprobe's that ftrace refused to unregister (it stays
 * on ftrace's lists), or a stub not redirected during the unload: the
 * module is pinned, its memory never freed (an unload under way never
 * ends).
 */
void dynprobe_ftrace_stuck(const char *what, int err);
unsigned long dynprobe_body_of(unsigned long addr);
/*
 * Implemented in Rust, called from the redirect: the body of the kernel
 * function whose stub has its ftrace call site at @ip (@endbr_size after
 * its start or at it), 0 if none.
 */
unsigned long dynprobe_rs_redirect_body(unsigned long ip,
					unsigned long endbr_size);
/*
 * A copy of the BTF of loaded module @module (bytes [return, return +
 * *len)), to be freed with dynprobe_module_btf_free(); NULL when the module
 * is not loaded, has no BTF or the kernel has no module BTF. Sleeps.
 */
void *dynprobe_module_btf(const char *module, size_t *len);
void dynprobe_module_btf_free(void *blob);

/*
 * For the tracefs files (src/sys/tracefs.rs, src/shim/tracefs.c).
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

/*
 * Events and their probes. The trace event is a Rust object
 * (src/event/trace_event.rs); the path of a hit, made of the tracing core's
 * static inline functions, is C (src/shim/hit.c); the probes are Rust
 * objects (src/probe/) whose handlers, made of the kprobes, ftrace and
 * perf cores' static inline functions, are C (src/shim/kprobe.c,
 * fprobe.c, fentry.c, eprobe.c, wprobe.c).
 */
struct trace_event_call;
struct trace_event_file;
struct trace_seq;
struct pt_regs;
#ifdef __BINDGEN__
/* The tracing core's, kprobes' and fprobes' types and calls Rust uses. */
#include <linux/trace_events.h>
#include <linux/kprobes.h>
#include <linux/fprobe.h>
#include <linux/ftrace.h>
#include <linux/module.h>
#include <linux/tracepoint.h>
#else
#include <linux/fprobe.h>
#include <linux/kprobes.h>
/* struct dynprobe_event_core holds a trace_event_call. */
#include <linux/trace_events.h>
#endif

/* Largest record (trace entry included) an event writes. */
#define DYNPROBE_RECORD_MAX 4096

/*
 * The room sprint_symbol() may write ("SYM+0xOFF/0xSIZE [MOD]" and its
 * NUL), for the notrace check (src/probe/notrace.rs); an enum, so that
 * bindgen evaluates the kernel's expression.
 */
#include <linux/kallsyms.h>
enum { DYNPROBE_KSYM_SYMBOL_LEN = KSYM_SYMBOL_LEN };

/*
 * What an fprobe hook is (struct dynprobe_fprobe): how its handlers write
 * the record's header, and whether it is a tracepoint's (Rust's
 * lang::ProbeKind is the list of all kinds; src/probe/hook/fprobe.rs maps it).
 */
enum dynprobe_fprobe_kind {
	DYNPROBE_FPROBE_ENTRY,		/* fprobe entry: __probe_ip */
	DYNPROBE_FPROBE_EXIT,		/* fprobe exit: __probe_func, __probe_ret_ip */
	DYNPROBE_FUNCTION_ENTRY,	/* function event: __parent_ip, __ip */
	DYNPROBE_FUNCTION_EXIT,		/* function exit event: __parent_ip, __ip */
	DYNPROBE_TRACEPOINT,		/* tracepoint probe: __probe_ip */
};

#define DYNPROBE_SINK_TRACE	1	/* enabled in at least one trace instance */
#define DYNPROBE_SINK_PERF	2	/* enabled for perf */

/*
 * The trace instances an event is enabled in, when they are two or more:
 * @nr + 1 words (Rust builds it as a vector of words). Replaced as a
 * whole when an instance is added; an instance that goes leaves a NULL
 * slot (disabling needs no memory) until one instance is left.
 */
struct dynprobe_files {
	unsigned long nr;
	struct trace_event_file *file[];
};

/*
 * What a hit needs of its event: where records go. Part of the Rust trace
 * event, which changes @file, @files (under RCU: the old set is freed
 * after a grace period) and @flags (DYNPROBE_SINK_*) with event_mutex
 * held. Enabled in one trace instance (the common case), the event has
 * it in @file and no set; in several, @file is NULL and @files the set.
 * A hit that sees @file takes it alone: the writer publishes a new set
 * before clearing @file, and sets @file before dropping the set (a hit
 * that sees neither reads @file again: hit.c's trace_record()).
 */
struct dynprobe_sink {
	struct trace_event_file *file;
	struct dynprobe_files *files;
	unsigned int flags;
};

/* An event's trace_event_call and sink, side by side in the Rust event. */
struct dynprobe_event_core {
	struct trace_event_call call;
	struct dynprobe_sink sink;
};

static inline struct trace_event_call *
dynprobe_sink_call(const struct dynprobe_sink *sink)
{
	return &container_of((struct dynprobe_sink *)sink,
			     struct dynprobe_event_core, sink)->call;
}

/* Room in a feed's word table (src/lang/words.rs' MAX_TABLE_WORDS). */
#define DYNPROBE_TABLE_WORDS	4
/* A word-table slot from here up is an entry-data slot, below a pt_regs word. */
#define DYNPROBE_ENTRY_SLOT	32
/*
 * A feed's @header_words for a record of words and then one string: this
 * flag, the header ips in the low bits, the words before the string above
 * DYNPROBE_STRING_WORDS_SHIFT. @word_slot holds the words' slots, then the
 * slot of the string's address.
 */
#define DYNPROBE_STRING_TABLE		0x80
#define DYNPROBE_STRING_WORDS_SHIFT	2
#define DYNPROBE_HEADER_IPS		0x3
/*
 * The bytes of a kernel string's first read, on the hit path (hit.c) and
 * by the definition's programs (src/sys/regs_memory.rs): most strings
 * recorded (names, paths' components, commands) fit, and each byte read
 * costs. A read does not cross a page.
 */
#define DYNPROBE_STRING_FIRST_READ	32

/*
 * What a probe's hit runs: its event's sink and its definition (a Rust
 * object, passed back to dynprobe_rs_record). Owned by Rust, in the
 * allocation of the hook whose kernel probe points to it, which it
 * outlives. 32 bytes.
 */
struct dynprobe_feed {
	struct dynprobe_sink *sink;
	const void *def;
	unsigned long __percpu *nhit;
	/* The record's size if it is always the same, else 0. */
	u16 fixed_size;
	/*
	 * A record of words (src/lang/words.rs) has @words words after its
	 * common header: @header_words header ips, then one word per
	 * @word_slot, the pt_regs word of that index, or entry-data slot
	 * (index - DYNPROBE_ENTRY_SLOT). The hit writes it from this table
	 * alone (hit.c). 0 @words: the definition's programs write it, or,
	 * for a record of words and one string (src/lang/words.rs'
	 * StringTable; @header_words has DYNPROBE_STRING_TABLE), the hit
	 * where it reads the string in one step.
	 */
	u8 header_words;
	u8 words;
	u8 word_slot[DYNPROBE_TABLE_WORDS];
};

/* The words before the string in a feed's string table. */
static inline unsigned int
dynprobe_string_table_words(const struct dynprobe_feed *feed)
{
	return (feed->header_words & ~DYNPROBE_STRING_TABLE) >>
	       DYNPROBE_STRING_WORDS_SHIFT;
}
/*
 * Whether every slot a feed's table reads (a record of words' words, a
 * string table's words and string address) is a pt_regs word: what a hit
 * that reads them without testing each relies on (hit.c's regs_only).
 */
bool dynprobe_feed_reads_regs_only(const struct dynprobe_feed *feed);

/*
 * A kprobe or kretprobe probe: a Rust object (src/probe/hook/kprobe.rs) that
 * registers @rp (@rp.kp alone for a kprobe); its handlers are kprobe.c's.
 */
struct dynprobe_kprobe {
	struct kretprobe rp;
	struct dynprobe_feed *feed;
};
/* Sets the handlers of a kprobe, or of a kretprobe (@ret). */
void dynprobe_kprobe_init(struct dynprobe_kprobe *probe, bool ret,
			  unsigned int entry_data_size);

/*
 * An fprobe probe (f events, function events, and t events on a
 * tracepoint's probestub): a Rust object (src/probe/hook/fprobe.rs,
 * tprobe.rs) that registers @fp; its handlers are fprobe.c's.
 */
struct dynprobe_fprobe {
	struct fprobe fp;
	struct dynprobe_feed *feed;
	enum dynprobe_fprobe_kind kind;
};

/*
 * An entry probe on one function, of the kernel image or of a module (f
 * events and function events at entry): a Rust object
 * (src/probe/hook/fentry.rs) hooked on fentry.c's shared ftrace_ops, found in
 * its table by @addr, the function's ftrace call site (dynprobe_body_of()
 * its address), with its feed inside: no struct fprobe and no pointer
 * to the feed, so the hook fits a 64-byte object.
 */
struct dynprobe_fentry {
	struct hlist_node node;		/* while armed */
	unsigned long addr;
	enum dynprobe_fprobe_kind kind;
	bool armed;
	struct dynprobe_feed feed;
};
/*
 * How an event probe reads a field of its source record (src/lang's
 * FieldKind, in its order): a number, an array's address, a string's
 * address (__data_loc, __rel_loc, char[N]) or the pointer a char * holds.
 */
enum dynprobe_field_kind {
	DYNPROBE_FIELD_VALUE,
	DYNPROBE_FIELD_ARRAY,
	DYNPROBE_FIELD_DYN_STRING,
	DYNPROBE_FIELD_REL_STRING,
	DYNPROBE_FIELD_STATIC_STRING,
	DYNPROBE_FIELD_PTR_STRING,
};

struct dynprobe_event_field {
	int offset;
	int size;
	bool is_signed;
	enum dynprobe_field_kind kind;
};

/* Whether event probes may attach to @system/@event (0, or -errno). */
int dynprobe_event_source(const char *system, const char *event);
/* Field @name of @system/@event (0, or -errno). */
int dynprobe_event_field(const char *system, const char *event,
			 const char *name, struct dynprobe_event_field *out);

/* Whether event probes take filters (the filter functions were found). */
bool dynprobe_event_filters(void);
/*
 * Whether the kernel's filter parser takes @filter for @system/@event: 0,
 * -EINVAL (it logged why in error_log), or -EOPNOTSUPP (this kernel gives
 * event probes no filters).
 */
int dynprobe_event_filter_check(const char *system, const char *event,
				char *filter);

/*
 * An event probe's hook (src/shim/eprobe.c): the source event held, and
 * one in-kernel perf counter per online CPU (CPUs that come online later
 * included) whose overflow handler runs
 * @feed with each source record that @filter (NULL: none) matches.
 */
struct dynprobe_eprobe;
struct dynprobe_eprobe *dynprobe_eprobe_attach(const char *system,
					       const char *event,
					       char *filter,
					       struct dynprobe_feed *feed);
/* Releases the counters and the source; no handler runs after it. */
void dynprobe_eprobe_detach(struct dynprobe_eprobe *eprobe);
/*
 * A watchpoint's hook (src/shim/wprobe.c): wide hardware breakpoints on
 * @len bytes at @addr for accesses @type (HW_BREAKPOINT_W or _RW; _R is
 * refused by x86 when armed), whose handler runs @feed. Made disarmed
 * (an ERR_PTR: -EINVAL for dynprobe's own memory, -ENOENT for the
 * modules' area outside a module's live memory, -ENOMEM); armed, it
 * holds a breakpoint on each CPU online then, and the module whose data
 * it watches (0, or -errno: -ENOSPC when the debug registers are taken,
 * -ENOENT when that module went and @resolved, where the place's symbol
 * is now (0: an address place), is not @addr). Disarming and freeing
 * return once no handler of it runs.
 */
struct dynprobe_wprobe;
struct dynprobe_wprobe *dynprobe_wprobe_new(unsigned long addr, u32 len,
					    u32 type,
					    const struct dynprobe_feed *feed);
int dynprobe_wprobe_arm(struct dynprobe_wprobe *wp, unsigned long resolved);
void dynprobe_wprobe_disarm(struct dynprobe_wprobe *wp);
void dynprobe_wprobe_free(struct dynprobe_wprobe *wp);
/* The module notifier that disarms watchpoints on a going module. */
int dynprobe_wprobe_init(void);
void dynprobe_wprobe_exit(void);

/*
 * A uprobe's hook (src/shim/uprobe.c): the file at @path (looked up
 * with LOOKUP_FOLLOW, held until freed, as the kernel's uprobe events
 * hold theirs), and a consumer of the uprobe at @offset in it, with the
 * SDT reference counter at @ref_ctr_offset (0: none), whose handler (or
 * return handler, @ret) runs @feed. A return probe with @entry_words
 * entry words (at most DYNPROBE_UPROBE_ENTRY_WORDS) saves them at entry
 * (dynprobe_rs_store_entry_user()) in a pool of slots allocated while it
 * is armed, and its records read them; a call the pool has no slot for
 * is a miss (dynprobe_uprobe_misses()). Made disarmed (an ERR_PTR: the
 * lookup's error, -EINVAL for no regular file, -ENOMEM); armed, it is
 * registered with uprobe_register() (0, or its -errno). Disarming and
 * freeing return once no handler of it runs.
 */
#define DYNPROBE_UPROBE_ENTRY_WORDS 128
struct dynprobe_uprobe;
struct dynprobe_uprobe *dynprobe_uprobe_new(const char *path,
					    unsigned long offset,
					    unsigned long ref_ctr_offset,
					    bool ret, unsigned int entry_words,
					    const struct dynprobe_feed *feed);
/*
 * Makes @up, disarmed, a function event's: its records' header is
 * __parent_ip, __ip (the caller's return address, read from the user
 * stack at entry, and the function) rather than a uprobe's.
 */
void dynprobe_uprobe_function_event(struct dynprobe_uprobe *up);
int dynprobe_uprobe_arm(struct dynprobe_uprobe *up);
void dynprobe_uprobe_disarm(struct dynprobe_uprobe *up);
void dynprobe_uprobe_free(struct dynprobe_uprobe *up);
u64 dynprobe_uprobe_misses(const struct dynprobe_uprobe *up);
/*
 * What the file at @path (NUL-terminated) is, for a uprobe's line: 0 a
 * regular file, 1 something else, or the lookup's -errno.
 */
int dynprobe_user_file(const char *path);
/*
 * In a uprobe's handler, with preemption on: the probed task's memory,
 * faulting pages in as trace_uprobe does. Word @n of its user stack
 * (get_user_stack_nth()), 0 where unreadable; @len bytes at @addr (0 or
 * -EFAULT); the string at @addr (strncpy_from_user(): its length, @len
 * if it was cut, or -EFAULT).
 */
unsigned long dynprobe_user_stack_nth(struct pt_regs *regs, unsigned int n);
int dynprobe_uprobe_read(void *dst, unsigned long addr, size_t len);
long dynprobe_uprobe_read_str(u8 *dst, unsigned long addr, long len);

/*
 * The hotplug states through which event probes' counters follow CPUs
 * that come online and go down; the exit with no event probe left.
 */
int dynprobe_eprobe_init(void);
void dynprobe_eprobe_exit(void);

/*
 * Lockdown as the kernel's probe events check it: 0, or the errno
 * (-EPERM) of security_locked_down(LOCKDOWN_TRACEFS) for opening a
 * control file, of (LOCKDOWN_KPROBES) for making a kprobe, fprobe or
 * tracepoint probe.
 */
int dynprobe_lockdown_tracefs(void);
int dynprobe_lockdown_kprobes(void);

/* Sets the handlers of an fprobe, with an exit handler if @exit. */
void dynprobe_fprobe_init(struct dynprobe_fprobe *probe, bool exit,
			  unsigned int entry_data_size);
/*
 * Hooks @probe->addr on the shared ftrace_ops (-ENOENT if it is a
 * function of a module that is going or gone, or in the init text of a
 * module that is no longer coming), or unhooks it.
 */
int dynprobe_fentry_arm(struct dynprobe_fentry *probe);
/* Its handlers may still run until the next RCU grace period. */
void dynprobe_fentry_disarm(struct dynprobe_fentry *probe);
/*
 * The module notifier that unhooks a going module's entry probes, and a
 * module's probes on its init text when it goes live.
 */
int dynprobe_fentry_init(void);
void dynprobe_fentry_exit(void);
/* Whether @addr is in the modules' area (MODULES_VADDR, a macro). */
bool dynprobe_in_module_area(unsigned long addr);
/* Tracepoint @i of @mod, or NULL (tracepoint_ptr_deref(), an inline). */
struct tracepoint *dynprobe_module_tracepoint(struct module *mod,
					      unsigned int i);
/* within_module(), an inline. */
bool dynprobe_within_module(unsigned long addr, struct module *mod);
/*
 * Whether @addr is in dynprobe's own text or data (any of its sections,
 * init included): no place for a probe of any kind.
 */
bool dynprobe_own_address(unsigned long addr);
/*
 * The live module whose text holds @addr, with a reference; NULL for an
 * address outside the modules' area; ERR_PTR(-ENOENT) when no live module
 * has text there (module data, a module loading or going), -EOPNOTSUPP
 * without __module_text_address().
 */
struct module *dynprobe_hold_live_module(unsigned long addr);

/* The hit path's per-CPU scratch records (hit.c). */
int dynprobe_hit_init(void);
void dynprobe_hit_exit(void);
/*
 * References on dynprobe's events pin the module (holds.c): registered
 * before any event exists, unregistered once none is left.
 */
int dynprobe_holds_init(void);
void dynprobe_holds_exit(void);

/*
 * What the fast record path (hit.c) reads of the tracing core's private
 * struct trace_array, found in the kernel's BTF: the byte offsets of
 * array_buffer.buffer and of trace_flags, the width of trace_flags (4 or
 * 8 bytes), and the trace_flags bits of the options that need the full
 * path (stacktrace, userstacktrace). Called once, before any event can
 * be enabled; without it (no BTF, or a layout it cannot use) every record
 * takes the full path. Returns whether the fast path is on.
 */
bool dynprobe_fast_record_init(u32 buffer_offset, u32 flags_offset,
			       u32 flags_size, u64 slow_flags);
/*
 * The byte offset of struct trace_array's no_filter_buffering_ref (an
 * int), found in BTF: while it is 0, a record only triggers read is
 * handed to them where the hit assembled it (hit.c). Called after
 * dynprobe_fast_record_init(), and only if that turned the fast path on.
 */
void dynprobe_trigger_record_init(u32 no_buffering_offset);

/*
 * Per-CPU hit counters (memory.c; alloc_percpu() and per_cpu_ptr() are
 * macros). A counter is freed with free_percpu().
 */
unsigned long __percpu *dynprobe_counter_alloc(void);
u64 dynprobe_counter_sum(unsigned long __percpu *counter);

/* kvfree() after an RCU grace period, sleeping if memory is short. */
void dynprobe_kvfree_rcu(void *ptr);
/* Whether event @system/@name exists; event_mutex held (event_names.c). */
bool dynprobe_event_name_taken(const char *system, const char *name);

/* Fault-tolerant reads and register access for the fetchers (src/shim/fetch.c). */
int dynprobe_read_kernel(void *dst, unsigned long addr, size_t len);
int dynprobe_read_user(void *dst, unsigned long addr, size_t len);
bool dynprobe_is_user_address(unsigned long addr);
void dynprobe_current_comm(u8 *dst, size_t len);
unsigned long dynprobe_current_task(void);
unsigned long dynprobe_this_cpu_ptr(unsigned long addr);
/* Symbol text for the control and print paths (not the hit path). */
size_t dynprobe_sprint_symbol(u8 *buf, size_t len, unsigned long addr,
			      bool with_offset);
/* sprint_symbol() into a record on the hit path, at most @len bytes. */
size_t dynprobe_record_symbol(u8 *buf, size_t len, unsigned long addr);
unsigned long dynprobe_regs_arg(struct pt_regs *regs, unsigned int n);
unsigned long dynprobe_dentry_name_offset(void);
unsigned long dynprobe_file_dentry_offset(void);
unsigned long dynprobe_regs_stack_nth(struct pt_regs *regs, unsigned int n);

/* Implemented in Rust, called from the hit path and the probe handlers. */
size_t dynprobe_rs_record(const void *def, struct pt_regs *regs,
			  const unsigned long *entry_data, u8 *buf, size_t cap,
			  unsigned long ip1, unsigned long ip2);
/*
 * A uprobe's record: @regs and memory are the probed process's, read
 * with preemption on; @entry_data: a return probe's entry words or NULL.
 */
size_t dynprobe_rs_record_user(const void *def, struct pt_regs *regs,
			       const unsigned long *entry_data, u8 *buf,
			       size_t cap, unsigned long ip1,
			       unsigned long ip2);
size_t dynprobe_rs_record_event(const void *def, struct pt_regs *regs,
				const void *source, size_t source_len, u8 *buf,
				size_t cap);
void dynprobe_rs_store_entry(const void *def, struct pt_regs *regs,
			     unsigned long *entry_data);
/* A uretprobe's entry words, from the probed task's user registers. */
void dynprobe_rs_store_entry_user(const void *def, struct pt_regs *regs,
				  unsigned long *entry_data);

#include "dynprobe/api_glue.h"
#ifdef __BINDGEN__
#include "dynprobe/api.h"
#endif

#endif /* DYNPROBE_SHIM_H */
