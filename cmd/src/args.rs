// SPDX-License-Identifier: GPL-2.0
//! The arguments parsed by clap against the definition (cli.rs) into a
//! `Cmd`, with clap's errors told as the command's own usage messages
//! (`add: needs a LINE`, `list: unknown option -q`).

use clap::error::{ContextKind, ContextValue, ErrorKind};
use clap::{Command, FromArgMatches};

use crate::cli::{self, Cli, Sub};
use crate::Cmd;

/// Whether a word asks for the manual.
fn asks_help(word: &str) -> bool {
    word == "--help" || word == "-h"
}

/// `a LINE`, `an EVENT or GLOB`, `an expression` (`EXPR`): a value a
/// usage message says is missing.
fn a_value(name: &str) -> String {
    let words = match name {
        "EXPR" => "expression".to_string(),
        _ => name.replace('|', " or "),
    };
    let article = if words.starts_with(['a', 'e', 'i', 'o', 'u', 'A', 'E', 'I', 'O', 'U']) {
        "an"
    } else {
        "a"
    };
    format!("{article} {words}")
}

/// The value name of an argument (`LINE`).
fn value_name(arg: &clap::Arg) -> String {
    arg.get_value_names()
        .and_then(|n| n.first())
        .map(|n| n.to_string())
        .unwrap_or_else(|| arg.get_id().to_string().to_uppercase())
}

/// The first `--` word before `--` that names no option of `sub`, as
/// the usage message names it: clap would take it as a line where lines
/// may start with `-` (a line's own `-` words are lines), and as a value
/// of a flag with `=`. `--filter=X` is named `--filter` wherever there is
/// no `--filter`, any other word whole.
fn unknown_long(root: &Command, sub: &Command, rest: &[String]) -> Option<String> {
    let takes_value = |c: &Command, name: &str| {
        c.get_arguments()
            .any(|a| a.get_long() == Some(name) && a.get_action().takes_values())
    };
    let mut words = rest.iter().take_while(|a| *a != "--");
    while let Some(w) = words.next() {
        let Some(long) = w.strip_prefix("--") else {
            continue;
        };
        let (name, value) = match long.split_once('=') {
            Some((n, _)) => (n, true),
            None => (long, false),
        };
        match sub.get_arguments().find(|a| a.get_long() == Some(name)) {
            None if value && root.get_subcommands().any(|s| takes_value(s, name)) => {
                return Some(format!("--{name}"));
            }
            None => return Some(w.clone()),
            Some(a) if value && !a.get_action().takes_values() => return Some(w.clone()),
            // The next word is the option's value, whatever it looks like.
            Some(a) if a.get_action().takes_values() && !value => {
                words.next();
            }
            Some(_) => {}
        }
    }
    None
}

/// A clap error as the command's usage message for subcommand `sub`.
fn usage_message(sub: &Command, err: &clap::Error) -> String {
    let name = sub.get_name();
    let invalid = match err.get(ContextKind::InvalidArg) {
        Some(ContextValue::String(s)) => s.clone(),
        Some(ContextValue::Strings(v)) => v.first().cloned().unwrap_or_default(),
        _ => String::new(),
    };
    match err.kind() {
        ErrorKind::MissingRequiredArgument => {
            let what = sub
                .get_positionals()
                .find(|a| a.is_required_set())
                .map(value_name)
                .unwrap_or_default();
            format!("{name}: needs {}", a_value(&what))
        }
        ErrorKind::InvalidValue | ErrorKind::NoEquals => {
            // `--filter <EXPR>` with no value.
            let long = invalid.split(' ').next().unwrap_or_default();
            let what = sub
                .get_arguments()
                .find(|a| a.get_long().map(|l| format!("--{l}")).as_deref() == Some(long))
                .map(value_name)
                .unwrap_or_default();
            format!("{long} needs {}", a_value(&what))
        }
        ErrorKind::UnknownArgument if !invalid.is_empty() && !invalid.starts_with('-') => {
            let mut positionals = sub.get_positionals().filter(|a| !a.is_last_set());
            match positionals.next() {
                Some(a) => format!("{name}: one {} at most", value_name(a)),
                None => format!("{name}: takes no arguments"),
            }
        }
        ErrorKind::UnknownArgument => format!("{name}: unknown option {invalid}"),
        _ => {
            let text = err.to_string();
            let first = text.lines().next().unwrap_or_default();
            format!("{name}: {}", first.trim_start_matches("error: "))
        }
    }
}

