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

/// perf probe's lazy match: a glob (`*`, `?`, `[...]`) over the whole
/// line, blanks ignored in both.
pub fn lazy_match(line: &str, pat: &str) -> bool {
    let l: Vec<char> = line.chars().filter(|c| !c.is_whitespace()).collect();
    let p: Vec<char> = pat.chars().filter(|c| !c.is_whitespace()).collect();
    glob(&l, &p)
}

fn glob(s: &[char], p: &[char]) -> bool {
    // Iterative with one backtrack point for `*`.
    let (mut si, mut pi) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while si < s.len() {
        match p.get(pi) {
            Some('*') => {
                star = Some((pi, si));
                pi += 1;
                continue;
            }
            Some('?') => {
                si += 1;
                pi += 1;
                continue;
            }
            Some('[') => {
                if let Some((ok, len)) = class(&p[pi..], s[si]) {
                    if ok {
                        si += 1;
                        pi += len;
                        continue;
                    }
                } else if s[si] == '[' {
                    si += 1;
                    pi += 1;
                    continue;
                }
            }
            Some('\\') if p.get(pi + 1) == Some(&s[si]) => {
                si += 1;
                pi += 2;
                continue;
            }
            Some(&c) if c == s[si] => {
                si += 1;
                pi += 1;
                continue;
            }
            _ => {}
        }
        match star {
            Some((sp, ss)) => {
                pi = sp + 1;
                si = ss + 1;
                star = Some((sp, ss + 1));
            }
            None => return false,
        }
    }
    p[pi..].iter().all(|&c| c == '*')
}

/// A `[...]` class at the start of `p`: whether `c` is in it, and its
/// length; None when it does not close.
fn class(p: &[char], c: char) -> Option<(bool, usize)> {
    let end = p.iter().skip(1).position(|&x| x == ']')? + 1;
    let body = &p[1..end];
    let mut ok = false;
    let mut i = 0;
    while i < body.len() {
        if i + 2 < body.len() && body[i + 1] == '-' {
            ok |= body[i] <= c && c <= body[i + 2];
            i += 3;
        } else {
            ok |= body[i] == c;
            i += 1;
        }
    }
    Some((ok, end + 1))
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
    }

    #[test]
    fn debian_root() {
        let r = roots(None, Some("debian/build"), Some("7.2.13+deb14-amd64"));
        assert_eq!(r, vec![PathBuf::from("/usr/src/linux-source-7.2")]);
    }
}
