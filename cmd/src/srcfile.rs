// SPDX-License-Identifier: GPL-2.0
//! The source text of a file the debug info names, as perf probe's
//! find_source_path finds it: under `--source DIR`, the unit's compile
//! directory, or Debian's linux-source tree (/usr/src/linux-source-X.Y),
//! dropping leading directories of the name until a file is there; and
//! perf probe's lazy pattern (`;PTN`) on its lines.

use std::path::{Path, PathBuf};

/// The roots to look under, in order.
pub fn roots(source: Option<&Path>, comp_dir: Option<&str>, release: Option<&str>) -> Vec<PathBuf> {
    let mut out = Vec::new();
    if let Some(s) = source {
        out.push(s.to_path_buf());
    }
    if let Some(c) = comp_dir.filter(|c| c.starts_with('/')) {
        out.push(PathBuf::from(c));
    }
    if let Some(r) = release {
        // 7.2.13+deb14-amd64 -> /usr/src/linux-source-7.2
        let mut parts = r.split(['.', '-', '+']);
        if let (Some(a), Some(b)) = (parts.next(), parts.next()) {
            out.push(PathBuf::from(format!("/usr/src/linux-source-{a}.{b}")));
        }
    }
    out
}

/// The file `name` under one of `roots`, its leading directories
/// dropped one by one until it is found; an absolute name that is there
/// is itself (a user program's unit names its file so, and its compile
/// directory is no prefix of it).
pub fn find(roots: &[PathBuf], name: &str) -> Option<PathBuf> {
    if name.starts_with('/') && Path::new(name).is_file() {
        return Some(PathBuf::from(name));
    }
    for root in roots {
        let mut rest = name.trim_start_matches('/');
        loop {
            let p = root.join(rest);
            if p.is_file() {
                return Some(p);
            }
            match rest.split_once('/') {
                Some((_, r)) => rest = r,
                None => break,
            }
        }
    }
    None
}

/// The file's lines (lossy UTF-8), 1-based by index + 1.
pub fn read_lines(path: &Path) -> Option<Vec<String>> {
    let bytes = std::fs::read(path).ok()?;
    Some(
        String::from_utf8_lossy(&bytes)
            .lines()
            .map(str::to_string)
            .collect(),
    )
}

/// perf probe's lazy match: its glob (strfilter.rs) over the whole
/// line, blanks ignored in both.
pub fn lazy_match(line: &str, pat: &str) -> bool {
    let l: String = line.chars().filter(|c| !c.is_whitespace()).collect();
    let p: String = pat.chars().filter(|c| !c.is_whitespace()).collect();
    crate::strfilter::glob(&p, &l)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lazy() {
        assert!(lazy_match("\tcpu = smp_processor_id();", "cpu=*"));
        assert!(lazy_match(
            "\tret = rw_verify_area(READ, file, pos, count);",
            "ret=rw_verify*"
        ));
        assert!(!lazy_match("\tif (ret)", "ret=*"));
        assert!(lazy_match("abc", "a?c"));
        assert!(lazy_match("a1", "a[0-9]"));
        assert!(!lazy_match("ab", "a[0-9]"));
        assert!(lazy_match("x", "*"));
        assert!(!lazy_match("x", ""));
        // perf's __match_charclass: a class that does not close matches
        // nothing.
        assert!(!lazy_match("a[", "a["));
    }

    #[test]
    fn debian_root() {
        let r = roots(None, Some("debian/build"), Some("7.2.13+deb14-amd64"));
        assert_eq!(r, vec![PathBuf::from("/usr/src/linux-source-7.2")]);
    }
}
