// SPDX-License-Identifier: GPL-2.0
//! `dynprobe`: find functions and tracepoints, define, trace and clean up
//! dynprobe's events from one command. Each line is checked on the host
//! by the module's own language crate before it is written.

pub mod btfnames;
pub mod check;
pub mod line;
pub mod list;
pub mod trace;
pub mod tracefs;

use check::Host;
use line::{plan, Planned};
use tracefs::Tracefs;

/// The manual, `dynprobe --help`.
pub const HELP: &str = "\
dynprobe: find, define, trace and clean up dynprobe events

usage: dynprobe list [GLOB] [-v]
       dynprobe add [--dry-run] [--no-check] LINE...
       dynprobe del [--dry-run] EVENT|GLOB...
       dynprobe show
       dynprobe check LINE...
       dynprobe trace [--filter EXPR] [--json] [--no-check] LINE... [-- CMD [ARGS]]
       dynprobe help [SUBCOMMAND]

A LINE is any line of dynprobe's control files; the form picks the file:
  p:..., r:...                      kprobe_events
  f:..., t:..., e:..., w:..., s:... dynamic_events
  FUNC(ARGS) [-> ...]               function_events
  EVENT TYPE FIELD[; ...]           synthetic_events
or perf probe's shorthand, [[GROUP:]EVENT=]FUNC[%return|+OFFS] [ARG...],
which becomes an fprobe line: 'vfs_read file count' is
'f:probe/vfs_read vfs_read file count' (kprobe 'p:...' for FUNC+OFFS).

Every line is checked on the host first, with the module's language and
the running kernel's BTF: a refused line is printed as error_log shows it,
with a caret, and nothing is written. Lines are appended (never
truncating); a line the module refuses prints its error_log entry and
leaves every other definition in place. Exit status: 0 when all went
well, 1 otherwise, 2 for a usage error.

Files: /sys/kernel/tracing/dynprobe/ (DYNPROBE_TRACEFS=DIR for another
tracing directory), /sys/kernel/btf/. Run 'dynprobe help SUBCOMMAND' for
each subcommand.
";

fn sub_help(sub: &str) -> Option<&'static str> {
    Some(match sub {
        "list" => {
            "\
usage: dynprobe list [GLOB] [-v]

Lists what can be traced, one a line, filtered by GLOB (*, ?, [...]):
  function NAME(PARAMS) [MODULE]   functions ftrace can hook
                                   (available_filter_functions), with
                                   their parameters from BTF
                                   (/sys/kernel/btf/vmlinux, /sys/kernel/btf/MOD)
  tracepoint SYSTEM:EVENT(FIELDS)  trace events (events/*/*/format)
  dynprobe GROUP:EVENT (FILE: LINE) dynprobe's own events
-v adds the C types: 'function ssize_t vfs_read(struct file *file, ...)'.
A GLOB matches the function name, SYSTEM:EVENT or EVENT.
"
        }
        "add" => {
            "\
usage: dynprobe add [--dry-run] [--no-check] LINE...

Defines each LINE in the control file its form picks (see dynprobe help),
in order; stops at the first refused line (those before it stay defined).
  --dry-run   print 'FILE: LINE' for each line instead of writing
  --no-check  skip the host check (the module still checks)
Examples:
  dynprobe add 'vfs_read(file, count)'
  dynprobe add 'p:demo/open do_sys_openat2 dfd=%di:s32'
  dynprobe add 'vfs_read%return $retval'
"
        }
        "del" => {
            "\
usage: dynprobe del [--dry-run] EVENT|GLOB...

Removes each of dynprobe's events that a pattern names: GROUP/EVENT,
GROUP:EVENT, EVENT (any group) or a glob of either ('probe/*', 'vfs_*').
A pattern that names nothing is an error (status 1).
  --dry-run   print the removal lines instead of writing them
"
        }
        "show" => {
            "\
usage: dynprobe show

Prints dynprobe's definitions, each with its file:
  FILE: LINE
"
        }
        "check" => {
            "\
usage: dynprobe check LINE...

Checks each LINE on the host only (no module needed) and prints
'FILE: LINE' or the error as error_log shows it, with its caret.
"
        }
        "trace" => {
            "\
usage: dynprobe trace [--filter EXPR] [--json] [--no-check] LINE... [-- CMD [ARGS]]

Defines the LINEs, enables their events in a trace instance of its own
(instances/dynprobe-PID), streams the events as trace_pipe prints them
(--json: one JSON object a line: comm, pid, cpu, time, event, text),
and stops at Ctrl-C (SIGINT), SIGTERM or SIGHUP, or when CMD exits. It
then removes exactly what it made, also when the module refused one of
the lines, and prints a summary on stderr: events seen per event, misses
(dynprobe/kprobe_profile) and records lost in the ring buffer (the
instance's per_cpu/cpu*/stats overrun and dropped events).
  --filter EXPR  set EXPR as each event's filter
Exit status: CMD's when it ran, 128+N after signal N, 1 on an error.
Example:
  dynprobe trace 'vfs_read(file, count)' -- cat /etc/hostname
"
        }
        _ => return None,
    })
}

