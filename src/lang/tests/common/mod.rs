// SPDX-License-Identifier: GPL-2.0
//! Shared test helpers: a fake kernel (symbols and BTF), fake registers and
//! fake memory.
#![allow(dead_code)]

pub mod btf_writer;

use dynprobe_lang::*;

pub struct FakeKernel;

const FUNCS: &[&str] = &[
    "vfs_read",
    "kfree",
    "do_exit",
    "kernel_clone",
    "dput",
    "vfs_open",
    "do_sys_openat2",
    "ip_rcv",
    "__queue_work",
    "link_path_walk",
    "do_IRQ",
    "queue_work_on",
    "SyS_openat",
    "__vfs_read",
    // Compiler copies: one that keeps the entry, two of one function,
    // and pieces that do not start at the entry.
    "one_copy.isra.0",
    "two_copies.isra.0",
    "two_copies.constprop.0",
    "split.part.0",
    "split.cold",
];

impl Resolver for FakeKernel {
    fn event_source(&self, system: &str, event: &str) -> bool {
        matches!(
            (system, event),
            ("syscalls", "sys_enter_openat") | ("sched", "sched_process_exec")
        )
    }
    fn event_field(&self, system: &str, event: &str, field: &str) -> Option<EventField> {
        fake_event_field(system, event, field)
    }
    /// A few files of a Debian root: programs and a library are regular
    /// files, `/tmp` and `/dev/null` are not.
    fn user_file(&self, path: &[u8]) -> UserFile {
        match path {
            b"/bin/bash"
            | b"/usr/bin/python3"
            | b"/lib/x86_64-linux-gnu/libc.so.6"
            | b"/tmp/a:b"
            | b"/usr/lib/x86_64-linux-gnu/libz.so.1.3" => UserFile::Regular,
            b"/tmp" | b"/dev/null" => UserFile::NotRegular,
            b"/tmp/denied" => UserFile::Missing(13),
            _ => UserFile::Missing(errno::ENOENT),
        }
    }

    /// `/bin/bash` has `main`, at file offset 0x2f000 and 0x30 bytes
    /// long; nothing else has a function.
    fn user_function(&self, path: &[u8], name: &[u8], offs: u64) -> Result<u64, UserFunctionError> {
        match (path, name) {
            (b"/bin/bash", b"main") if offs < 0x30 => Ok(0x2f000 + offs),
            _ => Err(UserFunctionError::Elf(elf::ElfError::SymbolNotFound)),
        }
    }

