// SPDX-License-Identifier: GPL-2.0
//! Printing a record as `cat trace` shows it.

use core::fmt::{self, Write};

use crate::lang::record::{ArgView, TRACE_ENTRY_SIZE};
use crate::lang::text;
use crate::lang::text::write_lossy;
use crate::lang::types::{FetchType, PrintKind};
use crate::lang::view::DefView;

/// Formats addresses as the kernel's `%pS` (with offset) or `%ps`.
pub trait Symbolizer {
    /// Write `addr` as a symbol; `with_offset` selects `sym+0x10/0x40`
    /// over `sym`.
    fn write_symbol(&mut self, w: &mut dyn Write, addr: u64, with_offset: bool) -> fmt::Result;
}

fn le(rec: &[u8], off: usize, size: usize) -> u64 {
    let mut b = [0u8; 8];
    if let Some(s) = rec.get(off..off.saturating_add(size)) {
        for (d, x) in b.iter_mut().zip(s) {
            *d = *x;
        }
    }
    u64::from_le_bytes(b)
}

fn sext(v: u64, size: usize) -> i64 {
    match size {
        1 => i64::from(v as u8 as i8),
        2 => i64::from(v as u16 as i16),
        4 => i64::from(v as u32 as i32),
        _ => v as i64,
    }
}

/// The bytes of a `__data_loc` string (`None` when its length is 0).
fn loc_str(rec: &[u8], loc_at: usize) -> Option<&[u8]> {
    let loc = le(rec, loc_at, 4) as u32;
    let len = (loc >> 16) as usize;
    let off = (loc & 0xffff) as usize;
    if len == 0 {
        return None;
    }
    let s = text::mid(rec, off, off.saturating_add(len).min(rec.len()));
    let n = s.iter().position(|&c| c == 0).unwrap_or(s.len());
    Some(text::head(s, n))
}

fn print_one<W: Write>(
    w: &mut W,
    rec: &[u8],
    at: usize,
    ty: FetchType,
    kind: PrintKind,
    function: bool,
    sym: &mut dyn Symbolizer,
) -> fmt::Result {
    let size = ty.size() as usize;
    let v = le(rec, at, size);
    match kind {
        PrintKind::Unsigned => write!(w, "{}", v),
        PrintKind::Signed => write!(w, "{}", sext(v, size)),
        PrintKind::HexPrefixed => write!(w, "0x{:x}", v),
        PrintKind::Hex => write!(w, "{:x}", v),
        PrintKind::Char => {
            w.write_char('\'')?;
            w.write_char(char::from(v as u8))?;
            w.write_char('\'')
        }
        PrintKind::Symbol => {
            if function && v == 0 {
                w.write_str("(null)")
            } else {
                sym.write_symbol(w, v, true)
            }
        }
        PrintKind::String => match loc_str(rec, at) {
            None => w.write_str("(fault)"),
            Some(s) => {
                if function {
                    write_lossy(w, s)
                } else {
                    w.write_char('"')?;
                    write_lossy(w, s)?;
                    w.write_char('"')
                }
            }
        },
    }
}

fn print_arg<W: Write>(
    def: &DefView<'_>,
    a: ArgView<'_>,
    rec: &[u8],
    function: bool,
    sym: &mut dyn Symbolizer,
    w: &mut W,
) -> fmt::Result {
    let base = def.args_offset() as usize + a.offset() as usize;
    let kind = if function {
        a.fetch_type().function_print()
    } else {
        a.fetch_type().probe_print()
    };
    let size = a.fetch_type().size() as usize;
    let count = a.count() as usize;
    if count == 0 {
        return print_one(w, rec, base, a.fetch_type(), kind, function, sym);
    }
    if function && a.is_fixed_string() {
        let s = text::mid(rec, base, base.saturating_add(count));
        let n = s.iter().position(|&c| c == 0).unwrap_or(s.len());
        return write_lossy(w, text::head(s, n));
    }
    if !function {
        w.write_char('{')?;
    }
    for j in 0..count {
        if j > 0 {
            w.write_char(',')?;
        }
        print_one(w, rec, base + j * size, a.fetch_type(), kind, function, sym)?;
    }
    if !function {
        w.write_char('}')?;
    }
    Ok(())
}

impl DefView<'_> {
    /// Print the arguments of a record as a probe event does after its
    /// `(ip)` part: ` name=value` for each argument (each preceded by a
    /// space; arrays as `{a,b}`; strings quoted; `(fault)` for a failed
    /// string). `rec` is a whole record as [`DefView::record`] writes it.
    pub fn print_args<W: Write>(
        &self,
        rec: &[u8],
        sym: &mut dyn Symbolizer,
        w: &mut W,
    ) -> fmt::Result {
        for a in self.args() {
            write!(w, " {}=", a.name())?;
            print_arg(self, a, rec, false, sym, w)?;
        }
        Ok(())
    }

    /// Print the event part of a `cat trace` line (what follows the
    /// `TASK-PID [CPU] FLAGS TIMESTAMP: ` prefix), without the newline:
    /// `EVENT: (ip) args` for kprobe/fprobe events,
    /// `EVENT: (ret_ip <- func) args` for return probes (uprobes'
    /// addresses in hex), and
    /// `parent->func(a=1, b=2)` (entry) or `parent <- func(a=1) ret=0`
    /// (exit) for function events.
    pub fn print_event<W: Write>(
        &self,
        rec: &[u8],
        sym: &mut dyn Symbolizer,
        w: &mut W,
    ) -> fmt::Result {
        let t = TRACE_ENTRY_SIZE as usize;
        let first = le(rec, t, 8);
        let second = le(rec, t + 8, 8);
        let ip = |w: &mut W, sym: &mut dyn Symbolizer, a: u64, off: bool| -> fmt::Result {
            if a == 0 {
                w.write_char('0')
            } else {
                sym.write_symbol(w, a, off)
            }
        };
        if self.kind().is_function_event() {
            sym.write_symbol(w, first, false)?;
            let exit = self.is_return();
            w.write_str(if exit { " <- " } else { "->" })?;
            sym.write_symbol(w, second, false)?;
            w.write_char('(')?;
            self.write_function_args(w, |w, a| print_arg(self, a, rec, true, sym, w))?;
            return Ok(());
        }
        write!(w, "{}: (", self.event())?;
        if self.kind().is_event_probe() {
            // The source event, as the kernel's eprobe prints it.
            w.write_str(self.symbol().unwrap_or(""))?;
        } else if self.kind().is_uprobe() {
            // User addresses, unsymbolized (print_uprobe_event()).
            if self.is_return() {
                write!(w, "0x{second:x} <- 0x{first:x}")?;
            } else {
                write!(w, "0x{first:x}")?;
            }
        } else if self.header_size() == 16 {
            ip(w, sym, second, true)?;
            w.write_str(" <- ")?;
            ip(w, sym, first, false)?;
        } else {
            ip(w, sym, first, true)?;
        }
        w.write_char(')')?;
        self.print_args(rec, sym, w)
    }
}
