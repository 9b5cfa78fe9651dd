// SPDX-License-Identifier: GPL-2.0
//! The host check: a line parsed by the module's own language crate
//! before anything is written, with a resolver that answers from the
//! running kernel (its BTF, kallsyms, trace events) where that is cheap,
//! and otherwise as permissively as the crate's defaults.

use std::cell::OnceCell;
use std::collections::HashMap;
use std::fs;
use std::path::{Path, PathBuf};

use dynprobe_lang::btf::{self, Btf};
use dynprobe_lang::{
    parse, parse_synth, write_command, BtfError, BtfFunc, BtfMember, BtfType, Control, Definition,
    ErrorCode, EventField, FieldKind, FilterCheck, KernelFacts, ParseError, Resolver, SynthSource,
    UserFile, LINUX_7_2,
};

use crate::line::{Planned, Target};

/// A BTF blob with its index.
pub struct OwnedBtf {
    blob: Vec<u8>,
    index: Vec<u32>,
}

impl OwnedBtf {
    /// Reads and indexes a base blob (`/sys/kernel/btf/vmlinux`).
    pub fn load(path: &Path) -> Option<OwnedBtf> {
        let blob = fs::read(path).ok()?;
        let len = btf::index_len(&blob).ok()?;
        let mut index = vec![0u32; len];
        btf::build_index(&blob, &mut index).ok()?;
        Some(OwnedBtf { blob, index })
    }

    /// Reads and indexes a module's split blob on `base`.
    pub fn load_split(base: &Btf<'_>, path: &Path) -> Option<OwnedBtf> {
        let blob = fs::read(path).ok()?;
        let len = btf::index_len_split(base, &blob).ok()?;
        let mut index = vec![0u32; len];
        btf::build_index_split(base, &blob, &mut index).ok()?;
        Some(OwnedBtf { blob, index })
    }

    /// The reader.
    pub fn btf(&self) -> Option<Btf<'_>> {
        Btf::new(&self.blob, &self.index).ok()
    }

    /// The reader of this split blob on `base`.
    pub fn split<'a>(&'a self, base: &Btf<'a>) -> Option<Btf<'a>> {
        Btf::new_split(base, &self.blob, &self.index).ok()
    }

    /// The raw blob.
    pub fn blob(&self) -> &[u8] {
        &self.blob
    }
}

/// What the running kernel tells the host check.
pub struct Host {
    /// The series the module answers as.
    pub facts: &'static KernelFacts,
    /// `/sys/kernel/btf/vmlinux`.
    pub vmlinux: Option<OwnedBtf>,
    /// The directory of `available_filter_functions`, `events/`.
    pub tracefs: PathBuf,
    /// Function name to module, from `available_filter_functions`.
    modules: OnceCell<HashMap<String, String>>,
    /// kallsyms' text, read on the first symbol asked.
    kallsyms: OnceCell<String>,
}

impl Host {
    /// The running kernel's (its BTF only when `btf` is set).
    pub fn running(tracefs: &Path, btf: bool) -> Host {
        Host {
            facts: running_series(),
            vmlinux: if btf {
                OwnedBtf::load(Path::new("/sys/kernel/btf/vmlinux"))
            } else {
                None
            },
            tracefs: tracefs.to_path_buf(),
            modules: OnceCell::new(),
            kallsyms: OnceCell::new(),
        }
    }

    /// A host that knows nothing of a kernel but its series (tests).
    pub fn offline(facts: &'static KernelFacts) -> Host {
        Host {
            facts,
            vmlinux: None,
            tracefs: PathBuf::from("/nonexistent"),
            modules: OnceCell::new(),
            kallsyms: OnceCell::new(),
        }
    }

