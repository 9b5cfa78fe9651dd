// SPDX-License-Identifier: GPL-2.0
//! Interpreter tests with fake registers and memory, faults included, and
//! the `cat trace` printer.

mod common;
use common::*;
use dynprobe_lang::*;

const KBASE: u64 = 0xffff_8880_0000_1000;
const UBASE: u64 = 0x0000_7fff_0000_0000;

fn run(d: &Definition, regs: &FakeRegs, mem: &FakeMem, ips: HeaderIps) -> (Vec<u8>, String) {
    let mut buf = vec![0xAAu8; 16384];
    let n = d.view().record(regs, mem, ips, &mut buf);
    assert!(n >= d.view().fixed_size() as usize);
    buf.truncate(n);
    let mut s = String::new();
    d.view().print_event(&buf, &mut FakeSyms, &mut s).unwrap();
    (buf, s)
}

fn u32_at(b: &[u8], o: usize) -> u32 {
    u32::from_le_bytes(b[o..o + 4].try_into().unwrap())
}

#[test]
fn kprobe_record_and_print() {
    let d = def_of(
        Control::KprobeEvents,
        "p:myprobe vfs_read %di %si:u32 s=+0(%di):string $comm arr=+0(%si):u8[4] c=+4(%si):char neg=%dx:s16 x=%dx:x8",
    );
    let mut regs = FakeRegs::default();
    regs.set(Reg::Di, KBASE);
    regs.set(Reg::Si, KBASE + 0x100);
    regs.set(Reg::Dx, 0xfffe);
    let mut mem = FakeMem::default();
    mem.add(KBASE, b"hello\0");
    mem.add(KBASE + 0x100, b"\x01\x02\x03\x04A");
    mem.comm[..4].copy_from_slice(b"bash");
    let ips = HeaderIps {
        first: 0xffff_ffff_8100_1000,
        second: 0,
    };
    let (rec, line) = run(&d, &regs, &mem, ips);
    assert_eq!(&rec[8..16], &0xffff_ffff_8100_1000u64.to_le_bytes());
    assert_eq!(&rec[16..24], &KBASE.to_le_bytes());
    // data_loc: length << 16 | offset from the entry start.
    let fixed = d.view().fixed_size() as usize;
    assert_eq!(u32_at(&rec, 28), (6 << 16) | fixed as u32);
    assert_eq!(&rec[fixed..fixed + 6], b"hello\0");
    assert_eq!(u32_at(&rec, 32), (5 << 16) | (fixed as u32 + 6));
    assert_eq!(rec.len(), fixed + 11);
    assert_eq!(
        line,
        "myprobe: (vfs_read+0x0/0x100) arg1=0xffff888000001000 arg2=4352 s=\"hello\" arg4=\"bash\" arr={1,2,3,4} c='A' neg=-2 x=0xfe"
    );
}

#[test]
fn faults() {
    let d = def_of(
        Control::KprobeEvents,
        "p:f vfs_read s=+0(%di):string t=+8(+0(%di)):string m=+0(%si):u64 u=+0(%si):string",
    );
    let mut regs = FakeRegs::default();
    regs.set(Reg::Di, 0xdead_0000);
    regs.set(Reg::Si, KBASE);
    let mut mem = FakeMem::default();
    mem.add(KBASE, b"ok\0");
    let (rec, line) = run(&d, &regs, &mem, HeaderIps::default());
    let fixed = d.view().fixed_size() as usize;
    // Faulting strings have length 0 (printed "(fault)").
    assert_eq!(u32_at(&rec, 16) >> 16, 0);
    assert_eq!(u32_at(&rec, 20) >> 16, 0);
    // A faulting memory read leaves zeros.
    assert_eq!(&rec[24..32], &[0; 8]);
    assert_eq!(u32_at(&rec, 32), (3 << 16) | fixed as u32);
    assert_eq!(line, "f: (0) s=(fault) t=(fault) m=0 u=\"ok\"");
}

