// SPDX-License-Identifier: GPL-2.0
//! Where the command keeps what it learns between runs:
//! `$XDG_CACHE_HOME/dynprobe/` (`~/.cache/dynprobe/`), one directory per
//! kind (`debuginfo/`, `btf/`), each file named and keyed by what it was
//! made from. `rm -r ~/.cache/dynprobe` clears it all.

use std::path::{Path, PathBuf};

/// The directory `kind` of the cache (not made here).
pub fn dir(kind: &str) -> Option<PathBuf> {
    let base = std::env::var_os("XDG_CACHE_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))?;
    Some(base.join("dynprobe").join(kind))
}

/// Writes `text` to `path` whole or not at all (a temporary file renamed
/// over it), making its directory. A cache that cannot be written only
/// costs time, so failures are not reported.
pub fn store(path: &Path, text: &str) {
    store_parts(path, &[text]);
}

/// `store` of the text made of `parts` in turn.
pub fn store_parts(path: &Path, parts: &[impl AsRef<str>]) {
    use std::io::Write;
    if let Some(dir) = path.parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(format!(".{}", std::process::id()));
    let written = std::fs::File::create(&tmp).and_then(|mut f| {
        parts
            .iter()
            .try_for_each(|p| f.write_all(p.as_ref().as_bytes()))
    });
    if written.is_ok() {
        let _ = std::fs::rename(&tmp, path);
    }
}