    /// A stand-in for the kernel's filter parser: `FIELD OP VALUE`
    /// clauses joined by `&&` or `||`, on the source event's own fields.
    fn event_filter(&self, system: &str, event: &str, filter: &str) -> FilterCheck {
        let clauses = filter.split("&&").flat_map(|c| c.split("||"));
        let good = clauses.into_iter().all(|clause| {
            let words: Vec<&str> = clause.split_whitespace().collect();
            matches!(words.as_slice(), [field, "==" | "!=" | "<" | ">", _]
                if fake_event_field(system, event, field).is_some())
        });
        if good {
            FilterCheck::Accepted
        } else {
            FilterCheck::Rejected
        }
    }
    fn symbol_address(&self, name: &str) -> Option<u64> {
        match name {
            "_sdata" => Some(0xffff_ffff_8200_0000),
            "jiffies" => Some(0xffff_ffff_8260_5000),
            _ => None,
        }
    }
    fn check_probe_symbol(&self, module: Option<&str>, symbol: &str) -> SymbolCheck {
        if module.is_some() || FUNCS.contains(&symbol) {
            SymbolCheck::Ok
        } else if symbol == "dup_sym" {
            SymbolCheck::NotUnique
        } else {
            SymbolCheck::NotFound
        }
    }
    fn entry_copies(
        &self,
        _module: Option<&str>,
        symbol: &str,
        out: &mut Str<SYMBOL_CAP>,
    ) -> Copies {
        let mut copies = FUNCS
            .iter()
            .filter(|f| is_entry_copy_of(f.as_bytes(), symbol.as_bytes()));
        match (copies.next(), copies.next()) {
            (None, _) => Copies::None,
            (Some(one), None) => {
                // The parser hands an empty string.
                let _ = std::fmt::Write::write_str(out, one);
                Copies::One
            }
            _ => Copies::Several,
        }
    }
    fn function_exists(&self, _m: Option<&str>, symbol: &str) -> Option<bool> {
        if is_function_list(symbol.as_bytes()) {
            let list = FunctionList::parse(symbol.as_bytes()).ok()?;
            return Some(FUNCS.iter().any(|f| list.matches(f.as_bytes())));
        }
        Some(FUNCS.contains(&symbol))
    }
    fn tracepoint_exists(&self, name: &str) -> Option<bool> {
        Some(name == "kfree" || name == "sched_switch")
    }
    fn btf_func(&self, f: &str) -> Option<BtfFunc> {
        match f {
            "vfs_read" => Some(BtfFunc {
                nr_params: 4,
                ret_type: 10,
            }),
            "kfree" => Some(BtfFunc {
                nr_params: 1,
                ret_type: 0,
            }),
            "vfs_open" => Some(BtfFunc {
                nr_params: 2,
                ret_type: 11,
            }),
            "dput" => Some(BtfFunc {
                nr_params: 1,
                ret_type: 0,
            }),
            _ => None,
        }
    }
    fn btf_param(&self, f: &str, i: u32) -> Option<(&str, u32)> {
        match (f, i) {
            ("vfs_read", 0) => Some(("file", 1)),
            ("vfs_read", 1) => Some(("buf", 3)),
            ("vfs_read", 2) => Some(("count", 5)),
            ("vfs_read", 3) => Some(("pos", 6)),
            ("kfree", 0) => Some(("objp", 8)),
            ("vfs_open", 0) => Some(("path", 15)),
            ("vfs_open", 1) => Some(("file", 1)),
            ("dput", 0) => Some(("dentry", 21)),
            _ => None,
        }
    }
    fn btf_tracepoint(&self, name: &str) -> Option<BtfFunc> {
        // Prototypes of the probe functions: `void *__data` comes first.
        match name {
            "kfree" => Some(BtfFunc {
                nr_params: 3,
                ret_type: 0,
            }),
            "sched_switch" => Some(BtfFunc {
                nr_params: 5,
                ret_type: 0,
            }),
            _ => None,
        }
    }
    fn btf_tracepoint_param(&self, name: &str, i: u32) -> Option<(&str, u32)> {
        match (name, i) {
            ("kfree" | "sched_switch", 0) => Some(("__data", 8)),
            ("kfree", 1) => Some(("call_site", 5)),
            ("kfree", 2) => Some(("ptr", 8)),
            ("sched_switch", 1) => Some(("preempt", 18)),
            ("sched_switch", 2) => Some(("prev", 23)),
            ("sched_switch", 3) => Some(("next", 23)),
            ("sched_switch", 4) => Some(("prev_state", 12)),
            _ => None,
        }
    }
    fn btf_type(&self, id: u32) -> Option<BtfType> {
        Some(match id {
            1 => BtfType::Ptr { target: 2 },
            2 => BtfType::Struct,
            3 => BtfType::Ptr { target: 4 },
            4 => BtfType::Int {
                bits: 8,
                signed: false,
                offset: 0,
            },
            5 => BtfType::Int {
                bits: 64,
                signed: false,
                offset: 0,
            },
            6 => BtfType::Ptr { target: 7 },
            7 => BtfType::Int {
                bits: 64,
                signed: true,
                offset: 0,
            },
            8 => BtfType::Ptr { target: 9 },
            9 => BtfType::Other,
            10 => BtfType::Int {
                bits: 64,
                signed: true,
                offset: 0,
            },
            11 => BtfType::Int {
                bits: 32,
                signed: true,
                offset: 0,
            },
            12 => BtfType::Int {
                bits: 32,
                signed: false,
                offset: 0,
            },
            13 => BtfType::Ptr { target: 14 },
            14 => BtfType::Struct,
            15 => BtfType::Ptr { target: 16 },
            16 => BtfType::Struct,
            17 => BtfType::Int {
                bits: 32,
                signed: false,
                offset: 0,
            },
            18 => BtfType::Int {
                bits: 8,
                signed: false,
                offset: 0,
            },
            20 => BtfType::Struct,
            21 => BtfType::Ptr { target: 20 },
            22 => BtfType::Struct,
            23 => BtfType::Ptr { target: 22 },
            _ => return None,
        })
    }
    fn btf_struct(&self, name: &str) -> Option<u32> {
        (name == "task_struct").then_some(22)
    }
    fn btf_member(&self, id: u32, name: &str) -> Result<Option<BtfMember>, BtfError> {
        Ok(match (id, name) {
            (2, "f_mode") => Some(BtfMember {
                bit_offset: 32,
                bitfield_size: 0,
                ty: 12,
            }),
            (2, "f_inode") => Some(BtfMember {
                bit_offset: 320,
                bitfield_size: 0,
                ty: 13,
            }),
            (2, "f_flags") => Some(BtfMember {
                bit_offset: 384,
                bitfield_size: 0,
                ty: 12,
            }),
            (14, "i_ino") => Some(BtfMember {
                bit_offset: 512,
                bitfield_size: 0,
                ty: 5,
            }),
            (14, "i_bits") => Some(BtfMember {
                bit_offset: 99,
                bitfield_size: 3,
                ty: 17,
            }),
            (22, "pid") => Some(BtfMember {
                bit_offset: 2048,
                bitfield_size: 0,
                ty: 11,
            }),
            _ => None,
        })
    }
}

