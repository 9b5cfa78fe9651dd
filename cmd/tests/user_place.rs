// SPDX-License-Identifier: GPL-2.0
//! `-x BIN` at work on the host: `dynprobe add --dry-run -x` and
//! `dynprobe check -x` on a program this test compiles (SDT markers with
//! and without a semaphore, one at two places, one whose argument no
//! fetch can read, and functions), checked against the offsets the
//! language's ELF reader gives, and on the host's own python3 when its
//! build has SDT markers.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use dynprobe_lang::elf::Elf;

/// sys/sdt.h's note for one marker, written out (the host may not have
/// sys/sdt.h): PROVIDER, NAME, semaphore symbol (or 0), argument specs.
fn marker(provider: &str, name: &str, semaphore: &str, args: &str) -> String {
    format!(
        r#"	__asm__ __volatile__ (
		"990: nop\n"
		".pushsection .note.stapsdt,\"?\",\"note\"\n"
		".balign 4\n"
		".4byte 992f-991f, 994f-993f, 3\n"
		"991: .asciz \"stapsdt\"\n"
		"992: .balign 4\n"
		"993: .8byte 990b\n"
		".8byte _.stapsdt.base\n"
		".8byte {semaphore}\n"
		".asciz \"{provider}\"\n"
		".asciz \"{name}\"\n"
		".asciz \"{args}\"\n"
		"994: .balign 4\n"
		".popsection\n"
		".ifndef _.stapsdt.base\n"
		".pushsection .stapsdt.base,\"aG\",\"progbits\",.stapsdt.base,comdat\n"
		".weak _.stapsdt.base\n"
		".hidden _.stapsdt.base\n"
		"_.stapsdt.base: .space 1\n"
		".size _.stapsdt.base, 1\n"
		".popsection\n"
		".endif\n");
"#
    )
}

fn program() -> String {
    format!(
        r#"
unsigned short app_tick_semaphore __attribute__((section(".probes"), used));
long counter;
int __attribute__((noinline)) work(int a, long b)
{{
{}{}
	return a + (int)b;
}}
int __attribute__((noinline)) other(int a)
{{
{}{}
	return a * 3;
}}
int main(int argc, char **argv) {{ (void)argv; return work(argc, 2) + other(argc) == 7; }}
"#,
        marker(
            "app",
            "tick",
            "app_tick_semaphore",
            "-4@-20(%rbp) 8@%rsi -8@counter(%rip)"
        ),
        marker("app", "plain", "0", "-4@$5 1@%dil"),
        marker(
            "app",
            "tick",
            "app_tick_semaphore",
            "-4@-20(%rbp) 8@%rsi -8@counter(%rip)"
        ),
        marker("app", "bad", "0", "8@16(%rax,%rbx,8)"),
    )
}

