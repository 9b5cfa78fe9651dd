// SPDX-License-Identifier: GPL-2.0
//! The command line's one definition: every subcommand, option and
//! manual text of `dynprobe`, as clap's derive. Parsing (args.rs), the
//! manual (`dynprobe --help`, here), the completions and the man page
//! (docs.rs) are all made from it.

use std::ffi::OsStr;

use clap::builder::{PossibleValue, TypedValueParser};
use clap::{Arg, ArgAction, Command, CommandFactory, Parser, Subcommand, ValueHint};

/// What the top-level manual says after its usage lines.
const LINES: &str = "\
A LINE is any line of dynprobe's control files; the form picks the file:
  p:..., r:...                      kprobe_events
  f:..., t:..., e:..., w:..., s:... dynamic_events
  FUNC(ARGS) [-> ...]               function_events
  EVENT TYPE FIELD[; ...]           synthetic_events
  p:... PATH:OFFSET, r:...          uprobe_events
or perf probe's shorthand, [[GROUP:]EVENT=]FUNC[%return|+OFFS] [ARG...],
which becomes an fprobe line: 'vfs_read file count' is
'f:probe/vfs_read vfs_read file count' (kprobe 'p:...' for FUNC+OFFS).
perf's source-level places, FUNC[@SRC][:RLN|;PTN], SRC:ALN and SRC;PTN,
with variables by name, members, bit-fields, $params and $vars, become
kprobe lines computed from the kernel's DWARF (--debuginfo, --source).
With -x BIN (add, check, trace), each LINE is perf probe's form on the
executable or shared library BIN, a uprobe line of uprobe_events at the
file offset its ELF file gives:
  [[GROUP:]EVENT=]FUNC[%return|+OFFS] [ARG...]   group probe_BINNAME,
                                   fetch arguments as written
  [[GROUP:]EVENT=]sdt:PROVIDER:NAME (or %[sdt_]PROVIDER:NAME)
                                   an SDT marker, group sdt_PROVIDER, its
                                   semaphore the reference counter, its
                                   arguments arg1..argN

Every line is checked on the host first, with the module's language and
the running kernel's BTF: a refused line is printed as error_log shows it,
with a caret, and nothing is written. Lines are appended (never
truncating); a line the module refuses prints its error_log entry and
leaves every other definition in place. Exit status: 0 when all went
well, 1 otherwise, 2 for a usage error.

Files: /sys/kernel/tracing/dynprobe/ (DYNPROBE_TRACEFS=DIR for another
tracing directory), /sys/kernel/btf/. Run 'dynprobe help SUBCOMMAND' for
each subcommand; 'dynprobe --version' prints the version.";

/// `dynprobe`'s command line.
#[derive(Parser, Debug)]
#[command(
    name = "dynprobe",
    // cmd/Cargo.toml's, the version of the Debian packages and of the
    // module's modinfo (tools/setup/deb checks they agree).
    version,
    about = "find, define, trace and clean up dynprobe events",
    after_help = LINES,
    disable_help_subcommand = true
)]
pub struct Cli {
    /// The subcommand (none: the manual).
    #[command(subcommand)]
    pub sub: Option<Sub>,
}

