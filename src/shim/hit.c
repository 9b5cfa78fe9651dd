// SPDX-License-Identifier: GPL-2.0
/*
 * The path of a hit: fetch the record once, write it into each trace
 * instance the event is enabled in, and hand it to perf. It is made of the
 * tracing core's static inline functions (soft disable, per-CPU buffers,
 * perf submission), which Rust cannot call, so it is C, in one function a
 * hit enters once (a kprobe's handler and the shared ftrace_ops' callback
 * are here, so that it is inlined into them). The event it writes to is a
 * Rust object (src/event/trace_event.rs), seen here through its sink; the
 * record comes from the definition's programs (dynprobe_rs_record). The
 * per-CPU scratch buffer records are assembled in is allocated here at
 * load (dynprobe_hit_init(); alloc_percpu() is a macro).
 */
#include <linux/context_tracking.h>
#include <linux/ftrace.h>
#include <linux/jump_label.h>
#include <linux/kallsyms.h>
#include <linux/module.h>
#include <linux/perf_event.h>
#include <linux/rcupdate.h>
#include <linux/ring_buffer.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/trace_recursion.h>
#include <linux/trace_seq.h>
#include <linux/uaccess.h>
#include <linux/unaligned.h>
#include "dynprobe/resolved.h"
#include "internal.h"

/*
 * Records are assembled in a per-CPU scratch buffer first, so that every
 * probed byte is read once; one level per context that can nest (task,
 * softirq, irq, NMI). Each level also has room for one symbol's text, for
 * a symstr argument that has less room left in its record than
 * sprint_symbol() may write (dynprobe_record_symbol()).
 */
#define SCRATCH_LEVELS 4
struct scratch {
	int level;
	u8 buf[SCRATCH_LEVELS][DYNPROBE_RECORD_MAX];
	char sym[SCRATCH_LEVELS][KSYM_SYMBOL_LEN];
};
static struct scratch __percpu *scratch;

static u8 *scratch_get(void)
{
	struct scratch *s = this_cpu_ptr(scratch);

	if (s->level >= SCRATCH_LEVELS)
		return NULL;
	s->level++;
	barrier();
	return s->buf[s->level - 1];
}

static void scratch_put(void)
{
	barrier();
	this_cpu_ptr(scratch)->level--;
}

/*
 * A symstr argument's text, "SYM+0xOFF/0xSIZE [MOD]", written into the
 * record (@buf, @len bytes) on the hit path; its length, without the NUL
 * sprint_symbol() adds. As the kernel's probe events (fetch_store_symstring())
 * it goes straight into the record, not through a buffer on the stack,
 * which may be an NMI's: when the record has less room left than
 * sprint_symbol() may write (KSYM_SYMBOL_LEN), through the scratch level
 * of the hit, and cut to @len. Only called while a hit holds a scratch
 * level: symstr makes a record of variable size, which is assembled in
 * the scratch buffer.
 */
size_t dynprobe_record_symbol(u8 *buf, size_t len, unsigned long addr)
{
	struct scratch *s = this_cpu_ptr(scratch);
	size_t n;
	char *tmp;

	if (len >= KSYM_SYMBOL_LEN)
		return sprint_symbol((char *)buf, addr);
	if (WARN_ON_ONCE(s->level < 1 || s->level > SCRATCH_LEVELS))
		return 0;
	tmp = s->sym[s->level - 1];
	n = min_t(size_t, sprint_symbol(tmp, addr), len);
	memcpy(buf, tmp, n);
	return n;
}
NOKPROBE_SYMBOL(dynprobe_record_symbol);

/*
 * The writers below are inlined into the entry points, which are NOKPROBE:
 * no part of the hit path has a symbol of its own to probe.
 */
#ifdef CONFIG_PERF_EVENTS
/*
 * @fregs: the ftrace_regs of an fprobe or ftrace hit, NULL for a kprobe's
 * (whose @regs are complete). ftrace_regs are not a pt_regs perf can take:
 * at a function's exit (fgraph's return_to_handler) only the return
 * value, frame and stack pointers and ip are saved, the flags word is
 * whatever was on the stack, and ftrace_partial_regs() only ORs
 * X86_EFLAGS_FIXED into it. perf reads that word (X86_EFLAGS_FIXED:
 * unwind from these "hardware" registers; PERF_EFLAGS_EXACT and _VM: the
 * sample's misc bits, no user callchain). So, as the kernel's fprobe
 * events do (fentry_perf_func()/fexit_perf_func()), perf gets its own
 * per-CPU pt_regs filled by ftrace_fill_perf_regs(): ip, sp, kernel cs,
 * flags 0, like perf_fetch_caller_regs() for a tracepoint.
 */
