// SPDX-License-Identifier: GPL-2.0
//! Source-level places read from a small program's DWARF
//! (tests/data/srcprobe-fixture, built from srcprobe-fixture.c), and the
//! same file truncated and corrupted: every query ends in an answer or an
//! error, never a panic.

use std::path::{Path, PathBuf};

use dynprobe_cmd::srcprobe::{plan_lines, Options};

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/srcprobe-fixture")
}

/// A scratch directory of this test binary's own, also the index cache.
fn scratch() -> PathBuf {
    let d = std::env::temp_dir().join(format!("dynprobe-debuginfo-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    std::env::set_var("XDG_CACHE_HOME", &d);
    d
}

fn plan(file: &Path, line: &str) -> Result<Vec<String>, String> {
    let opts = Options {
        debuginfo: Some(file.to_path_buf()),
        source: None,
        definition: true,
        module: None,
    };
    plan_lines(&[line.to_string()], &opts).map(|v| v.into_iter().map(|p| p.line).collect())
}

fn err_of(file: &Path, l: &str) -> String {
    plan(file, l).unwrap_err()
}

#[test]
fn places_of_the_fixture() {
    let _d = scratch();
    let f = fixture();
    let one = |l: &str| plan(&f, l).unwrap_or_else(|e| panic!("{l}: {e}"));
    assert_eq!(
        one("sum b->p->y k"),
        ["p:probe/sum sum+0 y=+4(+0(%di)):s32 k=%si:s32"]
    );
    assert_eq!(one("sum total"), ["p:probe/sum sum+0 total=@total+0:s64"]);
    assert_eq!(
        one("sum b->name:string"),
        ["p:probe/sum sum+0 name=+0(+8(%di)):string"]
    );
    assert_eq!(one("n=scale v"), ["p:probe/n scale+0 v=%di:s32"]);
    assert_eq!(
        one("sum%return $retval"),
        ["r:probe/sum__return sum+0 $retval"]
    );
    // An inline function: its copies, one in sum, one in scale (whose
    // own range is empty), where `v` is gone.
    assert!(err_of(&f, "twice v").contains("Failed to find the location of the 'v' variable"));
    assert_eq!(one("twice").len(), 2);
    assert!(err_of(&f, "sum+4096").contains("Specified offset is out of sum"));
    // Refused with perf probe's reasons.
    let err = |l: &str| plan(&f, l).unwrap_err();
    assert!(err("sum:7 s k").contains("Sorry, we don't support this variable location yet."));
    assert!(err("sum nosuch").contains("Failed to find 'nosuch' in this function."));
    assert!(err("sum b.p").contains("must be referred by '->'"));
    assert!(err("sum k->x").contains("k is not a data structure nor a union."));
    assert!(err("nosuch_function").contains("Failed to find symbol nosuch_function"));
    assert!(err("sum%return k").contains("a return probe takes $retval"));
    // A missing file names the option.
    let missing = plan(Path::new("/nonexistent/vmlinux"), "sum").unwrap_err();
    assert!(missing.contains("/nonexistent/vmlinux"), "{missing}");
}

/// A tiny deterministic generator (xorshift) for the corruptions.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

#[test]
fn malformed_files_give_errors_not_panics() {
    let d = scratch();
    let good = std::fs::read(fixture()).unwrap();
    let queries = ["sum b->p->y k", "sum:5 s", "twice", "sum;total*", "scale v"];
    let path = d.join("mutant");
    let check = |bytes: &[u8]| {
        std::fs::write(&path, bytes).unwrap();
        for q in queries {
            let _ = plan(&path, q);
        }
    };
    // Truncated at 97 points, the empty file first.
    for i in 0..97 {
        check(&good[..good.len() * i / 97]);
    }
    // 400 copies with up to 8 bytes changed past the ELF header.
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for _ in 0..400 {
        let mut m = good.clone();
        for _ in 0..=(rng.next() % 8) {
            let at = 64 + (rng.next() as usize) % (m.len() - 64);
            m[at] = rng.next() as u8;
        }
        check(&m);
    }
    let _ = std::fs::remove_dir_all(&d);
}
