// SPDX-License-Identifier: GPL-2.0

//! The symbol a kprobe hook keeps, NUL-terminated, for the kprobes core
//! to point to while the probe is registered: in the hook itself when it
//! is short (most functions' names), which fills what the hook's slab
//! object would leave unused, rather than in a slab object of its own.

use kernel::prelude::*;

/// Bytes of a symbol, its NUL included, kept in the hook.
const INLINE: usize = 38;

/// A hook's symbol (empty for an address).
pub(super) enum HookSymbol {
    Inline { len: u8, text: [u8; INLINE] },
    Boxed(KVec<u8>),
}

// In the hook's 256-byte object, beside its 216 bytes of the rest.
const _: () = assert!(core::mem::size_of::<HookSymbol>() <= 40);

impl HookSymbol {
    /// `text` (NUL-terminated, or empty) as the hook keeps it.
    pub(super) fn new(text: KVec<u8>) -> Self {
        match u8::try_from(text.len()) {
            Ok(len) if text.len() <= INLINE => {
                let mut inline = [0; INLINE];
                if let Some(dst) = inline.get_mut(..text.len()) {
                    dst.copy_from_slice(&text);
                }
                HookSymbol::Inline { len, text: inline }
            }
            _ => HookSymbol::Boxed(text),
        }
    }

    /// The symbol with its NUL; empty for an address.
    pub(super) fn with_nul(&self) -> &[u8] {
        match self {
            HookSymbol::Inline { len, text } => text.get(..usize::from(*len)).unwrap_or(&[]),
            HookSymbol::Boxed(text) => text,
        }
    }
}
