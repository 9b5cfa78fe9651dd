// SPDX-License-Identifier: GPL-2.0
//! The compact compiled form reads exactly as the parser's workspace it
//! was frozen from, and refuses storage that does not hold that
//! definition.

mod common;
use common::*;
use dynprobe_lang::*;

/// Storage as the kernel layer makes it: sized to the definition.
struct VecStorage {
    args: Vec<ProbeArg>,
    entry_args: Vec<u16>,
    text: String,
}

impl Storage for VecStorage {
    fn args(&self) -> &[ProbeArg] {
        &self.args
    }
    fn entry_args(&self) -> &[u16] {
        &self.entry_args
    }
    fn text(&self) -> &str {
        &self.text
    }
}

fn storage_of(d: &Definition) -> VecStorage {
    let mut text = String::new();
    d.write_frozen_text(&mut text).unwrap();
    VecStorage {
        args: d.args().to_vec(),
        entry_args: d.entry_args().to_vec(),
        text,
    }
}

fn compile(d: &Definition) -> Compiled<VecStorage> {
    let store = storage_of(d);
    let sizes = d.frozen_sizes();
    assert_eq!(
        (sizes.args, sizes.entry_args, sizes.text),
        (store.args.len(), store.entry_args.len(), store.text.len())
    );
    d.freeze(store).expect("storage made from the definition")
}

const LINES: &[(Control, &str)] = &[
    (
        Control::KprobeEvents,
        "p:grp/ev vfs_read+4 a=%di:u32 s=+0(%si):string arr=+8(%dx):u8[4] $comm",
    ),
    (Control::KprobeEvents, "r7:ret/ev vfs_open $retval:s64"),
    (
        Control::DynamicEvents,
        "f:fgrp/fex vfs_read%return $retval $arg2",
    ),
    (
        Control::DynamicEvents,
        "f:fgrp/fen vfs_read a=$arg1 b=$arg3:x32",
    ),
    (Control::KprobeEvents, "p:addr/ev 0xffffffff81000000 %ax"),
    (
        Control::FunctionEvents,
        "vfs_read(x64 file, u64 buf, u32 count) -> s64 ret",
    ),
    (
        Control::FunctionEvents,
        "do_sys_openat2(int dfd, string filename, char name[16])",
    ),
];

fn text_of(v: DefView<'_>) -> (String, String, String) {
    let (mut canon, mut fmt) = (String::new(), String::new());
    v.canonical(&mut canon).unwrap();
    v.print_fmt(&mut fmt).unwrap();
    let fields = v
        .fields()
        .map(|f| format!("{}:{}:{}:{}", f.name, f.c_type, f.offset, f.size))
        .collect::<Vec<_>>()
        .join(";");
    (canon, fmt, fields)
}

#[test]
fn compiled_reads_like_the_workspace() {
    for &(control, line) in LINES {
        let d = def_of(control, line);
        let c = compile(&d);
        let (w, v) = (d.view(), c.view());
        assert_eq!(text_of(w), text_of(v), "{line}");
        assert!(v.same_as(&w) && w.same_as(&v), "{line}");
        assert_eq!(w.compare_arg_types(&v), 0, "{line}");
        assert_eq!(
            (v.group(), v.event(), v.kind(), v.symbol(), v.module()),
            (w.group(), w.event(), w.kind(), w.symbol(), w.module()),
            "{line}"
        );
        assert_eq!(
            (v.address(), v.offset(), v.maxactive(), v.entry_args()),
            (w.address(), w.offset(), w.maxactive(), w.entry_args()),
            "{line}"
        );
        assert_eq!(v.max_record_size(), w.max_record_size(), "{line}");
        assert!(v.matches_removal(Some(w.group()), w.event(), b""), "{line}");
    }
}

