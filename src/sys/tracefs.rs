// SPDX-License-Identifier: GPL-2.0

//! tracefs directories and files: a small safe layer over the kernel's
//! tracefs and `file_operations` (the kernel crate has none for tracefs).
//!
//! A [`Dir`] is a directory of tracefs; dropping it removes it with its
//! files. A file's behaviour is a [`TracefsFile`]: each file of a kind
//! carries a number (its `i_private`), an open file keeps what
//! [`TracefsFile::open`] returns (in `private_data`) until it is closed,
//! reads serve that value's bytes, and writes get the user's buffer.
//!
//! `tracefs_create_dir` and `tracefs_remove` are not exported: they are
//! called through their stubs (`dynprobe_call_*`, Documentation/design.md
//! "Calling unexported functions"), never through a pointer.

use core::marker::PhantomData;
use core::ptr::NonNull;

use kernel::bindings;
use kernel::ffi::{c_char, c_int, c_void};
use kernel::prelude::*;
use kernel::types::ForeignOwnable;
use kernel::uaccess::{UserPtr, UserSlice};
use kernel::ThisModule;

use crate::sys::bindings as sys;

/// How a file was opened.
#[derive(Clone, Copy)]
pub(crate) struct OpenMode {
    /// Opened for reading.
    pub(crate) read: bool,
    /// Opened with `O_TRUNC`.
    pub(crate) truncate: bool,
}

/// The user's buffer of one `write()`.
pub(crate) struct UserInput {
    start: UserPtr,
    len: usize,
}

impl UserInput {
    /// Bytes the write carries.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// Copies `out.len()` bytes starting `offset` bytes into the buffer;
    /// `EFAULT` when they are not all readable or not all in the buffer.
    /// A part may be read again: each call copies anew.
    pub(crate) fn read_at(&self, offset: usize, out: &mut [u8]) -> Result {
        let in_bounds = offset
            .checked_add(out.len())
            .is_some_and(|end| end <= self.len);
        if !in_bounds {
            return Err(EFAULT);
        }
        UserSlice::new(self.start.wrapping_byte_add(offset), out.len())
            .reader()
            .read_slice(out)
    }
}

/// What a kind of tracefs file does.
pub(crate) trait TracefsFile: 'static {
    /// What an open file keeps until it is closed.
    type Open: Send + Sync;

    /// Runs on `open()` of file `id`; an error fails the open.
    fn open(id: usize, mode: OpenMode) -> Result<Self::Open>;

    /// The bytes `read()` serves from an open file.
    fn contents(open: &Self::Open) -> &[u8];

    /// Runs on `write()` to file `id` and returns the bytes it took.
    fn write(id: usize, input: &UserInput) -> Result<usize>;
}

/// A `file_operations` for files of kind `T`.
///
/// # Invariants
///
/// `ops` calls only the callbacks below for `T` and exported kernel
/// functions, and is used only for files whose `i_private` is a file
/// number of `T`.
pub(crate) struct FileOperations<T> {
    ops: bindings::file_operations,
    _file: PhantomData<T>,
}

// SAFETY: the table is never written after it is built; the module pointer
// and the functions it holds may be used from any thread.
unsafe impl<T> Sync for FileOperations<T> {}

impl<T: TracefsFile> FileOperations<T> {
    /// The operations of kind `T`, owned by `module` (which tracefs pins
    /// while a file is open).
    pub(crate) const fn new(module: &'static ThisModule) -> Self {
        FileOperations {
            ops: bindings::file_operations {
                owner: module.as_ptr(),
                open: Some(open_callback::<T>),
                read: Some(read_callback::<T>),
                write: Some(write_callback::<T>),
                release: Some(release_callback::<T>),
                llseek: Some(bindings::default_llseek),
                ..pin_init::zeroed()
            },
            _file: PhantomData,
        }
    }
}

/// The file number tracefs keeps in the inode.
///
/// # Safety
///
/// `file` must be an open file whose inode was created by
/// [`Dir::create_file`].
unsafe fn file_id(file: *mut bindings::file) -> usize {
    // SAFETY: an open file has a valid inode, whose `i_private` holds the
    // number given to `tracefs_create_file`.
    unsafe { (*(*file).f_inode).i_private as usize }
}

/// `open` of `FileOperations<T>`.
///
/// # Safety
///
/// Called by the VFS with a valid inode of kind `T` and the file being
/// opened on it.
unsafe extern "C" fn open_callback<T: TracefsFile>(
    inode: *mut bindings::inode,
    file: *mut bindings::file,
) -> c_int {
    // SAFETY: `file` is valid (VFS contract); the mode and flags are set
    // before `open` runs.
    let (f_mode, f_flags) = unsafe { ((*file).f_mode, (*file).f_flags) };
    let mode = OpenMode {
        read: f_mode & sys::DYNPROBE_FMODE_READ != 0,
        // As the kernel's probe event files: O_TRUNC counts only when the
        // file is opened for writing.
        truncate: f_mode & sys::DYNPROBE_FMODE_WRITE != 0 && f_flags & bindings::O_TRUNC != 0,
    };
    // Allocated first, so that running out of memory fails the open
    // before it changes anything.
    let slot = match KBox::<T::Open>::new_uninit(GFP_KERNEL) {
        Ok(slot) => slot,
        Err(_) => return ENOMEM.to_errno(),
    };
    // SAFETY: `inode` is valid and its `i_private` is a file number of `T`.
    let id = unsafe { (*inode).i_private as usize };
    match T::open(id, mode) {
        Ok(open) => {
            // SAFETY: `file` is valid; `private_data` is the open file's to
            // set, and `release_callback` takes the box back.
            unsafe { (*file).private_data = KBox::write(slot, open).into_foreign() };
            0
        }
        Err(e) => e.to_errno(),
    }
}

