// SPDX-License-Identifier: GPL-2.0
//! Source-level places in a relocatable debug file, as a kernel
//! module's is (tests/data/srcprobe_fixture.ko: srcprobe-fixture.c
//! compiled with the flags it names, `-c`, so that its DWARF's
//! addresses and offsets are relocations): `-m FILE` gives the places
//! the linked program gives, named MODULE:SYMBOL+OFFS; the errors of a
//! missing module, debug file or function.

use std::path::{Path, PathBuf};

use dynprobe_cmd::srcprobe::{plan_lines, Options};

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name)
}

fn plan(opts: &Options, line: &str) -> Result<Vec<String>, String> {
    // The index cache of this test binary's own.
    let d = std::env::temp_dir().join(format!("dynprobe-debuginfo-mod-{}", std::process::id()));
    std::env::set_var("XDG_CACHE_HOME", &d);
    plan_lines(&[line.to_string()], opts).map(|v| v.into_iter().map(|p| p.line).collect())
}

#[test]
fn places_in_a_relocatable_file() {
    let linked = Options {
        debuginfo: Some(data("srcprobe-fixture")),
        source: Some(data("")),
        definition: true,
        ..Options::default()
    };
    let module = Options {
        module: Some(data("srcprobe_fixture.ko").display().to_string()),
        source: Some(data("")),
        definition: true,
        ..Options::default()
    };
    for q in [
        "sum b->p->y k",
        "sum total",
        "sum b->name:string",
        "n=scale v",
        "sum%return $retval",
        "twice",
        "sum;total*",
        "scale+4",
    ] {
        let want: Vec<String> = plan(&linked, q)
            .unwrap_or_else(|e| panic!("{q}: {e}"))
            .iter()
            .map(|l| {
                let (head, rest) = l.split_once(' ').unwrap();
                format!("{head} srcprobe_fixture:{rest}")
            })
            .collect();
        assert_eq!(plan(&module, q), Ok(want), "{q}");
    }
    let err = |l: &str| plan(&module, l).unwrap_err();
    assert!(
        err("nosuch_function")
            .contains("Failed to find symbol nosuch_function in module srcprobe_fixture"),
        "{}",
        err("nosuch_function")
    );
    assert!(err("sum nosuch").contains("Failed to find 'nosuch' in this function."));
}

#[test]
fn modules_and_debug_files_missing() {
    let opts = |m: &str| Options {
        module: Some(m.into()),
        definition: true,
        ..Options::default()
    };
    let e = plan(&opts("nosuch_module_x"), "sum:1").unwrap_err();
    assert!(e.starts_with("module nosuch_module_x not found"), "{e}");
    let e = plan(&opts("/nonexistent/x.ko"), "sum:1").unwrap_err();
    assert!(e.contains("/nonexistent/x.ko"), "{e}");
    // A module file without DWARF: the package is named.
    let stripped = std::env::temp_dir().join(format!("dynprobe-stripped-{}", std::process::id()));
    std::fs::create_dir_all(&stripped).unwrap();
    let ko = stripped.join("stripped_mod.ko");
    std::fs::write(&ko, &std::fs::read(data("srcprobe-fixture")).unwrap()[..64]).unwrap();
    let e = plan(&opts(&ko.display().to_string()), "sum:1").unwrap_err();
    assert!(
        e.contains("no debug info for module stripped_mod") && e.contains("-dbg'"),
        "{e}"
    );
    let _ = std::fs::remove_dir_all(stripped);
}
