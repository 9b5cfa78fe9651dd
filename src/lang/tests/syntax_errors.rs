// SPDX-License-Identifier: GPL-2.0
//! Golden tests: every error case of the kernel's ftracetest syntax suites
//! (kprobe_syntax_errors.tc, fprobe_syntax_errors.tc,
//! tprobe_syntax_errors.tc) with the caret position `^` the kernel's
//! error_log shows, plus the argument syntax cases of kprobe_args_syntax.tc.

mod common;
use common::*;

mod whole_lines;
use dynprobe_lang::ErrorCode::*;
use dynprobe_lang::*;

fn check(control: Control, case: &str, code: ErrorCode) {
    let pos = case.rfind('^').unwrap();
    let cmd: String = case.chars().filter(|&c| c != '^').collect();
    let e = err_of(control, &cmd);
    let shown = command_text(&e, cmd.as_bytes());
    assert_eq!(shown, cmd, "command text for {case:?}");
    assert!(e.logged, "{case:?} not logged: {e:?}");
    assert_eq!((e.column, e.code), (pos, code), "{case:?}: {e:?}");
}

fn k(case: &str, code: ErrorCode) {
    check(Control::KprobeEvents, case, code);
    // The same line in dynamic_events behaves the same.
    check(Control::DynamicEvents, case, code);
}

fn f(case: &str, code: ErrorCode) {
    check(Control::DynamicEvents, case, code);
    let e = err_of(Control::DynamicEvents, &case.replace('^', ""));
    assert_eq!(e.subsystem.name(), "trace_fprobe");
}

const LONG65: &str = "12345678901234567890123456789012345678901234567890123456789012345";

#[test]
fn kprobe_syntax_errors() {
    k("p^100 vfs_read", BadMaxactType);
    k("r^1a111 vfs_read", BadMaxact);
    k("r^100000 vfs_read", MaxactTooBig);
    k("p ^non_exist_func", BadProbeAddr);
    k("p ^hoge-fuga", BadProbeAddr);
    k("p ^hoge+1000-1000", BadProbeAddr);
    k("r ^vfs_read+10", BadRetprobe);
    k("p:^/bar vfs_read", NoGroupName);
    k(&format!("p:^{LONG65}/bar vfs_read"), GroupTooLong);
    k("p:^foo.1/bar vfs_read", BadGroupName);
    k("p:^ vfs_read", NoEventName);
    k(&format!("p:foo/^{LONG65} vfs_read"), EventTooLong);
    k("p:foo/^bar.1 vfs_read", BadEventName);
    k("p vfs_read ^$retval", RetvalOnProbe);
    k("p vfs_read ^$stack10000", BadStackNum);
    // With BTF for vfs_read the kernel expands $argN first (NO_BTFARG).
    k("p vfs_read ^$arg10000", NoBtfarg);
    k("p vfs_read ^$none_var", BadVar);
    k("p vfs_read ^%none_reg", BadRegName);
    k("p vfs_read ^@12345678abcde", BadMemAddr);
    k("p vfs_read ^@+10", FileOnKprobe);
    k("p vfs_read arg1=\\^x", BadImm);
    k("p vfs_read arg1=\\\"abcd^", ImmstrNoClose);
    k("p vfs_read ^+0@0)", DerefNeedBrace);
    k("p vfs_read ^+0ab1(@0)", BadDerefOffs);
    k("p vfs_read +0(+0(@0^)", DerefOpenBrace);
    k("p vfs_read +0(^$comm)", CommCantDeref);
    k("p vfs_read ^&1", BadFetchArg);
    k(
        "p vfs_read +0(^+0(+0(+0(+0(+0(+0(+0(+0(+0(+0(+0(+0(+0(@0))))))))))))))",
        TooManyOps,
    );
    k("p vfs_read +0(@11):u8[10^", ArrayNoClose);
    k("p vfs_read +0(@11):u8[10]^a", BadArraySuffix);
    k("p vfs_read +0(@11):u8[^10a]", BadArrayNum);
    k("p vfs_read +0(@11):u8[^256]", ArrayTooBig);
    k("p vfs_read @11:^unknown_type", BadType);
    k("p vfs_read $stack0:^string", BadString);
    k("p vfs_read @11:^b10@a/16", BadBitfield);
    k(
        "p vfs_read ^arg123456789012345678901234567890=@11",
        ArgNameTooLong,
    );
    k("p vfs_read ^=@11", NoArgName);
    k("p vfs_read ^var.1=@11", BadArgName);
    k("p vfs_read var1=@11 ^var1=@12", UsedArgName);
    k(
        "p vfs_read ^+1234567(+1234567(+1234567(+1234567(+1234567(+1234567(@1234))))))",
        ArgTooLong,
    );
    k("p vfs_read arg1=^", NoArgBody);
    k("p vfs_read^%hoge", BadAddrSuffix);
    k("p ^vfs_read+10%return", BadRetprobe);
    // 7.2 reports BAD_VAR for these (BAD_VAR_ARGS is never emitted).
    k("p vfs_read args=^$arg*", BadVar);
    k("p vfs_read +0(^$arg*)", BadVar);
    k("p vfs_read $arg* ^$arg*", DoubleArgs);
    k("p vfs_read+20 ^$arg*", NofentryArgs);
    k("p vfs_read ^hoge", NoBtfarg);
    k("p kfree ^$arg10", NoBtfarg);
    k("r kfree ^$retval", NoRetval);
}