/// `syscalls/sys_enter_openat` and `sched/sched_process_exec` as the
/// kernel's format files show them.
fn fake_event_field(system: &str, event: &str, field: &str) -> Option<EventField> {
    let f = |offset, size, signed, kind| {
        Some(EventField {
            offset,
            size,
            signed,
            kind,
        })
    };
    match (system, event, field) {
        ("syscalls", "sys_enter_openat", "__syscall_nr") => f(8, 4, true, FieldKind::Value),
        ("syscalls", "sys_enter_openat", "dfd") => f(16, 8, true, FieldKind::Value),
        ("syscalls", "sys_enter_openat", "filename") => f(24, 8, false, FieldKind::PtrString),
        ("syscalls", "sys_enter_openat", "flags") => f(32, 8, true, FieldKind::Value),
        ("sched", "sched_process_exec", "filename") => f(8, 4, true, FieldKind::DynString),
        ("sched", "sched_process_exec", "pid") => f(12, 4, true, FieldKind::Value),
        ("sched", "sched_process_exec", "comm") => f(16, 16, true, FieldKind::StaticString),
        _ => None,
    }
}

/// Parse or panic with the error.
pub fn def_of(control: Control, line: &str) -> Box<Definition> {
    let mut d = Box::new(Definition::new());
    match parse(control, line.as_bytes(), &FakeKernel, &mut d) {
        Ok(Command::Define) => d,
        other => panic!("{line:?}: {other:?}"),
    }
}

pub fn err_of(control: Control, line: &str) -> ParseError {
    let mut d = Box::new(Definition::new());
    match parse(control, line.as_bytes(), &FakeKernel, &mut d) {
        Err(e) => e,
        Ok(c) => panic!("{line:?} unexpectedly accepted: {c:?}"),
    }
}

/// Storage as the kernel layer makes it: each part sized to the
/// definition, from what the definition gives for it.
pub struct VecStorage {
    pub args: Vec<CompactArg>,
    pub derefs: Vec<i64>,
    pub entry_args: Vec<u16>,
    pub text: String,
}

impl Storage for VecStorage {
    fn args(&self) -> &[CompactArg] {
        &self.args
    }
    fn derefs(&self) -> &[i64] {
        &self.derefs
    }
    fn entry_args(&self) -> &[u16] {
        &self.entry_args
    }
    fn text(&self) -> &str {
        &self.text
    }
}