#[test]
fn user_strings_and_symstr() {
    let d = def_of(
        Control::KprobeEvents,
        "p:u vfs_read p=+0(%di):ustring q=+u0(%si):u32 sym=%dx:symstr imm=\\\"lit\" sy=%dx:symbol",
    );
    let mut regs = FakeRegs::default();
    regs.set(Reg::Di, UBASE);
    regs.set(Reg::Si, UBASE + 0x10);
    regs.set(Reg::Dx, 0xffff_ffff_8100_2000);
    let mut mem = FakeMem::default();
    mem.add(UBASE, b"/etc/passwd\0");
    mem.add(UBASE + 0x10, &7u32.to_le_bytes());
    let (_rec, line) = run(&d, &regs, &mem, HeaderIps::default());
    assert_eq!(
        line,
        "u: (0) p=\"/etc/passwd\" q=7 sym=\"sym_ffffffff81002000+0x0/0x10\" imm=\"lit\" sy=ksys_read+0x0/0x100"
    );
}

#[test]
fn truncation_and_small_buffers() {
    let d = def_of(Control::KprobeEvents, "p:t vfs_read s=+0(%di):string");
    let mut regs = FakeRegs::default();
    regs.set(Reg::Di, KBASE);
    let mut mem = FakeMem::default();
    let long = vec![b'x'; 5000];
    mem.add(KBASE, &long);
    let mut buf = vec![0u8; 16384];
    let n = d.view().record(&regs, &mem, HeaderIps::default(), &mut buf);
    // Strings are cut to 4096 bytes including the NUL.
    assert_eq!(n, d.view().fixed_size() as usize + 4096);
    assert_eq!(buf[n - 1], 0);
    // A buffer smaller than the fixed part records nothing.
    let mut tiny = [0u8; 10];
    assert_eq!(
        d.view()
            .record(&regs, &mem, HeaderIps::default(), &mut tiny),
        0
    );
    // A buffer with little room truncates the string.
    let mut small = vec![0u8; d.view().fixed_size() as usize + 4];
    let n = d
        .view()
        .record(&regs, &mem, HeaderIps::default(), &mut small);
    assert_eq!(n, small.len());
    assert_eq!(&small[n - 4..], b"xxx\0");
}

#[test]
fn return_probes_and_entry_data() {
    let d = def_of(Control::DynamicEvents, "f vfs_read%return $retval count");
    let regs = FakeRegs {
        ret: (-14i64) as u64,
        edata: vec![4096],
        args: vec![1, 2, 3],
        ..Default::default()
    };
    let mem = FakeMem::default();
    let ips = HeaderIps {
        first: 0xffff_ffff_8100_1000,
        second: 0xffff_ffff_8100_2000,
    };
    let (_rec, line) = run(&d, &regs, &mem, ips);
    assert_eq!(
        line,
        "vfs_read__exit: (ksys_read+0x0/0x100 <- vfs_read) arg1=-14 count=4096"
    );
}

#[test]
fn bitfields_and_arrays_of_strings() {
    let d = def_of(
        Control::KprobeEvents,
        "p:b vfs_read a=%di:b4@4/32 s=+0(%si):string[3]",
    );
    let mut regs = FakeRegs::default();
    regs.set(Reg::Di, 0x1234_5678);
    regs.set(Reg::Si, KBASE);
    let mut mem = FakeMem::default();
    mem.add_u64(KBASE, KBASE + 0x100);
    mem.add_u64(KBASE + 8, 0xdead_0000);
    mem.add_u64(KBASE + 16, KBASE + 0x200);
    mem.add(KBASE + 0x100, b"one\0");
    mem.add(KBASE + 0x200, b"three\0");
    let (_rec, line) = run(&d, &regs, &mem, HeaderIps::default());
    assert_eq!(line, "b: (0) a=7 s={\"one\",(fault),\"three\"}");
}