#[test]
fn fprobe_syntax_errors() {
    f("f^100 vfs_read", BadMaxact);
    f("f ^non_exist_func", BadProbeAddr);
    f("f ^vfs_read+10", BadProbeAddr);
    f("f:^/bar vfs_read", NoGroupName);
    f(&format!("f:^{LONG65}/bar vfs_read"), GroupTooLong);
    f("f:^foo.1/bar vfs_read", BadGroupName);
    f("f:^ vfs_read", NoEventName);
    f(&format!("f:foo/^{LONG65} vfs_read"), EventTooLong);
    f("f:foo/^bar.1 vfs_read", BadEventName);
    f("t kmem^/kfree", BadTpName);
    f("f vfs_read ^$stack10000", BadStackNum);
    f("f vfs_read ^$arg10000", NoBtfarg);
    f("f vfs_read ^$none_var", BadVar);
    f("f vfs_read ^%ax", BadVar);
    f("f vfs_read ^@12345678abcde", BadMemAddr);
    f("f vfs_read ^@+10", FileOnKprobe);
    f("f vfs_read arg1=\\^x", BadImm);
    f("f vfs_read arg1=\\\"abcd^", ImmstrNoClose);
    f("f vfs_read ^+0@0)", DerefNeedBrace);
    f("f vfs_read ^+0ab1(@0)", BadDerefOffs);
    f("f vfs_read +0(+0(@0^)", DerefOpenBrace);
    f("f vfs_read +0(^$comm)", CommCantDeref);
    f("f vfs_read ^&1", BadFetchArg);
    f(
        "f vfs_read +0(^+0(+0(+0(+0(+0(+0(+0(+0(+0(+0(+0(+0(+0(@0))))))))))))))",
        TooManyOps,
    );
    f("f vfs_read +0(@11):u8[10^", ArrayNoClose);
    f("f vfs_read +0(@11):u8[10]^a", BadArraySuffix);
    f("f vfs_read +0(@11):u8[^10a]", BadArrayNum);
    f("f vfs_read +0(@11):u8[^256]", ArrayTooBig);
    f("f vfs_read @11:^unknown_type", BadType);
    f("f vfs_read $stack0:^string", BadString);
    f("f vfs_read @11:^b10@a/16", BadBitfield);
    f(
        "f vfs_read ^arg123456789012345678901234567890=@11",
        ArgNameTooLong,
    );
    f("f vfs_read ^=@11", NoArgName);
    f("f vfs_read ^var.1=@11", BadArgName);
    f("f vfs_read var1=@11 ^var1=@12", UsedArgName);
    f(
        "f vfs_read ^+1234567(+1234567(+1234567(+1234567(+1234567(+1234567(@1234))))))",
        ArgTooLong,
    );
    f("f vfs_read arg1=^", NoArgBody);
    f("f vfs_read^%hoge", BadAddrSuffix);
    f("f vfs_read args=^$arg*", BadVar);
    f("f vfs_read +0(^$arg*)", BadVar);
    f("f vfs_read $arg* ^$arg*", DoubleArgs);
    f("f vfs_read ^hoge", NoBtfarg);
    f("f kfree ^$arg10", NoBtfarg);
    f("f kfree%return ^$retval", NoRetval);
    f("f vfs_read%return $retval->^foo", NoPtrStrct);
    f("f vfs_read file->^foo", NoBtfField);
    f("f vfs_read file^-.foo", BadHyphen);
    f("f vfs_read ^file:string", BadType4str);
}

