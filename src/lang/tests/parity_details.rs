// SPDX-License-Identifier: GPL-2.0
//! Details where dynprobe must do what the kernel's own probe events do:
//! the listing of kretprobes and address probes, places the kernel
//! accepts, the errno of numbers that overflow, and function_events
//! argument names that belong to another parameter.

mod common;
use common::*;
use dynprobe_lang::ErrorCode::*;
use dynprobe_lang::*;

/// The fake kernel, plus the answers a running kernel gives about
/// kretprobe defaults, kprobe addresses and `%p`.
struct Kernel;

/// A stand-in for `%p`'s keyed hash: any function that differs from the
/// identity shows which value was hashed.
fn hash(v: u64) -> u64 {
    (v ^ 0x5a5a_5a5a) & 0xffff_ffff
}

const VFS_READ: u64 = 0xffff_ffff_8143_9ab0;

impl Resolver for Kernel {
    fn symbol_address(&self, name: &str) -> Option<u64> {
        match name {
            "vfs_read" => Some(VFS_READ),
            "loaded:func" => Some(0xffff_ffff_c000_0000),
            _ => FakeKernel.symbol_address(name),
        }
    }
    fn check_probe_symbol(&self, module: Option<&str>, symbol: &str) -> SymbolCheck {
        FakeKernel.check_probe_symbol(module, symbol)
    }
    fn btf_func(&self, f: &str) -> Option<BtfFunc> {
        match f {
            "swap" => Some(BtfFunc {
                nr_params: 2,
                ret_type: 0,
            }),
            _ => FakeKernel.btf_func(f),
        }
    }
    fn btf_param(&self, f: &str, i: u32) -> Option<(&str, u32)> {
        match (f, i) {
            ("swap", 0) => Some(("b", 5)),
            ("swap", 1) => Some(("a", 5)),
            _ => FakeKernel.btf_param(f, i),
        }
    }
    fn btf_type(&self, id: u32) -> Option<BtfType> {
        FakeKernel.btf_type(id)
    }
    fn default_maxactive(&self) -> u32 {
        10
    }
    /// vfs_read starts with ENDBR; kallsyms knows the kernel's text only.
    fn kprobe_address(&self, addr: u64) -> Option<u64> {
        match addr {
            VFS_READ => Some(VFS_READ + 4),
            a if a >= 0xffff_ffff_8100_0000 => Some(a),
            _ => None,
        }
    }
    fn hash_pointer(&self, value: u64) -> Option<u64> {
        Some(hash(value))
    }
}

fn parse_with(control: Control, line: &str) -> Result<Box<Definition>, ParseError> {
    let mut d = Box::new(Definition::new());
    match parse(control, line.as_bytes(), &Kernel, &mut d) {
        Ok(Command::Define) => Ok(d),
        Ok(other) => panic!("{line:?}: {other:?}"),
        Err(e) => Err(e),
    }
}

fn refused(control: Control, line: &str) -> ParseError {
    match parse_with(control, line) {
        Ok(d) => panic!("{line:?} accepted: {}", canon_of(&d)),
        Err(e) => e,
    }
}

fn listed(control: Control, line: &str) -> String {
    match parse_with(control, line) {
        Ok(d) => canon_of(&d),
        Err(e) => panic!("{line:?}: {e}"),
    }
}