static __always_inline void perf_record(struct trace_event_call *call,
					struct pt_regs *regs,
					struct ftrace_regs *fregs,
					const u8 *rec, size_t len)
{
	struct hlist_head *head = this_cpu_ptr(call->perf_events);
	struct trace_entry *entry;
	struct pt_regs *perf_regs;
	int size, rctx;

	if (hlist_empty(head))
		return;
	/* perf wants the record plus a u32 size header to be u64 aligned. */
	size = ALIGN(len + sizeof(u32), sizeof(u64)) - sizeof(u32);
	entry = perf_trace_buf_alloc(size, fregs ? &perf_regs : NULL, &rctx);
	if (!entry)
		return;
	if (fregs)
		regs = ftrace_fill_perf_regs(fregs, perf_regs);
	memcpy((u8 *)entry + sizeof(*entry), rec + sizeof(*entry),
	       len - sizeof(*entry));
	memset((u8 *)entry + len, 0, size - len);
	perf_trace_buf_submit(entry, size, rctx, call->event.type, 1, regs,
			      head, NULL);
}
#endif

/*
 * Where a hit's record comes from: the hit's registers (and a return
 * probe's entry data), or, for an event probe, its source event's record.
 * Each entry point below passes one kind as a constant, so the common path
 * carries no test for the other.
 */
struct hit {
	struct pt_regs *regs;
	/* An fprobe's or ftrace_ops' hit: @regs are its partial regs. */
	struct ftrace_regs *fregs;
	const unsigned long *entry_data;
	unsigned long ip1, ip2;
	/* An event probe's source record and its size; NULL for the rest. */
	const void *source;
	size_t source_len;
	/*
	 * A hit of the shared ftrace_ops, whose entry probes have no entry
	 * data: its header is the last header_words of @ip1, the caller,
	 * and @ip2, the call site (a function event's two, an f event's
	 * one), whatever the probe's kind (dynprobe_fentry_arm() checks it).
	 */
	bool fentry;
	/*
	 * The feed's word table reads registers only, with no test of each
	 * slot: an entry probe's on the shared ftrace_ops
	 * (dynprobe_fentry_arm() checks it) or a kprobe's
	 * (src/probe/hook/kprobe.rs checks it).
	 */
	bool regs_only;
};

/* Word @i of the feed's table, from the hit's registers or entry data. */
static __always_inline unsigned long table_word(const struct dynprobe_feed *feed,
					       const struct hit *hit,
					       unsigned int i)
{
	unsigned int slot = feed->word_slot[i];

	if (hit->regs_only || slot < DYNPROBE_ENTRY_SLOT)
		return ((const unsigned long *)hit->regs)[slot];
	if (hit->entry_data)
		return hit->entry_data[slot - DYNPROBE_ENTRY_SLOT];
	return 0;
}

/*
 * The header ips and the @nr words of the feed's table at @word (a
 * record's words after its common header): what the definition's
 * programs would write there (src/lang/words.rs holds the table to them),
 * in a fraction of their instructions.
 */
static __always_inline void write_words(const struct dynprobe_feed *feed,
					const struct hit *hit,
					unsigned long *word,
					unsigned int header_words,
					unsigned int nr)
{
	if (hit->fentry) {
		if (header_words > 1)
			put_unaligned(hit->ip1, word++);
		if (header_words > 0)
			put_unaligned(hit->ip2, word++);
	} else {
		if (header_words > 0)
			put_unaligned(hit->ip1, word++);
		if (header_words > 1)
			put_unaligned(hit->ip2, word++);
	}
	/*
	 * Written out for each of the table's slots rather than in a loop:
	 * no loop counter, and no bounds check of the table's index.
	 */
	BUILD_BUG_ON(DYNPROBE_TABLE_WORDS != 4);
	if (nr > 0)
		put_unaligned(table_word(feed, hit, 0), word);
	if (nr > 1)
		put_unaligned(table_word(feed, hit, 1), word + 1);
	if (nr > 2)
		put_unaligned(table_word(feed, hit, 2), word + 2);
	if (nr > 3)
		put_unaligned(table_word(feed, hit, 3), word + 3);
}

/* A record of words. @buf has room for feed->fixed_size bytes. */
static __always_inline size_t record_words(const struct dynprobe_feed *feed,
					   const struct hit *hit, u8 *buf)
{
	write_words(feed, hit, (unsigned long *)(buf + sizeof(struct trace_entry)),
		    feed->header_words, feed->words - feed->header_words);
	return feed->fixed_size;
}

/* Asked when a probe is armed, not on a hit. */
bool dynprobe_feed_reads_regs_only(const struct dynprobe_feed *feed)
{
	unsigned int i, slots = 0;

	if (feed->words)
		slots = feed->words - feed->header_words;
	else if (feed->header_words & DYNPROBE_STRING_TABLE)
		slots = dynprobe_string_table_words(feed) + 1;
	for (i = 0; i < slots; i++)
		if (i >= DYNPROBE_TABLE_WORDS ||
		    feed->word_slot[i] >= DYNPROBE_ENTRY_SLOT)
			return false;
	return true;
}

/*
 * A record of words and one string (DYNPROBE_STRING_TABLE in the feed's
 * @header_words), written as the definition's programs write it
 * (src/lang/words.rs' StringTable): the words, the string's __data_loc
 * word after them, the string's bytes after that. Only where the string
 * is in kernel memory and its NUL in the 32 bytes of its first read, so
 * that the programs would have read it in the same one step; its size,
 * or 0 for the programs to write the record (a user address, a fault, a
 * longer string, a read that would cross a page). @buf has room for @cap
 * bytes.
 */