pub fn storage_of(d: &Definition) -> VecStorage {
    let mut text = String::new();
    d.write_frozen_text(&mut text).unwrap();
    VecStorage {
        args: d.frozen_args().collect(),
        derefs: d.frozen_derefs().collect(),
        entry_args: d.entry_args().to_vec(),
        text,
    }
}

/// The compiled form of `d`, in storage of the sizes it asks for.
pub fn compile(d: &Definition) -> Compiled<VecStorage> {
    let store = storage_of(d);
    let sizes = d.frozen_sizes();
    assert_eq!(
        (sizes.args, sizes.derefs, sizes.entry_args, sizes.text),
        (
            store.args.len(),
            store.derefs.len(),
            store.entry_args.len(),
            store.text.len()
        )
    );
    d.freeze(store).expect("storage made from the definition")
}

/// Everything a reader takes from a view but its records: listing,
/// print fmt, `format` fields, fetch programs, names and place.
pub fn readings_of(v: DefView<'_>) -> String {
    let mut s = String::new();
    v.canonical(&mut s).unwrap();
    s.push('\n');
    v.print_fmt(&mut s).unwrap();
    s.push('\n');
    for f in v.fields() {
        f.write_type(&mut s).unwrap();
        s += &format!(
            " {} {} {} {} {} {}\n",
            f.name,
            f.offset,
            f.size,
            f.signed,
            f.header,
            v.declared_len(&f)
        );
    }
    v.write_fetch_programs(&mut s).unwrap();
    for a in v.args() {
        s += &format!(
            "{}={} {:?} {} {} {} {}\n",
            a.name(),
            a.text(),
            a.fetch_type(),
            a.count(),
            a.is_fixed_string(),
            a.offset(),
            a.size()
        );
    }
    s += &format!(
        "{} {} {:?} {:?} {:?} {:?} {:?} {} {} {:?} {} {} {}",
        v.group(),
        v.event(),
        v.kind(),
        v.symbol(),
        v.module(),
        v.full_symbol(),
        v.address(),
        v.offset(),
        v.maxactive(),
        v.entry_args(),
        v.filter(),
        v.nr_dynamic(),
        v.max_record_size()
    );
    s
}

pub fn fmt_of(d: &Definition) -> String {
    let mut s = String::new();
    d.view().print_fmt(&mut s).unwrap();
    s
}

pub fn canon_of(d: &Definition) -> String {
    let mut s = String::new();
    d.view().canonical(&mut s).unwrap();
    s
}

pub fn fields_of(d: &Definition) -> Vec<String> {
    d.view()
        .fields()
        .map(|f| {
            let mut t = String::new();
            f.write_type(&mut t).unwrap();
            format!(
                "{} {};\toffset:{};\tsize:{};\tsigned:{};",
                t,
                f.name,
                f.offset,
                f.size,
                u8::from(f.signed)
            )
        })
        .collect()
}

#[derive(Default)]
pub struct FakeRegs {
    pub regs: [u64; 21],
    pub args: Vec<u64>,
    pub stack: Vec<u64>,
    pub ret: u64,
    pub sp: u64,
    pub current: u64,
    pub edata: Vec<u64>,
    pub record: Vec<u8>,
}

impl Regs for FakeRegs {
    fn reg(&self, r: Reg) -> u64 {
        let i = Reg::ALL.iter().position(|&x| x == r).unwrap();
        self.regs[i]
    }
    fn stack_nth(&self, n: u32) -> u64 {
        self.stack.get(n as usize).copied().unwrap_or(0)
    }
    fn stack_pointer(&self) -> u64 {
        self.sp
    }
    fn arg(&self, n: u32) -> u64 {
        self.args.get(n as usize).copied().unwrap_or(0)
    }
    fn return_value(&self) -> u64 {
        self.ret
    }
    fn current_task(&self) -> u64 {
        self.current
    }
    fn entry_data(&self, slot: u32) -> u64 {
        self.edata.get(slot as usize).copied().unwrap_or(0)
    }
    fn event_record(&self) -> &[u8] {
        &self.record
    }
}