#[test]
fn function_event_record() {
    let d = def_of(
        Control::FunctionEvents,
        "__queue_work(int cpu, x64 wq, symbol func[3], string name, char[8] tag, x8[3] b+1)",
    );
    let regs = FakeRegs {
        args: vec![
            128,
            0xffff_8801_1a01_0e00,
            KBASE,
            UBASE,
            KBASE + 0x40,
            KBASE + 0x60,
        ],
        ..Default::default()
    };
    let mut mem = FakeMem::default();
    mem.add_u64(KBASE + 24, 0xffff_ffff_8100_5000);
    mem.add(UBASE, b"kworker\0");
    mem.add(KBASE + 0x40, b"abc\0zzzz");
    mem.add(KBASE + 0x60, &[0, 0xa, 0xb, 0xc]);
    let ips = HeaderIps {
        first: 0xffff_ffff_8100_4000,
        second: 0xffff_ffff_8100_3000,
    };
    let (_rec, line) = run(&d, &regs, &mem, ips);
    assert_eq!(
        line,
        "queue_work_on->__queue_work(cpu=128, wq=ffff88011a010e00, func=flush_to_ldisc+0x0/0x100, name=kworker, tag=abc, b=a,b,c)"
    );
    let d = def_of(Control::FunctionEvents, "do_IRQ(symbol regs[16])");
    let (_r, line) = run(&d, &FakeRegs::default(), &mem, ips);
    assert_eq!(line, "queue_work_on->__queue_work(regs=(null))");
    let d = def_of(Control::FunctionEvents, "vfs_read(x64 file) -> s64 ret");
    let regs = FakeRegs {
        ret: 5,
        edata: vec![0x1000],
        ..Default::default()
    };
    let ips = HeaderIps {
        first: 0xffff_ffff_8100_2000,
        second: 0xffff_ffff_8100_1000,
    };
    let (_r, line) = run(&d, &regs, &mem, ips);
    assert_eq!(line, "ksys_read <- vfs_read(file=1000) ret=5");
}

/// As the kernel's probe_mem_read() and string fetches: a plain
/// dereference or `:string` of a user pointer reads user memory; `+u` and
/// `ustring` of a kernel address fault.
#[test]
fn plain_reads_of_user_pointers_use_the_user_accessor() {
    let d = def_of(
        Control::KprobeEvents,
        "p:u vfs_read v=+0(%si):x64 s=+0(%si):string p=+0(+8(%si)):string k=+u0(%di):x64 ks=+0(%di):ustring kk=+0(%di):string",
    );
    let mut regs = FakeRegs::default();
    regs.set(Reg::Si, UBASE);
    regs.set(Reg::Di, KBASE);
    let mut mem = FakeMem::default();
    mem.add(UBASE, b"userdat\0");
    mem.add_u64(UBASE + 8, UBASE + 0x20);
    mem.add(UBASE + 0x20, b"str\0");
    mem.add(KBASE, b"kernel\0\0");
    let (_rec, line) = run(&d, &regs, &mem, HeaderIps::default());
    assert_eq!(
        line,
        "u: (0) v=0x74616472657375 s=\"userdat\" p=\"str\" k=0x0 ks=(fault) kk=\"kernel\""
    );
}

/// A function event's string stops at 512 bytes, NUL included, as in the
/// 2018 interface; a probe event's goes on to 4096.
#[test]
fn function_event_strings_stop_at_512_bytes() {
    let mut long = vec![b'x'; 1000];
    long.push(0);
    let mut mem = FakeMem::default();
    mem.add(KBASE, &long);
    let d = def_of(Control::FunctionEvents, "vfs_read(string name)");
    let regs = FakeRegs {
        args: vec![KBASE],
        ..Default::default()
    };
    let (rec, line) = run(&d, &regs, &mem, HeaderIps::default());
    let fixed = d.view().fixed_size() as usize;
    assert_eq!(u32_at(&rec, fixed - 4), (512 << 16) | fixed as u32);
    assert_eq!(rec.len(), fixed + 512);
    assert!(
        line.ends_with(&format!("(name={})", "x".repeat(511))),
        "{line}"
    );
    assert_eq!(d.view().max_record_size() as usize, fixed + 512);

    let d = def_of(Control::KprobeEvents, "p:k vfs_read s=+0(%di):string");
    let mut regs = FakeRegs::default();
    regs.set(Reg::Di, KBASE);
    let (rec, _) = run(&d, &regs, &mem, HeaderIps::default());
    assert_eq!(rec.len(), d.view().fixed_size() as usize + 1001);
}

use proptest::prelude::*;
use proptest::sample::Index;
use proptest::test_runner::{FileFailurePersistence, TestRunner};

/// Where a buffer's first NUL goes.
#[derive(Clone, Debug)]
enum Nul {
    Absent,
    /// Any position, all alike.
    Anywhere(Index),
    /// Byte `8 * word + delta - 1`: the last byte of a word, or the first
    /// or second of the next.
    Boundary {
        word: usize,
        delta: usize,
    },
}

