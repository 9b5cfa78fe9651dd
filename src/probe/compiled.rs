// SPDX-License-Identifier: GPL-2.0

//! A definition as a probe keeps it: what the parser left in its
//! workspace, frozen to its own size in kernel memory ([`CompiledDef`]),
//! shared by the probes built from it and the event's shape.

use core::pin::Pin;
use core::ptr::NonNull;

use kernel::alloc::KVBox;
use kernel::prelude::*;
use kernel::sync::Arc;

use crate::lang::{CompactArg, Compiled, Definition, FrozenSizes, Storage};
use crate::sys::{boxed_slice, VecWriter};

/// An empty definition to copy from: a `Definition` is 44 KiB, too
/// big to build on a kernel stack.
static EMPTY_DEFINITION: Definition = Definition::new();

/// Allocates an empty definition directly on the heap.
pub(crate) fn new_definition() -> Result<KVBox<Definition>> {
    let mut boxed = KVBox::<Definition>::new_uninit(GFP_KERNEL)?;
    // SAFETY: `Definition` is plain data (no pointers, no `Drop`), so a
    // bitwise copy of a valid one is a valid one; the destination is a
    // fresh allocation of the right size and alignment.
    unsafe {
        core::ptr::copy_nonoverlapping(&EMPTY_DEFINITION, boxed.as_mut_ptr(), 1);
        Ok(boxed.assume_init())
    }
}

/// A compiled definition's variable-length parts in kernel memory, each
/// allocated to its exact size, kept as thin pointers with 16-bit
/// lengths: four boxed slices would take 64 bytes of the definition, and
/// these 32 keep its `Arc` in a 128-byte slab object.
///
/// # Invariants
///
/// `args` is a `KBox<[CompactArg]>` of `nr_args` and `text` a
/// `KBox<[u8]>` of `text_len` bytes of UTF-8 (only [`compile`] fills it,
/// from whole `&str` pieces), both turned into raw pointers; `words` is a
/// `KBox<[u64]>` of `nr_derefs` dereference offsets followed by the
/// `nr_entry_args` saved entry parameters, four `u16`s to a word in
/// memory order. The storage owns the three and frees them on drop;
/// nothing changes them in between.
pub(crate) struct KernelStorage {
    args: NonNull<CompactArg>,
    words: NonNull<u64>,
    text: NonNull<u8>,
    nr_args: u16,
    nr_derefs: u16,
    nr_entry_args: u16,
    text_len: u16,
}

const _: () = assert!(core::mem::size_of::<KernelStorage>() == 32);
// The `Arc` of a compiled definition (its count, then the definition) in a
// 128-byte slab object.
const _: () = assert!(core::mem::size_of::<CompiledDef>() + 8 <= 128);

// SAFETY: the storage owns its allocations and never changes them
// (type invariant): sharing or sending it shares immutable plain data.
unsafe impl Send for KernelStorage {}
// SAFETY: as for `Send`.
unsafe impl Sync for KernelStorage {}

/// The thin pointer of a boxed slice, which [`free_thin`] frees.
fn into_thin<T: Unpin>(slice: Pin<KBox<[T]>>) -> NonNull<T> {
    let raw = KBox::into_raw(Pin::into_inner(slice));
    // A box's pointer is never null (a dangling one for no elements).
    NonNull::new(raw.cast::<T>()).unwrap_or(NonNull::dangling())
}

/// Frees what [`into_thin`] kept of a boxed slice of `len` elements.
///
/// # Safety
///
/// `ptr` came from [`into_thin`] of a slice of `len` elements and is not
/// used after.
unsafe fn free_thin<T>(ptr: NonNull<T>, len: usize) {
    // SAFETY: per the function's contract, the pointer and length of a
    // box given up by `KBox::into_raw`.
    drop(unsafe { KBox::from_raw(core::ptr::slice_from_raw_parts_mut(ptr.as_ptr(), len)) });
}

/// The words that hold `derefs` and then `entry_args`, four to a word.
fn storage_words<'a>(
    derefs: impl Iterator<Item = i64> + 'a,
    entry_args: &'a [u16],
) -> impl Iterator<Item = u64> + 'a {
    let packed = entry_args.chunks(4).map(|four| {
        let part = |i: usize| four.get(i).copied().unwrap_or(0).to_ne_bytes();
        let (a, b, c, d) = (part(0), part(1), part(2), part(3));
        u64::from_ne_bytes([a[0], a[1], b[0], b[1], c[0], c[1], d[0], d[1]])
    });
    Iterator::chain(derefs.map(|d| d as u64), packed)
}

impl KernelStorage {
    fn new(def: &Definition, sizes: FrozenSizes, text: &[u8]) -> Result<Self> {
        let nr = |n: usize| u16::try_from(n).map_err(|_| EINVAL);
        let (nr_args, nr_derefs, nr_entry_args, text_len) = (
            nr(sizes.args)?,
            nr(sizes.derefs)?,
            nr(sizes.entry_args)?,
            nr(text.len())?,
        );
        let entry_args = def.entry_args();
        if entry_args.len() != sizes.entry_args {
            return Err(EINVAL);
        }
        let nr_words = sizes.derefs + sizes.entry_args.div_ceil(4);
        let args = boxed_slice(def.frozen_args(), sizes.args)?;
        let words = boxed_slice(storage_words(def.frozen_derefs(), entry_args), nr_words)?;
        let text = boxed_slice(text.iter().copied(), text.len())?;
        Ok(KernelStorage {
            args: into_thin(args),
            words: into_thin(words),
            text: into_thin(text),
            nr_args,
            nr_derefs,
            nr_entry_args,
            text_len,
        })
    }
}

