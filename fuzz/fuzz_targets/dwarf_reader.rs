// SPDX-License-Identifier: GPL-2.0
//! Fuzz the command's DWARF reading: any bytes as a debug file, through
//! what `dynprobe list --line`, `list --vars` and `add -D` ask of it: the
//! ELF file and its sections, the function index (built, and written to
//! and read back from its cache text), the line table of each function
//! found, and the variables' locations and types at its lines. Malformed
//! or truncated input must give an error, never a panic, and never an
//! allocation out of proportion to the input (libFuzzer's -rss_limit_mb
//! and -malloc_limit_mb catch one).
#![no_main]

use std::path::Path;

use dynprobe_cmd::debugfile::DebugFile;
use dynprobe_cmd::dwarf::Dwarf;
use dynprobe_cmd::dwarf_index::Index;
use dynprobe_cmd::list_source::{self, What};
use dynprobe_cmd::srcprobe::{Ctx, Options};
use libfuzzer_sys::fuzz_target;

/// The seed's functions (tests/data/srcprobe-fixture.c), asked whether
/// or not the index has them.
const NAMES: &[&str] = &["sum", "scale", "twice", "main"];

/// The places and arguments asked of each function.
const PLACES: &[&str] = &[
    "{}",
    "{}%return $retval",
    "{}+4",
    "{}:1",
    "{}:3 s k",
    "{} b->p->y k",
    "{} b->name:string total",
    "{} v",
    "{};*",
    "{}@srcprobe-fixture.c:2",
];

fuzz_target!(|data: &[u8]| {
    let Ok(file) = DebugFile::from_bytes(Path::new("fuzz"), data.to_vec()) else {
        return;
    };
    let _ = file.functions();
    let _ = file.symbol_at(0x401000);
    let Ok(obj) = file.object() else {
        return;
    };
    let Ok(mut dw) = Dwarf::load(&file, &obj) else {
        return;
    };
    let Ok(index) = Index::build(&mut dw) else {
        return;
    };
    // The cache's text answers as the index it was made from.
    let key = "fuzz 1";
    let cached = Index::from_cache(index.to_text(key), key).expect("own cache text");
    let mut names: Vec<String> = index.funcs.keys().cloned().collect();
    names.sort();
    names.truncate(8);
    for n in &names {
        assert_eq!(cached.find(n), index.find(n), "{n:?}");
    }
    names.extend(NAMES.iter().map(|n| n.to_string()));
    let mut ctx = Ctx {
        file: &file,
        dw,
        index,
        opts: Options {
            // The seed's source, so that `list --line` prints text.
            source: Some(concat!(env!("CARGO_MANIFEST_DIR"), "/../cmd/tests/data").into()),
            definition: true,
            ..Options::default()
        },
        module: None,
    };
    for name in &names {
        for place in PLACES {
            let place = place.replace("{}", name);
            let _ = ctx.lines(&place);
            let _ = list_source::text_in(&mut ctx, What::Vars, &place);
            let _ = list_source::text_in(&mut ctx, What::Externs, &place);
        }
        for range in ["", ":0", ":1+3", ":2-9"] {
            let _ = list_source::text_in(&mut ctx, What::Lines, &format!("{name}{range}"));
        }
    }
});
