// SPDX-License-Identifier: GPL-2.0
//! Finding and mapping the kernel's debug file (the vmlinux with DWARF):
//! `--debuginfo FILE`, then by the running kernel's build id
//! (`/sys/kernel/notes`, `/usr/lib/debug/.build-id/`), then Debian's
//! paths for `uname -r`; its build id and its function symbols.

use std::fs::File;
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};

use object::{Object, ObjectSection, ObjectSymbol, SymbolKind};

/// A file mapped read-only and private: the 400 MB debug vmlinux is read
/// where it lies, only the pages a query touches. Or bytes already in
/// memory (a fuzz target's input), read the same way.
pub struct Mapped(Backing);

enum Backing {
    Map { ptr: *mut libc::c_void, len: usize },
    Memory(Vec<u8>),
}

impl Mapped {
    /// Maps the whole of `path`; an empty file is an error.
    pub fn open(path: &Path) -> Result<Mapped, String> {
        let f = File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let len = f
            .metadata()
            .map_err(|e| format!("{}: {e}", path.display()))?
            .len();
        let len = usize::try_from(len).map_err(|_| format!("{}: too large", path.display()))?;
        if len == 0 {
            return Err(format!("{}: empty file", path.display()));
        }
        // SAFETY: a new private read-only mapping of an open file; the
        // kernel picks the address, and the result is checked.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ,
                libc::MAP_PRIVATE,
                f.as_raw_fd(),
                0,
            )
        };
        if ptr == libc::MAP_FAILED {
            return Err(format!(
                "{}: mmap: {}",
                path.display(),
                std::io::Error::last_os_error()
            ));
        }
        Ok(Mapped(Backing::Map { ptr, len }))
    }

    /// The file's bytes.
    pub fn bytes(&self) -> &[u8] {
        match &self.0 {
            // SAFETY: `ptr` maps `len` readable bytes until `drop`, and
            // the slice borrows `self`. A debug file is not written while
            // a query reads it (a package upgrade replaces it by rename).
            Backing::Map { ptr, len } => unsafe {
                std::slice::from_raw_parts(*ptr as *const u8, *len)
            },
            Backing::Memory(v) => v,
        }
    }
}

impl Drop for Mapped {
    fn drop(&mut self) {
        if let Backing::Map { ptr, len } = self.0 {
            // SAFETY: unmaps what `open` mapped, once; no slice outlives
            // self.
            unsafe {
                libc::munmap(ptr, len);
            }
        }
    }
}

/// The GNU build id in a block of ELF notes (`/sys/kernel/notes`, a
/// `.note` section), as lower-case hex.
pub fn build_id_in_notes(notes: &[u8]) -> Option<String> {
    let mut at = 0usize;
    let word = |i: usize| -> Option<usize> {
        let b = notes.get(i..i.checked_add(4)?)?;
        Some(u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize)
    };
    let align = |n: usize| n.checked_add(3).map(|n| n & !3);
    while at.checked_add(12)? <= notes.len() {
        let (namesz, descsz, kind) = (word(at)?, word(at + 4)?, word(at + 8)?);
        let name_at = at + 12;
        let desc_at = name_at.checked_add(align(namesz)?)?;
        let end = desc_at.checked_add(align(descsz)?)?;
        let name = notes.get(name_at..name_at.checked_add(namesz)?)?;
        if kind == 3 && name == b"GNU\0" {
            let desc = notes.get(desc_at..desc_at.checked_add(descsz)?)?;
            return Some(hex(desc));
        }
        at = end;
    }
    None
}

/// Bytes as lower-case hex.
pub fn hex(b: &[u8]) -> String {
    use std::fmt::Write;
    b.iter().fold(String::new(), |mut s, x| {
        let _ = write!(s, "{x:02x}");
        s
    })
}

/// The running kernel's build id, from `/sys/kernel/notes`.
pub fn running_build_id() -> Option<String> {
    build_id_in_notes(&std::fs::read("/sys/kernel/notes").ok()?)
}

/// The running kernel's release (`uname -r`).
pub fn running_release() -> Option<String> {
    let s = std::fs::read_to_string("/proc/sys/kernel/osrelease").ok()?;
    Some(s.trim().to_string())
}

