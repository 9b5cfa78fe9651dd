// SPDX-License-Identifier: GPL-2.0
//! `dynprobe list` with the kernel's prototypes kept between runs
//! (btfprotos): the same listing as prototypes read from the whole BTF
//! (`btfprotos::prototype`, what every run did before), with the index cold,
//! warm, stale and corrupt; and the index made again whenever the BTF it
//! was made from is not the one there.

use std::path::{Path, PathBuf};

use dynprobe_cmd::btfnames::Names;
use dynprobe_cmd::btfprotos::prototype;
use dynprobe_cmd::btfprotos::BtfSource;
use dynprobe_cmd::check::OwnedBtf;
use dynprobe_cmd::list::run_with;
use dynprobe_cmd::tracefs::Tracefs;

/// A BTF blob: header, types (u32 words), strings.
fn blob(types: &[u32], strings: &[u8]) -> Vec<u8> {
    let mut b = vec![0x9f, 0xeb, 1, 0];
    let tl = (types.len() * 4) as u32;
    for v in [24u32, 0, tl, tl, strings.len() as u32] {
        b.extend_from_slice(&v.to_le_bytes());
    }
    for t in types {
        b.extend_from_slice(&t.to_le_bytes());
    }
    b.extend_from_slice(strings);
    b
}

/// `vfs_read(struct file *f, int n)`, `vfs_readv(void *p)` and, when
/// `third`, `vfs_write(int n)`; the string offsets follow `STRINGS`.
fn kernel_btf(third: bool) -> Vec<u8> {
    const STRINGS: &[u8] = b"\0int\0file\0f\0n\0vfs_read\0p\0vfs_readv\0vfs_write\0";
    let (int, file, f, n, vfs_read, p, vfs_readv, vfs_write) = (1, 5, 10, 12, 14, 23, 25, 35);
    #[rustfmt::skip]
    let mut t = vec![
        int, 1 << 24, 4, (1 << 24) | 32, // 1: int
        0, 2 << 24, 3, // 2: struct file *
        file, 4 << 24, 0, // 3: struct file
        0, (13 << 24) | 2, 1, f, 2, n, 1, // 4: int (struct file *f, int n)
        vfs_read, (12 << 24) | 1, 4, // 5: vfs_read
        0, (13 << 24) | 1, 0, p, 7, // 6: void (void *p)
        0, 2 << 24, 0, // 7: void *
        vfs_readv, (12 << 24) | 1, 6, // 8: vfs_readv
    ];
    if third {
        t.extend([0, (13 << 24) | 1, 1, n, 1]); // 9: int (int n)
        t.extend([vfs_write, (12 << 24) | 1, 9]); // 10: vfs_write
    }
    blob(&t, STRINGS)
}

/// The listing of the functions as every run made it before: each
/// function's prototype read from the whole blob.
fn from_whole_blob(path: &Path, aff: &str, verbose: bool) -> String {
    let owned = OwnedBtf::load(path).unwrap();
    let btf = owned.btf().unwrap();
    let mut names = Names::default();
    names.add(owned.blob());
    let mut out = String::new();
    let mut seen = std::collections::HashSet::new();
    for name in aff.lines() {
        if seen.insert(name) {
            let p = prototype(&btf, verbose.then_some(&names), name);
            out += &format!("function {}\n", p.unwrap_or_else(|| name.to_string()));
        }
    }
    out
}

fn listing(fs_: &Tracefs, src: &BtfSource, glob: Option<&str>, verbose: bool) -> String {
    let mut out = Vec::new();
    assert_eq!(run_with(fs_, src, glob, verbose, &mut out), 0);
    String::from_utf8(out).unwrap()
}