static __always_inline size_t record_words_string(const struct dynprobe_feed *feed,
						  const struct hit *hit,
						  u8 *buf, size_t cap)
{
	unsigned int nr = dynprobe_string_table_words(feed);
	size_t fixed = sizeof(struct trace_entry) + 4 +
		8 * ((feed->header_words & DYNPROBE_HEADER_IPS) + nr);
	unsigned long addr, w;
	u8 *str = buf + fixed;
	size_t len;
	int i;

	BUILD_BUG_ON(DYNPROBE_TABLE_WORDS > 4);
	if (nr >= DYNPROBE_TABLE_WORDS || fixed + DYNPROBE_STRING_FIRST_READ > cap)
		return 0;
	addr = table_word(feed, hit, nr);
	if (addr < TASK_SIZE ||
	    offset_in_page(addr) > PAGE_SIZE - DYNPROBE_STRING_FIRST_READ ||
	    copy_from_kernel_nofault(str, (const void *)addr, DYNPROBE_STRING_FIRST_READ))
		return 0;
	for (i = 0; i < DYNPROBE_STRING_FIRST_READ / 8; i++) {
		w = get_unaligned((unsigned long *)str + i);
		/* A word with a zero byte (the bit trick of strlen()s). */
		if ((w - REPEAT_BYTE(0x01)) & ~w & REPEAT_BYTE(0x80))
			break;
	}
	if (i == DYNPROBE_STRING_FIRST_READ / 8)
		return 0;
	len = 8 * i + strnlen((char *)str + 8 * i, 8) + 1;
	write_words(feed, hit, (unsigned long *)(buf + sizeof(struct trace_entry)),
		    feed->header_words & DYNPROBE_HEADER_IPS, nr);
	put_unaligned((u32)(len << 16 | fixed), (u32 *)(str - 4));
	return fixed + len;
}

static __always_inline size_t fetch_record(const struct dynprobe_feed *feed,
					   const struct hit *hit, u8 *buf,
					   size_t cap)
{
	if (hit->source)
		return dynprobe_rs_record_event(feed->def, hit->regs,
						hit->source, hit->source_len,
						buf, cap);
	if (feed->words)
		return record_words(feed, hit, buf);
	if (feed->header_words & DYNPROBE_STRING_TABLE) {
		size_t len = record_words_string(feed, hit, buf, cap);

		if (len)
			return len;
	}
	return dynprobe_rs_record(feed->def, hit->regs, hit->entry_data, buf,
				  cap, hit->ip1, hit->ip2);
}

/*
 * The fast record path. trace_event_buffer_reserve() and _commit() wrap
 * the ring buffer in layers that a record needs only while one of them is
 * set: a pid filter, a filter (and its temporary buffer), triggers, soft
 * disable, tp_printk, trace exports, the stacktrace and userstacktrace
 * options. While none is, a record is reserved on its instance's ring
 * buffer and committed there, as those functions end up doing, with the
 * same header and the same per-CPU note for the comm. What they read of
 * the private struct trace_array (the instance's buffer and options) is
 * located in the kernel's BTF (dynprobe_fast_record_init()); the static
 * keys and the comm note are resolved symbols. Without them every record
 * takes the full path.
 */
struct fast_record {
	bool on;
	u32 buffer_offset;
	/*
	 * The instance's options word is read as the 8 bytes that end with
	 * it (instance_options()): a 4-byte word is their upper half
	 * (x86_64 is little-endian), whose options @slow_options holds
	 * shifted there. One read of one size, with no test of the size.
	 */
	u32 options_end_offset;
	u64 slow_options;
};
static struct fast_record fast __read_mostly;

#define SLOW_FILE_FLAGS (EVENT_FILE_FL_SOFT_DISABLED | EVENT_FILE_FL_FILTERED | \
			 EVENT_FILE_FL_TRIGGER_MODE | EVENT_FILE_FL_TRIGGER_COND | \
			 EVENT_FILE_FL_PID_FILTER)

bool dynprobe_fast_record_init(u32 buffer_offset, u32 flags_offset,
			       u32 flags_size, u64 slow_options)
{
	const struct dynprobe_kernel_symbols *k = &dynprobe_ksyms;
	unsigned int shift = 64 - 8 * flags_size;

	/*
	 * A 4-byte word is not the first field of struct trace_array: the 4
	 * bytes before it are the struct's too.
	 */
	if (!k->tracepoint_printk_key || !k->trace_event_exports_enabled ||
	    !k->trace_taskinfo_save || (flags_size != 4 && flags_size != 8) ||
	    buffer_offset % sizeof(void *) || flags_offset % flags_size ||
	    flags_offset + flags_size < 8 ||
	    (shift && slow_options >> (64 - shift)))
		return false;
	fast.buffer_offset = buffer_offset;
	fast.options_end_offset = flags_offset + flags_size - 8;
	fast.slow_options = slow_options << shift;
	/* Published after the settings it guards (fast_record_ok()). */
	smp_store_release(&fast.on, true);
	return true;
}

