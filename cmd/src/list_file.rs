// SPDX-License-Identifier: GPL-2.0
//! `dynprobe list --line SRC[:ALN[+N|-ALN2]]`: a source file's lines with
//! the probe-able ones numbered by their own line numbers, as `perf
//! probe -L` prints a range of a file: the lines of the first unit with
//! that file (and lines in the range) that an address maps back to;
//! and the printing of a range, which `--line FUNC` shares.

use std::collections::BTreeSet;

use crate::dwarf_lines::{tail_eq, UnitView};
use crate::srcfile;
use crate::srcfile_points::units_with_file;
use crate::srcprobe::{release_of, Ctx};

/// Whether a `--line` place names a file: its name (before `:`) has a
/// `/` or a `.`, which no function name has.
pub fn is_file_range(place: &str) -> bool {
    let head = place.split_once(':').map_or(place, |(h, _)| h);
    !head.contains('@') && head.contains(['/', '.'])
}

/// `SRC[:ALN[+N|-ALN2]]`: the file, the first and last line (`None`: to
/// the end).
pub fn parse_file_range(s: &str) -> Result<(String, u64, Option<u64>), String> {
    let bad = || format!("`{s}`: not SRC[:ALN[+N|-ALN2]]");
    let (file, range) = match s.split_once(':') {
        Some((f, r)) => (f, Some(r)),
        None => (s, None),
    };
    if file.is_empty() {
        return Err(bad());
    }
    let num = |t: &str| t.parse::<u64>().map_err(|_| bad());
    let (start, end) = match range {
        None => (0, None),
        Some(r) => {
            if let Some((a, n)) = r.split_once('+') {
                let a = num(a)?;
                (a, Some((a + num(n)?).saturating_sub(1)))
            } else if let Some((a, b)) = r.split_once('-') {
                (num(a)?, Some(num(b)?))
            } else {
                (num(r)?, None)
            }
        }
    };
    if end.is_some_and(|e| start > e) {
        return Err(format!("`{s}`: start line must be smaller than end line"));
    }
    Ok((file.to_string(), start, end))
}

/// The listing of a file's range.
pub fn lines(ctx: &mut Ctx<'_>, place: &str) -> Result<String, String> {
    let (want, start, end) = parse_file_range(place)?;
    let last = end.unwrap_or(u64::MAX);
    for (cu, fname) in units_with_file(&ctx.dw, &want)? {
        let unit = ctx.dw.unit(cu)?;
        let view = UnitView::new(&ctx.dw, &unit)?;
        let mut set = BTreeSet::new();
        let mut path = None;
        for l in view.unit_lines(&ctx.dw)? {
            if !tail_eq(&l.file, &fname) || l.line < start || l.line > last {
                continue;
            }
            // Only lines an address maps back to (perf's check).
            if let Some((f2, l2)) = view.line_info(&ctx.dw, l.addr) {
                if l2 != l.line || f2 != l.file {
                    continue;
                }
            }
            path.get_or_insert_with(|| l.file.clone());
            set.insert(l.line);
        }
        // The first unit with lines there is the answer, as perf's.
        if let Some(path) = path {
            let head = |shown: &str| format!("<{shown}:{start}>\n");
            return Ok(show(ctx, &unit, &path, head, &set, start, end, 0));
        }
    }
    Err(format!("Specified source line({place}) is not found."))
}

/// perf's __show_line_range: the header (`head` of the source's path),
/// then from line `start` the source lines, those in `set` numbered
/// less `base`, to `end` (`None`: two past the last in `set`); the
/// numbers alone without the source.
#[allow(clippy::too_many_arguments)]
pub fn show<'a>(
    ctx: &Ctx<'a>,
    unit: &crate::dwarf::Unit<'a>,
    fname: &str,
    head: impl Fn(&str) -> String,
    set: &BTreeSet<u64>,
    start: u64,
    end: Option<u64>,
    base: u64,
) -> String {
    let (comp, _) = ctx.dw.unit_dirs(unit);
    let roots = srcfile::roots(
        ctx.opts.source.as_deref(),
        comp.as_deref(),
        release_of(&ctx.file.path).as_deref(),
    );
    let src = srcfile::find(&roots, fname);
    let text = src.as_deref().and_then(srcfile::read_lines);
    let shown = src
        .as_ref()
        .map(|p| p.display().to_string())
        .unwrap_or_else(|| fname.to_string());
    let mut out = head(&shown);
    let rel = |l: u64| l.saturating_sub(base);
    let Some(text) = text else {
        // No source: the numbers alone.
        for l in set {
            out += &format!("{:7}\n", rel(*l));
        }
        return out;
    };
    let get = |l: u64| text.get((l as usize).wrapping_sub(1));
    let mut l = start.max(1);
    for &n in set {
        while l < n {
            out += &format!("         {}\n", get(l).map(String::as_str).unwrap_or(""));
            l += 1;
        }
        out += &format!(
            "{:7}  {}\n",
            rel(l),
            get(l).map(String::as_str).unwrap_or("")
        );
        l += 1;
    }
    let end = end.unwrap_or(l + 2);
    while l <= end {
        let Some(t) = get(l) else { break };
        out += &format!("         {t}\n");
        l += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_ranges() {
        assert!(is_file_range("fs/read_write.c:560"));
        assert!(is_file_range("read_write.c"));
        assert!(!is_file_range("vfs_read:3"));
        assert!(!is_file_range("vfs_read@fs/read_write.c:3"));
        assert_eq!(
            parse_file_range("fs/read_write.c:560+4").unwrap(),
            ("fs/read_write.c".into(), 560, Some(563))
        );
        assert_eq!(
            parse_file_range("a.c:5-9").unwrap(),
            ("a.c".into(), 5, Some(9))
        );
        assert_eq!(parse_file_range("a.c:7").unwrap(), ("a.c".into(), 7, None));
        assert_eq!(parse_file_range("a.c").unwrap(), ("a.c".into(), 0, None));
        assert!(parse_file_range("a.c:9-3").is_err());
        assert!(parse_file_range("a.c:x").is_err());
        assert!(parse_file_range(":3").is_err());
    }
}
