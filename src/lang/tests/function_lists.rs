// SPDX-License-Identifier: GPL-2.0
//! Function lists of `f` lines (`SYM[,[!]SYM...][:entry|:exit]`) and the
//! glob matcher they use, which must read patterns as the kernel's
//! `glob_match()` does.

mod common;
use common::*;
use dynprobe_lang::*;

#[test]
fn globs_match_as_the_kernels() {
    let cases: &[(&str, &str, bool)] = &[
        ("vfs_*", "vfs_read", true),
        ("vfs_*", "vfs_", true),
        ("vfs_*", "do_vfs_read", false),
        ("*read", "vfs_read", true),
        ("*read*", "kernel_read_file", true),
        ("v?s_read", "vfs_read", true),
        ("v?s_read", "vs_read", false),
        ("vfs_[rw]*", "vfs_write", true),
        ("vfs_[rw]*", "vfs_open", false),
        ("vfs_[!rw]*", "vfs_open", true),
        ("vfs_[!rw]*", "vfs_read", false),
        ("[a-c]x", "bx", true),
        ("[a-c]x", "dx", false),
        // A range written backwards is empty, as in the kernel.
        ("[c-a]x", "bx", false),
        // A `]` first is a member; a `-` last is a member.
        ("[]a]x", "]x", true),
        ("[a-]x", "-x", true),
        // Without its `]` a class is a plain `[`.
        ("[ab", "[ab", true),
        ("[ab", "a", false),
        ("a*b*c", "aXXbYYc", true),
        ("a*b*c", "aXXbYY", false),
        ("*", "", true),
        ("", "", true),
        ("", "a", false),
        ("a", "", false),
        ("tcp_v4_send_reset*", "tcp_v4_send_reset.isra.0", true),
    ];
    for (pattern, s, want) in cases {
        assert_eq!(
            glob_match(pattern.as_bytes(), s.as_bytes()),
            *want,
            "{pattern} on {s}"
        );
    }
}

#[test]
fn lists_take_and_exclude() {
    let l = FunctionList::parse(b"vfs_*,!vfs_fsync*,kfree").unwrap();
    assert!(l.matches(b"vfs_read"));
    assert!(l.matches(b"kfree"));
    assert!(!l.matches(b"vfs_fsync_range"));
    assert!(!l.matches(b"dput"));
    let plain: Vec<_> = l.plain_names().collect();
    assert_eq!(plain, [&b"kfree"[..]]);
    // Exclusions come first or last alike.
    let l = FunctionList::parse(b"!vfs_fsync,vfs_*").unwrap();
    assert!(!l.matches(b"vfs_fsync"));
    assert!(l.matches(b"vfs_fsync_range"));
    for (text, at, code) in [
        ("a,,b", 2, ErrorCode::FlistEmptyItem),
        ("a,", 2, ErrorCode::FlistEmptyItem),
        ("!a,!", 3, ErrorCode::FlistEmptyItem),
        ("!a,!b", 0, ErrorCode::FlistOnlyExcluded),
        ("a,b/c", 3, ErrorCode::FlistBadItem),
        ("a,!b=c", 4, ErrorCode::FlistBadItem),
    ] {
        let e = FunctionList::parse(text.as_bytes()).unwrap_err();
        assert_eq!(e, (at, code), "{text}");
    }
}

#[test]
fn f_lines_with_lists() {
    let d = def_of(
        Control::DynamicEvents,
        "f:vfs/rw vfs_*,!vfs_open,kfree a=$arg1",
    );
    assert_eq!(d.kind(), ProbeKind::FprobeEntry);
    assert_eq!((d.group(), d.event()), ("vfs", "rw"));
    assert_eq!(canon_of(&d), "f:vfs/rw vfs_*,!vfs_open,kfree a=$arg1");
    // The exit, written either way, is listed as upstream writes it.
    for line in [
        "f:vfs/rwx vfs_read,kfree:exit r=$retval",
        "f:vfs/rwx vfs_read,kfree%return r=$retval",
    ] {
        let d = def_of(Control::DynamicEvents, line);
        assert_eq!(d.kind(), ProbeKind::FprobeExit, "{line}");
        assert_eq!(canon_of(&d), "f:vfs/rwx vfs_read,kfree:exit r=$retval");
    }
    // `:entry` and `:exit` also on one function; `:entry` refuses $retval.
    let d = def_of(Control::DynamicEvents, "f:g/x vfs_read:exit $retval");
    assert_eq!(d.kind(), ProbeKind::FprobeExit);
    assert_eq!(canon_of(&d), "f:g/x vfs_read%return arg1=$retval");
    let d = def_of(Control::DynamicEvents, "f:g/e vfs_read:entry");
    assert_eq!(d.kind(), ProbeKind::FprobeEntry);
    let e = err_of(Control::DynamicEvents, "f:g/e vfs_read:entry $retval");
    assert_eq!(e.code, ErrorCode::RetvalOnProbe);
}