#[test]
fn tprobe_syntax_errors() {
    f("t^100 kfree", BadMaxact);
    f("t:^/bar kfree", NoGroupName);
    f(&format!("t:^{LONG65}/bar kfree"), GroupTooLong);
    f("t:^foo.1/bar kfree", BadGroupName);
    f("t:^ kfree", NoEventName);
    f(&format!("t:foo/^{LONG65} kfree"), EventTooLong);
    f("t:foo/^bar.1 kfree", BadEventName);
    f("t kfree ^$retval", RetvalOnProbe);
    f("t kfree ^$stack10000", BadStackNum);
    // The kernel's test checks only the caret: with the tracepoint's BTF
    // the number is checked against its parameters first (NO_BTFARG),
    // without it against the stack (BAD_ARG_NUM).
    f("t kfree ^$arg10000", NoBtfarg);
    f("t no_btf_tracepoint ^$arg10000", BadArgNum);
    f("t kfree ^$none_var", BadVar);
    f("t kfree ^%rax", BadVar);
    f("t kfree ^@12345678abcde", BadMemAddr);
    f("t kfree ^@+10", FileOnKprobe);
    f("t kfree arg1=\\^x", BadImm);
    f("t kfree arg1=\\\"abcd^", ImmstrNoClose);
    f("t kfree ^+0@0)", DerefNeedBrace);
    f("t kfree ^+0ab1(@0)", BadDerefOffs);
    f("t kfree +0(+0(@0^)", DerefOpenBrace);
    f("t kfree +0(^$comm)", CommCantDeref);
    f("t kfree ^&1", BadFetchArg);
    f("t kfree +0(@11):u8[10^", ArrayNoClose);
    f("t kfree +0(@11):u8[10]^a", BadArraySuffix);
    f("t kfree +0(@11):u8[^10a]", BadArrayNum);
    f("t kfree +0(@11):u8[^256]", ArrayTooBig);
    f("t kfree @11:^unknown_type", BadType);
    f("t kfree $stack0:^string", BadString);
    f("t kfree @11:^b10@a/16", BadBitfield);
    f(
        "t kfree ^arg123456789012345678901234567890=@11",
        ArgNameTooLong,
    );
    f("t kfree ^=@11", NoArgName);
    f("t kfree ^var.1=@11", BadArgName);
    f("t kfree var1=@11 ^var1=@12", UsedArgName);
    f("t kfree arg1=^", NoArgBody);
}

fn good(line: &str) {
    let _ = def_of(Control::KprobeEvents, &format!("p vfs_read {line}"));
}

fn bad(line: &str) {
    let _ = err_of(Control::KprobeEvents, &format!("p vfs_read {line}"));
}

#[test]
fn kprobe_args_syntax() {
    good("%ax");
    bad("%ex");
    good("@_sdata");
    good("@0xffffffff82000000");
    good("@_sdata+10");
    good("@_sdata-10");
    bad("@");
    bad("@deaqswdefr");
    bad("@_sdata*10");
    good("$stack");
    good("$stack0");
    good("$stack1");
    bad("$stackp");
    bad("$stack0+10");
    bad("$stack1-10");
    let _ = def_of(Control::KprobeEvents, "r vfs_read $retval");
    bad("$retval");
    good("$comm");
    good("+0(%ax)");
    good("-0(%ax)");
    good("+10($stack)");
    good("+0($stack1)");
    good("+10(@_sdata-10)");
    good("+0(+10(+20($stack)))");
    bad("+(%ax)");
    bad("(%ax+10)");
    bad("-(%ax)");
    bad("(%ax)");
    bad("+10($comm)");
    good("varname=%ax");
    good("%ax:x16");
    bad("%ax::x16");
    bad("%ax:y16");
    bad("x16:%ax");
    good("$comm:string");
    good("+0($stack):string");
    bad("$comm:x64");
    bad("$stack:string");
    bad("%ax:string");
}

#[test]
fn misc_errors() {
    // Not a kprobe line in kprobe_events: EINVAL without error_log entry.
    let e = err_of(Control::KprobeEvents, "f vfs_read");
    assert!(!e.logged);
    // In dynamic_events: the dynevent "No matching dynamic event type".
    let e = err_of(Control::DynamicEvents, "x vfs_read");
    assert_eq!(
        (e.code, e.subsystem, e.logged),
        (NoMatchingType, Subsystem::Dynevent, true)
    );
    // A uprobe-looking place is not a kprobe's: kprobe_events refuses it
    // unlogged, dynamic_events takes it for a uprobe (tests/uprobe.rs).
    let e = err_of(Control::KprobeEvents, "p /bin/sh:0x10");
    assert!(!e.logged);
    let e = err_of(Control::DynamicEvents, "p /no/such/file:0x10");
    assert_eq!((e.code, e.subsystem), (FileNotFound, Subsystem::Uprobe));
    // Non-unique symbol.
    let e = err_of(Control::KprobeEvents, "p dup_sym");
    assert_eq!((e.code, e.column), (NonUniqSymbol, 2));
    // Too many arguments (index 2).
    let mut line = String::from("p vfs_read");
    for i in 0..129 {
        line += &format!(" a{i}=%ax");
    }
    let e = err_of(Control::KprobeEvents, &line);
    assert_eq!((e.code, e.column, e.errno), (TooManyArgs, 11, errno::E2BIG));
    // Record too big: 48 x u64[8] = 3072 bytes is the limit.
    let mut line = String::from("p vfs_read");
    for i in 0..48 {
        line += &format!(" a{i}=+0(%ax):u64[8]");
    }
    let _ = def_of(Control::KprobeEvents, &line);
    line += " z=%ax:u8";
    assert_eq!(err_of(Control::KprobeEvents, &line).code, EventTooBig);
    // Unknown @SYM fails at registration, reported at the probe place.
    let e = err_of(Control::KprobeEvents, "p vfs_read @nosuchsym");
    assert_eq!((e.code, e.column), (BadProbeAddr, 2));
    // Empty symbol names never resolve (found by fuzzing).
    for l in ["p:ev %return", "p -4", "f %return", "f mod:", "p:_ 8+0"] {
        let e = err_of(Control::DynamicEvents, l);
        assert_eq!(
            (e.code, e.column),
            (BadProbeAddr, l.find(' ').unwrap() + 1),
            "{l}"
        );
    }
    // Comments and blank lines.
    let mut d = Box::new(Definition::new());
    for l in ["", "   ", "# comment", "  # p vfs_read"] {
        assert_eq!(
            parse(Control::DynamicEvents, l.as_bytes(), &FakeKernel, &mut d),
            Ok(Command::Nothing)
        );
    }
    // Comment after a definition is ignored.
    let d = def_of(Control::KprobeEvents, "p:foo vfs_read %di # trailing");
    assert_eq!(d.args().len(), 1);
    // Every error has a message.
    assert_eq!(BadType.message(), "Unknown type is specified");
    assert_eq!(ImmstrNoClose.message(), "String is not closed with '\"'");
}

