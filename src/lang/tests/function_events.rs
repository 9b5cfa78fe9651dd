// SPDX-License-Identifier: GPL-2.0
//! function_events: every example of the 2018 documentation, errors with
//! their caret, format and print fmt, and the exit-event extension.

mod common;
use common::*;
use dynprobe_lang::*;

const EXAMPLES: &[&str] = &[
    "do_IRQ()",
    "do_IRQ(symbol ip[16] | x64[6] irq_stack[16])",
    "ip_rcv(int skb[32], x64 dev)",
    "ip_rcv(x64 skb | int skb[32], x64 dev)",
    "ip_rcv(unsigned int skb[32])",
    "__queue_work(int cpu, x64 wq, symbol func[3])",
    "__queue_work(int cpu, x64 wq, symbol func+24[0])",
    "do_IRQ(int total_forks=0xffffffff82354c18)",
    "do_IRQ(int total_forks=0xffffffff82354c18, symbol regs[16])",
    "do_IRQ(int total_forks=0xffffffff82354c18 | symbol regs[16])",
    "ip_rcv(x64 skb, x8[6] perm_addr+558)",
    "link_path_walk(char[64] name)",
    "link_path_walk(string name)",
    "ip_rcv(NULL, x8[6] perm_addr+558)",
    "__vfs_read(symbol read+40[0]+16)",
    "__vfs_read(string name+32[0]+40[0]+40[0][0])",
    "SyS_openat(int dfd, string path, x32 flags, x16 mode)",
];

fn fe(line: &str) -> Box<Definition> {
    def_of(Control::FunctionEvents, line)
}

#[test]
fn all_examples_parse_and_round_trip() {
    for ex in EXAMPLES {
        let d = fe(ex);
        assert_eq!(d.group(), "functions");
        assert_eq!(d.kind(), ProbeKind::FunctionEntry);
        let c = canon_of(&d);
        let d2 = fe(&c);
        assert!(d.view().same_as(&d2.view()), "{ex} -> {c}");
        assert_eq!(canon_of(&d2), c);
    }
}

#[test]
fn bad_type_caret() {
    let e = err_of(Control::FunctionEvents, "ip_rcv(x64 skb, x86 dev)");
    assert_eq!((e.code, e.column), (ErrorCode::BadType, 16));
    assert_eq!(e.subsystem, Subsystem::Function);
    let s = command_text(&e, b"ip_rcv(x64 skb, x86 dev)");
    assert_eq!(s, "ip_rcv(x64 skb, x86 dev)");
    let cases: &[(&str, ErrorCode, usize)] = &[
        ("ip_rcv x64 skb", ErrorCode::FeNoOpenParen, 7),
        ("ip_rcv(x64 skb", ErrorCode::FeNoCloseParen, 14),
        ("ip_rcv(x64 skb) x", ErrorCode::FeTrailing, 16),
        ("ip_rcv(x64)", ErrorCode::FeNoField, 10),
        ("ip_rcv(unsigned u8 x)", ErrorCode::FeBadUnsigned, 16),
        ("ip_rcv(u8[65] x)", ErrorCode::ArrayTooBig, 10),
        ("ip_rcv(u8[0] x)", ErrorCode::BadArrayNum, 10),
        ("ip_rcv(u8[2 x)", ErrorCode::ArrayNoClose, 12),
        ("ip_rcv(string[2] x)", ErrorCode::BadString, 13),
        ("ip_rcv(u8 x[zz])", ErrorCode::FeBadIndex, 12),
        ("ip_rcv(int x=1234)", ErrorCode::BadMemAddr, 13),
        ("ip_rcv(int __ip)", ErrorCode::UsedArgName, 11),
        ("nosuchfunc(int x)", ErrorCode::BadProbeAddr, 0),
        ("9abc(int x)", ErrorCode::FeBadFunc, 0),
    ];
    for (l, c, col) in cases {
        let e = err_of(Control::FunctionEvents, l);
        assert_eq!((e.code, e.column), (*c, *col), "{l}");
    }
}

