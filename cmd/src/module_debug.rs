// SPDX-License-Identifier: GPL-2.0
//! A kernel module named by `-m MODULE` and its debug file, as perf
//! probe's `-m` finds them. MODULE is a name (`9p`; `-` and `_` alike)
//! or a path to a `.ko` (also `.ko.xz`, `.ko.zst`, `.ko.gz`, read through
//! xz, zstd or gzip). A name is the loaded module (`/sys/module/NAME`,
//! its build id in `notes/.note.gnu.build-id`) or one of
//! `/lib/modules/RELEASE/modules.dep`. Its debug file is `--debuginfo
//! FILE`, else the one of its build id (`/usr/lib/debug/.build-id/`),
//! else Debian's (`/usr/lib/debug/lib/modules/RELEASE/kernel/...ko`, of
//! linux-image-RELEASE-dbg), else the `.ko` itself when it has DWARF.
//! Also: the loaded module whose symbols hold a function
//! (`/proc/kallsyms`), for a function that is not in vmlinux.

use std::fmt::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

use object::{Object, ObjectSection};

use crate::debugfile::{self, DebugFile};

/// Where the files are (the machine's, or a test's).
#[derive(Clone, Debug)]
pub struct Roots {
    /// `/sys/module`.
    pub sys_module: PathBuf,
    /// `/lib/modules`.
    pub lib_modules: PathBuf,
    /// `/usr/lib/debug`.
    pub debug: PathBuf,
}

impl Default for Roots {
    fn default() -> Self {
        Roots {
            sys_module: "/sys/module".into(),
            lib_modules: "/lib/modules".into(),
            debug: "/usr/lib/debug".into(),
        }
    }
}

/// A module found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Module {
    /// Its name as the kernel has it (`kprobe_events`' `MODULE:SYM`).
    pub name: String,
    /// Its file: as given, or in `/lib/modules/RELEASE/` (None: loaded,
    /// but in no modules.dep).
    pub file: Option<PathBuf>,
    /// The kernel release it is for.
    pub release: String,
    /// Its build id: the loaded module's, else its file's.
    pub build_id: Option<String>,
    /// Whether it is loaded.
    pub loaded: bool,
}

/// A module name as the kernel has it: `-` is `_`.
pub fn kernel_name(name: &str) -> String {
    name.replace('-', "_")
}

/// A module file's name without `.ko` and its compression suffix.
fn stem(path: &Path) -> Option<&str> {
    let n = path.file_name()?.to_str()?;
    let n = [".xz", ".zst", ".gz"]
        .iter()
        .find_map(|c| n.strip_suffix(c))
        .unwrap_or(n);
    n.strip_suffix(".ko")
}

