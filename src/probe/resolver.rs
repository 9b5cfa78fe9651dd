// SPDX-License-Identifier: GPL-2.0

//! Answers the definition language's questions about the running kernel
//! (symbols, probe places, BTF) while a line is parsed.

use core::cell::OnceCell;
use core::ptr::null_mut;
use core::sync::atomic::{AtomicBool, AtomicPtr, Ordering};

use kernel::alloc::KVVec;
use kernel::prelude::*;

use crate::lang::btf::{build_index, build_index_split, index_len, index_len_split};
use crate::lang::{
    Btf, BtfError, BtfFunc, BtfMember, BtfType, Copies, EventField, FilterCheck, FuncEntry,
    Resolver, Str, SymbolCheck, UserFile, UserFunctionError,
};
use crate::probe::symbol_name::{self, SymbolName};
use crate::sys::bindings as b;
use crate::sys::{kernel_symbols, trace_array};

/// The vmlinux BTF and the index that makes lookups in it cheap.
struct VmlinuxBtf {
    blob: &'static [u8],
    index: KVVec<u32>,
}

/// Set by [`btf_init`] on the first definition written, cleared by
/// [`btf_exit`] after the control files are gone; null when BTF is not
/// available or not looked at yet.
static VMLINUX_BTF: AtomicPtr<VmlinuxBtf> = AtomicPtr::new(null_mut());

/// [`btf_init`] ran (whether it found BTF or not).
static BTF_TRIED: AtomicBool = AtomicBool::new(false);

/// Finds the vmlinux BTF and indexes it, the first time it is called.
/// Indexing takes a noticeable time (about 0.2 s for 79,000 types in a
/// TCG guest), so it waits for the first definition instead of slowing
/// every insmod. Without BTF (symbols not found, a blob this reader
/// refuses, no memory) the module works on and BTF arguments are refused
/// as on a kernel without BTF.
///
/// Called with the registry lock held, before a line is parsed: that lock
/// makes the first call the only one that builds.
pub(crate) fn btf_init() {
    if BTF_TRIED.swap(true, Ordering::AcqRel) {
        return;
    }
    let Some(blob) = kernel_symbols::vmlinux_btf() else {
        pr_info!("BTF not available: no BTF argument names\n");
        return;
    };
    let built = index_len(blob).map_err(Some).and_then(|n| {
        let mut index = KVVec::from_elem(0u32, n, GFP_KERNEL).map_err(|_| None)?;
        build_index(blob, &mut index).map_err(Some)?;
        Ok(index)
    });
    let index = match built {
        Ok(index) => index,
        Err(Some(e)) => {
            pr_warn!("vmlinux BTF refused ({:?}): no BTF argument names\n", e);
            return;
        }
        Err(None) => {
            pr_warn!("no memory for the BTF index: no BTF argument names\n");
            return;
        }
    };
    let types = index.first().copied().unwrap_or(0);
    let Ok(boxed) = KBox::new(VmlinuxBtf { blob, index }, GFP_KERNEL) else {
        pr_warn!("no memory for the BTF index: no BTF argument names\n");
        return;
    };
    VMLINUX_BTF.store(KBox::into_raw(boxed), Ordering::Release);
    if let Some(btf) = vmlinux_btf() {
        trace_array::fast_record_init(&btf);
    }
    pr_info!("BTF: {} types\n", types);
}

/// Frees what [`btf_init`] built; called at module exit, when no control
/// file is open any more.
pub(crate) fn btf_exit() {
    let p = VMLINUX_BTF.swap(null_mut(), Ordering::AcqRel);
    if !p.is_null() {
        // SAFETY: `p` came from `KBox::into_raw` in `btf_init` and was
        // taken out of the global just now, so nothing else can free it;
        // no parser runs at module exit.
        drop(unsafe { KBox::from_raw(p) });
    }
    BTF_TRIED.store(false, Ordering::Release);
}

/// The vmlinux BTF, if it was found at load.
fn vmlinux_btf() -> Option<Btf<'static>> {
    let p = VMLINUX_BTF.load(Ordering::Acquire);
    if p.is_null() {
        return None;
    }
    // SAFETY: set once, by the first definition written, and freed only
    // at module exit, after the control files (the only callers, through
    // the parser) are gone.
    let vb: &'static VmlinuxBtf = unsafe { &*p };
    Btf::new(vb.blob, &vb.index).ok()
}

/// A module's BTF blob, a copy the kernel made for us.
struct ModuleBlob {
    ptr: *mut u8,
    len: usize,
}

