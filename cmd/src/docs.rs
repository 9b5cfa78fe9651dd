// SPDX-License-Identifier: GPL-2.0
//! The completions (bash, zsh, fish) and the `dynprobe(8)` man page,
//! made from the command line's definition (cli.rs), the completions
//! with a few lines of shell for the values only the running system
//! knows (complete.rs); the
//! `dynprobe-docs` binary writes them where `make install-command` takes
//! them from.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use clap::{Arg, Command};
use clap_complete::Shell;
use clap_mangen::roff::{bold, roman, Roff};
use clap_mangen::Man;

use crate::cli;

/// Each file made, by its path under `share/`.
pub const FILES: [&str; 4] = [
    "bash-completion/completions/dynprobe",
    "zsh/vendor-completions/_dynprobe",
    "fish/vendor_completions.d/dynprobe.fish",
    "man/man8/dynprobe.8",
];

/// What each shell's script adds to clap's, for the words that are no
/// option: the values of `dynprobe __complete` (complete.rs). Options
/// and subcommands stay clap's.
const BASH_VALUES: &str = include_str!("complete.bash");
/// zsh's, in place of the tail of clap's script, which binds `_dynprobe`.
const ZSH_VALUES: &str = include_str!("complete.zsh");
/// fish's: more `complete` lines, which add to clap's.
const FISH_VALUES: &str = include_str!("complete.fish");

/// Where clap's zsh script binds its function, which ZSH_VALUES replaces.
const ZSH_TAIL: &str = "if [ \"$funcstack[1]\" = \"_dynprobe\" ]; then";

/// fish's values of `help`'s argument, which clap's fish script leaves
/// out (bash's and zsh's have them): its possible values (cli.rs).
fn fish_help_values(cmd: &Command) -> String {
    let names: Vec<String> = cmd
        .find_subcommand("help")
        .and_then(|h| h.get_positionals().next())
        .map(|a| a.get_possible_values())
        .unwrap_or_default()
        .iter()
        .map(|v| v.get_name().to_string())
        .collect();
    format!(
        "complete -c dynprobe -n \"__fish_dynprobe_using_subcommand help\" -f -a \"{}\"\n",
        names.join(" ")
    )
}

/// A shell's completion script: clap's, with the run-time values.
pub fn completion(shell: Shell) -> String {
    let mut cmd = cli::command();
    let mut out = Vec::new();
    clap_complete::generate(shell, &mut cmd, "dynprobe", &mut out);
    let script = String::from_utf8_lossy(&out).into_owned();
    match shell {
        Shell::Bash => script + "\n" + BASH_VALUES,
        Shell::Zsh => match script.rfind(ZSH_TAIL) {
            Some(i) => script[..i].trim_end().to_string() + "\n\n" + ZSH_VALUES,
            None => script,
        },
        Shell::Fish => script + "\n" + FISH_VALUES + &fish_help_values(&cmd),
        _ => script,
    }
}

/// A manual's text in roff: a blank line starts a paragraph, indented
/// lines (tables, examples) are kept as they are laid out.
fn text(roff: &mut Roff, s: &str) {
    let mut kept = false;
    for line in s.lines() {
        let indented = line.starts_with(' ');
        if indented != kept {
            roff.control(if indented { "nf" } else { "fi" }, []);
            kept = indented;
        }
        if line.trim().is_empty() {
            roff.control("PP", []);
        } else {
            roff.text([roman(line)]);
        }
    }
    if kept {
        roff.control("fi", []);
    }
}

/// One option as the man page lists it: `-v, --verbose`, `--filter EXPR`.
fn option(roff: &mut Roff, arg: &Arg) {
    roff.control("TP", []);
    roff.text([bold(cli::option_name(arg))]);
    if let Some(h) = arg.get_help() {
        roff.text([roman(h.to_string())]);
    }
}

/// A subcommand's part of the man page: its usage line, its manual and
/// its options.
fn subcommand(roff: &mut Roff, sub: &Command) {
    roff.control("SS", [cli::usage(sub).as_str()]);
    match (sub.get_before_help(), sub.get_about()) {
        (Some(b), _) => text(roff, &b.to_string()),
        (None, Some(a)) => text(roff, &format!("{a}.")),
        (None, None) => {}
    }
    for arg in sub
        .get_arguments()
        .filter(|a| !a.is_positional() && !cli::is_help(a))
    {
        option(roff, arg);
    }
    if let Some(a) = sub.get_after_help() {
        roff.control("PP", []);
        text(roff, &a.to_string());
    }
}

