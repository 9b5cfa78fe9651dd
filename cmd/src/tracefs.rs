// SPDX-License-Identifier: GPL-2.0
//! dynprobe's control files: writing a line (appended, never truncating),
//! the error_log entry of a refused one, the definitions listed.

use std::fs::{self, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use crate::line::{defined_event, Planned, Target};

/// The tracing directory and dynprobe's in it.
#[derive(Clone, Debug)]
pub struct Tracefs {
    /// `/sys/kernel/tracing` (or `DYNPROBE_TRACEFS`).
    pub root: PathBuf,
}

/// Why dynprobe's files cannot be used.
pub fn not_loaded_message(root: &Path) -> String {
    format!(
        "dynprobe: dynprobe is not loaded ({} does not exist).\n\
         Load it with `modprobe dynprobe` (DKMS installs it: see README.md),\n\
         or `insmod dynprobe.ko` from a build; then run this again as root.",
        root.join("dynprobe").display()
    )
}

impl Tracefs {
    /// `DYNPROBE_TRACEFS`, else `/sys/kernel/tracing`, else the debugfs
    /// mount's `tracing/`.
    pub fn locate() -> Tracefs {
        if let Some(d) = std::env::var_os("DYNPROBE_TRACEFS") {
            return Tracefs { root: d.into() };
        }
        let sys = PathBuf::from("/sys/kernel/tracing");
        let debug = PathBuf::from("/sys/kernel/debug/tracing");
        let root = if !sys.join("trace").exists() && debug.join("trace").exists() {
            debug
        } else {
            sys
        };
        Tracefs { root }
    }

    /// `dynprobe/FILE`.
    pub fn dynprobe(&self, file: &str) -> PathBuf {
        self.root.join("dynprobe").join(file)
    }

    /// Err with what to do when dynprobe's directory is not there or not
    /// readable.
    pub fn require_loaded(&self) -> Result<(), String> {
        let dir = self.root.join("dynprobe");
        match fs::metadata(&dir) {
            Ok(_) => match fs::read_to_string(self.dynprobe("kprobe_events")) {
                Ok(_) => Ok(()),
                Err(e) if e.kind() == io::ErrorKind::PermissionDenied => Err(format!(
                    "dynprobe: {}: permission denied: run as root",
                    self.dynprobe("kprobe_events").display()
                )),
                Err(e) => Err(format!(
                    "dynprobe: {}: {e}",
                    self.dynprobe("kprobe_events").display()
                )),
            },
            Err(e) if e.kind() == io::ErrorKind::PermissionDenied => Err(format!(
                "dynprobe: {}: permission denied: run as root",
                self.root.display()
            )),
            Err(_) => Err(not_loaded_message(&self.root)),
        }
    }

    /// The tracing core's `error_log` (empty when unreadable).
    pub fn error_log(&self) -> String {
        fs::read_to_string(self.root.join("error_log")).unwrap_or_default()
    }

    /// Appends `line` to the control file of `p` in one write. On refusal:
    /// the error and the error_log entry the write added.
    pub fn append(&self, p: &Planned) -> Result<(), String> {
        append_to(&self.dynprobe(p.target.file()), &p.line, || {
            self.error_log()
        })
    }

    /// Each file's listing, in the order removals prefer them.
    pub fn listings(&self) -> Vec<(Target, String)> {
        [
            Target::Kprobe,
            Target::Uprobe,
            Target::Function,
            Target::Synthetic,
            Target::Dynamic,
        ]
        .into_iter()
        .map(|t| {
            (
                t,
                fs::read_to_string(self.dynprobe(t.file())).unwrap_or_default(),
            )
        })
        .collect()
    }

    /// Every event dynprobe has: `GROUP/EVENT`, the file that lists it and
    /// the line, each event once.
    pub fn defined(&self) -> Vec<Defined> {
        defined_in(&self.listings())
    }
}

/// One definition in a listing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Defined {
    /// `GROUP/EVENT`.
    pub event: String,
    /// The file that lists it.
    pub target: Target,
    /// The line as listed.
    pub line: String,
}

impl Defined {
    /// The line that removes it from its file.
    pub fn removal(&self) -> String {
        match self.target {
            Target::Synthetic => format!("!{}", self.event.trim_start_matches("synthetic/")),
            _ => format!("-:{}", self.event),
        }
    }
}

/// The definitions of listings, each event once (the first file that
/// lists it).
pub fn defined_in(listings: &[(Target, String)]) -> Vec<Defined> {
    let mut out: Vec<Defined> = Vec::new();
    for (t, text) in listings {
        for l in text.lines() {
            let l = l.trim();
            if l.is_empty() || l.starts_with('#') {
                continue;
            }
            // A listing line is a definition of the same form, in the
            // file's own syntax (synthetic_events lists `EVENT\tFIELDS`).
            let form = match t {
                Target::Function => Target::Function,
                Target::Synthetic => Target::Synthetic,
                _ => *t,
            };
            let p = Planned::as_given(form, l);
            let Some(event) = defined_event(&p) else {
                continue;
            };
            if out.iter().any(|d| d.event == event) {
                continue;
            }
            out.push(Defined {
                event,
                target: *t,
                line: l.to_string(),
            });
        }
    }
    out
}

/// Whether `pattern` (a glob, `GROUP/EVENT` or `EVENT`) names `event`.
pub fn matches(pattern: &str, event: &str) -> bool {
    let pattern = pattern.strip_prefix("-:").unwrap_or(pattern);
    let glob = |p: &str, s: &str| dynprobe_lang::glob_match(p.as_bytes(), s.as_bytes());
    if pattern.contains('/') {
        return glob(pattern, event);
    }
    // `GROUP:EVENT` as perf writes it.
    if let Some((g, e)) = pattern.split_once(':') {
        return glob(&format!("{g}/{e}"), event);
    }
    let name = event.rsplit('/').next().unwrap_or(event);
    glob(pattern, name)
}