impl ModuleBlob {
    fn bytes(&self) -> &[u8] {
        // SAFETY: `ptr` is the start of `len` bytes that
        // `dynprobe_module_btf` allocated and nothing else references;
        // they live until `drop`.
        unsafe { core::slice::from_raw_parts(self.ptr, self.len) }
    }
}

impl Drop for ModuleBlob {
    fn drop(&mut self) {
        // SAFETY: `ptr` came from `dynprobe_module_btf` and is freed once,
        // here; no borrow of `bytes()` outlives `self`.
        unsafe { b::dynprobe_module_btf_free(self.ptr.cast()) };
    }
}

/// A module's split BTF and its index on the vmlinux BTF.
struct ModuleBtf {
    blob: ModuleBlob,
    index: KVVec<u32>,
}

/// Name of the module that holds the kernel address `addr`, NUL
/// included, from the ` [MOD]` that `sprint_symbol()` adds for module
/// addresses; `None` for vmlinux and unknown addresses.
fn module_of(addr: u64) -> Option<([u8; 64], usize)> {
    let mut text = [0u8; 600];
    // SAFETY: `text` is writable for its length.
    let n =
        unsafe { b::dynprobe_sprint_symbol(text.as_mut_ptr(), text.len(), addr as usize, true) };
    let text = text.get(..n)?;
    let text = text.strip_suffix(b"]")?;
    let open = text.iter().rposition(|&c| c == b'[')?;
    let name = text.get(open + 1..)?;
    let mut buf = [0u8; 64];
    // MODULE_NAME_LEN is 56: longer is not a module name.
    if name.is_empty() || name.len() >= buf.len() || name.contains(&0) {
        return None;
    }
    buf.get_mut(..name.len())?.copy_from_slice(name);
    Some((buf, name.len()))
}

/// Reads and indexes the BTF of the module that holds kernel symbol
/// `symbol`. `None` when the symbol is in no module, or the module has no
/// BTF (not loaded, a kernel without module BTF), or its blob is refused.
fn load_module_btf(vm: &Btf<'_>, symbol: &SymbolName) -> Option<ModuleBtf> {
    let addr = kernel_symbols::lookup(symbol.c_str());
    if addr == 0 {
        return None;
    }
    let (module, _) = module_of(addr as u64)?;
    let mut len = 0usize;
    // SAFETY: `module` is NUL-terminated; `len` is a valid place to write.
    let ptr = unsafe { b::dynprobe_module_btf(module.as_ptr(), &mut len) };
    if ptr.is_null() {
        return None;
    }
    let blob = ModuleBlob {
        ptr: ptr.cast(),
        len,
    };
    let built = index_len_split(vm, blob.bytes())
        .map_err(Some)
        .and_then(|n| {
            let mut index = KVVec::from_elem(0u32, n, GFP_KERNEL).map_err(|_| None)?;
            build_index_split(vm, blob.bytes(), &mut index).map_err(Some)?;
            Ok(index)
        });
    match built {
        Ok(index) => Some(ModuleBtf { blob, index }),
        Err(e) => {
            let name = module
                .iter()
                .position(|&c| c == 0)
                .and_then(|n| module.get(..n))
                .and_then(|n| core::str::from_utf8(n).ok())
                .unwrap_or("?");
            match e {
                Some(e) => pr_warn!("BTF of module {} refused ({:?})\n", name, e),
                None => pr_warn!("no memory for the BTF index of module {}\n", name),
            }
            None
        }
    }
}

/// Does the function at `addr` start with an ENDBR, past which the
/// kprobes core places a probe at its entry (`arch_adjust_kprobe_addr()`,
/// `__is_endbr()`: ENDBR64, ENDBR32 or the poison sealed functions get)?
fn starts_with_endbr(addr: u64) -> bool {
    if !cfg!(CONFIG_X86_KERNEL_IBT) {
        return false;
    }
    let mut insn = [0u8; 4];
    // SAFETY: `insn` is writable for its length; the read is fault-tolerant.
    if unsafe { b::dynprobe_read_kernel(insn.as_mut_ptr().cast(), addr as usize, insn.len()) } != 0
    {
        return false;
    }
    let insn = u32::from_le_bytes(insn);
    insn == 0xd640_1f0f || insn & !0x0100_0000 == 0xfa1e_0ff3
}

