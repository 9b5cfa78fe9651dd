// SPDX-License-Identifier: GPL-2.0
//! The prototypes `dynprobe list` prints, from BTF; the kernel's own
//! functions' kept between runs: reading and indexing the whole of
//! `/sys/kernel/btf/vmlinux` (5 MB, 150,000 types sorted by name) costs
//! more than the rest of a listing, and it is the same on every run of
//! one kernel. The index is kept in `$XDG_CACHE_HOME/dynprobe/btf/`
//! beside the debug info's, one file per kernel: `BUILDID.protos` named
//! by the running kernel's build id (`/sys/kernel/notes`), or
//! `vmlinux.protos` without one. Its first line is its key: the build id
//! and the BTF's size, or without a build id the size and modification
//! time (then a boot makes it again); a file whose key is not the
//! running BTF's is made again, as is one that does not parse.
//! Modules' functions are not kept: modules come and go.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use dynprobe_lang::btf::Btf;

use crate::btfnames::Names;
use crate::cache;
use crate::check::OwnedBtf;

const MAGIC: &str = "dynprobe-btf-protos 1";

/// A base BTF blob and what identifies it.
#[derive(Clone, Debug)]
pub struct BtfSource {
    /// The blob (`/sys/kernel/btf/vmlinux`).
    pub path: PathBuf,
    /// The build id of the kernel it describes, when known.
    pub build_id: Option<String>,
}

impl BtfSource {
    /// The running kernel's.
    pub fn running() -> BtfSource {
        BtfSource {
            path: PathBuf::from("/sys/kernel/btf/vmlinux"),
            build_id: crate::debugfile::running_build_id(),
        }
    }

    /// The key its index is kept under (None: the blob is not there).
    pub fn key(&self) -> Option<String> {
        let meta = std::fs::metadata(&self.path).ok()?;
        Some(match &self.build_id {
            Some(id) => format!("{MAGIC} {id} {}", meta.len()),
            None => {
                let mtime = meta
                    .modified()
                    .ok()
                    .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                    .map_or(0, |d| d.as_nanos());
                format!("{MAGIC} - {} {mtime}", meta.len())
            }
        })
    }

    /// Where its index is kept.
    pub fn cache_path(&self) -> Option<PathBuf> {
        let name = match &self.build_id {
            Some(id) => format!("{id}.protos"),
            None => "vmlinux.protos".to_string(),
        };
        Some(cache::dir("btf")?.join(name))
    }
}

/// A function's prototypes as `list` prints them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Protos {
    /// `vfs_read(file, buf, count, pos)`.
    pub plain: String,
    /// `ssize_t vfs_read(struct file *file, ...)` (`list -v`).
    pub typed: String,
}

/// A prototype: `vfs_read(file, buf, count, pos)`, or with types
/// `ssize_t vfs_read(struct file *file, ...)`.
pub fn prototype(btf: &Btf<'_>, names: Option<&Names>, func: &str) -> Option<String> {
    let f = btf.func(func)?;
    let mut params = Vec::new();
    for i in 0..f.nr_params {
        let (n, ty) = btf.func_param(func, i)?;
        params.push(match names {
            Some(_) if n.is_empty() && ty == 0 => "...".to_string(),
            Some(names) => {
                let t = names.type_name(ty);
                if t.ends_with('*') {
                    format!("{t}{n}")
                } else {
                    format!("{t} {n}")
                }
            }
            None if n.is_empty() && ty == 0 => "...".to_string(),
            None => n.to_string(),
        });
    }
    Some(match names {
        Some(names) => format!(
            "{} {func}({})",
            names.type_name(f.ret_type),
            params.join(", ")
        ),
        None => format!("{func}({})", params.join(", ")),
    })
}

/// Every function's prototypes, by name, from an indexed blob: what
/// `prototype` says of each, the blob's first function of a name
/// as it answers.
pub fn build(btf: &OwnedBtf) -> HashMap<String, Protos> {
    let mut out = HashMap::new();
    let Some(b) = btf.btf() else {
        return out;
    };
    let mut names = Names::default();
    names.add(btf.blob());
    for name in names.func_names() {
        if name.is_empty() || name.contains(['\t', '\n']) || out.contains_key(name) {
            continue;
        }
        let (Some(plain), Some(typed)) =
            (prototype(&b, None, name), prototype(&b, Some(&names), name))
        else {
            continue;
        };
        out.insert(name.to_string(), Protos { plain, typed });
    }
    out
}

/// The index as its file has it: the key, then `NAME\tPLAIN\tTYPED`
/// a line, sorted by name.
pub fn to_text(protos: &HashMap<String, Protos>, key: &str) -> String {
    let mut names: Vec<_> = protos.keys().collect();
    names.sort();
    let mut out = format!("{key}\n");
    for n in names {
        let p = &protos[n];
        out += &format!("{n}\t{}\t{}\n", p.plain, p.typed);
    }
    out
}

/// The functions of an index file that `takes` takes, if the file is one
/// for `key`.
pub fn from_text(
    text: &str,
    key: &str,
    takes: impl Fn(&str) -> bool,
) -> Option<HashMap<String, Protos>> {
    let mut lines = text.split_terminator('\n');
    if lines.next()? != key {
        return None;
    }
    let mut out = HashMap::new();
    for l in lines {
        let (name, rest) = l.split_once('\t')?;
        if !takes(name) {
            continue;
        }
        let (plain, typed) = rest.split_once('\t')?;
        out.insert(
            name.to_string(),
            Protos {
                plain: plain.to_string(),
                typed: typed.to_string(),
            },
        );
    }
    Some(out)
}

/// The prototypes of the functions `takes` takes, from the kept index,
/// else from the blob (then kept); None when there is no blob.
pub fn load(src: &BtfSource, takes: impl Fn(&str) -> bool) -> Option<HashMap<String, Protos>> {
    let key = src.key()?;
    let path = src.cache_path();
    if let Some(text) = path
        .as_deref()
        .and_then(|p| std::fs::read_to_string(p).ok())
    {
        if let Some(found) = from_text(&text, &key, &takes) {
            return Some(found);
        }
    }
    let all = build(&OwnedBtf::load(&src.path)?);
    if let Some(p) = path {
        store(&p, &all, &key);
    }
    Some(all.into_iter().filter(|(n, _)| takes(n)).collect())
}

fn store(path: &Path, all: &HashMap<String, Protos>, key: &str) {
    // An empty index is no index: a blob that does not parse is read
    // again next time, as before.
    if !all.is_empty() {
        cache::store(path, &to_text(all, key));
    }
}
