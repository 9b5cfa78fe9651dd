// SPDX-License-Identifier: GPL-2.0
//! `-x BIN` source-level places on the host: a program this test
//! compiles with -g, its lines and variables turned into uprobe lines at
//! the file offsets the language's ELF reader gives; the same program
//! stripped with its DWARF in a debug file found by `.gnu_debuglink`
//! (in `.debug/`) or named with `--debuginfo`; `list --line`/`--vars
//! -x`; no debug info, and a truncated debug file, refused with a
//! reason, never a panic.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use dynprobe_lang::elf::Elf;

const PROGRAM: &str = r#"struct pt {
	int x;
	int y;
};
long total;
int __attribute__((noinline)) step(struct pt *p, int k)
{
	int sum = p->x + k;

	total += sum;
	return sum * 2;
}
int main(int argc, char **argv)
{
	struct pt q = { argc, 2 };

	(void)argv;
	return step(&q, 3) == 0;
}
"#;

fn run(cmd: &mut Command) -> bool {
    cmd.status().map(|s| s.success()).unwrap_or(false)
}

/// The program with DWARF, and a stripped copy whose debug link names
/// `.debug/app.debug`; `None` without cc or binutils.
fn built() -> Option<(PathBuf, PathBuf, PathBuf)> {
    let dir = std::env::temp_dir().join(format!("dynprobe-x-src-{}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(dir.join("s/.debug")).unwrap();
    let src = dir.join("app.c");
    let bin = dir.join("app");
    fs::write(&src, PROGRAM).unwrap();
    if !run(Command::new("cc")
        .args(["-g", "-O0", "-o"])
        .arg(&bin)
        .arg(&src))
    {
        return None;
    }
    let debug = dir.join("s/.debug/app.debug");
    let stripped = dir.join("s/app");
    let ok = run(Command::new("objcopy")
        .arg("--only-keep-debug")
        .arg(&bin)
        .arg(&debug))
        && run(Command::new("objcopy")
            .arg("--strip-debug")
            .arg(format!("--add-gnu-debuglink={}", debug.display()))
            .arg(&bin)
            .arg(&stripped));
    ok.then_some((bin, stripped, debug))
}

fn dynprobe(args: &[&str]) -> Output {
    let cache = std::env::temp_dir().join(format!("dynprobe-x-src-cache-{}", std::process::id()));
    Command::new(env!("CARGO_BIN_EXE_dynprobe"))
        .args(args)
        .env("DYNPROBE_TRACEFS", "/nonexistent")
        .env("XDG_CACHE_HOME", cache)
        .output()
        .unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// `add -D -x BIN LINE`'s lines, BIN's path made `BIN`.
fn lines(bin: &Path, extra: &[&str], line: &str) -> Vec<String> {
    let b = bin.to_str().unwrap();
    let mut args = vec!["add", "-D", "-x", b];
    args.extend_from_slice(extra);
    args.push(line);
    let out = dynprobe(&args);
    assert!(out.status.success(), "{line}: {}", text(&out.stderr));
    let real = fs::canonicalize(bin).unwrap();
    text(&out.stdout)
        .lines()
        .map(|l| l.replace(real.to_str().unwrap(), "BIN"))
        .collect()
}

fn hex_after(line: &str, key: &str) -> u64 {
    let at = line.find(key).unwrap() + key.len();
    let h: String = line[at..]
        .chars()
        .take_while(|c| c.is_ascii_hexdigit())
        .collect();
    u64::from_str_radix(&h, 16).unwrap()
}

#[test]
fn places_and_variables_of_a_user_binary() {
    let Some((bin, stripped, debug)) = built() else {
        eprintln!("no cc/objcopy: skipped");
        return;
    };
    let bytes = fs::read(&bin).unwrap();
    let elf = Elf::parse(&bytes).unwrap();
    let step = elf.resolve(b"step").unwrap();
    let total = elf.lookup_variable(b"total").unwrap();

    // The entry and %return: the symbol's file offset.
    let entry = lines(&bin, &[], "step");
    assert_eq!(entry.len(), 1);
    assert_eq!(hex_after(&entry[0], "BIN:0x"), step.offset);
    assert!(entry[0].starts_with("p:probe_app/step BIN:0x"), "{entry:?}");
    let ret = lines(&bin, &[], "step%return $retval");
    assert_eq!(
        ret,
        [format!(
            "r:probe_app/step__return BIN:{:#x} $retval",
            step.offset
        )]
    );
    // With variables, after the prologue (no optimization), where the
    // parameters are in their stack slots below the frame pointer.
    let vars = lines(&bin, &[], "step p k");
    assert!(hex_after(&vars[0], "BIN:0x") > step.offset, "{vars:?}");
    assert!(
        vars[0].contains(" p=-") && vars[0].ends_with("(%bp):s32"),
        "{vars:?}"
    );
    // A line, a member through a pointer, a local.
    // (gcc may give the line two rows: one event, one probe each.)
    let l3 = lines(&bin, &[], "step:2 sum p->y k");
    assert!(!l3.is_empty(), "{l3:?}");
    let words: Vec<&str> = l3[0].split(' ').collect();
    assert!(words[0] == "p:probe_app/step_L2", "{l3:?}");
    assert!(words[2].starts_with("sum=-") && words[2].ends_with("(%bp):s32"));
    assert!(words[3].starts_with("y=+4(-") && words[3].ends_with("(%bp)):s32"));
    // A global: @+OFFS as the kernel's uprobes count it, from the
    // probe's address less its file offset.
    let g = lines(&bin, &[], "step:4 total");
    let at = hex_after(&g[0], "BIN:0x");
    let bias = step.function.address - step.offset;
    assert!(
        g[0].ends_with(&format!(" total=@+{}:s64", total.address - bias)),
        "{g:?} at {at:#x}"
    );

    // The stripped copy: the same lines from .debug/app.debug by its
    // debug link, and from --debuginfo.
    for l in ["step:2 sum p->y k", "step p k", "step:4 total"] {
        let want = lines(&bin, &[], l);
        assert_eq!(lines(&stripped, &[], l), want, "{l}");
        let d = debug.to_str().unwrap();
        assert_eq!(lines(&stripped, &["--debuginfo", d], l), want, "{l}");
    }

    // list --line and --vars read the binary's DWARF too.
    let b = bin.to_str().unwrap();
    let out = dynprobe(&["list", "-x", b, "--line", "step"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let l = text(&out.stdout);
    assert!(l.contains("int sum = p->x + k;"), "{l}");
    let out = dynprobe(&["list", "-x", b, "--vars", "step:2"]);
    let v = text(&out.stdout);
    assert!(v.contains("int\tsum") && v.contains("struct pt*\tp"), "{v}");

    // No debug info: the reason and what to do.
    let bare = stripped.with_file_name("bare");
    assert!(run(Command::new("objcopy")
        .arg("--strip-debug")
        .arg(&bin)
        .arg(&bare)));
    let out = dynprobe(&["add", "-D", "-x", bare.to_str().unwrap(), "step:2 sum"]);
    let e = text(&out.stderr);
    assert!(!out.status.success());
    assert!(
        e.contains("no debug info (.debug_info)") && e.contains("--debuginfo FILE"),
        "{e}"
    );
    // A truncated debug file: an error, never a panic.
    let dbytes = fs::read(&debug).unwrap();
    let cut = debug.with_file_name("cut.debug");
    for n in [0, 64, dbytes.len() / 3, dbytes.len() / 2, dbytes.len() - 1] {
        fs::write(&cut, &dbytes[..n]).unwrap();
        let out = dynprobe(&[
            "add",
            "-D",
            "-x",
            stripped.to_str().unwrap(),
            "--debuginfo",
            cut.to_str().unwrap(),
            "step:2 sum p->y",
        ]);
        assert_ne!(out.status.code(), Some(101), "cut at {n}: panicked");
    }
    let _ = fs::remove_dir_all(bin.parent().unwrap());
}
