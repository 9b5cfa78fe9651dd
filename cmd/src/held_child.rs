// SPDX-License-Identifier: GPL-2.0
//! A command started held: forked, and waiting before its exec until it
//! is released, so that its pid can be put in a trace instance's
//! `set_event_pid` before it runs a single instruction of its own.
//! `std::process::Command::spawn` returns only once the exec happened,
//! too late for that.

use std::ffi::CString;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStringExt;
use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;

/// A forked command, held before its exec until [`HeldChild::release`].
pub struct HeldChild {
    /// Its pid.
    pub pid: libc::pid_t,
    /// The writing end the child waits on; `None` once released.
    gate: Option<OwnedFd>,
    /// The reading end of the pipe the child reports a failed exec on
    /// (its errno); closed by a successful exec.
    exec_error: OwnedFd,
    /// Whether the child was waited for.
    reaped: bool,
}

fn pipe() -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0 as libc::c_int; 2];
    // SAFETY: pipe2(2) fills two descriptors into an array of two.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: both descriptors are new and owned by nothing else.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

/// Runs in the child between fork and exec: only async-signal-safe
/// calls, on memory prepared before the fork. Never returns.
fn held_exec(
    gate: libc::c_int,
    parents: [libc::c_int; 2],
    report: libc::c_int,
    program: *const libc::c_char,
    argv: &[*const libc::c_char],
) -> ! {
    // The parent's ends: the gate's writing end must close here too for
    // a closed gate to read as the end.
    for fd in parents {
        // SAFETY: close(2) of this process's copy of a descriptor.
        unsafe { libc::close(fd) };
    }
    let mut byte = 0u8;
    loop {
        // SAFETY: read(2) of one byte into a local.
        let n = unsafe { libc::read(gate, (&mut byte as *mut u8).cast(), 1) };
        if n == 1 {
            break;
        }
        if n < 0 && io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) {
            continue;
        }
        // The gate closed without a release: the run gave up.
        // SAFETY: _exit(2) ends the forked child without running the
        // parent's atexit handlers or flushing its buffers.
        unsafe { libc::_exit(127) };
    }
    // Rust ignores SIGPIPE; an ignored signal stays ignored across exec,
    // and CMD expects the default (as Command::spawn gives it).
    // SAFETY: signal(2) restores the default disposition of one signal.
    unsafe { libc::signal(libc::SIGPIPE, libc::SIG_DFL) };
    // SAFETY: program and argv (NULL-terminated) point to C strings that
    // live in this process's copy of the parent's memory.
    unsafe { libc::execv(program, argv.as_ptr()) };
    let errno = io::Error::last_os_error().raw_os_error().unwrap_or(0);
    let bytes = errno.to_ne_bytes();
    // SAFETY: write(2) of four bytes from a local, then _exit(2).
    unsafe {
        libc::write(report, bytes.as_ptr().cast(), bytes.len());
        libc::_exit(127)
    }
}

/// The file `name` runs: itself when it has a `/`, else the first
/// executable file of that name in PATH's directories, looked up here
/// rather than by execvp(3) in the child, whose getenv("PATH") and tries
/// would be the command's first records.
fn program_path(name: &str) -> io::Result<PathBuf> {
    if name.contains('/') {
        return Ok(PathBuf::from(name));
    }
    let path = std::env::var_os("PATH").unwrap_or_else(|| "/usr/bin:/bin".into());
    for dir in std::env::split_paths(&path) {
        let candidate = dir.join(name);
        if let Ok(m) = std::fs::metadata(&candidate) {
            if m.is_file() && m.permissions().mode() & 0o111 != 0 {
                return Ok(candidate);
            }
        }
    }
    Err(io::Error::from_raw_os_error(libc::ENOENT))
}

impl HeldChild {
    /// Forks `cmd` (a program looked up in PATH, and its arguments),
    /// held before its exec.
    pub fn start(cmd: &[String]) -> io::Result<HeldChild> {
        let args: Vec<CString> = cmd
            .iter()
            .map(|a| CString::new(a.as_bytes()))
            .collect::<Result<_, _>>()
            .map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
        if args.is_empty() {
            return Err(io::Error::from(io::ErrorKind::InvalidInput));
        }
        let program = CString::new(program_path(&cmd[0])?.into_os_string().into_vec())
            .map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
        let mut argv: Vec<*const libc::c_char> = args.iter().map(|a| a.as_ptr()).collect();
        argv.push(std::ptr::null());
        let (gate_read, gate_write) = pipe()?;
        let (error_read, error_write) = pipe()?;
        // SAFETY: the child runs only close, read, signal, execv, write
        // and _exit (held_exec), on memory prepared before the fork, which
        // holds whatever another thread had locked at the fork.
        let pid = unsafe { libc::fork() };
        if pid < 0 {
            return Err(io::Error::last_os_error());
        }
        if pid == 0 {
            held_exec(
                gate_read.as_raw_fd(),
                [gate_write.as_raw_fd(), error_read.as_raw_fd()],
                error_write.as_raw_fd(),
                program.as_ptr(),
                &argv,
            );
        }
        drop(gate_read);
        drop(error_write);
        Ok(HeldChild {
            pid,
            gate: Some(gate_write),
            exec_error: error_read,
            reaped: false,
        })
    }

