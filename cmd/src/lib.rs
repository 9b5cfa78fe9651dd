// SPDX-License-Identifier: GPL-2.0
//! `dynprobe`: find functions and tracepoints, define, trace and clean up
//! dynprobe's events from one command. Each line is checked on the host
//! by the module's own language crate before it is written.

pub mod argexpand;
pub mod args;
pub mod btfnames;
pub mod btfprotos;
pub mod cache;
pub mod check;
pub mod cli;
pub mod complete;
pub mod debugfile;
pub mod docs;
pub mod dwarf;
pub mod dwarf_bitfield;
pub mod dwarf_found;
pub mod dwarf_index;
pub mod dwarf_lines;
pub mod dwarf_reloc;
pub mod dwarf_scope;
pub mod dwarf_toplevel;
pub mod dwarf_vars;
pub mod held_child;
pub mod line;
pub mod list;
pub mod list_binary;
pub mod list_file;
pub mod list_funcs;
pub mod list_source;
pub mod module_debug;
pub mod srcfile;
pub mod srcfile_points;
pub mod srcplace;
pub mod srcprobe;
pub mod strfilter;
pub mod trace;
pub mod tracefs;
pub mod user_debuginfo;
pub mod user_place;
pub mod user_srcprobe;

pub use args::parse_args;
use check::Host;
use line::Planned;
use tracefs::Tracefs;
use user_place::UserBinary;

/// A parsed command line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Cmd {
    /// `list [GLOB] [-v] [-x BIN]`.
    List {
        /// The glob.
        glob: Option<String>,
        /// `-v`.
        verbose: bool,
        /// `-x BIN`: the binary whose functions and SDT markers to list.
        exec: Option<String>,
    },
    /// `add LINE...`.
    Add {
        /// The lines.
        lines: Vec<String>,
        /// `--dry-run`.
        dry_run: bool,
        /// `--no-check`.
        no_check: bool,
        /// `-x BIN`: the lines are perf probe's forms on BIN.
        exec: Option<String>,
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
        /// `-x BIN`: the lines are perf probe's forms on BIN.
        exec: Option<String>,
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
        /// `-x BIN`: the lines are perf probe's forms on BIN, and the
        /// records are CMD's and its children's.
        exec: Option<String>,
        /// What follows `--`.
        cmd: Vec<String>,
    },
    /// `help [SUB]`, `--help`.
    Help(Option<String>),
    /// `add`, `check` or `trace` with the debug info's options
    /// (`--debuginfo`, `--source`, `-D`).
    Source {
        /// The options.
        opts: srcprobe::Options,
        /// The subcommand.
        inner: Box<Cmd>,
    },
    /// `list --line PLACE` or `list --vars PLACE`.
    ListSource {
        /// What to list.
        what: list_source::What,
        /// The place.
        place: String,
        /// The options.
        opts: srcprobe::Options,
    },
    /// `--version`, `-V`.
    Version,
    /// `__complete functions|events [--exec=BIN] [PREFIX]`, the completions' values.
    Complete {
        /// What to list.
        what: complete::Values,
        /// The word being completed.
        prefix: String,
    },
}

/// The lines planned: each one's control file and text (source-level
/// places turned into kprobe lines from the debug info), or with `-x
/// BIN` the uprobe lines of perf's forms on BIN (an SDT marker at
/// several places gives several).
fn plan_all(
    lines: &[String],
    exec: Option<&str>,
    opts: &srcprobe::Options,
) -> Result<Vec<Planned>, String> {
    let Some(bin) = exec else {
        return srcprobe::plan_lines(lines, opts);
    };
    let bin = UserBinary::open(bin).map_err(|e| e.to_string())?;
    user_srcprobe::plan_lines(&bin, lines, opts)
}

/// Plans each line and checks it on the host; prints the first error.
fn prepare(
    lines: &[String],
    exec: Option<&str>,
    host: Option<&Host>,
    opts: &srcprobe::Options,
) -> Result<Vec<Planned>, ()> {
    let planned = match plan_all(lines, exec, opts) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("dynprobe: {e}");
            return Err(());
        }
    };
    if let Some(host) = host {
        for p in &planned {
            if let Err(e) = check::check(host, p) {
                eprint!("{e}");
                eprintln!("dynprobe: refused by the host check; nothing written");
                return Err(());
            }
        }
    }
    Ok(planned)
}

