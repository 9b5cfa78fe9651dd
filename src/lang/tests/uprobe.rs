// SPDX-License-Identifier: GPL-2.0
//! uprobe lines (`p`/`r` on `PATH:OFFSET` in uprobe_events and
//! dynamic_events), as `trace_uprobe.c` takes them: names and defaults,
//! the listing and removal, the header fields and format (a kprobe's on
//! the same arguments), the arguments uprobes take and the ones they
//! refuse, records read from user memory, and the errors with their
//! carets on each kernel series (uprobe_syntax_errors.tc's cases first).
//! Beyond the kernel: `$argN` at entry, and at return from the words
//! saved at entry; places by name (`PATH:SYMBOL[+OFFS]`), on a fake file
//! and on the host's libc, with their names, listings and refusals.

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
        "p /bin/bash:.x10",
        "p /bin/bash:",
        "p /bin/bash:-10",
        // Words no symbol is made of: a kprobe line's arguments.
        "p a6=$arg2:b4@3/32 %di",
        "p:mu/e p:mu/v3 /bin/bash:0x10",
        "p:mu/ %di:b1@0/7",
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
}

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

// ---- Places by name -------------------------------------------------------

/// `/bin/bash` has `main` (0x30 bytes at file offset 0x2f000) and the
/// variable `counter`; `/usr/bin/python3` has two `twice`;
/// `/lib/x86_64-linux-gnu/libc.so.6` has no symbol table; the others
/// answer as their names say.
struct Functions;

impl Resolver for Functions {
    fn user_file(&self, path: &[u8]) -> UserFile {
        match path {
            b"/tmp/notelf" | b"/tmp/broken" | b"/tmp/huge" | b"/tmp/unreadable" => {
                UserFile::Regular
            }
            _ => FakeKernel.user_file(path),
        }
    }
    fn user_function(&self, path: &[u8], name: &[u8], offs: u64) -> Result<u64, UserFunctionError> {
        use elf::ElfError as E;
        use UserFunctionError::*;
        match (path, name) {
            (b"/tmp/notelf", _) => Err(Elf(E::BadMagic)),
            (b"/tmp/broken", _) => Err(Elf(E::SectionOutOfFile)),
            (b"/tmp/huge", _) => Err(TooBig),
            (b"/tmp/unreadable", _) => Err(Read(5)),
            (b"/lib/x86_64-linux-gnu/libc.so.6", _) => Err(Elf(E::NoSymbolTable)),
            (b"/usr/bin/python3", b"twice") => Err(Elf(E::AmbiguousSymbol)),
            (b"/bin/bash", b"main" | b"main@@V1") if offs < 0x30 => Ok(0x2f000 + offs),
            (b"/bin/bash", b"main") => Err(Elf(E::OffsetPastSymbolEnd)),
            (b"/bin/bash", b"counter") => Err(Elf(E::NotAFunction)),
            _ => Err(Elf(E::SymbolNotFound)),
        }
    }
}

fn named(control: Control, line: &str) -> Box<Definition> {
    let mut d = Box::new(Definition::new());
    match parse(control, line.as_bytes(), &Functions, &mut d) {
        Ok(Command::Define) => d,
        other => panic!("{line:?}: {other:?}"),
    }
}

#[test]
fn places_by_name() {
    for control in [Control::UprobeEvents, Control::DynamicEvents] {
        let d = named(control, "p /bin/bash:main");
        assert_eq!(d.kind(), ProbeKind::Uprobe);
        assert_eq!((d.group(), d.event()), ("uprobes", "p_bash_main_0"));
        assert_eq!(d.view().uprobe_place(), Some(("/bin/bash", 0x2f000, 0)));
        assert_eq!(d.view().uprobe_function(), Some("main"));
        assert_eq!(canon_of(&d), "p:uprobes/p_bash_main_0 /bin/bash:main");
        // The offset, as a kprobe's: decimal or hexadecimal.
        let d = named(control, "p /bin/bash:main+0x10 a=%di");
        assert_eq!(d.view().uprobe_place(), Some(("/bin/bash", 0x2f010, 0)));
        assert_eq!(d.event(), "p_bash_main_16");
        assert_eq!(
            canon_of(&d),
            "p:uprobes/p_bash_main_16 /bin/bash:main+0x10 a=%di"
        );
        // Return probes: `r` or `%return`, named as kretprobes are.
        for line in ["r /bin/bash:main", "p /bin/bash:main%return"] {
            let d = named(control, line);
            assert_eq!(d.kind(), ProbeKind::Uretprobe);
            assert_eq!(canon_of(&d), "r:uprobes/r_bash_main_0 /bin/bash:main");
        }
        // The reference counter, the event named, a version.
        let d = named(control, "p:g/e /bin/bash:main+4(0x20)");
        assert_eq!(d.view().uprobe_place(), Some(("/bin/bash", 0x2f004, 0x20)));
        assert_eq!(canon_of(&d), "p:g/e /bin/bash:main+4(0x20)");
        let d = named(control, "p /bin/bash:main@@V1");
        assert_eq!(d.event(), "p_bash_main__V1_0");
        assert_eq!(
            canon_of(&d),
            "p:uprobes/p_bash_main__V1_0 /bin/bash:main@@V1"
        );
        // `_` starts a name too.
        let e = err_of_in(control, "p /bin/bash:_start");
        assert_eq!(e.code, UprobeNoFunc);
    }
}