    /// The module a traceable function is in (`available_filter_functions`).
    pub fn module_of(&self, func: &str) -> Option<&str> {
        self.modules
            .get_or_init(|| {
                let text = fs::read_to_string(self.tracefs.join("available_filter_functions"))
                    .unwrap_or_default();
                text.lines()
                    .filter_map(|l| {
                        let mut w = l.split_ascii_whitespace();
                        let f = w.next()?;
                        let m = w.next()?.strip_prefix('[')?.strip_suffix(']')?;
                        Some((f.to_string(), m.to_string()))
                    })
                    .collect()
            })
            .get(func)
            .map(String::as_str)
    }
}

/// The kernel series of `uname -r`, 7.2's when it is none the crate knows.
pub fn running_series() -> &'static KernelFacts {
    let release = fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
    series_of(&release)
}

/// The series of a release string such as `7.3-amd64` or `7.2.12+deb14`.
pub fn series_of(release: &str) -> &'static KernelFacts {
    let mut n = release
        .trim()
        .split(|c: char| !c.is_ascii_digit())
        .map(|s| s.parse::<u32>().ok());
    match (n.next().flatten(), n.next().flatten()) {
        (Some(major), Some(minor)) => {
            dynprobe_lang::for_version(major, minor).unwrap_or(&LINUX_7_2)
        }
        _ => &LINUX_7_2,
    }
}

/// The resolver of one line: the function's module BTF is read when the
/// line names a function vmlinux's BTF does not have.
struct LineResolver<'h> {
    host: &'h Host,
    module: OnceCell<Option<OwnedBtf>>,
}

impl<'h> LineResolver<'h> {
    fn base(&self) -> Option<Btf<'h>> {
        self.host.vmlinux.as_ref()?.btf()
    }

    /// Loads the BTF of the module `func` is in.
    fn want_module(&self, func: &str) {
        let Some(base) = self.base() else { return };
        if base.func(func).is_some() || self.module.get().is_some() {
            return;
        }
        let Some(m) = self.host.module_of(func) else {
            return;
        };
        let path = Path::new("/sys/kernel/btf").join(m);
        let _ = self.module.set(OwnedBtf::load_split(&base, &path));
    }

    /// Asks the module's BTF if loaded, else vmlinux's.
    fn with<T>(&self, f: impl FnOnce(&Btf<'_>) -> Option<T>) -> Option<T> {
        let base = self.base()?;
        if let Some(Some(m)) = self.module.get() {
            if let Some(b) = m.split(&base) {
                return f(&b);
            }
        }
        f(&base)
    }
}

