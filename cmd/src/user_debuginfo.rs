// SPDX-License-Identifier: GPL-2.0
//! A user binary's debug info, found where users have it, as perf probe
//! and gdb look: `--debuginfo FILE`, the binary's own `.debug_info`, its
//! `.gnu_debuglink` (beside it, in `.debug/`, under `/usr/lib/debug/`),
//! then its build id (`/usr/lib/debug/.build-id/xx/rest.debug`, what
//! Debian's -dbgsym packages install). Missing debug info names the
//! package to install.

use std::path::{Path, PathBuf};

use object::{Object, ObjectSection, ObjectSegment};

use crate::debugfile::{hex, DebugFile, Mapped};

/// The binary and the file holding its DWARF (the same file or another).
pub struct UserDebug {
    /// The binary, as the uprobe lines name it.
    pub bin_path: PathBuf,
    /// The binary's bytes, for its program headers and `.eh_frame`.
    pub bin: Mapped,
    /// The debug file.
    pub debug: DebugFile,
}

/// The file name `.gnu_debuglink` names (its CRC is not checked: the
/// build ids are, when both files have one).
pub fn debuglink(obj: &object::File<'_>) -> Option<String> {
    let data = obj.section_by_name(".gnu_debuglink")?.data().ok()?;
    let end = data.iter().position(|&b| b == 0)?;
    let name = std::str::from_utf8(data.get(..end)?).ok()?;
    (!name.is_empty() && !name.contains('/')).then(|| name.to_string())
}

/// Where the debug file of `bin` may be: by its debug link, then by its
/// build id, in gdb's order.
pub fn candidates(bin: &Path, link: Option<&str>, build_id: Option<&str>) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let dir = bin.parent().unwrap_or(Path::new("/"));
    if let Some(l) = link {
        out.push(dir.join(l));
        out.push(dir.join(".debug").join(l));
        let rel = dir.strip_prefix("/").unwrap_or(dir);
        out.push(Path::new("/usr/lib/debug").join(rel).join(l));
    }
    if let Some(id) = build_id.filter(|i| i.len() > 2) {
        out.push(PathBuf::from(format!(
            "/usr/lib/debug/.build-id/{}/{}.debug",
            &id[..2],
            &id[2..]
        )));
    }
    out
}

/// The Debian package that installed `bin` (`dpkg -S`), when there is one.
fn package_of(bin: &Path) -> Option<String> {
    let out = std::process::Command::new("dpkg")
        .arg("-S")
        .arg(bin)
        .stderr(std::process::Stdio::null())
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let pkg = text.lines().next()?.split(':').next()?.trim().to_string();
    (!pkg.is_empty() && !pkg.contains(' ')).then_some(pkg)
}

/// Why there is no debug info for `bin`, with what to install.
fn missing(bin: &Path, tried: &[PathBuf]) -> String {
    let mut msg = format!("{}: no debug info (.debug_info)", bin.display());
    if !tried.is_empty() {
        let t: Vec<String> = tried.iter().map(|p| p.display().to_string()).collect();
        msg += &format!(" in it nor in {}", t.join(", "));
    }
    match package_of(bin) {
        Some(pkg) => {
            msg += &format!(": install it with 'apt install {pkg}-dbgsym'");
        }
        None => msg += ": install the package's -dbgsym package, or rebuild it with -g",
    }
    msg + ", or name the debug file with --debuginfo FILE"
}

impl UserDebug {
    /// Opens `bin` and finds its debug file (`given`: `--debuginfo`).
    pub fn locate(bin: &Path, given: Option<&Path>) -> Result<UserDebug, String> {
        let bin_path = std::fs::canonicalize(bin).map_err(|e| format!("{}: {e}", bin.display()))?;
        let map = Mapped::open(&bin_path)?;
        let (link, id, own) = {
            let obj = object::File::parse(map.bytes())
                .map_err(|e| format!("{}: not an ELF file we can read: {e}", bin_path.display()))?;
            let own = obj
                .section_by_name(".debug_info")
                .is_some_and(|s| s.size() > 0 && s.data().is_ok_and(|d| !d.is_empty()));
            (debuglink(&obj), obj.build_id().ok().flatten().map(hex), own)
        };
        let debug = if let Some(g) = given {
            DebugFile::open(g)?
        } else if own {
            DebugFile::open(&bin_path)?
        } else {
            let tried = candidates(&bin_path, link.as_deref(), id.as_deref());
            let mut found = None;
            for c in &tried {
                if !c.is_file() {
                    continue;
                }
                // A debug file of another build is no answer.
                let Ok(f) = DebugFile::open(c) else { continue };
                if matches!((&id, &f.build_id), (Some(w), Some(h)) if w != h) {
                    continue;
                }
                found = Some(f);
                break;
            }
            found.ok_or_else(|| missing(&bin_path, &tried))?
        };
        Ok(UserDebug {
            bin_path,
            bin: map,
            debug,
        })
    }

    /// The binary's ELF file.
    pub fn object(&self) -> Result<object::File<'_>, String> {
        object::File::parse(self.bin.bytes())
            .map_err(|e| format!("{}: {e}", self.bin_path.display()))
    }

    /// The file offset of address `addr` (a loaded segment's), as the
    /// kernel's uprobe lines take it.
    pub fn file_offset(&self, addr: u64) -> Option<u64> {
        let obj = self.object().ok()?;
        file_offset(&obj, addr)
    }

    /// The binary's `.eh_frame` and its section addresses.
    pub fn eh_frame<'a>(
        &'a self,
        obj: &object::File<'a>,
    ) -> Option<(gimli::EhFrame<crate::dwarf::R<'a>>, gimli::BaseAddresses)> {
        let eh = obj.section_by_name(".eh_frame")?;
        let data = eh.data().ok()?;
        let mut bases = gimli::BaseAddresses::default().set_eh_frame(eh.address());
        if let Some(t) = obj.section_by_name(".text") {
            bases = bases.set_text(t.address());
        }
        if let Some(g) = obj.section_by_name(".got") {
            bases = bases.set_got(g.address());
        }
        let mut frame = gimli::EhFrame::new(data, gimli::LittleEndian);
        frame.set_address_size(8);
        Some((frame, bases))
    }
}

/// The file offset of `addr` in `obj`'s loaded segments.
pub fn file_offset(obj: &object::File<'_>, addr: u64) -> Option<u64> {
    obj.segments().find_map(|s| {
        let (off, fsize) = s.file_range();
        let start = s.address();
        (start <= addr && addr < start.checked_add(fsize)?).then(|| addr - start + off)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn where_debug_files_are() {
        let c = candidates(
            Path::new("/usr/bin/python3.13"),
            Some("python3.13.debug"),
            Some("ab12cd"),
        );
        let c: Vec<String> = c.iter().map(|p| p.display().to_string()).collect();
        assert_eq!(
            c,
            [
                "/usr/bin/python3.13.debug",
                "/usr/bin/.debug/python3.13.debug",
                "/usr/lib/debug/usr/bin/python3.13.debug",
                "/usr/lib/debug/.build-id/ab/12cd.debug",
            ]
        );
        assert_eq!(candidates(Path::new("/x"), None, Some("a")).len(), 0);
    }
}
