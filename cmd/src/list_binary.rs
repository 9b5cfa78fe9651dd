// SPDX-License-Identifier: GPL-2.0
//! `dynprobe list -x BIN`: a binary's functions and SDT markers, read
//! with the language crate's ELF reader (what a uprobe line on BIN can
//! name).

use std::fs;
use std::io::{self, Write};

use dynprobe_lang::elf::{Elf, ElfError, SdtArgs, SdtNote};

/// Whether a glob (or none) takes `name`.
fn takes(glob: Option<&str>, name: &str) -> bool {
    glob.is_none_or(|g| dynprobe_lang::glob_match(g.as_bytes(), name.as_bytes()))
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// One marker's line: `sdt PROVIDER:NAME(SPEC, ...)`, and with `verbose`
/// its offset, its semaphore's and each argument as a fetch argument.
fn marker_line(elf: &Elf<'_>, note: &SdtNote<'_>, verbose: bool) -> String {
    let specs: Vec<String> = SdtArgs::new(note.args)
        .map(|(spec, _)| text(spec))
        .collect();
    let mut line = format!(
        "sdt {}:{}({})",
        text(note.provider),
        text(note.name),
        specs.join(", ")
    );
    if !verbose {
        return line;
    }
    line += &format!(" at {:#x}", note.pc_offset);
    if let Some(sema) = note.semaphore_offset {
        line += &format!(", semaphore {sema:#x}");
    }
    let mut fetches = Vec::new();
    for (spec, arg) in SdtArgs::new(note.args) {
        let arg = match arg {
            Ok(arg) => arg,
            Err(e) => {
                fetches.push(format!("({}: {e})", text(spec)));
                continue;
            }
        };
        match crate::user_place::sdt_fetch(elf, note, &arg) {
            Ok(fetch) => fetches.push(fetch),
            Err(why) => fetches.push(format!("({}: {why})", text(spec))),
        }
    }
    if !fetches.is_empty() {
        line += ": ";
        line += &fetches.join(" ");
    }
    line
}

/// Writes the listing of the ELF file `bytes` to `out`: functions
/// (sorted by name, one line each offset), then SDT markers in note
/// order; the glob takes a function's name, a marker's PROVIDER:NAME or
/// NAME.
pub fn write_listing(
    bytes: &[u8],
    glob: Option<&str>,
    verbose: bool,
    out: &mut dyn Write,
) -> Result<(), ListError> {
    let elf = Elf::parse(bytes)?;
    let mut functions = Vec::new();
    for f in elf.functions()? {
        let f = f?;
        let name = text(f.name);
        if takes(glob, &name) || takes(glob, name.split('@').next().unwrap_or(&name)) {
            functions.push((name, f.offset, f.size, f.ifunc));
        }
    }
    functions.sort();
    functions.dedup();
    for (name, offset, size, ifunc) in functions {
        let mut line = format!("function {name}");
        if ifunc {
            line += " (ifunc)";
        }
        if verbose {
            match offset {
                Some(off) => line += &format!(" at {off:#x}, {size} bytes"),
                None => line += " (not in the file)",
            }
        }
        writeln!(out, "{line}")?;
    }
    for note in elf.sdt_notes()? {
        let note = note?;
        let (provider, name) = (text(note.provider), text(note.name));
        if !takes(glob, &format!("{provider}:{name}")) && !takes(glob, &name) {
            continue;
        }
        writeln!(out, "{}", marker_line(&elf, &note, verbose))?;
    }
    Ok(())
}

/// Why a listing stopped.
#[derive(Debug)]
pub enum ListError {
    /// The file was refused.
    Elf(ElfError),
    /// The output went away.
    Io(io::Error),
}

impl From<ElfError> for ListError {
    fn from(e: ElfError) -> Self {
        ListError::Elf(e)
    }
}

impl From<io::Error> for ListError {
    fn from(e: io::Error) -> Self {
        ListError::Io(e)
    }
}

/// Prints the listing of `path`; the exit status.
pub fn run(path: &str, glob: Option<&str>, verbose: bool) -> i32 {
    let bytes = match fs::read(path) {
        Ok(b) => b,
        Err(e) => {
            eprintln!("dynprobe: {path}: {e}");
            return 1;
        }
    };
    match write_listing(&bytes, glob, verbose, &mut io::stdout().lock()) {
        Ok(()) => 0,
        Err(ListError::Elf(e)) => {
            eprintln!("dynprobe: {path}: {e}");
            1
        }
        // `dynprobe list -x BIN | head` ends quietly.
        Err(ListError::Io(_)) => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Command;

    /// A program with a static and a global function, a variable and an
    /// SDT marker with a semaphore, written as sys/sdt.h writes it (the
    /// host may not have sys/sdt.h).
    const PROGRAM: &str = r#"
unsigned short app_tick_semaphore __attribute__((section(".probes"), used));
long counter;
static int __attribute__((noinline)) helper(int x) { return x * 3 + (int)counter; }
int __attribute__((noinline)) work(int a, long b)
{
	__asm__ __volatile__ (
		"990: nop\n"
		".pushsection .note.stapsdt,\"?\",\"note\"\n"
		".balign 4\n"
		".4byte 992f-991f, 994f-993f, 3\n"
		"991: .asciz \"stapsdt\"\n"
		"992: .balign 4\n"
		"993: .8byte 990b\n"
		".8byte _.stapsdt.base\n"
		".8byte app_tick_semaphore\n"
		".asciz \"app\"\n"
		".asciz \"tick\"\n"
		".asciz \"-4@%edi 8@%rsi -8@counter(%rip) 8@16(%rax,%rbx,8)\"\n"
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
	return helper(a) + (int)b;
}
int main(int argc, char **argv) { (void)argv; return work(argc, 2) == 7; }
"#;

    fn listing(bytes: &[u8], glob: Option<&str>, verbose: bool) -> String {
        let mut out = Vec::new();
        write_listing(bytes, glob, verbose, &mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn compiled_program() {
        let dir = std::env::temp_dir().join(format!("dynprobe-list-x-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let src = dir.join("app.c");
        let bin = dir.join("app");
        std::fs::write(&src, PROGRAM).unwrap();
        let Ok(status) = Command::new("cc")
            .args(["-O1", "-o"])
            .arg(&bin)
            .arg(&src)
            .status()
        else {
            eprintln!("no cc: skipped");
            return;
        };
        assert!(status.success());
        let bytes = std::fs::read(&bin).unwrap();
        let elf = Elf::parse(&bytes).unwrap();
        let work = elf.resolve(b"work").unwrap();
        let note = elf.sdt_notes().unwrap().next().unwrap().unwrap();
        let counter = elf.lookup_variable(b"counter").unwrap();

        let all = listing(&bytes, None, false);
        for line in [
            "function helper",
            "function main",
            "function work",
            "sdt app:tick(-4@%edi, 8@%rsi, -8@counter(%rip), 8@16(%rax,%rbx,8))",
        ] {
            assert!(all.lines().any(|l| l == line), "{line} not in\n{all}");
        }
        assert_eq!(listing(&bytes, Some("wor?"), false), "function work\n");
        assert_eq!(listing(&bytes, Some("nothing"), false), "");
        assert_eq!(
            listing(&bytes, Some("work"), true),
            format!(
                "function work at {:#x}, {} bytes\n",
                work.offset, work.function.size
            )
        );
        let counter_at = counter.address - note.pc + note.pc_offset;
        assert_eq!(
            listing(&bytes, Some("app:*"), true),
            format!(
                "sdt app:tick(-4@%edi, 8@%rsi, -8@counter(%rip), 8@16(%rax,%rbx,8)) \
                 at {:#x}, semaphore {:#x}: %di:s32 %si:u64 @+{counter_at}:s64 \
                 (8@16(%rax,%rbx,8): SDT argument uses indexed addressing, which a \
                 fetch cannot express)\n",
                note.pc_offset,
                note.semaphore_offset.unwrap()
            )
        );
        assert_eq!(listing(&bytes, Some("tick"), false).lines().count(), 1);
        std::fs::remove_dir_all(&dir).ok();
    }

    #[test]
    fn refused_files() {
        let mut out = Vec::new();
        let e = write_listing(b"#!/bin/sh\n", None, false, &mut out).unwrap_err();
        assert!(matches!(e, ListError::Elf(ElfError::Truncated)));
        let mut not_elf = vec![0u8; 64];
        not_elf[..4].copy_from_slice(b"\x7fELG");
        let e = write_listing(&not_elf, None, false, &mut out).unwrap_err();
        assert!(matches!(e, ListError::Elf(ElfError::BadMagic)));
        assert_eq!(run("/nonexistent/binary", None, false), 1);
    }
}
