// SPDX-License-Identifier: GPL-2.0
//! Probe kinds, and everything that tells one from another in one table
//! ([`ProbeKind::info`]): a new kind is a variant and a row. What the
//! kernel layer does to register each kind is its own concern (the
//! probe's place, src/probe/mod.rs, and its hook, src/probe/).

use crate::lang::error::Subsystem;

/// Which control file a line was written to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Control {
    /// `kprobe_events`: `p`, `r` and `-` lines.
    KprobeEvents,
    /// `dynamic_events`: adds `f`, `t`, `e`, `w` and `!`.
    DynamicEvents,
    /// `function_events`: `FUNC(ARGS)` lines.
    FunctionEvents,
    /// `uprobe_events`: uprobe `p`, `r` and `-` lines.
    UprobeEvents,
}

/// What kind of probe a definition creates. A kind's short name (kprobe,
/// fprobe, tprobe, eprobe, wprobe, uprobe; function events are `function`) is the
/// one its syntax file (`syntax/`), its hook (`src/probe/hook/`), its host
/// tests (`src/lang/tests/`) and its selftest folder (`selftests/`) use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProbeKind {
    /// kprobe (`p`).
    Kprobe,
    /// kretprobe (`r`, or `p ...%return`).
    Kretprobe,
    /// fprobe at function entry (`f SYM`).
    FprobeEntry,
    /// fprobe at function exit (`f SYM%return`).
    FprobeExit,
    /// tracepoint probe (`t TP`).
    Tprobe,
    /// function event at entry (`FUNC(ARGS)`).
    FunctionEntry,
    /// function event at exit (`FUNC(ARGS) -> TYPE NAME`).
    FunctionExit,
    /// event probe (`e SYS.EVENT`): fed by another trace event's records.
    Eprobe,
    /// watchpoint (`w [r|w|rw]@PLACE[:LEN]`): a hardware breakpoint on
    /// data, hit by the instruction that accesses it.
    Wprobe,
    /// uprobe (`p PATH:OFFSET`): a breakpoint in a file's code, hit by
    /// every process that maps it.
    Uprobe,
    /// uretprobe (`r PATH:OFFSET`, or `p PATH:OFFSET%return`).
    Uretprobe,
    /// function event at a user function's entry (`PATH:FUNC(ARGS)`),
    /// hooked by a uprobe.
    UserFunctionEntry,
    /// function event at a user function's exit (`PATH:FUNC(ARGS) ->
    /// TYPE NAME`), hooked by a uretprobe.
    UserFunctionExit,
}

/// The kernel's families of dynamic events: which control files list a
/// kind, which subsystem its errors are logged under, and which kinds may
/// feed one event together (the kernel keeps each family in a list of
/// its own).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Family {
    /// kprobe events (`p`, `r`): `trace_kprobe`.
    Kprobe,
    /// fprobe events (`f`, `t`): `trace_fprobe`.
    Fprobe,
    /// function events: `function_events` only, one probe per event.
    Function,
    /// event probes (`e`): `event_probe`, one probe per event.
    Eprobe,
    /// watchpoint events (`w`): `wprobe`, one probe per event (the
    /// posted series refuses siblings).
    Wprobe,
    /// uprobe events (`p`, `r` on `PATH:OFFSET`): `trace_uprobe`.
    Uprobe,
}

/// Where in the probed code a kind fires. Probes of one event must fire
/// at the same kind of site (the kernel's `DIFF_PROBE_TYPE`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Site {
    /// Function entry or an instruction inside it.
    Entry,
    /// Function return.
    Exit,
    /// A tracepoint.
    Tracepoint,
    /// A record of another trace event.
    Event,
    /// An access to watched data.
    Watch,
}

/// One row of the kind table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KindInfo {
    /// The family the kind belongs to.
    pub family: Family,
    /// Where it fires.
    pub site: Site,
    /// Its letter in a listing (`p:GRP/EV ...`); function events are
    /// listed as their own text instead.
    pub letter: Option<char>,
    /// Written after the place in a listing (`f SYM%return`).
    pub place_suffix: &'static str,
    /// The probe's header fields after the common `trace_entry`, each an
    /// `unsigned long`, in record order.
    pub header: &'static [&'static str],
}

const PROBE_IP: &[&str] = &["__probe_ip"];
const PROBE_RET: &[&str] = &["__probe_func", "__probe_ret_ip"];
const FUNCTION_IPS: &[&str] = &["__parent_ip", "__ip"];

const fn row(
    family: Family,
    site: Site,
    letter: Option<char>,
    place_suffix: &'static str,
    header: &'static [&'static str],
) -> KindInfo {
    KindInfo {
        family,
        site,
        letter,
        place_suffix,
        header,
    }
}

/// Each kind's header size, in declaration order: a record's layout asks
/// for it on every hit (`Scalars::fixed_size`), without building the
/// kind's row.
const HEADER_SIZES: [u8; ProbeKind::ALL.len()] = {
    let mut sizes = [0u8; ProbeKind::ALL.len()];
    let mut i = 0;
    while i < sizes.len() {
        assert!(ProbeKind::ALL[i] as usize == i);
        sizes[i] = (8 * ProbeKind::ALL[i].info().header.len()) as u8;
        i += 1;
    }
    sizes
};