/// Up to 80 bytes with the first NUL where a [`Nul`] says and, half the
/// time, another one after it. The other bytes are not 0, and are often
/// 0x01, 0x80 or 0xff: the bytes the word-at-a-time test's borrow and
/// high bits are about.
fn nul_buffer() -> impl Strategy<Value = Vec<u8>> {
    let filler = prop_oneof![Just(0x01u8), Just(0x80), Just(0xff), 1u8..=255];
    let nul = prop_oneof![
        1 => Just(Nul::Absent),
        2 => any::<Index>().prop_map(Nul::Anywhere),
        2 => (0usize..11, 0usize..3).prop_map(|(word, delta)| Nul::Boundary { word, delta }),
    ];
    let bytes = prop::collection::vec(filler, 0..80);
    (bytes, nul, prop::option::of(any::<Index>())).prop_map(|(mut b, nul, second)| {
        let first = match nul {
            Nul::Absent => None,
            Nul::Anywhere(i) => (!b.is_empty()).then(|| i.index(b.len())),
            Nul::Boundary { word, delta } => (8 * word + delta).checked_sub(1),
        };
        if let Some(p) = first.filter(|&p| p < b.len()) {
            b[p] = 0;
            let rest = b.len() - p - 1;
            if let Some(i) = second.filter(|_| rest > 0) {
                b[p + 1 + i.index(rest)] = 0;
            }
        }
        b
    })
}

/// The word-at-a-time NUL scan finds what a byte-by-byte one finds,
/// wherever the first NUL is and whatever the length. The cases are
/// counted by where their first NUL is, so that a generator that stops
/// reaching past the first word (as one drawing each byte at random from
/// a set with 0 in it did: the first NUL was nearly always in the first
/// few bytes) fails.
#[test]
fn first_nul_is_the_first_zero_byte() {
    // No NUL; in the first word; past it; past it at a word's last or
    // first two bytes.
    let counts = std::cell::RefCell::new([0usize; 4]);
    let config = ProptestConfig {
        cases: 2000,
        source_file: Some(file!()),
        failure_persistence: Some(Box::new(FileFailurePersistence::WithSource(
            "proptest-regressions",
        ))),
        ..ProptestConfig::default()
    };
    let result = TestRunner::new(config).run(&nul_buffer(), |b| {
        let first = b.iter().position(|&c| c == 0);
        prop_assert_eq!(first_nul(&b), first, "{:02x?}", b);
        let mut c = counts.borrow_mut();
        match first {
            None => c[0] += 1,
            Some(p) if p < 8 => c[1] += 1,
            Some(p) => {
                c[2] += 1;
                if matches!(p % 8, 7 | 0 | 1) {
                    c[3] += 1;
                }
            }
        }
        Ok(())
    });
    if let Err(e) = result {
        panic!("{e}");
    }
    let c = counts.into_inner();
    eprintln!(
        "first NUL: none {}, in the first word {}, past it {} ({} next to a word boundary)",
        c[0], c[1], c[2], c[3]
    );
    assert!(c.iter().all(|&n| n >= 200), "{c:?}");
}

#[test]
fn per_cpu_pointers_and_reads() {
    // 7.3's this_cpu_ptr()/this_cpu_read(): of a register's value, of a
    // symbol (the pointer of its address, not of what is there), inside
    // and around dereferences; and $current.
    let d = def_of(
        Control::KprobeEvents,
        "p:pc vfs_read p=this_cpu_ptr(%di) j=this_cpu_read(@jiffies) v=this_cpu_read(+8(%si)):u32 m=+8(this_cpu_ptr(@jiffies)):u16 t=$current",
    );
    let jiffies = 0xffff_ffff_8260_5000u64;
    let off = 0x10_0000u64;
    let mut regs = FakeRegs::default();
    regs.set(Reg::Di, 0x2_8000);
    regs.set(Reg::Si, KBASE);
    regs.current = KBASE + 0x700;
    let mut mem = FakeMem {
        percpu_offset: off,
        ..Default::default()
    };
    mem.add_u64(KBASE + 8, 0x3_0000);
    mem.add(0x3_0000 + off, &0x1234_5678u32.to_le_bytes());
    mem.add_u64(jiffies + off, 77);
    mem.add(jiffies + off + 8, &0xbeefu16.to_le_bytes());
    // What is at the symbol itself must not be read.
    mem.add_u64(jiffies, 5);
    let (_rec, line) = run(&d, &regs, &mem, HeaderIps::default());
    assert_eq!(
        line,
        format!(
            "pc: (0) p=0x{:x} j=0x4d v=305419896 m=48879 t=0x{:x}",
            0x2_8000 + off,
            KBASE + 0x700
        )
    );
}
