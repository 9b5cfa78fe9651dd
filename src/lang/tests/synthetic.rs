// SPDX-License-Identifier: GPL-2.0
//! Synthetic event lines: what the kernel's `synthetic_events` and the `s:`
//! lines of `dynamic_events` accept, list and refuse, with the kernel's
//! error codes and carets (the cases of ftracetest's
//! trigger-synthetic_event_syntax_errors.tc and -syntax.tc among them).

use dynprobe_lang::*;

fn define(source: SynthSource, line: &str) -> SynthDef<'_> {
    match parse_synth(source, line.as_bytes()) {
        Ok(SynthCommand::Define(d)) => d,
        other => panic!("{line:?}: {other:?}"),
    }
}

fn listing(line: &str) -> String {
    let mut s = String::new();
    define(SynthSource::SyntheticEvents, line)
        .write_listing(&mut s)
        .unwrap();
    s
}

/// `^` marks the caret in `marked`, as ftracetest's ftrace_errlog_check.
fn refused(source: SynthSource, marked: &str, code: ErrorCode) {
    let column = marked.trim_start().find('^').unwrap();
    let line = marked.replace('^', "");
    let e = parse_synth(source, line.as_bytes()).unwrap_err();
    assert_eq!((e.code, e.column), (code, column), "{marked:?}");
    assert_eq!(e.subsystem, Subsystem::Synthetic);
    assert_eq!(e.errno, errno::EINVAL);
    assert!(e.logged);
    let mut cmd = Vec::new();
    write_command(&e, line.as_bytes(), &mut |b: &[u8]| {
        cmd.extend_from_slice(b);
        Ok(())
    })
    .unwrap();
    let cmd = String::from_utf8(cmd).unwrap();
    assert_eq!(cmd, line.trim_start());
}

#[test]
fn kernel_syntax_error_cases() {
    use ErrorCode::*;
    let s = SynthSource::SyntheticEvents;
    refused(s, "myevent ^chr arg", SynthInvalidType);
    refused(s, "myevent ^unsigned arg", SynthIncompleteType);
    refused(s, "myevent char ^str]; int v", SynthBadName);
    refused(s, "^mye-vent char str[]", SynthBadName);
    refused(s, "myevent char ^st-r[]", SynthBadName);
    refused(s, "myevent char str;^[]", SynthInvalidField);
    refused(s, "myevent char str; ^int", SynthInvalidField);
    refused(s, "myevent char ^str[; int v", SynthInvalidArraySpec);
    refused(s, "myevent char ^str[kdjdk]", SynthInvalidArraySpec);
    refused(s, "myevent char ^str[257]", SynthInvalidArraySpec);
    refused(s, "^mye;vent char str[]", SynthInvalidCmd);
    refused(s, "^myevent ; char str[]", SynthInvalidCmd);
    refused(s, "^myevent; char str[]", SynthInvalidCmd);
    refused(s, "^myevent ;char str[]", SynthInvalidCmd);
    refused(s, "^; char str[]", SynthInvalidCmd);
    refused(s, "^;myevent char str[]", SynthInvalidCmd);
    refused(s, "^myevent", SynthInvalidCmd);
    refused(
        SynthSource::DynamicEvents,
        "^s:junk/myevent char str[",
        SynthInvalidDynCmd,
    );
}

#[test]
fn more_refusals() {
    use ErrorCode::*;
    let s = SynthSource::SyntheticEvents;
    refused(s, "ev ^u64 a[4]", SynthInvalidType);
    refused(s, "ev ^u64 a; u64", SynthInvalidField);
    refused(s, "ev ^float x", SynthInvalidType);
    refused(s, "ev char ^s[0x10]", SynthInvalidArraySpec);
    refused(s, "ev char[4] ^s[2]", SynthInvalidArraySpec);
    refused(s, "ev ^char[4 s", SynthInvalidType);
    refused(s, "ev char ^s[1000]", SynthInvalidArraySpec);
    refused(s, "ev char ^s[4]x", SynthInvalidArraySpec);
    refused(s, "ev u64 ^9a", SynthBadName);
    // The caret goes under the word's first occurrence, as strstr() finds it.
    refused(s, "ev ^u64 a; u6 u64", SynthInvalidType);
    refused(SynthSource::DynamicEvents, "^s:ev", SynthInvalidCmd);
    refused(SynthSource::DynamicEvents, "^s:ev u64", SynthInvalidCmd);
    refused(SynthSource::DynamicEvents, "^s: u64 a", SynthInvalidCmd);
    refused(
        SynthSource::DynamicEvents,
        "^s:ev u64 a/b",
        SynthInvalidDynCmd,
    );
    refused(SynthSource::DynamicEvents, "s:^e-v u64 a", SynthBadName);
    refused(
        SynthSource::DynamicEvents,
        "s:synthetic/ev u64 ^-",
        SynthBadName,
    );
    // Leading blanks are not part of the command error_log shows.
    refused(s, "  ^myevent", SynthInvalidCmd);
}

