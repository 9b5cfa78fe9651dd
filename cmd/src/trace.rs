// SPDX-License-Identifier: GPL-2.0
//! `dynprobe trace`: define, enable, stream, then remove exactly what was
//! made, whatever ends the run.

use std::collections::BTreeMap;
use std::fs;
use std::io::{self, Read, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::os::unix::io::AsRawFd;
use std::path::PathBuf;
use std::process::{Child, Command};
use std::sync::atomic::{AtomicI32, Ordering};

use crate::held_child::HeldChild;
use crate::line::Planned;
use crate::tracefs::{Defined, Tracefs};

/// The signal that asked the run to stop (0: none).
static STOP: AtomicI32 = AtomicI32::new(0);

extern "C" fn on_signal(sig: libc::c_int) {
    STOP.store(sig, Ordering::SeqCst);
}

/// SIGINT, SIGTERM and SIGHUP stop the stream (and are not restarted, so a
/// wait returns); the run then cleans up.
fn catch_signals() {
    for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
        // SAFETY: a plain sigaction with a handler that only stores to an
        // atomic, which is async-signal-safe.
        unsafe {
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = on_signal as extern "C" fn(libc::c_int) as usize;
            libc::sigemptyset(&mut sa.sa_mask);
            sa.sa_flags = 0;
            libc::sigaction(sig, &sa, std::ptr::null_mut());
        }
    }
}

/// One line of `trace_pipe`, cut into its parts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceLine<'a> {
    /// The task's name.
    pub comm: &'a str,
    /// Its pid.
    pub pid: &'a str,
    /// `[NNN]`'s number.
    pub cpu: &'a str,
    /// The latency flags.
    pub flags: &'a str,
    /// The time stamp.
    pub time: &'a str,
    /// The event's name.
    pub event: &'a str,
    /// What the event prints.
    pub text: &'a str,
}

/// Cuts `  cat-123     [000] ..... 12.345678: vfs_read: (vfs_read+0x4/0x1a0) count=5`.
pub fn parse_trace_line(l: &str) -> Option<TraceLine<'_>> {
    let open = l.find(" [")?;
    let task = l[..open].trim();
    let (comm, pid) = task.rsplit_once('-')?;
    let rest = &l[open + 2..];
    let (cpu, rest) = rest.split_once(']')?;
    let rest = rest.trim_start();
    let (flags, rest) = match rest.split_once(' ') {
        // Without the latency format the flags are missing: a time stamp
        // ends in ':'.
        Some((f, r)) if !f.ends_with(':') => (f, r.trim_start()),
        _ => ("", rest),
    };
    let (time, rest) = rest.split_once(": ")?;
    let (event, text) = match rest.split_once(": ") {
        Some((e, t)) => (e, t),
        None => (rest.trim_end_matches(':'), ""),
    };
    Some(TraceLine {
        comm,
        pid,
        cpu: cpu.trim(),
        flags,
        time,
        event,
        text,
    })
}

fn json_str(s: &str) -> String {
    let mut o = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => o.push_str("\\\""),
            '\\' => o.push_str("\\\\"),
            c if (c as u32) < 0x20 => o.push_str(&format!("\\u{:04x}", c as u32)),
            c => o.push(c),
        }
    }
    o.push('"');
    o
}

/// Which of `names` (the events' names) a line of the run's own instance
/// is from: the name trace_pipe prints before the event's text, or for a
/// function event, which prints none, its function (`CALLER->FUNC(` at
/// entry, `CALLER <- FUNC(` at exit, `FUNC__exit`).
pub fn event_of<'n>(t: &TraceLine<'_>, names: &'n [String]) -> Option<&'n str> {
    if let Some(n) = names.iter().find(|n| *n == t.event) {
        return Some(n);
    }
    let whole = if t.text.is_empty() {
        t.event.to_string()
    } else {
        format!("{}: {}", t.event, t.text)
    };
    let (func, exit) = if let Some((_, rest)) = whole.split_once(" <- ") {
        (rest.split('(').next()?, true)
    } else {
        let (_, rest) = whole.split_once("->")?;
        (rest.split('(').next()?, false)
    };
    let want = format!(
        "{}{}",
        func.replace('.', "_"),
        if exit { "__exit" } else { "" }
    );
    names.iter().find(|n| **n == want).map(String::as_str)
}