/// Resolves through kallsyms, and answers BTF questions from the vmlinux
/// BTF and, for a function or tracepoint that is not in it, from the BTF
/// of the module that holds it, as the kernel's `bpf_find_btf_id()`
/// searches vmlinux and then the modules' BTF.
///
/// A module's BTF is read when a definition asks for it and dropped with
/// the resolver, after that one line is parsed: nothing is kept that a
/// module unload would have to invalidate (the kernel frees a module's
/// BTF when it goes), and a definition on a module function is rare enough
/// that reading the blob again (a copy through sysfs, then an index of
/// some thousand types) costs little. One line names one function, so one
/// module is held at a time.
#[derive(Default)]
pub(crate) struct KernelResolver {
    /// The BTF of the module of the function the line names, once asked
    /// for (`None` inside: no such BTF).
    module: OnceCell<Option<ModuleBtf>>,
}

impl KernelResolver {
    pub(crate) fn new() -> Self {
        Self::default()
    }

    /// The BTF that answers for function (or, with `tracepoint`, the
    /// probe stub of tracepoint) `name`: vmlinux's when it has it, else
    /// that of the module holding the symbol, on vmlinux's. A `MOD:SYM`
    /// name is in no BTF: the kernel looks BTF up by the name as written.
    fn btf_for(&self, name: &str, tracepoint: bool) -> Option<Btf<'_>> {
        let vm = vmlinux_btf()?;
        let found = if tracepoint {
            vm.tracepoint(name).is_some()
        } else {
            vm.func(name).is_some()
        };
        if found || name.contains(':') {
            return Some(vm);
        }
        let module = self.module.get_or_init(|| {
            let symbol = if tracepoint {
                SymbolName::with_prefix("__probestub_", name)
            } else {
                SymbolName::new(name)
            };
            load_module_btf(&vm, &symbol?)
        });
        match module {
            Some(m) => Btf::new_split(&vm, m.blob.bytes(), &m.index).ok(),
            None => Some(vm),
        }
    }

    /// The BTF type ids refer to: the module's, once one was read (its ids
    /// go on from vmlinux's), else vmlinux's.
    fn btf_of_ids(&self) -> Option<Btf<'_>> {
        let vm = vmlinux_btf()?;
        match self.module.get() {
            Some(Some(m)) => Btf::new_split(&vm, m.blob.bytes(), &m.index).ok(),
            _ => Some(vm),
        }
    }
}

