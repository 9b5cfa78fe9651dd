// SPDX-License-Identifier: GPL-2.0

//! Text of tracefs `dynprobe/README`: the syntax the control files accept.
//!
//! The probe-event part uses the notation of the kernel's own tracefs
//! README, line for line where dynprobe accepts the same syntax, so that
//! tools (and the kernel's ftracetest suites) that look for a feature's
//! syntax line find it exactly when dynprobe supports that feature.

/// Served as `dynprobe/README`, in three parts: the event probe's syntax
/// line is [`README_EPROBE`] or, where the kernel's filter parser is at
/// hand, [`README_EPROBE_FILTER`].
pub(crate) const README: [&str; 2] = [README_HEAD, README_TAIL];

/// The event probe's syntax line without filters.
pub(crate) const README_EPROBE: &str =
    "\t           e[:[<group>/][<event>]] <attached-group>.<attached-event> [<args>]\n";
/// The same with filters, as the kernel's README has it.
pub(crate) const README_EPROBE_FILTER: &str =
    "\t           e[:[<group>/][<event>]] <attached-group>.<attached-event> [<args>] [if <filter>]\n";

const README_HEAD: &str = "\
dynprobe: dynamic trace events, defined by writing into these files.
Writing with '>' replaces the file's definitions, '>>' appends; reading
lists them. Errors are reported in the tracing error_log.

  function_events\t- Create/append/remove/show function entry events
\t   Format: <function>(<type> <name>, ...)
\t     type: u8/16/32/64, s8/16/32/64, x8/16/32/64, char, short, int, long,
\t           [unsigned] char/short/int/long, size_t, symbol, string,
\t           <type>[<array-size>]
\t           <function>(<args>) -> <type> <name>   (event at function exit)
\t    named: <function>(<param>[->field|.field...][:type], ...) by BTF name
\t           and type, as fprobe args (<name>=<fetcharg> too); taking no
\t           position; <function>(...) every parameter;
\t           <function>(<args>) -> <name>[:type]   (return value, BTF type)
\t     user: <path>:<function>(<type> <name>, ...) [-> <type> <name>]
\t           a function of a user-space file, positional (six registers)
  kprobe_events\t\t- Create/append/remove/show the kernel dynamic events
\t\t\t  Write into this file to define/undefine new trace events.
  uprobe_events\t\t- Create/append/remove/show the userspace dynamic events
\t\t\t  Write into this file to define/undefine new trace events.
  dynamic_events\t- Create/append/remove/show the generic dynamic events
\t\t\t  Write into this file to define/undefine new trace events.
\t  accepts: event-definitions (one definition per line)
\t   Format: p[:[<group>/][<event>]] <place> [<args>]
\t           r[maxactive][:[<group>/][<event>]] <place> [<args>]
\t           f[:[<group>/][<event>]] <func-name>[%return] [<args>]
\t           f:[<group>/]<event> <func-name>[,[!]<func-name>...][:entry|:exit] [<args>]
\t           t[:[<group>/][<event>]] <tracepoint> [<args>]
";

// The w line is the posted wprobe series' own (a watchpoint also takes
// `<symbol>[+|-<offset>]` for its address, and `$addr`, `$value`).
const README_TAIL: &str = "\
\t           w[:[<group>/][<event>]] [r|w|rw]@<addr>[:<len>]
\t           s:[synthetic/]<event> <field> [<field>]
\t           -:[<group>/][<event>]
\t    place: [<module>:]<symbol>[+<offset>]|<memaddr>
  place (kretprobe): [<module>:]<symbol>[+<offset>]%return|<memaddr>
   place (uprobe): <path>:<offset>|<symbol>[+<offset>][%return][(ref_ctr_offset)]
\t     args: <name>=fetcharg[:type]
\t fetcharg: (%<register>|$<efield>), @<address>, @<symbol>[+|-<offset>],
\t           $stack<index>, $stack, $retval, $comm, $arg<N>, $current,
\t           [(structname[,field])]<argname>[->field[->field|.field...]],
\t           [(structname[,field])](fetcharg)->field[->field|.field...],
\t           +|-[u]<offset>(<fetcharg>), \\imm-value, \\\"imm-string\"
\t           this_cpu_read(<fetcharg>), this_cpu_ptr(<fetcharg>),
\t           @+<file-offset> (uprobes)
\t     kernel return probes support: $retval, $arg<N>, $comm
\t     watchpoints support: $addr, $value
\t     type: s8/16/32/64, u8/16/32/64, x8/16/32/64, char, string, symbol,
\t           b<bit-width>@<bit-offset>/<container-size>, ustring,
\t           symstr, %pd/%pD, <type>\\[<array-size>\\]
  kprobe_profile\t- Hits and misses of each kprobe_events event
  uprobe_profile\t- Hits of each uprobe_events probe, with its file
  fetch_programs\t- Each probe definition and what its arguments compiled to
  synthetic_events\t- Create/append/remove/show synthetic events
\t  Write into this file to define/undefine new synthetic events.
\t     example: echo 'myevent u64 lat; char name[]; long[] stack' >> synthetic_events
";
