// SPDX-License-Identifier: GPL-2.0
//! The generated completions at work: bash sources the bash script and
//! completes words through the function it registers, with the built
//! `dynprobe` on PATH and a tracing directory of its own
//! (DYNPROBE_TRACEFS); zsh and fish scripts are checked for their
//! run-time part, and by `zsh -n` where zsh is installed.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use clap_complete::Shell;
use dynprobe_cmd::docs::completion;

/// A directory for one test: the bash script, `bin/dynprobe` and a
/// tracing directory with dynprobe's files.
struct Setup {
    dir: PathBuf,
}

impl Setup {
    fn new(name: &str) -> Setup {
        let dir = std::env::temp_dir().join(format!("dynprobe-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        let bin = dir.join("bin");
        let tracing = dir.join("tracing");
        fs::create_dir_all(&bin).unwrap();
        fs::create_dir_all(tracing.join("dynprobe")).unwrap();
        std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_dynprobe"), bin.join("dynprobe")).unwrap();
        fs::write(dir.join("dynprobe.bash"), completion(Shell::Bash)).unwrap();
        fs::write(
            tracing.join("available_filter_functions"),
            "vfs_write\nvfs_read\nvfs_readv [kvm]\nvfs_read\nksys_read\n",
        )
        .unwrap();
        let dp = |f: &str, text: &str| fs::write(tracing.join("dynprobe").join(f), text).unwrap();
        dp("kprobe_events", "p:demo/open do_sys_openat2\n");
        dp("function_events", "vfs_read(x64 file) -> s64 ret\n");
        dp("synthetic_events", "lat\tu64 ns\n");
        dp(
            "dynamic_events",
            "p:demo/open do_sys_openat2\nf:probe/vfs_read vfs_read file\n",
        );
        Setup { dir }
    }

    /// What bash completes for `words` (the last one being completed),
    /// through the function `complete -p dynprobe` names, with the
    /// tracing directory `tracing`.
    fn complete_in(&self, tracing: &Path, words: &[&str]) -> Vec<String> {
        // compopt works only inside a completion bash itself runs (clap's
        // script calls it for file values such as -x's).
        let script = r#"
            compopt() { :; }
            source "$1"
            shift
            COMP_WORDS=("$@")
            COMP_CWORD=$(($# - 1))
            COMP_LINE="$*"
            COMP_POINT=${#COMP_LINE}
            spec=$(complete -p dynprobe)
            func=${spec#*-F }
            func=${func%% *}
            "$func" dynprobe "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
            printf '%s\n' "${COMPREPLY[@]}"
        "#;
        let path = format!(
            "{}:{}",
            self.dir.join("bin").display(),
            std::env::var("PATH").unwrap_or_default()
        );
        let out = Command::new("bash")
            .arg("-c")
            .arg(script)
            .arg("bash")
            .arg(self.dir.join("dynprobe.bash"))
            .args(words)
            .env("PATH", path)
            .env("DYNPROBE_TRACEFS", tracing)
            .output()
            .expect("bash runs");
        assert!(out.status.success(), "{words:?}: {out:?}");
        assert_eq!(String::from_utf8_lossy(&out.stderr), "", "{words:?}");
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter(|l| !l.is_empty())
            .map(str::to_string)
            .collect()
    }

    fn complete(&self, words: &[&str]) -> Vec<String> {
        self.complete_in(&self.dir.join("tracing"), words)
    }
}

impl Drop for Setup {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.dir);
    }
}

#[test]
fn bash_script_parses() {
    let s = Setup::new("bash-n");
    let out = Command::new("bash")
        .arg("-n")
        .arg(s.dir.join("dynprobe.bash"))
        .output()
        .expect("bash runs");
    assert!(out.status.success(), "{out:?}");
}

#[test]
fn bash_completes_run_time_values() {
    let s = Setup::new("bash-values");
    // Function names, each once, sorted.
    assert_eq!(
        s.complete(&["dynprobe", "add", "vfs_r"]),
        ["vfs_read", "vfs_readv"]
    );
    assert_eq!(s.complete(&["dynprobe", "list", "-v", "ks"]), ["ksys_read"]);
    assert_eq!(
        s.complete(&["dynprobe", "trace", "--json", "vfs_w"]),
        ["vfs_write"]
    );
    // dynprobe's events as `del` names them, with clap's options.
    let del = s.complete(&["dynprobe", "del", ""]);
    for e in [
        "demo/open",
        "functions/vfs_read__exit",
        "synthetic/lat",
        "probe/vfs_read",
        "--dry-run",
    ] {
        assert!(del.contains(&e.to_string()), "{e} not in {del:?}");
    }
    assert_eq!(
        s.complete(&["dynprobe", "del", "functions/"]),
        ["functions/vfs_read__exit"]
    );
    // Options come from clap alone.
    assert_eq!(
        s.complete(&["dynprobe", "trace", "--"]),
        [
            "--filter",
            "--json",
            "--no-check",
            "--exec",
            "--debuginfo",
            "--source",
            "--module",
            "--help"
        ]
    );
    assert_eq!(s.complete(&["dynprobe", "del", "--d"]), ["--dry-run"]);
    // No function names for the filter's expression.
    assert!(!s
        .complete(&["dynprobe", "trace", "--filter", "vfs"])
        .iter()
        .any(|w| w.starts_with("vfs")));
    // The command after `trace ... --`; its arguments are bash's default.
    assert!(s
        .complete(&["dynprobe", "trace", "vfs_read", "--", "bas"])
        .contains(&"bash".to_string()));
    assert_eq!(
        s.complete(&["dynprobe", "trace", "vfs_read", "--", "cat", "vfs"]),
        Vec::<String>::new()
    );
    // Subcommands, without the hidden one.
    let subs = s.complete(&["dynprobe", ""]);
    assert!(subs.contains(&"trace".to_string()), "{subs:?}");
    assert!(!subs.iter().any(|w| w.contains("complete")), "{subs:?}");
    let help = s.complete(&["dynprobe", "help", "tr"]);
    assert_eq!(help, ["trace"]);
}

/// `dynprobe __complete` itself: any prefix, nothing on stderr, status
/// 0, also without tracefs.
#[test]
fn complete_subcommand_is_quiet() {
    let s = Setup::new("quiet");
    let run = |tracing: &Path, args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_dynprobe"))
            .arg("__complete")
            .args(args)
            .env("DYNPROBE_TRACEFS", tracing)
            .output()
            .expect("dynprobe runs");
        assert!(out.status.success(), "{args:?}: {out:?}");
        assert_eq!(String::from_utf8_lossy(&out.stderr), "", "{args:?}");
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let tracing = s.dir.join("tracing");
    assert_eq!(
        run(&tracing, &["functions", "vfs_r"]),
        "vfs_read\nvfs_readv\n"
    );
    assert_eq!(run(&tracing, &["events", "probe/"]), "probe/vfs_read\n");
    assert_eq!(run(&tracing, &["events", "--help"]), "");
    let none = Path::new("/nonexistent/tracing");
    assert_eq!(run(none, &["functions", ""]), "");
    assert_eq!(run(none, &["events"]), "");
}

/// After `-x BIN` (`--exec BIN`, `--exec=BIN`, `-xBIN`), the names are
/// BIN's functions and markers, not the kernel's functions; BIN itself is
/// completed as a file, without names.
#[test]
fn bash_completes_binary_functions() {
    let s = Setup::new("bash-exec");
    let bin = env!("CARGO_BIN_EXE_dynprobe");
    let exec_eq = format!("-x{bin}");
    for words in [
        vec!["dynprobe", "add", "-x", bin, "mai"],
        vec!["dynprobe", "trace", "--exec", bin, "mai"],
        vec!["dynprobe", "check", "--exec", "=", bin, "mai"],
        vec!["dynprobe", "list", &exec_eq, "mai"],
    ] {
        let got = s.complete(&words);
        assert!(got.contains(&"main".to_string()), "{words:?}: {got:?}");
        assert!(
            got.iter().all(|w| w.starts_with("mai")),
            "{words:?}: {got:?}"
        );
    }
    // The kernel's functions are not BIN's.
    assert!(s
        .complete(&["dynprobe", "add", "-x", bin, "vfs"])
        .is_empty());
    // SDT markers as `-x BIN` takes them (Debian's python3 has them).
    let py = s.complete(&["dynprobe", "add", "-x", "/usr/bin/python3", "sdt:python:gc"]);
    assert!(py.contains(&"sdt:python:gc__start".to_string()), "{py:?}");
    // No function names for BIN itself.
    let own = s.complete(&["dynprobe", "add", "-x", "vfs"]);
    assert!(!own.iter().any(|w| w == "vfs_read"), "{own:?}");
    // A BIN that is no ELF file: nothing, quietly.
    assert!(s
        .complete(&["dynprobe", "add", "-x", "/proc/self/status", "m"])
        .is_empty());
}

#[test]
fn bash_completes_quietly_without_tracefs() {
    let s = Setup::new("bash-none");
    let none = Path::new("/nonexistent/tracing");
    assert_eq!(
        s.complete_in(none, &["dynprobe", "add", "vfs"]),
        Vec::<String>::new()
    );
    assert_eq!(
        s.complete_in(none, &["dynprobe", "del", "--"]),
        ["--dry-run", "--help"]
    );
}

#[test]
fn zsh_and_fish_scripts_add_the_values() {
    let zsh = completion(Shell::Zsh);
    // The wrapper is what zsh calls, not clap's function.
    assert!(zsh.contains("compdef _dynprobe_values dynprobe"));
    assert!(!zsh.contains("compdef _dynprobe dynprobe"));
    assert!(zsh.trim_end().ends_with("_dynprobe_values \"$@\"\nfi"));
    let fish = completion(Shell::Fish);
    assert!(zsh.contains("dynprobe __complete $what $exec \"$PREFIX\""));
    assert!(
        fish.contains("(dynprobe __complete functions (__fish_dynprobe_exec) (commandline -ct)")
    );
    assert!(fish.contains("function __fish_dynprobe_exec"));
    assert!(fish.contains("(dynprobe __complete events (commandline -ct)"));
    assert!(fish.contains("__fish_complete_command"));
    assert!(fish.contains("using_subcommand help\" -f -a \"list add del show check trace"));
    let s = Setup::new("zsh-n");
    let path = s.dir.join("_dynprobe");
    fs::write(&path, zsh).unwrap();
    // Only where zsh is installed.
    if let Ok(out) = Command::new("zsh").arg("-n").arg(&path).output() {
        assert!(out.status.success(), "{out:?}");
    }
}
