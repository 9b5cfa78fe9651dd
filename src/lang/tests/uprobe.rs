// SPDX-License-Identifier: GPL-2.0
//! uprobe lines (`p`/`r` on `PATH:OFFSET` in uprobe_events and
//! dynamic_events), as `trace_uprobe.c` takes them: names and defaults,
//! the listing and removal, the header fields and format (a kprobe's on
//! the same arguments), the arguments uprobes take and the ones they
//! refuse, records read from user memory, and the errors with their
//! carets on each kernel series (uprobe_syntax_errors.tc's cases first).
//! Beyond the kernel: `$argN` at entry, and at return from the words
//! saved at entry.

mod common;
use common::*;
use dynprobe_lang::ErrorCode::*;
use dynprobe_lang::*;

/// The fake kernel's files and symbols, with another series' facts.
struct On(&'static KernelFacts);

impl Resolver for On {
    fn kernel(&self) -> &'static KernelFacts {
        self.0
    }
    fn user_file(&self, path: &[u8]) -> UserFile {
        FakeKernel.user_file(path)
    }
}

fn u(line: &str) -> Box<Definition> {
    def_of(Control::UprobeEvents, line)
}

/// The error of `case` (the line with `^` where the caret goes) on
/// `facts`' kernel, in uprobe_events and in dynamic_events.
fn check_on(facts: &'static KernelFacts, case: &str, code: ErrorCode) {
    let pos = case.rfind('^').unwrap();
    let cmd: String = case.chars().filter(|&c| c != '^').collect();
    for control in [Control::UprobeEvents, Control::DynamicEvents] {
        let mut d = Box::new(Definition::new());
        let e = match parse(control, cmd.as_bytes(), &On(facts), &mut d) {
            Err(e) => e,
            other => panic!("{case:?} in {control:?}: {other:?}"),
        };
        assert_eq!(command_text(&e, cmd.as_bytes()), cmd, "{case:?}");
        assert!(e.logged, "{case:?} not logged: {e:?}");
        assert_eq!((e.column, e.code), (pos, code), "{case:?}: {e:?}");
        assert_eq!(e.subsystem.name(), "trace_uprobe", "{case:?}");
    }
}

fn check(case: &str, code: ErrorCode) {
    for facts in SERIES {
        check_on(facts, case, code);
    }
}

#[test]
fn kernel_uprobe_syntax_errors() {
    // tools/testing/selftests/ftrace/test.d/kprobe/uprobe_syntax_errors.tc
    check("p ^/non_exist_file:100", FileNotFound);
    check("p ^/tmp:100", NoRegularFile);
    check("p /bin/bash:^10a", BadUprobeOffs);
    check("p /bin/bash:10(^1a)", BadRefcnt);
    check("p /bin/bash:10(10^", RefcntOpenBrace);
    check("p /bin/bash:10(10)^a", BadRefcntSuffix);
    check("p /bin/bash:10 ^@+ab", BadFileOffs);
    check("p /bin/bash:10 ^@symbol", SymOnUprobe);
    check("p /bin/bash:10^%hoge", BadAddrSuffix);
    check("p /bin/bash:10(10)^%return", BadRefcntSuffix);
    check("p /bin/bash:10 $stack0:^symstr", BadType);
    check("p /bin/bash:10 ^$current:u8", BadVar);
}

#[test]
fn argument_errors() {
    check("p /bin/bash:0x10 ^$retval", RetvalOnProbe);
    // `$argN` is taken (below), with the kernel's bounds.
    check("p /bin/bash:0x10 ^$arg0", BadArgNum);
    check("r /bin/bash:0x10 ^$arg0", BadArgNum);
    check("p /bin/bash:0x10 ^$arg*", BadVar);
    check("p /bin/bash:0x10 ^count", NosupBtfarg);
    check("p /bin/bash:0x10 ^%none", BadRegName);
    check("p /bin/bash:0x10 %ax:^symbol", BadType);
    check("p /bin/bash:0x10 ^$stackx", BadVar);
    check("p /bin/bash:0x10 %ax:^string", BadString);
    check("p:^/e /bin/bash:0x10", NoGroupName);
    check("p:g/^e.1 /bin/bash:0x10", BadEventName);
    check("p /bin/bash:0x10^%returns", BadAddrSuffix);
    // 7.2 has no per-CPU forms: the name is taken for a BTF name.
    check_on(
        &LINUX_7_2,
        "p /bin/bash:0x10 ^this_cpu_ptr(%ax)",
        NosupBtfarg,
    );
    check_on(
        &LINUX_7_3,
        "p /bin/bash:0x10 ^this_cpu_ptr(%ax)",
        NosupPercpu,
    );
    check_on(
        &LINUX_7_3,
        "p /bin/bash:0x10 ^this_cpu_read(%ax)",
        NosupPercpu,
    );
}

