// SPDX-License-Identifier: GPL-2.0
//! `-x BIN`: perf probe's forms for a place in an executable or shared
//! library, translated to uprobe lines of `uprobe_events` with the
//! language crate's ELF reader: a function (`FUNC[%return]`,
//! `FUNC+OFFS`, with fetch arguments as written) and an SDT marker
//! (`sdt:PROVIDER:NAME`, perf's `%[sdt_]PROVIDER:NAME`), whose semaphore
//! becomes the reference counter and whose argument specs become fetch
//! arguments. Offsets are written as numbers, the file offsets the
//! kernel's uprobe lines take; the note of each line says what they are.

use std::fs;
use std::path::{Path, PathBuf};

use dynprobe_lang::elf::{Elf, SdtArg, SdtArgs, SdtNote, SdtPlace};

use crate::line::{FunctionPlace, LineError, Planned, Target};

/// The binary `-x` names: its path as the uprobe line writes it and its
/// bytes.
pub struct UserBinary {
    /// The absolute path, symbolic links resolved, as perf writes it.
    pub path: PathBuf,
    bytes: Vec<u8>,
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// A name the tracing core takes for a group or event: what is not a
/// letter, digit or `_` becomes `_` (`memcpy@GLIBC_2.2.5` is
/// `memcpy_GLIBC_2_2_5`).
fn event_word(s: &str) -> String {
    s.chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect()
}

fn is_ident(s: &str) -> bool {
    let mut c = s.chars();
    c.next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && c.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// perf probe's group for a binary's functions (its
/// convert_exec_to_group): `probe_` and the file's name up to its first
/// character that is not a letter, digit or `_` (`probe_libc` for
/// `libc.so.6`, `probe_uprobe_workload`).
pub fn binary_group(path: &Path) -> String {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let stem = name
        .split(|c: char| !c.is_ascii_alphanumeric() && c != '_')
        .next()
        .unwrap_or_default();
    format!("probe_{stem}")
}

/// The fetch argument that reads SDT argument `arg` of `note`; `Err`
/// says why there is none. A variable's `@+OFFSET` counts as the kernel
/// maps it: from the probe's address and file offset.
pub fn sdt_fetch(elf: &Elf<'_>, note: &SdtNote<'_>, arg: &SdtArg<'_>) -> Result<String, String> {
    let at = match arg.place {
        SdtPlace::Symbol { name, .. } => match elf.lookup_variable(name) {
            Ok(v) => Some(v.address.wrapping_sub(note.pc).wrapping_add(note.pc_offset)),
            Err(e) => return Err(format!("{}: {e}", text(name))),
        },
        _ => None,
    };
    let mut fetch = String::new();
    arg.write_fetch(&mut fetch, at)
        .map_err(|_| "no fetch argument for it".to_string())?;
    Ok(fetch)
}

/// The group and event a line names, and its place.
type Names<'a> = (Option<&'a str>, Option<&'a str>, &'a str);

/// `[[GROUP:]EVENT=]` before a place: the names given, checked.
fn given_names(spec: &str) -> Result<Names<'_>, LineError> {
    let Some((names, place)) = spec.split_once('=') else {
        return Ok((None, None, spec));
    };
    let (group, event) = match names.split_once(':') {
        Some((g, e)) => (Some(g), e),
        None => (None, names),
    };
    for (what, v) in [("group", group), ("event", Some(event))] {
        if let Some(v) = v {
            if !is_ident(v) {
                return Err(LineError(format!("bad {what} name `{v}` in `{spec}`")));
            }
        }
    }
    Ok((group, Some(event), place))
}

/// `PROVIDER:NAME` of `sdt:PROVIDER:NAME` or `%[sdt_]PROVIDER:NAME`
/// (the provider may be left out: any provider's NAME).
fn sdt_marker(place: &str) -> Option<(Option<&str>, &str)> {
    let rest = match place.strip_prefix("sdt:") {
        Some(r) => r,
        None => {
            let r = place.strip_prefix('%')?;
            r.strip_prefix("sdt_").unwrap_or(r)
        }
    };
    Some(match rest.split_once(':') {
        Some((p, n)) => (Some(p), n),
        None => (None, rest),
    })
}

impl UserBinary {
    /// Reads `bin` (a path, relative to the current directory or not).
    pub fn open(bin: &str) -> Result<UserBinary, LineError> {
        let path = fs::canonicalize(bin).map_err(|e| LineError(format!("{bin}: {e}")))?;
        let bytes = fs::read(&path).map_err(|e| LineError(format!("{bin}: {e}")))?;
        Elf::parse(&bytes).map_err(|e| LineError(format!("{bin}: {e}")))?;
        Ok(UserBinary { path, bytes })
    }