/// One event as a JSON object on one line.
pub fn to_json(t: &TraceLine<'_>, names: &[String]) -> String {
    // A function event prints no name: its name, and all it printed.
    let (event, text) = match event_of(t, names) {
        Some(n) if n != t.event => (
            n,
            if t.text.is_empty() {
                t.event.to_string()
            } else {
                format!("{}: {}", t.event, t.text)
            },
        ),
        _ => (t.event, t.text.to_string()),
    };
    format!(
        "{{\"comm\":{},\"pid\":{},\"cpu\":{},\"time\":{},\"event\":{},\"text\":{}}}",
        json_str(t.comm),
        t.pid
            .parse::<u64>()
            .map_or(json_str(t.pid), |p| p.to_string()),
        t.cpu
            .parse::<u64>()
            .map_or(json_str(t.cpu), |c| c.to_string()),
        json_str(t.time),
        json_str(event),
        json_str(&text)
    )
}

/// Misses of `events` (event names) in a `kprobe_profile` text
/// (`NAME HITS MISSES` a line).
pub fn profile_misses(profile: &str, events: &[String]) -> u64 {
    profile
        .lines()
        .filter_map(|l| {
            let w: Vec<&str> = l.split_ascii_whitespace().collect();
            match w.as_slice() {
                [name, _hits, missed] if events.iter().any(|e| e == name) => {
                    missed.parse::<u64>().ok()
                }
                _ => None,
            }
        })
        .sum()
}

/// Misses of `events` in an `uprobe_profile` text (`PATH NAME HITS` a
/// line, with a fourth column `MISSES` only for a return probe with entry
/// arguments, whose saved-entry pool can run out).
pub fn uprobe_profile_misses(profile: &str, events: &[String]) -> u64 {
    profile
        .lines()
        .filter_map(|l| {
            let w: Vec<&str> = l.split_ascii_whitespace().collect();
            match w.as_slice() {
                [_path, name, _hits, missed] if events.iter().any(|e| e == name) => {
                    missed.parse::<u64>().ok()
                }
                _ => None,
            }
        })
        .sum()
}

/// Lost records in a `per_cpu/cpuN/stats` text: `overrun` and `dropped
/// events`.
pub fn stats_lost(stats: &str) -> u64 {
    stats
        .lines()
        .filter_map(|l| {
            let (k, v) = l.split_once(':')?;
            matches!(k.trim(), "overrun" | "dropped events")
                .then(|| v.trim().parse::<u64>().ok())
                .flatten()
        })
        .sum()
}

/// The summary printed at the end.
pub fn summary(seen: &BTreeMap<String, u64>, misses: u64, lost: u64) -> String {
    let total: u64 = seen.values().sum();
    let per: Vec<String> = seen.iter().map(|(e, n)| format!("{e} {n}")).collect();
    let mut s = format!(
        "dynprobe: {total} event{} seen",
        if total == 1 { "" } else { "s" }
    );
    if !per.is_empty() {
        s.push_str(&format!(" ({})", per.join(", ")));
    }
    s.push_str(&format!(
        "; {misses} missed by the probes (kprobe_profile, uprobe_profile), {lost} lost in the ring buffer (overrun)"
    ));
    s
}

/// Options of a run.
pub struct Options {
    /// The lines, planned and checked.
    pub lines: Vec<Planned>,
    /// A filter set on every event made.
    pub filter: Option<String>,
    /// JSON lines instead of trace_pipe's.
    pub json: bool,
    /// Only the records of the command and its children (`-x`).
    pub only_cmd: bool,
    /// The command to run while tracing.
    pub cmd: Vec<String>,
}

/// The command run while tracing: started as usual, or held before its
/// exec until its pid is the instance's only one.
enum Running {
    Spawned(Child),
    Held(HeldChild),
}

impl Running {
    fn kill(&mut self, sig: libc::c_int) {
        match self {
            Running::Spawned(c) => {
                if let Ok(pid) = libc::pid_t::try_from(c.id()) {
                    // SAFETY: kill(2) on the child this run started.
                    unsafe {
                        libc::kill(pid, sig);
                    }
                }
            }
            Running::Held(c) => c.kill(sig),
        }
    }

    fn wait(&mut self) {
        match self {
            Running::Spawned(c) => {
                let _ = c.wait();
            }
            Running::Held(c) => {
                c.wait();
            }
        }
    }

    /// Its exit status once it ended (1 after a signal).
    fn try_wait(&mut self) -> Option<i32> {
        match self {
            Running::Spawned(c) => match c.try_wait() {
                Ok(Some(st)) => Some(st.code().unwrap_or(1)),
                _ => None,
            },
            Running::Held(c) => c.try_wait(),
        }
    }
}

/// What a run made, to undo.
struct Made {
    events: Vec<Defined>,
    instance: Option<PathBuf>,
    enabled: Vec<PathBuf>,
    /// The top instance's directory when the pid filter was set there
    /// (no instance of its own could be made): cleared at the end.
    top_pid_filter: Option<PathBuf>,
}