#[test]
fn places_by_name_list_and_remove_as_written() {
    let d = named(Control::UprobeEvents, "p:g/e /bin/bash:main+4(0x20) a=%ax");
    let v = d.view();
    assert!(v.matches_removal(None, "e", b" /bin/bash:main+4(0x20)"));
    assert!(v.matches_removal(None, "e", b" /bin/bash:main+4(0x20) a=%ax"));
    assert!(!v.matches_removal(None, "e", b" /bin/bash:0x000000000002f004(0x20)"));
    assert!(!v.matches_removal(None, "e", b" /bin/bash:main(0x20)"));
    // The listing reads back as the same definition.
    let listed = canon_of(&d);
    assert_eq!(canon_of(&named(Control::DynamicEvents, &listed)), listed);
}

fn err_of_in(control: Control, line: &str) -> ParseError {
    let mut d = Box::new(Definition::new());
    match parse(control, line.as_bytes(), &Functions, &mut d) {
        Err(e) => e,
        Ok(c) => panic!("{line:?} unexpectedly accepted: {c:?}"),
    }
}

/// The error of `case` (`^` where the caret goes) in uprobe_events and
/// dynamic_events: its code, errno, and its caret.
fn refused(case: &str, code: ErrorCode, errno: i32) {
    let pos = case.rfind('^').unwrap();
    let cmd: String = case.chars().filter(|&c| c != '^').collect();
    for control in [Control::UprobeEvents, Control::DynamicEvents] {
        let e = err_of_in(control, &cmd);
        assert!(e.logged, "{case:?}: {e:?}");
        assert_eq!(command_text(&e, cmd.as_bytes()), cmd, "{case:?}");
        assert_eq!((e.column, e.code, e.errno), (pos, code, errno), "{case:?}");
        assert_eq!(e.subsystem.name(), "trace_uprobe", "{case:?}");
    }
}

#[test]
fn places_by_name_refused() {
    refused("p /bin/bash:^nosuch", UprobeNoFunc, errno::ENOENT);
    refused("p /bin/bash:^counter", UprobeNotFunc, errno::EINVAL);
    refused("p /bin/bash:main^+0x30", UprobeOffsPastEnd, errno::EINVAL);
    refused("p /bin/bash:main+^0x3z", BadUprobeOffs, errno::EINVAL);
    refused("p /bin/bash:main+^", BadUprobeOffs, errno::EINVAL);
    refused("r /usr/bin/python3:^twice", NonUniqSymbol, 99);
    refused(
        "p /lib/x86_64-linux-gnu/libc.so.6:^malloc",
        UprobeNoSymtab,
        errno::ENOENT,
    );
    refused("p ^/tmp/notelf:main", UprobeNotElf, 8);
    refused("p ^/tmp/broken:main", UprobeBadElf, 8);
    refused("p ^/tmp/huge:main", UprobeElfTooBig, 27);
    refused("p ^/tmp/unreadable:main", UprobeReadFailed, 5);
    // The file is checked first, the suffixes before the name, as for
    // an offset.
    refused("p ^/non_exist_file:main", FileNotFound, errno::ENOENT);
    refused("p ^/tmp:main", NoRegularFile, errno::EINVAL);
    refused("p /bin/bash:main^%hoge", BadAddrSuffix, errno::EINVAL);
    refused("p /bin/bash:main(^1a)", BadRefcnt, errno::EINVAL);
    refused(
        "p /bin/bash:main(0x10)^%return",
        BadRefcntSuffix,
        errno::EINVAL,
    );
    // Offsets stay offsets, with the kernel's errors.
    refused("p /bin/bash:^10a", BadUprobeOffs, errno::EINVAL);
    refused("p /bin/bash:10 ^@symbol", SymOnUprobe, errno::EINVAL);
}

