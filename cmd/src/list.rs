// SPDX-License-Identifier: GPL-2.0
//! `dynprobe list`: traceable functions with their BTF prototypes,
//! tracepoints with their fields, and dynprobe's events.

use std::cell::OnceCell;
use std::collections::HashMap;
use std::fs;
use std::io::{self, Write};
use std::path::Path;

use crate::btfnames::Names;
use crate::btfprotos::{self, prototype, BtfSource};
use crate::check::OwnedBtf;
use crate::tracefs::{matches, Tracefs};

/// Whether a glob (or none) takes `name`.
fn takes(glob: Option<&str>, name: &str) -> bool {
    glob.is_none_or(|g| dynprobe_lang::glob_match(g.as_bytes(), name.as_bytes()))
}

/// Fields of a `format` text: `name` each, or `type name` with types.
pub fn format_fields(format: &str, verbose: bool) -> Vec<String> {
    format
        .lines()
        .filter_map(|l| {
            let rest = l.trim().strip_prefix("field:")?;
            let decl = rest.split(';').next()?.trim();
            let name = decl.rsplit(' ').next()?;
            if name.starts_with("common_") {
                return None;
            }
            Some(if verbose {
                decl.to_string()
            } else {
                name.split('[').next().unwrap_or(name).to_string()
            })
        })
        .collect()
}

/// Prints the list; the exit status.
pub fn run(fs_: &Tracefs, glob: Option<&str>, verbose: bool) -> i32 {
    run_with(
        fs_,
        &BtfSource::running(),
        glob,
        verbose,
        &mut io::stdout().lock(),
    )
}

/// Prints the list to `out`, the kernel's prototypes from `btf`'s kept
/// index (btfprotos); the exit status.
pub fn run_with(
    fs_: &Tracefs,
    btf: &BtfSource,
    glob: Option<&str>,
    verbose: bool,
    out: &mut dyn Write,
) -> i32 {
    // The prototypes of the kernel's functions the glob takes.
    let protos = btfprotos::load(btf, |name| takes(glob, name)).unwrap_or_default();
    // The whole blob, read only when a module's function is listed (its
    // BTF is split on the kernel's).
    let vmlinux = OnceCell::new();
    let vmlinux = || vmlinux.get_or_init(|| OwnedBtf::load(&btf.path)).as_ref();
    let funcs = match fs::read_to_string(fs_.root.join("available_filter_functions")) {
        Ok(t) => t,
        Err(e) => {
            eprintln!(
                "dynprobe: {}: {e}{}",
                fs_.root.join("available_filter_functions").display(),
                if e.kind() == io::ErrorKind::PermissionDenied {
                    " (run as root)"
                } else {
                    ""
                }
            );
            return 1;
        }
    };
    // Module BTF, read when a function of the module is listed.
    let mut modules: HashMap<String, Option<(OwnedBtf, Option<Names>)>> = HashMap::new();
    let mut listed = std::collections::HashSet::new();
    for l in funcs.lines() {
        let mut w = l.split_ascii_whitespace();
        let Some(name) = w.next() else { continue };
        let module = w
            .next()
            .and_then(|m| m.strip_prefix('['))
            .and_then(|m| m.strip_suffix(']'));
        if !takes(glob, name) || !listed.insert((name.to_string(), module.map(str::to_string))) {
            continue;
        }
        let base = || vmlinux().and_then(|v| v.btf());
        let proto = match (module, module.and_then(|_| base())) {
            (None, _) => protos.get(name).map(|p| match verbose {
                true => p.typed.clone(),
                false => p.plain.clone(),
            }),
            (Some(m), Some(b)) => {
                let entry = modules.entry(m.to_string()).or_insert_with(|| {
                    let dir = btf.path.parent().unwrap_or(Path::new("/sys/kernel/btf"));
                    let o = OwnedBtf::load_split(&b, &dir.join(m))?;
                    let names = verbose.then(|| {
                        let mut n = Names::default();
                        if let Some(v) = vmlinux() {
                            n.add(v.blob());
                        }
                        n.add(o.blob());
                        n
                    });
                    Some((o, names))
                });
                match entry {
                    Some((o, names)) => o
                        .split(&b)
                        .and_then(|s| prototype(&s, names.as_ref(), name)),
                    None => None,
                }
            }
            _ => None,
        };
        let proto = proto.unwrap_or_else(|| name.to_string());
        let r = match module {
            Some(m) => writeln!(out, "function {proto} [{m}]"),
            None => writeln!(out, "function {proto}"),
        };
        if r.is_err() {
            return 0;
        }
    }
    let ours: Vec<crate::tracefs::Defined> = fs_.defined();
    if let Ok(systems) = fs::read_dir(fs_.root.join("events")) {
        // A directory by its entry's type, without a stat of each of
        // the 2,000 (tracefs says the type when it lists).
        let is_dir = |e: &fs::DirEntry| e.file_type().is_ok_and(|t| t.is_dir());
        let mut systems: Vec<_> = systems.flatten().filter(is_dir).collect();
        systems.sort_by_key(|e| e.file_name());
        for s in systems {
            let sys = s.file_name().to_string_lossy().into_owned();
            let Ok(events) = fs::read_dir(s.path()) else {
                continue;
            };
            let mut events: Vec<_> = events.flatten().filter(is_dir).collect();
            events.sort_by_key(|e| e.file_name());
            for e in events {
                let ev = e.file_name().to_string_lossy().into_owned();
                let full = format!("{sys}:{ev}");
                if ours.iter().any(|d| d.event == format!("{sys}/{ev}"))
                    || !(takes(glob, &full) || takes(glob, &ev))
                {
                    continue;
                }
                let Ok(format) = fs::read_to_string(e.path().join("format")) else {
                    continue;
                };
                let fields = format_fields(&format, verbose);
                if writeln!(out, "tracepoint {full}({})", fields.join(", ")).is_err() {
                    return 0;
                }
            }
        }
    }
    for d in ours {
        if glob.is_none_or(|g| matches(g, &d.event)) {
            let _ = writeln!(
                out,
                "dynprobe {} ({}: {})",
                d.event.replacen('/', ":", 1),
                d.target.file(),
                d.line
            );
        }
    }
    0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tracepoint_fields() {
        let f = "format:\n\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\n\
                 \tfield:char prev_comm[16];\toffset:8;\tsize:16;\tsigned:0;\n\
                 \tfield:pid_t prev_pid;\toffset:24;\tsize:4;\tsigned:1;\n\nprint fmt: \"x\"\n";
        assert_eq!(format_fields(f, false), vec!["prev_comm", "prev_pid"]);
        assert_eq!(
            format_fields(f, true),
            vec!["char prev_comm[16]", "pid_t prev_pid"]
        );
    }

    #[test]
    fn globs() {
        assert!(takes(None, "x"));
        assert!(takes(Some("vfs_*"), "vfs_read"));
        assert!(!takes(Some("vfs_*"), "ksys_read"));
        assert!(takes(Some("vfs_read"), "vfs_read"));
    }
}
