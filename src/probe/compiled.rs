// SPDX-License-Identifier: GPL-2.0

//! A definition as a probe keeps it: what the parser left in its
//! workspace, frozen to its own size in kernel memory ([`CompiledDef`]),
//! shared by the probes built from it and the event's shape.

use kernel::alloc::KVBox;
use kernel::prelude::*;
use kernel::sync::Arc;

use crate::lang::{CompactArg, Compiled, Definition, Storage};
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
/// allocated to its exact size. Boxed slices rather than vectors: a
/// capacity word fewer each keeps the `Arc` of a compiled definition in a
/// 192-byte slab object.
pub(crate) struct KernelStorage {
    args: Pin<KBox<[CompactArg]>>,
    derefs: Pin<KBox<[i64]>>,
    entry_args: Pin<KBox<[u16]>>,
    /// Only ever filled by [`compile`], from whole `&str` pieces.
    text: Pin<KBox<[u8]>>,
}

impl Storage for KernelStorage {
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
        // SAFETY: `text` is private to this type and only `compile` fills
        // it, with the bytes of whole `&str`s (`VecWriter`), so it is
        // UTF-8. Checking it here instead would cost every probe hit a
        // scan.
        unsafe { core::str::from_utf8_unchecked(&self.text) }
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
    let storage = KernelStorage {
        args: boxed_slice(def.frozen_args(), sizes.args)?,
        derefs: boxed_slice(def.frozen_derefs(), sizes.derefs)?,
        entry_args: boxed_slice(def.entry_args().iter().copied(), sizes.entry_args)?,
        text: boxed_slice(text.iter().copied(), text.len())?,
    };
    let compiled = def.freeze(storage).ok_or(EINVAL)?;
    Ok(Arc::new(compiled, GFP_KERNEL)?)
}