/// The debug info's options of `add`, `check`, `trace` and `list`.
fn source_options(
    debuginfo: Option<String>,
    source: Option<String>,
    definition: bool,
    module: Option<String>,
) -> crate::srcprobe::Options {
    crate::srcprobe::Options {
        debuginfo: debuginfo.map(Into::into),
        source: source.map(Into::into),
        definition,
        exec: None,
        module,
    }
}

/// `cmd` with the debug info's options, when any was given.
fn with_source(opts: crate::srcprobe::Options, cmd: Cmd) -> Cmd {
    if opts.any() {
        Cmd::Source {
            opts,
            inner: Box::new(cmd),
        }
    } else {
        cmd
    }
}

/// Parses the arguments after the program's name.
pub fn parse_args(args: &[String]) -> Result<Cmd, String> {
    let Some(first) = args.first() else {
        return Ok(Cmd::Help(None));
    };
    // The completions' own subcommand, outside the definition: clap's
    // completions would list even a hidden one.
    if first == crate::complete::NAME {
        return crate::complete::parse(&args[1..]);
    }
    // The version, as a package manager's or a bug report's reader asks
    // for it: alone, never after a subcommand.
    if args.len() == 1 && (first == "--version" || first == "-V") {
        return Ok(Cmd::Version);
    }
    // `--help` or `-h` anywhere before `--` asks for the manual of the
    // subcommand it follows (or of the word after it).
    if args.iter().take_while(|a| *a != "--").any(|a| asks_help(a)) {
        let sub = if asks_help(first) {
            args.iter()
                .skip(1)
                .take_while(|a| *a != "--")
                .find(|a| !a.starts_with('-'))
        } else {
            Some(first)
        };
        return Ok(Cmd::Help(sub.cloned()));
    }
    let cmd = cli::command();
    let Some(sub) = cmd.find_subcommand(first) else {
        return Err(format!("unknown subcommand `{first}`"));
    };
    let rest = &args[1..];
    if let Some(bad) = unknown_long(&cmd, sub, rest) {
        return Err(format!("{first}: unknown option {bad}"));
    }
    let takes_cmd = sub.get_positionals().any(|a| a.is_last_set());
    if !takes_cmd && rest.iter().skip_while(|a| *a != "--").nth(1).is_some() {
        return Err(format!("{first}: no command after -- here"));
    }
    // What follows the first `--` is the command to run, the definition's
    // `last` argument: clap, where a line may start with `-`, would take
    // that `--` as a line.
    let (before, after) = match args.iter().position(|a| a == "--") {
        Some(i) => (&args[..i], &args[i + 1..]),
        None => (args, &[][..]),
    };
    let sub = sub.clone();
    let matches = cmd
        .try_get_matches_from(std::iter::once("dynprobe").chain(before.iter().map(String::as_str)))
        .map_err(|e| usage_message(&sub, &e))?;
    let cli = Cli::from_arg_matches(&matches).map_err(|e| usage_message(&sub, &e))?;
    Ok(match cli.sub {
        None => Cmd::Help(None),
        Some(Sub::List {
            funcs: true,
            line: None,
            vars: None,
            exec: None,
            glob,
            debuginfo,
            ..
        }) => Cmd::ListSource {
            what: crate::list_source::What::Funcs,
            place: glob.unwrap_or_default(),
            opts: source_options(debuginfo, None, false, None),
        },
        Some(Sub::List { funcs: true, .. }) => {
            return Err("list: --funcs takes a filter, not --line, --vars or -x".into())
        }
        Some(Sub::List {
            externs: true,
            vars: None,
            ..
        }) => return Err("list: --externs goes with --vars".into()),
        Some(Sub::List {
            line: Some(place),
            vars: None,
            debuginfo,
            source,
            exec,
            module,
            ..
        }) => Cmd::ListSource {
            what: crate::list_source::What::Lines,
            place,
            opts: crate::srcprobe::Options {
                exec: exec.map(Into::into),
                ..source_options(debuginfo, source, false, module)
            },
        },
        Some(Sub::List {
            vars: Some(place),
            line: None,
            externs,
            debuginfo,
            source,
            exec,
            module,
            ..
        }) => Cmd::ListSource {
            what: if externs {
                crate::list_source::What::Externs
            } else {
                crate::list_source::What::Vars
            },
            place,
            opts: crate::srcprobe::Options {
                exec: exec.map(Into::into),
                ..source_options(debuginfo, source, false, module)
            },
        },
        Some(Sub::List {
            line: Some(_),
            vars: Some(_),
            ..
        }) => return Err("list: --line or --vars, not both".into()),
        Some(Sub::List {
            module: Some(_), ..
        }) => return Err("list: -m MODULE goes with --line or --vars".into()),
        Some(Sub::List {
            glob,
            verbose,
            exec,
            ..
        }) => Cmd::List {
            glob,
            verbose,
            exec,
        },
        Some(Sub::Add {
            dry_run,
            no_check,
            exec,
            lines,
            definition,
            debuginfo,
            source,
            module,
        }) => with_source(
            source_options(debuginfo, source, definition, module),
            // -D prints what the debug info says, as perf probe -D: not
            // checked against the running kernel.
            Cmd::Add {
                lines,
                dry_run: dry_run || definition,
                no_check: no_check || definition,
                exec,
            },
        ),
        Some(Sub::Del { dry_run, patterns }) => Cmd::Del { patterns, dry_run },
        Some(Sub::Show) => Cmd::Show,
        Some(Sub::Check {
            exec,
            lines,
            debuginfo,
            source,
            module,
        }) => with_source(
            source_options(debuginfo, source, false, module),
            Cmd::Check { lines, exec },
        ),
        Some(Sub::Trace {
            filter,
            json,
            no_check,
            exec,
            lines,
            debuginfo,
            source,
            module,
            cmd: _,
        }) => with_source(
            source_options(debuginfo, source, false, module),
            Cmd::Trace {
                lines,
                filter,
                json,
                no_check,
                exec,
                cmd: after.to_vec(),
            },
        ),
        Some(Sub::Help { subcommand }) => Cmd::Help(subcommand),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(a: &[&str]) -> String {
        parse_args(&a.iter().map(|s| s.to_string()).collect::<Vec<_>>()).unwrap_err()
    }

    fn ok(a: &[&str]) -> Cmd {
        parse_args(&a.iter().map(|s| s.to_string()).collect::<Vec<_>>()).unwrap()
    }

    /// The usage messages are the command's own, not clap's.
    #[test]
    fn usage_messages() {
        assert_eq!(err(&["add"]), "add: needs a LINE");
        assert_eq!(err(&["del"]), "del: needs an EVENT or GLOB");
        assert_eq!(err(&["trace", "--filter"]), "--filter needs an expression");
        assert_eq!(err(&["show", "x"]), "show: takes no arguments");
        assert_eq!(err(&["list", "a", "b"]), "list: one GLOB at most");
        assert_eq!(err(&["list", "-q"]), "list: unknown option -q");
        assert_eq!(err(&["list", "-x"]), "--exec needs a BIN");
        assert_eq!(err(&["add", "--json", "x"]), "add: unknown option --json");
        assert_eq!(
            err(&["add", "--filter=x", "y"]),
            "add: unknown option --filter"
        );
        assert_eq!(err(&["add", "--x=y", "z"]), "add: unknown option --x=y");
        assert_eq!(
            err(&["trace", "--json=x", "y"]),
            "trace: unknown option --json=x"
        );
        assert_eq!(
            err(&["add", "x", "--", "cat"]),
            "add: no command after -- here"
        );
        assert_eq!(err(&["frob"]), "unknown subcommand `frob`");
        assert_eq!(err(&["-v"]), "unknown subcommand `-v`");
    }

    /// A line's own `-` words are lines; `--` ends the lines.
    #[test]
    fn hyphen_lines() {
        assert_eq!(
            ok(&["check", "-:a/b"]),
            Cmd::Check {
                lines: vec!["-:a/b".into()],
                exec: None
            }
        );
        assert_eq!(
            ok(&["trace", "--filter", "--json", "x", "--", "--", "-v"]),
            Cmd::Trace {
                lines: vec!["x".into()],
                filter: Some("--json".into()),
                json: false,
                no_check: false,
                exec: None,
                cmd: vec!["--".into(), "-v".into()]
            }
        );
        assert_eq!(
            ok(&["list", "-v", "-v", "--verbose"]),
            Cmd::List {
                glob: None,
                verbose: true,
                exec: None
            }
        );
        assert_eq!(
            ok(&["add", "--json", "--help"]),
            Cmd::Help(Some("add".into()))
        );
        assert_eq!(ok(&["-h", "del"]), Cmd::Help(Some("del".into())));
        assert_eq!(ok(&["help"]), Cmd::Help(None));
        assert_eq!(ok(&["--version"]), Cmd::Version);
        assert_eq!(ok(&["-V"]), Cmd::Version);
    }
}
