// SPDX-License-Identifier: GPL-2.0
//! Property tests: canonical text re-parses to the same definition, and no
//! input makes parse, record or print panic.

mod common;
use common::*;
use dynprobe_lang::*;
use proptest::prelude::*;

fn fetch_arg() -> impl Strategy<Value = String> {
    let base = prop_oneof![
        Just("%di".to_string()),
        Just("%ax".to_string()),
        Just("%r15".to_string()),
        Just("$stack".to_string()),
        (0u32..3000).prop_map(|n| format!("$stack{n}")),
        Just("$comm".to_string()),
        (0u64..u64::MAX).prop_map(|n| format!("@0x{n:x}")),
        Just("@_sdata".to_string()),
        Just("@jiffies+16".to_string()),
        (0u64..1000).prop_map(|n| format!("\\{n}")),
        Just("\\\"text\"".to_string()),
        Just("file".to_string()),
        Just("file->f_inode->i_ino".to_string()),
        (1u32..6).prop_map(|n| format!("$arg{n}")),
    ];
    let ty = prop_oneof![
        Just(String::new()),
        Just(":u8".to_string()),
        Just(":s16".to_string()),
        Just(":x32".to_string()),
        Just(":u64".to_string()),
        Just(":string".to_string()),
        Just(":ustring".to_string()),
        Just(":symbol".to_string()),
        Just(":symstr".to_string()),
        Just(":char".to_string()),
        Just(":b3@2/16".to_string()),
        (1u32..70).prop_map(|n| format!(":u16[{n}]")),
    ];
    (base, 0usize..4, -64i64..64, ty, any::<bool>()).prop_map(|(b, depth, off, t, named)| {
        let mut s = b;
        for i in 0..depth {
            s = if (off + i as i64) % 3 == 0 {
                format!("+u{}({s})", off.abs())
            } else {
                format!("{off:+}({s})")
            };
        }
        let s = format!("{s}{t}");
        if named {
            format!("n{}={s}", s.len())
        } else {
            s
        }
    })
}

fn kprobe_line() -> impl Strategy<Value = String> {
    let head = prop_oneof![
        Just("p".to_string()),
        Just("r".to_string()),
        Just("r4".to_string()),
        Just("p:grp/ev".to_string()),
        Just("f".to_string()),
        Just("f:my.ev".to_string()),
        Just("t".to_string()),
    ];
    let place = prop_oneof![
        Just("vfs_read".to_string()),
        Just("vfs_read+4".to_string()),
        Just("vfs_read%return".to_string()),
        Just("kfree".to_string()),
        Just("ext4:ext4_sync_file".to_string()),
        Just("0xffffffff81000000".to_string()),
    ];
    (head, place, prop::collection::vec(fetch_arg(), 0..6))
        .prop_map(|(h, p, a)| format!("{h} {p} {}", a.join(" ")))
}

fn fe_line() -> impl Strategy<Value = String> {
    let ty = prop_oneof![
        Just("int"),
        Just("unsigned long"),
        Just("x8[6]"),
        Just("char[16]"),
        Just("string"),
        Just("symbol"),
        Just("s64"),
        Just("size_t"),
    ];
    let field = (
        0u32..3,
        prop::collection::vec((any::<bool>(), 0i64..64), 0..4),
    )
        .prop_map(|(n, inds)| {
            let mut s = format!("a{n}");
            for (idx, v) in inds {
                s += &if idx {
                    format!("[{v}]")
                } else {
                    format!("+{v}")
                };
            }
            s
        });
    let arg = prop_oneof![
        Just("NULL".to_string()),
        (ty.clone(), field.clone()).prop_map(|(t, f)| format!("{t} {f}")),
        (ty.clone(), field.clone(), ty.clone(), field)
            .prop_map(|(t, f, t2, f2)| format!("{t} {f} | {t2} x{f2}")),
        ty.clone().prop_map(|t| format!("{t} g=0xffffffff82354c18")),
    ];
    (prop::collection::vec(arg, 0..5), any::<bool>()).prop_map(|(args, exit)| {
        let mut s = format!("ip_rcv({})", args.join(", "));
        if exit {
            s += " -> long ret";
        }
        s
    })
}