/// Appends `line` to `file` (O_APPEND, one write); on failure the error
/// with what `error_log` gained.
pub fn append_to(file: &Path, line: &str, log: impl Fn() -> String) -> Result<(), String> {
    let before = log();
    let mut text = line.to_string();
    text.push('\n');
    let res = OpenOptions::new()
        .append(true)
        .open(file)
        .and_then(|mut f| f.write_all(text.as_bytes()));
    match res {
        Ok(()) => Ok(()),
        Err(e) => {
            let after = log();
            let entry = new_entry(&before, &after);
            let errno = e
                .raw_os_error()
                .map(crate::check::errno_name)
                .unwrap_or_else(|| e.to_string());
            let mut msg = format!(
                "dynprobe: {} refused the line ({errno})\n",
                file.file_name().and_then(|f| f.to_str()).unwrap_or("?")
            );
            if entry.is_empty() {
                msg.push_str(&format!("  Command: {line}\n  (no error_log entry)\n"));
            } else {
                msg.push_str(&entry);
            }
            Err(msg)
        }
    }
}

/// The entry `after` has that `before` had not, without its time stamp;
/// the last entry when the log turned over.
pub fn new_entry(before: &str, after: &str) -> String {
    let tail = match after.strip_prefix(before) {
        Some(t) => t,
        None => {
            // The log keeps a few entries: take the last one.
            let start = after
                .match_indices('\n')
                .map(|(i, _)| i + 1)
                .filter(|&i| after[i..].starts_with('['))
                .last()
                .unwrap_or(0);
            &after[start..]
        }
    };
    let mut out = String::new();
    for l in tail.lines() {
        let l = match l.strip_prefix('[') {
            Some(r) => r.split_once("] ").map_or(l, |(_, rest)| rest),
            None => l,
        };
        out.push_str(l);
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn del_globs() {
        assert!(matches("probe/vfs_read", "probe/vfs_read"));
        assert!(matches("vfs_read", "probe/vfs_read"));
        assert!(matches("vfs_*", "probe/vfs_read"));
        assert!(matches("probe/*", "probe/vfs_read"));
        assert!(matches("probe:vfs_read", "probe/vfs_read"));
        assert!(matches("-:probe/vfs_read", "probe/vfs_read"));
        assert!(matches("*", "functions/vfs_read"));
        assert!(!matches("vfs_read", "probe/vfs_read__return"));
        assert!(!matches("other/*", "probe/vfs_read"));
        assert!(!matches("vfs_write", "probe/vfs_read"));
    }

    #[test]
    fn listings_to_events() {
        let l = vec![
            (Target::Kprobe, "p:demo/open do_sys_openat2 dfd=%di:s32\n".to_string()),
            (
                Target::Function,
                "vfs_read(x64 file, NULL, u64 count) -> s64 ret\nvfs_write(x64 file)\n"
                    .to_string(),
            ),
            (Target::Synthetic, "lat\tu64 ns\n".to_string()),
            (
                Target::Dynamic,
                "p:demo/open do_sys_openat2 dfd=%di:s32\nf:probe/vfs_read vfs_read file\ns:synthetic/lat\tu64 ns\n"
                    .to_string(),
            ),
        ];
        let d = defined_in(&l);
        let names: Vec<(&str, Target)> = d.iter().map(|d| (d.event.as_str(), d.target)).collect();
        assert_eq!(
            names,
            vec![
                ("demo/open", Target::Kprobe),
                ("functions/vfs_read__exit", Target::Function),
                ("functions/vfs_write", Target::Function),
                ("synthetic/lat", Target::Synthetic),
                ("probe/vfs_read", Target::Dynamic),
            ]
        );
        assert_eq!(d[0].removal(), "-:demo/open");
        assert_eq!(d[1].removal(), "-:functions/vfs_read__exit");
        assert_eq!(d[3].removal(), "!lat");
    }

    #[test]
    fn error_log_entries() {
        let before = "[   10.000000] trace_kprobe: error: Old\n  Command: p x\n              ^\n";
        let entry = "[   11.500000] trace_kprobe: error: Invalid register name\n  Command: p:a/b vfs_read a=%zz\n                             ^\n";
        let after = format!("{before}{entry}");
        assert_eq!(
            new_entry(before, &after),
            "trace_kprobe: error: Invalid register name\n  Command: p:a/b vfs_read a=%zz\n                             ^\n"
        );
        // Turned over: the last entry.
        assert!(new_entry("[ 1.0] gone\n", &after).starts_with("trace_kprobe: error: Invalid"));
        assert_eq!(new_entry(before, before), "");
    }

    #[test]
    fn append_never_truncates() {
        let dir = std::env::temp_dir().join(format!("dynprobe-cmd-test-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let f = dir.join("kprobe_events");
        fs::write(&f, "p:a/b x\n").unwrap();
        append_to(&f, "p:a/c y", String::new).unwrap();
        assert_eq!(fs::read_to_string(&f).unwrap(), "p:a/b x\np:a/c y\n");
        let e = append_to(&dir.join("missing/x"), "p:a/d z", String::new).unwrap_err();
        assert!(e.contains("refused the line (ENOENT)"), "{e}");
        fs::remove_dir_all(&dir).unwrap();
    }
}