#[test]
fn removal_commands() {
    let mut d = Box::new(Definition::new());
    let c = parse(Control::KprobeEvents, b"-:myevent", &FakeKernel, &mut d).unwrap();
    assert_eq!(
        c,
        Command::Remove {
            group: None,
            event: "myevent",
            args: b"",
        }
    );
    let c = parse(Control::DynamicEvents, b"-:grp/", &FakeKernel, &mut d).unwrap();
    assert!(matches!(
        c,
        Command::Remove {
            group: Some("grp"),
            event: "",
            ..
        }
    ));
    let c = parse(
        Control::DynamicEvents,
        b"!p:kprobes/ev vfs_read",
        &FakeKernel,
        &mut d,
    )
    .unwrap();
    let args = match c {
        Command::Remove {
            group: Some("kprobes"),
            event: "ev",
            args,
            ..
        } => args,
        other => panic!("{other:?}"),
    };
    let def = def_of(Control::KprobeEvents, "p:kprobes/ev vfs_read a=%di:u32");
    assert!(def.view().matches_removal(Some("kprobes"), "ev", args));
    assert!(def
        .view()
        .matches_removal(None, "ev", b" vfs_read a=%di:u32"));
    assert!(!def.view().matches_removal(None, "ev", b"vfs_read a=%di"));
    assert!(!def.view().matches_removal(None, "ev", b"vfs_write"));
    assert!(!def.view().matches_removal(Some("other"), "ev", b""));
    assert!(def.view().matches_removal(Some("kprobes"), "", b""));
    let def = def_of(Control::KprobeEvents, "p:ev vfs_read+4");
    assert!(def.view().matches_removal(None, "ev", b"vfs_read+4"));
    // "-" must be followed by ':'; "-:" alone names nothing.
    assert!(parse(Control::KprobeEvents, b"-foo", &FakeKernel, &mut d).is_err());
    assert!(parse(Control::KprobeEvents, b"-:", &FakeKernel, &mut d).is_err());
    // '!' is not a removal in kprobe_events.
    assert!(parse(
        Control::KprobeEvents,
        b"!p:ev vfs_read",
        &FakeKernel,
        &mut d
    )
    .is_err());
}

/// A code passed as a number (`code as u8`) is taken back by
/// `from_value`: `ALL` lists every code at its own value, once.
#[test]
fn error_codes_round_trip_through_their_value() {
    for (value, code) in (0u8..).zip(ErrorCode::ALL) {
        assert_eq!(code as u8, value, "{code:?}");
        assert_eq!(ErrorCode::from_value(value), Some(code));
        assert!(!code.message().is_empty());
        assert!(!code.name().is_empty());
    }
    let past = u8::try_from(ErrorCode::ALL.len()).unwrap();
    for value in past..=u8::MAX {
        assert_eq!(ErrorCode::from_value(value), None, "{value}");
    }
}

