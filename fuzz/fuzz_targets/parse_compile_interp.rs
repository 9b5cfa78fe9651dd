// SPDX-License-Identifier: GPL-2.0
//! Fuzz parse + compile + record + print + canonical over all control files.
#![no_main]

use core::fmt::Write;
use dynprobe_lang::*;
use libfuzzer_sys::fuzz_target;

struct K;

impl Resolver for K {
    fn symbol_address(&self, name: &str) -> Option<u64> {
        (name.len() < 8).then_some(0xffff_ffff_8200_0000)
    }
    fn btf_func(&self, f: &str) -> Option<BtfFunc> {
        (f == "vfs_read").then_some(BtfFunc { nr_params: 2, ret_type: 3 })
    }
    fn btf_param(&self, _f: &str, i: u32) -> Option<(&str, u32)> {
        match i {
            0 => Some(("file", 1)),
            1 => Some(("buf", 4)),
            _ => None,
        }
    }
    fn btf_type(&self, id: u32) -> Option<BtfType> {
        Some(match id {
            1 => BtfType::Ptr { target: 2 },
            2 => BtfType::Struct,
            3 => BtfType::Int { bits: 64, signed: true, offset: 0 },
            4 => BtfType::Ptr { target: 5 },
            5 => BtfType::Int { bits: 8, signed: false, offset: 0 },
            6 => BtfType::Int { bits: 13, signed: false, offset: 3 },
            _ => return None,
        })
    }
    fn btf_struct(&self, name: &str) -> Option<u32> {
        // Typecasts and $current reach the member paths of struct 2.
        (name.len() < 12).then_some(2)
    }
    fn btf_member(&self, id: u32, name: &str) -> Result<Option<BtfMember>, BtfError> {
        if id == 2 && name.len() < 6 {
            Ok(Some(BtfMember { bit_offset: name.len() as u32 * 9, bitfield_size: 3, ty: if name.len() % 2 == 0 { 1 } else { 6 } }))
        } else {
            Ok(None)
        }
    }
}

struct R(u64);

impl Regs for R {
    fn reg(&self, r: Reg) -> u64 {
        self.0.rotate_left(r.pt_regs_offset())
    }
    fn stack_nth(&self, n: u32) -> u64 {
        self.0 ^ u64::from(n)
    }
    fn stack_pointer(&self) -> u64 {
        0xffff_c900_0000_0000
    }
    fn arg(&self, n: u32) -> u64 {
        self.0.wrapping_mul(u64::from(n) + 1)
    }
    fn return_value(&self) -> u64 {
        !self.0
    }
    fn current_task(&self) -> u64 {
        0xffff_8880_0000_0000 | (self.0 & 0xffff_fff0)
    }
    fn entry_data(&self, s: u32) -> u64 {
        u64::from(s)
    }
}

struct M<'a>(&'a [u8]);

impl Memory for M<'_> {
    fn read(&self, _s: Space, addr: u64, dst: &mut [u8]) -> Result<(), Fault> {
        if addr % 7 == 3 {
            return Err(Fault);
        }
        for (i, d) in dst.iter_mut().enumerate() {
            *d = self.0.get((addr as usize).wrapping_add(i) % self.0.len().max(1)).copied().unwrap_or(0x41);
        }
        Ok(())
    }
    fn read_str(&self, _s: Space, addr: u64, dst: &mut [u8]) -> Result<usize, Fault> {
        if addr % 5 == 1 {
            return Err(Fault);
        }
        let n = (addr as usize % 9000).min(dst.len());
        for d in dst.iter_mut().take(n) {
            *d = b'a';
        }
        if n == 0 {
            return Err(Fault);
        }
        dst[n - 1] = 0;
        Ok(n)
    }
    fn comm(&self) -> [u8; 16] {
        *b"fuzzer\0\0\0\0\0\0\0\0\0\0"
    }
    fn this_cpu_ptr(&self, addr: u64) -> u64 {
        addr.wrapping_add(0x2_0000)
    }
    fn symbol(&self, addr: u64, dst: &mut [u8]) -> usize {
        let n = (addr as usize % 40).min(dst.len());
        for d in dst.iter_mut().take(n) {
            *d = b's';
        }
        n
    }
}