#[test]
fn format_and_print_fmt() {
    let d = fe("__queue_work(int cpu, x64 wq, symbol func[3])");
    assert_eq!(d.event(), "__queue_work");
    assert_eq!(
        fields_of(&d),
        [
            "unsigned long __parent_ip;\toffset:8;\tsize:8;\tsigned:0;",
            "unsigned long __ip;\toffset:16;\tsize:8;\tsigned:0;",
            "int cpu;\toffset:24;\tsize:4;\tsigned:1;",
            "u64 wq;\toffset:28;\tsize:8;\tsigned:0;",
            "unsigned long func;\toffset:36;\tsize:8;\tsigned:0;",
        ]
    );
    assert_eq!(
        fmt_of(&d),
        r#""%pS->%pS(cpu=%d, wq=%llx, func=%pS)", REC->__ip, REC->__parent_ip, REC->cpu, REC->wq, REC->func"#
    );
    let d = fe("do_IRQ()");
    assert_eq!(fmt_of(&d), r#""%pS->%pS()", REC->__ip, REC->__parent_ip"#);
    assert_eq!(d.view().nr_fields(), 2);
    let d = fe("ip_rcv(NULL, x8[6] perm_addr+558)");
    assert_eq!(
        fields_of(&d)[2],
        "u8[6] perm_addr;\toffset:24;\tsize:6;\tsigned:0;"
    );
    assert_eq!(
        fmt_of(&d),
        r#""%pS->%pS(perm_addr=%x,%x,%x,%x,%x,%x)", REC->__ip, REC->__parent_ip, REC->perm_addr[0], REC->perm_addr[1], REC->perm_addr[2], REC->perm_addr[3], REC->perm_addr[4], REC->perm_addr[5]"#
    );
    // perm_addr is the second parameter; NULL skipped the first.
    let p = d.args()[0].program();
    assert_eq!(p.load, Load::Arg(1));
    assert_eq!(
        p.store,
        Store::Mem {
            space: Space::Auto,
            offset: 558
        }
    );
    let d = fe("link_path_walk(char[64] name)");
    assert_eq!(
        fields_of(&d)[2],
        "char[64] name;\toffset:24;\tsize:64;\tsigned:1;"
    );
    assert_eq!(
        fmt_of(&d),
        r#""%pS->%pS(name=%s)", REC->__ip, REC->__parent_ip, REC->name"#
    );
    let d = fe("ip_rcv(unsigned int skb[32])");
    assert_eq!(
        fields_of(&d)[2],
        "unsigned int skb;\toffset:24;\tsize:4;\tsigned:0;"
    );
    assert_eq!(
        d.args()[0].program().store,
        Store::Mem {
            space: Space::Auto,
            offset: 128
        }
    );
}

#[test]
fn programs_follow_the_spec() {
    // int skb[32] == int skb+4[31]
    let a = fe("ip_rcv(int skb[32])");
    let b = fe("ip_rcv(int skb+4[31])");
    assert_eq!(a.args()[0].program(), b.args()[0].program());
    // symbol func[3] == symbol func+24[0]
    let a = fe("__queue_work(int cpu, x64 wq, symbol func[3])");
    let b = fe("__queue_work(int cpu, x64 wq, symbol func+24[0])");
    assert_eq!(a.args()[2].program(), b.args()[2].program());
    // symbol read+40[0]+16 is *(*(file + 40) + 16)
    let d = fe("__vfs_read(symbol read+40[0]+16)");
    let p = d.args()[0].program();
    assert_eq!(
        p.derefs().collect::<Vec<_>>(),
        [Deref::read(Space::Auto, 40)]
    );
    assert_eq!(
        p.store,
        Store::Mem {
            space: Space::Auto,
            offset: 16
        }
    );
    // The string chain dereferences four times, then reads characters.
    let d = fe("__vfs_read(string name+32[0]+40[0]+40[0][0])");
    let p = d.args()[0].program();
    assert_eq!(p.derefs().len(), 4);
    assert_eq!(
        p.store,
        Store::String {
            space: Space::Auto,
            offset: 0
        }
    );
    // An address argument does not consume a parameter.
    let d = fe("do_IRQ(int total_forks=0xffffffff82354c18, symbol regs[16])");
    assert_eq!(d.args()[0].program().load, Load::Imm(0xffff_ffff_8235_4c18));
    assert_eq!(d.args()[1].program().load, Load::Arg(0));
    let d = fe("do_IRQ(int total_forks=0xffffffff82354c18 | symbol regs[16])");
    assert_eq!(d.args()[1].program().load, Load::Arg(0));
    // '|' records several fields from one parameter.
    let d = fe("ip_rcv(x64 skb | int skb[32], x64 dev)");
    assert_eq!(d.args()[0].program().load, Load::Arg(0));
    assert_eq!(d.args()[1].program().load, Load::Arg(0));
    assert_eq!(d.args()[2].program().load, Load::Arg(1));
    // More than six parameters are allowed (stack arguments).
    let d = fe("ip_rcv(NULL, NULL, NULL, NULL, NULL, NULL, int seventh)");
    assert_eq!(d.args()[0].program().load, Load::Arg(6));
}

#[test]
fn exit_events() {
    let d = fe("vfs_read(x64 file, NULL, u64 count) -> s64 ret");
    assert_eq!(
        (d.kind(), d.event()),
        (ProbeKind::FunctionExit, "vfs_read__exit")
    );
    assert_eq!(d.entry_args(), &[0, 2]);
    assert_eq!(d.args()[0].program().load, Load::EntryData(0));
    assert_eq!(d.args()[1].program().load, Load::EntryData(1));
    assert_eq!(d.args()[2].program().load, Load::RetVal);
    assert_eq!(
        fmt_of(&d),
        r#""%pS <- %pS(file=%llx, count=%llu) ret=%lld", REC->__parent_ip, REC->__ip, REC->file, REC->count, REC->ret"#
    );
    assert_eq!(
        canon_of(&d),
        "vfs_read(x64 file, NULL, u64 count) -> s64 ret"
    );
    let d2 = fe(&canon_of(&d));
    assert!(d.view().same_as(&d2.view()));
    let d = fe("do_sys_openat2(int dfd, string filename) -> long fd");
    assert_eq!(fields_of(&d)[4], "long fd;\toffset:32;\tsize:8;\tsigned:1;");
}

#[test]
fn removal() {
    let mut d = Box::new(Definition::new());
    let c = parse(
        Control::FunctionEvents,
        b"-:functions/ip_rcv",
        &FakeKernel,
        &mut d,
    )
    .unwrap();
    assert!(matches!(
        c,
        Command::Remove {
            group: Some("functions"),
            event: "ip_rcv",
            ..
        }
    ));
    assert_eq!(
        parse(Control::FunctionEvents, b"  # nothing", &FakeKernel, &mut d),
        Ok(Command::Nothing)
    );
}

/// A definition whose normalized text does not fit is refused, never
/// listed cut short: offsets are listed in decimal and a comma gets its
/// space, so a line within the length limit can list longer than the
/// text's capacity.
#[test]
fn texts_that_do_not_fit_are_refused() {
    // 22 bytes each, listed as 23.
    let offsets = "+0x7fffffffffffffff[0]".repeat(5);
    let mut line = String::from("do_IRQ(");
    let mut i = 0;
    while line.len() < 3960 {
        line.push_str(&format!("u8 a{i}{offsets},"));
        i += 1;
    }
    line.push_str("u8 z)");
    assert!(line.len() <= 4095);
    let e = err_of(Control::FunctionEvents, &line);
    assert_eq!(e.code, ErrorCode::EventTooBig, "{e}");

    // One argument's text: 224 bytes of offsets and indices.
    let offsets = "+1000000000[0]".repeat(16);
    let e = err_of(
        Control::FunctionEvents,
        &format!("do_IRQ(x64 regs{offsets})"),
    );
    assert_eq!((e.code, e.column), (ErrorCode::ArgTooLong, 11), "{e}");
    let e = err_of(
        Control::FunctionEvents,
        &format!("do_IRQ() -> x64 ret{offsets}"),
    );
    assert_eq!((e.code, e.column), (ErrorCode::ArgTooLong, 16), "{e}");
}

// vfs_read(struct file *file, char *buf, size_t count, loff_t *pos) in the
// test resolver's BTF: file and buf are pointers, count a u64 (size_t),
// pos a pointer; it returns a signed 64-bit value.

#[test]
fn named_arguments_take_their_btf_types() {
    let d = fe("vfs_read(file, count)");
    assert_eq!(
        fields_of(&d),
        [
            "unsigned long __parent_ip;\toffset:8;\tsize:8;\tsigned:0;",
            "unsigned long __ip;\toffset:16;\tsize:8;\tsigned:0;",
            "u64 file;\toffset:24;\tsize:8;\tsigned:0;",
            "u64 count;\toffset:32;\tsize:8;\tsigned:0;",
        ]
    );
    assert_eq!(
        fmt_of(&d),
        r#""%pS->%pS(file=%llx, count=%llu)", REC->__ip, REC->__parent_ip, REC->file, REC->count"#
    );
    // By name, not position: count is the third parameter.
    assert_eq!(d.args()[0].program().load, Load::Arg(0));
    assert_eq!(d.args()[1].program().load, Load::Arg(2));
    assert_eq!(canon_of(&d), "vfs_read(file, count)");
    // Members, a name of one's own, a type of one's own.
    let d = fe("vfs_read(file->f_mode, flags=file->f_flags:x32, pos:x64)");
    let names: Vec<_> = d.args().iter().map(|a| a.name().to_string()).collect();
    assert_eq!(names, ["f_mode", "flags", "pos"]);
    assert_eq!(d.args()[1].fetch_type(), FetchType::X32);
    assert_eq!(
        canon_of(&d),
        "vfs_read(file->f_mode, flags=file->f_flags:x32, pos:x64)"
    );
}

#[test]
fn named_and_positional_arguments_mix() {
    // Named arguments take no position: x64 file is the first parameter,
    // NULL skips buf, u64 n is the third.
    let d = fe("vfs_read(x64 file, pos, NULL, u64 n)");
    let loads: Vec<_> = d.args().iter().map(|a| a.program().load).collect();
    assert_eq!(loads, [Load::Arg(0), Load::Arg(3), Load::Arg(2)]);
    // One name twice is refused, whichever form each has.
    let e = err_of(Control::FunctionEvents, "vfs_read(x64 file, file)");
    assert_eq!((e.code, e.column), (ErrorCode::UsedArgName, 19));
    // The function event's own fields are not names to take.
    let e = err_of(Control::FunctionEvents, "vfs_read(__ip=file)");
    assert_eq!((e.code, e.column), (ErrorCode::UsedArgName, 9));
}

#[test]
fn every_parameter() {
    let d = fe("vfs_read(...)");
    let names: Vec<_> = d.args().iter().map(|a| a.name().to_string()).collect();
    assert_eq!(names, ["file", "buf", "count", "pos"]);
    assert_eq!(canon_of(&d), "vfs_read(...)");
    let d2 = fe(&canon_of(&d));
    assert!(d.view().same_as(&d2.view()));
    // With more after it; twice is refused at the second.
    let d = fe("vfs_read(..., file->f_mode)");
    assert_eq!(d.args().len(), 5);
    let e = err_of(Control::FunctionEvents, "vfs_read(..., ...)");
    assert_eq!((e.code, e.column), (ErrorCode::FeAllTwice, 14));
    // $argN takes the parameter's name, as on an fprobe.
    let d = fe("vfs_read($arg3, $arg2:x32)");
    let names: Vec<_> = d.args().iter().map(|a| a.name().to_string()).collect();
    assert_eq!(names, ["count", "buf"]);
    assert_eq!(d.args()[0].program().load, Load::Arg(2));
    let d = fe("ip_rcv($arg2)");
    assert_eq!(d.args()[0].name(), "arg2");
    // Member chains are named by their last member; two alike need a
    // name of their own.
    let d = fe("vfs_read(file->f_inode->i_ino, i=file->f_inode->i_ino:u32)");
    let names: Vec<_> = d.args().iter().map(|a| a.name().to_string()).collect();
    assert_eq!(names, ["i_ino", "i"]);
    let line = "vfs_read(file->f_mode, file->f_mode)";
    let e = err_of(Control::FunctionEvents, line);
    assert_eq!((e.code, e.column), (ErrorCode::UsedArgName, 23));
    // Without BTF there are no parameters to name.
    let e = err_of(Control::FunctionEvents, "ip_rcv(...)");
    assert_eq!((e.code, e.column, e.errno), (ErrorCode::NosupBtfarg, 7, 95));
}

#[test]
fn named_return_values() {
    let d = fe("vfs_read(file, count) -> ret");
    assert_eq!(d.kind(), ProbeKind::FunctionExit);
    assert_eq!(d.event(), "vfs_read__exit");
    let last = d.args().last().unwrap();
    assert_eq!(last.name(), "ret");
    assert_eq!(last.program().load, Load::RetVal);
    assert_eq!(last.fetch_type(), FetchType::S64);
    // Entry parameters are saved at entry for the exit event.
    assert_eq!(d.args()[0].program().load, Load::EntryData(0));
    assert_eq!(d.entry_args(), [0, 2]);
    assert_eq!(canon_of(&d), "vfs_read(file, count) -> ret");
    let d = fe("vfs_read(file) -> ret:x64");
    assert_eq!(d.args().last().unwrap().fetch_type(), FetchType::X64);
    // The 2018 form is unchanged beside it.
    let d = fe("vfs_read(file) -> s64 ret");
    assert_eq!(d.args().last().unwrap().fetch_type(), FetchType::S64);
    // A bad type's caret is on the type as written.
    let line = "vfs_read(file) -> ret:zz";
    let e = err_of(Control::FunctionEvents, line);
    assert_eq!(
        (e.code, e.column),
        (ErrorCode::BadType, line.find("zz").unwrap())
    );
}

#[test]
fn named_argument_errors_point_into_the_line() {
    let cases: &[(&str, ErrorCode)] = &[
        // A parameter BTF does not have.
        ("vfs_read(nosuch)", ErrorCode::NoBtfarg),
        // A member it does not have: the caret at the member.
        ("vfs_read(file->nosuch)", ErrorCode::NoBtfField),
        ("vfs_read(file :u32)", ErrorCode::FeSpaceInArg),
        ("vfs_read(file->f_mode:zz)", ErrorCode::BadType),
    ];
    for (line, code) in cases {
        let e = err_of(Control::FunctionEvents, line);
        assert_eq!(e.code, *code, "{line}");
        assert_eq!(e.subsystem, Subsystem::Function, "{line}");
        let want = match code {
            ErrorCode::NoBtfarg => line.find("nosuch").unwrap(),
            ErrorCode::NoBtfField => line.find("nosuch").unwrap(),
            ErrorCode::FeSpaceInArg => line.find(" :").unwrap(),
            _ => line.find("zz").unwrap(),
        };
        assert_eq!(e.column, want, "{line}");
    }
    // Bytes that are not UTF-8 could not be listed back: refused at the
    // argument (a case the fuzzer found, in the return value's type).
    for line in [
        &b"v(x64 pt) -> ret::\x94\x94"[..],
        b"vfs_read(file:\x94)",
        // Parentheses a fetch argument leaves open would take the list's
        // own, and the listing would read back otherwise.
        b"vfs_read(+0(file )",
    ] {
        let mut d = Box::new(Definition::new());
        let e = parse(Control::FunctionEvents, line, &FakeKernel, &mut d).unwrap_err();
        assert_eq!(e.code, ErrorCode::BadFetchArg, "{line:?}");
    }
    // Lines of the 2018 grammar keep their errors.
    for (line, code, col) in [
        ("ip_rcv(x64)", ErrorCode::FeNoField, 10),
        ("ip_rcv(x64 skb, x86 dev)", ErrorCode::BadType, 16),
        ("ip_rcv(x86[6] dev)", ErrorCode::BadType, 7),
    ] {
        let e = err_of(Control::FunctionEvents, line);
        assert_eq!((e.code, e.column), (code, col), "{line}");
    }
}