impl Resolver for LineResolver<'_> {
    fn kernel(&self) -> &'static KernelFacts {
        self.host.facts
    }

    fn symbol_address(&self, name: &str) -> Option<u64> {
        // The text is kept and searched for the few names a line asks:
        // a map of all 200,000 symbols cost more than the rest of a check.
        let text = self
            .host
            .kallsyms
            .get_or_init(|| fs::read_to_string("/proc/kallsyms").unwrap_or_default());
        // A line's address, for lines of `ADDRESS TYPE NAME`.
        let address = |l: &str, want: Option<&str>| {
            let mut w = l.split_ascii_whitespace();
            let (Some(a), Some(_), Some(n)) = (w.next(), w.next(), w.next()) else {
                return None;
            };
            if want.is_some_and(|want| want != n) {
                return None;
            }
            u64::from_str_radix(a, 16).ok()
        };
        // Without kallsyms (or with hidden addresses) the module decides.
        let hidden = 0xffff_ffff_8100_0000;
        if let Some(a) = text.lines().find_map(|l| address(l, Some(name))) {
            return Some(if a == 0 { hidden } else { a });
        }
        if text.lines().all(|l| address(l, None).is_none()) {
            return Some(hidden);
        }
        None
    }

    fn btf_func(&self, func: &str) -> Option<BtfFunc> {
        self.want_module(func);
        self.with(|b| b.func(func))
    }

    fn btf_param(&self, func: &str, idx: u32) -> Option<(&str, u32)> {
        self.want_module(func);
        let base = self.base()?;
        if let Some(Some(m)) = self.module.get() {
            if let Some(b) = m.split(&base) {
                return b.func_param(func, idx);
            }
        }
        base.func_param(func, idx)
    }

    fn btf_tracepoint(&self, name: &str) -> Option<BtfFunc> {
        self.with(|b| b.tracepoint(name))
    }

    fn btf_tracepoint_param(&self, name: &str, idx: u32) -> Option<(&str, u32)> {
        let base = self.base()?;
        base.tracepoint_param(name, idx)
    }

    fn btf_type(&self, id: u32) -> Option<BtfType> {
        self.with(|b| b.type_info(id))
    }

    fn btf_struct(&self, name: &str) -> Option<u32> {
        self.with(|b| b.struct_named(name))
    }

    fn btf_member(&self, id: u32, name: &str) -> Result<Option<BtfMember>, BtfError> {
        self.with(|b| Some(b.member(id, name)))
            .unwrap_or(Err(BtfError))
    }

    fn event_source(&self, system: &str, event: &str) -> bool {
        let dir = self.host.tracefs.join("events").join(system).join(event);
        // Unknown without tracefs: the module decides.
        !self.host.tracefs.join("events").is_dir() || dir.join("format").is_file()
    }

    fn event_field(&self, system: &str, event: &str, field: &str) -> Option<EventField> {
        let path = self
            .host
            .tracefs
            .join("events")
            .join(system)
            .join(event)
            .join("format");
        let text = fs::read_to_string(path).ok()?;
        format_field(&text, field)
    }

    fn event_filter(&self, _system: &str, _event: &str, _filter: &str) -> FilterCheck {
        // The tracing core parses filters: the module's write tells.
        FilterCheck::Accepted
    }

    fn user_file(&self, path: &[u8]) -> UserFile {
        user_file(path)
    }
}

/// What the file a uprobe line names is, as the kernel's `kern_path()`
/// (symbolic links followed) and `d_is_reg()` tell it.
pub fn user_file(path: &[u8]) -> UserFile {
    use std::os::unix::ffi::OsStrExt;
    match fs::metadata(std::ffi::OsStr::from_bytes(path)) {
        Ok(m) if m.is_file() => UserFile::Regular,
        Ok(_) => UserFile::NotRegular,
        Err(e) => UserFile::Missing(e.raw_os_error().unwrap_or(2)),
    }
}

/// Field `field` of an event's `format` text, as the kernel's
/// `trace_get_fields()` gives it to an event probe.
pub fn format_field(format: &str, field: &str) -> Option<EventField> {
    for l in format.lines() {
        let l = l.trim();
        let Some(rest) = l.strip_prefix("field:") else {
            continue;
        };
        let mut parts = rest.split(';').map(str::trim);
        let decl = parts.next()?;
        let get = |k: &str| -> Option<u64> {
            parts
                .clone()
                .find_map(|p| p.strip_prefix(k))
                .and_then(|v| v.parse().ok())
        };
        let (offset, size, signed) = (get("offset:")?, get("size:")?, get("signed:")?);
        let name = decl.rsplit(' ').next()?;
        let bare = name.split('[').next()?;
        if bare != field || bare.starts_with("common_") {
            continue;
        }
        let kind = if decl.starts_with("__data_loc") {
            FieldKind::DynString
        } else if decl.starts_with("__rel_loc") {
            FieldKind::RelString
        } else if decl.contains("char") && name.contains('[') {
            FieldKind::StaticString
        } else if decl.contains("char *") || decl.contains("char*") {
            FieldKind::PtrString
        } else if matches!(size, 1 | 2 | 4 | 8) && !name.contains('[') {
            FieldKind::Value
        } else {
            FieldKind::Array
        };
        return Some(EventField {
            offset: u16::try_from(offset).ok()?,
            size: u16::try_from(size).ok()?,
            signed: signed != 0,
            kind,
        });
    }
    None
}

