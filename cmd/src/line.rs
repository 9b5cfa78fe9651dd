// SPDX-License-Identifier: GPL-2.0
//! Which control file a line goes to, and perf probe's shorthand
//! translated to a dynprobe line.

use std::fmt;

/// One of dynprobe's control files.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    /// `dynprobe/kprobe_events`: `p` and `r` lines.
    Kprobe,
    /// `dynprobe/dynamic_events`: `f`, `t`, `e`, `w` and `s:` lines.
    Dynamic,
    /// `dynprobe/function_events`: `FUNC(ARGS)` lines.
    Function,
    /// `dynprobe/synthetic_events`: `EVENT FIELD[; FIELD]...` lines.
    Synthetic,
    /// `dynprobe/uprobe_events`: uprobe `p` and `r` lines
    /// (`PATH:OFFSET`).
    Uprobe,
}

impl Target {
    /// The file's name in `dynprobe/`.
    pub fn file(self) -> &'static str {
        match self {
            Target::Kprobe => "kprobe_events",
            Target::Dynamic => "dynamic_events",
            Target::Function => "function_events",
            Target::Synthetic => "synthetic_events",
            Target::Uprobe => "uprobe_events",
        }
    }
}

/// A line ready to write: the file and the text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Planned {
    /// Where it goes.
    pub target: Target,
    /// What is written (the line as given, or perf's shorthand translated).
    pub line: String,
    /// Whether `line` was translated from perf probe's shorthand.
    pub translated: bool,
    /// What the line's numbers stand for, printed after it as a comment
    /// (`# malloc at 0x98930`), never written.
    pub note: Option<String>,
}

impl Planned {
    /// A line as given, in `target`.
    pub fn as_given(target: Target, line: &str) -> Planned {
        Planned {
            target,
            line: line.to_string(),
            translated: false,
            note: None,
        }
    }

    /// `FILE: LINE`, with the note as a comment after the line: what
    /// `--dry-run`, `check` and a translated line print.
    pub fn shown(&self) -> String {
        match &self.note {
            Some(n) => format!("{}: {}  # {n}", self.target.file(), self.line),
            None => format!("{}: {}", self.target.file(), self.line),
        }
    }
}

/// perf probe's place of a function, `FUNC[%return|+OFFS]`, split.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FunctionPlace<'a> {
    /// The function's name.
    pub func: &'a str,
    /// `+OFFS`, as written.
    pub offs: Option<&'a str>,
    /// `%return`.
    pub ret: bool,
}

impl<'a> FunctionPlace<'a> {
    /// `place` split; `None` for an empty FUNC or `+OFFS`, or an offset
    /// with `%return`.
    pub fn parse(place: &'a str) -> Option<Self> {
        let (func, ret) = match place.strip_suffix("%return") {
            Some(f) => (f, true),
            None => (place, false),
        };
        let (func, offs) = match func.split_once('+') {
            Some((f, o)) => (f, Some(o)),
            None => (func, None),
        };
        if func.is_empty() || offs.is_some_and(|o| o.is_empty() || ret) {
            return None;
        }
        Some(FunctionPlace { func, offs, ret })
    }

    /// The event's name: `event` if given, else perf probe's from `base`
    /// (the function's name as an event word): `base`, `base__return`,
    /// `base_OFFS`.
    pub fn event(&self, event: Option<&str>, base: String) -> String {
        match (event, self.offs) {
            (Some(e), _) => e.to_string(),
            (None, Some(o)) => format!("{base}_{o}"),
            (None, None) if self.ret => format!("{base}__return"),
            (None, None) => base,
        }
    }
}

/// A line that is none of the forms.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LineError(pub String);

impl fmt::Display for LineError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

fn is_ident_start(c: char) -> bool {
    c.is_ascii_alphabetic() || c == '_'
}