/*
 * The instance's options word (struct trace_array's trace_flags), in
 * the bits of fast.slow_options: one load, so a word being changed is
 * read once, old or new, as READ_ONCE() reads it.
 */
static __always_inline u64 instance_options(const u8 *tr)
{
	return get_unaligned((const u64 *)(tr + fast.options_end_offset));
}

/*
 * The context word of a record's common header (common_flags above bit
 * 16; common_preempt_count below: preempt depth in bits 0-3, migrate
 * disable depth in bits 4-7), as tracing_gen_ctx_dec() makes it for the
 * full path. Its out-of-line part, tracing_gen_ctx_irq_test(), is not
 * exported and IBT seals it, so the fast path reads the same per-CPU and
 * per-task state itself; the flags are trace_events.h's trace_flag_type.
 * As the full path's, the word counts one preempt level less where a
 * preemptible kernel's probe handler added one (selftests compare both
 * paths' header columns with the kernel's probe events).
 */
static __always_inline unsigned int record_context(void)
{
	unsigned int pc = preempt_count(), flags = 0, migrate = 0;
	unsigned long irqflags, tif = read_thread_flags();
	/*
	 * Read next to preempt_count(), before local_save_flags()'s
	 * barrier: where the per-CPU count is an ordinary load, the three
	 * are one.
	 */
	unsigned int softirqs = softirq_count();
	bool preempt_resched = test_preempt_need_resched();

	local_save_flags(irqflags);
	if (irqs_disabled_flags(irqflags))
		flags |= TRACE_FLAG_IRQS_OFF;
	/*
	 * Most hits are in a task outside any interrupt or softirq, where
	 * all four of these tests fail: one test for them all first (the
	 * masks are of one word but on PREEMPT_RT, which counts softirqs
	 * in the task).
	 */
	if (unlikely((pc & (NMI_MASK | HARDIRQ_MASK)) | softirqs)) {
		if (pc & NMI_MASK)
			flags |= TRACE_FLAG_NMI;
		if (pc & HARDIRQ_MASK)
			flags |= TRACE_FLAG_HARDIRQ;
		if (softirqs & SOFTIRQ_OFFSET)
			flags |= TRACE_FLAG_SOFTIRQ;
		if (softirqs >> (SOFTIRQ_SHIFT + 1))
			flags |= TRACE_FLAG_BH_OFF;
	}
	/* The thread's flags read once, for both of tif_test_bit()'s tests. */
	if (tif & BIT(TIF_NEED_RESCHED))
		flags |= TRACE_FLAG_NEED_RESCHED;
	if (preempt_resched)
		flags |= TRACE_FLAG_PREEMPT_RESCHED;
	if (IS_ENABLED(CONFIG_ARCH_HAS_PREEMPT_LAZY) &&
	    (tif & BIT(TIF_NEED_RESCHED_LAZY)))
		flags |= TRACE_FLAG_NEED_RESCHED_LAZY;
#ifdef CONFIG_SMP
	migrate = current->migration_disabled;
#endif
	return ((flags << 16) | min(pc & 0xff, 0xfU) | min(migrate, 0xfU) << 4) -
	       IS_ENABLED(CONFIG_PREEMPTION);
}

/*
 * The data of an event ring_buffer_lock_reserve() returned, as
 * ring_buffer_event_data() finds it, without its call for a record of up
 * to 112 bytes. The event header is the ring buffer's page format, which
 * ring_buffer.h documents (enum ring_buffer_type) and tracefs describes
 * to the readers that parse it (events/header_event): type_len:5,
 * time_delta:27, then array[]; a data event's type_len of 1 to
 * RINGBUF_TYPE_DATA_TYPE_LEN_MAX gives its length, its data in array[0].
 * Any other (a longer record, whose length is in array[0]; a reservation
 * that starts with a time extend) is found by the kernel's function.
 * src/compat/trace-core.txt lists the ring buffer's code this follows.
 */
static __always_inline void *reserved_data(struct ring_buffer_event *event)
{
	if (likely(event->type_len - 1U < RINGBUF_TYPE_DATA_TYPE_LEN_MAX))
		return &event->array[0];
	return ring_buffer_event_data(event);
}

/*
 * Whether a static key is on, read in place: static_key_enabled() calls
 * static_key_count(), a function of the kernel. As there, -1 (a key
 * being turned on) counts as on.
 */
static __always_inline bool key_on(const struct static_key *key)
{
	return atomic_read(&key->enabled) != 0;
}

/*
 * Asked first: the file flags it requires clear include all that
 * trace_trigger_soft_disabled() acts on, so a record it lets through
 * needs no trigger call and no soft-disable test.
 */
static __always_inline bool fast_record_ok(const struct trace_event_file *file)
{
	/* Pairs with the release in dynprobe_fast_record_init(). */
	return smp_load_acquire(&fast.on) &&
	       !(READ_ONCE(file->flags) & SLOW_FILE_FLAGS) &&
	       !(key_on(dynprobe_ksyms.tracepoint_printk_key) |
		 key_on(dynprobe_ksyms.trace_event_exports_enabled)) &&
	       !(instance_options((const u8 *)file->tr) & fast.slow_options);
}