/// Each series' table lists distinct codes, and every code is either in
/// a kernel's table (logged with the kernel's table at that index) or
/// not (logged with dynprobe's own text); the function event and
/// synthetic event codes are in no kernel's probe table.
#[test]
fn kernel_tables_are_consistent() {
    assert_eq!(SERIES.len(), 2);
    assert_eq!(LINUX_7_2.errors().len(), 82);
    assert_eq!(LINUX_7_3.errors().len(), 89);
    for k in SERIES {
        let errors = k.errors();
        for (index, code) in (0u8..).zip(errors) {
            assert_eq!(k.index_of(*code), Some(index), "{} {code:?}", k.series());
            assert_eq!(k.code_at(index), Some(*code));
        }
        assert_eq!(k.code_at(u8::try_from(errors.len()).unwrap()), None);
        for code in ErrorCode::ALL {
            let listed = errors.iter().filter(|c| **c == code).count();
            assert!(listed <= 1, "{} lists {code:?} twice", k.series());
            if listed == 0 {
                assert_eq!(k.index_of(code), None);
                assert_eq!(k.message(code), code.message());
            }
        }
        for code in [
            FeNoOpenParen,
            NoMatchingType,
            SynthBadName,
            EpFilterUnsupported,
        ] {
            assert_eq!(k.index_of(code), None, "{code:?}");
        }
    }
    // The same code sits at different indices on the two series.
    assert_eq!(LINUX_7_2.index_of(FileNotFound), Some(0));
    assert_eq!(LINUX_7_3.index_of(FileNotFound), Some(50));
    assert_eq!(LINUX_7_3.index_of(Argidx2big), Some(0));
    assert_eq!(LINUX_7_2.index_of(TooManyNested), None);
    assert_eq!(LINUX_7_3.index_of(TooManyNested), Some(81));
    assert_eq!(
        LINUX_7_2.message(FileOnKprobe),
        "File offset is not available with kprobe"
    );
    assert_eq!(
        LINUX_7_3.message(FileOnKprobe),
        "File offset is not available for kernel probes"
    );
    // A 7.3-only code logged on 7.2 goes through dynprobe's own table
    // with 7.3's text.
    assert_eq!(
        LINUX_7_2.message(TooManyNested),
        "Too many nested typecasts/dereferences"
    );
}

/// error_log shows a kernel code through the running kernel's table at
/// that kernel's index, and any other code with dynprobe's text.
#[test]
fn error_log_entries_per_kernel() {
    assert_eq!(LINUX_7_2.log_entry(BadType), LogEntry::Kernel(44));
    assert_eq!(LINUX_7_3.log_entry(BadType), LogEntry::Kernel(35));
    assert_eq!(LINUX_7_2.log_entry(ArgTooLong), LogEntry::Kernel(52));
    assert_eq!(LINUX_7_3.log_entry(ArgTooLong), LogEntry::Kernel(3));
    assert_eq!(
        LINUX_7_2.log_entry(TypecastReqField),
        LogEntry::Own("Typecast requires a field access")
    );
    assert_eq!(LINUX_7_3.log_entry(TypecastReqField), LogEntry::Kernel(86));
    for k in SERIES {
        assert_eq!(
            k.log_entry(FeNoOpenParen),
            LogEntry::Own("Expected '(' after the function name")
        );
        for code in ErrorCode::ALL {
            match k.log_entry(code) {
                LogEntry::Kernel(i) => assert_eq!(k.code_at(i), Some(code)),
                LogEntry::Own(text) => {
                    assert_eq!(k.index_of(code), None);
                    assert_eq!(text, k.message(code));
                }
            }
        }
    }
}

/// A resolver that answers only which kernel series it parses for.
struct Series(&'static KernelFacts);

impl Resolver for Series {
    fn kernel(&self) -> &'static KernelFacts {
        self.0
    }
}

/// An argument expression of exactly `len` bytes: `+00...0(%di)`.
fn expression(len: usize) -> String {
    format!("+{}(%di)", "0".repeat(len - 6))
}

/// `MAX_ARGSTR_LEN` is the parsing kernel's: 63 on 7.2 (also the default
/// for resolvers that do not say), 255 on 7.3. The longest accepted
/// expression is kept whole; one byte more is ARG_TOO_LONG (E2BIG) with
/// the caret at the expression, after `NAME=`.
#[test]
fn argument_length_limit_is_the_kernels() {
    argument_length_limit(&Series(&LINUX_7_2), 63);
    argument_length_limit(&FakeKernel, 63);
    argument_length_limit(&Series(&LINUX_7_3), 255);
}

fn argument_length_limit<R: Resolver>(r: &R, max: usize) {
    let body = expression(max);
    let d = parse_with(r, &format!("p:g/e vfs_read a={body}")).unwrap();
    assert_eq!(d.args()[0].text(), body);
    // The same without a name.
    let d = parse_with(r, &format!("p:g/e vfs_read {body}")).unwrap();
    assert_eq!(d.args()[0].text(), body);
    for len in [max + 1, max + 2, 300, 700] {
        let line = format!("p:g/e vfs_read x=%ax a={}", expression(len));
        let e = parse_with(r, &line).map(|_| ()).unwrap_err();
        assert_eq!(
            (e.code, e.column, e.errno),
            (ArgTooLong, line.find("a=").unwrap() + 2, errno::E2BIG),
            "{max} {len}"
        );
        let line = format!("p:g/e vfs_read x=%ax {}", expression(len));
        let e = parse_with(r, &line).map(|_| ()).unwrap_err();
        assert_eq!(
            (e.code, e.column, e.errno),
            (ArgTooLong, line.find('+').unwrap(), errno::E2BIG),
            "{max} {len}"
        );
    }
}