/// The program compiled in a directory of its own; `None` without cc.
fn compiled(name: &str) -> Option<(PathBuf, PathBuf)> {
    let dir = std::env::temp_dir().join(format!("dynprobe-{name}-{}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap();
    let src = dir.join("app.c");
    let bin = dir.join("my-app.bin");
    fs::write(&src, program()).unwrap();
    let status = Command::new("cc")
        .args(["-O1", "-o"])
        .arg(&bin)
        .arg(&src)
        .status()
        .ok()?;
    assert!(status.success());
    Some((dir, bin))
}

fn dynprobe(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_dynprobe"))
        .args(args)
        .env("DYNPROBE_TRACEFS", "/nonexistent")
        .output()
        .unwrap()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

struct Offsets {
    work: u64,
    tick: Vec<u64>,
    plain: u64,
    semaphore: u64,
    counter_at: Vec<u64>,
}

fn offsets(bin: &Path) -> Offsets {
    let bytes = fs::read(bin).unwrap();
    let elf = Elf::parse(&bytes).unwrap();
    let counter = elf.lookup_variable(b"counter").unwrap();
    let mut o = Offsets {
        work: elf.resolve(b"work").unwrap().offset,
        tick: Vec::new(),
        plain: 0,
        semaphore: 0,
        counter_at: Vec::new(),
    };
    for n in elf.sdt_notes().unwrap() {
        let n = n.unwrap();
        match n.name {
            b"tick" => {
                o.tick.push(n.pc_offset);
                o.semaphore = n.semaphore_offset.unwrap();
                o.counter_at.push(counter.address - n.pc + n.pc_offset);
            }
            b"plain" => o.plain = n.pc_offset,
            _ => {}
        }
    }
    o
}

#[test]
fn sdt_markers_and_functions() {
    let Some((dir, bin)) = compiled("x-add") else {
        eprintln!("no cc: skipped");
        return;
    };
    let o = offsets(&bin);
    let path = fs::canonicalize(&bin).unwrap();
    let p = path.display().to_string();
    let b = bin.to_str().unwrap();

    // An SDT marker at two places: two probes of one event, perf's
    // sdt_PROVIDER/NAME, the semaphore as the reference counter, the
    // specs as fetch arguments named arg1..argN.
    let out = dynprobe(&["add", "--dry-run", "--no-check", "-x", b, "sdt:app:tick"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let want: Vec<String> = o
        .tick
        .iter()
        .zip(&o.counter_at)
        .enumerate()
        .map(|(i, (pc, at))| {
            format!(
                "uprobe_events: p:sdt_app/tick {p}:{pc:#x}({:#x}) arg1=-20(%bp):s32 arg2=%si:u64 arg3=@+{at}:s64  \
                 # sdt app:tick ({} of 2) at {pc:#x}, semaphore at {:#x}",
                o.semaphore,
                i + 1,
                o.semaphore
            )
        })
        .collect();
    assert_eq!(stdout(&out).lines().collect::<Vec<_>>(), want);
    // perf's spelling, and a name given.
    let perf = dynprobe(&["add", "--dry-run", "--no-check", "-x", b, "%sdt_app:tick"]);
    assert_eq!(stdout(&perf), stdout(&out));
    let out = dynprobe(&["add", "--dry-run", "-x", b, "grp:ev=%app:plain"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        stdout(&out),
        format!(
            "uprobe_events: p:grp/ev {p}:{:#x} arg1=\\5:s32 arg2=%di:u8  # sdt app:plain at {:#x}\n",
            o.plain, o.plain
        )
    );
    // The host check (the module's parser) takes the lines.
    let out = dynprobe(&["check", "-x", b, "sdt:app:tick", "sdt:plain"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out).lines().count(), 3);

    // Refusals: with why.
    let out = dynprobe(&["add", "--dry-run", "-x", b, "sdt:app:bad"]);
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains(
            "SDT marker app:bad: argument 1 `8@16(%rax,%rbx,8)`: SDT argument uses indexed addressing"
        ),
        "{}",
        stderr(&out)
    );
    let out = dynprobe(&["add", "--dry-run", "-x", b, "sdt:app:nothing"]);
    assert!(
        stderr(&out).contains("no SDT marker app:nothing"),
        "{}",
        stderr(&out)
    );
    let out = dynprobe(&["add", "--dry-run", "-x", b, "sdt:app:tick", "%di"]);
    assert!(!out.status.success());
    let out = dynprobe(&["add", "--dry-run", "sdt:app:tick"]);
    assert!(stderr(&out).contains("-x BIN"), "{}", stderr(&out));

    // perf probe's form for functions: group probe_BINNAME, the file
    // offset written, fetch arguments as written.
    let out = dynprobe(&[
        "add",
        "--dry-run",
        "-x",
        b,
        "work a=%di:s32 b=%si:s64",
        "work%return $retval",
        "work+1",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        stdout(&out),
        format!(
            "uprobe_events: p:probe_my/work {p}:{w:#x} a=%di:s32 b=%si:s64  # work at {w:#x}\n\
             uprobe_events: r:probe_my/work__return {p}:{w:#x} $retval  # work%return at {w:#x}\n\
             uprobe_events: p:probe_my/work_1 {p}:{w1:#x}  # work+1 at {w1:#x}\n",
            w = o.work,
            w1 = o.work + 1
        )
    );
    let out = dynprobe(&["check", "-x", b, "e=work %di", "work%return $retval"]);
    assert!(out.status.success(), "{}", stderr(&out));
    // The module's parser refuses what a uprobe cannot fetch, with its
    // error_log entry.
    let out = dynprobe(&["check", "-x", b, "work @jiffies"]);
    assert!(!out.status.success());
    assert!(
        stderr(&out).starts_with("trace_uprobe: error: "),
        "{}",
        stderr(&out)
    );
    let out = dynprobe(&["add", "--dry-run", "-x", b, "no_such_function"]);
    assert!(
        stderr(&out).contains("no_such_function: no such function in the symbol tables"),
        "{}",
        stderr(&out)
    );
    // A source place reads the binary's DWARF: none here, and the
    // error says what to install.
    let out = dynprobe(&["add", "--dry-run", "-x", b, "work:3"]);
    assert!(
        stderr(&out).contains("no debug info (.debug_info)") && stderr(&out).contains("-dbgsym"),
        "{}",
        stderr(&out)
    );
    let out = dynprobe(&["add", "--dry-run", "-x", "/nonexistent/bin", "work"]);
    assert!(
        stderr(&out).contains("/nonexistent/bin: "),
        "{}",
        stderr(&out)
    );
    fs::remove_dir_all(&dir).ok();
}

/// A Debian binary with SDT markers with semaphores: python3 (when the
/// host's build has them).
#[test]
fn python_markers() {
    let Ok(path) = fs::canonicalize("/usr/bin/python3") else {
        return;
    };
    let bytes = fs::read(&path).unwrap();
    let Ok(elf) = Elf::parse(&bytes) else { return };
    let Some(note) = elf
        .sdt_notes()
        .unwrap()
        .map(Result::unwrap)
        .find(|n| n.name == b"function__entry" || n.name == b"gc__start")
    else {
        eprintln!("no SDT markers in python3: skipped");
        return;
    };
    let name = String::from_utf8_lossy(note.name).into_owned();
    let out = dynprobe(&[
        "check",
        "-x",
        "/usr/bin/python3",
        &format!("sdt:python:{name}"),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let line = stdout(&out);
    assert!(
        line.starts_with(&format!(
            "uprobe_events: p:sdt_python/{name} {}:{:#x}({:#x}) arg1=",
            path.display(),
            note.pc_offset,
            note.semaphore_offset.unwrap()
        )),
        "{line}"
    );
}