/// The man page, `dynprobe(8)`: clap_mangen's title, name and synopsis
/// (the usage lines), then the manual's text, each subcommand's part and
/// the options.
pub fn man_page() -> String {
    let cmd = cli::command();
    let man = Man::new(cmd.clone())
        .title("DYNPROBE")
        .section("8")
        .source(format!("dynprobe {}", env!("CARGO_PKG_VERSION")))
        .manual("System Manager's Manual");
    let mut head = Vec::new();
    // Writes to a Vec do not fail.
    let _ = man.render_title(&mut head);
    let _ = man.render_name_section(&mut head);
    let _ = man.render_synopsis_section(&mut head);
    let mut roff = Roff::new();
    roff.control("SH", ["DESCRIPTION"]);
    if let Some(a) = cmd.get_after_help() {
        text(&mut roff, &a.to_string());
    }
    roff.control("SH", ["OPTIONS"]);
    for arg in cmd.get_arguments().filter(|a| !a.is_positional()) {
        option(&mut roff, arg);
    }
    roff.control("SH", ["SUBCOMMANDS"]);
    for sub in cmd.get_subcommands() {
        subcommand(&mut roff, sub);
    }
    // Each piece begins with the same definition of the quote string;
    // the page keeps the first.
    let head = String::from_utf8_lossy(&head).into_owned();
    let body = roff.render();
    let preamble = &body[..body.find(".SH").unwrap_or(0)];
    let mut page = String::new();
    for (i, part) in head.split(preamble).enumerate() {
        if i == 1 {
            page += preamble;
        }
        page += part;
    }
    page + &body[preamble.len()..]
}

/// The file at `FILES[i]`'s text.
fn contents(path: &str) -> String {
    match path {
        p if p.starts_with("bash-") => completion(Shell::Bash),
        p if p.starts_with("zsh/") => completion(Shell::Zsh),
        p if p.starts_with("fish/") => completion(Shell::Fish),
        _ => man_page(),
    }
}

/// Writes every file under `share` (a `share/` directory); the paths
/// written.
pub fn write_all(share: &Path) -> io::Result<Vec<PathBuf>> {
    let mut written = Vec::new();
    for f in FILES {
        let path = share.join(f);
        if let Some(dir) = path.parent() {
            fs::create_dir_all(dir)?;
        }
        fs::write(&path, contents(f))?;
        written.push(path);
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each completion and the man page name every subcommand and option,
    /// so none can silently go empty or fall behind the definition.
    #[test]
    fn every_file_names_every_subcommand() {
        let cmd = cli::command();
        for f in FILES {
            let text = contents(f);
            for sub in cmd.get_subcommands() {
                assert!(
                    text.contains(sub.get_name()),
                    "{f} does not name `{}`",
                    sub.get_name()
                );
                for long in sub.get_arguments().filter_map(|a| a.get_long()) {
                    // roff escapes each `-`.
                    let man = format!("\\-\\-{}", long.replace('-', "\\-"));
                    let fish = format!("-l {long}");
                    assert!(
                        [format!("--{long}"), man, fish]
                            .iter()
                            .any(|n| text.contains(n.as_str())),
                        "{f} does not name {} --{long}",
                        sub.get_name()
                    );
                }
            }
        }
    }

    #[test]
    fn files_are_written() {
        let dir = std::env::temp_dir().join(format!("dynprobe-docs-{}", std::process::id()));
        let written = write_all(&dir).unwrap();
        assert_eq!(written.len(), FILES.len());
        for p in &written {
            assert!(
                fs::metadata(p).unwrap().len() > 0,
                "{} is empty",
                p.display()
            );
        }
        let man = fs::read_to_string(dir.join("man/man8/dynprobe.8")).unwrap();
        assert!(man.contains("\n.TH DYNPROBE 8 "));
        assert_eq!(man.matches(".ds Aq").count(), 2);
        fs::remove_dir_all(&dir).unwrap();
    }
}