/// Where a user's debug vmlinux for RELEASE is: the build-id link, then
/// Debian's paths (linux-image-RELEASE-dbg), then where perf looks.
pub fn candidates(release: &str, build_id: Option<&str>) -> Vec<PathBuf> {
    let mut out = Vec::new();
    if let Some(id) = build_id.filter(|i| i.len() > 2) {
        out.push(PathBuf::from(format!(
            "/usr/lib/debug/.build-id/{}/{}.debug",
            &id[..2],
            &id[2..]
        )));
    }
    for p in [
        format!("/usr/lib/debug/boot/vmlinux-{release}"),
        format!("/usr/lib/debug/lib/modules/{release}/vmlinux"),
        format!("/usr/lib/debug/vmlinux-{release}"),
        format!("/boot/vmlinux-{release}"),
        format!("/lib/modules/{release}/build/vmlinux"),
    ] {
        out.push(PathBuf::from(p));
    }
    out
}

/// One function symbol: address, size, name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FuncSym {
    /// Its address.
    pub addr: u64,
    /// Its size in bytes (0: unknown).
    pub size: u64,
    /// Its name.
    pub name: String,
}

/// The debug file, mapped, with what the queries need of its ELF side.
pub struct DebugFile {
    /// Where it is.
    pub path: PathBuf,
    /// Its GNU build id (hex), when it has one.
    pub build_id: Option<String>,
    /// The mapping.
    pub map: Mapped,
    /// A relocatable file's (a module's) debug sections, relocated.
    pub relocated: Option<crate::dwarf_reloc::Relocated>,
}

impl DebugFile {
    /// Opens FILE as given, or the running kernel's debug file.
    pub fn locate(given: Option<&Path>) -> Result<DebugFile, String> {
        if let Some(p) = given {
            return DebugFile::open(p);
        }
        let release = running_release().unwrap_or_default();
        let want = running_build_id();
        let mut mismatched = Vec::new();
        for c in candidates(&release, want.as_deref()) {
            if !c.exists() {
                continue;
            }
            let f = DebugFile::open(&c)?;
            match (&want, &f.build_id) {
                (Some(w), Some(h)) if w != h => mismatched.push(c.display().to_string()),
                _ => return Ok(f),
            }
        }
        let mut msg = format!(
            "no debug info for the running kernel {release}: install it with \
             'apt install linux-image-{release}-dbg', or name a vmlinux with --debuginfo FILE"
        );
        if !mismatched.is_empty() {
            msg += &format!(
                " ({} has another build id than /sys/kernel/notes)",
                mismatched.join(", ")
            );
        }
        Err(msg)
    }

    /// Opens and checks one file: an ELF file with `.debug_info`.
    pub fn open(path: &Path) -> Result<DebugFile, String> {
        DebugFile::checked(path, Mapped::open(path)?)
    }

    /// A debug file's bytes already in memory, checked as `open` checks
    /// a file; `path` names it in errors.
    pub fn from_bytes(path: &Path, bytes: Vec<u8>) -> Result<DebugFile, String> {
        DebugFile::checked(path, Mapped(Backing::Memory(bytes)))
    }

    fn checked(path: &Path, map: Mapped) -> Result<DebugFile, String> {
        let (build_id, relocated) = {
            let obj = parse(map.bytes(), path)?;
            if obj.section_by_name(".debug_info").is_none() {
                return Err(format!(
                    "{}: no DWARF (.debug_info): a stripped vmlinux? Debian's with debug info is in linux-image-RELEASE-dbg",
                    path.display()
                ));
            }
            let relocated = crate::dwarf_reloc::Relocated::of(&obj)
                .map_err(|e| format!("{}: {e}", path.display()))?;
            (obj.build_id().ok().flatten().map(hex), relocated)
        };
        Ok(DebugFile {
            path: path.to_path_buf(),
            build_id,
            map,
            relocated,
        })
    }

