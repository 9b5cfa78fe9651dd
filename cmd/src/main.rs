// SPDX-License-Identifier: GPL-2.0
//! `dynprobe`: see `dynprobe --help` and README.md.

use dynprobe_cmd::{parse_args, run, Cmd};

fn main() {
    // A bug says so in one line, never with a backtrace.
    std::panic::set_hook(Box::new(|info| {
        eprintln!("dynprobe: internal error: {info}");
    }));
    let args: Vec<String> = std::env::args().skip(1).collect();
    let cmd = match parse_args(&args) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("dynprobe: {e} (dynprobe --help)");
            std::process::exit(2);
        }
    };
    if !matches!(cmd, Cmd::Trace { .. }) {
        // `dynprobe list | head` ends quietly; `trace` must live to clean
        // up and ignores write errors instead.
        // SAFETY: restores the default disposition of one signal.
        unsafe {
            libc::signal(libc::SIGPIPE, libc::SIG_DFL);
        }
    }
    std::process::exit(run(cmd));
}