/*
 * A record of one size, written by the fetch programs in place (from the
 * feed's table when the caller found it a record of words: @words). Its
 * reservation, header and commit are also trace_record_copy_fast()'s:
 * written out twice, because a helper shared by both cost the hit a few
 * instructions (the buffer returned through memory).
 */
static __always_inline void trace_record_fast(const struct dynprobe_feed *feed,
					      struct trace_event_file *file,
					      const struct hit *hit, bool words)
{
	struct trace_buffer *buffer = READ_ONCE(
		*(struct trace_buffer **)((u8 *)file->tr + fast.buffer_offset));
	unsigned int trace_ctx = record_context();
	struct ring_buffer_event *event;
	struct trace_entry *entry;

	/*
	 * The context word made whole before the reservation: kept across
	 * the calls as one word, not as its parts.
	 */
	OPTIMIZER_HIDE_VAR(trace_ctx);
	event = ring_buffer_lock_reserve(buffer, feed->fixed_size);
	if (!event)
		return;
	entry = reserved_data(event);
	tracing_generic_entry_update(entry,
				     dynprobe_sink_call(feed->sink)->event.type,
				     trace_ctx);
	if (words)
		record_words(feed, hit, (u8 *)entry);
	else
		fetch_record(feed, hit, (u8 *)entry, feed->fixed_size);
	__this_cpu_write(*(bool __percpu *)dynprobe_ksyms.trace_taskinfo_save,
			 true);
	ring_buffer_unlock_commit(buffer);
}

/* A record already assembled at @rec, copied. */
static __always_inline void trace_record_copy_fast(struct trace_event_file *file,
						   const u8 *rec, size_t len)
{
	struct trace_buffer *buffer = READ_ONCE(
		*(struct trace_buffer **)((u8 *)file->tr + fast.buffer_offset));
	unsigned int trace_ctx = record_context();
	struct ring_buffer_event *event;
	struct trace_entry *entry;

	event = ring_buffer_lock_reserve(buffer, len);
	if (!event)
		return;
	entry = reserved_data(event);
	tracing_generic_entry_update(entry, file->event_call->event.type,
				     trace_ctx);
	memcpy((u8 *)entry + sizeof(*entry), rec + sizeof(*entry),
	       len - sizeof(*entry));
	__this_cpu_write(*(bool __percpu *)dynprobe_ksyms.trace_taskinfo_save,
			 true);
	ring_buffer_unlock_commit(buffer);
}

/*
 * Records only triggers read. While an event is soft disabled (its
 * triggers on, the event itself not enabled) and a trigger reads the
 * record (a hist trigger, a trigger with a filter: TRIGGER_COND), the
 * full path builds the record in the tracing core's per-CPU temporary
 * buffer, calls the triggers on it from trace_event_buffer_commit() and
 * drops it. Here the record the hit assembles in its scratch level is
 * handed to the triggers instead, with the same call and the same
 * arguments, and nothing else is done with it: the soft-disabled event
 * writes nothing, its filter is tested only for what would be written,
 * and output_printk(), the trace exports and the stack options act on
 * committed records only.
 *
 * What the triggers get besides the record: the instance's ring buffer,
 * as from the temporary buffer, and a ring-buffer event header, which a
 * hist trigger asks for its common_timestamp only. A trigger that reads
 * timestamps raises the instance's no_filter_buffering_ref before it is
 * added (hist_register_trigger()), and the full path then reserves a
 * real ring-buffer event whose stamp the trigger reads; so do the hits
 * here (trigger_record_ok()). The header handed over is an absolute time
 * stamp of 0: a trigger added between that test and the triggers' walk
 * reads a stamp of 0 for that hit, where ring_buffer_event_time_stamp()
 * would warn of an event outside any reservation.
 *
 * The event probe's pid filter (set_event_pid) is tested in the full
 * path only: an event with one takes it.
 */
struct trigger_record {
	bool on;
	u32 no_buffering_offset;
};
static struct trigger_record trigger_rec __read_mostly;

/* A ring_buffer_event of type RINGBUF_TYPE_TIME_STAMP and stamp 0. */
static u32 trigger_event[2] = { RINGBUF_TYPE_TIME_STAMP, 0 };

void dynprobe_trigger_record_init(u32 no_buffering_offset)
{
	if (!smp_load_acquire(&fast.on) || no_buffering_offset % sizeof(int))
		return;
	trigger_rec.no_buffering_offset = no_buffering_offset;
	/* Published after the offset (trigger_record_ok()). */
	smp_store_release(&trigger_rec.on, true);
}

/*
 * Whether the triggers alone read this hit's record, and may read it
 * where the hit assembled it. Asked only where the fast record path is
 * not taken.
 */
