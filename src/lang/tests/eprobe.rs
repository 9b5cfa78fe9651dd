// SPDX-License-Identifier: GPL-2.0
//! Event probes (`e` lines of dynamic_events): the cases of the kernel's
//! eprobes_syntax_errors.tc with its carets, listings, removal matching,
//! the format and print fmt, and records read from a source record.

mod common;
use common::*;
use dynprobe_lang::ErrorCode::*;
use dynprobe_lang::*;

fn e(case: &str, code: ErrorCode) {
    let pos = case.rfind('^').unwrap();
    let cmd: String = case.chars().filter(|&c| c != '^').collect();
    let err = err_of(Control::DynamicEvents, &cmd);
    let shown = command_text(&err, cmd.as_bytes());
    assert_eq!(shown, cmd.trim_end(), "command text for {case:?}");
    assert!(err.logged, "{case:?} not logged: {err:?}");
    assert_eq!(err.subsystem.name(), "event_probe", "{case:?}");
    assert_eq!((err.column, err.code), (pos, code), "{case:?}: {err:?}");
}

const LONG65: &str = "12345678901234567890123456789012345678901234567890123456789012345";

#[test]
fn eprobes_syntax_errors() {
    e("e ^a.", NoEventInfo);
    // The kernel logs the name's error (NO_GROUP_NAME) and then
    // NO_EVENT_INFO at the same column (the ftracetest comment names the
    // second); dynprobe logs the first.
    e("e ^.b", NoGroupName);
    e("e sys.^b-d", BadEventName);
    e("e ^b-d", BadEventName);
    e(&format!("e sys.^{LONG65}"), EventTooLong);
    e("e ^a.b", BadAttachEvent);
    e("e syscalls/sys_enter_openat ^foo", NosupBtfarg);
    e("e:^/bar syscalls/sys_enter_openat", NoGroupName);
    e(
        &format!("e:^{LONG65}/bar syscalls/sys_enter_openat"),
        GroupTooLong,
    );
    e("e:^foo.1/bar syscalls/sys_enter_openat", BadGroupName);
    e("e:^ syscalls/sys_enter_openat", NoEventName);
    e(
        &format!("e:foo/^{LONG65} syscalls/sys_enter_openat"),
        EventTooLong,
    );
    e("e:foo/^bar.1 syscalls/sys_enter_openat", BadEventName);
    e("e:foo/bar syscalls/sys_enter_openat arg=^dfd", NosupBtfarg);
    e("e:foo/bar syscalls/sys_enter_openat arg=^$foo", BadVar);
    e("e:foo/bar syscalls/sys_enter_openat if ^", NoEpFilter);
    e("e:foo/bar syscalls/sys_enter_openat a=^%di", BadVar);
    e(
        "e:foo/bar syscalls/sys_enter_openat arg=^this_cpu_read(file)",
        NosupPercpu,
    );
    e("e:foo/bar syscalls/sys_enter_openat arg=^$current", BadVar);
}

#[test]
fn filters_are_kept_as_the_kernel_joins_them() {
    let d = def_of(
        Control::DynamicEvents,
        "e:foo/bar syscalls/sys_enter_openat a=$dfd if dfd  ==\t3 &&   flags != 0",
    );
    assert_eq!(d.view().filter(), "dfd == 3 && flags != 0");
    assert_eq!(d.view().args().len(), 1);
    // Not listed, as the kernel's event probes do not list theirs.
    assert_eq!(canon_of(&d), "e:foo/bar syscalls.sys_enter_openat a=$dfd");
    let d = def_of(
        Control::DynamicEvents,
        "e:foo/bar syscalls/sys_enter_openat if dfd == 3",
    );
    assert_eq!(d.view().filter(), "dfd == 3");
    assert_eq!(d.view().args().len(), 0);
    let d = def_of(
        Control::DynamicEvents,
        "e:foo/bar syscalls/sys_enter_openat a=$dfd",
    );
    assert_eq!(d.view().filter(), "");
}

#[test]
fn a_filter_the_kernel_refuses_is_its_error() {
    let err = err_of(
        Control::DynamicEvents,
        "e:foo/bar syscalls/sys_enter_openat a=$dfd if nosuch == 3",
    );
    // The kernel's filter parser logged its own entry.
    assert!(!err.logged);
    assert_eq!(err.errno, errno::EINVAL);
}