    /// The ELF file.
    pub fn object(&self) -> Result<object::File<'_>, String> {
        parse(self.map.bytes(), &self.path)
    }

    /// The function symbols (`.symtab`), sorted by address.
    pub fn functions(&self) -> Result<Vec<FuncSym>, String> {
        let obj = self.object()?;
        let mut out: Vec<FuncSym> = obj
            .symbols()
            .filter(|s| s.kind() == SymbolKind::Text && self.address(s) != 0)
            .filter_map(|s| {
                Some(FuncSym {
                    addr: self.address(&s),
                    size: s.size(),
                    name: s.name().ok()?.to_string(),
                })
            })
            .filter(|s| !s.name.is_empty())
            .collect();
        out.sort_by(|a, b| a.addr.cmp(&b.addr).then(b.size.cmp(&a.size)));
        Ok(out)
    }

    /// The function symbol holding `addr` (one pass over `.symtab`).
    pub fn symbol_at(&self, addr: u64) -> Option<FuncSym> {
        let obj = self.object().ok()?;
        let mut best: Option<FuncSym> = None;
        for s in obj.symbols() {
            let at = self.address(&s);
            if s.kind() != SymbolKind::Text || at == 0 || at > addr {
                continue;
            }
            if addr >= at.saturating_add(s.size().max(1)) {
                continue;
            }
            let better = match &best {
                None => true,
                Some(b) => at > b.addr || (at == b.addr && s.size() > b.size),
            };
            if better {
                if let Ok(name) = s.name() {
                    if !name.is_empty() {
                        best = Some(FuncSym {
                            addr: at,
                            size: s.size(),
                            name: name.to_string(),
                        });
                    }
                }
            }
        }
        best
    }

    /// A symbol's address: in a relocatable file, with its section's
    /// placement (see dwarf_reloc.rs).
    fn address(&self, s: &object::Symbol<'_, '_>) -> u64 {
        match (&self.relocated, s.section_index()) {
            (Some(r), Some(sec)) => s.address().wrapping_add(r.base(sec)),
            _ => s.address(),
        }
    }

    /// A section's bytes (empty when absent or unreadable); a
    /// relocatable file's debug sections relocated.
    pub fn section<'a>(&'a self, obj: &object::File<'a>, name: &str) -> &'a [u8] {
        if let Some(data) = self.relocated.as_ref().and_then(|r| r.section(name)) {
            return data;
        }
        obj.section_by_name(name)
            .and_then(|s| s.data().ok())
            .unwrap_or(&[])
    }
}

fn parse<'a>(bytes: &'a [u8], path: &Path) -> Result<object::File<'a>, String> {
    object::File::parse(bytes)
        .map_err(|e| format!("{}: not an ELF file we can read: {e}", path.display()))
}

/// The function symbol holding `addr` (the one that starts last at or
/// before it, within its size), as `kprobe_events` names a place.
pub fn symbol_at(syms: &[FuncSym], addr: u64) -> Option<&FuncSym> {
    let i = syms.partition_point(|s| s.addr <= addr);
    let mut j = i;
    while j > 0 {
        j -= 1;
        let s = syms.get(j)?;
        if addr < s.addr.saturating_add(s.size.max(1)) {
            return Some(s);
        }
        if i - j > 8 {
            break;
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notes() {
        let mut n = Vec::new();
        // An unrelated note first, then the build id.
        n.extend_from_slice(&5u32.to_le_bytes());
        n.extend_from_slice(&4u32.to_le_bytes());
        n.extend_from_slice(&1u32.to_le_bytes());
        n.extend_from_slice(b"Linux\0\0\0");
        n.extend_from_slice(&[1, 2, 3, 4]);
        n.extend_from_slice(&4u32.to_le_bytes());
        n.extend_from_slice(&3u32.to_le_bytes());
        n.extend_from_slice(&3u32.to_le_bytes());
        n.extend_from_slice(b"GNU\0");
        n.extend_from_slice(&[0xf8, 0xda, 0x1e, 0]);
        assert_eq!(build_id_in_notes(&n).as_deref(), Some("f8da1e"));
        // Truncated anywhere: no answer, no panic.
        for l in 0..n.len() {
            let _ = build_id_in_notes(&n[..l]);
        }
        assert_eq!(build_id_in_notes(&[0xff; 40]), None);
    }

    #[test]
    fn symbols_by_address() {
        let s = |addr, size, name: &str| FuncSym {
            addr,
            size,
            name: name.into(),
        };
        let syms = vec![s(0x100, 0x20, "a"), s(0x120, 0x10, "b"), s(0x200, 0, "c")];
        assert_eq!(symbol_at(&syms, 0x100).unwrap().name, "a");
        assert_eq!(symbol_at(&syms, 0x12f).unwrap().name, "b");
        assert!(symbol_at(&syms, 0x130).is_none());
        assert!(symbol_at(&syms, 0x50).is_none());
        assert_eq!(symbol_at(&syms, 0x200).unwrap().name, "c");
    }

    #[test]
    fn debian_paths() {
        let c = candidates("7.2.13+deb14-amd64", Some("f8da1e46"));
        assert_eq!(
            c[0],
            PathBuf::from("/usr/lib/debug/.build-id/f8/da1e46.debug")
        );
        assert_eq!(
            c[1],
            PathBuf::from("/usr/lib/debug/boot/vmlinux-7.2.13+deb14-amd64")
        );
    }
}