fn cleanup(fs_: &Tracefs, made: &Made) -> Vec<String> {
    let mut errors = Vec::new();
    for e in made.enabled.iter().rev() {
        let _ = fs::write(e, "0");
    }
    for d in made.events.iter().rev() {
        if let Err(e) =
            crate::tracefs::append_to(&fs_.dynprobe(d.target.file()), &d.removal(), || {
                fs_.error_log()
            })
        {
            errors.push(format!("removing {}: {e}", d.event));
        }
    }
    if let Some(top) = &made.top_pid_filter {
        // An empty write truncates the list: every pid again.
        let _ = fs::write(top.join("set_event_pid"), "");
        let _ = fs::write(top.join("options/event-fork"), "0");
    }
    if let Some(i) = &made.instance {
        if let Err(e) = fs::remove_dir(i) {
            errors.push(format!("removing {}: {e}", i.display()));
        }
    }
    errors
}

/// Runs `dynprobe trace`; the exit status.
pub fn run(fs_: &Tracefs, opts: Options) -> i32 {
    catch_signals();
    let mut made = Made {
        events: Vec::new(),
        instance: None,
        enabled: Vec::new(),
        top_pid_filter: None,
    };
    let status = stream(fs_, &opts, &mut made);
    let errors = cleanup(fs_, &made);
    for e in &errors {
        eprint!("dynprobe: {e}");
        if !e.ends_with('\n') {
            eprintln!();
        }
    }
    let left: Vec<String> = fs_
        .defined()
        .into_iter()
        .filter(|d| made.events.iter().any(|m| m.event == d.event))
        .map(|d| d.event)
        .collect();
    if !left.is_empty() {
        eprintln!("dynprobe: still defined: {}", left.join(" "));
        return 1;
    }
    if errors.is_empty() {
        status
    } else {
        1
    }
}