#[test]
fn filters_without_the_kernels_filter_parser_are_refused_at_the_filter() {
    let mut d = Box::new(Definition::new());
    let line = "e:foo/bar syscalls/sys_enter_openat a=$dfd if dfd == 3";
    let err = parse(
        Control::DynamicEvents,
        line.as_bytes(),
        &SourcesOn(&LINUX_7_2),
        &mut d,
    )
    .unwrap_err();
    assert_eq!(err.code, EpFilterUnsupported);
    assert_eq!(err.errno, errno::EOPNOTSUPP);
    assert_eq!(
        err.column,
        "e:foo/bar syscalls/sys_enter_openat a=$dfd if ".len()
    );
}

#[test]
fn event_probes_only_in_dynamic_events() {
    let mut d = Box::new(Definition::new());
    let line = b"e:foo/bar syscalls/sys_enter_openat";
    let err = parse(Control::KprobeEvents, line, &FakeKernel, &mut d).unwrap_err();
    assert!(!err.logged);
}

#[test]
fn listing_names_and_defaults() {
    let d = def_of(
        Control::DynamicEvents,
        "e syscalls/sys_enter_openat file=+0($filename):ustring",
    );
    assert_eq!(d.kind(), ProbeKind::Eprobe);
    assert_eq!(
        canon_of(&d),
        "e:eprobes/sys_enter_openat syscalls.sys_enter_openat file=+0($filename):ustring"
    );
    let d = def_of(
        Control::DynamicEvents,
        "e:mygroup/ sched.sched_process_exec",
    );
    assert_eq!(
        canon_of(&d),
        "e:mygroup/sched_process_exec sched.sched_process_exec"
    );
    let d = def_of(
        Control::DynamicEvents,
        "e:ep sched/sched_process_exec f=$filename:string p=$pid c=$comm:string",
    );
    assert_eq!(
        canon_of(&d),
        "e:eprobes/ep sched.sched_process_exec f=$filename:string p=$pid c=$comm:string"
    );
}

#[test]
fn removal_matches_the_source_either_way() {
    let d = def_of(
        Control::DynamicEvents,
        "e:ep syscalls/sys_enter_openat file=+0($filename):ustring",
    );
    let v = d.view();
    let args = "file=+0($filename):ustring".as_bytes();
    assert!(v.matches_removal(None, "ep", b""));
    assert!(v.matches_removal(Some("eprobes"), "ep", b"syscalls/sys_enter_openat"));
    assert!(v.matches_removal(Some("eprobes"), "ep", b"syscalls.sys_enter_openat"));
    let full = [b"syscalls/sys_enter_openat ".as_slice(), args].concat();
    assert!(v.matches_removal(None, "ep", &full));
    assert!(!v.matches_removal(None, "ep", b"syscalls/sys_enter_close"));
    assert!(!v.matches_removal(None, "ep", b"syscalls/sys_enter_openat x=$dfd"));
}

#[test]
fn format_and_print_fmt_have_no_header() {
    let d = def_of(
        Control::DynamicEvents,
        "e:ep syscalls.sys_enter_openat fd=$dfd file=+0($filename):ustring",
    );
    assert_eq!(
        fields_of(&d),
        [
            "u64 fd;\toffset:8;\tsize:8;\tsigned:0;",
            "__data_loc char[] file;\toffset:16;\tsize:4;\tsigned:1;",
        ]
    );
    assert_eq!(
        fmt_of(&d),
        "\" fd=0x%Lx file=\\\"%s\\\"\", REC->fd, __get_str(file)"
    );
}

/// A `sched_process_exec` record: `filename` as `__data_loc`, `pid`,
/// `comm[16]`, and the filename's bytes after them.
fn exec_record() -> Vec<u8> {
    let mut rec = vec![0u8; 32];
    rec[8..12].copy_from_slice(&((8u32 << 16) | 32).to_le_bytes());
    rec[12..16].copy_from_slice(&(-7i32).to_le_bytes());
    rec[16..20].copy_from_slice(b"init");
    rec.extend_from_slice(b"/bin/sh\0");
    rec
}

/// Memory that holds the record at its own address, as the kernel's does.
fn mem_of(rec: &[u8]) -> FakeMem {
    let mut mem = FakeMem::default();
    mem.add(rec.as_ptr() as u64, rec);
    mem
}