static __always_inline bool trigger_record_ok(const struct trace_event_file *file)
{
	const unsigned long want = EVENT_FILE_FL_SOFT_DISABLED |
				   EVENT_FILE_FL_TRIGGER_COND;
	const u8 *tr = (const u8 *)file->tr;

	if ((READ_ONCE(file->flags) & (want | EVENT_FILE_FL_PID_FILTER)) != want)
		return false;
	/* Pairs with the release in dynprobe_trigger_record_init(). */
	if (!smp_load_acquire(&trigger_rec.on))
		return false;
	if (READ_ONCE(*(const int *)(tr + trigger_rec.no_buffering_offset)))
		return false;
	/*
	 * The triggers' list is read after the count, as the trigger that
	 * raised it was added after raising it.
	 */
	smp_rmb();
	return true;
}

/*
 * The triggers on a record assembled at @rec, whose header is written
 * here, as trace_event_buffer_reserve() writes the temporary buffer's.
 * Called, not inlined, in place of trace_event_buffer_commit(): a
 * trigger that saves the stack (a hist trigger's stacktrace key, the
 * stacktrace trigger) skips a fixed number of frames, and sees the same
 * frames here as on the full path.
 */
static noinline void trigger_record(struct trace_event_file *file, u8 *rec)
{
	struct trace_buffer *buffer = READ_ONCE(
		*(struct trace_buffer **)((u8 *)file->tr + fast.buffer_offset));
	enum event_trigger_type tt;

	tracing_generic_entry_update((struct trace_entry *)rec,
				     file->event_call->event.type,
				     record_context());
	tt = event_triggers_call(file, buffer, rec,
				 (struct ring_buffer_event *)trigger_event);
	if (tt)
		event_triggers_post_call(file, tt);
}
NOKPROBE_SYMBOL(trigger_record);

/*
 * The full path of a record assembled at @rec. Apart from the fast path,
 * as trace_record_full() is: the kernel's builds clear every automatic
 * variable where its scope begins (CONFIG_INIT_STACK_ALL_ZERO), and the
 * fast path does not need @fbuffer cleared.
 */
static __always_inline void trace_record_copy_full(struct trace_event_file *file,
						   struct pt_regs *regs,
						   u8 *rec, size_t len)
{
	struct trace_event_buffer fbuffer;
	struct trace_entry *entry;

	if (trigger_record_ok(file)) {
		trigger_record(file, rec);
		return;
	}
	if (trace_trigger_soft_disabled(file))
		return;
	entry = trace_event_buffer_reserve(&fbuffer, file, len);
	if (!entry)
		return;
	fbuffer.regs = regs;
	memcpy((u8 *)entry + sizeof(*entry), rec + sizeof(*entry),
	       len - sizeof(*entry));
	trace_event_buffer_commit(&fbuffer);
}

/*
 * A record of variable size, assembled at @rec, into every instance the
 * event is enabled in: copied past the tracing core's generic layers
 * while none of them is set (the fast record path), through them
 * otherwise.
 */
static __always_inline void trace_record_copy(struct trace_event_file *file,
					      struct pt_regs *regs,
					      u8 *rec, size_t len)
{
	if (fast_record_ok(file))
		trace_record_copy_fast(file, rec, len);
	else
		trace_record_copy_full(file, regs, rec, len);
}

/*
 * Into the sink's one instance, or each of its set. @file is read again
 * when there is no set: the writer publishes a new set before clearing
 * @file and sets @file before unpublishing the set, so a hit that misses
 * both at first finds the one the event went to meanwhile. A slot of the
 * set is NULL once its instance is disabled (disabling needs no memory).
 */
static __always_inline void trace_record(const struct dynprobe_sink *sink,
					 struct pt_regs *regs, u8 *rec,
					 size_t len)
{
	/* Pairs with the release stores of @file (trace_event.rs). */
	struct trace_event_file *file = smp_load_acquire(&sink->file);
	const struct dynprobe_files *files;
	unsigned long i, nr;

	if (!file) {
		files = rcu_dereference_sched(sink->files);
		if (files) {
			nr = READ_ONCE(files->nr);
			for (i = 0; i < nr; i++) {
				file = READ_ONCE(files->file[i]);
				if (file)
					trace_record_copy(file, regs, rec, len);
			}
			return;
		}
		/* Ordered after the read of the set, as the writes are. */
		smp_rmb();
		file = READ_ONCE(sink->file);
		if (!file)
			return;
	}
	trace_record_copy(file, regs, rec, len);
}

/* The full path of a record of one size, written in place. */
static __always_inline void trace_record_full(const struct dynprobe_feed *feed,
					      struct trace_event_file *file,
					      const struct hit *hit)
{
	struct trace_event_buffer fbuffer;
	struct trace_entry *entry;
	u8 *rec;

	if (trigger_record_ok(file)) {
		rec = scratch_get();
		if (rec) {
			fetch_record(feed, hit, rec, feed->fixed_size);
			trigger_record(file, rec);
			scratch_put();
			return;
		}
	}
	if (trace_trigger_soft_disabled(file))
		return;
	entry = trace_event_buffer_reserve(&fbuffer, file, feed->fixed_size);
	if (!entry)
		return;
	fbuffer.regs = hit->regs;
	fetch_record(feed, hit, (u8 *)entry, feed->fixed_size);
	trace_event_buffer_commit(&fbuffer);
}

/*
 * A record of one size enabled in one trace instance only (the common
 * case): the programs write it straight into the reserved ring-buffer
 * entry, as the kernel's probe events do, without a copy; on the fast
 * path while nothing needs the full one.
 */