fn stream(fs_: &Tracefs, opts: &Options, made: &mut Made) -> i32 {
    // Define, one line at a time: what each line made is what the
    // listings gained.
    for p in &opts.lines {
        let before = fs_.defined();
        let res = fs_.append(p);
        let after = fs_.defined();
        for d in after {
            if !before.iter().any(|b| b.event == d.event) {
                made.events.push(d);
            }
        }
        if let Err(e) = res {
            eprint!("{e}");
            return 1;
        }
        if STOP.load(Ordering::SeqCst) != 0 {
            return 130;
        }
    }
    // A private buffer: other users' events do not mix in, and its stats
    // count only ours.
    let inst = fs_
        .root
        .join("instances")
        .join(format!("dynprobe-{}", std::process::id()));
    let base = match fs::create_dir(&inst) {
        Ok(()) => {
            made.instance = Some(inst.clone());
            inst
        }
        Err(_) => fs_.root.clone(),
    };
    let names: Vec<String> = made
        .events
        .iter()
        .map(|d| d.event.rsplit('/').next().unwrap_or(&d.event).to_string())
        .collect();
    // Our own reads (of trace_pipe, of the listings) are not traced:
    // on vfs_read they would feed themselves.
    let own_pid = std::process::id().to_string();
    let _ = fs::write(base.join("set_event_notrace_pid"), &own_pid);
    // With -x, CMD's records and its children's only: CMD is forked held
    // before its exec, its pid made the instance's only one (with
    // event-fork, its children join as they fork), then released once
    // the events are enabled.
    let mut child: Option<Running> = None;
    if opts.only_cmd && !opts.cmd.is_empty() {
        let held = match HeldChild::start(&opts.cmd) {
            Ok(c) => c,
            Err(e) => {
                eprintln!("dynprobe: {}: {e}", opts.cmd[0]);
                return 127;
            }
        };
        if made.instance.is_none() {
            made.top_pid_filter = Some(base.clone());
        }
        for (file, value) in [
            ("options/event-fork", "1".to_string()),
            ("set_event_pid", held.pid.to_string()),
        ] {
            if let Err(e) = fs::write(base.join(file), &value) {
                eprintln!("dynprobe: {}: {e}", base.join(file).display());
                return 1;
            }
        }
        child = Some(Running::Held(held));
    }
    for d in &made.events {
        let dir = base.join("events").join(&d.event);
        if let Some(f) = &opts.filter {
            if let Err(e) = fs::write(dir.join("filter"), f) {
                eprintln!("dynprobe: filter `{f}` on {}: {e}", d.event);
                let entry = fs_.error_log();
                let last = crate::tracefs::new_entry("\u{0}", &entry);
                eprint!("{last}");
                return 1;
            }
        }
        let enable = dir.join("enable");
        if let Err(e) = fs::write(&enable, "1") {
            eprintln!("dynprobe: enabling {}: {e}", d.event);
            return 1;
        }
        made.enabled.push(enable);
    }
    if made.events.is_empty() {
        eprintln!("dynprobe: the lines defined no event");
        return 1;
    }
    let pipe = match fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(base.join("trace_pipe"))
    {
        Ok(f) => f,
        Err(e) => {
            eprintln!("dynprobe: {}: {e}", base.join("trace_pipe").display());
            return 1;
        }
    };
    eprintln!(
        "dynprobe: tracing {}{}",
        made.events
            .iter()
            .map(|d| d.event.as_str())
            .collect::<Vec<_>>()
            .join(" "),
        if opts.cmd.is_empty() {
            "; Ctrl-C stops"
        } else {
            ""
        }
    );
    match &mut child {
        Some(Running::Held(c)) => {
            if let Err(e) = c.release() {
                eprintln!("dynprobe: {}: {e}", opts.cmd[0]);
                return 127;
            }
        }
        Some(Running::Spawned(_)) => {}
        None if !opts.cmd.is_empty() => {
            match Command::new(&opts.cmd[0]).args(&opts.cmd[1..]).spawn() {
                Ok(c) => child = Some(Running::Spawned(c)),
                Err(e) => {
                    eprintln!("dynprobe: {}: {e}", opts.cmd[0]);
                    return 127;
                }
            }
        }
        None => {}
    }
    let mut seen: BTreeMap<String, u64> = BTreeMap::new();
    let mut pending = Vec::new();
    let mut status = 0;
    let mut out = io::stdout().lock();
    let mut draining = 0;
    loop {
        let mut pfd = libc::pollfd {
            fd: pipe.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd for the duration of the call.
        let n = unsafe { libc::poll(&mut pfd, 1, 100) };
        let mut got = false;
        if n > 0 {
            let mut buf = [0u8; 65536];
            match (&pipe).read(&mut buf) {
                Ok(k) if k > 0 => {
                    got = true;
                    pending.extend_from_slice(&buf[..k]);
                }
                _ => {}
            }
        }
        while let Some(nl) = pending.iter().position(|&c| c == b'\n') {
            let l: Vec<u8> = pending.drain(..=nl).collect();
            let l = String::from_utf8_lossy(&l[..l.len() - 1]).into_owned();
            let parsed = parse_trace_line(&l);
            if let Some(t) = &parsed {
                if t.pid == own_pid {
                    // Our own reads of trace_pipe, should the pid filter
                    // not hold them back.
                    continue;
                }
                if let Some(n) = event_of(t, &names) {
                    *seen.entry(n.to_string()).or_default() += 1;
                }
            }
            let _ = match (&parsed, opts.json) {
                (Some(t), true) => writeln!(out, "{}", to_json(t, &names)),
                _ => writeln!(out, "{l}"),
            };
        }
        let _ = out.flush();
        if draining > 0 {
            // After the end, what the buffer still holds.
            if !got {
                draining -= 1;
                if draining == 0 {
                    break;
                }
            }
            continue;
        }
        if let Some(sig) = nonzero(STOP.load(Ordering::SeqCst)) {
            status = 128 + sig;
            if let Some(c) = &mut child {
                // The signal goes on to CMD (Ctrl-C reached it already,
                // a kill(1) did not); its end is waited for.
                c.kill(sig);
                c.wait();
            }
            draining = 3;
            continue;
        }
        if let Some(c) = &mut child {
            if let Some(code) = c.try_wait() {
                status = code;
                draining = 3;
            }
        }
    }
    // Disable before counting, so that the numbers stop.
    for e in made.enabled.iter().rev() {
        let _ = fs::write(e, "0");
    }
    let misses = profile_misses(
        &fs::read_to_string(fs_.dynprobe("kprobe_profile")).unwrap_or_default(),
        &names,
    ) + uprobe_profile_misses(
        &fs::read_to_string(fs_.dynprobe("uprobe_profile")).unwrap_or_default(),
        &names,
    );
    let mut lost = 0;
    if let Ok(cpus) = fs::read_dir(base.join("per_cpu")) {
        for c in cpus.flatten() {
            lost += stats_lost(&fs::read_to_string(c.path().join("stats")).unwrap_or_default());
        }
    }
    for n in &names {
        seen.entry(n.clone()).or_default();
    }
    eprintln!("{}", summary(&seen, misses, lost));
    status
}

fn nonzero(v: i32) -> Option<i32> {
    (v != 0).then_some(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trace_lines() {
        let t = parse_trace_line(
            "             cat-123     [000] ..... 12.345678: vfs_read: (ksys_read+0x6b/0xf0 <- vfs_read) count=5",
        )
        .unwrap();
        assert_eq!(
            (t.comm, t.pid, t.cpu, t.flags, t.time, t.event),
            ("cat", "123", "000", ".....", "12.345678", "vfs_read")
        );
        assert_eq!(t.text, "(ksys_read+0x6b/0xf0 <- vfs_read) count=5");
        let t = parse_trace_line("  kworker/0:1-H-42 [001] d..1. 1.000000: lat: ns=5").unwrap();
        assert_eq!((t.comm, t.pid, t.event), ("kworker/0:1-H", "42", "lat"));
        let t = parse_trace_line("  sh-1 [002] 5.5: ev: x").unwrap();
        assert_eq!((t.flags, t.time, t.event), ("", "5.5", "ev"));
        assert!(parse_trace_line("CPU:0 [LOST 5 EVENTS]").is_none());
        let names = vec![
            "vfs_read".to_string(),
            "vfs_read__exit".to_string(),
            "lat".to_string(),
        ];
        let ev = |l: &str| event_of(&parse_trace_line(l).unwrap(), &names).map(str::to_string);
        assert_eq!(
            ev("  cat-145 [000] ..... 10.03: ksys_read->vfs_read(file=ff18, count=832)").as_deref(),
            Some("vfs_read")
        );
        assert_eq!(
            ev("  cat-145 [000] ..... 10.03: ksys_read <- vfs_read(file=ff18) ret=5").as_deref(),
            Some("vfs_read__exit")
        );
        assert_eq!(ev("  sh-1 [002] 5.5: lat: ns=5").as_deref(), Some("lat"));
        assert_eq!(ev("  sh-1 [002] 5.5: other: ns=5"), None);
        assert_eq!(ev("  sh-1 [002] 5.5: a->vfs_write(x=1)"), None);
        let f = parse_trace_line("  cat-1 [000] ..... 1.5: ksys_read->vfs_read(count=8)").unwrap();
        assert_eq!(
            to_json(&f, &names),
            r#"{"comm":"cat","pid":1,"cpu":0,"time":"1.5","event":"vfs_read","text":"ksys_read->vfs_read(count=8)"}"#
        );
        assert_eq!(
            to_json(&t, &[]),
            r#"{"comm":"sh","pid":1,"cpu":2,"time":"5.5","event":"ev","text":"x"}"#
        );
        let t = parse_trace_line("  a\"b-1 [0] 1.0: e: q=\"x\\y\"").unwrap();
        assert!(to_json(&t, &[]).contains(r#""comm":"a\"b""#));
        assert!(to_json(&t, &[]).contains(r#""text":"q=\"x\\y\"""#));
    }

    #[test]
    fn summary_arithmetic() {
        let profile = "  vfs_read                                     12               3\n  \
                       other                                         5               9\n  \
                       vfs_read__return                              7               2\n";
        let ev = vec!["vfs_read".to_string(), "vfs_read__return".to_string()];
        assert_eq!(profile_misses(profile, &ev), 5);
        assert_eq!(profile_misses(profile, &[]), 0);
        let uprofile = "  /bin/w f                                              4\n  \
                        /bin/w f__return                                      4               6\n  \
                        /bin/w other                                          1               2\n";
        let uev = vec!["f".to_string(), "f__return".to_string()];
        assert_eq!(uprobe_profile_misses(uprofile, &uev), 6);
        // A kprobe_profile line is no uprobe_profile line.
        assert_eq!(uprobe_profile_misses(profile, &ev), 0);
        let stats = "entries: 3\noverrun: 4\ncommit overrun: 0\nbytes: 10\noldest event ts: 1.0\nnow ts: 2.0\ndropped events: 1\nread events: 3\n";
        assert_eq!(stats_lost(stats), 5);
        let mut seen = BTreeMap::new();
        seen.insert("vfs_read".to_string(), 2);
        seen.insert("vfs_read__return".to_string(), 1);
        assert_eq!(
            summary(&seen, 5, 5),
            "dynprobe: 3 events seen (vfs_read 2, vfs_read__return 1); 5 missed by the probes (kprobe_profile, uprobe_profile), 5 lost in the ring buffer (overrun)"
        );
        let mut one = BTreeMap::new();
        one.insert("e".to_string(), 1);
        assert!(summary(&one, 0, 0).starts_with("dynprobe: 1 event seen (e 1);"));
    }
}
