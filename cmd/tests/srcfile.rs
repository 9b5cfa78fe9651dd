// SPDX-License-Identifier: GPL-2.0
//! Places by source file, `$params`/`$vars`, bit-field members and the
//! listings (`--line SRC:ALN`, `--vars --externs`, `--funcs`) read from a
//! small program's DWARF (tests/data/srcfile-fixture, built from
//! srcfile-fixture.c with gcc 14, DWARF 5).

use std::path::{Path, PathBuf};

use dynprobe_cmd::list_source::{text, What};
use dynprobe_cmd::srcprobe::{plan_lines, Options};

fn data() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data")
}

fn opts() -> Options {
    // The index cache of this test binary's own.
    let d = std::env::temp_dir().join(format!("dynprobe-srcfile-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    std::env::set_var("XDG_CACHE_HOME", &d);
    Options {
        debuginfo: Some(data().join("srcfile-fixture")),
        source: Some(data()),
        definition: true,
        exec: None,
        module: None,
    }
}

fn plan(line: &str) -> Result<Vec<String>, String> {
    plan_lines(&[line.to_string()], &opts()).map(|v| v.into_iter().map(|p| p.line).collect())
}

fn listing(what: What, place: &str) -> String {
    text(what, place, &opts()).unwrap_or_else(|e| panic!("{place}: {e}"))
}

#[test]
fn places_by_source_file() {
    // Line 33 is weigh's loop body, weigh:6 from its declaration (27).
    assert_eq!(
        plan("srcfile-fixture.c:33").unwrap(),
        ["p:probe/weigh weigh+17"]
    );
    assert_eq!(
        plan("srcfile-fixture.c:33 it times").unwrap(),
        ["p:probe/weigh weigh+17 it=%di:x64 times=%si:s32"]
    );
    assert_eq!(
        plan("weigh@srcfile-fixture.c:6 it").unwrap(),
        ["p:probe/weigh_L6 weigh+17 it=%di:x64"]
    );
    // A pattern, its lines read from --source.
    let p = plan("srcfile-fixture.c;*the*block*").unwrap();
    assert_eq!(p.len(), 1, "{p:?}");
    assert!(p[0].starts_with("p:probe/pick pick+"), "{p:?}");
    assert!(plan("srcfile-fixture.c:1")
        .unwrap_err()
        .contains("Probe point '@srcfile-fixture.c' not found."));
    assert!(plan("nosuch.c:3").unwrap_err().contains("not found"));
}

#[test]
fn params_and_vars() {
    assert_eq!(
        plan("weigh $params").unwrap(),
        ["p:probe/weigh weigh+0 it=%di:x64 times=%si:s32"]
    );
    // Named arguments stay where they are; `$vars` adds the locals
    // fetchable there (none but the parameters at weigh:6).
    assert_eq!(
        plan("weigh:6 $vars it->weight").unwrap(),
        ["p:probe/weigh_L6 weigh+17 it=%di:x64 times=%si:s32 weight=+16(%di):s64"]
    );
}

#[test]
fn bit_fields() {
    // struct flags { lo:3, mid:5, wide:20 (unsigned int); tag (u8);
    // odd:7 (unsigned short) }: odd is bits 8..14 of the short at 4.
    assert_eq!(
        plan("pick it->f.lo it->f.mid it->f.wide it->f.tag it->f.odd").unwrap(),
        [
            "p:probe/pick pick+0 lo=+0(%di):b3@0/32 mid=+0(%di):b5@3/32 \
          wide=+0(%di):b20@8/32 tag=+4(%di):x8 odd=+4(%di):b7@8/16"
        ]
    );
    // A cast to a fetch type reads the container's first bytes as perf.
    assert_eq!(
        plan("weigh it->f.mid:u8").unwrap(),
        ["p:probe/weigh weigh+0 mid=+0(%di):u8"]
    );
}

#[test]
fn listings() {
    let l = listing(What::Lines, "srcfile-fixture.c:30-36");
    let want = "     33  \t\tw += it->f.mid;\t/* weigh: the loop */\n";
    assert!(l.contains(want), "{l}");
    assert!(l.starts_with('<') && l.lines().next().unwrap().ends_with("srcfile-fixture.c:30>"));
    assert!(l.contains("\n     30  \tint i;\n"), "{l}");
    // Externs: the unit's globals too, types as perf prints them (no
    // qualifiers: `static const char *const names[]` is char*[]).
    assert_eq!(
        listing(What::Externs, "srcfile-fixture.c:33"),
        "Available variables at @srcfile-fixture.c:33\n\t@<weigh+17>\n\
         \t\tchar*[]\tnames\n\t\tint\ttimes\n\t\tlong int\tseen\n\
         \t\tstruct item*\tit\n\t\tstruct item[]\titems\n\t\tvoid*\tanchor\n"
    );
    assert_eq!(
        listing(What::Vars, "weigh:6"),
        "Available variables at weigh:6\n\t@<weigh+17>\n\
         \t\tint\ttimes\n\t\tstruct item*\tit\n"
    );
    // perf's default filter leaves out _start; a filter of its own.
    assert_eq!(listing(What::Funcs, ""), "pick\nweigh\n");
    assert_eq!(listing(What::Funcs, "_* | w*"), "_start\nweigh\n");
    assert_eq!(listing(What::Funcs, "!(p* | w*)"), "_start\n");
}