fn scratch() -> PathBuf {
    let d = std::env::temp_dir().join(format!("dynprobe-list-btf-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(d.join("tracefs")).unwrap();
    std::env::set_var("XDG_CACHE_HOME", d.join("cache"));
    d
}

#[test]
fn kept_prototypes_list_as_the_whole_blob_does() {
    let d = scratch();
    let aff = "vfs_read\nvfs_readv\nnot_in_btf\nvfs_write\nvfs_read\n";
    std::fs::write(d.join("tracefs/available_filter_functions"), aff).unwrap();
    let fs_ = Tracefs {
        root: d.join("tracefs"),
    };
    let src = BtfSource {
        path: d.join("vmlinux"),
        build_id: None,
    };
    std::fs::write(&src.path, kernel_btf(false)).unwrap();
    let kept = src.cache_path().unwrap();
    assert!(kept.starts_with(d.join("cache/dynprobe/btf")));
    let want = from_whole_blob(&src.path, aff, false);
    assert_eq!(
        want,
        "function vfs_read(f, n)\nfunction vfs_readv(p)\nfunction not_in_btf\nfunction vfs_write\n"
    );
    // Cold, then warm, plain and with types; a glob.
    assert_eq!(listing(&fs_, &src, None, false), want);
    assert!(kept.exists());
    assert_eq!(listing(&fs_, &src, None, false), want);
    let typed = from_whole_blob(&src.path, aff, true);
    assert!(
        typed.contains("function void vfs_readv(void *p)"),
        "{typed}"
    );
    assert_eq!(listing(&fs_, &src, None, true), typed);
    assert_eq!(
        listing(&fs_, &src, Some("vfs_rea?"), false),
        "function vfs_read(f, n)\n"
    );
    // A kept index only answers, not the blob: a blob made unreadable
    // with the same size and time lists as before.
    let meta = std::fs::metadata(&src.path).unwrap();
    let junk = vec![0u8; meta.len() as usize];
    std::fs::write(&src.path, &junk).unwrap();
    let f = std::fs::File::options()
        .write(true)
        .open(&src.path)
        .unwrap();
    f.set_modified(meta.modified().unwrap()).unwrap();
    drop(f);
    assert_eq!(listing(&fs_, &src, None, false), want);
    // Another blob (another size): made again.
    std::fs::write(&src.path, kernel_btf(true)).unwrap();
    let want3 = from_whole_blob(&src.path, aff, false);
    assert!(want3.contains("function vfs_write(n)\n"), "{want3}");
    assert_eq!(listing(&fs_, &src, None, false), want3);
    // The same size, another time (no build id: a boot): made again.
    let meta = std::fs::metadata(&src.path).unwrap();
    let mut renamed = kernel_btf(true);
    let at = renamed.windows(9).position(|w| w == b"vfs_write").unwrap();
    renamed[at..at + 9].copy_from_slice(b"vfs_wrote");
    std::fs::write(&src.path, &renamed).unwrap();
    let f = std::fs::File::options()
        .write(true)
        .open(&src.path)
        .unwrap();
    f.set_modified(meta.modified().unwrap() + std::time::Duration::from_secs(5))
        .unwrap();
    drop(f);
    let renamed_want = from_whole_blob(&src.path, aff, false);
    assert!(renamed_want.contains("function vfs_write\n"));
    assert_eq!(listing(&fs_, &src, None, false), renamed_want);
    std::fs::write(&src.path, kernel_btf(true)).unwrap();
    assert_eq!(listing(&fs_, &src, None, false), want3);
    // A corrupt or truncated index: made again.
    for cut in [0, 10, 40] {
        let text = std::fs::read(&kept).unwrap();
        std::fs::write(&kept, &text[..cut.min(text.len())]).unwrap();
        assert_eq!(listing(&fs_, &src, None, false), want3);
    }
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn a_build_id_keys_the_index_across_boots() {
    let dir = std::env::temp_dir().join(format!("dynprobe-list-btf-id-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("vmlinux");
    std::fs::write(&path, kernel_btf(false)).unwrap();
    let with_id = |id: &str| BtfSource {
        path: path.clone(),
        build_id: Some(id.into()),
    };
    let key = with_id("f8da").key().unwrap();
    // Another boot of the same kernel (another file time): the same key.
    let f = std::fs::File::options().write(true).open(&path).unwrap();
    f.set_modified(std::time::SystemTime::UNIX_EPOCH).unwrap();
    drop(f);
    assert_eq!(with_id("f8da").key().unwrap(), key);
    // Another kernel, or another BTF size: another key.
    assert_ne!(with_id("f8db").key().unwrap(), key);
    std::fs::write(&path, kernel_btf(true)).unwrap();
    assert_ne!(with_id("f8da").key().unwrap(), key);
    assert!(with_id("f8da")
        .cache_path()
        .is_some_and(|p| p.ends_with("btf/f8da.protos")));
    let _ = std::fs::remove_dir_all(&dir);
}