    /// Lets the child exec; the exec's error when it failed (the child
    /// has then exited, status 127).
    pub fn release(&mut self) -> io::Result<()> {
        let Some(gate) = self.gate.take() else {
            return Ok(());
        };
        // SAFETY: write(2) of one byte from a static to a pipe we own.
        let n = unsafe { libc::write(gate.as_raw_fd(), b"x".as_ptr().cast(), 1) };
        if n != 1 {
            return Err(io::Error::last_os_error());
        }
        drop(gate);
        let mut bytes = [0u8; 4];
        let mut got = 0;
        while got < bytes.len() {
            // SAFETY: read(2) into the rest of a local array.
            let n = unsafe {
                libc::read(
                    self.exec_error.as_raw_fd(),
                    bytes[got..].as_mut_ptr().cast(),
                    bytes.len() - got,
                )
            };
            if n < 0 && io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) {
                continue;
            }
            if n <= 0 {
                break;
            }
            got += n as usize;
        }
        if got == bytes.len() {
            self.wait();
            return Err(io::Error::from_raw_os_error(i32::from_ne_bytes(bytes)));
        }
        Ok(())
    }

    /// Its exit status when it has ended (1 when a signal ended it), or
    /// `None` while it runs.
    pub fn try_wait(&mut self) -> Option<i32> {
        self.wait_with(libc::WNOHANG)
    }

    /// Waits for its end; its exit status as [`HeldChild::try_wait`]
    /// gives it.
    pub fn wait(&mut self) -> Option<i32> {
        self.wait_with(0)
    }

    fn wait_with(&mut self, flags: libc::c_int) -> Option<i32> {
        if self.reaped {
            return None;
        }
        let mut status = 0;
        loop {
            // SAFETY: waitpid(2) on our own child, into a local.
            let r = unsafe { libc::waitpid(self.pid, &mut status, flags) };
            if r < 0 && io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) {
                if flags == 0 {
                    continue;
                }
                return None;
            }
            if r != self.pid {
                return None;
            }
            break;
        }
        self.reaped = true;
        Some(if libc::WIFEXITED(status) {
            libc::WEXITSTATUS(status)
        } else {
            1
        })
    }

    /// Sends it `sig`.
    pub fn kill(&self, sig: libc::c_int) {
        if !self.reaped {
            // SAFETY: kill(2) on our own child, not yet waited for.
            unsafe {
                libc::kill(self.pid, sig);
            }
        }
    }
}

impl Drop for HeldChild {
    /// A child never released exits at the closed gate; it is waited for.
    fn drop(&mut self) {
        if self.gate.take().is_some() {
            self.wait();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_only_when_released() {
        let dir = std::env::temp_dir().join(format!("dynprobe-held-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let mark = dir.join("ran");
        let script = format!("touch {}; exit 3", mark.display());
        let mut c = HeldChild::start(&["sh".into(), "-c".into(), script]).unwrap();
        std::thread::sleep(std::time::Duration::from_millis(100));
        assert!(!mark.exists());
        assert_eq!(c.try_wait(), None);
        c.release().unwrap();
        assert_eq!(c.wait(), Some(3));
        assert!(mark.exists());
        std::fs::remove_dir_all(&dir).ok();
    }

    #[test]
    fn never_released_never_runs() {
        let c = HeldChild::start(&["true".into()]).unwrap();
        drop(c);
        let mut c = HeldChild::start(&["/nonexistent/cmd".into()]).unwrap();
        let e = c.release().unwrap_err();
        assert_eq!(e.raw_os_error(), Some(libc::ENOENT));
        let e = HeldChild::start(&["no-such-command-here".into()])
            .err()
            .unwrap();
        assert_eq!(e.raw_os_error(), Some(libc::ENOENT));
    }
}
