// SPDX-License-Identifier: GPL-2.0

//! uprobes' hook, also function events' on user functions: the probed
//! file, held from the definition to its removal (a binary deleted or
//! replaced meanwhile keeps its probe, as the kernel's uprobe events keep
//! theirs), and a uprobe consumer registered while the event is enabled
//! (src/shim/uprobe.c), with a return probe's entry words saved at entry
//! (`$argN`). Also the resolver's questions about a uprobe line's file:
//! what it is, and where a function of it is (`PATH:SYMBOL[+OFFS]`), for
//! which the file is read in the pieces the ELF reader asks for, and only
//! those.

use core::ptr::{null_mut, NonNull};

use kernel::alloc::KVVec;
use kernel::bindings;
use kernel::prelude::*;

use super::Hook;
use crate::lang::elf::{Elf, ElfError, Piece};
use crate::lang::errno;
use crate::lang::{DefView, UserFile, UserFunctionError};
use crate::probe::{Feed, Place};
use crate::sys::bindings as b;

/// One uprobe's file and consumer.
///
/// # Invariants
///
/// `uprobe`, once set, came from `dynprobe_uprobe_new()` and is freed on
/// drop only. The hook stays in the box it was made in (see
/// `hook::boxed`): the C object points to `feed`.
pub(crate) struct UprobeHook {
    uprobe: Option<NonNull<b::dynprobe_uprobe>>,
    feed: Feed,
}

// SAFETY: the C object is changed by `arm` and `disarm`, which run with
// event_mutex held (one at a time), and by the drop, which has it alone;
// its handlers only read what creation wrote.
unsafe impl Send for UprobeHook {}
// SAFETY: as for `Send`.
unsafe impl Sync for UprobeHook {}

impl UprobeHook {
    /// The hook for the place's file and offset; hits run `feed`.
    /// Disarmed, holding the file.
    ///
    /// # Safety
    ///
    /// The feed's sink and definition outlive the hook.
    pub(super) unsafe fn boxed(place: &mut Place<'_>, feed: Feed) -> Result<KBox<dyn Hook>> {
        let path = place.symbol.ok_or(EINVAL)?;
        let ret = place.kind.is_return();
        // A return probe's entry words (`$argN` saved at entry).
        let entry_words = place.entry_data_size / core::mem::size_of::<u64>() as u32;
        let mut hook = KBox::new(UprobeHook { uprobe: None, feed }, GFP_KERNEL)?;
        // SAFETY: allocates the C object, which the drop frees; `path` is
        // NUL-terminated and only read during the call; the feed is in
        // the hook's box, where it stays until then.
        let uprobe = kernel::error::from_err_ptr(unsafe {
            b::dynprobe_uprobe_new(
                path.as_char_ptr(),
                place.offset,
                place.addr,
                ret,
                entry_words,
                hook.feed.get(),
            )
        })?;
        let uprobe = NonNull::new(uprobe).ok_or(ENOMEM)?;
        hook.uprobe = Some(uprobe);
        if place.kind.is_function_event() {
            // SAFETY: just made, disarmed; no handler of it runs.
            unsafe { b::dynprobe_uprobe_function_event(uprobe.as_ptr()) };
        }
        Ok(hook)
    }

    /// The C object; `None` only while the hook is made.
    fn uprobe(&self) -> Result<NonNull<b::dynprobe_uprobe>> {
        self.uprobe.ok_or(EINVAL)
    }
}

impl Hook for UprobeHook {
    fn arm(&self, _def: DefView<'_>) -> Result {
        let uprobe = self.uprobe()?;
        // SAFETY: a live object (type invariant); event_mutex is held.
        kernel::error::to_result(unsafe { b::dynprobe_uprobe_arm(uprobe.as_ptr()) })
    }

    fn disarm(&self) {
        if let Ok(uprobe) = self.uprobe() {
            // SAFETY: as in `arm`.
            unsafe { b::dynprobe_uprobe_disarm(uprobe.as_ptr()) }
        }
    }

    /// Calls of a return probe with entry arguments that found no
    /// entry-data slot, or whose slot was taken over.
    fn misses(&self) -> u64 {
        match self.uprobe() {
            // SAFETY: a live object (type invariant).
            Ok(uprobe) => unsafe { b::dynprobe_uprobe_misses(uprobe.as_ptr()) },
            Err(_) => 0,
        }
    }

    fn feed(&self) -> &Feed {
        &self.feed
    }
}

impl Drop for UprobeHook {
    fn drop(&mut self) {
        if let Some(uprobe) = self.uprobe {
            // SAFETY: live (type invariant) and freed only here; returns
            // once no handler of it runs.
            unsafe { b::dynprobe_uprobe_free(uprobe.as_ptr()) };
        }
    }
}

// Every entry word a definition may save has its place in the C side's
// buffers.
const _: () = assert!(crate::lang::MAX_TRACE_ARGS <= b::DYNPROBE_UPROBE_ENTRY_WORDS as usize);

/// What the file a uprobe line names is (`kern_path()`, `d_is_reg()`).
pub(crate) fn user_file(path: &[u8]) -> UserFile {
    let Ok(path) = super::nul_terminated(path) else {
        return UserFile::Missing(crate::lang::errno::ENOMEM);
    };
    // A path with a NUL in it ends there for the kernel too.
    // SAFETY: `path` is NUL-terminated and lives across the call.
    match unsafe { b::dynprobe_user_file(path.as_ptr().cast()) } {
        0 => UserFile::Regular,
        1 => UserFile::NotRegular,
        e => UserFile::Missing(-e),
    }
}

