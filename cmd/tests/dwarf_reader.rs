// SPDX-License-Identifier: GPL-2.0
//! What the dwarf_reader fuzz target (fuzz/fuzz_targets/dwarf_reader.rs)
//! found in the command's DWARF reading, each on the small program's
//! debug file (tests/data/srcprobe-fixture) changed as the finding was.

use std::path::Path;

use dynprobe_cmd::debugfile::DebugFile;
use dynprobe_cmd::dwarf::Dwarf;
use dynprobe_cmd::dwarf_index::Index;
use dynprobe_cmd::list_source::{self, What};
use dynprobe_cmd::srcprobe::{Ctx, Options};

fn fixture() -> Vec<u8> {
    std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/srcprobe-fixture"))
        .unwrap()
}

/// `bytes` with the first `from` replaced by `to` (of the same length).
fn patched(mut bytes: Vec<u8>, from: &[u8], to: &[u8]) -> Vec<u8> {
    assert_eq!(from.len(), to.len());
    let at = bytes
        .windows(from.len())
        .position(|w| w == from)
        .expect("the bytes to change");
    bytes[at..at + to.len()].copy_from_slice(to);
    bytes
}

fn index_of(bytes: Vec<u8>) -> Index {
    let file = DebugFile::from_bytes(Path::new("fixture"), bytes).unwrap();
    let obj = file.object().unwrap();
    let mut dw = Dwarf::load(&file, &obj).unwrap();
    Index::build(&mut dw).unwrap()
}

/// A function whose name is empty (`scale`'s in `.debug_str` made
/// "\0cale") was indexed under "", which its cache file cannot hold: the
/// index read back from the cache answered otherwise than the one built.
#[test]
fn an_empty_function_name_is_not_indexed() {
    let idx = index_of(patched(fixture(), b"scale\0", b"\0cale\0"));
    assert!(!idx.funcs.contains_key(""));
    assert!(idx.funcs.contains_key("sum"));
    let key = "k 1";
    assert_eq!(
        Index::from_text(&idx.to_text(key), key).as_ref(),
        Some(&idx)
    );
}

/// `list --vars` at each function's entry, on the file the fuzz target
/// reads (`data/fuzz/param-entry-range`, an input it found): a
/// parameter whose location list does not cover the entry, in a function
/// whose range ends near 2^64. perf's rule takes the parameter's first
/// location after the entry; it was looked for address by address up to
/// the function's end, which took hours; now one pass over the list.
#[test]
fn a_parameter_after_the_entry_is_found_in_one_pass() {
    let bytes = std::fs::read(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/fuzz/param-entry-range"),
    )
    .unwrap();
    let (done, wait) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let file = DebugFile::from_bytes(Path::new("fuzz"), bytes).unwrap();
        let obj = file.object().unwrap();
        let mut dw = Dwarf::load(&file, &obj).unwrap();
        let index = Index::build(&mut dw).unwrap();
        let mut ctx = Ctx {
            file: &file,
            dw,
            index,
            opts: Options::default(),
            module: None,
        };
        let answers: Vec<_> = ["sum", "scale", "twice"]
            .iter()
            .map(|f| list_source::text_in(&mut ctx, What::Vars, f).is_ok())
            .collect();
        let _ = done.send(answers);
    });
    let answers = wait
        .recv_timeout(std::time::Duration::from_secs(30))
        .expect("list --vars within 30 s");
    assert_eq!(answers.len(), 3);
}

/// Every question the fuzz target asks, of `bytes` as a debug file.
fn ask_everything(bytes: Vec<u8>) {
    let Ok(file) = DebugFile::from_bytes(Path::new("fuzz"), bytes) else {
        return;
    };
    let _ = file.functions();
    let Ok(obj) = file.object() else {
        return;
    };
    let Ok(mut dw) = Dwarf::load(&file, &obj) else {
        return;
    };
    let Ok(index) = Index::build(&mut dw) else {
        return;
    };
    let mut ctx = Ctx {
        file: &file,
        dw,
        index,
        opts: Options::default(),
        module: None,
    };
    for f in ["sum", "scale", "twice", "main"] {
        for place in [
            f.to_string(),
            format!("{f}%return $retval"),
            format!("{f}:3 s k"),
            format!("{f} b->p->y k"),
            format!("{f};*"),
        ] {
            let _ = ctx.lines(&place);
            let _ = list_source::text_in(&mut ctx, What::Vars, &place);
        }
        let _ = list_source::text_in(&mut ctx, What::Lines, f);
    }
}

/// A DW_AT_high_pc size that takes the range past 2^64
/// (`data/fuzz/high-pc-overflow`, found by the fuzz target): gimli adds
/// it to DW_AT_low_pc unchecked, which panicked with the command's
/// overflow checks; it is malformed debug info now.
#[test]
fn a_range_past_the_end_of_the_address_space_is_an_error() {
    let bytes = std::fs::read(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/fuzz/high-pc-overflow"),
    )
    .unwrap();
    ask_everything(bytes);
}