fn check_roundtrip(control: Control, line: &str) {
    let mut d = Box::new(Definition::new());
    if parse(control, line.as_bytes(), &FakeKernel, &mut d) != Ok(Command::Define) {
        return;
    }
    let c = canon_of(&d);
    let mut d2 = Box::new(Definition::new());
    let ctl = if control == Control::FunctionEvents {
        control
    } else {
        Control::DynamicEvents
    };
    let r = parse(ctl, c.as_bytes(), &FakeKernel, &mut d2);
    assert_eq!(r, Ok(Command::Define), "{line} -> {c}");
    assert!(d.view().same_as(&d2.view()), "{line} -> {c}");
    assert_eq!(canon_of(&d2), c);
    assert_eq!(fmt_of(&d), fmt_of(&d2));
    let place: String = {
        let mut s = String::new();
        let mut words = c.split(' ');
        let _ = words.next();
        s += words.collect::<Vec<_>>().join(" ").as_str();
        s
    };
    // The kernel matches an fprobe's place without "%return".
    let place = if c.starts_with('f') {
        place.replacen("%return", "", 1)
    } else {
        place
    };
    if control != Control::FunctionEvents {
        assert!(
            d.view()
                .matches_removal(Some(d.group()), d.event(), place.as_bytes()),
            "{c}"
        );
    }
}

fn exercise(control: Control, line: &[u8], seed: u64) {
    let mut d = Box::new(Definition::new());
    let r = parse(control, line, &FakeKernel, &mut d);
    if let Err(e) = &r {
        let _ = command_bytes(e, line);
    }
    if r != Ok(Command::Define) {
        return;
    }
    let _ = canon_of(&d);
    let _ = fmt_of(&d);
    let _ = fields_of(&d);
    let mut regs = FakeRegs::default();
    // Every other register and parameter points into the memory below,
    // so that strings and dereferences read something.
    for (i, r) in regs.regs.iter_mut().enumerate() {
        *r = seed.rotate_left(i as u32 * 7) ^ 0xffff_8880_0000_0000;
        if i % 2 == 0 {
            *r = 0xffff_8880_0000_0000 + (*r & 0xff);
        }
    }
    regs.args = (0..8)
        .map(|i| match i % 2 {
            0 => 0xffff_8880_0000_0000 + (seed.rotate_left(i as u32) & 0xff),
            _ => seed.wrapping_mul(i + 1),
        })
        .collect();
    regs.ret = !seed;
    regs.edata = (0..8).map(|i| seed.wrapping_mul(i + 11)).collect();
    let mut mem = FakeMem::default();
    mem.add(0xffff_8880_0000_0000, &seed.to_le_bytes().repeat(64));
    let ips = HeaderIps {
        first: seed,
        second: !seed,
    };
    for size in [0usize, 7, 64, 300, 9000] {
        // Over stale bytes, as a reused ring-buffer slot has them.
        let mut buf = vec![0xa5u8; size];
        let n = d.view().record(&regs, &mem, ips, &mut buf);
        assert!(n <= size);
        // The shorter way of plain values writes what the interpreter
        // writes, byte for byte.
        let mut general = vec![0xa5u8; size];
        let g = d.view().record_general(&regs, &mem, ips, &mut general);
        assert_eq!(
            (n, &buf),
            (g, &general),
            "{:?}",
            String::from_utf8_lossy(line)
        );
        let mut s = String::new();
        let _ = d.view().print_event(&buf[..n], &mut FakeSyms, &mut s);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, .. ProptestConfig::default() })]

    #[test]
    fn kprobe_canonical_roundtrip(line in kprobe_line()) {
        check_roundtrip(Control::DynamicEvents, &line);
        exercise(Control::DynamicEvents, line.as_bytes(), line.len() as u64);
    }

    #[test]
    fn function_canonical_roundtrip(line in fe_line()) {
        check_roundtrip(Control::FunctionEvents, &line);
        exercise(Control::FunctionEvents, line.as_bytes(), 7);
    }

    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..200), seed in any::<u64>()) {
        for c in [Control::KprobeEvents, Control::DynamicEvents, Control::FunctionEvents] {
            exercise(c, &bytes, seed);
        }
    }

    #[test]
    fn mutated_lines_never_panic(line in kprobe_line(), pos in any::<usize>(), b in any::<u8>(), seed in any::<u64>()) {
        let mut v = line.into_bytes();
        if !v.is_empty() {
            let p = pos % v.len();
            v[p] = b;
        }
        exercise(Control::DynamicEvents, &v, seed);
    }
}

#[test]
fn canonical_examples() {
    for l in [
        "p vfs_read %di:u32 +8(+0(%si)):string",
        "r4 vfs_read $retval",
        "p:g/e vfs_read+4 x=$stack3:s8",
        "f vfs_read%return $arg*",
        "t:tp/ev kfree $comm",
        "p 0xffffffff81000000 %ax:b1@0/8",
    ] {
        check_roundtrip(Control::DynamicEvents, l);
    }
}
