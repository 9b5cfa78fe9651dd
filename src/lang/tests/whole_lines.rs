// SPDX-License-Identifier: GPL-2.0
//! Whole lines in each control file: blank lines, comments, removals,
//! reserved argument names and characters the kernel's `isspace()` takes
//! that Rust's ASCII whitespace does not (`\x0b`). Each line's outcome in
//! kprobe_events, dynamic_events and function_events is pinned, with the
//! error's code, caret column, errno, subsystem, whether error_log gets it
//! and the command text error_log shows.

use super::common::*;
use dynprobe_lang::*;

fn outcome(control: Control, line: &[u8]) -> String {
    let mut d = Box::new(Definition::new());
    let parsed = parse(control, line, &FakeKernel, &mut d);
    // A removal parses the same without a definition (the control files
    // remove without allocating one); nothing else is taken for one.
    match parse_removal(control, line) {
        Some(removal) => assert_eq!(removal, parsed, "{control:?} {line:?}"),
        None => assert!(
            !matches!(parsed, Ok(Command::Remove { .. })),
            "{control:?} {line:?}"
        ),
    }
    match parsed {
        Ok(Command::Remove { group, event, args }) => format!(
            "remove {group:?} {event:?} {:?}",
            String::from_utf8_lossy(args)
        ),
        Ok(Command::Define) => {
            let mut s = String::new();
            d.view().canonical(&mut s).unwrap();
            format!("define {s}")
        }
        Ok(Command::Nothing) => "nothing".into(),
        Err(e) => {
            // Shown as UTF-8, or byte by byte (Latin-1) when it is not.
            let shown = match String::from_utf8(command_bytes(&e, line)) {
                Ok(s) => s,
                Err(b) => b.into_bytes().iter().map(|&c| char::from(c)).collect(),
            };
            format!(
                "error {:?} col {} errno {} {} logged {} cmd {:?}",
                e.code,
                e.column,
                e.errno,
                e.subsystem.name(),
                e.logged,
                shown
            )
        }
    }
}