#[test]
fn errnos_and_unlogged_refusals() {
    let e = err_of(Control::UprobeEvents, "p /tmp/denied:0x10");
    assert_eq!((e.code, e.errno, e.column), (FileNotFound, 13, 2));
    let e = err_of(Control::UprobeEvents, "p /bin/bash:0x10 +0(%ax):u8[100000]");
    assert!(e.logged);
    let e = err_of(Control::UprobeEvents, "p /bin/bash:99999999999999999999");
    assert_eq!((e.code, e.errno), (BadUprobeOffs, errno::ERANGE));
    // Too many arguments, before the place is looked at.
    let mut line = String::from("p /nonexistent:0x10");
    for i in 0..129 {
        line += &format!(" a{i}=%ax");
    }
    let e = err_of(Control::UprobeEvents, &line);
    assert_eq!((e.code, e.column, e.errno), (TooManyArgs, 20, errno::E2BIG));
    assert_eq!(e.subsystem.name(), "trace_uprobe");
    // Lines that are no uprobe: uprobe_events refuses them with EINVAL
    // and no error_log entry, as it does kprobes and the other kinds.
    for line in [
        "p vfs_read",
        "p /bin/bash",
        "p /bin/bash:x10",
        "f vfs_read",
        "w w@jiffies",
        "!p:e /bin/bash:0x10",
    ] {
        let e = err_of(Control::UprobeEvents, line);
        assert!(!e.logged, "{line:?}: {e:?}");
        assert_eq!(e.errno, errno::EINVAL, "{line:?}");
    }
    // kprobe_events leaves uprobe lines alone.
    let e = err_of(Control::KprobeEvents, "p /bin/bash:0x10");
    assert!(!e.logged);
    // A kprobe error comes first in dynamic_events: trace_kprobe reads
    // `p5` before it leaves the place to uprobes.
    let e = err_of(Control::DynamicEvents, "p5 /bin/bash:0x10");
    assert_eq!(
        (e.code, e.subsystem.name()),
        (BadMaxactType, "trace_kprobe")
    );
}

#[test]
fn names_defaults_and_listing() {
    let d = u("p /bin/bash:0x4d5a0");
    assert_eq!(d.kind(), ProbeKind::Uprobe);
    assert_eq!((d.group(), d.event()), ("uprobes", "p_bash_0x4d5a0"));
    assert_eq!(
        canon_of(&d),
        "p:uprobes/p_bash_0x4d5a0 /bin/bash:0x000000000004d5a0"
    );
    assert_eq!(d.view().uprobe_place(), Some(("/bin/bash", 0x4d5a0, 0)));
    assert_eq!(d.symbol(), None);
    // A return probe's default name starts with `p` too.
    let d = u("r /bin/bash:16");
    assert_eq!(d.kind(), ProbeKind::Uretprobe);
    assert_eq!(
        canon_of(&d),
        "r:uprobes/p_bash_0x10 /bin/bash:0x0000000000000010"
    );
    let d = u("p /bin/bash:0x10%return");
    assert_eq!(d.kind(), ProbeKind::Uretprobe);
    assert_eq!(
        canon_of(&d),
        "r:uprobes/p_bash_0x10 /bin/bash:0x0000000000000010"
    );
    // The base name is cut at its first `.`, `-` or `_`.
    let d = u("p /lib/x86_64-linux-gnu/libc.so.6:0x2a0");
    assert_eq!(d.event(), "p_libc_0x2a0");
    // The last `:` ends the path.
    let d = u("p /tmp/a:b:0x10");
    assert_eq!(d.view().uprobe_place(), Some(("/tmp/a:b", 0x10, 0)));
    assert_eq!(d.event(), "p_a:b_0x10");
    // Reference counter, group and event; `r5:` names nothing.
    let d = u("p:g/e /usr/lib/x86_64-linux-gnu/libz.so.1.3:0x1f0(0x4038) a=%ax");
    assert_eq!(
        canon_of(&d),
        "p:g/e /usr/lib/x86_64-linux-gnu/libz.so.1.3:0x00000000000001f0(0x4038) a=%ax"
    );
    assert_eq!(
        d.view().uprobe_place(),
        Some(("/usr/lib/x86_64-linux-gnu/libz.so.1.3", 0x1f0, 0x4038))
    );
    let d = u("p /bin/bash:0x10%return(0x20)");
    assert_eq!(
        canon_of(&d),
        "r:uprobes/p_bash_0x10 /bin/bash:0x0000000000000010(0x20)"
    );
    let d = u("r5:ev /bin/bash:0x10");
    assert_eq!(d.event(), "p_bash_0x10");
    let d = u("p:grp/ /bin/bash:0x10");
    assert_eq!((d.group(), d.event()), ("grp", "p_bash_0x10"));
    // dynamic_events takes the same lines.
    let d = def_of(Control::DynamicEvents, "p:g/e /bin/bash:0x10 a=%ax");
    assert_eq!(canon_of(&d), "p:g/e /bin/bash:0x0000000000000010 a=%ax");
}