    fn elf(&self) -> Result<Elf<'_>, LineError> {
        Elf::parse(&self.bytes).map_err(|e| self.error(&e.to_string()))
    }

    fn error(&self, what: &str) -> LineError {
        LineError(format!("{}: {what}", self.path.display()))
    }

    /// The uprobe lines of one `LINE` on this binary: perf probe's
    /// `[[GROUP:]EVENT=]PLACE [ARG...]`, where PLACE is an SDT marker
    /// (one line for each place the marker is at, all one event) or
    /// `FUNC[%return]` or `FUNC+OFFS`.
    pub fn plan(&self, line: &str) -> Result<Vec<Planned>, LineError> {
        let text = line.trim();
        let mut words = text.split_ascii_whitespace();
        let Some(spec) = words.next() else {
            return Err(LineError("empty line".into()));
        };
        let args: Vec<&str> = words.collect();
        let (group, event, place) = given_names(spec)?;
        if let Some((provider, name)) = sdt_marker(place) {
            if !args.is_empty() {
                return Err(LineError(format!(
                    "`{text}`: an SDT marker's arguments are its note's (arg1..argN); no ARG after it"
                )));
            }
            return self.plan_sdt(provider, name, group, event);
        }
        self.plan_function(place, group, event, &args)
    }

    fn plan_sdt(
        &self,
        provider: Option<&str>,
        name: &str,
        group: Option<&str>,
        event: Option<&str>,
    ) -> Result<Vec<Planned>, LineError> {
        let elf = self.elf()?;
        let notes = elf.sdt_notes().map_err(|e| self.error(&e.to_string()))?;
        let wanted = |n: &SdtNote<'_>| {
            n.name == name.as_bytes() && provider.is_none_or(|p| n.provider == p.as_bytes())
        };
        let marker = match provider {
            Some(p) => format!("{p}:{name}"),
            None => name.to_string(),
        };
        let mut found = Vec::new();
        for note in notes {
            let note = note.map_err(|e| self.error(&e.to_string()))?;
            if wanted(&note) {
                found.push(note);
            }
        }
        let Some(first) = found.first() else {
            return Err(self.error(&format!(
                "no SDT marker {marker} (dynprobe list -x BIN lists them)"
            )));
        };
        if found.iter().any(|n| n.provider != first.provider) {
            return Err(self.error(&format!(
                "SDT marker {name} of several providers: name one (sdt:PROVIDER:{name})"
            )));
        }
        let provider = text(first.provider);
        let group = group.map_or_else(|| format!("sdt_{}", event_word(&provider)), str::to_string);
        let event = event.map_or_else(|| event_word(name), str::to_string);
        let count = found.len();
        let mut out = Vec::new();
        for (i, note) in found.iter().enumerate() {
            let mut line = format!(
                "p:{group}/{event} {}:{:#x}",
                self.path.display(),
                note.pc_offset
            );
            let mut about = format!("sdt {provider}:{name}");
            if count > 1 {
                about += &format!(" ({} of {count})", i + 1);
            }
            about += &format!(" at {:#x}", note.pc_offset);
            if let Some(sema) = note.semaphore_offset {
                line += &format!("({sema:#x})");
                about += &format!(", semaphore at {sema:#x}");
            }
            for (n, (spec, arg)) in SdtArgs::new(note.args).enumerate() {
                let why = |r: &str| {
                    self.error(&format!(
                        "SDT marker {provider}:{name}: argument {} `{}`: {r}; dynprobe cannot translate it",
                        n + 1,
                        text(spec)
                    ))
                };
                let arg = arg.map_err(|e| why(&e.to_string()))?;
                let fetch = sdt_fetch(&elf, note, &arg).map_err(|r| why(&r))?;
                line += &format!(" arg{}={fetch}", n + 1);
            }
            out.push(Planned {
                target: Target::Uprobe,
                line,
                translated: true,
                note: Some(about),
            });
        }
        Ok(out)
    }

    fn plan_function(
        &self,
        place: &str,
        group: Option<&str>,
        event: Option<&str>,
        args: &[&str],
    ) -> Result<Vec<Planned>, LineError> {
        if let Some(c) = place.chars().find(|&c| c == '@' || c == ';' || c == ':') {
            return Err(LineError(format!(
                "`{place}`: perf probe's `{c}` needs debug info; with -x dynprobe probes FUNC, FUNC%return, FUNC+OFFS and SDT markers (sdt:PROVIDER:NAME)"
            )));
        }
        let Some(fp) = FunctionPlace::parse(place) else {
            return Err(LineError(format!(
                "`{place}`: not perf probe's [[GROUP:]EVENT=]FUNC[%return|+OFFS] [ARG...] nor an SDT marker (sdt:PROVIDER:NAME, %[sdt_]PROVIDER:NAME)"
            )));
        };
        let (func, ret) = (fp.func, fp.ret);
        let elf = self.elf()?;
        let found = elf
            .resolve(place.strip_suffix("%return").unwrap_or(place).as_bytes())
            .map_err(|e| self.error(&format!("{}: {e}", func)))?;
        let group = group.map_or_else(|| binary_group(&self.path), str::to_string);
        let event = fp.event(event, event_word(func));
        let mut line = format!(
            "{}:{group}/{event} {}:{:#x}",
            if ret { 'r' } else { 'p' },
            self.path.display(),
            found.offset
        );
        for a in args {
            line.push(' ');
            line.push_str(a);
        }
        let mut about = format!("{place} at {:#x}", found.offset);
        if found.function.ifunc {
            about += " (an ifunc: its resolver)";
        }
        Ok(vec![Planned {
            target: Target::Uprobe,
            line,
            translated: true,
            note: Some(about),
        }])
    }
}