/// The error as the kernel's `error_log` shows it, without the time
/// stamp: the subsystem and message, the command, and a caret under the
/// column the error points at.
pub fn format_error(err: &ParseError, facts: &KernelFacts, line: &str) -> String {
    let _ = facts;
    let mut cmd = Vec::new();
    let _ = write_command(err, line.as_bytes(), &mut |b: &[u8]| {
        cmd.extend_from_slice(b);
        Ok(())
    });
    let cmd = String::from_utf8_lossy(&cmd);
    if !err.logged {
        return format!(
            "{}: error: {} ({}; the kernel logs no error_log entry for it)\n  Command: {cmd}\n",
            err.subsystem.name(),
            err.code.message(),
            errno_name(err.errno)
        );
    }
    format!(
        "{}: error: {}\n  Command: {cmd}\n{}^\n",
        err.subsystem.name(),
        err.code.message(),
        " ".repeat(2 + "Command: ".len() + err.column)
    )
}

/// `E2BIG` for 7, ...: the errno's name.
pub fn errno_name(e: i32) -> String {
    match e {
        1 => "EPERM".into(),
        2 => "ENOENT".into(),
        7 => "E2BIG".into(),
        12 => "ENOMEM".into(),
        16 => "EBUSY".into(),
        17 => "EEXIST".into(),
        19 => "ENODEV".into(),
        22 => "EINVAL".into(),
        28 => "ENOSPC".into(),
        95 => "EOPNOTSUPP".into(),
        _ => format!("errno {e}"),
    }
}