impl Drop for KernelStorage {
    fn drop(&mut self) {
        let nr_words = usize::from(self.nr_derefs) + usize::from(self.nr_entry_args).div_ceil(4);
        // SAFETY: the three came from `into_thin` of slices of these
        // lengths (type invariant) and are not used after.
        unsafe {
            free_thin(self.args, self.nr_args.into());
            free_thin(self.words, nr_words);
            free_thin(self.text, self.text_len.into());
        }
    }
}

impl Storage for KernelStorage {
    fn args(&self) -> &[CompactArg] {
        // SAFETY: `nr_args` arguments live at `args` (type invariant).
        unsafe { core::slice::from_raw_parts(self.args.as_ptr(), self.nr_args.into()) }
    }

    fn derefs(&self) -> &[i64] {
        // SAFETY: the first `nr_derefs` words are the offsets (type
        // invariant); an i64 has the size, alignment and every bit
        // pattern of a u64.
        unsafe {
            core::slice::from_raw_parts(self.words.as_ptr().cast::<i64>(), self.nr_derefs.into())
        }
    }

    fn entry_args(&self) -> &[u16] {
        // SAFETY: the entry parameters follow the offsets, in memory order
        // (type invariant), inside the words' allocation; a u16 is
        // aligned in a u64 and has no invalid bit pattern.
        unsafe {
            core::slice::from_raw_parts(
                self.words.as_ptr().add(self.nr_derefs.into()).cast::<u16>(),
                self.nr_entry_args.into(),
            )
        }
    }

    fn text(&self) -> &str {
        // SAFETY: `text_len` bytes live at `text`, and they are UTF-8
        // (type invariant): only `compile` fills them, with the bytes of
        // whole `&str`s (`VecWriter`). Checking it here instead would cost
        // every probe hit a scan.
        unsafe {
            core::str::from_utf8_unchecked(core::slice::from_raw_parts(
                self.text.as_ptr(),
                self.text_len.into(),
            ))
        }
    }
}

/// A definition as a probe keeps it: sized to its line, shared between the
/// probe and (for the first probe) the event's shape.
pub(crate) type CompiledDef = Compiled<KernelStorage>;

/// Freezes what the parser left in `def` into a compiled definition of its
/// own size; the workspace can take the next line.
pub(crate) fn compile(def: &Definition) -> Result<Arc<CompiledDef>> {
    let sizes = def.frozen_sizes();
    let mut text = KVec::with_capacity(sizes.text, GFP_KERNEL)?;
    def.write_frozen_text(&mut VecWriter(&mut text))
        .map_err(|_| ENOMEM)?;
    let storage = KernelStorage::new(def, sizes, &text)?;
    let compiled = def.freeze(storage).ok_or(EINVAL)?;
    Ok(Arc::new(compiled, GFP_KERNEL)?)
}

#[kernel::macros::kunit_tests(dynprobe_compiled_storage)]
mod kunit {
    use super::*;
    use crate::lang::{parse, Command, Control, NoResolver};

    /// Compiles `line` and checks that its storage reads back what the
    /// workspace holds; returns the sizes it was made for.
    fn round_trip(line: &[u8], control: Control) -> Result<FrozenSizes> {
        let mut def = new_definition()?;
        if !matches!(
            parse(control, line, &NoResolver, &mut def),
            Ok(Command::Define)
        ) {
            return Err(EINVAL);
        }
        let compiled = compile(&def)?;
        let (v, w) = (compiled.view(), def.view());
        assert!(v.same_as(&w) && w.same_as(&v));
        assert_eq!(v.entry_args(), w.entry_args());
        assert_eq!(v.args().len(), w.args().len());
        Ok(def.frozen_sizes())
    }

    #[test]
    fn storage_keeps_arguments_offsets_and_entry_parameters() -> Result {
        let line = b"p:kunit/d 0x1000 a=+8(+16(%di)) b=%si c=+0(+8(+24(%dx))):string";
        let sizes = round_trip(line, Control::KprobeEvents)?;
        assert_eq!((sizes.args, sizes.derefs, sizes.entry_args), (3, 1 + 2, 0));
        // Five saved parameters take two words after the offsets.
        let line = b"f:kunit/x vfs_read%return a=+8($arg1) $arg2 $arg3 $arg4 $arg5 $arg6 r=$retval";
        let sizes = round_trip(line, Control::DynamicEvents)?;
        assert_eq!(sizes.args, 7);
        assert!(sizes.entry_args >= 5);
        let sizes = round_trip(b"p:kunit/none 0x1000", Control::KprobeEvents)?;
        assert_eq!((sizes.args, sizes.derefs, sizes.entry_args), (0, 0, 0));
        Ok(())
    }
}
