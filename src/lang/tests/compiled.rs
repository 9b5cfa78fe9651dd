// SPDX-License-Identifier: GPL-2.0
//! The compact compiled form reads exactly as the parser's workspace it
//! was frozen from, and refuses storage that does not hold that
//! definition.

mod common;
use common::*;
use dynprobe_lang::*;

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
    // Dereferences, user and per-CPU ones, a symbol, an immediate string,
    // a bitfield and an array: what a compiled argument keeps outside
    // itself (text ranges, shared dereference offsets).
    (
        Control::KprobeEvents,
        "p:grp/deref vfs_read a=+8(+16(%di)):u64 u=+u4(%si):u32 s=+0(+8(%dx)):string b=+0(%cx):b3@2/16",
    ),
    (
        Control::KprobeEvents,
        "p:grp/sym vfs_read j=@jiffies+16:u64 imm=\\\"text\" n=\\123 c=this_cpu_read(+8(%di))",
    ),
    (
        Control::DynamicEvents,
        "f:fgrp/btf vfs_read file->f_inode->i_ino count buf:string",
    ),
    (
        Control::DynamicEvents,
        "t:tgrp/sw sched_switch prev next->pid prev_state",
    ),
    (
        Control::FunctionEvents,
        "ip_rcv(int a0[2]+8, x8[6] a1, string a2[1]+4, symbol g=0xffffffff82354c18) -> long ret[3]",
    ),
    (Control::FunctionEvents, "vfs_read(x64 x)"),
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
        assert_eq!(readings_of(w), readings_of(v), "{line}");
        assert_eq!(v.args().len(), w.args().len(), "{line}");
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

    let mut moved = storage_of(&d);
    moved.args.swap(0, 1);
    assert!(d.freeze(moved).is_none());

    let deref = def_of(
        Control::KprobeEvents,
        "p:grp/ev vfs_read a=+8(+16(+32(%di)))",
    );
    let mut offsets = storage_of(&deref);
    offsets.derefs[1] = 24;
    assert!(deref.freeze(offsets).is_none());
    let mut fewer = storage_of(&deref);
    fewer.derefs.pop();
    assert!(deref.freeze(fewer).is_none());

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
    assert_eq!((sizes.args, sizes.derefs, sizes.entry_args), (3, 0, 0));
    // The group and the event with their NULs.
    assert_eq!(
        sizes.text,
        "g\0".len() + "e\0".len() + "vfs_read".len() + "a%dib%sic%dx".len()
    );
    let deep = def_of(
        Control::KprobeEvents,
        "p:g/e vfs_read a=+8(+16(%di)) b=%si c=+0(+8(+24(%dx))):string",
    );
    assert_eq!(deep.frozen_sizes().derefs, 1 + 2);
}

/// What one argument costs a compiled definition: its compact form (its
/// program's dereference offsets and its name and text are extra, as
/// long as they are), against a workspace argument's room for the
/// longest of each.
#[test]
fn compiled_argument_size() {
    use core::mem::size_of;
    assert_eq!(size_of::<CompactArg>(), 64);
    assert!(size_of::<ProbeArg>() >= 7 * size_of::<CompactArg>());
    // The kernel's storage is three thin pointers and four 16-bit
    // lengths (32 bytes); with the scalars, the whole fits a 128-byte slab
    // object beside the `Arc`'s count.
    assert!(size_of::<Compiled<[u64; 4]>>() + 8 <= 128);
}

/// The storage a one-argument function event asks for: one compact
/// argument and its text, which fit 64-byte slab objects each.
#[test]
fn one_argument_storage() {
    let d = def_of(Control::FunctionEvents, "vfs_read(x64 x)");
    let sizes = d.frozen_sizes();
    assert_eq!((sizes.args, sizes.derefs, sizes.entry_args), (1, 0, 0));
    let store = storage_of(&d);
    // The symbol is the event's name, kept once.
    let text = d.group().len()
        + 1
        + d.event().len()
        + 1
        + canon_of(&d).len()
        + "x".len()
        + d.args()[0].text().len();
    assert_eq!(sizes.text, text);
    let bytes = sizes.args * core::mem::size_of::<CompactArg>();
    assert_eq!(bytes, 64);
    assert!(sizes.text <= 64, "{}", store.text);
}