/// `n` dereferences around `%di`: `+0(+0(...(%di)...))`.
fn nested(n: usize) -> String {
    format!("{}%di{}", "+0(".repeat(n), ")".repeat(n))
}

/// 7.3 caps dereference nesting at `TRACEPROBE_MAX_NESTED_LEVEL` (8):
/// the ninth level is TOO_MANY_NESTED (E2BIG) with the caret at its `+`,
/// before anything in it is read. 7.2 has no such cap: nine levels are a
/// valid argument there.
#[test]
fn nesting_cap_is_the_kernels() {
    let on72 = Series(&LINUX_7_2);
    let on73 = Series(&LINUX_7_3);
    for r in [&on72, &on73] {
        let d = parse_with(r, &format!("p:g/e vfs_read a={}", nested(8))).unwrap();
        assert_eq!(d.args()[0].text(), nested(8));
    }
    parse_with(&on72, &format!("p:g/e vfs_read a={}", nested(9))).unwrap();
    parse_with(&FakeKernel, &format!("p:g/e vfs_read a={}", nested(9))).unwrap();
    for (n, inner) in [(9, nested(0)), (14, nested(0)), (9, "+0%di".to_string())] {
        let body = format!("{}{inner}{}", "+0(".repeat(n), ")".repeat(n));
        let line = format!("p:g/e vfs_read x=%ax a={body}");
        let e = parse_with(&on73, &line).map(|_| ()).unwrap_err();
        assert_eq!(
            (e.code, e.column, e.errno),
            (
                TooManyNested,
                line.find("a=").unwrap() + 2 + 3 * 8,
                errno::E2BIG
            ),
            "{line}"
        );
    }
    // On 7.2 the same ninth level's own error shows instead.
    let line = format!("p:g/e vfs_read a={}+0%di{}", "+0(".repeat(8), ")".repeat(8));
    let e = parse_with(&on72, &line).map(|_| ()).unwrap_err();
    assert_eq!(e.code, DerefNeedBrace, "{line}");
}

/// 7.3's per-CPU forms, on both series: what they accept, their errors
/// with the kernel's carets (`parse_this_cpu()`), and the nesting cap
/// counting them as levels on 7.3.
#[test]
fn per_cpu_forms() {
    for line in [
        "p:g/e vfs_read a=this_cpu_read(@jiffies) b=this_cpu_ptr(%di)",
        "p:g/e vfs_read a=+8(this_cpu_ptr(%si)):u32 b=this_cpu_read(+0(%di))",
        "r:g/e vfs_read a=this_cpu_ptr($retval)",
        "p:g/e vfs_read a=this_cpu_read($arg1):s32",
    ] {
        parse_with(&FakeKernel, line).unwrap_or_else(|e| panic!("{line}: {e:?}"));
    }
    k("p vfs_read this_cpu_read(%di^", DerefOpenBrace);
    k("p vfs_read this_cpu_ptr(^$comm)", CommCantDeref);
    k("p vfs_read this_cpu_ptr(^%zz)", BadRegName);
    k("p vfs_read this_cpu_ptr(^\\\"x\")", CommCantDeref);
    f("f vfs_read this_cpu_read(^$comm)", CommCantDeref);
    let on73 = Series(&LINUX_7_3);
    let line = format!(
        "p:g/e vfs_read a={}this_cpu_read(%di){}",
        "+0(".repeat(8),
        ")".repeat(8)
    );
    let e = parse_with(&on73, &line).map(|_| ()).unwrap_err();
    assert_eq!(
        (e.code, e.column),
        (TooManyNested, line.find("this_cpu").unwrap()),
        "{line}"
    );
    parse_with(&Series(&LINUX_7_2), &line).unwrap();
}

/// A `$stackN`/`$argN` number that overflows fails with `ERANGE` on 7.3
/// (its parser passes `kstrtoul()`'s errno on) and `EINVAL` on 7.2, both
/// with `BAD_VAR` at the argument; digits followed by junk are `EINVAL`
/// on both.
#[test]
fn var_number_errno_is_the_kernels() {
    let on72 = Series(&LINUX_7_2);
    let on73 = Series(&LINUX_7_3);
    let big = "99999999999999999999999";
    for (arg, on72_errno, on73_errno) in [
        (format!("$stack{big}"), errno::EINVAL, errno::ERANGE),
        (format!("$arg{big}"), errno::EINVAL, errno::ERANGE),
        ("$stack1x".to_string(), errno::EINVAL, errno::EINVAL),
        ("$arg2x".to_string(), errno::EINVAL, errno::EINVAL),
    ] {
        let line = format!("p:g/e vfs_read a={arg}");
        let column = line.find("a=").unwrap() + 2;
        let e72 = parse_with(&on72, &line).map(|_| ()).unwrap_err();
        let e73 = parse_with(&on73, &line).map(|_| ()).unwrap_err();
        assert_eq!(
            (e72.code, e72.column, e72.errno),
            (BadVar, column, on72_errno),
            "{line}"
        );
        assert_eq!(
            (e73.code, e73.column, e73.errno),
            (BadVar, column, on73_errno),
            "{line}"
        );
    }
}