struct S;

impl Symbolizer for S {
    fn write_symbol(&mut self, w: &mut dyn Write, addr: u64, off: bool) -> core::fmt::Result {
        if off {
            write!(w, "f+0x{:x}/0x100", addr & 0xff)
        } else {
            write!(w, "f")
        }
    }
}

thread_local! {
    static DEF: std::cell::RefCell<Box<Definition>> = std::cell::RefCell::new(Box::new(Definition::new()));
}

fuzz_target!(|data: &[u8]| {
    if data.is_empty() {
        return;
    }
    let control = match data[0] % 3 {
        0 => Control::KprobeEvents,
        1 => Control::DynamicEvents,
        _ => Control::FunctionEvents,
    };
    let line = &data[1..];
    DEF.with(|cell| run(control, line, data, &mut cell.borrow_mut()));
});

fn run(control: Control, line: &[u8], data: &[u8], def: &mut Definition) {
    let mut s = String::new();
    match parse(control, line, &K, def) {
        Ok(Command::Define) => {}
        Ok(Command::Remove { group, event, args, .. }) => {
            let _ = def.view().matches_removal(group, event, args);
            return;
        }
        Ok(Command::Nothing) => return,
        Err(e) => {
            let mut command = Vec::new();
            write_command(&e, line, &mut |b: &[u8]| {
                command.extend_from_slice(b);
                Ok(())
            })
            .unwrap();
            return;
        }
    }
    def.view().canonical(&mut s).unwrap();
    def.view().print_fmt(&mut s).unwrap();
    for f in def.view().fields() {
        f.write_type(&mut s).unwrap();
    }
    // The canonical text must parse back to the same definition.
    let canon = {
        let mut c = String::new();
        def.view().canonical(&mut c).unwrap();
        c
    };
    // Default names come from the symbol as written and are not validated
    // (as in the kernel), so only definitions with identifier names are
    // guaranteed to read back.
    let ident = |n: &str, hy: bool| {
        n.bytes().next().is_some_and(|c| c.is_ascii_alphabetic() || c == b'_' || (hy && c == b'-'))
            && n.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'_' || (hy && c == b'-'))
    };
    if !ident(def.event(), false) || !ident(def.group(), true) {
        return;
    }
    let mut d2 = Box::new(Definition::new());
    let ctl = if control == Control::FunctionEvents { control } else { Control::DynamicEvents };
    // Default argument names make a listing longer than the line it was
    // defined by; past the longest line a write takes, it is refused like
    // any other line of that length (as the kernel's listings are).
    if canon.len() > MAX_LINE_LEN {
        let refused = parse(ctl, canon.as_bytes(), &K, &mut d2);
        assert!(matches!(refused, Err(e) if e.code == ErrorCode::ArgTooLong && !e.logged));
        return;
    }
    assert_eq!(parse(ctl, canon.as_bytes(), &K, &mut d2), Ok(Command::Define), "{canon}");
    assert!(def.view().same_as(&d2.view()), "{canon}");
    let seed = data.iter().fold(0u64, |a, &b| a.rotate_left(5) ^ u64::from(b));
    for size in [0usize, 17, 100, 5000, 70000] {
        let mut buf = vec![0u8; size];
        let n = def.view().record(&R(seed), &M(data), HeaderIps { first: seed, second: 1 }, &mut buf);
        assert!(n <= size);
        if n > 0 {
            assert!(n >= def.view().fixed_size() as usize);
        }
        let mut out = String::new();
        def.view().print_event(&buf[..n], &mut S, &mut out).unwrap();
    }
}