/// A compiled definition's arguments share one list of dereference
/// offsets and one text; each reads its own part of them.
#[test]
fn compiled_arguments_share_their_storage() {
    let d = def_of(
        Control::KprobeEvents,
        "p:g/e vfs_read a=+8(+16(%di)) b=%si c=+0(+8(+24(%dx))):string",
    );
    let store = storage_of(&d);
    assert_eq!(store.derefs, [16, 24, 8]);
    assert!(store
        .text
        .ends_with("a+8(+16(%di))b%sic+0(+8(+24(%dx))):string"));
    let c = compile(&d);
    let v = c.view();
    let offsets: Vec<Vec<i64>> = (0..3)
        .map(|i| d.args()[i].program().derefs().map(|x| x.offset).collect())
        .collect();
    assert_eq!(offsets, [vec![16], vec![], vec![24, 8]]);
    let names: Vec<(&str, &str)> = v.args().map(|a| (a.name(), a.text())).collect();
    assert_eq!(
        names,
        [
            ("a", "+8(+16(%di))"),
            ("b", "%si"),
            ("c", "+0(+8(+24(%dx))):string")
        ]
    );
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

/// The word sources of `a=%di b=%si c=%dx`.
const DI_SI_DX: &[WordSource] = &[
    WordSource::Reg(dynprobe_lang::Reg::Di),
    WordSource::Reg(dynprobe_lang::Reg::Si),
    WordSource::Reg(dynprobe_lang::Reg::Dx),
];

/// A line, and the header words, word sources and string source of its
/// string table.
type StringCase = (
    Control,
    &'static str,
    Option<(u8, &'static [WordSource], WordSource)>,
);

#[test]
fn records_of_words_and_a_string_have_a_string_table() {
    use WordSource::*;
    let cases: &[StringCase] = &[
        (
            Control::KprobeEvents,
            "p:grp/ev vfs_read a=%di b=%si c=%dx s=+0(%cx):string",
            Some((1, DI_SI_DX, Reg(dynprobe_lang::Reg::Cx))),
        ),
        (
            Control::KprobeEvents,
            "p:grp/ev vfs_read s=+0(%si):string",
            Some((1, &[], Reg(dynprobe_lang::Reg::Si))),
        ),
        (
            Control::DynamicEvents,
            "f:grp/ev vfs_read a=$arg1 s=+0($arg2):string",
            Some((1, &[Arg(0)], Arg(1))),
        ),
        (
            Control::FunctionEvents,
            "vfs_read(x64 file, string buf)",
            Some((2, &[Arg(0)], Arg(1))),
        ),
        (
            Control::FunctionEvents,
            "vfs_read(int file, string buf)",
            None,
        ),
        (
            Control::KprobeEvents,
            "r:grp/ev vfs_read ret=$retval s=+0($retval):string",
            Some((2, &[RetVal], RetVal)),
        ),
        // Not: an offset, a user string, a string before a word, two
        // strings, a 4-byte value, as many words as the table holds.
        (
            Control::KprobeEvents,
            "p:grp/ev vfs_read a=%di s=+8(%si):string",
            None,
        ),
        (
            Control::KprobeEvents,
            "p:grp/ev vfs_read a=%di s=+0(%si):ustring",
            None,
        ),
        (
            Control::KprobeEvents,
            "p:grp/ev vfs_read s=+0(%si):string a=%di",
            None,
        ),
        (
            Control::KprobeEvents,
            "p:grp/ev vfs_read s=+0(%si):string t=+0(%di):string",
            None,
        ),
        (
            Control::KprobeEvents,
            "p:grp/ev vfs_read a=%di:u32 s=+0(%si):string",
            None,
        ),
        (
            Control::KprobeEvents,
            "p:grp/ev vfs_read a=%di b=%si c=%dx d=%r8 s=+0(%cx):string",
            None,
        ),
    ];
    const STR_AT: u64 = 0xffff_8880_0000_1000;
    for &(control, line, want) in cases {
        let d = def_of(control, line);
        let c = compile(&d);
        let table = c.string_table();
        assert_eq!(table, d.view().string_table(), "{line}");
        assert_eq!(
            table.map(|t| (
                t.words().header_words(),
                t.words().sources().to_vec(),
                t.string()
            )),
            want.map(|(h, s, at)| (h, s.to_vec(), at)),
            "{line}"
        );
        let Some(table) = table else { continue };
        assert_eq!(c.word_table(), None, "{line}");
        // What a handler writes from the table is the definition's
        // record: the words, the string's __data_loc word after them,
        // the string at the end of the fixed part.
        let mut regs = FakeRegs::default();
        for (i, r) in regs.regs.iter_mut().enumerate() {
            *r = STR_AT + 0x100 * i as u64;
        }
        regs.args = (0..8).map(|i| STR_AT + 0x100 * (20 + i)).collect();
        regs.ret = STR_AT + 0x100 * 40;
        let mut mem = FakeMem::default();
        for i in 0..48u64 {
            mem.add(STR_AT + 0x100 * i, format!("string-{i}\0").as_bytes());
        }
        let ips = HeaderIps {
            first: 0xffff_ffff_8100_0000,
            second: 0xffff_ffff_8200_0000,
        };
        let (mut by_def, mut by_table) = ([0xa5u8; 256], [0xa5u8; 256]);
        let k = c.record(&regs, &mem, ips, &mut by_def);
        let fixed = table.fixed_size();
        let words = table.words().record(&regs, ips, &mut by_table);
        assert_eq!(words + 4, fixed, "{line}");
        let at = word_of(table.string(), &regs);
        let text: Vec<u8> = (0..48u64)
            .find(|i| STR_AT + 0x100 * i == at)
            .map(|i| format!("string-{i}\0").into_bytes())
            .unwrap();
        let loc = ((text.len() as u32) << 16) | fixed as u32;
        by_table[words..fixed].copy_from_slice(&loc.to_le_bytes());
        by_table[fixed..fixed + text.len()].copy_from_slice(&text);
        assert_eq!(k, fixed + text.len(), "{line}");
        assert_eq!(by_def[8..k], by_table[8..k], "{line}");
    }
}

/// The value of a word source, as the fakes give it.
fn word_of(source: WordSource, regs: &FakeRegs) -> u64 {
    match source {
        WordSource::Reg(r) => regs.reg(r),
        WordSource::Arg(n) => regs.arg(u32::from(n)),
        WordSource::RetVal => regs.return_value(),
        WordSource::EntryData(n) => regs.entry_data(u32::from(n)),
    }
}

/// A line, and the header words and sources of its word table.
type WordCase = (Control, &'static str, Option<(u8, &'static [WordSource])>);

#[test]
fn records_of_words_have_a_word_table() {
    use WordSource::*;
    let cases: &[WordCase] = &[
        (
            Control::KprobeEvents,
            "p:grp/ev vfs_read a=%di b=%si c=%dx",
            Some((1, DI_SI_DX)),
        ),
        (
            Control::DynamicEvents,
            "f:grp/ev vfs_read a=$arg1 b=$arg2 c=$arg3",
            Some((1, &[Arg(0), Arg(1), Arg(2)])),
        ),
        (
            Control::FunctionEvents,
            "vfs_read(x64 file, NULL, u64 count)",
            Some((2, &[Arg(0), Arg(2)])),
        ),
        (
            Control::FunctionEvents,
            "vfs_read(x64 file) -> s64 ret",
            Some((2, &[EntryData(0), RetVal])),
        ),
        (
            Control::KprobeEvents,
            "r:grp/ev vfs_read ret=$retval",
            Some((2, &[RetVal])),
        ),
        // Not words alone: a string, a 4-byte value, a dereference, a
        // stack slot, more words than the table holds.
        (
            Control::KprobeEvents,
            "p:grp/ev vfs_read a=%di s=+0(%si):string",
            None,
        ),
        (
            Control::KprobeEvents,
            "p:grp/ev vfs_read a=%di:u32 b=%si",
            None,
        ),
        (Control::KprobeEvents, "p:grp/ev vfs_read a=+8(%di)", None),
        (Control::KprobeEvents, "p:grp/ev vfs_read a=$stack2", None),
        (
            Control::KprobeEvents,
            "p:grp/ev vfs_read a=%di b=%si c=%dx d=%cx e=%r8",
            None,
        ),
    ];
    for &(control, line, want) in cases {
        let d = def_of(control, line);
        let c = compile(&d);
        let table = c.word_table();
        assert_eq!(table, d.view().word_table(), "{line}");
        assert_eq!(
            table.map(|t| (t.header_words(), t.sources().to_vec())),
            want.map(|(h, s)| (h, s.to_vec())),
            "{line}"
        );
        let Some(table) = table else { continue };
        // The table writes the record the definition writes.
        let mut regs = FakeRegs::default();
        for (i, r) in regs.regs.iter_mut().enumerate() {
            *r = 0x1000 + i as u64;
        }
        regs.args = (0..8).map(|i| 0x2000 + i).collect();
        regs.ret = 0x3000;
        regs.edata = (0..4).map(|i| 0x4000 + i).collect();
        let ips = HeaderIps {
            first: 0xffff_ffff_8100_0000,
            second: 0xffff_ffff_8200_0000,
        };
        let (mut by_table, mut by_def) = ([0xa5u8; 128], [0xa5u8; 128]);
        let n = table.record(&regs, ips, &mut by_table);
        let k = c.record(&regs, &FakeMem::default(), ips, &mut by_def);
        assert_eq!(n, table.record_size(), "{line}");
        assert_eq!((n, by_table), (k, by_def), "{line}");
        assert_eq!(table.record(&regs, ips, &mut by_table[..n - 1]), 0);
    }
}

/// The group and the event name are C strings in the compact text (the
/// kernel's event points its system and name there), and read as the
/// workspace's names.
#[test]
fn group_and_event_are_c_strings() {
    for (control, line) in [
        (Control::KprobeEvents, "p:grp/ev vfs_read a=%di"),
        (
            Control::FunctionEvents,
            "vfs_read(x64 file, NULL, u64 count)",
        ),
        (Control::DynamicEvents, "f:fg/fe vfs_read%return $retval"),
    ] {
        let d = def_of(control, line);
        let c = d.freeze(storage_of(&d)).expect("frozen");
        let (group, event) = c.c_names();
        assert_eq!(group, format!("{}\0", d.group()).as_bytes(), "{line}");
        assert_eq!(event, format!("{}\0", d.event()).as_bytes(), "{line}");
        let v = c.view();
        assert_eq!((v.group(), v.event()), (d.group(), d.event()), "{line}");
        assert_eq!(v.symbol(), d.symbol(), "{line}");
    }
}