/// The subcommands; each one's `before_help` and `after_help` are its
/// manual around its options.
#[derive(Subcommand, Debug)]
pub enum Sub {
    /// List traceable functions, tracepoints and dynprobe's events
    #[command(
        before_help = "\
Lists what can be traced, one a line, filtered by GLOB (*, ?, [...]):
  function NAME(PARAMS) [MODULE]   functions ftrace can hook
                                   (available_filter_functions), with
                                   their parameters from BTF
                                   (/sys/kernel/btf/vmlinux, /sys/kernel/btf/MOD)
  tracepoint SYSTEM:EVENT(FIELDS)  trace events (events/*/*/format)
  dynprobe GROUP:EVENT (FILE: LINE) dynprobe's own events
With -x BIN, what a uprobe on the executable or shared library BIN can
name instead, read from its ELF file:
  function NAME [(ifunc)]          functions of .symtab, else .dynsym
  sdt PROVIDER:NAME(SPEC, ...)     SDT markers (.note.stapsdt) with
                                   their argument specs",
        after_help = "\
A GLOB matches the function name, SYSTEM:EVENT or EVENT; with -x, the
function name or the marker's PROVIDER:NAME or NAME.
Example:
  dynprobe list -v -x /usr/lib/x86_64-linux-gnu/libc.so.6 'malloc*'"
    )]
    List {
        /// Only what this glob matches
        #[arg(value_name = "GLOB", value_hint = ValueHint::Other)]
        glob: Option<String>,
        /// add the C types: 'function ssize_t vfs_read(struct file *file, ...)'
        /// (with -x: file offsets, sizes and fetch arguments)
        #[arg(short, long)]
        verbose: bool,
        /// list the functions and SDT markers of the ELF file BIN (with
        /// --line or --vars: read BIN's DWARF)
        #[arg(short = 'x', long = "exec", value_name = "BIN",
              value_hint = ValueHint::FilePath)]
        exec: Option<String>,
        /// the source lines of FUNC[:RLN[+N|-RLN2]] or SRC:ALN[+N|-ALN2],
        /// the probe-able ones numbered as perf probe numbers them
        #[arg(long, value_name = "PLACE", allow_hyphen_values = true,
              value_hint = ValueHint::Other)]
        line: Option<String>,
        /// the variables and parameters visible at PLACE, with their types
        #[arg(long, value_name = "PLACE", allow_hyphen_values = true,
              value_hint = ValueHint::Other)]
        vars: Option<String>,
        /// with --vars: the global variables of PLACE's unit too
        #[arg(long)]
        externs: bool,
        /// the functions of the debug file's .text that GLOB passes, a
        /// perf probe filter (!, &, |, parentheses; default '!_* & !*@plt')
        #[arg(long)]
        funcs: bool,
        /// the kernel's debug file (a vmlinux with DWARF, or a module's
        /// with -m) for source-level places, or with -x BIN's, or a
        /// directory of debug files laid out as /usr/lib/debug; default:
        /// found by build id and Debian's paths (BIN's own DWARF or debug
        /// link first)
        #[arg(long, value_name = "FILE", value_hint = ValueHint::FilePath)]
        debuginfo: Option<String>,
        /// the kernel's source tree, for ;PATTERN places and source text
        #[arg(long, value_name = "DIR", value_hint = ValueHint::DirPath)]
        source: Option<String>,
        /// the kernel module of the places: its name, or the path of its
        /// .ko (its debug file found by build id and Debian's paths, or
        /// --debuginfo FILE)
        #[arg(short = 'm', long = "module", value_name = "MODULE",
              value_hint = ValueHint::Other)]
        module: Option<String>,
    },
    /// Define events from lines of dynprobe's control files
    #[command(
        before_help = "\
Defines each LINE in the control file its form picks (see dynprobe help),
in order; stops at the first refused line (those before it stay defined).
A line translated from perf's forms is printed as written ('FILE: LINE'),
with what its file offsets are after '#'.",
        after_help = "\
Examples:
  dynprobe add 'vfs_read(file, count)'
  dynprobe add 'p:demo/open do_sys_openat2 dfd=%di:s32'
  dynprobe add 'vfs_read%return $retval'
  dynprobe add -x /usr/lib/x86_64-linux-gnu/libc.so.6 'malloc size=%di:u64'
  dynprobe add -x /usr/bin/python3 'sdt:python:gc__start'"
    )]
    Add {
        /// print 'FILE: LINE' for each line instead of writing
        #[arg(long)]
        dry_run: bool,
        /// skip the host check (the module still checks)
        #[arg(long)]
        no_check: bool,
        /// take each LINE as perf probe's form on the ELF file BIN
        #[arg(short = 'x', long = "exec", value_name = "BIN",
              value_hint = ValueHint::FilePath)]
        exec: Option<String>,
        /// print the kprobe lines as perf probe -D does, write nothing
        #[arg(short = 'D', long)]
        definition: bool,
        /// the kernel's debug file (a vmlinux with DWARF, or a module's
        /// with -m) for source-level places, or with -x BIN's, or a
        /// directory of debug files laid out as /usr/lib/debug; default:
        /// found by build id and Debian's paths (BIN's own DWARF or debug
        /// link first)
        #[arg(long, value_name = "FILE", value_hint = ValueHint::FilePath)]
        debuginfo: Option<String>,
        /// the kernel's source tree, for ;PATTERN places and source text
        #[arg(long, value_name = "DIR", value_hint = ValueHint::DirPath)]
        source: Option<String>,
        /// the kernel module of the places: its name, or the path of its
        /// .ko (its debug file found by build id and Debian's paths, or
        /// --debuginfo FILE)
        #[arg(short = 'm', long = "module", value_name = "MODULE",
              value_hint = ValueHint::Other)]
        module: Option<String>,
        /// A line of a control file, or perf probe's shorthand
        #[arg(value_name = "LINE", required = true, allow_hyphen_values = true,
              value_hint = ValueHint::Other)]
        lines: Vec<String>,
    },
    /// Remove dynprobe's events by name or glob
    #[command(before_help = "\