#[test]
fn too_many_fields() {
    let mut line = String::from("ev");
    for i in 0..SYNTH_FIELDS_MAX {
        line += &format!(" u8 f{i};");
    }
    define(SynthSource::SyntheticEvents, &line);
    line += " u8 last";
    let e = parse_synth(SynthSource::SyntheticEvents, line.as_bytes()).unwrap_err();
    assert_eq!((e.code, e.column), (ErrorCode::SynthTooManyFields, 0));
}

#[test]
fn listings_are_the_kernels() {
    assert_eq!(listing("myevent u64 var1"), "myevent\tu64 var1");
    assert_eq!(
        listing("myevent u64 var1; u64 var2;"),
        "myevent\tu64 var1; u64 var2"
    );
    assert_eq!(
        listing("myevent u64 var1 ; u64 var2 ;"),
        "myevent\tu64 var1; u64 var2"
    );
    assert_eq!(
        listing("myevent u64 var1 ;u64 var2"),
        "myevent\tu64 var1; u64 var2"
    );
    // Several fields between semicolons: the old syntax, still accepted.
    assert_eq!(listing("ev u64 a u32 b"), "ev\tu64 a; u32 b");
    assert_eq!(
        listing("myevent unsigned long var"),
        "myevent\tunsigned long var"
    );
    assert_eq!(listing("myevent char var[10]"), "myevent\tchar[10] var");
    assert_eq!(
        listing("myevent unsigned long[] var"),
        "myevent\tunsigned long[] var"
    );
    assert_eq!(
        listing("ev char name[]; long[] stack"),
        "ev\tchar[] name; long[] stack"
    );
    assert_eq!(listing("  ev\tpid_t pid # comment"), "ev\tpid_t pid");
    // A listing defines the same event again.
    for line in [
        "ev u64 a; char s[16]; unsigned int u",
        "ev long[] st; char n[]",
    ] {
        let l = listing(line);
        assert_eq!(listing(&l), l);
    }
}

#[test]
fn storage_of_each_type() {
    let d = define(
        SynthSource::SyntheticEvents,
        "ev u64 a; s8 b; unsigned char c; gfp_t g; bool t; char s[0x9]; char n[]; \
         char z[0]; unsigned long[] st; long[4] st2",
    );
    let kinds: Vec<SynthStorage> = d.fields().map(|f| f.storage().unwrap()).collect();
    use SynthStorage::*;
    assert_eq!(
        kinds,
        [
            Fixed(8),
            Fixed(1),
            Fixed(1),
            Fixed(4),
            Fixed(1),
            String(9),
            DynamicString,
            DynamicString,
            Stack,
            Stack
        ]
    );
    let names: Vec<&[u8]> = d.fields().map(|f| f.name()).collect();
    assert_eq!(names[5], b"s");
}

#[test]
fn dynamic_events_lines() {
    let d = define(SynthSource::DynamicEvents, "s:latency1 u64 lat; pid_t pid;");
    assert_eq!(d.name(), b"latency1");
    let d = define(SynthSource::DynamicEvents, "s:synthetic/latency2 u64 lat");
    assert_eq!(d.name(), b"latency2");
    assert!(is_synth_line(b"  s:x u64 a"));
    assert!(!is_synth_line(b"p:s vfs_read"));
}

#[test]
fn removal_and_blank_lines() {
    let s = SynthSource::SyntheticEvents;
    assert_eq!(
        parse_synth(s, b"!myevent"),
        Ok(SynthCommand::Remove { name: b"myevent" })
    );
    assert_eq!(
        parse_synth(s, b"!myevent u64 whatever"),
        Ok(SynthCommand::Remove { name: b"myevent" })
    );
    assert_eq!(parse_synth(s, b"   # nothing"), Ok(SynthCommand::Nothing));
    assert_eq!(parse_synth(s, b""), Ok(SynthCommand::Nothing));
}

#[test]
fn arbitrary_bytes_never_panic() {
    let pieces: [&[u8]; 12] = [
        b"ev",
        b" ",
        b";",
        b"unsigned",
        b"char",
        b"[",
        b"]",
        b"s:",
        b"/",
        b"long[",
        b"\xff",
        b"9",
    ];
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    for _ in 0..20_000 {
        let mut line = Vec::new();
        for _ in 0..(seed % 12) {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            line.extend_from_slice(pieces[(seed % 12) as usize]);
        }
        for source in [SynthSource::SyntheticEvents, SynthSource::DynamicEvents] {
            if let Ok(SynthCommand::Define(d)) = parse_synth(source, &line) {
                let mut s = String::new();
                d.write_listing(&mut s).unwrap();
                assert!(d.fields().all(|f| f.storage().is_ok()));
            }
        }
    }
}