#[test]
fn list_errors() {
    let cases: &[(&str, ErrorCode, &str)] = &[
        // A list names its event: it has no one function to name it after.
        ("f vfs_read,kfree", ErrorCode::FlistNeedsEvent, "f"),
        ("f:g/ vfs_read,kfree", ErrorCode::FlistNeedsEvent, "f"),
        ("f:g/e vfs_read,,kfree", ErrorCode::FlistEmptyItem, ",kfree"),
        ("f:g/e !vfs_read", ErrorCode::FlistOnlyExcluded, "!vfs_read"),
        // A plain name must exist, as a lone one must.
        ("f:g/e vfs_read,nosuch", ErrorCode::BadProbeAddr, "nosuch"),
        // A list that takes no function at all.
        ("f:g/e zz*,yy*", ErrorCode::BadProbeAddr, "zz*"),
        // Each function has its own prototype: BTF names need one.
        ("f:g/e vfs_read,kfree file", ErrorCode::NoBtfEntry, "file"),
    ];
    for (line, code, at) in cases {
        let e = err_of(Control::DynamicEvents, line);
        assert_eq!(e.code, *code, "{line}");
        assert_eq!(e.column, line.find(at).unwrap(), "{line}");
    }
}

#[test]
fn addresses_sort_once_each() {
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    for n in [0usize, 1, 2, 3, 7, 64, 1000] {
        let mut v: Vec<usize> = (0..n)
            .map(|_| {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                (seed % 97) as usize
            })
            .collect();
        let mut want = v.clone();
        want.sort();
        want.dedup();
        let k = sort_dedup(&mut v);
        assert_eq!(&v[..k], &want[..], "n={n}");
    }
}

#[test]
fn entry_copies_are_told_apart() {
    for (name, base, want) in [
        ("foo.isra.0", "foo", true),
        ("foo.constprop.0", "foo", true),
        ("foo.constprop.0.isra.0", "foo", true),
        ("foo.isra.12", "foo", true),
        ("foo.part.0", "foo", false),
        ("foo.cold", "foo", false),
        ("foo.isra.0.cold", "foo", false),
        ("foo.isra", "foo", false),
        ("foo.isra.x", "foo", false),
        ("foo", "foo", false),
        ("foobar.isra.0", "foo", false),
        ("fo.isra.0", "foo", false),
    ] {
        assert_eq!(
            is_entry_copy_of(name.as_bytes(), base.as_bytes()),
            want,
            "{name} of {base}"
        );
    }
}

#[test]
fn a_function_with_one_copy_is_probed_there() {
    // Every kind of probe on a name whose function the compiler kept
    // only as one copy probes the copy; the event keeps the name written.
    let d = def_of(Control::KprobeEvents, "p one_copy");
    assert_eq!(d.symbol(), Some("one_copy.isra.0"));
    assert_eq!(canon_of(&d), "p:kprobes/p_one_copy_0 one_copy.isra.0");
    let d = def_of(Control::DynamicEvents, "f one_copy a=$arg1");
    assert_eq!(d.symbol(), Some("one_copy.isra.0"));
    assert_eq!(d.event(), "one_copy__entry");
    let d = def_of(Control::FunctionEvents, "one_copy(x64 a)");
    assert_eq!(d.symbol(), Some("one_copy.isra.0"));
    assert_eq!(
        (d.event(), canon_of(&d).as_str()),
        ("one_copy", "one_copy(x64 a)")
    );
    // Several copies: the user names one, at the name's caret.
    for (control, line, at) in [
        (Control::KprobeEvents, "p two_copies", "two_copies"),
        (Control::DynamicEvents, "f two_copies", "two_copies"),
        (Control::FunctionEvents, "two_copies(x64 a)", "two_copies"),
    ] {
        let e = err_of(control, line);
        assert_eq!(
            (e.code, e.column),
            (ErrorCode::SeveralCopies, line.find(at).unwrap()),
            "{line}"
        );
    }
    // Pieces that do not start at the entry are not copies of it.
    let e = err_of(Control::KprobeEvents, "p split");
    assert_eq!(e.code, ErrorCode::BadProbeAddr);
    // A copy named as such is probed as before.
    let d = def_of(Control::KprobeEvents, "p two_copies.isra.0");
    assert_eq!(d.symbol(), Some("two_copies.isra.0"));
}

#[test]
fn module_functions_by_mod_sym() {
    // `MOD:SYM` on f lines and function events: that module's function.
    let d = def_of(Control::DynamicEvents, "f mymod:vfs_read a=$arg1");
    assert_eq!(d.symbol(), Some("mymod:vfs_read"));
    assert_eq!(d.event(), "mymod_vfs_read__entry");
    assert_eq!(
        canon_of(&d),
        "f:fprobes/mymod_vfs_read__entry mymod:vfs_read a=$arg1"
    );
    let d = def_of(Control::FunctionEvents, "mymod:vfs_read(x64 a)");
    assert_eq!(d.symbol(), Some("mymod:vfs_read"));
    assert_eq!((d.group(), d.event()), ("functions", "vfs_read"));
    assert_eq!(canon_of(&d), "mymod:vfs_read(x64 a)");
    for (line, code, col) in [
        ("mymod:nosuch(x64 a)", ErrorCode::BadProbeAddr, 0),
        (":vfs_read(x64 a)", ErrorCode::FeBadFunc, 0),
        ("mymod:(x64 a)", ErrorCode::FeBadFunc, 6),
    ] {
        let e = err_of(Control::FunctionEvents, line);
        assert_eq!((e.code, e.column), (code, col), "{line}");
    }
    // BTF finds a function by its name alone, which may be another
    // module's: named arguments are refused on MOD:SYM.
    let _ = err_of(Control::FunctionEvents, "mymod:vfs_read(file)");
    let _ = err_of(Control::DynamicEvents, "f mymod:vfs_read file");
    assert_eq!(
        err_of(Control::DynamicEvents, "f mymod:nosuch").code,
        ErrorCode::BadProbeAddr
    );
}