/// Runs a parsed command; the exit status.
pub fn run(cmd: Cmd) -> i32 {
    run_with(cmd, &srcprobe::Options::default())
}

/// Runs a parsed command with the debug info's options.
fn run_with(cmd: Cmd, opts: &srcprobe::Options) -> i32 {
    let fs_ = Tracefs::locate();
    let loaded = || match fs_.require_loaded() {
        Ok(()) => true,
        Err(e) => {
            eprintln!("{e}");
            false
        }
    };
    match cmd {
        Cmd::Source { opts, inner } => run_with(*inner, &opts),
        Cmd::ListSource { what, place, opts } => list_source::run(what, &place, &opts),
        Cmd::Complete { what, prefix } => complete::run(&fs_, &what, &prefix),
        Cmd::Version => {
            println!("dynprobe {}", env!("CARGO_PKG_VERSION"));
            0
        }
        Cmd::Help(s) => match cli::manual(s.as_deref()) {
            Some(h) => {
                print!("{h}");
                0
            }
            None => {
                eprintln!("dynprobe: unknown subcommand `{}`", s.unwrap_or_default());
                2
            }
        },
        Cmd::Check { lines, exec } => {
            // Uprobe lines (-x) need no kernel BTF.
            let host = Host::running(&fs_.root, exec.is_none());
            let mut status = 0;
            for l in &lines {
                let planned = match plan_all(std::slice::from_ref(l), exec.as_deref(), opts) {
                    Ok(p) => p,
                    Err(e) => {
                        eprintln!("dynprobe: {e}");
                        status = 1;
                        continue;
                    }
                };
                for p in planned {
                    match check::check(&host, &p) {
                        Ok(()) => println!("{}", p.shown()),
                        Err(e) => {
                            eprint!("{e}");
                            status = 1;
                        }
                    }
                }
            }
            status
        }
        Cmd::Add {
            lines,
            dry_run,
            no_check,
            exec,
        } => {
            if !dry_run && !opts.definition && !loaded() {
                return 1;
            }
            let host = (!no_check).then(|| Host::running(&fs_.root, exec.is_none()));
            let Ok(planned) = prepare(&lines, exec.as_deref(), host.as_ref(), opts) else {
                return 1;
            };
            for p in &planned {
                if opts.definition {
                    // perf probe -D: the lines alone.
                    println!("{}", p.line);
                    continue;
                }
                if dry_run {
                    println!("{}", p.shown());
                    continue;
                }
                if let Err(e) = fs_.append(p) {
                    eprint!("{e}");
                    return 1;
                }
                if p.translated {
                    println!("{}", p.shown());
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
        Cmd::List {
            glob,
            verbose,
            exec: Some(bin),
        } => list_binary::run(&bin, glob.as_deref(), verbose),
        Cmd::List {
            glob,
            verbose,
            exec: None,
        } => {
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
            exec,
            cmd,
        } => {
            if !loaded() {
                return 1;
            }
            let host = (!no_check).then(|| Host::running(&fs_.root, exec.is_none()));
            let Ok(planned) = prepare(&lines, exec.as_deref(), host.as_ref(), opts) else {
                return 1;
            };
            trace::run(
                &fs_,
                trace::Options {
                    lines: planned,
                    filter,
                    json,
                    only_cmd: exec.is_some(),
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
                verbose: true,
                exec: None
            }
        );
        assert_eq!(
            p(&["list"]).unwrap(),
            Cmd::List {
                glob: None,
                verbose: false,
                exec: None
            }
        );
        assert_eq!(
            p(&["add", "--dry-run", "p:a/b x", "vfs_read(file)"]).unwrap(),
            Cmd::Add {
                lines: vec!["p:a/b x".into(), "vfs_read(file)".into()],
                dry_run: true,
                no_check: false,
                exec: None
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
                exec: None,
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
                exec: None,
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
                no_check: false,
                exec: None
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
        let help = cli::manual(None).unwrap();
        for s in ["list", "add", "del", "show", "check", "trace"] {
            assert!(cli::manual(Some(s))
                .unwrap()
                .starts_with(&format!("usage: dynprobe {s}")));
            assert!(help.contains(&format!("dynprobe {s}")));
        }
        assert_eq!(cli::manual(Some("help")), Some(help));
        assert_eq!(cli::manual(Some("frob")), None);
    }
}