/// A line and its outcome in kprobe_events, dynamic_events and
/// function_events.
const CASES: &[(&[u8], [&str; 3])] = &[
    (
        b"-:ev",
        [
            "remove None \"ev\" \"\"",
            "remove None \"ev\" \"\"",
            "remove None \"ev\" \"\"",
        ],
    ),
    (
        b"-:grp/ev vfs_read a=%di",
        [
            "remove Some(\"grp\") \"ev\" \" vfs_read a=%di\"",
            "remove Some(\"grp\") \"ev\" \" vfs_read a=%di\"",
            "remove Some(\"grp\") \"ev\" \" vfs_read a=%di\"",
        ],
    ),
    (
        b"-:grp/",
        [
            "remove Some(\"grp\") \"\" \"\"",
            "remove Some(\"grp\") \"\" \"\"",
            "remove Some(\"grp\") \"\" \"\"",
        ],
    ),
    (
        b"-:",
        [
            "error NoEventName col 0 errno 22 trace_kprobe logged false cmd \"-:\"",
            "error NoEventName col 0 errno 22 dynevent logged false cmd \"-:\"",
            "error NoEventName col 1 errno 22 function_events logged true cmd \"-:\"",
        ],
    ),
    (
        b"-",
        [
            "error NoEventName col 0 errno 22 trace_kprobe logged false cmd \"-\"",
            "error NoEventName col 0 errno 22 dynevent logged false cmd \"-\"",
            "error NoEventName col 1 errno 22 function_events logged true cmd \"-\"",
        ],
    ),
    (
        b"-foo",
        [
            "error NoEventName col 0 errno 22 trace_kprobe logged false cmd \"-foo\"",
            "error NoEventName col 0 errno 22 dynevent logged false cmd \"-foo\"",
            "remove None \"foo\" \"\"",
        ],
    ),
    (
        b"-:/",
        [
            "remove Some(\"\") \"\" \"\"",
            "remove Some(\"\") \"\" \"\"",
            "remove Some(\"\") \"\" \"\"",
        ],
    ),
    (
        b"-:a/b/c",
        [
            "remove Some(\"a\") \"b/c\" \"\"",
            "remove Some(\"a\") \"b/c\" \"\"",
            "remove Some(\"a\") \"b/c\" \"\"",
        ],
    ),
    (
        b"!p:ev vfs_read",
        [
            "error NoMatchingType col 0 errno 22 trace_kprobe logged false cmd \"!p:ev vfs_read\"",
            "remove None \"ev\" \" vfs_read\"",
            "remove None \"p:ev\" \" vfs_read\"",
        ],
    ),
    (
        b"!ev",
        [
            "error NoMatchingType col 0 errno 22 trace_kprobe logged false cmd \"!ev\"",
            "error NoEventName col 0 errno 22 dynevent logged false cmd \"!ev\"",
            "remove None \"ev\" \"\"",
        ],
    ),
    (
        b"!:ev",
        [
            "error NoMatchingType col 0 errno 22 trace_kprobe logged false cmd \"!:ev\"",
            "remove None \"ev\" \"\"",
            "remove None \"ev\" \"\"",
        ],
    ),
    (
        b"!",
        [
            "error NoMatchingType col 0 errno 22 trace_kprobe logged false cmd \"!\"",
            "error NoEventName col 0 errno 22 dynevent logged false cmd \"!\"",
            "error NoEventName col 1 errno 22 function_events logged true cmd \"!\"",
        ],
    ),
    (
        b"!:",
        [
            "error NoMatchingType col 0 errno 22 trace_kprobe logged false cmd \"!:\"",
            "error NoEventName col 0 errno 22 dynevent logged false cmd \"!:\"",
            "error NoEventName col 1 errno 22 function_events logged true cmd \"!:\"",
        ],
    ),
    (
        b"!p:grp/",
        [
            "error NoMatchingType col 0 errno 22 trace_kprobe logged false cmd \"!p:grp/\"",
            "remove Some(\"grp\") \"\" \"\"",
            "remove Some(\"p:grp\") \"\" \"\"",
        ],
    ),
    (
        b"  -:ev  vfs_read   a=1  ",
        [
            "remove None \"ev\" \"  vfs_read   a=1  \"",
            "remove None \"ev\" \"  vfs_read   a=1  \"",
            "remove None \"ev\" \"  vfs_read   a=1  \"",
        ],
    ),
    (
        b"\t-:ev\tx",
        [
            "remove None \"ev\" \"\\tx\"",
            "remove None \"ev\" \"\\tx\"",
            "remove None \"ev\" \"\\tx\"",
        ],
    ),
    (
        b"-:g/e#comment",
        [
            "remove Some(\"g\") \"e\" \"\"",
            "remove Some(\"g\") \"e\" \"\"",
            "remove Some(\"g\") \"e\" \"\"",
        ],
    ),
    (
        b"-:\xff",
        [
            "error NoEventName col 0 errno 22 trace_kprobe logged false cmd \"-:ÿ\"",
            "error NoEventName col 0 errno 22 dynevent logged false cmd \"-:ÿ\"",
            "error BadEventName col 0 errno 22 function_events logged true cmd \"-:ÿ\"",
        ],
    ),
    (
        b"-:g\xff/e",
        [
            "error NoEventName col 0 errno 22 trace_kprobe logged false cmd \"-:gÿ/e\"",
            "error NoEventName col 0 errno 22 dynevent logged false cmd \"-:gÿ/e\"",
            "error BadEventName col 0 errno 22 function_events logged true cmd \"-:gÿ/e\"",
        ],
    ),
    (
        b"-\xff",
        [
            "error NoEventName col 0 errno 22 trace_kprobe logged false cmd \"-ÿ\"",
            "error NoEventName col 0 errno 22 dynevent logged false cmd \"-ÿ\"",
            "error BadEventName col 0 errno 22 function_events logged true cmd \"-ÿ\"",
        ],
    ),
    (
        b"!\xff:e",
        [
            "error NoMatchingType col 0 errno 22 trace_kprobe logged false cmd \"!ÿ:e\"",
            "remove None \"e\" \"\"",
            "error BadEventName col 0 errno 22 function_events logged true cmd \"!ÿ:e\"",
        ],
    ),
    (
        b"-:ev#",
        [
            "remove None \"ev\" \"\"",
            "remove None \"ev\" \"\"",
            "remove None \"ev\" \"\"",
        ],
    ),
    (
        b"#-:ev",
        [
            "nothing",
            "nothing",
            "nothing",
        ],
    ),
    (
        b" \x0b-:ev",
        [
            "remove None \"ev\" \"\"",
            "remove None \"ev\" \"\"",
            "remove None \"ev\" \"\"",
        ],
    ),
    (
        b"-:ev\x0bx y",
        [
            "remove None \"ev\" \"\\u{b}x y\"",
            "remove None \"ev\" \"\\u{b}x y\"",
            "remove None \"ev\" \"\\u{b}x y\"",
        ],
    ),
    (
        b"-\x0b:ev",
        [
            "error NoEventName col 0 errno 22 trace_kprobe logged false cmd \"- :ev\"",
            "error NoEventName col 0 errno 22 dynevent logged false cmd \"-\\u{b}:ev\"",
            "error NoEventName col 1 errno 22 function_events logged true cmd \"-\\u{b}:ev\"",
        ],
    ),
    (
        b"- :ev",
        [
            "error NoEventName col 0 errno 22 trace_kprobe logged false cmd \"- :ev\"",
            "error NoEventName col 0 errno 22 dynevent logged false cmd \"- :ev\"",
            "error NoEventName col 1 errno 22 function_events logged true cmd \"- :ev\"",
        ],
    ),
    (
        b"-:ev\x00x",
        [
            "remove None \"ev\\0x\" \"\"",
            "remove None \"ev\\0x\" \"\"",
            "remove None \"ev\\0x\" \"\"",
        ],
    ),
    (
        b"\x00",
        [
            "error NoMatchingType col 0 errno 22 trace_kprobe logged false cmd \"\\0\"",
            "error NoMatchingType col 0 errno 22 dynevent logged true cmd \"\\0\"",
            "nothing",
        ],
    ),
    (
        b" \x00 p",
        [
            "error NoMatchingType col 0 errno 22 trace_kprobe logged false cmd \"\\0 p\"",
            "error NoMatchingType col 0 errno 22 dynevent logged true cmd \" \\0 p\"",
            "nothing",
        ],
    ),
    (
        b"",
        [
            "nothing",
            "nothing",
            "nothing",
        ],
    ),
    (
        b"   ",
        [
            "nothing",
            "nothing",
            "nothing",
        ],
    ),
    (
        b"#",
        [
            "nothing",
            "nothing",
            "nothing",
        ],
    ),
    (
        b" # x",
        [
            "nothing",
            "nothing",
            "nothing",
        ],
    ),
    (
        b"\x0b",
        [
            "nothing",
            "nothing",
            "nothing",
        ],
    ),
    (
        b"\r",
        [
            "nothing",
            "nothing",
            "nothing",
        ],
    ),
    (
        b"x",
        [
            "error NoMatchingType col 0 errno 22 trace_kprobe logged false cmd \"x\"",
            "error NoMatchingType col 0 errno 22 dynevent logged true cmd \"x\"",
            "error FeNoOpenParen col 1 errno 22 function_events logged true cmd \"x\"",
        ],
    ),
    (
        b"p",
        [
            "error NoMatchingType col 0 errno 22 trace_kprobe logged false cmd \"p\"",
            "error NoMatchingType col 0 errno 22 dynevent logged true cmd \"p\"",
            "error FeNoOpenParen col 1 errno 22 function_events logged true cmd \"p\"",
        ],
    ),
    (
        b"p:ev",
        [
            "error NoMatchingType col 0 errno 22 trace_kprobe logged false cmd \"p:ev\"",
            "error NoMatchingType col 0 errno 22 dynevent logged true cmd \"p:ev\"",
            "error FeNoOpenParen col 4 errno 22 function_events logged true cmd \"p:ev\"",
        ],
    ),
    (
        b"p:ev vfs_read #c",
        [
            "define p:kprobes/ev vfs_read",
            "define p:kprobes/ev vfs_read",
            "error FeNoOpenParen col 5 errno 22 function_events logged true cmd \"p:ev vfs_read \"",
        ],
    ),
    (
        b"p:ev\x0bvfs_read",
        [
            "define p:kprobes/ev vfs_read",
            "define p:kprobes/ev vfs_read",
            "error FeNoOpenParen col 5 errno 22 function_events logged true cmd \"p:ev\\u{b}vfs_read\"",
        ],
    ),
    (
        b"p:ev  vfs_read\t%di:x9 #c",
        [
            "error BadType col 18 errno 22 trace_kprobe logged true cmd \"p:ev vfs_read %di:x9\"",
            "error BadType col 18 errno 22 trace_kprobe logged true cmd \"p:ev vfs_read %di:x9\"",
            "error FeNoOpenParen col 6 errno 22 function_events logged true cmd \"p:ev  vfs_read\\t%di:x9 \"",
        ],
    ),
    (
        b"p:ev vfs_read %di:x9#c",
        [
            "error BadType col 18 errno 22 trace_kprobe logged true cmd \"p:ev vfs_read %di:x9\"",
            "error BadType col 18 errno 22 trace_kprobe logged true cmd \"p:ev vfs_read %di:x9\"",
            "error FeNoOpenParen col 5 errno 22 function_events logged true cmd \"p:ev vfs_read %di:x9\"",
        ],
    ),
    (
        b"vfs_read(",
        [
            "error NoMatchingType col 0 errno 22 trace_kprobe logged false cmd \"vfs_read(\"",
            "error NoMatchingType col 0 errno 22 dynevent logged true cmd \"vfs_read(\"",
            "error BadType col 9 errno 22 function_events logged true cmd \"vfs_read(\"",
        ],
    ),
    (
        b"vfs_read(int a) #c",
        [
            "error NoMatchingType col 0 errno 22 trace_kprobe logged false cmd \"vfs_read(int a)\"",
            "error NoMatchingType col 0 errno 22 dynevent logged true cmd \"vfs_read(int a) \"",
            "define vfs_read(int a)",
        ],
    ),
    (
        b" vfs_read ( int a , x64 b ) -> int r # c",
        [
            "error NoMatchingType col 0 errno 22 trace_kprobe logged false cmd \"vfs_read ( int a , x64 b ) -> int r\"",
            "error NoMatchingType col 0 errno 22 dynevent logged true cmd \" vfs_read ( int a , x64 b ) -> int r \"",
            "define vfs_read(int a, x64 b) -> int r",
        ],
    ),
    (
        b"vfs_read(int a)#",
        [
            "error NoMatchingType col 0 errno 22 trace_kprobe logged false cmd \"vfs_read(int a)\"",
            "error NoMatchingType col 0 errno 22 dynevent logged true cmd \"vfs_read(int a)\"",
            "define vfs_read(int a)",
        ],
    ),
    (
        b"vfs_read(\x0bint a)",
        [
            "error NoMatchingType col 0 errno 22 trace_kprobe logged false cmd \"vfs_read( int a)\"",
            "error NoMatchingType col 0 errno 22 dynevent logged true cmd \"vfs_read(\\u{b}int a)\"",
            "define vfs_read(int a)",
        ],
    ),
    (
        b"vfs_read(int a\x0b)",
        [
            "error NoMatchingType col 0 errno 22 trace_kprobe logged false cmd \"vfs_read(int a )\"",
            "error NoMatchingType col 0 errno 22 dynevent logged true cmd \"vfs_read(int a\\u{b})\"",
            "define vfs_read(int a)",
        ],
    ),
    (
        b"vfs_read(int common_pid)",
        [
            "error NoMatchingType col 0 errno 22 trace_kprobe logged false cmd \"vfs_read(int common_pid)\"",
            "error NoMatchingType col 0 errno 22 dynevent logged true cmd \"vfs_read(int common_pid)\"",
            "error UsedArgName col 13 errno 22 function_events logged true cmd \"vfs_read(int common_pid)\"",
        ],
    ),
    (
        b"vfs_read(int __ip)",
        [
            "error NoMatchingType col 0 errno 22 trace_kprobe logged false cmd \"vfs_read(int __ip)\"",
            "error NoMatchingType col 0 errno 22 dynevent logged true cmd \"vfs_read(int __ip)\"",
            "error UsedArgName col 13 errno 22 function_events logged true cmd \"vfs_read(int __ip)\"",
        ],
    ),
    (
        b"vfs_read(int __probe_ip)",
        [
            "error NoMatchingType col 0 errno 22 trace_kprobe logged false cmd \"vfs_read(int __probe_ip)\"",
            "error NoMatchingType col 0 errno 22 dynevent logged true cmd \"vfs_read(int __probe_ip)\"",
            "define vfs_read(int __probe_ip)",
        ],
    ),
    (
        b"p vfs_read __ip=%di",
        [
            "define p:kprobes/p_vfs_read_0 vfs_read __ip=%di",
            "define p:kprobes/p_vfs_read_0 vfs_read __ip=%di",
            "error FeNoOpenParen col 2 errno 22 function_events logged true cmd \"p vfs_read __ip=%di\"",
        ],
    ),
    (
        b"p vfs_read __probe_ip=%di",
        [
            "error UsedArgName col 11 errno 22 trace_kprobe logged true cmd \"p vfs_read __probe_ip=%di\"",
            "error UsedArgName col 11 errno 22 trace_kprobe logged true cmd \"p vfs_read __probe_ip=%di\"",
            "error FeNoOpenParen col 2 errno 22 function_events logged true cmd \"p vfs_read __probe_ip=%di\"",
        ],
    ),
    (
        b"p vfs_read common_pid=%di",
        [
            "error UsedArgName col 11 errno 22 trace_kprobe logged true cmd \"p vfs_read common_pid=%di\"",
            "error UsedArgName col 11 errno 22 trace_kprobe logged true cmd \"p vfs_read common_pid=%di\"",
            "error FeNoOpenParen col 2 errno 22 function_events logged true cmd \"p vfs_read common_pid=%di\"",
        ],
    ),
    (
        b"p vfs_read __parent_ip=%di",
        [
            "define p:kprobes/p_vfs_read_0 vfs_read __parent_ip=%di",
            "define p:kprobes/p_vfs_read_0 vfs_read __parent_ip=%di",
            "error FeNoOpenParen col 2 errno 22 function_events logged true cmd \"p vfs_read __parent_ip=%di\"",
        ],
    ),
    (
        b"f:ev vfs_read common_tgid=$arg1",
        [
            "error NoMatchingType col 0 errno 22 trace_kprobe logged false cmd \"f:ev vfs_read common_tgid=$arg1\"",
            "error UsedArgName col 14 errno 22 trace_fprobe logged true cmd \"f:ev vfs_read common_tgid=$arg1\"",
            "error FeNoOpenParen col 5 errno 22 function_events logged true cmd \"f:ev vfs_read common_tgid=$arg1\"",
        ],
    ),
    (
        b"f:ev vfs_read __probe_func=$arg1",
        [
            "error NoMatchingType col 0 errno 22 trace_kprobe logged false cmd \"f:ev vfs_read __probe_func=$arg1\"",
            "error UsedArgName col 14 errno 22 trace_fprobe logged true cmd \"f:ev vfs_read __probe_func=$arg1\"",
            "error FeNoOpenParen col 5 errno 22 function_events logged true cmd \"f:ev vfs_read __probe_func=$arg1\"",
        ],
    ),
];