impl FakeRegs {
    pub fn set(&mut self, r: Reg, v: u64) {
        let i = Reg::ALL.iter().position(|&x| x == r).unwrap();
        self.regs[i] = v;
    }
}

/// Memory made of (address, bytes, user) regions; anything else faults.
#[derive(Default)]
pub struct FakeMem {
    pub regions: Vec<(u64, Vec<u8>, bool)>,
    pub comm: [u8; 16],
    /// This CPU's per-CPU offset (`this_cpu_ptr()` adds it).
    pub percpu_offset: u64,
}

impl FakeMem {
    pub fn add(&mut self, addr: u64, bytes: &[u8]) {
        let user = addr < 0x0000_8000_0000_0000;
        self.regions.push((addr, bytes.to_vec(), user));
    }
    pub fn add_u64(&mut self, addr: u64, v: u64) {
        self.add(addr, &v.to_le_bytes());
    }
    fn byte(&self, space: Space, a: u64) -> Option<u8> {
        for (base, b, user) in &self.regions {
            if (space == Space::User) != *user {
                continue;
            }
            if a >= *base && a < base + b.len() as u64 {
                return Some(b[(a - base) as usize]);
            }
        }
        None
    }
}

impl Memory for FakeMem {
    fn read(&self, space: Space, addr: u64, dst: &mut [u8]) -> Result<(), Fault> {
        for (i, d) in dst.iter_mut().enumerate() {
            *d = self.byte(space, addr.wrapping_add(i as u64)).ok_or(Fault)?;
        }
        Ok(())
    }
    fn read_str(&self, space: Space, addr: u64, dst: &mut [u8]) -> Result<usize, Fault> {
        let n = dst.len();
        for (i, d) in dst.iter_mut().enumerate() {
            let c = self.byte(space, addr.wrapping_add(i as u64)).ok_or(Fault)?;
            *d = c;
            if c == 0 {
                return Ok(i + 1);
            }
        }
        dst[n - 1] = 0;
        Ok(n)
    }
    fn comm(&self) -> [u8; 16] {
        self.comm
    }
    fn this_cpu_ptr(&self, addr: u64) -> u64 {
        addr.wrapping_add(self.percpu_offset)
    }
    fn symbol(&self, addr: u64, dst: &mut [u8]) -> usize {
        let s = format!("sym_{addr:x}+0x0/0x10");
        let n = s.len().min(dst.len());
        dst[..n].copy_from_slice(&s.as_bytes()[..n]);
        n
    }
}

pub struct FakeSyms;

impl Symbolizer for FakeSyms {
    fn write_symbol(
        &mut self,
        w: &mut dyn core::fmt::Write,
        addr: u64,
        with_offset: bool,
    ) -> core::fmt::Result {
        let name = match addr {
            0xffff_ffff_8100_1000 => "vfs_read",
            0xffff_ffff_8100_2000 => "ksys_read",
            0xffff_ffff_8100_3000 => "__queue_work",
            0xffff_ffff_8100_4000 => "queue_work_on",
            0xffff_ffff_8100_5000 => "flush_to_ldisc",
            _ => return write!(w, "0x{addr:x}"),
        };
        if with_offset {
            write!(w, "{name}+0x0/0x100")
        } else {
            w.write_str(name)
        }
    }
}

/// The command text error_log shows for error `e` on `line`: bytes, as
/// `write_command` writes them.
pub fn command_bytes(e: &ParseError, line: &[u8]) -> Vec<u8> {
    let mut v = Vec::new();
    write_command(e, line, &mut |b: &[u8]| {
        v.extend_from_slice(b);
        Ok(())
    })
    .unwrap();
    v
}

/// [`command_bytes`] of a line that is UTF-8.
pub fn command_text(e: &ParseError, line: &[u8]) -> String {
    String::from_utf8(command_bytes(e, line)).unwrap()
}