/// The host's libc, read whole: the place by name is where `nm -D`
/// puts the function, mapped through the segment `readelf -l` lists.
#[test]
fn libc_by_name_on_the_host() {
    struct Host;
    impl Resolver for Host {
        fn user_file(&self, path: &[u8]) -> UserFile {
            match std::fs::metadata(std::str::from_utf8(path).unwrap()) {
                Ok(m) if m.is_file() => UserFile::Regular,
                Ok(_) => UserFile::NotRegular,
                Err(_) => UserFile::Missing(errno::ENOENT),
            }
        }
        fn user_function(
            &self,
            path: &[u8],
            name: &[u8],
            offs: u64,
        ) -> Result<u64, UserFunctionError> {
            let bytes = std::fs::read(std::str::from_utf8(path).unwrap())
                .map_err(|_| UserFunctionError::Read(5))?;
            let elf = elf::Elf::parse(&bytes).map_err(UserFunctionError::Elf)?;
            elf.lookup_function(name, offs)
                .map(|p| p.offset)
                .map_err(UserFunctionError::Elf)
        }
    }
    let libc = "/usr/lib/x86_64-linux-gnu/libc.so.6";
    let Ok(nm) = std::process::Command::new("nm")
        .args(["-D", "--defined-only", libc])
        .output()
    else {
        return;
    };
    let nm = String::from_utf8(nm.stdout).unwrap();
    let Some(addr) = nm
        .lines()
        .find(|l| l.ends_with(" malloc@@GLIBC_2.2.5") || l.ends_with(" malloc"))
        .and_then(|l| u64::from_str_radix(l.split_whitespace().next()?, 16).ok())
    else {
        return;
    };
    let readelf = std::process::Command::new("readelf")
        .args(["-lW", libc])
        .output()
        .unwrap();
    let readelf = String::from_utf8(readelf.stdout).unwrap();
    let offset = readelf
        .lines()
        .filter(|l| l.trim_start().starts_with("LOAD"))
        .find_map(|l| {
            let w: Vec<u64> = l
                .split_whitespace()
                .skip(1)
                .take(5)
                .map(|x| u64::from_str_radix(x.trim_start_matches("0x"), 16).unwrap())
                .collect();
            (addr >= w[1] && addr < w[1] + w[3]).then(|| addr - w[1] + w[0])
        })
        .unwrap();
    let line = format!("p {libc}:malloc+4 size=%di:u64");
    let mut d = Box::new(Definition::new());
    assert!(matches!(
        parse(Control::UprobeEvents, line.as_bytes(), &Host, &mut d),
        Ok(Command::Define)
    ));
    assert_eq!(d.view().uprobe_place(), Some((libc, offset + 4, 0)));
    assert_eq!(d.event(), "p_libc_malloc_4");
    assert_eq!(
        canon_of(&d),
        format!("p:uprobes/p_libc_malloc_4 {libc}:malloc+4 size=%di:u64")
    );
    let mut d = Box::new(Definition::new());
    let e = parse(
        Control::UprobeEvents,
        format!("p {libc}:no_such_function").as_bytes(),
        &Host,
        &mut d,
    )
    .unwrap_err();
    assert_eq!((e.code, e.errno), (UprobeNoFunc, errno::ENOENT));
}

// ---- Function events on user functions ------------------------------------

fn user_fe(line: &str) -> Box<Definition> {
    named(Control::FunctionEvents, line)
}

#[test]
fn user_function_events() {
    let d = user_fe("/bin/bash:main(int argc, x64 argv, string name)");
    assert_eq!(d.kind(), ProbeKind::UserFunctionEntry);
    assert!(d.kind().is_function_event() && d.kind().is_user());
    assert_eq!((d.group(), d.event()), ("functions", "main"));
    assert_eq!(d.view().uprobe_place(), Some(("/bin/bash", 0x2f000, 0)));
    assert_eq!(
        canon_of(&d),
        "/bin/bash:main(int argc, x64 argv, string name)"
    );
    // A function event's header and print, as a kernel function's.
    let fields = fields_of(&d);
    assert!(fields[0].contains("__parent_ip") && fields[1].contains("__ip"));
    // The parameters (the registers of the x86_64 SysV ABI, as the
    // kernel's regs_get_kernel_argument() reads them from the task's
    // user registers), strings from user memory.
    let regs = FakeRegs {
        args: vec![3, 0x7ffe_0000_1000, 0x7ffe_0000_2000],
        ..FakeRegs::default()
    };
    let regs = UserRegs { regs, file_base: 0 };
    let mut mem = FakeMem::default();
    mem.add(0x7ffe_0000_2000, b"user\0");
    let mut buf = vec![0u8; 4096];
    let ips = HeaderIps {
        first: 0x5555_5555_5123,
        second: 0x5555_5555_6000,
    };
    let n = d.view().record(&regs, &mem, ips, &mut buf);
    buf.truncate(n);
    let mut line = String::new();
    d.view()
        .print_event(&buf, &mut FakeSyms, &mut line)
        .unwrap();
    assert!(
        line.ends_with("(argc=3, argv=7ffe00001000, name=user)"),
        "{line}"
    );
    // Dereferences and `|`, as for kernel functions.
    let d = user_fe("/bin/bash:main(NULL, string argv[0] | x64 argv)");
    assert_eq!(d.args().len(), 2);
    // The exit: the return value, hooked by a uretprobe.
    let d = user_fe("/bin/bash:main() -> int ret");
    assert_eq!(d.kind(), ProbeKind::UserFunctionExit);
    assert_eq!(d.event(), "main__exit");
    assert_eq!(canon_of(&d), "/bin/bash:main() -> int ret");
    assert_eq!(d.view().uprobe_place(), Some(("/bin/bash", 0x2f000, 0)));
    // Kernel function events are as they were.
    let d = user_fe("vfs_read(x64 file)");
    assert_eq!(d.kind(), ProbeKind::FunctionEntry);
    assert_eq!(d.view().uprobe_place(), None);
}

