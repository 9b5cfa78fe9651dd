// SPDX-License-Identifier: GPL-2.0
//! A definition as the control files list and match it: canonical text,
//! removal matching, and the comparisons that decide whether a line may
//! add a probe to an existing event.

use core::fmt::{self, Write};

use crate::lang::kind::Family;
use crate::lang::text::{self, Str};
use crate::lang::view::DefView;
use crate::lang::SYMBOL_CAP;

impl DefView<'_> {
    /// Write the probe place as the kernel shows and matches it
    /// (`SYM`, `SYM+OFFS`, `0xADDR`; an address as `0x%p` shows it).
    pub fn write_place<W: Write>(&self, w: &mut W) -> fmt::Result {
        if !self.has_symbol {
            write!(w, "0x{:016x}", self.listed_addr)
        } else if self.offset != 0 {
            write!(w, "{}+{}", self.symbol, self.offset)
        } else {
            w.write_str(self.symbol)
        }
    }

    /// The place as the listing shows it and a removal names it: kprobe
    /// events with their offset or address, watchpoints with their
    /// access and length, the others by name only.
    fn write_listed_place<W: Write>(&self, w: &mut W) -> fmt::Result {
        match self.kind.family() {
            Family::Kprobe => self.write_place(w),
            Family::Wprobe => self.write_watch_spec(w),
            Family::Uprobe => self.write_uprobe_place(w),
            _ => w.write_str(self.symbol),
        }
    }

    /// A uprobe's place as `trace_uprobe_show()` lists it and
    /// `trace_uprobe_match_command_head()` matches it: the file as written,
    /// the offset in 16 hex digits, the reference counter if any:
    /// `/bin/bash:0x000000000004d5a0(0x1234)`. A place by name lists as
    /// written: `/usr/lib/x86_64-linux-gnu/libc.so.6:malloc+4(0x1234)`.
    fn write_uprobe_place<W: Write>(&self, w: &mut W) -> fmt::Result {
        match self.uprobe_function() {
            Some(function) => write!(w, "{}:{}", self.symbol, function)?,
            None => write!(w, "{}:0x{:016x}", self.symbol, self.offset)?,
        }
        if self.addr != 0 {
            write!(w, "(0x{:x})", self.addr)?;
        }
        Ok(())
    }

    /// A watchpoint's spec as the posted series lists it, access and
    /// length always written: `w@jiffies:4`, `rw@sym-8:2`,
    /// `w@0xffff888004ad6618:8`.
    fn write_watch_spec<W: Write>(&self, w: &mut W) -> fmt::Result {
        write!(w, "{}@", self.watch.access.letters())?;
        if !self.has_symbol {
            write!(w, "0x{:x}", self.addr)?;
        } else if self.offset != 0 {
            // Kept as the two's complement of a negative offset.
            write!(w, "{}{:+}", self.symbol, self.offset as i64)?;
        } else {
            w.write_str(self.symbol)?;
        }
        write!(w, ":{}", self.watch.len)
    }

    /// Write the definition as the control file lists it (no newline):
    /// `p:kprobes/p_vfs_read_0 vfs_read arg1=%di:u64`, or for function
    /// events the normalized definition text.
    pub fn canonical<W: Write>(&self, w: &mut W) -> fmt::Result {
        let info = self.kind.info();
        let Some(letter) = info.letter else {
            return w.write_str(self.fe_text);
        };
        w.write_char(letter)?;
        // Only kretprobes have one (the kernel lists its default too).
        if self.maxactive > 0 {
            write!(w, "{}", self.maxactive)?;
        }
        write!(w, ":{}/{} ", self.group(), self.event())?;
        self.write_listed_place(w)?;
        // A function list's exit is listed as it is written upstream.
        let list_exit = self.kind == crate::lang::ProbeKind::FprobeExit
            && crate::lang::is_function_list(self.symbol.as_bytes());
        w.write_str(if list_exit {
            ":exit"
        } else {
            info.place_suffix
        })?;
        for a in self.args() {
            write!(w, " {}={}", a.name(), a.text())?;
        }
        Ok(())
    }

    /// Would a removal command `-:[GROUP/]EVENT [PLACE [ARGS...]]` remove
    /// this definition? (`trace_kprobe_match` / `trace_fprobe_match`.)
    pub fn matches_removal(&self, group: Option<&str>, event: &str, args: &[u8]) -> bool {
        if !event.is_empty() && event != self.event() {
            return false;
        }
        if let Some(g) = group {
            if g != self.group() {
                return false;
            }
        }
        let mut words = crate::lang::lexer::Words::new(args);
        let place = match words.next() {
            None => return true,
            Some(p) => p,
        };
        if self.kind.is_function_event() {
            return place == self.symbol.as_bytes();
        }
        let mut buf: Str<{ SYMBOL_CAP + 48 }> = Str::new();
        if self.write_listed_place(&mut buf).is_err() {
            return false;
        }
        let listed = buf.as_bytes();
        // An event probe's source matches as `SYSTEM.EVENT` or
        // `SYSTEM/EVENT` (`eprobe_dyn_event_match()`).
        let same_place = listed == place
            || (self.kind.is_event_probe()
                && listed.len() == place.len()
                && listed
                    .iter()
                    .zip(place)
                    .all(|(l, p)| l == p || (*l == b'.' && *p == b'/')));
        if !same_place {
            return false;
        }
        let mut i = 0usize;
        for word in words {
            let Some(a) = self.args.get(i) else {
                return false;
            };
            let n = a.name().as_bytes();
            if text::head(word, n.len()) != n
                || text::at(word, n.len()) != b'='
                || text::tail(word, n.len().saturating_add(1)) != a.text().as_bytes()
            {
                return false;
            }
            i = i.saturating_add(1);
        }
        true
    }

    /// Compare argument types and names with another definition of the same
    /// event (`trace_probe_compare_arg_type`): 0 when equal, else the
    /// 1-based index of the first difference.
    pub fn compare_arg_types(&self, other: &DefView<'_>) -> usize {
        if self.args.len() != other.args.len() {
            return self.args.len().min(other.args.len()).saturating_add(1);
        }
        for (i, (a, b)) in self.args().zip(other.args()).enumerate() {
            if a.fetch_type() != b.fetch_type() || a.count() != b.count() || a.name() != b.name() {
                return i.saturating_add(1);
            }
        }
        0
    }

    /// True when both definitions are identical (same place, names,
    /// arguments and programs).
    pub fn same_as(&self, o: &DefView<'_>) -> bool {
        self.kind == o.kind
            && self.group == o.group
            && self.event == o.event
            && self.symbol == o.symbol
            && self.has_symbol == o.has_symbol
            && self.addr == o.addr
            && self.offset == o.offset
            && self.maxactive == o.maxactive
            && self.watch == o.watch
            && self.args.len() == o.args.len()
            && self.size == o.size
            && self.entry_args() == o.entry_args()
            && self.args().zip(o.args()).all(|(a, b)| a.is_same(&b))
    }
}