#[test]
fn listing_round_trips() {
    for line in [
        "p:uprobes/p_bash_0x4d5a0 /bin/bash:0x000000000004d5a0",
        "r:g/e /bin/bash:0x0000000000000010(0x20) rv=$retval",
        "p:g/e /bin/bash:0x0000000000000010 a=%ax b=@0x601040:u32 c=@+0x1000:s16 d=$stack3 e=$stack f=$comm g=+8(%sp):x8 h=-16(+0(%bp)):u64 i=\\123 s=+0(%di):string t=+0(%si):ustring arr=+0(%di):u8[4] bf=+0(%di):b3@4/8 big=$stack100000",
    ] {
        let d = u(line);
        assert_eq!(canon_of(&d), line);
        assert_eq!(canon_of(&def_of(Control::DynamicEvents, line)), line);
    }
}

#[test]
fn removal_matches_the_listed_place() {
    let d = u("p:g/e /bin/bash:0x10(0x20) a=%ax");
    let v = d.view();
    assert!(v.matches_removal(Some("g"), "e", b""));
    assert!(v.matches_removal(None, "e", b" /bin/bash:0x0000000000000010(0x20)"));
    assert!(v.matches_removal(None, "e", b" /bin/bash:0x0000000000000010(0x20) a=%ax"));
    assert!(!v.matches_removal(None, "e", b" /bin/bash:0x10(0x20)"));
    assert!(!v.matches_removal(None, "e", b" /bin/bash:0x0000000000000010"));
    assert!(!v.matches_removal(None, "e", b" /bin/sh:0x0000000000000010(0x20)"));
    // The removal line itself, in both files.
    for control in [Control::UprobeEvents, Control::DynamicEvents] {
        let mut d = Box::new(Definition::new());
        let c = parse(
            control,
            b"-:g/e /bin/bash:0x0000000000000010",
            &FakeKernel,
            &mut d,
        );
        assert!(matches!(
            c,
            Ok(Command::Remove {
                group: Some("g"),
                event: "e",
                ..
            })
        ));
    }
}

#[test]
fn fields_and_format_are_a_kprobes() {
    for (up, kp) in [
        ("p:e /bin/bash:0x10", "p:e vfs_read"),
        ("r:e /bin/bash:0x10", "r:e vfs_read"),
        (
            "p:e /bin/bash:0x10 a=%ax s=+0(%di):string u=+0(%di):ustring x=@0x1000:u8[2] c=$comm",
            "p:e vfs_read a=%ax s=+0(%di):string u=+0(%di):ustring x=@0x1000:u8[2] c=$comm",
        ),
        (
            "r:e /bin/bash:0x10 rv=$retval:s32",
            "r:e vfs_read rv=$retval:s32",
        ),
    ] {
        let ud = u(up);
        let kd = def_of(Control::KprobeEvents, kp);
        assert_eq!(fields_of(&ud), fields_of(&kd), "{up}");
        assert_eq!(fmt_of(&ud), fmt_of(&kd), "{up}");
    }
    assert_eq!(
        fields_of(&u("p:e /bin/bash:0x10"))[0],
        "unsigned long __probe_ip;\toffset:8;\tsize:8;\tsigned:0;"
    );
    assert_eq!(
        fields_of(&u("r:e /bin/bash:0x10"))[..2],
        [
            "unsigned long __probe_func;\toffset:8;\tsize:8;\tsigned:0;",
            "unsigned long __probe_ret_ip;\toffset:16;\tsize:8;\tsigned:0;"
        ]
    );
}

