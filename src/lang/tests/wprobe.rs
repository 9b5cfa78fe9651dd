// SPDX-License-Identifier: GPL-2.0
//! Watchpoints (`w` lines of dynamic_events), as the posted wprobe series
//! defines them: the spec and its defaults, the listing and its round
//! trip, `$addr` and `$value`, the record and its line, and the errors
//! with their carets (the series' wprobes_syntax_errors.tc cases first).

mod common;
use common::*;
use dynprobe_lang::ErrorCode::*;
use dynprobe_lang::*;

/// `jiffies` in the fake kernel.
const JIFFIES: u64 = 0xffff_ffff_8260_5000;

fn w(line: &str) -> Box<Definition> {
    def_of(Control::DynamicEvents, line)
}

/// The error of `case` (the line with `^` where the caret goes).
fn check(case: &str, code: ErrorCode) {
    let pos = case.rfind('^').unwrap();
    let cmd: String = case.chars().filter(|&c| c != '^').collect();
    let e = err_of(Control::DynamicEvents, &cmd);
    assert_eq!(command_text(&e, cmd.as_bytes()), cmd, "{case:?}");
    assert!(e.logged, "{case:?} not logged: {e:?}");
    assert_eq!((e.column, e.code), (pos, code), "{case:?}: {e:?}");
    assert_eq!(e.subsystem.name(), "wprobe", "{case:?}");
}

#[test]
fn defaults_group_event_access_and_length() {
    let d = w("w w@jiffies");
    assert_eq!(d.kind(), ProbeKind::Wprobe);
    assert_eq!((d.group(), d.event()), ("wprobes", "jiffies"));
    assert_eq!(canon_of(&d), "w:wprobes/jiffies w@jiffies:4");
    let d = w("w:my_jiffies @jiffies");
    assert_eq!(canon_of(&d), "w:wprobes/my_jiffies rw@jiffies:4");
    assert_eq!(
        d.view().watched(),
        Some((
            JIFFIES,
            Watch {
                access: Access::ReadWrite,
                len: 4
            }
        ))
    );
    let d = w("w:grp/ r@jiffies:8");
    assert_eq!((d.group(), d.event()), ("grp", "jiffies"));
    assert_eq!(
        d.view().watched().map(|(_, w)| w.access),
        Some(Access::Read)
    );
}

#[test]
fn offsets_and_addresses() {
    let d = w("w rw@jiffies+8:8");
    assert_eq!(canon_of(&d), "w:wprobes/jiffies rw@jiffies+8:8");
    assert_eq!(d.view().watched().map(|x| x.0), Some(JIFFIES + 8));
    let d = w("w w@jiffies-0x10:2");
    assert_eq!(canon_of(&d), "w:wprobes/jiffies w@jiffies-16:2");
    assert_eq!(d.view().watched().map(|x| x.0), Some(JIFFIES - 16));
    let d = w("w w@0xffff888000001000:8");
    assert_eq!(d.event(), "w_0xffff888000001000");
    assert_eq!(
        canon_of(&d),
        "w:wprobes/w_0xffff888000001000 w@0xffff888000001000:8"
    );
    assert_eq!(d.symbol(), None);
    assert_eq!(w("w w@jiffies:0x1").view().watched().unwrap().1.len, 1);
}

#[test]
fn listing_round_trips() {
    for line in [
        "w:wprobes/jiffies w@jiffies:4",
        "w:g/e rw@jiffies+8:8 a=$addr v=$value x=+4($addr):u32",
        "w:g/neg r@jiffies-4:2 s=@jiffies:s32",
        "w:wprobes/w_0xffff888000001000 w@0xffff888000001000:1 v=+0($addr):u8",
    ] {
        let d = w(line);
        assert_eq!(canon_of(&d), line);
        assert_eq!(canon_of(&w(&canon_of(&d))), line);
    }
}

#[test]
fn removal_names_the_listed_spec() {
    let d = w("w:g/e w@jiffies v=$value");
    let v = d.view();
    assert!(v.matches_removal(Some("g"), "e", b""));
    assert!(v.matches_removal(None, "e", b"w@jiffies:4 v=$value"));
    assert!(!v.matches_removal(None, "e", b"w@jiffies"));
    assert!(!v.matches_removal(None, "e", b"rw@jiffies:4"));
}

#[test]
fn header_format_and_print_fmt() {
    let d = w("w:g/e w@jiffies a=$addr v=$value:s32");
    let f = fields_of(&d);
    assert_eq!(
        f[0],
        "unsigned long __probe_ip;\toffset:8;\tsize:8;\tsigned:0;"
    );
    assert_eq!(f.len(), 3);
    assert!(fmt_of(&d).starts_with("\"(%lx) a="), "{}", fmt_of(&d));
    assert!(fmt_of(&d).contains("REC->__probe_ip, REC->a, REC->v"));
}

#[test]
fn addr_and_value_record_the_watched_data() {
    let d = w("w:g/swap w@jiffies a=$addr v=$value:s32 w=+0($addr):u16");
    let regs = FakeRegs::default();
    let mut mem = FakeMem::default();
    mem.add(JIFFIES, &42u32.to_le_bytes());
    let mut buf = vec![0u8; 256];
    let ips = HeaderIps {
        first: 0xffff_ffff_8100_1000,
        second: 0,
    };
    let n = d.view().record(&regs, &mem, ips, &mut buf);
    buf.truncate(n);
    let mut line = String::new();
    d.view()
        .print_event(&buf, &mut FakeSyms, &mut line)
        .unwrap();
    assert_eq!(
        line,
        "swap: (vfs_read+0x0/0x100) a=0xffffffff82605000 v=42 w=42"
    );
}

#[test]
fn posted_syntax_error_cases() {
    check("w ^symbol", BadAccessFmt);
    check("w ^a@symbol", BadAccessType);
    check("w w@^symbol", BadAccessAddr);
    check("w w@jiffies^+offset", BadProbeAddr);
    check("w w@jiffies:^100", BadAccessLen);
    check("w w@jiffies ^$arg1", BadVar);
    check("w w@jiffies ^$retval", BadVar);
    check("w w@jiffies ^$stack", BadVar);
    check("w w@jiffies ^%ax", BadVar);
}

#[test]
fn more_errors() {
    check("^w", NoArgBody);
    check("w^1 w@jiffies", BadMaxactType);
    check("w ^r:4@jiffies", BadAccessType);
    check("w w@jiffies:^3", BadAccessLen);
    check("w w@jiffies:^x", BadAccessLen);
    check("w w@^0x1000", BadAccessAddr);
    check("w w@^0xffff888000001002:4", BadAccessAddr);
    check("w w@^jiffies+1:8", BadAccessAddr);
    check("w w@^-1", BadAccessAddr);
    check("w w@jiffies ^$comm", BadVar);
    check("w w@jiffies ^$current", BadVar);
    check("w w@jiffies ^$addrx", BadVar);
    check("w:^bad-name w@jiffies", BadEventName);
    // The spec is read before the event name.
    check("w:bad-name w@^nosuch", BadAccessAddr);
    let e = err_of(Control::DynamicEvents, "w w@nosuch");
    assert_eq!(e.errno, errno::ENOENT);
    let e = err_of(Control::DynamicEvents, "w w@jiffies a=$addr:string");
    assert_eq!(e.code, BadString);
}

#[test]
fn only_dynamic_events_takes_w_lines() {
    let e = err_of(Control::KprobeEvents, "w w@jiffies");
    assert_ne!(e.subsystem.name(), "wprobe");
}
