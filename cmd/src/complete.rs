// SPDX-License-Identifier: GPL-2.0
//! `dynprobe __complete functions|events [--exec=BIN] [PREFIX]`: the
//! values the shells' completions (docs.rs) add at run time to clap's
//! options and subcommands, one a line. Hidden: it is not in the definition (cli.rs),
//! so no manual, man page or completion names it. Quiet by design:
//! without tracefs, dynprobe's files or the right to read them it prints
//! nothing and succeeds, so a completion never shows an error.

use std::collections::BTreeSet;
use std::fs;
use std::io::{self, Write};

use dynprobe_lang::elf::Elf;

use crate::tracefs::Tracefs;
use crate::Cmd;

/// The subcommand's name.
pub const NAME: &str = "__complete";

/// What `__complete` lists.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Values {
    /// The kernel's traceable functions: `list`, `add`, `check`, `trace`.
    Functions,
    /// The places a uprobe on a binary can name (the word after `-x`):
    /// its functions and `sdt:PROVIDER:NAME` markers.
    BinaryFunctions(String),
    /// dynprobe's events: `del`.
    Events,
}

/// The option the scripts pass before PREFIX when the command line has
/// `-x BIN`: one word, so that an empty PREFIX (which fish drops) cannot
/// be taken for BIN.
const EXEC: &str = "--exec=";

/// `__complete`'s arguments (after its name); any PREFIX, also one that
/// starts with `-`.
pub fn parse(args: &[String]) -> Result<Cmd, String> {
    let mut what = match args.first().map(String::as_str) {
        Some("functions") => Values::Functions,
        Some("events") => Values::Events,
        _ => return Err(format!("{NAME}: needs functions or events")),
    };
    let mut rest = &args[1..];
    if let (Values::Functions, [first, tail @ ..]) = (&what, rest) {
        if let Some(bin) = first.strip_prefix(EXEC) {
            what = Values::BinaryFunctions(bin.to_string());
            rest = tail;
        }
    }
    match rest {
        [] => Ok(Cmd::Complete {
            what,
            prefix: String::new(),
        }),
        [prefix] => Ok(Cmd::Complete {
            what,
            prefix: prefix.clone(),
        }),
        _ => Err(format!("{NAME}: one PREFIX at most")),
    }
}

/// The most function names offered at once, as the old completion did.
pub const MAX_FUNCTIONS: usize = 500;

/// The traceable functions (`available_filter_functions`) whose names
/// start with `prefix`: sorted, each once, `MAX_FUNCTIONS` at most.
pub fn functions(fs_: &Tracefs, prefix: &str) -> Vec<String> {
    let text = fs::read_to_string(fs_.root.join("available_filter_functions")).unwrap_or_default();
    let names: BTreeSet<&str> = text
        .lines()
        .filter_map(|l| l.split_ascii_whitespace().next())
        .filter(|n| n.starts_with(prefix))
        .collect();
    names
        .into_iter()
        .take(MAX_FUNCTIONS)
        .map(str::to_string)
        .collect()
}

/// The names `-x BIN` takes that start with `prefix`: BIN's functions
/// (as `dynprobe list -x` lists them) and its SDT markers as
/// `sdt:PROVIDER:NAME`; sorted, each once, `MAX_FUNCTIONS` at most.
/// Nothing when BIN cannot be read or is no ELF file.
pub fn binary_functions(bin: &str, prefix: &str) -> Vec<String> {
    let Ok(bytes) = fs::read(bin) else {
        return Vec::new();
    };
    let Ok(elf) = Elf::parse(&bytes) else {
        return Vec::new();
    };
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    let mut names = BTreeSet::new();
    if let Ok(functions) = elf.functions() {
        names.extend(functions.flatten().map(|f| text(f.name)));
    }
    if let Ok(notes) = elf.sdt_notes() {
        names.extend(
            notes
                .flatten()
                .map(|n| format!("sdt:{}:{}", text(n.provider), text(n.name))),
        );
    }
    names
        .into_iter()
        .filter(|n| n.starts_with(prefix))
        .take(MAX_FUNCTIONS)
        .collect()
}

/// dynprobe's events whose `GROUP/EVENT` starts with `prefix`, as `del`
/// matches them (tracefs.rs), in the order `show` lists them.
pub fn events(fs_: &Tracefs, prefix: &str) -> Vec<String> {
    fs_.defined()
        .into_iter()
        .map(|d| d.event)
        .filter(|e| e.starts_with(prefix))
        .collect()
}

