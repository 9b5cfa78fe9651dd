// SPDX-License-Identifier: GPL-2.0
//! The kind table: each kind's header fields, listing, control files and
//! which kinds may feed one event, as the kernel's probe events have them.

mod common;
use common::*;
use dynprobe_lang::*;

/// One definition of each kind.
const LINES: [(Control, &str); 13] = [
    (Control::KprobeEvents, "p:g/kp vfs_read"),
    (Control::KprobeEvents, "r:g/kr vfs_read"),
    (Control::DynamicEvents, "f:g/fe vfs_read"),
    (Control::DynamicEvents, "f:g/fx vfs_read%return"),
    (Control::DynamicEvents, "t:g/tp kfree"),
    (Control::FunctionEvents, "vfs_read(x64 a)"),
    (Control::FunctionEvents, "vfs_read(x64 a) -> s64 ret"),
    (Control::DynamicEvents, "e:g/ep syscalls.sys_enter_openat"),
    (Control::DynamicEvents, "w:g/wp w@jiffies"),
    (Control::UprobeEvents, "p:g/up /bin/bash:0x10"),
    (Control::DynamicEvents, "r:g/ur /bin/bash:0x10"),
    (Control::FunctionEvents, "/bin/bash:main(x64 a)"),
    (Control::FunctionEvents, "/bin/bash:main() -> s64 ret"),
];

#[test]
fn every_kind_has_a_definition_here() {
    let kinds: Vec<ProbeKind> = LINES.iter().map(|&(c, l)| def_of(c, l).kind()).collect();
    assert_eq!(kinds, ProbeKind::ALL);
}

#[test]
fn header_fields_and_listing_come_from_the_table() {
    for (&(control, line), kind) in LINES.iter().zip(ProbeKind::ALL) {
        let d = def_of(control, line);
        let v = d.view();
        let info = kind.info();
        let header: Vec<&str> = v.fields().filter(|f| f.header).map(|f| f.name).collect();
        assert_eq!(header, info.header, "{line}");
        assert_eq!(v.header_size(), 8 * info.header.len() as u32, "{line}");
        let listed = canon_of(&d);
        match info.letter {
            Some(c) => {
                assert!(listed.starts_with(c), "{listed}");
                assert!(listed.ends_with(info.place_suffix), "{listed}");
            }
            None => assert_eq!(listed, line),
        }
        assert_eq!(kind.is_return(), info.site == Site::Exit, "{line}");
    }
}

#[test]
fn control_files_list_their_families() {
    use Control::*;
    let lists = |f: Family| {
        [KprobeEvents, DynamicEvents, FunctionEvents, UprobeEvents].map(|c| f.listed_in(c))
    };
    assert_eq!(lists(Family::Kprobe), [true, true, false, false]);
    assert_eq!(lists(Family::Fprobe), [false, true, false, false]);
    assert_eq!(lists(Family::Function), [false, false, true, false]);
    assert_eq!(lists(Family::Eprobe), [false, true, false, false]);
    assert_eq!(lists(Family::Wprobe), [false, true, false, false]);
    assert_eq!(lists(Family::Uprobe), [false, true, false, true]);
    assert_eq!(Family::Uprobe.subsystem().name(), "trace_uprobe");
    assert_eq!(Family::Wprobe.subsystem().name(), "wprobe");
    assert_eq!(Family::Eprobe.subsystem().name(), "event_probe");
    assert_eq!(Family::Kprobe.subsystem().name(), "trace_kprobe");
    assert_eq!(Family::Fprobe.subsystem().name(), "trace_fprobe");
}

#[test]
fn which_kinds_share_an_event() {
    use ProbeKind::*;
    let same = Ok(());
    let exist = Err(JoinRefusal::OtherFamily);
    let site = Err(JoinRefusal::OtherSite);
    assert_eq!(Kprobe.joins(Kprobe), same);
    assert_eq!(Kretprobe.joins(Kretprobe), same);
    assert_eq!(Kretprobe.joins(Kprobe), site);
    assert_eq!(FprobeEntry.joins(FprobeEntry), same);
    assert_eq!(FprobeExit.joins(FprobeEntry), site);
    assert_eq!(Tprobe.joins(FprobeEntry), site);
    assert_eq!(Tprobe.joins(Tprobe), same);
    assert_eq!(FprobeEntry.joins(Kprobe), exist);
    assert_eq!(Kprobe.joins(FprobeEntry), exist);
    assert_eq!(FunctionEntry.joins(FunctionEntry), exist);
    assert_eq!(FunctionExit.joins(Kretprobe), exist);
    assert_eq!(Eprobe.joins(Eprobe), exist);
    assert_eq!(Kprobe.joins(Eprobe), exist);
    assert_eq!(Wprobe.joins(Wprobe), exist);
    assert_eq!(Kprobe.joins(Wprobe), exist);
    assert_eq!(Uprobe.joins(Uprobe), same);
    assert_eq!(Uretprobe.joins(Uprobe), site);
    assert_eq!(Uprobe.joins(Kprobe), exist);
    assert_eq!(Kretprobe.joins(Uretprobe), exist);
}