#[test]
fn compiled_records_and_prints_like_the_workspace() {
    let d = def_of(
        Control::KprobeEvents,
        "p:grp/ev vfs_read a=%dx:u32 s=+0(%di):string arr=+0(%si):u8[4] $comm",
    );
    let c = compile(&d);
    let mut regs = FakeRegs::default();
    regs.set(Reg::Dx, 0x1234_5678);
    regs.set(Reg::Di, 0xffff_8880_0000_1000);
    regs.set(Reg::Si, 0xffff_8880_0000_2000);
    let mut mem = FakeMem::default();
    mem.add(0xffff_8880_0000_1000, b"hello\0");
    mem.add(0xffff_8880_0000_2000, b"\x01\x02\x03\x04");
    mem.comm[..4].copy_from_slice(b"test");
    let ips = HeaderIps {
        first: 0xffff_ffff_8100_0000,
        second: 0,
    };
    let (mut a, mut b) = ([0u8; 512], [0u8; 512]);
    let la = d.view().record(&regs, &mem, ips, &mut a);
    let lb = c.view().record(&regs, &mem, ips, &mut b);
    assert!(la > 0);
    assert_eq!(a[..la], b[..lb]);
    // The handler's view records the same; the common header is the ring
    // buffer's and stays as it was.
    let mut h = [0xaau8; 512];
    let lh = c.record_view().record(&regs, &mem, ips, &mut h);
    assert_eq!(h[..8], [0xaa; 8]);
    assert_eq!(h[8..lh], b[8..lb]);
    let mut k = [0xaau8; 512];
    let lk = c.record(&regs, &mem, ips, &mut k);
    assert_eq!(k[..lk], h[..lh]);
    let (mut pa, mut pb) = (String::new(), String::new());
    d.view()
        .print_event(&a[..la], &mut FakeSyms, &mut pa)
        .unwrap();
    c.view()
        .print_event(&b[..lb], &mut FakeSyms, &mut pb)
        .unwrap();
    assert_eq!(pa, pb);
    assert!(pa.contains("s=\"hello\""), "{pa}");
}

#[test]
fn freeze_refuses_storage_of_another_definition() {
    let d = def_of(Control::KprobeEvents, "p:grp/ev vfs_read a=%di:u32 b=%si");
    let other = def_of(Control::KprobeEvents, "p:grp/ev vfs_read a=%di:u32 b=%dx");
    assert!(d.freeze(storage_of(&other)).is_none());

    let mut short = storage_of(&d);
    short.args.pop();
    assert!(d.freeze(short).is_none());

    let mut renamed = storage_of(&d);
    renamed.text = renamed.text.replace("ev", "xy");
    assert!(d.freeze(renamed).is_none());

    let mut longer = storage_of(&d);
    longer.text.push('x');
    assert!(d.freeze(longer).is_none());

    let r = def_of(Control::KprobeEvents, "r:grp/ret vfs_read $arg1");
    let mut entry = storage_of(&r);
    entry.entry_args.push(3);
    assert!(r.freeze(entry).is_none());
}

#[test]
fn compiled_size_follows_the_line() {
    let small = def_of(Control::KprobeEvents, "p:g/e vfs_read a=%di b=%si c=%dx");
    let sizes = small.frozen_sizes();
    assert_eq!((sizes.args, sizes.entry_args), (3, 0));
    assert_eq!(sizes.text, "g".len() + "e".len() + "vfs_read".len());
    assert!(core::mem::size_of::<Compiled<VecStorage>>() < 256);
}

#[test]
fn compiled_record_of_words_and_strings_is_the_views() {
    // Words and a string from registers: recorded step by step from the
    // compiled scalars, without a view.
    for line in [
        "p:grp/ev vfs_read a=%dx s=+0(%di):string b=%si",
        "p:grp/ev vfs_read a=%dx b=%si c=%cx",
    ] {
        let d = def_of(Control::KprobeEvents, line);
        let c = compile(&d);
        let mut regs = FakeRegs::default();
        regs.set(Reg::Dx, 0x1234_5678);
        regs.set(Reg::Di, 0xffff_8880_0000_1000);
        regs.set(Reg::Si, 0xffff_8880_0000_2000);
        regs.set(Reg::Cx, 7);
        let mut mem = FakeMem::default();
        mem.add(0xffff_8880_0000_1000, b"hello\0");
        let ips = HeaderIps {
            first: 0xffff_ffff_8100_0000,
            second: 0,
        };
        let (mut v, mut k) = ([0xaau8; 512], [0xaau8; 512]);
        let lv = c.record_view().record(&regs, &mem, ips, &mut v);
        let lk = c.record(&regs, &mem, ips, &mut k);
        assert!(lv > 8, "{line}");
        assert_eq!(k[..lk], v[..lv], "{line}");
    }
}