#[test]
fn whole_lines() {
    let controls = [
        Control::KprobeEvents,
        Control::DynamicEvents,
        Control::FunctionEvents,
    ];
    for (line, expected) in CASES {
        for (control, want) in controls.iter().zip(expected) {
            assert_eq!(
                outcome(*control, line),
                *want,
                "{control:?} {:?}",
                String::from_utf8_lossy(line)
            );
        }
    }
}

/// A write as the control files run it: read in pieces of at most 4095
/// bytes (the kernel's `WRITE_BUFSIZE - 1`), each starting at a line; the
/// lines cut from each piece. A piece whose first line goes on past it
/// holds a line too long to run.
fn write(data: &[u8]) -> Result<Vec<String>, &'static str> {
    const PIECE: usize = 4095;
    let mut lines = Vec::new();
    let mut done = 0;
    while done < data.len() {
        let piece = &data[done..(done + PIECE).min(data.len())];
        let ends_write = done + piece.len() == data.len();
        let mut used = 0;
        while used < piece.len() {
            match cut_line(&piece[used..], ends_write) {
                Cut::Line { text, used: n } => {
                    lines.push(String::from_utf8_lossy(text).into_owned());
                    used += n;
                }
                Cut::Unfinished => break,
                Cut::Nul => return Err("NUL"),
            }
        }
        if used == 0 {
            return Err("too long");
        }
        done += used;
    }
    Ok(lines)
}