/// The most bytes of a file read to find a function by name: its ELF
/// header, header tables, section names and symbol tables with their
/// strings (a stripped libc needs about 100 KiB, a program with its full
/// `.symtab` a few MiB). A file whose tables are larger is refused with
/// `UPROBE_ELF_TOO_BIG` (`EFBIG`).
const ELF_READ_MAX: u64 = 32 << 20;

/// The most pieces read: the ELF reader asks for at most nine ranges to
/// find a function (header, section 0, section headers, program headers,
/// section names, a symbol table, its strings, `.gnu.version`, and the
/// other symbol table's); more means a file that lies.
const ELF_PIECES_MAX: usize = 16;

/// A file opened for reading (`filp_open()`), closed on drop.
struct OpenFile(NonNull<bindings::file>);

impl OpenFile {
    fn open(path: &[u8]) -> Result<Self, UserFunctionError> {
        let path =
            super::nul_terminated(path).map_err(|_| UserFunctionError::Read(errno::ENOMEM))?;
        let flags = (bindings::O_RDONLY | bindings::O_LARGEFILE) as i32;
        // SAFETY: `path` is NUL-terminated and lives across the call; the
        // file returned is closed by the drop.
        let file = kernel::error::from_err_ptr(unsafe {
            bindings::filp_open(path.as_ptr().cast(), flags, 0)
        })
        .map_err(|e| UserFunctionError::Read(-e.to_errno()))?;
        NonNull::new(file)
            .map(OpenFile)
            .ok_or(UserFunctionError::Read(errno::ENOENT))
    }

    /// The file's size, as `SEEK_END` finds it.
    fn size(&self) -> Result<u64, UserFunctionError> {
        // SAFETY: an open file (type invariant); the reads below give
        // their position, so moving `f_pos` does not matter.
        let end = unsafe { bindings::vfs_llseek(self.0.as_ptr(), 0, bindings::SEEK_END as i32) };
        u64::try_from(end)
            .map_err(|_| UserFunctionError::Read(i32::try_from(-end).unwrap_or(errno::EIO)))
    }

    /// `len` bytes from `offset`, all of them (the reader asks only for
    /// ranges inside the file; one that shrank meanwhile is an error).
    fn read(&self, offset: u64, len: usize) -> Result<KVVec<u8>, UserFunctionError> {
        let mut buf = KVVec::from_elem(0u8, len, GFP_KERNEL)
            .map_err(|_| UserFunctionError::Read(errno::ENOMEM))?;
        let mut pos = i64::try_from(offset).map_err(|_| UserFunctionError::TooBig)?;
        let mut done = 0usize;
        while done < len {
            let rest = &mut buf[done..];
            // SAFETY: an open file (type invariant); `rest` is writable
            // for its length; `pos` is a live position the call moves on.
            let n = unsafe {
                bindings::kernel_read(
                    self.0.as_ptr(),
                    rest.as_mut_ptr().cast(),
                    rest.len(),
                    &mut pos,
                )
            };
            match usize::try_from(n) {
                Ok(0) => return Err(UserFunctionError::Read(errno::EIO)),
                Ok(n) => done += n,
                Err(_) => {
                    return Err(UserFunctionError::Read(
                        i32::try_from(-n).unwrap_or(errno::EIO),
                    ));
                }
            }
        }
        Ok(buf)
    }
}

impl Drop for OpenFile {
    fn drop(&mut self) {
        // SAFETY: opened by `filp_open()` and closed once, here.
        unsafe { bindings::filp_close(self.0.as_ptr(), null_mut()) };
    }
}

/// Where a uprobe on function `name` plus `offs` of the file `path`
/// goes: the ELF reader's answer, asked of the file read in pieces. It
/// starts with none and reads each range the reader says it needs
/// ([`ElfError::NotRead`]), at most [`ELF_READ_MAX`] bytes in
/// [`ELF_PIECES_MAX`] pieces.
pub(crate) fn user_function(path: &[u8], name: &[u8], offs: u64) -> Result<u64, UserFunctionError> {
    let nomem = UserFunctionError::Read(errno::ENOMEM);
    let file = OpenFile::open(path)?;
    let size = file.size()?;
    let mut read: KVec<(u64, KVVec<u8>)> =
        KVec::with_capacity(ELF_PIECES_MAX, GFP_KERNEL).map_err(|_| nomem)?;
    let mut total: u64 = 0;
    loop {
        let mut pieces = [Piece {
            offset: 0,
            bytes: &[],
        }; ELF_PIECES_MAX];
        for (piece, (offset, bytes)) in pieces.iter_mut().zip(read.iter()) {
            *piece = Piece {
                offset: *offset,
                bytes,
            };
        }
        let pieces = pieces.get(..read.len()).unwrap_or(&[]);
        let (offset, len) =
            match Elf::from_pieces(size, pieces).and_then(|elf| elf.lookup_function(name, offs)) {
                Ok(place) => return Ok(place.offset),
                Err(ElfError::NotRead { offset, len }) => (offset, len),
                Err(e) => return Err(UserFunctionError::Elf(e)),
            };
        total = total.saturating_add(len);
        if total > ELF_READ_MAX || read.len() >= ELF_PIECES_MAX {
            return Err(UserFunctionError::TooBig);
        }
        let len = usize::try_from(len).map_err(|_| UserFunctionError::TooBig)?;
        let bytes = file.read(offset, len)?;
        read.push((offset, bytes), GFP_KERNEL).map_err(|_| nomem)?;
    }
}