Removes each of dynprobe's events that a pattern names: GROUP/EVENT,
GROUP:EVENT, EVENT (any group) or a glob of either ('probe/*', 'vfs_*').
A pattern that names nothing is an error (status 1).")]
    Del {
        /// print the removal lines instead of writing them
        #[arg(long)]
        dry_run: bool,
        /// GROUP/EVENT, GROUP:EVENT, EVENT or a glob of either
        #[arg(value_name = "EVENT|GLOB", required = true, allow_hyphen_values = true,
              value_hint = ValueHint::Other)]
        patterns: Vec<String>,
    },
    /// Print dynprobe's definitions with their files
    #[command(before_help = "\
Prints dynprobe's definitions, each with its file:
  FILE: LINE")]
    Show,
    /// Check lines on the host only
    #[command(before_help = "\
Checks each LINE on the host only (no module needed) and prints
'FILE: LINE' (with what its file offsets are after '#') or the error as
error_log shows it, with its caret.")]
    Check {
        /// take each LINE as perf probe's form on the ELF file BIN
        #[arg(short = 'x', long = "exec", value_name = "BIN",
              value_hint = ValueHint::FilePath)]
        exec: Option<String>,
        /// the kernel's debug file (a vmlinux with DWARF, or a module's
        /// with -m) for source-level places, or with -x BIN's, or a
        /// directory of debug files laid out as /usr/lib/debug; default:
        /// found by build id and Debian's paths (BIN's own DWARF or debug
        /// link first)
        #[arg(long, value_name = "FILE", value_hint = ValueHint::FilePath)]
        debuginfo: Option<String>,
        /// the kernel's source tree, for ;PATTERN places and source text
        #[arg(long, value_name = "DIR", value_hint = ValueHint::DirPath)]
        source: Option<String>,
        /// the kernel module of the places: its name, or the path of its
        /// .ko (its debug file found by build id and Debian's paths, or
        /// --debuginfo FILE)
        #[arg(short = 'm', long = "module", value_name = "MODULE",
              value_hint = ValueHint::Other)]
        module: Option<String>,
        /// A line of a control file, or perf probe's shorthand
        #[arg(value_name = "LINE", required = true, allow_hyphen_values = true,
              value_hint = ValueHint::Other)]
        lines: Vec<String>,
    },
    /// Define, enable and stream events, then remove them
    #[command(
        before_help = "\
Defines the LINEs, enables their events in a trace instance of its own
(instances/dynprobe-PID), streams the events as trace_pipe prints them,
and stops at Ctrl-C (SIGINT), SIGTERM or SIGHUP, or when CMD exits. It
then removes exactly what it made, also when the module refused one of
the lines, and prints a summary on stderr: events seen per event, misses
(dynprobe/kprobe_profile) and records lost in the ring buffer (the
instance's per_cpu/cpu*/stats overrun and dropped events).
With -x BIN and CMD, only the records of CMD and its children are kept
(the instance's set_event_pid, with its event-fork option): CMD starts
once its pid is set.",
        after_help = "\
Exit status: CMD's when it ran, 128+N after signal N, 1 on an error.
Examples:
  dynprobe trace 'vfs_read(file, count)' -- cat /etc/hostname
  dynprobe trace -x /usr/bin/python3 sdt:python:gc__start -- python3 -c 'import gc; gc.collect()'"
    )]
    Trace {
        /// set EXPR as each event's filter
        #[arg(long, value_name = "EXPR", allow_hyphen_values = true)]
        filter: Option<String>,
        /// one JSON object a line: comm, pid, cpu, time, event, text
        #[arg(long)]
        json: bool,
        /// skip the host check (the module still checks)
        #[arg(long)]
        no_check: bool,
        /// take each LINE as perf probe's form on the ELF file BIN
        #[arg(short = 'x', long = "exec", value_name = "BIN",
              value_hint = ValueHint::FilePath)]
        exec: Option<String>,
        /// the kernel's debug file (a vmlinux with DWARF, or a module's
        /// with -m) for source-level places, or with -x BIN's, or a
        /// directory of debug files laid out as /usr/lib/debug; default:
        /// found by build id and Debian's paths (BIN's own DWARF or debug
        /// link first)
        #[arg(long, value_name = "FILE", value_hint = ValueHint::FilePath)]
        debuginfo: Option<String>,
        /// the kernel's source tree, for ;PATTERN places and source text
        #[arg(long, value_name = "DIR", value_hint = ValueHint::DirPath)]
        source: Option<String>,
        /// the kernel module of the places: its name, or the path of its
        /// .ko (its debug file found by build id and Debian's paths, or
        /// --debuginfo FILE)
        #[arg(short = 'm', long = "module", value_name = "MODULE",
              value_hint = ValueHint::Other)]
        module: Option<String>,
        /// A line of a control file, or perf probe's shorthand
        #[arg(value_name = "LINE", required = true, allow_hyphen_values = true,
              value_hint = ValueHint::Other)]
        lines: Vec<String>,
        /// A command to run while tracing, with its arguments
        #[arg(last = true, value_names = ["CMD", "ARGS"], num_args = 1..,
              value_hint = ValueHint::CommandWithArguments)]
        cmd: Vec<String>,
    },
    /// Print the manual, or a subcommand's
    Help {
        /// The subcommand whose manual to print
        #[arg(value_name = "SUBCOMMAND")]
        subcommand: Option<String>,
    },
}