#[test]
fn cutting_writes_into_lines() {
    assert_eq!(
        cut_line(b"a\nb", false),
        Cut::Line {
            text: b"a",
            used: 2
        }
    );
    assert_eq!(cut_line(b"b", false), Cut::Unfinished);
    assert_eq!(
        cut_line(b"b", true),
        Cut::Line {
            text: b"b",
            used: 1
        }
    );
    assert_eq!(cut_line(b"\n", false), Cut::Line { text: b"", used: 1 });
    assert_eq!(
        cut_line(b"p x # c\ny", false),
        Cut::Line {
            text: b"p x ",
            used: 8
        }
    );
    // A NUL byte fails the write, in a comment too, but not in a later
    // line of the buffer.
    assert_eq!(cut_line(b"a\0b\n", true), Cut::Nul);
    assert_eq!(cut_line(b"#\0\n", true), Cut::Nul);
    assert_eq!(
        cut_line(b"a\nb\0", true),
        Cut::Line {
            text: b"a",
            used: 2
        }
    );
    assert_eq!(cut_line(b"a\0", false), Cut::Unfinished);

    assert_eq!(
        write(b"a\n\nb # c\n#d\ne"),
        Ok(vec![
            "a".into(),
            "".into(),
            "b ".into(),
            "".into(),
            "e".into()
        ])
    );
    assert_eq!(write(b"a\nb\0\nc"), Err("NUL"));
    // A line with its newline fits in 4095 bytes, the last line of a
    // write in 4095 without one; a line that reaches past a piece boundary
    // starts the next piece.
    let mut data = vec![b'x'; 4094];
    data.push(b'\n');
    data.extend_from_slice(&[b'y'; 4095]);
    let lines = write(&data).unwrap();
    assert_eq!(
        (lines.len(), lines[0].len(), lines[1].len()),
        (2, 4094, 4095)
    );
    let mut data = vec![b'x'; 4095];
    data.push(b'\n');
    assert_eq!(write(&data), Err("too long"));
    let mut data = b"a\n".to_vec();
    data.extend_from_slice(&[b'y'; 4094]);
    data.extend_from_slice(b"\nb");
    assert_eq!(write(&data).unwrap().len(), 3);
}