fn parse_with<R: Resolver>(r: &R, line: &str) -> Result<Box<Definition>, ParseError> {
    let mut d = Box::new(Definition::new());
    match parse(Control::KprobeEvents, line.as_bytes(), r, &mut d) {
        Ok(Command::Define) => Ok(d),
        Ok(other) => panic!("{line}: {other:?}"),
        Err(e) => Err(e),
    }
}

/// The facts are found by the running kernel's version; no other series
/// has any.
#[test]
fn facts_by_version() {
    assert_eq!(for_version(7, 2).map(KernelFacts::series), Some("7.2"));
    assert_eq!(for_version(7, 3).map(KernelFacts::series), Some("7.3"));
    assert_eq!(for_version(7, 3).map(KernelFacts::version), Some((7, 3)));
    assert!(for_version(7, 1).is_none());
    assert!(for_version(7, 4).is_none());
    assert!(for_version(6, 2).is_none());
    assert_eq!(LINUX_7_2.max_argstr_len(), 63);
    assert_eq!(LINUX_7_3.max_argstr_len(), 255);
    assert_eq!(MAX_ARGSTR_CAP, 255);
    assert_eq!(LINUX_7_2.max_nested_level(), None);
    assert_eq!(LINUX_7_3.max_nested_level(), Some(8));
}

/// A kernel table equal to the facts passes; the first entry that
/// differs, is missing or does not fit is reported with its index, the
/// expected text and the kernel's text, as the module's load check prints
/// it. A 7.2 table fails a 7.3 module's check and the other way round.
#[test]
fn first_kernel_mismatch() {
    let table = |k: &KernelFacts| -> Vec<&'static str> {
        k.errors().iter().map(|c| k.message(*c)).collect()
    };
    let lookup = |table: Vec<&'static str>| {
        move |index: u8, buf: &mut [u8]| {
            let text = table.get(usize::from(index))?.as_bytes();
            buf.get_mut(..text.len())?.copy_from_slice(text);
            Some(text.len())
        }
    };
    let mut buf = [0u8; 128];
    for k in SERIES {
        assert_eq!(k.first_kernel_mismatch(&mut buf, lookup(table(k))), None);
    }
    let t72 = table(&LINUX_7_2);
    let t73 = table(&LINUX_7_3);

    let mut changed = t72.clone();
    changed[40] = "Invalid fetch argument!";
    assert_eq!(
        LINUX_7_2.first_kernel_mismatch(&mut buf, lookup(changed)),
        Some(Mismatch {
            index: 40,
            code: LINUX_7_2.code_at(40).unwrap(),
            expected: "Array is not closed",
            kernel: Some(&b"Invalid fetch argument!"[..])
        })
    );
    let mut inserted = t72.clone();
    inserted.insert(3, "A new message");
    assert_eq!(
        LINUX_7_2.first_kernel_mismatch(&mut buf, lookup(inserted)),
        Some(Mismatch {
            index: 3,
            code: RefcntOpenBrace,
            expected: "Reference counter brace is not closed",
            kernel: Some(&b"A new message"[..])
        })
    );
    let shorter = t72[..81].to_vec();
    assert_eq!(
        LINUX_7_2.first_kernel_mismatch(&mut buf, lookup(shorter)),
        Some(Mismatch {
            index: 81,
            code: TypecastNotEvent,
            expected: "Typecasts are only for eprobe fields",
            kernel: None
        })
    );
    let mut longer = t72.clone();
    longer.push("A message dynprobe does not use");
    assert_eq!(
        LINUX_7_2.first_kernel_mismatch(&mut buf, lookup(longer)),
        None
    );
    let mut small = [0u8; 8];
    assert_eq!(
        LINUX_7_2
            .first_kernel_mismatch(&mut small, lookup(t72.clone()))
            .map(|m| (m.index, m.code, m.kernel)),
        Some((0, FileNotFound, None))
    );
    // A module built for one series refuses the other's table at index 0.
    assert_eq!(
        LINUX_7_3
            .first_kernel_mismatch(&mut buf, lookup(t72.clone()))
            .map(|m| (m.index, m.code, m.kernel)),
        Some((0, Argidx2big, Some(&b"Failed to find the given file"[..])))
    );
    assert_eq!(
        LINUX_7_2
            .first_kernel_mismatch(&mut buf, lookup(t73.clone()))
            .map(|m| (m.index, m.code)),
        Some((0, FileNotFound))
    );
    // 7.3's changed text alone is a mismatch for a module expecting 7.2's.
    let mut renamed = t73.clone();
    let at = usize::from(LINUX_7_3.index_of(FileOnKprobe).unwrap());
    renamed[at] = "File offset is not available with kprobe";
    assert_eq!(
        LINUX_7_3
            .first_kernel_mismatch(&mut buf, lookup(renamed))
            .map(|m| (m.index, m.code, m.expected)),
        Some((
            51,
            FileOnKprobe,
            "File offset is not available for kernel probes"
        ))
    );
}

