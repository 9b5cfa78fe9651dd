// SPDX-License-Identifier: GPL-2.0
//! `dynprobe`: find functions and tracepoints, define, trace and clean up
//! dynprobe's events from one command. Each line is checked on the host
//! by the module's own language crate before it is written.

pub mod args;
pub mod btfnames;
pub mod check;
pub mod cli;
pub mod complete;
pub mod docs;
pub mod line;
pub mod list;
pub mod list_binary;
pub mod trace;
pub mod tracefs;

pub use args::parse_args;
use check::Host;
use line::{plan, Planned};
use tracefs::Tracefs;

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
    /// `--version`, `-V`.
    Version,
    /// `__complete functions|events [PREFIX]`, the completions' values.
    Complete {
        /// What to list.
        what: complete::Values,
        /// The word being completed.
        prefix: String,
    },
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
        Cmd::Complete { what, prefix } => complete::run(&fs_, what, &prefix),
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