/// A parsed command line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Cmd {
    /// `list [GLOB] [-v]`.
    List {
        /// The glob.
        glob: Option<String>,
        /// `-v`.
        verbose: bool,
    },
    /// `add LINE...`.
    Add {
        /// The lines.
        lines: Vec<String>,
        /// `--dry-run`.
        dry_run: bool,
        /// `--no-check`.
        no_check: bool,
    },
    /// `del PATTERN...`.
    Del {
        /// The patterns.
        patterns: Vec<String>,
        /// `--dry-run`.
        dry_run: bool,
    },
    /// `show`.
    Show,
    /// `check LINE...`.
    Check {
        /// The lines.
        lines: Vec<String>,
    },
    /// `trace LINE... [-- CMD]`.
    Trace {
        /// The lines.
        lines: Vec<String>,
        /// `--filter`.
        filter: Option<String>,
        /// `--json`.
        json: bool,
        /// `--no-check`.
        no_check: bool,
        /// What follows `--`.
        cmd: Vec<String>,
    },
    /// `help [SUB]`, `--help`.
    Help(Option<String>),
}

/// Parses the arguments after the program's name.
pub fn parse_args(args: &[String]) -> Result<Cmd, String> {
    let Some(sub) = args.first() else {
        return Ok(Cmd::Help(None));
    };
    let rest = &args[1..];
    if rest
        .iter()
        .take_while(|a| *a != "--")
        .any(|a| a == "--help" || a == "-h")
    {
        return Ok(Cmd::Help(Some(sub.clone())));
    }
    let mut words = Vec::new();
    let mut flags = Vec::new();
    let mut filter = None;
    let mut cmd = Vec::new();
    let mut i = 0;
    while i < rest.len() {
        let a = &rest[i];
        if a == "--" {
            cmd = rest[i + 1..].to_vec();
            break;
        } else if a == "--filter" {
            i += 1;
            filter = Some(rest.get(i).ok_or("--filter needs an expression")?.clone());
        } else if let Some(f) = a.strip_prefix("--filter=") {
            filter = Some(f.to_string());
        } else if a.starts_with("--") || (a.starts_with('-') && a.len() == 2 && sub == "list") {
            flags.push(a.as_str());
        } else {
            words.push(a.clone());
        }
        i += 1;
    }
    let allowed: &[&str] = match sub.as_str() {
        "list" => &["-v", "--verbose"],
        "add" => &["--dry-run", "--no-check"],
        "del" => &["--dry-run"],
        "trace" => &["--json", "--no-check"],
        _ => &[],
    };
    if let Some(bad) = flags.iter().find(|f| !allowed.contains(f)) {
        return Err(format!("{sub}: unknown option {bad}"));
    }
    if filter.is_some() && sub != "trace" {
        return Err(format!("{sub}: unknown option --filter"));
    }
    if !cmd.is_empty() && sub != "trace" {
        return Err(format!("{sub}: no command after -- here"));
    }
    let has = |f: &str| flags.contains(&f);
    let need_words = |what: &str| {
        if words.is_empty() {
            Err(format!("{sub}: needs {what}"))
        } else {
            Ok(())
        }
    };
    Ok(match sub.as_str() {
        "list" => {
            if words.len() > 1 {
                return Err("list: one GLOB at most".into());
            }
            Cmd::List {
                glob: words.pop(),
                verbose: has("-v") || has("--verbose"),
            }
        }
        "add" => {
            need_words("a LINE")?;
            Cmd::Add {
                lines: words,
                dry_run: has("--dry-run"),
                no_check: has("--no-check"),
            }
        }
        "del" => {
            need_words("an EVENT or GLOB")?;
            Cmd::Del {
                patterns: words,
                dry_run: has("--dry-run"),
            }
        }
        "show" => {
            if !words.is_empty() {
                return Err("show: takes no arguments".into());
            }
            Cmd::Show
        }
        "check" => {
            need_words("a LINE")?;
            Cmd::Check { lines: words }
        }
        "trace" => {
            need_words("a LINE")?;
            Cmd::Trace {
                lines: words,
                filter,
                json: has("--json"),
                no_check: has("--no-check"),
                cmd,
            }
        }
        "help" | "--help" | "-h" => Cmd::Help(words.pop()),
        other => return Err(format!("unknown subcommand `{other}`")),
    })
}