/// The entries `C(NAME, "text")` of the `ERRORS` list in the kernel's
/// kernel/trace/trace_probe.h, in order.
fn kernel_errors(header: &str) -> Vec<(String, String)> {
    let start = header.find("#define ERRORS").expect("no ERRORS list");
    let mut entries = Vec::new();
    for line in header[start..].lines().skip(1) {
        let entry = line.trim().trim_end_matches('\\').trim();
        if entry.is_empty() {
            break;
        }
        let inner = entry
            .strip_prefix("C(")
            .and_then(|e| e.trim_end_matches(',').strip_suffix(')'))
            .unwrap_or_else(|| panic!("not an entry: {line:?}"));
        let (name, text) = inner.split_once(',').expect("no message");
        let quoted = text.trim();
        let text = quoted
            .strip_prefix('"')
            .and_then(|t| t.strip_suffix('"'))
            .unwrap_or_else(|| panic!("not a string: {quoted:?}"));
        entries.push((name.trim().to_string(), text.replace("\\\"", "\"")));
        if !line.trim_end().ends_with('\\') {
            break;
        }
    }
    entries
}

/// The value of `#define NAME VALUE` in the header, if it has one.
fn kernel_define(header: &str, name: &str) -> Option<u32> {
    header.lines().find_map(|line| {
        let mut words = line.split_whitespace();
        (words.next() == Some("#define") && words.next() == Some(name))
            .then(|| words.next()?.parse().ok())?
    })
}

/// Compares one series' facts with its kernel's trace_probe.h, found
/// under the tree named by `var`: the error table's names, texts and
/// order, `MAX_ARGSTR_LEN` and `TRACEPROBE_MAX_NESTED_LEVEL`. The test is
/// skipped only when `var` is unset; a set variable naming a tree without
/// the header fails.
fn facts_match_the_kernel_source(var: &str, facts: &KernelFacts) {
    let Some(tree) = std::env::var_os(var) else {
        eprintln!("skipped: {var} is not set");
        return;
    };
    let path = std::path::Path::new(&tree).join("kernel/trace/trace_probe.h");
    let header = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{var}: cannot read {}: {e}", path.display()));
    let entries = kernel_errors(&header);
    let ours: Vec<(&str, &str)> = facts
        .errors()
        .iter()
        .map(|c| (c.name(), facts.message(*c)))
        .collect();
    let theirs: Vec<(&str, &str)> = entries
        .iter()
        .map(|(n, t)| (n.as_str(), t.as_str()))
        .collect();
    assert_eq!(ours, theirs, "Linux {}", facts.series());
    assert_eq!(
        kernel_define(&header, "MAX_ARGSTR_LEN").map(|n| n as usize),
        Some(facts.max_argstr_len())
    );
    assert_eq!(
        kernel_define(&header, "TRACEPROBE_MAX_NESTED_LEVEL"),
        facts.max_nested_level()
    );
    // The limits that stay constants are the same on every series.
    assert_eq!(
        kernel_define(&header, "MAX_TRACE_ARGS").map(|n| n as usize),
        Some(MAX_TRACE_ARGS)
    );
    assert_eq!(
        kernel_define(&header, "MAX_ARG_NAME_LEN").map(|n| n as usize),
        Some(MAX_ARG_NAME_LEN)
    );
    assert_eq!(kernel_define(&header, "MAX_ARRAY_LEN"), Some(MAX_ARRAY_LEN));
}

#[test]
fn facts_match_linux_7_2_source() {
    facts_match_the_kernel_source("DYNPROBE_KERNEL_SOURCE_7_2", &LINUX_7_2);
}

#[test]
fn facts_match_linux_7_3_source() {
    facts_match_the_kernel_source("DYNPROBE_KERNEL_SOURCE_7_3", &LINUX_7_3);
}

/// The kernel runs a write's last line of up to 4095 bytes when it has no
/// newline (its write buffer holds 4095 bytes and the NUL); longer lines
/// are refused without an error_log entry.
#[test]
fn longest_line() {
    let mut out = Box::new(Definition::new());
    let mut line = b"p:len/a vfs_read".to_vec();
    line.resize(4095, b' ');
    let r = parse(Control::KprobeEvents, &line, &FakeKernel, &mut out);
    assert!(matches!(r, Ok(Command::Define)), "{r:?}");
    line.push(b' ');
    let e = parse(Control::KprobeEvents, &line, &FakeKernel, &mut out).unwrap_err();
    assert_eq!((e.errno, e.logged), (errno::EINVAL, false));
}