/// The error of `case` (`^` where the caret goes) in function_events.
fn fe_refused(case: &str, code: ErrorCode, errno: i32) {
    let pos = case.rfind('^').unwrap();
    let cmd: String = case.chars().filter(|&c| c != '^').collect();
    let e = err_of_in(Control::FunctionEvents, &cmd);
    assert!(e.logged, "{case:?}: {e:?}");
    assert_eq!((e.column, e.code, e.errno), (pos, code, errno), "{case:?}");
    assert_eq!(e.subsystem.name(), "function_events", "{case:?}");
}

#[test]
fn user_function_events_refused() {
    fe_refused("/bin/bash:^nosuch(int a)", UprobeNoFunc, errno::ENOENT);
    fe_refused("/bin/bash:^counter()", UprobeNotFunc, errno::EINVAL);
    fe_refused("^/tmp/notelf:main()", UprobeNotElf, 8);
    fe_refused("^/non_exist_file:main()", FileNotFound, errno::ENOENT);
    fe_refused("^/tmp:main()", NoRegularFile, errno::EINVAL);
    fe_refused("^/bin/bash(int a)", FeBadFunc, errno::EINVAL);
    fe_refused("/bin/bash:^(int a)", FeBadFunc, errno::EINVAL);
    // No BTF: positional arguments with a type only.
    fe_refused("/bin/bash:main(^argc)", UserFuncNamedArg, errno::EOPNOTSUPP);
    fe_refused("/bin/bash:main(^...)", UserFuncNamedArg, errno::EOPNOTSUPP);
    fe_refused(
        "/bin/bash:main() -> ^ret",
        UserFuncNamedArg,
        errno::EOPNOTSUPP,
    );
    // Six registers.
    fe_refused(
        "/bin/bash:main(int a, int b, int c, int d, int e, int f, int ^g)",
        UserFuncTooManyArgs,
        errno::E2BIG,
    );
}

#[test]
fn user_function_exit_takes_arguments_saved_at_entry() {
    // As a kernel function's exit event, the parameters an exit names
    // are saved at entry (a uretprobe's `$argN` words) and read at return.
    let d = user_fe("/bin/bash:main(int argc, NULL, string name) -> int ret");
    assert_eq!(d.kind(), ProbeKind::UserFunctionExit);
    assert_eq!(d.entry_args(), [0, 2]);
    let loads: Vec<_> = d.args().iter().map(|a| a.program().load).collect();
    assert_eq!(loads[..2], [Load::EntryData(0), Load::EntryData(1)]);
    let regs = UserRegs {
        regs: FakeRegs {
            ret: 7,
            edata: vec![3, 0x7ffe_0000_2000],
            // What the registers hold at return is not what is recorded.
            args: vec![9, 9, 9],
            ..Default::default()
        },
        file_base: 0,
    };
    let mut mem = FakeMem::default();
    mem.add(0x7ffe_0000_2000, b"user\0");
    let mut buf = vec![0u8; 4096];
    let ips = HeaderIps {
        first: 0x5555_5555_6000,
        second: 0x5555_5555_5123,
    };
    let n = d.view().record(&regs, &mem, ips, &mut buf);
    buf.truncate(n);
    let mut line = String::new();
    d.view()
        .print_event(&buf, &mut FakeSyms, &mut line)
        .unwrap();
    assert!(line.ends_with("(argc=3, name=user) ret=7"), "{line}");
    let c = compile(&d);
    assert_eq!(c.view().entry_args(), [0, 2]);
    let mut buf2 = vec![0u8; 4096];
    let n2 = c.view().record(&regs, &mem, ips, &mut buf2);
    assert_eq!(&buf2[..n2], &buf[..]);
}