/// `release` of `FileOperations<T>`.
///
/// # Safety
///
/// Called by the VFS once, on a file `open_callback::<T>` opened.
unsafe extern "C" fn release_callback<T: TracefsFile>(
    _inode: *mut bindings::inode,
    file: *mut bindings::file,
) -> c_int {
    // SAFETY: `private_data` is the `KBox<T::Open>` set by `open_callback`,
    // taken back once, after the last read or write of the file.
    drop(unsafe { KBox::<T::Open>::from_foreign((*file).private_data) });
    0
}

/// `read` of `FileOperations<T>`.
///
/// # Safety
///
/// Called by the VFS on a file `open_callback::<T>` opened, with a user
/// buffer of `count` bytes and a valid position.
unsafe extern "C" fn read_callback<T: TracefsFile>(
    file: *mut bindings::file,
    buf: *mut c_char,
    count: usize,
    ppos: *mut bindings::loff_t,
) -> isize {
    // SAFETY: `private_data` holds a `KBox<T::Open>` from `open_callback`,
    // freed only by `release_callback`, which cannot run during a read.
    let open = unsafe { KBox::<T::Open>::borrow((*file).private_data) };
    let data = T::contents(open);
    // SAFETY: `buf` is a user pointer and `ppos` a valid position (VFS
    // contract); `data` is readable for its length.
    unsafe {
        bindings::simple_read_from_buffer(buf.cast(), count, ppos, data.as_ptr().cast(), data.len())
    }
}

/// `write` of `FileOperations<T>`.
///
/// # Safety
///
/// Called by the VFS on a file `open_callback::<T>` opened, with a user
/// buffer of `count` bytes and a valid position.
unsafe extern "C" fn write_callback<T: TracefsFile>(
    file: *mut bindings::file,
    buf: *const c_char,
    count: usize,
    ppos: *mut bindings::loff_t,
) -> isize {
    let input = UserInput {
        start: UserPtr::from_ptr(buf.cast_mut().cast::<c_void>()),
        len: count,
    };
    // SAFETY: the file is open and was created by `Dir::create_file`.
    let id = unsafe { file_id(file) };
    let done = match T::write(id, &input) {
        Ok(done) => done,
        Err(e) => return e.to_errno() as isize,
    };
    // `done` is at most `count`, which the VFS bounds by `MAX_RW_COUNT`.
    let (Ok(advance), Ok(ret)) = (bindings::loff_t::try_from(done), isize::try_from(done)) else {
        return EINVAL.to_errno() as isize;
    };
    // SAFETY: `ppos` is valid for the write (VFS contract).
    unsafe { *ppos += advance };
    ret
}

/// A tracefs directory, removed with its files when dropped.
///
/// # Invariants
///
/// `dentry` is the directory, created by `tracefs_create_dir` and not yet
/// removed.
pub(crate) struct Dir {
    dentry: NonNull<bindings::dentry>,
}

// SAFETY: a dentry may be used and removed from any thread.
unsafe impl Send for Dir {}
// SAFETY: `&Dir` only creates files in the directory, which tracefs
// serialises.
unsafe impl Sync for Dir {}

/// A tracefs call's result: a dentry, or NULL or an error pointer.
fn created(dentry: *mut bindings::dentry) -> Option<NonNull<bindings::dentry>> {
    // Error pointers are the last page of the address space.
    const MAX_ERRNO: usize = 4095;
    if dentry as usize >= MAX_ERRNO.wrapping_neg() {
        return None;
    }
    NonNull::new(dentry)
}

impl Dir {
    /// Creates directory `name` at the top of tracefs; `None` when
    /// tracefs refuses (it says nothing more).
    pub(crate) fn create(name: &CStr) -> Option<Self> {
        // SAFETY: `name` is a C string that lives across the call; the
        // stub calls `tracefs_create_dir` (see the module comment).
        let dentry = unsafe {
            sys::dynprobe_call_tracefs_create_dir(name.as_char_ptr(), core::ptr::null_mut())
        };
        // INVARIANT: a directory tracefs just created.
        created(dentry).map(|dentry| Dir { dentry })
    }

    /// Creates file `name` in the directory with permissions `mode`, file
    /// number `id` and the operations `fops`; `None` when tracefs refuses.
    /// The file lives as long as the directory.
    pub(crate) fn create_file<T: TracefsFile>(
        &self,
        name: &CStr,
        mode: u16,
        id: usize,
        fops: &'static FileOperations<T>,
    ) -> Option<()> {
        // SAFETY: `name` lives across the call and tracefs copies it; the
        // parent is a live directory (type invariant); `fops` is static and
        // its callbacks read `i_private` as a file number of `T`, which `id`
        // is.
        let dentry = unsafe {
            sys::tracefs_create_file(
                name.as_char_ptr(),
                mode,
                self.dentry.as_ptr(),
                id as *mut c_void,
                &fops.ops,
            )
        };
        created(dentry).map(|_| ())
    }
}

impl Drop for Dir {
    fn drop(&mut self) {
        // SAFETY: the directory exists (type invariant) and is removed once;
        // the stub calls `tracefs_remove`, which removes its files too. Open
        // files keep working until closed, the module pinned by them.
        unsafe { sys::dynprobe_call_tracefs_remove(self.dentry.as_ptr()) };
    }
}