#[test]
fn kretprobe_listing_shows_default_maxactive() {
    for control in [Control::KprobeEvents, Control::DynamicEvents] {
        assert_eq!(listed(control, "r:a/r1 vfs_read"), "r10:a/r1 vfs_read");
        assert_eq!(
            listed(control, "p:a/r2 vfs_read%return"),
            "r10:a/r2 vfs_read"
        );
        assert_eq!(
            listed(control, "r vfs_read"),
            "r10:kprobes/r_vfs_read_0 vfs_read"
        );
        assert_eq!(listed(control, "r3:a/r3 vfs_read"), "r3:a/r3 vfs_read");
        // Written out, the default lists and registers the same.
        let d = parse_with(control, "r:a/r1 vfs_read").unwrap();
        let d2 = parse_with(control, &canon_of(&d)).unwrap();
        assert!(d.view().same_as(&d2.view()));
        // A place that does not resolve yet is not registered, so
        // register_kretprobe() has not set the default.
        assert_eq!(listed(control, "r:a/m mod:func"), "r:a/m mod:func");
        assert_eq!(listed(control, "r:a/c :vfs_read"), "r:a/c :vfs_read");
        assert_eq!(listed(control, "r:a/l loaded:func"), "r10:a/l loaded:func");
        assert_eq!(
            listed(control, "r:a/x 0x2"),
            format!("r:a/x 0x{:016x}", hash(2))
        );
        // Kprobes and fprobes have no maxactive.
        assert_eq!(listed(control, "p:a/p vfs_read"), "p:a/p vfs_read");
    }
    assert_eq!(
        listed(Control::DynamicEvents, "f:a/f vfs_read%return"),
        "f:a/f vfs_read%return"
    );
    // Without an answer from the resolver nothing changes.
    assert_eq!(
        canon_of(&def_of(Control::KprobeEvents, "r:a/r1 vfs_read")),
        "r:a/r1 vfs_read"
    );
    // Nor are addresses hashed: they list as written, which lists back to
    // the same probe.
    let d = def_of(Control::KprobeEvents, "p 0xffffffff81439ab0");
    assert_eq!(
        canon_of(&d),
        "p:kprobes/p_0xffffffff81439ab0 0xffffffff81439ab0"
    );
}

#[test]
fn empty_module_name_is_accepted() {
    for control in [Control::KprobeEvents, Control::DynamicEvents] {
        let d = parse_with(control, "p :vfs_read").unwrap();
        assert_eq!(d.event(), "p__vfs_read_0");
        assert_eq!((d.module(), d.symbol()), (Some(""), Some("vfs_read")));
        assert_eq!(d.view().full_symbol(), Some(":vfs_read"));
        assert_eq!(canon_of(&d), "p:kprobes/p__vfs_read_0 :vfs_read");
        assert!(d.view().matches_removal(None, "", b":vfs_read"));
        assert!(!d.view().matches_removal(None, "", b"vfs_read"));
        let d = parse_with(control, "p:a/c1 :vfs_read+4 x=%di").unwrap();
        assert_eq!(canon_of(&d), "p:a/c1 :vfs_read+4 x=%di");
        // A module not loaded may still come with an empty symbol: the
        // kernel accepts it too.
        assert_eq!(listed(control, "p:a/m mod:"), "p:a/m mod:");
    }
    // Empty symbols still fail, and fprobes keep refusing module syntax.
    for l in ["p %return", "p -4", "f :vfs_read"] {
        let e = refused(Control::DynamicEvents, l);
        assert_eq!((e.code, e.column), (BadProbeAddr, 2), "{l}");
    }
}

#[test]
fn address_probes_list_the_hashed_address() {
    for control in [Control::KprobeEvents, Control::DynamicEvents] {
        // Unknown to kallsyms: the kernel keeps it, unregistered, and
        // lists the hash of the written address.
        let d = parse_with(control, "p 0x1").unwrap();
        let h1 = format!("0x{:016x}", hash(1));
        assert_eq!(d.view().address(), Some(1));
        assert_eq!(d.event(), format!("p_{h1}"));
        assert_eq!(canon_of(&d), format!("p:kprobes/p_{h1} {h1}"));
        assert!(d.view().matches_removal(None, "", h1.as_bytes()));
        assert!(!d.view().matches_removal(None, "", b"0x1"));
        // A function's entry: the name hashes the written address, the
        // listing the registered one, past the ENDBR.
        let d = parse_with(control, &format!("p 0x{VFS_READ:x}")).unwrap();
        assert_eq!(d.view().address(), Some(VFS_READ));
        assert_eq!(d.event(), format!("p_0x{:016x}", hash(VFS_READ)));
        assert_eq!(
            canon_of(&d),
            format!(
                "p:kprobes/p_0x{:016x} 0x{:016x}",
                hash(VFS_READ),
                hash(VFS_READ + 4)
            )
        );
        let d = parse_with(control, &format!("r:a/x4 0x{VFS_READ:x}")).unwrap();
        assert_eq!(
            canon_of(&d),
            format!("r10:a/x4 0x{:016x}", hash(VFS_READ + 4))
        );
    }
}