#[test]
fn records_read_fields_of_the_source() {
    let d = def_of(
        Control::DynamicEvents,
        "e:ep sched.sched_process_exec f=$filename:string p=$pid:s32 q=$pid c=$comm:string",
    );
    let regs = FakeRegs {
        record: exec_record(),
        ..FakeRegs::default()
    };
    let mut mem = mem_of(&regs.record);
    mem.comm = *b"sh\0\0\0\0\0\0\0\0\0\0\0\0\0\0";
    let mut out = vec![0u8; 256];
    let n = d.view().record(&regs, &mem, HeaderIps::default(), &mut out);
    let mut text = String::new();
    d.view()
        .print_event(&out[..n], &mut FakeSyms, &mut text)
        .unwrap();
    assert_eq!(
        text,
        "ep: (sched.sched_process_exec) f=\"/bin/sh\" p=-7 q=0xfffffffffffffff9 c=\"init\""
    );
}

#[test]
fn a_field_named_comm_comes_before_the_task_comm() {
    let d = def_of(
        Control::DynamicEvents,
        "e:ep syscalls.sys_enter_openat c=$comm:string",
    );
    let regs = FakeRegs::default();
    let mem = FakeMem {
        comm: *b"cat\0\0\0\0\0\0\0\0\0\0\0\0\0",
        ..FakeMem::default()
    };
    let mut out = vec![0u8; 256];
    let n = d.view().record(&regs, &mem, HeaderIps::default(), &mut out);
    let mut text = String::new();
    d.view()
        .print_event(&out[..n], &mut FakeSyms, &mut text)
        .unwrap();
    assert_eq!(
        text,
        "ep: (sys_enter_openat) c=\"cat\"".replace("(sys", "(syscalls.sys")
    );
}

#[test]
fn fields_outside_a_short_record_read_as_zero() {
    let d = def_of(
        Control::DynamicEvents,
        "e:ep syscalls.sys_enter_openat fl=$flags:s64",
    );
    let regs = FakeRegs {
        record: vec![0xff; 20],
        ..FakeRegs::default()
    };
    let mut out = vec![0u8; 64];
    let n = d
        .view()
        .record(&regs, &FakeMem::default(), HeaderIps::default(), &mut out);
    assert_eq!(n, 16);
    assert_eq!(&out[8..16], &[0u8; 8]);
}

/// The fake kernel's event sources (no filter parser), parsing for one
/// series.
struct SourcesOn(&'static KernelFacts);

impl Resolver for SourcesOn {
    fn kernel(&self) -> &'static KernelFacts {
        self.0
    }
    fn event_source(&self, system: &str, event: &str) -> bool {
        FakeKernel.event_source(system, event)
    }
    fn event_field(&self, system: &str, event: &str, field: &str) -> Option<EventField> {
        FakeKernel.event_field(system, event, field)
    }
}

/// 7.3 names the source event's fields without `$` (and says
/// NO_EVENT_FIELD for a name that is none, `COMM` and `current`
/// included); 7.2 refuses a bare name, as its own tests check.
#[test]
fn bare_field_names_are_the_series() {
    let parse_on = |facts: &'static KernelFacts, line: &str| {
        let mut d = Box::new(Definition::new());
        parse(
            Control::DynamicEvents,
            line.as_bytes(),
            &SourcesOn(facts),
            &mut d,
        )
        .map(|_| d)
    };
    let d = parse_on(&LINUX_7_3, "e:foo/bar syscalls/sys_enter_openat arg=dfd").unwrap();
    let with_dollar = parse_on(&LINUX_7_3, "e:foo/bar syscalls/sys_enter_openat arg=$dfd").unwrap();
    assert_eq!(d.args()[0].program(), with_dollar.args()[0].program());
    for case in [
        "e:foo/bar syscalls/sys_enter_openat arg=^nofield",
        "e:foo/bar syscalls/sys_enter_openat arg=^COMM",
        "e:foo/bar syscalls/sys_enter_openat arg=^current",
        "e syscalls/sys_enter_openat ^foo",
    ] {
        let line: String = case.chars().filter(|&c| c != '^').collect();
        let e = parse_on(&LINUX_7_3, &line).map(|_| ()).unwrap_err();
        assert_eq!(
            (e.code, e.column),
            (NoEventField, case.find('^').unwrap()),
            "{case}"
        );
        let e = parse_on(&LINUX_7_2, &line).map(|_| ()).unwrap_err();
        assert_eq!(e.column, case.find('^').unwrap(), "{case} on 7.2");
        assert_ne!(e.code, NoEventField, "{case} on 7.2");
    }
    assert!(parse_on(&LINUX_7_2, "e:foo/bar syscalls/sys_enter_openat arg=dfd").is_err());
}