/// Checks `p` on the host: `Err` holds the error as `format_error` prints it.
pub fn check(host: &Host, p: &Planned) -> Result<(), String> {
    let line = p.line.as_str();
    let synth = match p.target {
        Target::Synthetic => Some(SynthSource::SyntheticEvents),
        Target::Dynamic if dynprobe_lang::is_synth_line(line.as_bytes()) => {
            Some(SynthSource::DynamicEvents)
        }
        _ => None,
    };
    let res = match synth {
        Some(src) => parse_synth(src, line.as_bytes()).map(|_| ()),
        None => {
            let control = match p.target {
                Target::Kprobe => Control::KprobeEvents,
                Target::Function => Control::FunctionEvents,
                Target::Uprobe => Control::UprobeEvents,
                _ => Control::DynamicEvents,
            };
            let r = LineResolver {
                host,
                module: OnceCell::new(),
            };
            let mut def = Box::new(Definition::new());
            parse(control, line.as_bytes(), &r, &mut def).map(|_| ())
        }
    };
    match res {
        // Without the kernel's BTF here (not readable, or an offline
        // check) the module, which may have it, decides.
        Err(e) if host.vmlinux.is_none() && e.code == ErrorCode::NoBtfEntry => Ok(()),
        r => r.map_err(|e| format_error(&e, host.facts, line)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::line::plan;

    fn offline(line: &str) -> Result<(), String> {
        check(&Host::offline(&LINUX_7_2), &plan(line).unwrap())
    }

    #[test]
    fn kallsyms_addresses() {
        let resolver = |text: &str| {
            let host = Host::offline(&LINUX_7_2);
            let _ = host.kallsyms.set(text.to_string());
            let r = LineResolver {
                host: &host,
                module: OnceCell::new(),
            };
            ["vfs_read", "ksys_read", "nosuch"].map(|n| r.symbol_address(n))
        };
        // The first of a name; an address that does not parse skipped.
        let text = "zz T vfs_read\nffffffff81400000 T vfs_read\n\
                    ffffffff81500000 t vfs_read\n0000000000000000 T ksys_read\n";
        assert_eq!(
            resolver(text),
            [
                Some(0xffff_ffff_8140_0000),
                Some(0xffff_ffff_8100_0000),
                None
            ]
        );
        // Without kallsyms every name is taken.
        assert_eq!(resolver("")[2], Some(0xffff_ffff_8100_0000));
        assert_eq!(resolver("zz T x\n")[2], Some(0xffff_ffff_8100_0000));
    }

    #[test]
    fn accepted_lines() {
        offline("p:a/b vfs_read %di").unwrap();
        offline("f:a/b vfs_read%return $retval").unwrap();
        offline("vfs_read(x64 file, NULL, u64 count)").unwrap();
        offline("lat u64 ns; pid_t pid").unwrap();
        offline("s:lat u64 ns").unwrap();
    }

    #[test]
    fn caret_under_the_error() {
        let e = offline("p:a/b vfs_read a=%zz").unwrap_err();
        assert!(e.starts_with(
            "trace_kprobe: error: Invalid register name\n  Command: p:a/b vfs_read a=%zz\n "
        ));
        assert!(e.ends_with("^\n"));
        let lines: Vec<&str> = e.lines().collect();
        let caret = lines[2].find('^').unwrap();
        assert_eq!(&lines[1][caret..], "%zz");
        // Words are joined by one space, as the kernel logs them.
        let e = offline("p:a/b   vfs_read    a=%zz").unwrap_err();
        assert!(e.contains("Command: p:a/b vfs_read a=%zz\n"));
        let caret = e.lines().nth(2).unwrap().find('^').unwrap();
        assert_eq!(&e.lines().nth(1).unwrap()[caret..], "%zz");
    }

    #[test]
    fn function_event_error_keeps_the_line() {
        // Without BTF a BTF name is left to the module.
        offline("vfs_read(file, count)").unwrap();
        offline("f:a/b vfs_read file->f_pos").unwrap();
        let e = offline("vfs_read(x64 file, u64 count, u65 bogus)").unwrap_err();
        assert!(e.starts_with("function_events: error: "), "{e}");
        let lines: Vec<&str> = e.lines().collect();
        assert_eq!(
            lines[1],
            "  Command: vfs_read(x64 file, u64 count, u65 bogus)"
        );
        // The caret under the unknown type, in the line as written.
        let caret = lines[2].find('^').unwrap();
        assert_eq!(&lines[1][caret..], "u65 bogus)", "{e}");
    }

    #[test]
    fn synthetic_error() {
        let e = offline("lat u64 ns; char[300] s").unwrap_err();
        assert!(e.starts_with("synthetic_events: error: "), "{e}");
    }

    #[test]
    fn unlogged_errors_say_so() {
        let e = check(
            &Host::offline(&LINUX_7_2),
            &Planned::as_given(Target::Kprobe, "f:a/b vfs_read"),
        )
        .unwrap_err();
        assert!(e.contains("no error_log entry"), "{e}");
    }

    #[test]
    fn series() {
        use dynprobe_lang::LINUX_7_3;
        assert!(std::ptr::eq(series_of("7.3-amd64"), &LINUX_7_3));
        assert!(std::ptr::eq(series_of("7.2.12+deb14-amd64"), &LINUX_7_2));
        assert!(std::ptr::eq(series_of("junk"), &LINUX_7_2));
    }

    #[test]
    fn event_fields_from_format() {
        let f = "name: sched_switch\nformat:\n\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\
                 \tfield:char prev_comm[16];\toffset:8;\tsize:16;\tsigned:0;\n\
                 \tfield:pid_t prev_pid;\toffset:24;\tsize:4;\tsigned:1;\n\
                 \tfield:__data_loc char[] name;\toffset:28;\tsize:4;\tsigned:0;\n";
        let p = format_field(f, "prev_pid").unwrap();
        assert_eq!(
            (p.offset, p.size, p.signed, p.kind),
            (24, 4, true, FieldKind::Value)
        );
        assert_eq!(
            format_field(f, "prev_comm").unwrap().kind,
            FieldKind::StaticString
        );
        assert_eq!(format_field(f, "name").unwrap().kind, FieldKind::DynString);
        assert!(format_field(f, "common_type").is_none());
        assert!(format_field(f, "nope").is_none());
    }
}