/// `help`'s argument: any word (an unknown one is `run`'s error), with
/// the subcommands' names offered to the completions.
#[derive(Clone)]
struct SubcommandName(Vec<String>);

impl TypedValueParser for SubcommandName {
    type Value = String;

    fn parse_ref(
        &self,
        _cmd: &Command,
        _arg: Option<&Arg>,
        value: &OsStr,
    ) -> Result<String, clap::Error> {
        Ok(value.to_string_lossy().into_owned())
    }

    fn possible_values(&self) -> Option<Box<dyn Iterator<Item = PossibleValue> + '_>> {
        Some(Box::new(
            self.0.iter().map(|n| PossibleValue::new(n.clone())),
        ))
    }
}

/// `-h`, `--help`: in the completions and the man page, but not repeated
/// in the manual it prints.
fn help_flag() -> Arg {
    Arg::new("help")
        .short('h')
        .long("help")
        .help("print this manual")
        .action(ArgAction::Help)
        .hide_short_help(true)
}

/// Whether an argument is the `--help` flag.
pub fn is_help(arg: &Arg) -> bool {
    matches!(arg.get_action(), ArgAction::Help)
}

/// One argument as a usage line shows it: `[-v]`, `[--filter EXPR]`,
/// `LINE...`, `[GLOB]`, `[-- CMD [ARGS]]`.
fn arg_usage(arg: &Arg) -> String {
    let names = arg.get_value_names().unwrap_or_default();
    let name = names
        .first()
        .map(|n| n.to_string())
        .unwrap_or_else(|| arg.get_id().to_string().to_uppercase());
    if arg.is_last_set() {
        let rest: Vec<_> = names.iter().skip(1).map(|n| format!(" [{n}]")).collect();
        return format!("[-- {name}{}]", rest.concat());
    }
    if arg.is_positional() {
        let word = match arg.get_action() {
            ArgAction::Append => format!("{name}..."),
            _ => name,
        };
        return if arg.is_required_set() {
            word
        } else {
            format!("[{word}]")
        };
    }
    let flag = match (arg.get_short(), arg.get_long()) {
        (Some(s), _) => format!("-{s}"),
        (None, Some(l)) => format!("--{l}"),
        (None, None) => name.clone(),
    };
    if arg.get_action().takes_values() {
        format!("[{flag} {name}]")
    } else {
        format!("[{flag}]")
    }
}