static __always_inline void trace_record_direct(const struct dynprobe_feed *feed,
						struct trace_event_file *file,
						const struct hit *hit)
{
	if (fast_record_ok(file))
		trace_record_fast(feed, file, hit, false);
	else
		trace_record_full(feed, file, hit);
}

/*
 * Handlers run with preemption disabled, which is an RCU read-side
 * section for the sink's set of files.
 */
static __always_inline void dispatch(const struct dynprobe_feed *feed,
				     const struct hit *hit)
{
	const struct dynprobe_sink *sink = feed->sink;
	unsigned int flags = READ_ONCE(sink->flags);
	struct trace_event_file *file;
	size_t len;
	u8 *rec;

	raw_cpu_inc(*feed->nhit);
	if (!flags)
		return;
	file = READ_ONCE(sink->file);
	if (flags == DYNPROBE_SINK_TRACE && feed->fixed_size && file) {
		trace_record_direct(feed, file, hit);
		return;
	}
	rec = scratch_get();
	if (!rec)
		return;
	len = fetch_record(feed, hit, rec, DYNPROBE_RECORD_MAX);
	if (len >= sizeof(struct trace_entry)) {
		if (flags & DYNPROBE_SINK_TRACE)
			trace_record(sink, hit->regs, rec, len);
#ifdef CONFIG_PERF_EVENTS
		if ((flags & DYNPROBE_SINK_PERF) && hit->source)
			dynprobe_eprobe_perf_defer(sink, rec, len);
		else if (flags & DYNPROBE_SINK_PERF)
			perf_record(dynprobe_sink_call(sink), hit->regs,
				    hit->fregs, rec, len);
#endif
	}
	scratch_put();
}

/* Out of line: a kprobe's common hit is dynprobe_kprobe_hit()'s. */
noinline void dynprobe_dispatch(const struct dynprobe_feed *feed,
				struct pt_regs *regs,
				const unsigned long *entry_data,
				unsigned long ip1, unsigned long ip2)
{
	const struct hit hit = {
		.regs = regs, .entry_data = entry_data, .ip1 = ip1, .ip2 = ip2,
	};

	dispatch(feed, &hit);
}
NOKPROBE_SYMBOL(dynprobe_dispatch);

/*
 * The common hit through ftrace (fprobe, fentry.c's ftrace_ops) or a
 * kprobe, inlined into their entry points: a record of words (always of
 * one size) into the one trace instance the event is enabled in, on the
 * fast record path. The tests are dispatch()'s for that case; every other
 * hit goes out of line (dispatch_ftrace_slow(), dynprobe_dispatch()), so
 * the entry points' frames hold this path's state alone (no fbuffer, no
 * stack canary). Whether the hit was recorded here.
 */
static __always_inline bool dispatch_words_fast(const struct dynprobe_feed *feed,
						const struct hit *hit)
{
	const struct dynprobe_sink *sink = feed->sink;
	struct trace_event_file *file;

	/* A record of words has a size of its own (feed->fixed_size). */
	if (READ_ONCE(sink->flags) != DYNPROBE_SINK_TRACE || !feed->words)
		return false;
	file = READ_ONCE(sink->file);
	if (!file || !fast_record_ok(file))
		return false;
	raw_cpu_inc(*feed->nhit);
	trace_record_fast(feed, file, hit, true);
	return true;
}

/*
 * The rest of a hit through ftrace: @regs are ftrace_partial_regs(@fregs),
 * which the programs read; perf gets registers of its own (perf_record()).
 */
static noinline void dispatch_ftrace_slow(const struct dynprobe_feed *feed,
					  struct ftrace_regs *fregs,
					  struct pt_regs *regs,
					  const unsigned long *entry_data,
					  unsigned long ip1, unsigned long ip2)
{
	const struct hit hit = {
		.regs = regs, .fregs = fregs, .entry_data = entry_data,
		.ip1 = ip1, .ip2 = ip2,
	};

	dispatch(feed, &hit);
}
NOKPROBE_SYMBOL(dispatch_ftrace_slow);

/* A hit through fprobe (fprobe.c). */
void dynprobe_dispatch_ftrace(const struct dynprobe_feed *feed,
			      struct ftrace_regs *fregs, struct pt_regs *regs,
			      const unsigned long *entry_data,
			      unsigned long ip1, unsigned long ip2)
{
	const struct hit hit = {
		.regs = regs, .fregs = fregs, .entry_data = entry_data,
		.ip1 = ip1, .ip2 = ip2,
	};

	if (!dispatch_words_fast(feed, &hit))
		dispatch_ftrace_slow(feed, fregs, regs, entry_data, ip1, ip2);
}
NOKPROBE_SYMBOL(dynprobe_dispatch_ftrace);

/*
 * A kprobe's pre-handler (kprobe.c sets it), here so that the common hit's
 * path is inlined into it: a kprobe's hit has no entry data and one header
 * ip. As a hit through ftrace, every other hit goes out of line
 * (dynprobe_dispatch()), so the handler's frame holds the common path's
 * state alone.
 */