/// A uprobe hit's registers: the fake's, with the probed file's base.
struct UserRegs {
    regs: FakeRegs,
    file_base: u64,
}

impl Regs for UserRegs {
    fn reg(&self, r: Reg) -> u64 {
        self.regs.reg(r)
    }
    fn stack_nth(&self, n: u32) -> u64 {
        self.regs.stack_nth(n)
    }
    fn stack_pointer(&self) -> u64 {
        self.regs.stack_pointer()
    }
    fn arg(&self, n: u32) -> u64 {
        self.regs.arg(n)
    }
    fn return_value(&self) -> u64 {
        self.regs.return_value()
    }
    fn current_task(&self) -> u64 {
        self.regs.current_task()
    }
    fn entry_data(&self, slot: u32) -> u64 {
        self.regs.entry_data(slot)
    }
    fn file_base(&self) -> u64 {
        self.file_base
    }
}

#[test]
fn records_read_user_memory() {
    // Every read of a uprobe is of user memory: `+0(%di)`, `@ADDR`,
    // `@+OFFS` and strings alike, with kernel memory at the same place
    // never read.
    const BASE: u64 = 0x5555_5555_4000;
    let d = u(
        "p:e /bin/bash:0x10 a=+0(%di):u32 b=@0x601040:u16 c=@+0x20:u8 s=+0(%si):string us=+0(%si):ustring im=\\0x601048:string",
    );
    let mut regs = FakeRegs::default();
    regs.set(Reg::Di, 0x7ffe_0000_1000);
    regs.set(Reg::Si, 0x7ffe_0000_2000);
    let regs = UserRegs {
        regs,
        file_base: BASE,
    };
    let mut mem = FakeMem::default();
    mem.add(0x7ffe_0000_1000, &0x1234_5678u32.to_le_bytes());
    mem.add(0x601040, &[0x34, 0x12, 0, 0, 0, 0, 0, 0, b'i', b'm', 0]);
    mem.add(BASE + 0x20, &[0x7f]);
    mem.add(0x7ffe_0000_2000, b"user\0");
    let mut buf = vec![0u8; 4096];
    let ips = HeaderIps {
        first: BASE + 0x10,
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
        "e: (0x555555554010) a=305419896 b=4660 c=127 s=\"user\" us=\"user\" im=\"im\""
    );
    // The same definition compiled reads the same.
    let c = compile(&d);
    let mut buf2 = vec![0u8; 4096];
    let n2 = c.view().record(&regs, &mem, ips, &mut buf2);
    assert_eq!(&buf2[..n2], &buf[..]);
}

#[test]
fn arguments_by_position_at_entry() {
    // The kernel refuses `$argN` on uprobes; dynprobe takes the x86_64
    // System V ABI's, on every series.
    for facts in SERIES {
        let mut d = Box::new(Definition::new());
        parse(
            Control::UprobeEvents,
            b"p:e /bin/bash:0x10 $arg1 n=$arg8:s32 s=+0($arg2):ustring",
            &On(facts),
            &mut d,
        )
        .unwrap();
        let loads: Vec<_> = d.args().iter().map(|a| a.program().load).collect();
        assert_eq!(loads, [Load::Arg(0), Load::Arg(7), Load::Arg(1)]);
        assert!(d.entry_args().is_empty());
    }
    let d = u("p:e /bin/bash:0x10 $arg1 n=$arg8:s32 s=+0($arg2):ustring");
    let regs = UserRegs {
        regs: FakeRegs {
            args: vec![7, 0x7ffe_0000_2000, 0, 0, 0, 0, 0, (-2i64) as u64],
            ..Default::default()
        },
        file_base: 0x5555_5555_4000,
    };
    let mut mem = FakeMem::default();
    mem.add(0x7ffe_0000_2000, b"name\0");
    let mut buf = vec![0u8; 4096];
    let ips = HeaderIps {
        first: 0x5555_5555_4010,
        second: 0,
    };
    let n = d.view().record(&regs, &mem, ips, &mut buf);
    buf.truncate(n);
    let mut line = String::new();
    d.view()
        .print_event(&buf, &mut FakeSyms, &mut line)
        .unwrap();
    assert_eq!(line, "e: (0x555555554010) arg1=0x7 n=-2 s=\"name\"");
    // Listed as written.
    let mut listed = String::new();
    d.view().canonical(&mut listed).unwrap();
    assert_eq!(
        listed,
        "p:uprobes/e /bin/bash:0x0000000000000010 arg1=$arg1 n=$arg8:s32 s=+0($arg2):ustring"
    );
}