impl ProbeKind {
    /// Every kind, in declaration order.
    pub const ALL: [ProbeKind; 13] = [
        ProbeKind::Kprobe,
        ProbeKind::Kretprobe,
        ProbeKind::FprobeEntry,
        ProbeKind::FprobeExit,
        ProbeKind::Tprobe,
        ProbeKind::FunctionEntry,
        ProbeKind::FunctionExit,
        ProbeKind::Eprobe,
        ProbeKind::Wprobe,
        ProbeKind::Uprobe,
        ProbeKind::Uretprobe,
        ProbeKind::UserFunctionEntry,
        ProbeKind::UserFunctionExit,
    ];

    /// The kind's row.
    pub const fn info(self) -> KindInfo {
        match self {
            ProbeKind::Kprobe => row(Family::Kprobe, Site::Entry, Some('p'), "", PROBE_IP),
            ProbeKind::Kretprobe => row(Family::Kprobe, Site::Exit, Some('r'), "", PROBE_RET),
            ProbeKind::FprobeEntry => row(Family::Fprobe, Site::Entry, Some('f'), "", PROBE_IP),
            ProbeKind::FprobeExit => {
                row(Family::Fprobe, Site::Exit, Some('f'), "%return", PROBE_RET)
            }
            ProbeKind::Tprobe => row(Family::Fprobe, Site::Tracepoint, Some('t'), "", PROBE_IP),
            ProbeKind::FunctionEntry => row(Family::Function, Site::Entry, None, "", FUNCTION_IPS),
            ProbeKind::FunctionExit => row(Family::Function, Site::Exit, None, "", FUNCTION_IPS),
            ProbeKind::Eprobe => row(Family::Eprobe, Site::Event, Some('e'), "", &[]),
            ProbeKind::Wprobe => row(Family::Wprobe, Site::Watch, Some('w'), "", PROBE_IP),
            ProbeKind::Uprobe => row(Family::Uprobe, Site::Entry, Some('p'), "", PROBE_IP),
            ProbeKind::Uretprobe => row(Family::Uprobe, Site::Exit, Some('r'), "", PROBE_RET),
            ProbeKind::UserFunctionEntry => {
                row(Family::Function, Site::Entry, None, "", FUNCTION_IPS)
            }
            ProbeKind::UserFunctionExit => {
                row(Family::Function, Site::Exit, None, "", FUNCTION_IPS)
            }
        }
    }

    /// The kind's family.
    pub const fn family(self) -> Family {
        self.info().family
    }

    /// True for the exit/return kinds.
    pub fn is_return(self) -> bool {
        self.info().site == Site::Exit
    }

    /// True for function events.
    pub fn is_function_event(self) -> bool {
        self.family() == Family::Function
    }

    /// True for event probes.
    pub fn is_event_probe(self) -> bool {
        self.family() == Family::Eprobe
    }

    /// True for watchpoints.
    pub fn is_watchpoint(self) -> bool {
        self.family() == Family::Wprobe
    }

    /// True for uprobes and uretprobes.
    pub fn is_uprobe(self) -> bool {
        self.family() == Family::Uprobe
    }

    /// True for the kinds a uprobe hooks: uprobes, uretprobes and
    /// function events on user functions.
    pub fn is_user(self) -> bool {
        self.is_uprobe()
            || matches!(
                self,
                ProbeKind::UserFunctionEntry | ProbeKind::UserFunctionExit
            )
    }

    /// Size of the probe's header after the common `trace_entry`.
    #[inline]
    pub fn header_size(self) -> u32 {
        HEADER_SIZES.get(self as usize).map_or(0, |&s| u32::from(s))
    }

    /// Whether a probe of kind `self` may join an event whose probes are
    /// of kind `first`; the error the kernel gives when not.
    pub fn joins(self, first: ProbeKind) -> Result<(), JoinRefusal> {
        if self.family() != first.family()
            || matches!(
                self.family(),
                Family::Function | Family::Eprobe | Family::Wprobe
            )
        {
            Err(JoinRefusal::OtherFamily)
        } else if self.info().site != first.info().site {
            Err(JoinRefusal::OtherSite)
        } else {
            Ok(())
        }
    }
}

/// Why a probe cannot join an existing event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JoinRefusal {
    /// Another family's event, or a function event, event probe or
    /// watchpoint (one probe each): the kernel's `EVENT_EXIST`.
    OtherFamily,
    /// Entry, exit and tracepoint probes do not mix: `DIFF_PROBE_TYPE`.
    OtherSite,
}

impl Family {
    /// Whether `control` lists, clears and removes definitions of this
    /// family (`kprobe_events` only kprobe events, `dynamic_events` every
    /// probe event, `function_events` its own).
    pub fn listed_in(self, control: Control) -> bool {
        match control {
            Control::KprobeEvents => self == Family::Kprobe,
            Control::UprobeEvents => self == Family::Uprobe,
            Control::DynamicEvents => self != Family::Function,
            // Listed there, but event probes are only defined in
            // dynamic_events (their `e` lines).
            Control::FunctionEvents => self == Family::Function,
        }
    }

    /// The subsystem the family's errors are logged under.
    pub fn subsystem(self) -> Subsystem {
        match self {
            Family::Kprobe => Subsystem::Kprobe,
            Family::Fprobe => Subsystem::Fprobe,
            Family::Function => Subsystem::Function,
            Family::Eprobe => Subsystem::EventProbe,
            Family::Wprobe => Subsystem::Wprobe,
            Family::Uprobe => Subsystem::Uprobe,
        }
    }
}