impl Resolver for KernelResolver {
    fn kernel(&self) -> &'static crate::lang::KernelFacts {
        crate::compat::KERNEL
    }

    fn btf_func(&self, func: &str) -> Option<BtfFunc> {
        self.btf_for(func, false)?.func(func)
    }

    fn btf_param(&self, func: &str, idx: u32) -> Option<(&str, u32)> {
        self.btf_for(func, false)?.func_param(func, idx)
    }

    fn btf_tracepoint(&self, name: &str) -> Option<BtfFunc> {
        self.btf_for(name, true)?.tracepoint(name)
    }

    fn btf_tracepoint_param(&self, name: &str, idx: u32) -> Option<(&str, u32)> {
        self.btf_for(name, true)?.tracepoint_param(name, idx)
    }

    fn btf_type(&self, id: u32) -> Option<BtfType> {
        self.btf_of_ids()?.type_info(id)
    }

    fn btf_struct(&self, name: &str) -> Option<u32> {
        self.btf_of_ids()?.struct_named(name)
    }

    fn btf_member(&self, id: u32, name: &str) -> Result<Option<BtfMember>, BtfError> {
        self.btf_of_ids().ok_or(BtfError)?.member(id, name)
    }

    fn dentry_name_offset(&self) -> u64 {
        // SAFETY: returns a constant of the kernel's struct layout.
        unsafe { b::dynprobe_dentry_name_offset() as u64 }
    }

    fn file_dentry_offset(&self) -> u64 {
        // SAFETY: returns a constant of the kernel's struct layout.
        unsafe { b::dynprobe_file_dentry_offset() as u64 }
    }

    fn function_exists(&self, module: Option<&str>, symbol: &str) -> Option<bool> {
        if let Some(m) = module {
            // `MOD:SYM` of an `f` line or function event: that module,
            // loaded, has one traceable function of the name.
            let m = SymbolName::new(m)?;
            let found = crate::probe::hook::module_function(m.c_str(), symbol.as_bytes());
            return Some(found.is_ok());
        }
        let Some(name) = SymbolName::new(symbol) else {
            return Some(false);
        };
        let name = core::ffi::CStr::from_bytes_until_nul(&name.0).ok()?;
        Some(crate::probe::hook::function_traceable(name))
    }

    /// A tracepoint that is not found may belong to a module loaded later
    /// (the kernel accepts such t probes too): only "yes" is an answer.
    fn event_source(&self, system: &str, event: &str) -> bool {
        crate::probe::hook::event_source(system, event)
    }

    fn event_field(&self, system: &str, event: &str, field: &str) -> Option<EventField> {
        crate::probe::hook::event_field(system, event, field)
    }

    fn event_filter(&self, system: &str, event: &str, filter: &str) -> FilterCheck {
        crate::probe::hook::event_filter(system, event, filter)
    }

    fn user_file(&self, path: &[u8]) -> UserFile {
        crate::probe::hook::user_file(path)
    }

    fn user_function(&self, path: &[u8], name: &[u8], offs: u64) -> Result<u64, UserFunctionError> {
        crate::probe::hook::user_function(path, name, offs)
    }

    fn tracepoint_exists(&self, name: &str) -> Option<bool> {
        let name = SymbolName::new(name)?;
        let name = core::ffi::CStr::from_bytes_until_nul(&name.0).ok()?;
        crate::probe::hook::tracepoint_exists(name).then_some(true)
    }

    fn symbol_address(&self, name: &str) -> Option<u64> {
        symbol_name::address(name)
    }

    /// `kprobe_on_func_entry()` fails with `ENOENT` for a `MOD:SYM` that
    /// kallsyms does not know (its module is not loaded): the kernel then
    /// defers the check to registration, and the probe is not taken for a
    /// function entry (so BTF arguments are refused with
    /// `NOSUP_BTFARG`). Known places keep the default.
    fn func_entry(&self, module: Option<&str>, symbol: &str, offset: u64) -> FuncEntry {
        let name = match module {
            Some(m) => SymbolName::qualified(m, symbol),
            None => SymbolName::new(symbol),
        };
        let addr = name.map_or(0, |name| kernel_symbols::lookup(name.c_str()));
        if module.is_some() && addr == 0 {
            return FuncEntry::Unknown;
        }
        // arch_adjust_kprobe_addr(): past a function's ENDBR, 4 bytes in is
        // its entry as much as 0 is (the kernel puts both there).
        if offset == 0 || (offset == 4 && addr != 0 && starts_with_endbr(addr as u64)) {
            FuncEntry::Entry
        } else {
            FuncEntry::NotEntry
        }
    }

    fn default_maxactive(&self) -> u32 {
        // SAFETY: an exported variable, written only while booting.
        let cpus =
            unsafe { core::ptr::read_volatile(&raw const kernel::bindings::__num_possible_cpus) };
        // register_kretprobe(): max_t(unsigned int, 10, 2 * num_possible_cpus()).
        cpus.saturating_mul(2).max(10)
    }

    fn kprobe_address(&self, addr: u64) -> Option<u64> {
        // sprint_symbol() prints `0x...` for an address kallsyms does not
        // know, else `SYM+0xOFFS/0xSIZE [MOD]`. NULL never registers.
        let mut text = [0u8; 600];
        // SAFETY: `text` is writable for its length.
        let n = unsafe {
            b::dynprobe_sprint_symbol(text.as_mut_ptr(), text.len(), addr as usize, true)
        };
        let text = text.get(..n)?;
        if addr == 0 || text.is_empty() || text.starts_with(b"0x") {
            return None;
        }
        let at_entry = text.windows(5).any(|w| w == b"+0x0/");
        Some(if at_entry && starts_with_endbr(addr) {
            addr.wrapping_add(4)
        } else {
            addr
        })
    }

    fn entry_copies(
        &self,
        module: Option<&str>,
        symbol: &str,
        out: &mut Str<{ crate::lang::SYMBOL_CAP }>,
    ) -> Copies {
        let module_name = match module {
            Some(m) => match SymbolName::new(m) {
                Some(m) => Some(m),
                None => return Copies::None,
            },
            None => None,
        };
        let module = module_name.as_ref().map(SymbolName::c_str);
        crate::probe::hook::entry_copies(module, symbol.as_bytes(), out)
    }

    fn check_probe_symbol(&self, module: Option<&str>, symbol: &str) -> SymbolCheck {
        let Some(name) = SymbolName::new(symbol) else {
            return SymbolCheck::NotFound;
        };
        let module_name = match module {
            Some(m) => match SymbolName::new(m) {
                Some(m) => Some(m),
                None => return SymbolCheck::NotFound,
            },
            None => None,
        };
        let (count, module_loaded) = kernel_symbols::count_symbols(
            module_name.as_ref().map(SymbolName::c_str),
            name.c_str(),
        );
        match count {
            // A module that is not loaded yet is checked when it loads; a
            // loaded one must have the symbol, as validate_probe_symbol()
            // requires.
            0 if module.is_some() && !module_loaded => SymbolCheck::Ok,
            0 => SymbolCheck::NotFound,
            1 => SymbolCheck::Ok,
            _ => SymbolCheck::NotUnique,
        }
    }
}