#[test]
fn overflowing_numbers_fail_with_erange() {
    const BIG: &str = "99999999999999999999999";
    for (arg, code, col, errno) in [
        (format!("\\{BIG}"), BadImm, 1, errno::ERANGE),
        (format!("\\-{BIG}"), BadImm, 1, errno::ERANGE),
        (format!("\\+{BIG}"), BadImm, 1, errno::ERANGE),
        (
            "\\0x1ffffffffffffffff".to_string(),
            BadImm,
            1,
            errno::ERANGE,
        ),
        (
            "\\-9223372036854775809".to_string(),
            BadImm,
            1,
            errno::ERANGE,
        ),
        ("\\9223372036854775808".to_string(), BadImm, 1, 0),
        (
            "\\18446744073709551616".to_string(),
            BadImm,
            1,
            errno::ERANGE,
        ),
        // Overflow is found before trailing garbage, as in _kstrtoull().
        (format!("\\{BIG}x"), BadImm, 1, errno::ERANGE),
        ("\\12x".to_string(), BadImm, 1, errno::EINVAL),
        ("\\x".to_string(), BadImm, 1, errno::EINVAL),
        (format!("@{BIG}"), BadMemAddr, 0, errno::ERANGE),
        (format!("+{BIG}(%di)"), BadDerefOffs, 0, errno::ERANGE),
        (format!("-{BIG}(%di)"), BadDerefOffs, 0, errno::ERANGE),
        (
            "+9223372036854775808(%di)".to_string(),
            BadDerefOffs,
            0,
            errno::ERANGE,
        ),
        ("-+4(%di)".to_string(), BadDerefOffs, 0, errno::EINVAL),
        ("+4x(%di)".to_string(), BadDerefOffs, 0, errno::EINVAL),
        // $stackN and $argN fail with EINVAL in the kernel whatever the cause.
        (format!("$stack{BIG}"), BadVar, 0, errno::EINVAL),
    ] {
        let line = format!("p:a/i vfs_read a={arg}");
        if errno == 0 {
            // 2^63 is a valid unsigned immediate.
            assert!(parse_with(Control::KprobeEvents, &line).is_ok(), "{line}");
            continue;
        }
        let e = refused(Control::KprobeEvents, &line);
        assert_eq!(
            (e.code, e.column, e.errno, e.logged),
            (code, "p:a/i vfs_read a=".len() + col, errno, true),
            "{line}"
        );
    }
    let e = refused(Control::DynamicEvents, &format!("f vfs_read a=\\{BIG}"));
    assert_eq!((e.code, e.errno), (BadImm, errno::ERANGE));
}

#[test]
fn function_event_names_of_other_parameters_are_refused() {
    // vfs_read(struct file *file, char *buf, size_t count, loff_t *pos)
    let line = "vfs_read(x64 file, u64 count) -> s64 ret";
    let e = err_of(Control::FunctionEvents, line);
    assert_eq!(
        (e.code, e.column, e.errno, e.logged),
        (
            FeParamElsewhere,
            line.find("count").unwrap(),
            errno::EINVAL,
            true
        )
    );
    assert_eq!(e.subsystem, Subsystem::Function);
    assert_eq!(
        e.code.message(),
        "Name of another parameter: arguments are positional (NULL skips one)"
    );
    for line in [
        "vfs_read(x64 buf)",
        "vfs_read(NULL, x64 file)",
        "vfs_read(x64 file | u32 pos)",
        "vfs_read(x64 file, x64 buf, x64 pos)",
    ] {
        assert_eq!(
            err_of(Control::FunctionEvents, line).code,
            FeParamElsewhere,
            "{line}"
        );
    }
    // Names at their own position, names BTF does not know, addresses and
    // the return value are free; functions without BTF are not checked.
    for line in [
        "vfs_read(x64 file, NULL, u64 count) -> s64 ret",
        "vfs_read(x64 file, x64 buf, u64 count, x64 pos[0]) -> s64 count2",
        "vfs_read(x64 f, x64 b, u64 n, x64 file2)",
        "vfs_read(x64 file | u32 mode+4, x64 buf) -> s64 count",
        "vfs_read(x64 count=0xffffffff81000000, x64 file)",
        "ip_rcv(x64 count, x64 file)",
    ] {
        let _ = def_of(Control::FunctionEvents, line);
    }
    // One-letter names are labels that meet one-letter parameters by
    // chance (swap(b, a) labelled a, b).
    let d = parse_with(Control::FunctionEvents, "swap(x64 a, x64 b)");
    assert!(d.is_ok());
}
mod kernel_order;
