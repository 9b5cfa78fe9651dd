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

/// A list compiled as the kernel layer compiles it: room for each item.
fn compiled_matches(list: &FunctionList<'_>, names: &[&[u8]]) -> Vec<bool> {
    let mut items = vec![ListItem::default(); list.item_count()];
    let compiled = list.compile(&mut items).expect("room for every item");
    names.iter().map(|n| compiled.matches(n)).collect()
}

#[test]
fn compiled_lists_take_what_lists_take() {
    let names: &[&[u8]] = &[
        b"vfs_read",
        b"vfs_write",
        b"vfs_fsync_range",
        b"kfree",
        b"dput",
        b"proc_show",
        b"do_show_all",
        b"security_file_open",
        b"x",
        b"",
        b"__x64_sys_read",
    ];
    for text in [
        "vfs_*,!vfs_fsync*,kfree",
        "!vfs_fsync,vfs_*",
        "kfree,dput,vfs_read,!dput",
        "*_show,security_*,!*_store",
        "*show*,!do_*",
        "x,*,!vfs_[rw]*",
        "__x64_sys_read,!__x64_sys_*",
        "v?s_read,[dk]*",
        "vfs_read,vfs_read,!kfree,!kfree",
        "*",
    ] {
        let l = FunctionList::parse(text.as_bytes()).unwrap();
        let want: Vec<bool> = names.iter().map(|n| l.matches(n)).collect();
        assert_eq!(compiled_matches(&l, names), want, "{text}");
    }
}

#[test]
fn compiled_lists_match_as_lists_at_random() {
    use proptest::prelude::*;
    use proptest::test_runner::{Config, FileFailurePersistence, TestRunner};
    // Items and names from a small alphabet, so that they meet.
    let item = "!?[ab_]{0,3}(\\*|\\?|\\[[ab]\\])?[ab_]{0,3}\\*?";
    let lists = proptest::collection::vec(item, 1..8).prop_map(|items| items.join(","));
    let names = proptest::collection::vec("[ab_]{0,6}", 1..16);
    let mut runner = TestRunner::new(Config {
        failure_persistence: Some(Box::new(FileFailurePersistence::Off)),
        ..Config::default()
    });
    runner
        .run(&(lists, names), |(text, names)| {
            let Ok(l) = FunctionList::parse(text.as_bytes()) else {
                return Ok(());
            };
            let names: Vec<&[u8]> = names.iter().map(|n| n.as_bytes()).collect();
            let want: Vec<bool> = names.iter().map(|n| l.matches(n)).collect();
            prop_assert_eq!(compiled_matches(&l, &names), want, "{}", text);
            Ok(())
        })
        .unwrap();
}

#[test]
fn compiling_needs_room_for_each_item() {
    let l = FunctionList::parse(b"vfs_read,kfree,!dput").unwrap();
    assert_eq!(l.item_count(), 3);
    let mut items = vec![ListItem::default(); 2];
    assert!(l.compile(&mut items).is_none());
    let mut items = vec![ListItem::default(); 3];
    let shape = l.compile_into(&mut items).unwrap();
    // Kept and made again, as the kernel layer keeps a list.
    let again = CompiledList::new(l.text(), &items, shape);
    assert!(again.matches(b"kfree"));
    assert!(!again.matches(b"dput"));
    // Items of another, shorter text match nothing out of its reach.
    let other = CompiledList::new(b"vfs", &items, shape);
    assert!(!other.matches(b"kfree"));
}

#[test]
fn what_lists_cost() {
    // Names cost a binary search; NAME* and *NAME a compare; a glob with
    // a `*` inside a try of its rest at each byte of a name.
    for (text, cost) in [
        ("vfs_read,vfs_write", 2 * 8),
        ("vfs_*,!vfs_fsync*,kfree", 4 + 9 + 8),
        ("*_show,security_*,!*_store", 5 + 9 + 6),
        ("*read*,kfree", 4 * 32 + 8),
        ("a*b,x", 1 + 32 + 8),
        ("v?s_*,x", 4 + 32 + 8),
        // A class costs more a byte: it is read member by member.
        ("a[bc]*x,x", 1 + 4 * 4 + 32 + 8),
        ("*[ab]x,x", 0),
        ("x,*", 8),
    ] {
        match FunctionList::parse(text.as_bytes()) {
            Ok(l) => assert_eq!(l.cost(), cost, "{text}"),
            // (4 * 4 + 1) * 32 + 8: past the bound.
            Err(e) => assert_eq!((e, cost), ((0, ErrorCode::FlistTooCostly), 0), "{text}"),
        }
    }
    // Hundreds of names cost little.
    let names: Vec<String> = (0..500).map(|i| format!("fn_{i}")).collect();
    let names = names.join(",");
    let l = FunctionList::parse(names.as_bytes()).unwrap();
    assert!(l.cost() <= 9 * 8, "{}", l.cost());
    // The ordinary lists of the tests and the documentation pass.
    for text in [
        "vfs_read,vfs_write,!vfs_open",
        "vfs_*,!vfs_fsync*,!vfs_write*",
        "*_show,security_*,!*_store",
        "*read*,*write*,!*_iter",
        "sample_tick,vfs_read",
    ] {
        FunctionList::parse(text.as_bytes()).unwrap();
    }
}

#[test]
fn costly_lists_are_refused() {
    // Many globs with `*`s inside: each tries its rest at every byte of
    // every symbol (seconds for each walk of the kernel's symbols).
    let crafted = ["*a*b*c*d*e*f*g*h*i*j*k*l*m*n*o*p*q*r*s*t*u*v*w*x*y*z"; 9].join(",");
    assert!(crafted.len() < 512);
    for text in [
        crafted.as_str(),
        "*[abcdefghijklmnopqrstuvwxyz]x,y",
        "*a*,*b*,*c*,*d*,*e*,*f*,*g*,*h*,*i*,*j*,*k*,*l*,*m*,*n*,*o*,*p*,*q*",
    ] {
        assert_eq!(
            FunctionList::parse(text.as_bytes()).unwrap_err(),
            (0, ErrorCode::FlistTooCostly),
            "{text}"
        );
    }
    // In an f line: E2BIG, the caret at the list.
    let line = format!("f:g/e {crafted} a=$arg1");
    let e = err_of(Control::DynamicEvents, &line);
    assert_eq!(
        (e.code, e.column, e.errno),
        (
            ErrorCode::FlistTooCostly,
            line.find('*').unwrap(),
            errno::E2BIG
        )
    );
}
