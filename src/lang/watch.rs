// SPDX-License-Identifier: GPL-2.0
//! What a watchpoint (`w` line) watches besides its address: the kind of
//! access and how many bytes, as `[r|w|rw]@PLACE[:LEN]` gives them.

/// The accesses a watchpoint fires on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    /// `r`: reads (x86 has no read-only data breakpoint: the kernel
    /// refuses to register one).
    Read,
    /// `w`: writes.
    Write,
    /// `rw`: reads and writes (the default).
    ReadWrite,
}

impl Access {
    /// The letters a line and the listing use.
    pub fn letters(self) -> &'static str {
        match self {
            Access::Read => "r",
            Access::Write => "w",
            Access::ReadWrite => "rw",
        }
    }

    /// The access a line's letters name.
    pub(crate) fn from_letters(s: &[u8]) -> Option<Access> {
        match s {
            b"r" => Some(Access::Read),
            b"w" => Some(Access::Write),
            b"rw" => Some(Access::ReadWrite),
            _ => None,
        }
    }

    /// The perf breakpoint type (`HW_BREAKPOINT_R`, `_W`, `_RW`).
    pub fn bp_type(self) -> u32 {
        match self {
            Access::Read => 1,
            Access::Write => 2,
            Access::ReadWrite => 3,
        }
    }
}

/// A watchpoint's access and length.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Watch {
    /// The accesses it fires on.
    pub access: Access,
    /// Bytes watched: 1, 2, 4 or 8 (the perf `HW_BREAKPOINT_LEN_*`
    /// values are the byte counts).
    pub len: u8,
}

impl Watch {
    /// What a `w` line without `r|w|rw` or `:LEN` watches.
    pub const DEFAULT: Watch = Watch {
        access: Access::ReadWrite,
        len: 4,
    };
}

/// Below this, addresses are user space (`TASK_SIZE` on x86_64 with
/// 4-level page tables): a watchpoint must watch the kernel.
pub(crate) const USER_ADDRESS_END: u64 = 0x0000_7fff_ffff_f000;