/// Prints the values; always 0.
pub fn run(fs_: &Tracefs, what: &Values, prefix: &str) -> i32 {
    let values = match what {
        Values::Functions => functions(fs_, prefix),
        Values::BinaryFunctions(bin) => binary_functions(bin, prefix),
        Values::Events => events(fs_, prefix),
    };
    let mut out = io::stdout().lock();
    for v in values {
        if writeln!(out, "{v}").is_err() {
            break;
        }
    }
    0
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    /// A tracing directory with dynprobe's files, under the temporary
    /// directory.
    fn fake_tracefs(name: &str) -> Tracefs {
        let root = std::env::temp_dir().join(format!("dynprobe-{name}-{}", std::process::id()));
        let dp = root.join("dynprobe");
        fs::create_dir_all(&dp).unwrap();
        let mut funcs: String = (0..600)
            .map(|i| format!("vfs_x{i:03}"))
            .collect::<Vec<_>>()
            .join("\n");
        funcs += "\n";
        funcs += "vfs_write\nvfs_read\nvfs_readv [kvm]\nvfs_read\n__x64_sys_read\n";
        fs::write(root.join("available_filter_functions"), funcs).unwrap();
        fs::write(dp.join("kprobe_events"), "p:demo/open do_sys_openat2\n").unwrap();
        fs::write(
            dp.join("function_events"),
            "vfs_read(x64 file) -> s64 ret\nvfs_write(x64 file)\n",
        )
        .unwrap();
        fs::write(dp.join("synthetic_events"), "lat\tu64 ns\n").unwrap();
        fs::write(
            dp.join("dynamic_events"),
            "p:demo/open do_sys_openat2\nf:probe/vfs_read vfs_read file\n",
        )
        .unwrap();
        Tracefs { root }
    }

    #[test]
    fn function_names() {
        let fs_ = fake_tracefs("complete-functions");
        assert_eq!(
            functions(&fs_, "vfs_r"),
            ["vfs_read", "vfs_readv"].map(String::from)
        );
        let all = functions(&fs_, "");
        assert_eq!(all.len(), MAX_FUNCTIONS);
        assert_eq!(all[0], "__x64_sys_read");
        assert!(functions(&fs_, "nothing").is_empty());
        fs::remove_dir_all(&fs_.root).unwrap();
    }

    #[test]
    fn event_names_are_what_del_matches() {
        let fs_ = fake_tracefs("complete-events");
        let all = events(&fs_, "");
        assert_eq!(
            all,
            [
                "demo/open",
                "functions/vfs_read__exit",
                "functions/vfs_write",
                "synthetic/lat",
                "probe/vfs_read"
            ]
            .map(String::from)
        );
        for e in &all {
            assert!(fs_
                .defined()
                .iter()
                .any(|d| crate::tracefs::matches(e, &d.event)));
        }
        assert_eq!(events(&fs_, "functions/vfs_w"), ["functions/vfs_write"]);
        fs::remove_dir_all(&fs_.root).unwrap();
    }

    #[test]
    fn arguments() {
        let p = |a: &[&str]| parse(&a.iter().map(|s| s.to_string()).collect::<Vec<_>>());
        assert_eq!(
            p(&["functions", "vfs_r"]),
            Ok(Cmd::Complete {
                what: Values::Functions,
                prefix: "vfs_r".into()
            })
        );
        assert_eq!(
            p(&["events", "--help"]),
            Ok(Cmd::Complete {
                what: Values::Events,
                prefix: "--help".into()
            })
        );
        assert_eq!(
            p(&["events"]),
            Ok(Cmd::Complete {
                what: Values::Events,
                prefix: String::new()
            })
        );
        assert_eq!(
            p(&["functions", "--exec=/bin/sh", "mai"]),
            Ok(Cmd::Complete {
                what: Values::BinaryFunctions("/bin/sh".into()),
                prefix: "mai".into()
            })
        );
        // fish drops an empty PREFIX: the option alone.
        assert_eq!(
            p(&["functions", "--exec=/bin/sh"]),
            Ok(Cmd::Complete {
                what: Values::BinaryFunctions("/bin/sh".into()),
                prefix: String::new()
            })
        );
        // Events have no binary: the word is their PREFIX.
        assert_eq!(
            p(&["events", "--exec=x"]),
            Ok(Cmd::Complete {
                what: Values::Events,
                prefix: "--exec=x".into()
            })
        );
        assert!(p(&["lines"]).is_err());
        assert!(p(&["events", "a", "b"]).is_err());
        assert!(crate::cli::manual(Some(NAME)).is_none());
    }

    #[test]
    fn nothing_without_tracefs() {
        let fs_ = Tracefs {
            root: Path::new("/nonexistent/tracing").into(),
        };
        assert!(functions(&fs_, "").is_empty());
        assert!(events(&fs_, "").is_empty());
        assert_eq!(run(&fs_, &Values::Events, ""), 0);
        assert!(binary_functions("/nonexistent/bin", "").is_empty());
        // A file that is no ELF file.
        assert!(binary_functions("/proc/self/status", "").is_empty());
    }
}