int dynprobe_kprobe_hit(struct kprobe *kp, struct pt_regs *regs)
{
	const struct dynprobe_kprobe *probe =
		container_of(kp, struct dynprobe_kprobe, rp.kp);
	const struct hit hit = {
		.regs = regs, .ip1 = (unsigned long)kp->addr, .regs_only = true,
	};

	if (!dispatch_words_fast(probe->feed, &hit))
		dynprobe_dispatch(probe->feed, regs, NULL, hit.ip1, 0);
	return 0;
}
NOKPROBE_SYMBOL(dynprobe_kprobe_hit);

/*
 * Whether RCU watches this CPU, asked with preemption disabled: what
 * rcu_is_watching() reads, without its call and its own preemption
 * toggle, where the kernel tracks it per CPU (every TREE_RCU kernel).
 */
static __always_inline bool rcu_watching_here(void)
{
#ifdef CONFIG_CONTEXT_TRACKING_IDLE
	return rcu_is_watching_curr_cpu();
#else
	return rcu_is_watching();
#endif
}

/*
 * The shared ftrace_ops' callback (fentry.c), here so that the hit path is
 * inlined into it, as into the other entry points: the entry probes
 * armed on the function hit, found by its call site (@ip).
 */
void dynprobe_fentry_callback(unsigned long ip, unsigned long parent_ip,
			      struct ftrace_ops *op, struct ftrace_regs *fregs)
{
	struct dynprobe_fentry *probe;
	struct pt_regs *regs;
	int bit;

	/* Also disables preemption, which the table's readers rely on. */
	bit = ftrace_test_recursion_trylock(ip, parent_ip);
	if (bit < 0)
		return;
	/* As fprobe: nothing is recorded where RCU does not watch. */
	if (!rcu_watching_here())
		goto out;
	regs = ftrace_partial_regs(fregs, NULL);
	hash_for_each_possible_rcu_notrace(dynprobe_fentry_probes, probe,
					   node, ip) {
		const struct hit hit = {
			.regs = regs, .fregs = fregs,
			.ip1 = parent_ip, .ip2 = ip, .fentry = true,
			.regs_only = true,
		};

		if (probe->addr != ip)
			continue;
		if (dispatch_words_fast(&probe->feed, &hit))
			continue;
		/*
		 * A function event's header: the caller, then the call site,
		 * as fprobe reports them; an f event's: the call site.
		 */
		if (probe->kind == DYNPROBE_FUNCTION_ENTRY)
			dispatch_ftrace_slow(&probe->feed, fregs, regs, NULL,
					     parent_ip, ip);
		else
			dispatch_ftrace_slow(&probe->feed, fregs, regs, NULL,
					     ip, 0);
	}
out:
	ftrace_test_recursion_unlock(bit);
}
NOKPROBE_SYMBOL(dynprobe_fentry_callback);

/*
 * The same for a uprobe's record of words (uprobe.c), in the probed task
 * with preemption disabled by the caller: @regs are the task's user
 * registers, @entry_data a return probe's entry words.
 */
void dynprobe_dispatch_user(const struct dynprobe_feed *feed,
			    struct pt_regs *regs,
			    const unsigned long *entry_data,
			    unsigned long ip1, unsigned long ip2)
{
	const struct hit hit = {
		.regs = regs, .entry_data = entry_data, .ip1 = ip1, .ip2 = ip2,
	};

	dispatch(feed, &hit);
}
NOKPROBE_SYMBOL(dynprobe_dispatch_user);

/*
 * A uprobe's other records (uprobe.c), assembled beforehand in the task
 * with preemption on, where user memory can be faulted in, as
 * trace_uprobe assembles its own: copied here, preemption disabled by
 * the caller, into the event's instances and to perf. The caller counted
 * the hit.
 */
void dynprobe_dispatch_user_record(const struct dynprobe_feed *feed,
				   struct pt_regs *regs, u8 *rec,
				   size_t len)
{
	const struct dynprobe_sink *sink = feed->sink;
	unsigned int flags = READ_ONCE(sink->flags);

	if (len < sizeof(struct trace_entry))
		return;
	if (flags & DYNPROBE_SINK_TRACE)
		trace_record(sink, regs, rec, len);
#ifdef CONFIG_PERF_EVENTS
	if (flags & DYNPROBE_SINK_PERF)
		perf_record(dynprobe_sink_call(sink), regs, NULL, rec, len);
#endif
}
NOKPROBE_SYMBOL(dynprobe_dispatch_user_record);

void dynprobe_dispatch_event(const struct dynprobe_feed *feed,
			     struct pt_regs *regs, const void *source,
			     size_t source_len)
{
	const struct hit hit = {
		.regs = regs, .source = source, .source_len = source_len,
	};

	dispatch(feed, &hit);
}
NOKPROBE_SYMBOL(dynprobe_dispatch_event);

int dynprobe_hit_init(void)
{
	scratch = alloc_percpu(struct scratch);
	return scratch ? 0 : -ENOMEM;
}

void dynprobe_hit_exit(void)
{
	free_percpu(scratch);
	scratch = NULL;
}