/// Plans each line and checks it on the host; prints the first error.
fn prepare(lines: &[String], host: Option<&Host>) -> Result<Vec<Planned>, ()> {
    let mut out = Vec::new();
    for l in lines {
        let p = match plan(l) {
            Ok(p) => p,
            Err(e) => {
                eprintln!("dynprobe: {e}");
                return Err(());
            }
        };
        if let Some(host) = host {
            if let Err(e) = check::check(host, &p) {
                eprint!("{e}");
                eprintln!("dynprobe: refused by the host check; nothing written");
                return Err(());
            }
        }
        out.push(p);
    }
    Ok(out)
}

/// Runs a parsed command; the exit status.
pub fn run(cmd: Cmd) -> i32 {
    let fs_ = Tracefs::locate();
    let loaded = || match fs_.require_loaded() {
        Ok(()) => true,
        Err(e) => {
            eprintln!("{e}");
            false
        }
    };
    match cmd {
        Cmd::Help(None) => {
            print!("{HELP}");
            0
        }
        Cmd::Help(Some(s)) => match sub_help(&s) {
            Some(h) => {
                print!("{h}");
                0
            }
            None if s == "help" => {
                print!("{HELP}");
                0
            }
            None => {
                eprintln!("dynprobe: unknown subcommand `{s}`");
                2
            }
        },
        Cmd::Check { lines } => {
            let host = Host::running(&fs_.root, true);
            let mut status = 0;
            for l in &lines {
                match plan(l) {
                    Ok(p) => match check::check(&host, &p) {
                        Ok(()) => println!("{}: {}", p.target.file(), p.line),
                        Err(e) => {
                            eprint!("{e}");
                            status = 1;
                        }
                    },
                    Err(e) => {
                        eprintln!("dynprobe: {e}");
                        status = 1;
                    }
                }
            }
            status
        }
        Cmd::Add {
            lines,
            dry_run,
            no_check,
        } => {
            if !dry_run && !loaded() {
                return 1;
            }
            let host = (!no_check).then(|| Host::running(&fs_.root, true));
            let Ok(planned) = prepare(&lines, host.as_ref()) else {
                return 1;
            };
            for p in &planned {
                if dry_run {
                    println!("{}: {}", p.target.file(), p.line);
                    continue;
                }
                if let Err(e) = fs_.append(p) {
                    eprint!("{e}");
                    return 1;
                }
                if p.translated {
                    println!("{}: {}", p.target.file(), p.line);
                }
            }
            0
        }
        Cmd::Del { patterns, dry_run } => {
            if !loaded() {
                return 1;
            }
            let defined = fs_.defined();
            let mut status = 0;
            let mut done = Vec::new();
            for pat in &patterns {
                let hits: Vec<_> = defined
                    .iter()
                    .filter(|d| tracefs::matches(pat, &d.event) && !done.contains(&d.event))
                    .collect();
                if hits.is_empty() {
                    eprintln!("dynprobe: no event of dynprobe's matches `{pat}`");
                    status = 1;
                }
                for d in hits {
                    done.push(d.event.clone());
                    if dry_run {
                        println!("{}: {}", d.target.file(), d.removal());
                        continue;
                    }
                    let r =
                        tracefs::append_to(&fs_.dynprobe(d.target.file()), &d.removal(), || {
                            fs_.error_log()
                        });
                    if let Err(e) = r {
                        eprint!("{e}");
                        status = 1;
                    }
                }
            }
            status
        }
        Cmd::Show => {
            if !loaded() {
                return 1;
            }
            // Each event once, under the file of its form (dynamic_events
            // lists the others' too).
            for d in fs_.defined() {
                println!("{}: {}", d.target.file(), d.line);
            }
            0
        }
        Cmd::List { glob, verbose } => {
            if !fs_.root.join("available_filter_functions").exists() {
                eprintln!(
                    "dynprobe: {} has no available_filter_functions: is tracefs mounted (mount -t tracefs nodev /sys/kernel/tracing)?",
                    fs_.root.display()
                );
                return 1;
            }
            list::run(&fs_, glob.as_deref(), verbose)
        }
        Cmd::Trace {
            lines,
            filter,
            json,
            no_check,
            cmd,
        } => {
            if !loaded() {
                return 1;
            }
            let host = (!no_check).then(|| Host::running(&fs_.root, true));
            let Ok(planned) = prepare(&lines, host.as_ref()) else {
                return 1;
            };
            trace::run(
                &fs_,
                trace::Options {
                    lines: planned,
                    filter,
                    json,
                    cmd,
                },
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(a: &[&str]) -> Result<Cmd, String> {
        parse_args(&a.iter().map(|s| s.to_string()).collect::<Vec<_>>())
    }

    #[test]
    fn arguments() {
        assert_eq!(p(&[]).unwrap(), Cmd::Help(None));
        assert_eq!(
            p(&["list", "vfs_*", "-v"]).unwrap(),
            Cmd::List {
                glob: Some("vfs_*".into()),
                verbose: true
            }
        );
        assert_eq!(
            p(&["list"]).unwrap(),
            Cmd::List {
                glob: None,
                verbose: false
            }
        );
        assert_eq!(
            p(&["add", "--dry-run", "p:a/b x", "vfs_read(file)"]).unwrap(),
            Cmd::Add {
                lines: vec!["p:a/b x".into(), "vfs_read(file)".into()],
                dry_run: true,
                no_check: false
            }
        );
        assert_eq!(
            p(&["del", "probe/*"]).unwrap(),
            Cmd::Del {
                patterns: vec!["probe/*".into()],
                dry_run: false
            }
        );
        assert_eq!(p(&["show"]).unwrap(), Cmd::Show);
        assert_eq!(
            p(&[
                "trace",
                "--filter",
                "count > 1",
                "--json",
                "vfs_read(file, count)",
                "--",
                "cat",
                "--help",
                "-v"
            ])
            .unwrap(),
            Cmd::Trace {
                lines: vec!["vfs_read(file, count)".into()],
                filter: Some("count > 1".into()),
                json: true,
                no_check: false,
                cmd: vec!["cat".into(), "--help".into(), "-v".into()]
            }
        );
        assert_eq!(
            p(&["trace", "--filter=a==1", "f:x/y z"]).unwrap(),
            Cmd::Trace {
                lines: vec!["f:x/y z".into()],
                filter: Some("a==1".into()),
                json: false,
                no_check: false,
                cmd: vec![]
            }
        );
        assert_eq!(
            p(&["trace", "--help"]).unwrap(),
            Cmd::Help(Some("trace".into()))
        );
        assert_eq!(p(&["help", "del"]).unwrap(), Cmd::Help(Some("del".into())));
        assert_eq!(p(&["--help"]).unwrap(), Cmd::Help(None));
        // A definition's own '-' words are lines, not options.
        assert_eq!(
            p(&["add", "f:a/b vfs_read%return $retval"]).unwrap(),
            Cmd::Add {
                lines: vec!["f:a/b vfs_read%return $retval".into()],
                dry_run: false,
                no_check: false
            }
        );
    }

    #[test]
    fn usage_errors() {
        assert!(p(&["add"]).unwrap_err().contains("needs a LINE"));
        assert!(p(&["del"]).is_err());
        assert!(p(&["trace"]).is_err());
        assert!(p(&["trace", "--filter"]).is_err());
        assert!(p(&["show", "x"]).is_err());
        assert!(p(&["list", "a", "b"]).is_err());
        assert!(p(&["add", "--json", "x"])
            .unwrap_err()
            .contains("unknown option --json"));
        assert!(p(&["add", "x", "--", "cat"]).is_err());
        assert!(p(&["frob"]).unwrap_err().contains("unknown subcommand"));
        assert!(p(&["del", "--filter", "x", "y"]).is_err());
    }

    #[test]
    fn every_subcommand_has_a_manual() {
        for s in ["list", "add", "del", "show", "check", "trace"] {
            assert!(sub_help(s)
                .unwrap()
                .starts_with(&format!("usage: dynprobe {s}")));
            assert!(HELP.contains(&format!("dynprobe {s}")));
        }
    }
}
