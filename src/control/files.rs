// SPDX-License-Identifier: GPL-2.0

//! tracefs `dynprobe/`: the directory, its nine files and how their
//! `open()` and `write()` reach the control files' behaviour
//! (src/control/mod.rs).

use kernel::prelude::*;

use crate::control::FileId;
use crate::control::{self, Snapshot};
use crate::sys::bindings as b;
use crate::sys::printk;
use crate::sys::tracefs::{Dir, FileOperations, OpenMode, TracefsFile, UserInput};

/// The files, in the order they are created, with their permissions.
const FILES: [(FileId, &CStr, u16); FileId::ALL.len()] = [
    (FileId::FunctionEvents, c"function_events", 0o640),
    (FileId::KprobeEvents, c"kprobe_events", 0o640),
    (FileId::DynamicEvents, c"dynamic_events", 0o640),
    (FileId::KprobeProfile, c"kprobe_profile", 0o440),
    (FileId::Readme, c"README", 0o440),
    (FileId::SyntheticEvents, c"synthetic_events", 0o640),
    (FileId::FetchPrograms, c"fetch_programs", 0o440),
    (FileId::UprobeEvents, c"uprobe_events", 0o640),
    (FileId::UprobeProfile, c"uprobe_profile", 0o440),
];

/// The longest line a control file takes, as the kernel's probe event
/// files: a write is run in pieces of one more byte, so that a piece that
/// holds no end of line tells a line too long.
const MAX_LINE: usize = b::DYNPROBE_MAX_LINE as usize;

/// The longest write read into a buffer on the stack.
const SHORT_WRITE: usize = 256;

/// A control file; its file number is its `FileId`.
struct ControlFile;

/// An open control file: the snapshot `read()` serves, if opened for
/// reading.
struct OpenControl {
    snapshot: Option<KBox<Snapshot>>,
}

fn kind(id: usize) -> Result<FileId> {
    // Only the numbers of `FILES` are given to tracefs.
    FileId::from_number(id).ok_or(EINVAL)
}

impl TracefsFile for ControlFile {
    type Open = OpenControl;

    /// Refused under lockdown (`LOCKDOWN_TRACEFS`, confidentiality), as
    /// the kernel's tracefs files refuse to open, before anything else.
    fn open(id: usize, mode: OpenMode) -> Result<OpenControl> {
        // SAFETY: asks the security modules; no argument.
        kernel::error::to_result(unsafe { b::dynprobe_lockdown_tracefs() })?;
        let snapshot = control::open(kind(id)?, mode.truncate, mode.read)?;
        Ok(OpenControl { snapshot })
    }

    fn contents(open: &OpenControl) -> &[u8] {
        open.snapshot.as_deref().map_or(&[], |s| s.as_slice())
    }

    /// Hands the write to the control files in pieces of at most
    /// `MAX_LINE + 1` bytes, as the kernel's probe event files read it,
    /// each piece starting at a line: `control::write` runs its lines and
    /// says how far it got. The first failing line ends the write with its
    /// error while the lines before it stay applied.
    fn write(id: usize, input: &UserInput) -> Result<usize> {
        let count = input.len();
        // A short write (a removal line) is read on the stack: removing
        // an event needs no memory.
        let mut short = [0u8; SHORT_WRITE];
        let mut long;
        let buf: &mut [u8] = if count <= SHORT_WRITE {
            &mut short
        } else {
            long = KVec::from_elem(0u8, MAX_LINE + 1, GFP_KERNEL)?;
            &mut long
        };
        let mut done = 0;
        while done < count {
            let chunk = (count - done).min(MAX_LINE + 1);
            let piece = buf.get_mut(..chunk).ok_or(EINVAL)?;
            input.read_at(done, piece)?;
            let ran = control::write(kind(id)?, piece, done + chunk == count)?;
            if ran == 0 {
                printk::print_int(
                    c"\x014Line length is too long: Should be less than %d\n",
                    b::DYNPROBE_MAX_LINE as i32,
                );
                return Err(EINVAL);
            }
            done += ran;
        }
        Ok(done)
    }
}

static CONTROL_FOPS: FileOperations<ControlFile> =
    FileOperations::new(crate::compat::this_module());

/// tracefs `dynprobe/` with its files; dropping it removes them.
pub(crate) struct ControlFiles {
    _dir: Dir,
}

impl ControlFiles {
    /// Creates `dynprobe/` and its files, saying in dmesg which one failed.
    pub(crate) fn create() -> Result<Self> {
        let Some(dir) = Dir::create(c"dynprobe") else {
            printk::print(c"\x013cannot create tracefs directory dynprobe/\n");
            return Err(ENODEV);
        };
        for (file, name, mode) in FILES {
            // Dropping `dir` on failure removes the files made so far.
            dir.create_file(name, mode, file.number(), &CONTROL_FOPS)
                .ok_or_else(|| {
                    printk::print_str(c"\x013cannot create tracefs file dynprobe/%s\n", name);
                    ENODEV
                })?;
        }
        Ok(ControlFiles { _dir: dir })
    }
}