/// A subcommand's usage line, from its arguments in their order:
/// `dynprobe add [--dry-run] [--no-check] LINE...`.
pub fn usage(sub: &Command) -> String {
    let mut words = vec![format!("dynprobe {}", sub.get_name())];
    words.extend(
        sub.get_arguments()
            .filter(|a| !is_help(a) && !a.is_hide_set())
            .map(arg_usage),
    );
    words.join(" ")
}

/// The definition as clap builds it: the derive, each command's `--help`
/// flag, the usage lines, `help`'s completions, and a repeated option
/// taking its last value.
pub fn command() -> Command {
    let cmd = Cli::command();
    let names = SubcommandName(
        cmd.get_subcommands()
            .map(|s| s.get_name().to_string())
            .collect(),
    );
    let cmd = cmd
        .mut_subcommand("help", |s| {
            s.mut_arg("subcommand", |a| a.value_parser(names))
        })
        .disable_help_flag(true)
        .arg(help_flag())
        .args_override_self(true)
        .mut_subcommands(|s| {
            let line = usage(&s);
            s.disable_help_flag(true)
                .arg(help_flag())
                .args_override_self(true)
                .override_usage(line)
        });
    let lines: Vec<String> = cmd.get_subcommands().map(usage).collect();
    cmd.override_usage(lines.join("\n       "))
}

/// One option as the manual names it: `-v, --verbose`, `--filter EXPR`.
pub fn option_name(arg: &Arg) -> String {
    let mut name = match (arg.get_short(), arg.get_long()) {
        (Some(s), Some(l)) => format!("-{s}, --{l}"),
        (Some(s), None) => format!("-{s}"),
        (None, Some(l)) => format!("--{l}"),
        (None, None) => String::new(),
    };
    if arg.get_action().takes_values() {
        for v in arg.get_value_names().unwrap_or_default() {
            name += &format!(" {v}");
        }
    }
    name
}

/// A command's options, one a line with its help, the helps aligned.
fn options(cmd: &Command) -> String {
    let opts: Vec<_> = cmd
        .get_arguments()
        .filter(|a| !a.is_positional() && !is_help(a))
        .map(|a| (option_name(a), a.get_help().map(|h| h.to_string())))
        .collect();
    let width = opts.iter().map(|(n, _)| n.len()).max().unwrap_or(0);
    let mut out = String::new();
    for (n, h) in &opts {
        out += &format!("  {n:width$}  {}\n", h.as_deref().unwrap_or_default());
    }
    out
}

/// The manual of the whole command (`None`) or of one subcommand; `None`
/// for a name that is no subcommand.
pub fn manual(sub: Option<&str>) -> Option<String> {
    let cmd = command();
    let Some(name) = sub.filter(|s| *s != "help") else {
        let about = cmd.get_about().map(|a| a.to_string()).unwrap_or_default();
        let usage = cmd
            .get_overridden_usage()
            .map(|u| u.to_string())
            .unwrap_or_default();
        let after = cmd
            .get_after_help()
            .map(|a| a.to_string())
            .unwrap_or_default();
        return Some(format!("dynprobe: {about}\n\nusage: {usage}\n\n{after}\n"));
    };
    let s = cmd.find_subcommand(name)?;
    let mut out = format!("usage: {}\n", usage(s));
    if let Some(b) = s.get_before_help() {
        out += &format!("\n{b}\n");
    }
    out += &options(s);
    if let Some(a) = s.get_after_help() {
        out += &format!("{a}\n");
    }
    Some(out)
}