#[test]
fn exit_records_take_arguments_saved_at_entry() {
    // A uretprobe's `$argN` is saved at entry, one slot a parameter
    // however often it is named, as a kernel exit event's.
    let d = u("r:x /bin/bash:0x10 rv=$retval:s32 s=+0($arg2):ustring n=$arg1 again=$arg2");
    assert_eq!(d.kind(), ProbeKind::Uretprobe);
    assert_eq!(d.entry_args(), [1, 0]);
    let loads: Vec<_> = d.args().iter().map(|a| a.program().load).collect();
    assert_eq!(
        loads,
        [
            Load::RetVal,
            Load::EntryData(0),
            Load::EntryData(1),
            Load::EntryData(0)
        ]
    );
    let regs = UserRegs {
        regs: FakeRegs {
            ret: 3,
            edata: vec![0x7ffe_0000_2000, 42],
            // What the registers hold at return is not what is recorded.
            args: vec![1, 2],
            ..Default::default()
        },
        file_base: 0x5555_5555_4000,
    };
    let mut mem = FakeMem::default();
    mem.add(0x7ffe_0000_2000, b"entry\0");
    let mut buf = vec![0u8; 4096];
    let ips = HeaderIps {
        first: 0x5555_5555_4010,
        second: 0x5555_5555_5000,
    };
    let n = d.view().record(&regs, &mem, ips, &mut buf);
    buf.truncate(n);
    let mut line = String::new();
    d.view()
        .print_event(&buf, &mut FakeSyms, &mut line)
        .unwrap();
    assert_eq!(
        line,
        "x: (0x555555555000 <- 0x555555554010) rv=3 s=\"entry\" n=0x2a again=0x7ffe00002000"
    );
    // Compiled, it keeps its entry words and reads the same.
    let c = compile(&d);
    assert_eq!(c.view().entry_args(), [1, 0]);
    let mut buf2 = vec![0u8; 4096];
    let n2 = c.view().record(&regs, &mem, ips, &mut buf2);
    assert_eq!(&buf2[..n2], &buf[..]);
    // Registers and entry words only: a record of words.
    let w = compile(&u("r:w /bin/bash:0x10 $arg1 $retval"));
    let table = w.word_table().unwrap();
    assert_eq!(
        table.sources(),
        [WordSource::EntryData(0), WordSource::RetVal]
    );

/// Out of fetch slots, a dereference or a memory fetch fails with
/// EINVAL, as the kernel's (`++code == end` in parse_probe_arg()), on
/// uprobe and kprobe lines alike.
#[test]
fn too_many_ops_is_einval() {
    let deep = format!("p /bin/bash:0x10 {}%di{}", "+0(".repeat(15), ")".repeat(15));
    let e = err_of(Control::UprobeEvents, &deep);
    assert_eq!((e.code, e.errno), (TooManyOps, errno::EINVAL));
    let e = err_of(Control::DynamicEvents, &deep);
    assert_eq!((e.code, e.errno), (TooManyOps, errno::EINVAL));
    let deep = format!("p vfs_read {}@0{}", "+0(".repeat(14), ")".repeat(14));
    let e = err_of(Control::KprobeEvents, &deep);
    assert_eq!((e.code, e.errno), (TooManyOps, errno::EINVAL));
}