fn is_ident(s: &str) -> bool {
    let mut c = s.chars();
    c.next().is_some_and(is_ident_start) && c.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// A function name as kallsyms spells it (`NAME`, `NAME.constprop.0`).
fn is_symbol(s: &str) -> bool {
    let mut c = s.chars();
    c.next().is_some_and(is_ident_start)
        && c.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.')
}

/// The first word of a probe line: a kind letter, for `r` a maxactive,
/// then nothing or `:` and the name.
fn probe_kind(w0: &str) -> Option<char> {
    let mut chars = w0.chars();
    let k = chars.next()?;
    if !"prftew".contains(k) {
        return None;
    }
    let rest = chars.as_str();
    let rest = rest.trim_start_matches(|c: char| c.is_ascii_digit());
    (rest.is_empty() || rest.starts_with(':')).then_some(k)
}

/// Types a synthetic event field starts with (`synth_field_size()`).
fn is_synth_type(w: &str) -> bool {
    let base = w.split('[').next().unwrap_or(w);
    matches!(
        base,
        "s8" | "s16"
            | "s32"
            | "s64"
            | "u8"
            | "u16"
            | "u32"
            | "u64"
            | "char"
            | "int"
            | "long"
            | "bool"
            | "pid_t"
            | "gfp_t"
            | "unsigned"
            | "short"
    )
}

/// Picks the control file for `line`; perf probe's shorthand
/// (`[[GROUP:]EVENT=]FUNC[%return|+OFFS] [ARG...]`) is translated.
pub fn plan(line: &str) -> Result<Planned, LineError> {
    let text = line.trim();
    let mut words = text.split_ascii_whitespace();
    let Some(w0) = words.next() else {
        return Err(LineError("empty line".into()));
    };
    let keep = |target| Ok(Planned::as_given(target, text));
    if w0.starts_with("s:") {
        return keep(Target::Dynamic);
    }
    if w0.starts_with('-') || w0.starts_with('!') {
        return Err(LineError(format!(
            "`{w0}` is a removal: use `dynprobe del EVENT`"
        )));
    }
    if let Some(k) = probe_kind(w0) {
        // A place with both `/` and `:` is a file's: a uprobe.
        let user = words
            .clone()
            .next()
            .is_some_and(|w| w.contains('/') && w.contains(':'));
        return keep(match k {
            'p' | 'r' if user => Target::Uprobe,
            'p' | 'r' => Target::Kprobe,
            _ => Target::Dynamic,
        });
    }
    if let Some(open) = text.find('(') {
        if is_symbol(&text[..open]) {
            return keep(Target::Function);
        }
    }
    let place = w0.split_once('=').map_or(w0, |(_, p)| p);
    if place.starts_with("sdt:") || place.starts_with('%') {
        return Err(LineError(format!(
            "`{w0}`: an SDT marker is a binary's: name the binary with -x BIN"
        )));
    }
    let w1 = words.next();
    if is_ident(w0) && (text.contains(';') || w1.is_some_and(is_synth_type)) {
        return keep(Target::Synthetic);
    }
    translate_perf(text)
}

/// perf probe's `[[GROUP:]EVENT=]FUNC[%return|+OFFS] [ARG...]` as a
/// dynprobe line: an fprobe (`f:GROUP/EVENT FUNC[%return] ARGS`) in
/// `dynamic_events`, whose arguments take perf's syntax as they are (BTF
/// names, `->` members, `$retval`, `NAME=ARG:TYPE`), or for `FUNC+OFFS` a
/// kprobe (`p:GROUP/EVENT FUNC+OFFS ARGS`). The group is perf's, `probe`;
/// the event is the function's name (`FUNC__return` for `%return`,
/// `FUNC_OFFS` for an offset), as perf names them.
pub fn translate_perf(text: &str) -> Result<Planned, LineError> {
    let mut words = text.split_ascii_whitespace();
    let spec = words.next().unwrap_or("");
    let (name, place) = match spec.split_once('=') {
        Some((n, p)) => (Some(n), p),
        None => (None, spec),
    };
    let (group, event) = match name {
        Some(n) => match n.split_once(':') {
            Some((g, e)) => (Some(g), Some(e)),
            None => (None, Some(n)),
        },
        None => (None, None),
    };
    for (what, v) in [("group", group), ("event", event)] {
        if let Some(v) = v {
            if !is_ident(v) {
                return Err(LineError(format!("bad {what} name `{v}` in `{spec}`")));
            }
        }
    }
    if let Some(c) = place.chars().find(|&c| c == '@' || c == ';') {
        return Err(LineError(format!(
            "`{place}`: perf probe's `{c}` needs the kernel's debug info; dynprobe probes functions by name (FUNC, FUNC%return, FUNC+OFFS)"
        )));
    }
    let Some(FunctionPlace { func, offs, ret }) =
        FunctionPlace::parse(place).filter(|p| is_symbol(p.func))
    else {
        return Err(LineError(format!(
            "`{text}`: not a dynprobe line (p/r, f/t/e/w/s:, FUNC(ARGS), EVENT FIELDS;) nor perf probe's [[GROUP:]EVENT=]FUNC[%return|+OFFS] [ARG...]"
        )));
    };
    let group = group.unwrap_or("probe");
    let event = FunctionPlace { func, offs, ret }.event(event, func.replace('.', "_"));
    let args: Vec<String> = words
        .map(|a| match a {
            "$params" => "$arg*".to_string(),
            _ => a.to_string(),
        })
        .collect();
    let (target, head) = match offs {
        Some(o) => (Target::Kprobe, format!("p:{group}/{event} {func}+{o}")),
        None => (
            Target::Dynamic,
            format!(
                "f:{group}/{event} {func}{}",
                if ret { "%return" } else { "" }
            ),
        ),
    };
    let mut line = head;
    for a in args {
        line.push(' ');
        line.push_str(&a);
    }
    Ok(Planned {
        target,
        line,
        translated: true,
        note: None,
    })
}

/// The event a line defines, as `GROUP/EVENT` when the line names it
/// (`p:GRP/EV`, `f:GRP/EV`, `s:EV`, a function event's `functions/FUNC`,
/// a synthetic `EVENT`); `None` when the group or event is the module's
/// default and not written.
pub fn defined_event(p: &Planned) -> Option<String> {
    let text = p.line.trim();
    let w0 = text.split_ascii_whitespace().next()?;
    match p.target {
        Target::Function => {
            let f = &text[..text.find('(')?];
            let exit = text[text.find(')')?..].contains("->");
            Some(format!(
                "functions/{}{}",
                f.replace('.', "_"),
                if exit { "__exit" } else { "" }
            ))
        }
        Target::Synthetic => Some(format!("synthetic/{w0}")),
        Target::Kprobe | Target::Dynamic | Target::Uprobe => {
            let (_, name) = w0.split_once(':')?;
            if name.is_empty() {
                return None;
            }
            if w0.starts_with("s:") {
                let e = name.strip_prefix("synthetic/").unwrap_or(name);
                return Some(format!("synthetic/{e}"));
            }
            if name.contains('/') {
                Some(name.to_string())
            } else if let Some((g, e)) = name.split_once('.') {
                Some(format!("{g}/{e}"))
            } else {
                let group = match w0.chars().next() {
                    Some('p' | 'r') if p.target == Target::Uprobe => "uprobes",
                    Some('p' | 'r') => "kprobes",
                    Some('f') => "fprobes",
                    Some('t') => "tracepoints",
                    Some('e') => "eprobes",
                    Some('w') => "wprobes",
                    _ => return None,
                };
                Some(format!("{group}/{name}"))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(line: &str) -> (Target, String) {
        let p = plan(line).unwrap();
        (p.target, p.line)
    }

    #[test]
    fn control_file_per_form() {
        assert_eq!(t("p:a/b vfs_read").0, Target::Kprobe);
        assert_eq!(t("p vfs_read").0, Target::Kprobe);
        assert_eq!(t("r10:a/b vfs_read $retval").0, Target::Kprobe);
        assert_eq!(t("r vfs_read").0, Target::Kprobe);
        assert_eq!(t("f:a/b vfs_read count").0, Target::Dynamic);
        assert_eq!(t("f vfs_read%return").0, Target::Dynamic);
        assert_eq!(t("t:a/b sched_switch").0, Target::Dynamic);
        assert_eq!(t("e:a/b sched.sched_switch").0, Target::Dynamic);
        assert_eq!(t("w:a/b w@jiffies:8").0, Target::Dynamic);
        assert_eq!(t("s:lat u64 ns; pid_t pid").0, Target::Dynamic);
        assert_eq!(t("vfs_read(file, count)").0, Target::Function);
        assert_eq!(t("vfs_read(x64 file) -> s64 ret").0, Target::Function);
        assert_eq!(t("devkmsg_emit.constprop.0(int a)").0, Target::Function);
        assert_eq!(t("lat u64 ns; pid_t pid").0, Target::Synthetic);
        assert_eq!(t("lat u64 ns").0, Target::Synthetic);
        assert_eq!(t("  p:a/b   vfs_read  ").1, "p:a/b   vfs_read");
        assert_eq!(t("p:a/b /bin/sh:0x10").0, Target::Uprobe);
        assert_eq!(t("r /bin/sh:0x10%return").0, Target::Uprobe);
        assert_eq!(t("p:a/b ./app:0x10 %di").0, Target::Uprobe);
        assert_eq!(t("p:a/b btrfs:btrfs_sync_file").0, Target::Kprobe);
    }

    #[test]
    fn removals_and_junk_are_refused() {
        assert!(plan("-:a/b").unwrap_err().0.contains("dynprobe del"));
        assert!(plan("!vfs_read").is_err());
        assert!(plan("").is_err());
        assert!(plan("   ").is_err());
        assert!(plan("1abc x").is_err());
        assert!(plan("vfs_read@fs/read_write.c").is_err());
        assert!(plan("vfs_read;x=1").is_err());
        assert!(plan("a:b:c=vfs_read").is_err());
        assert!(plan("vfs_read%return+4").is_err());
        assert!(plan("sdt:libc:setjmp").unwrap_err().0.contains("-x BIN"));
        assert!(plan("%sdt_libc:setjmp").unwrap_err().0.contains("-x BIN"));
        assert!(plan("ev=%libc:setjmp").unwrap_err().0.contains("-x BIN"));
    }

    #[test]
    fn perf_shorthand() {
        let p = plan("vfs_read file count").unwrap();
        assert!(p.translated);
        assert_eq!(p.target, Target::Dynamic);
        assert_eq!(p.line, "f:probe/vfs_read vfs_read file count");
        assert_eq!(t("vfs_read").1, "f:probe/vfs_read vfs_read");
        assert_eq!(
            t("vfs_read%return $retval").1,
            "f:probe/vfs_read__return vfs_read%return $retval"
        );
        assert_eq!(
            t("EVENT=vfs_read file->f_pos").1,
            "f:probe/EVENT vfs_read file->f_pos"
        );
        assert_eq!(
            t("grp:ev=vfs_read pos=file->f_pos:s64").1,
            "f:grp/ev vfs_read pos=file->f_pos:s64"
        );
        assert_eq!(
            t("vfs_read+4 %di"),
            (Target::Kprobe, "p:probe/vfs_read_4 vfs_read+4 %di".into())
        );
        assert_eq!(t("vfs_read $params").1, "f:probe/vfs_read vfs_read $arg*");
        assert_eq!(
            t("devkmsg_emit.constprop.0").1,
            "f:probe/devkmsg_emit_constprop_0 devkmsg_emit.constprop.0"
        );
        // A plain name the synthetic forms do not take.
        assert_eq!(t("vfs_read file").0, Target::Dynamic);
    }

    #[test]
    fn events_named_by_lines() {
        let ev = |l: &str| defined_event(&plan(l).unwrap());
        assert_eq!(ev("p:a/b vfs_read").as_deref(), Some("a/b"));
        assert_eq!(ev("p:b vfs_read").as_deref(), Some("kprobes/b"));
        assert_eq!(ev("p:a.b vfs_read").as_deref(), Some("a/b"));
        assert_eq!(ev("f:b vfs_read").as_deref(), Some("fprobes/b"));
        assert_eq!(ev("p vfs_read"), None);
        assert_eq!(ev("p:u /bin/sh:0x10").as_deref(), Some("uprobes/u"));
        assert_eq!(ev("p:g/u /bin/sh:0x10").as_deref(), Some("g/u"));
        assert_eq!(ev("vfs_read(file)").as_deref(), Some("functions/vfs_read"));
        assert_eq!(
            ev("vfs_read(file) -> ret").as_deref(),
            Some("functions/vfs_read__exit")
        );
        assert_eq!(ev("s:lat u64 ns").as_deref(), Some("synthetic/lat"));
        assert_eq!(ev("lat u64 ns").as_deref(), Some("synthetic/lat"));
        assert_eq!(ev("vfs_read count").as_deref(), Some("probe/vfs_read"));
    }
}