/// A module file's bytes, decompressed when its name says so.
pub fn read_module(path: &Path) -> Result<Vec<u8>, String> {
    let n = path.to_string_lossy();
    let tool = if n.ends_with(".xz") {
        Some("xz")
    } else if n.ends_with(".zst") {
        Some("zstd")
    } else if n.ends_with(".gz") {
        Some("gzip")
    } else {
        None
    };
    let Some(tool) = tool else {
        return std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()));
    };
    let out = Command::new(tool)
        .arg("-dc")
        .arg(path)
        .output()
        .map_err(|e| {
            format!(
                "{}: cannot run {tool} to decompress it: {e}",
                path.display()
            )
        })?;
    if !out.status.success() {
        return Err(format!(
            "{}: {tool} -dc failed: {}",
            path.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(out.stdout)
}

/// A module file's name (`.gnu.linkonce.this_module`'s `struct module`
/// name, at offset 24 as perf reads it) and build id.
pub fn module_file_info(bytes: &[u8]) -> (Option<String>, Option<String>) {
    let Ok(obj) = object::File::parse(bytes) else {
        return (None, None);
    };
    let name = obj
        .section_by_name(".gnu.linkonce.this_module")
        .and_then(|s| s.data().ok())
        .and_then(|d| d.get(24..))
        .and_then(|d| {
            let end = d.iter().position(|&b| b == 0)?;
            std::str::from_utf8(&d[..end]).ok().map(str::to_string)
        })
        .filter(|n| !n.is_empty());
    let id = obj.build_id().ok().flatten().map(|b| {
        b.iter().fold(String::new(), |mut s, x| {
            let _ = write!(s, "{x:02x}");
            s
        })
    });
    (name, id)
}

/// The path of module `name` in modules.dep of `dir` (`/lib/modules/REL`).
fn in_modules_dep(dir: &Path, name: &str) -> Option<PathBuf> {
    let text = std::fs::read_to_string(dir.join("modules.dep")).ok()?;
    let want = kernel_name(name);
    text.lines().find_map(|l| {
        let p = Path::new(l.split(':').next()?);
        (stem(p).map(kernel_name)? == want).then(|| dir.join(p))
    })
}

/// Whether module `name` is built into the kernel (modules.builtin).
fn built_in(dir: &Path, name: &str) -> bool {
    let want = kernel_name(name);
    std::fs::read_to_string(dir.join("modules.builtin"))
        .map(|t| {
            t.lines()
                .any(|l| stem(Path::new(l)).map(kernel_name).as_deref() == Some(&want))
        })
        .unwrap_or(false)
}

/// Finds MODULE (a name or a path) for kernel `release`.
pub fn find(arg: &str, release: &str, roots: &Roots) -> Result<Module, String> {
    if arg.contains('/') || stem(Path::new(arg)).is_some() && Path::new(arg).exists() {
        let path = PathBuf::from(arg);
        let bytes = read_module(&path)?;
        let (name, build_id) = module_file_info(&bytes);
        let name = name
            .or_else(|| stem(&path).map(kernel_name))
            .ok_or_else(|| format!("{arg}: not a kernel module (.ko)"))?;
        let release = path
            .to_string_lossy()
            .split_once("/lib/modules/")
            .and_then(|(_, t)| t.split('/').next().map(str::to_string))
            .unwrap_or_else(|| release.to_string());
        let loaded = roots.sys_module.join(&name).join("initstate").exists();
        return Ok(Module {
            name,
            file: Some(path),
            release,
            build_id,
            loaded,
        });
    }
    let name = kernel_name(arg);
    let dir = roots.lib_modules.join(release);
    let sys = roots.sys_module.join(&name);
    let loaded = sys.join("initstate").exists();
    let file = in_modules_dep(&dir, &name);
    if !loaded && file.is_none() {
        if built_in(&dir, &name) {
            return Err(format!(
                "module {name} is built into the kernel {release}: its functions are in vmlinux, name them without -m"
            ));
        }
        return Err(format!(
            "module {name} not found: it is not loaded, and not in {} (name its .ko file with -m PATH)",
            dir.join("modules.dep").display()
        ));
    }
    let build_id = if loaded {
        std::fs::read(sys.join("notes/.note.gnu.build-id"))
            .ok()
            .and_then(|n| debugfile::build_id_in_notes(&n))
    } else {
        None
    }
    .or_else(|| {
        let f = file.as_ref()?;
        module_file_info(&read_module(f).ok()?).1
    });
    Ok(Module {
        name,
        file,
        release: release.to_string(),
        build_id,
        loaded,
    })
}

/// Where module `m`'s debug file may be: by build id, then Debian's
/// path (the module's path below /lib/modules/RELEASE, uncompressed),
/// then the module's own file.
pub fn candidates(m: &Module, roots: &Roots) -> Vec<PathBuf> {
    let mut out = Vec::new();
    if let Some(id) = m.build_id.as_deref().filter(|i| i.len() > 2) {
        out.push(
            roots
                .debug
                .join(".build-id")
                .join(&id[..2])
                .join(format!("{}.debug", &id[2..])),
        );
    }
    let rel = m.file.as_ref().and_then(|f| {
        let s = f.to_string_lossy();
        let tail = s.split_once("/lib/modules/")?.1;
        let tail = tail.split_once('/')?.1;
        let dir = Path::new(tail).parent()?;
        Some(dir.join(format!("{}.ko", stem(f)?)))
    });
    let base = roots.debug.join("lib/modules").join(&m.release);
    match rel {
        Some(r) => out.push(base.join(r)),
        None => {
            // Loaded, in no modules.dep: where Debian puts the usual ones.
            for d in ["kernel", "updates", "extra"] {
                out.push(base.join(d).join(format!("{}.ko", m.name)));
            }
        }
    }
    if let Some(f) = &m.file {
        out.push(f.clone());
    }
    out
}

/// The debug file of module `m`: `given`, else the first candidate with
/// DWARF and the module's build id.
pub fn locate(m: &Module, given: Option<&Path>, roots: &Roots) -> Result<DebugFile, String> {
    if let Some(p) = given {
        let f = open_debug(p)?;
        check_id(m, &f)?;
        return Ok(f);
    }
    let mut mismatched = Vec::new();
    for c in candidates(m, roots) {
        if !c.exists() {
            continue;
        }
        let Ok(f) = open_debug(&c) else { continue };
        match (&m.build_id, &f.build_id) {
            (Some(w), Some(h)) if w != h => mismatched.push(c.display().to_string()),
            _ => return Ok(f),
        }
    }
    let file = m
        .file
        .as_ref()
        .map(|f| format!(" ({})", f.display()))
        .unwrap_or_default();
    let mut msg = format!(
        "no debug info for module {}{file}: install it with 'apt install linux-image-{}-dbg', or name its debug file with --debuginfo FILE",
        m.name, m.release
    );
    if !mismatched.is_empty() {
        msg += &format!(
            " ({} has another build id than the module)",
            mismatched.join(", ")
        );
    }
    Err(msg)
}

/// Opens a module's debug file; a compressed one is decompressed into
/// a file of the cache's directory first (the DWARF is read mapped).
fn open_debug(path: &Path) -> Result<DebugFile, String> {
    if stem(path).is_some() && !path.to_string_lossy().ends_with(".ko") {
        let bytes = read_module(path)?;
        let tmp = std::env::temp_dir().join(format!(
            "dynprobe-{}-{}.ko",
            std::process::id(),
            stem(path).unwrap_or("module")
        ));
        std::fs::write(&tmp, &bytes).map_err(|e| format!("{}: {e}", tmp.display()))?;
        let f = DebugFile::open(&tmp);
        let _ = std::fs::remove_file(&tmp);
        let mut f =
            f.map_err(|e| e.replace(&tmp.display().to_string(), &path.display().to_string()))?;
        f.path = path.to_path_buf();
        return Ok(f);
    }
    DebugFile::open(path)
}

/// Refuses a debug file that is not the loaded module's.
fn check_id(m: &Module, f: &DebugFile) -> Result<(), String> {
    match (&m.build_id, &f.build_id) {
        (Some(w), Some(h)) if m.loaded && w != h => Err(format!(
            "{}: another build id ({h}) than the loaded module {} ({w})",
            f.path.display(),
            m.name
        )),
        _ => Ok(()),
    }
}

/// The debug file of the lines: `-m MODULE`'s (with its name), else
/// vmlinux's. `debuginfo` is the file, or a directory of debug files
/// laid out as /usr/lib/debug.
pub fn open(
    debuginfo: Option<&Path>,
    module: Option<&str>,
) -> Result<(DebugFile, Option<String>), String> {
    let release = debugfile::running_release().unwrap_or_default();
    let dir = debuginfo.filter(|d| d.is_dir());
    let roots = Roots {
        debug: dir.map_or_else(|| Roots::default().debug, Path::to_path_buf),
        ..Roots::default()
    };
    let given = debuginfo.filter(|d| !d.is_dir());
    let Some(arg) = module else {
        let vmlinux = dir.and_then(|d| {
            [
                format!("lib/modules/{release}/vmlinux"),
                format!("boot/vmlinux-{release}"),
            ]
            .iter()
            .map(|p| d.join(p))
            .find(|p| p.exists())
        });
        return Ok((DebugFile::locate(given.or(vmlinux.as_deref()))?, None));
    };
    let m = find(arg, &release, &roots)?;
    let f = locate(&m, given, &roots)?;
    Ok((f, Some(m.name)))
}

/// The function a place names (`FUNC` of `FUNC[@SRC][:RLN|+OFFS|...]`).
pub fn place_function(place: &str) -> Option<&str> {
    let head = place.split_whitespace().next()?;
    let head = head.rsplit_once('=').map_or(head, |(_, p)| p);
    let f = head.split(['@', ':', ';', '+', '%']).next()?;
    (!f.is_empty() && f.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')).then_some(f)
}

/// The error for a function that is not in the debug file.
pub fn not_found(func: &str, module: Option<&str>, path: &Path) -> String {
    match module {
        Some(m) => format!(
            "Failed to find symbol {func} in module {m} (its debug file {})",
            path.display()
        ),
        None => format!(
            "Failed to find symbol {func} in the debug info ({}), nor in a loaded module (name its module with -m MODULE)",
            path.display()
        ),
    }
}

/// The loaded module that alone holds function `func` (or a
/// compiler's copy of it, `func.isra.0`) among the running kernel's
/// symbols (`/proc/kallsyms`): None when vmlinux has it too, or no
/// module has it.
pub fn module_of_function(kallsyms: &str, func: &str) -> Option<String> {
    let mut found = None;
    for l in kallsyms.lines() {
        let mut w = l.split_whitespace();
        let (Some(_), Some(kind), Some(name)) = (w.next(), w.next(), w.next()) else {
            continue;
        };
        if !matches!(kind, "t" | "T") || name.split('.').next() != Some(func) {
            continue;
        }
        match w.next() {
            Some(m) => {
                found.get_or_insert_with(|| m.trim_matches(['[', ']']).to_string());
            }
            None => return None,
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree() -> (PathBuf, Roots) {
        let d = std::env::temp_dir().join(format!("dynprobe-modtest-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        let r = Roots {
            sys_module: d.join("sys/module"),
            lib_modules: d.join("lib/modules"),
            debug: d.join("usr/lib/debug"),
        };
        let rel = r.lib_modules.join("7.2.13+deb14-amd64");
        std::fs::create_dir_all(rel.join("kernel/fs/9p")).unwrap();
        std::fs::write(
            rel.join("modules.dep"),
            "kernel/fs/9p/9p.ko.xz: kernel/fs/netfs/netfs.ko.xz\nkernel/net/nf-x.ko.xz:\n",
        )
        .unwrap();
        std::fs::write(rel.join("modules.builtin"), "kernel/fs/ext4/ext4.ko\n").unwrap();
        std::fs::create_dir_all(r.sys_module.join("9p")).unwrap();
        std::fs::write(r.sys_module.join("9p/initstate"), "live\n").unwrap();
        (d, r)
    }

    #[test]
    fn modules_by_name() {
        let (d, r) = tree();
        let rel = "7.2.13+deb14-amd64";
        let m = find("9p", rel, &r).unwrap();
        assert!(m.loaded);
        assert_eq!(m.name, "9p");
        assert!(m.file.as_ref().unwrap().ends_with("kernel/fs/9p/9p.ko.xz"));
        let c = candidates(&m, &r);
        assert_eq!(
            c[0],
            r.debug
                .join("lib/modules/7.2.13+deb14-amd64/kernel/fs/9p/9p.ko")
        );
        let Err(e) = locate(&m, None, &r) else {
            panic!("a debug file found in an empty tree")
        };
        assert!(
            e.contains("no debug info for module 9p")
                && e.contains("apt install linux-image-7.2.13+deb14-amd64-dbg"),
            "{e}"
        );
        // Not loaded, by its file's name; - and _ alike.
        let m = find("nf_x", rel, &r).unwrap();
        assert_eq!((m.name.as_str(), m.loaded), ("nf_x", false));
        let e = find("nosuch", rel, &r).unwrap_err();
        assert!(e.starts_with("module nosuch not found"), "{e}");
        let e = find("ext4", rel, &r).unwrap_err();
        assert!(e.contains("built into the kernel"), "{e}");
        let _ = std::fs::remove_dir_all(d);
    }

    #[test]
    fn names() {
        assert_eq!(stem(Path::new("/a/9p.ko.xz")), Some("9p"));
        assert_eq!(stem(Path::new("x.ko")), Some("x"));
        assert_eq!(stem(Path::new("x.o")), None);
        assert_eq!(kernel_name("nf-conntrack"), "nf_conntrack");
        let ks = "ffffffffc0001000 t v9fs_open.isra.0\t[9p]\n\
                  ffffffff81000000 T vfs_read\n\
                  ffffffffc0002000 t v9fs_vfs_mkdir_dotl\t[9p]\n";
        assert_eq!(
            module_of_function(ks, "v9fs_vfs_mkdir_dotl").as_deref(),
            Some("9p")
        );
        assert_eq!(module_of_function(ks, "v9fs_open").as_deref(), Some("9p"));
        assert_eq!(module_of_function(ks, "vfs_read"), None);
        let both = format!("{ks}ffffffff81000100 t v9fs_open\n");
        assert_eq!(module_of_function(&both, "v9fs_open"), None);
        assert_eq!(module_of_function(ks, "nosuch"), None);
        assert_eq!(module_file_info(b"junk"), (None, None));
        assert_eq!(place_function("v9fs_x:38 mode"), Some("v9fs_x"));
        assert_eq!(place_function("g:e=v9fs_x%return $retval"), Some("v9fs_x"));
        assert_eq!(place_function("f@a.c:3-9"), Some("f"));
        assert_eq!(place_function("fs/a.c:3"), None);
    }
}
