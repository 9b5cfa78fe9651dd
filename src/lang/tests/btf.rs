// SPDX-License-Identifier: GPL-2.0
//! The BTF reader (`lang::btf`) against blobs built here: lookups of
//! functions, parameters, types and members, tracepoint prototypes,
//! definitions parsed with a blob as the resolver, and corrupt blobs.

mod common;
use common::btf_writer::*;
use common::{canon_of, fields_of, fmt_of};
use dynprobe_lang::btf::{build_index, build_index_split, index_len, index_len_split};
use dynprobe_lang::*;

/// Ids of the interesting types of [`mini_kernel`].
#[derive(Default, Debug)]
struct Ids {
    int: u32,
    uint: u32,
    ulong: u32,
    long: u32,
    uchar: u32,
    ushort: u32,
    size_t: u32,
    ssize_t: u32,
    loff_t: u32,
    const_char: u32,
    const_char_ptr: u32,
    char_ptr: u32,
    loff_ptr: u32,
    void_ptr: u32,
    const_void_ptr: u32,
    filename: u32,
    filename_ptr: u32,
    inode: u32,
    inode_ptr: u32,
    file: u32,
    file_ptr: u32,
    file_t: u32,
    path: u32,
    list_head: u32,
    list_head_ptr: u32,
    task: u32,
    task_ptr: u32,
    iname: u32,
    pid_type: u32,
    big_enum: u32,
    cycle_a: u32,
    dup_first: u32,
}

/// A kernel in miniature: the types and functions the kernel's BTF
/// argument tests use, in an order that is not sorted by name.
// The ids are recorded as the types are made, which is what gives them.
#[allow(clippy::field_reassign_with_default)]
fn mini_kernel() -> (Vec<u8>, Ids) {
    let mut w = BtfWriter::new();
    let mut ids = Ids::default();
    ids.int = w.int("int", 4, 32, true);
    ids.uint = w.int("unsigned int", 4, 32, false);
    ids.ulong = w.int("long unsigned int", 8, 64, false);
    ids.long = w.int("long int", 8, 64, true);
    ids.uchar = w.int("char", 1, 8, false);
    ids.ushort = w.int("short unsigned int", 2, 16, false);
    let long_long = w.int("long long int", 8, 64, true);
    ids.size_t = w.typedef("size_t", ids.ulong);
    let kernel_ssize = w.typedef("__kernel_ssize_t", ids.long);
    ids.ssize_t = w.typedef("ssize_t", kernel_ssize);
    let kernel_loff = w.typedef("__kernel_loff_t", long_long);
    ids.loff_t = w.typedef("loff_t", kernel_loff);
    ids.const_char = w.modifier(KIND_CONST, ids.uchar);
    ids.const_char_ptr = w.ptr(ids.const_char);
    ids.char_ptr = w.ptr(ids.uchar);
    ids.loff_ptr = w.ptr(ids.loff_t);
    ids.void_ptr = w.ptr(0);
    let const_void = w.modifier(KIND_CONST, 0);
    ids.const_void_ptr = w.ptr(const_void);
    let umode_t = w.typedef("umode_t", ids.ushort);

    // struct filename { const char *name; const char *uptr; int refcnt;
    //                   const char iname[32]; }
    ids.iname = w.array(ids.const_char, ids.int, 32);
    ids.filename = w.structure(
        "filename",
        56,
        &[
            m("name", ids.const_char_ptr, 0),
            m("uptr", ids.const_char_ptr, 64),
            m("refcnt", ids.int, 128),
            m("iname", ids.iname, 192),
        ],
    );
    ids.filename_ptr = w.ptr(ids.filename);

    // struct inode { umode_t i_mode; unsigned short i_opflags;
    //   unsigned long i_ino; union { const unsigned int i_nlink;
    //   unsigned int __i_nlink; };
    //   struct { unsigned int i_state:3, i_dirty:5; }; }
    let const_uint = w.modifier(KIND_CONST, ids.uint);
    let nlink_union = w.union(
        "",
        4,
        &[m("i_nlink", const_uint, 0), m("__i_nlink", ids.uint, 0)],
    );
    let state_bits = w.structure_bitfields(
        "",
        4,
        &[bf("i_state", ids.uint, 0, 3), bf("i_dirty", ids.uint, 3, 5)],
    );
    let volatile_state = w.modifier(KIND_VOLATILE, state_bits);
    ids.inode = w.structure(
        "inode",
        24,
        &[
            m("i_mode", umode_t, 0),
            m("i_opflags", ids.ushort, 16),
            m("i_ino", ids.ulong, 64),
            m("", nlink_union, 128),
            m("", volatile_state, 160),
        ],
    );
    ids.inode_ptr = w.ptr(ids.inode);

    // struct path { struct vfsmount *mnt; struct dentry *dentry; };
    let vfsmount = w.fwd("vfsmount");
    let vfsmount_ptr = w.ptr(vfsmount);
    let dentry = w.fwd("dentry");
    let dentry_ptr = w.ptr(dentry);
    ids.path = w.structure(
        "path",
        16,
        &[m("mnt", vfsmount_ptr, 0), m("dentry", dentry_ptr, 64)],
    );

    // struct file { union { unsigned int f_iocb_flags;
    //   struct { unsigned int f_a; unsigned int f_b; }; };
    //   unsigned int f_mode; struct path f_path; struct inode *f_inode; };
    let ab = w.structure("", 8, &[m("f_a", ids.uint, 0), m("f_b", ids.uint, 32)]);
    let file_union = w.union("", 8, &[m("f_iocb_flags", ids.uint, 0), m("", ab, 0)]);
    ids.file = w.structure(
        "file",
        40,
        &[
            m("", file_union, 0),
            m("f_mode", ids.uint, 64),
            m("f_path", ids.path, 128),
            m("f_inode", ids.inode_ptr, 256),
        ],
    );
    let const_file = w.modifier(KIND_CONST, ids.file);
    ids.file_t = w.typedef("file_t", const_file);
    ids.file_ptr = w.ptr(ids.file);

    // struct list_head { struct list_head *next, *prev; };
    ids.list_head_ptr = w.ptr(w.next_id() + 1);
    ids.list_head = w.structure(
        "list_head",
        16,
        &[
            m("next", ids.list_head_ptr, 0),
            m("prev", ids.list_head_ptr, 64),
        ],
    );
    // struct task_struct { int pid; struct sched_entity se; }, the entity
    // { unsigned long load; struct list_head group_node; }
    let se = w.structure(
        "sched_entity",
        24,
        &[m("load", ids.ulong, 0), m("group_node", ids.list_head, 64)],
    );
    ids.task = w.structure("task_struct", 32, &[m("pid", ids.int, 0), m("se", se, 64)]);
    ids.task_ptr = w.ptr(ids.task);

    ids.pid_type = w.enumeration("pid_type", &[("PIDTYPE_PID", 0), ("PIDTYPE_TGID", 1)]);
    ids.big_enum = w.enumeration64("big", &[("BIG", 1 << 40)]);
    // A typedef cycle (never valid, but a blob may say so).
    ids.cycle_a = w.typedef("cycle_a", w.next_id() + 1);
    w.typedef("cycle_b", ids.cycle_a);

    // Functions, deliberately not in name order.
    w.function(
        "vfs_read",
        ids.ssize_t,
        &[
            ("file", ids.file_ptr),
            ("buf", ids.char_ptr),
            ("count", ids.size_t),
            ("pos", ids.loff_ptr),
        ],
    );
    w.function("kfree", 0, &[("object", ids.const_void_ptr)]);
    w.function(
        "getname_flags",
        ids.filename_ptr,
        &[("filename", ids.const_char_ptr), ("flags", ids.int)],
    );
    w.function("do_nothing", 0, &[]);
    w.function("printk", ids.int, &[("fmt", ids.const_char_ptr), ("", 0)]);
    w.function("pid_kind", ids.pid_type, &[("file", ids.file_t)]);
    ids.dup_first = w.function("dup", ids.int, &[("first", ids.int)]);
    w.function("dup", ids.int, &[("second", ids.int), ("x", ids.int)]);
    // A FUNC whose type is not a prototype.
    w.func("not_a_func", ids.int);

    // Tracepoint kfree: the stub with names, the typedef without.
    w.function(
        "__probestub_kfree",
        0,
        &[
            ("__data", ids.void_ptr),
            ("call_site", ids.ulong),
            ("ptr", ids.const_void_ptr),
        ],
    );
    let kfree_tp = w.func_proto(
        0,
        &[
            ("", ids.void_ptr),
            ("", ids.ulong),
            ("", ids.const_void_ptr),
        ],
    );
    let kfree_tp_ptr = w.ptr(kfree_tp);
    w.typedef("btf_trace_kfree", kfree_tp_ptr);
    // Tracepoint sched_wakeup: stub and typedef.
    w.function(
        "__probestub_sched_wakeup",
        0,
        &[("__data", ids.void_ptr), ("p", ids.task_ptr)],
    );
    let wakeup_tp = w.func_proto(0, &[("", ids.void_ptr), ("", ids.task_ptr)]);
    let wakeup_tp_ptr = w.ptr(wakeup_tp);
    w.typedef("btf_trace_sched_wakeup", wakeup_tp_ptr);
    // Tracepoint only_typedef: no stub, so the unnamed typedef answers.
    let only_tp = w.func_proto(0, &[("", ids.void_ptr), ("", ids.int)]);
    let only_tp_ptr = w.ptr(only_tp);
    let only_tp_const = w.modifier(KIND_CONST, only_tp_ptr);
    w.typedef("btf_trace_only_typedef", only_tp_const);
    (w.finish(), ids)
}

fn with_btf<T>(blob: &[u8], f: impl FnOnce(&Btf<'_>) -> T) -> T {
    let index = index_of(blob);
    let btf = Btf::new(blob, &index).expect("Btf::new");
    f(&btf)
}

#[test]
fn functions_and_parameters() {
    let (blob, ids) = mini_kernel();
    with_btf(&blob, |btf| {
        assert_eq!(
            btf.func("vfs_read"),
            Some(BtfFunc {
                nr_params: 4,
                ret_type: ids.ssize_t
            })
        );
        assert_eq!(btf.func_param("vfs_read", 0), Some(("file", ids.file_ptr)));
        assert_eq!(btf.func_param("vfs_read", 3), Some(("pos", ids.loff_ptr)));
        assert_eq!(btf.func_param("vfs_read", 4), None);
        assert_eq!(
            btf.func("kfree"),
            Some(BtfFunc {
                nr_params: 1,
                ret_type: 0
            })
        );
        assert_eq!(
            btf.func("do_nothing"),
            Some(BtfFunc {
                nr_params: 0,
                ret_type: 0
            })
        );
        // A variadic prototype ends in an unnamed void parameter.
        assert_eq!(btf.func("printk").map(|f| f.nr_params), Some(2));
        assert_eq!(btf.func_param("printk", 1), Some(("", 0)));
        // Names that only share a prefix, or are not functions.
        assert_eq!(btf.func("vfs_rea"), None);
        assert_eq!(btf.func("vfs_read_"), None);
        assert_eq!(btf.func("size_t"), None);
        assert_eq!(btf.func("btf_trace_kfree"), None);
        assert_eq!(btf.func(""), None);
        assert_eq!(btf.func("not_a_func"), None);
        // Two functions of one name: the first one, as the kernel finds it.
        assert_eq!(btf.func_param("dup", 0), Some(("first", ids.int)));
        assert_eq!(btf.func("dup").map(|f| f.nr_params), Some(1));
        assert!(ids.dup_first > 0);
    });
}

#[test]
fn types_skip_modifiers_and_typedefs() {
    let (blob, ids) = mini_kernel();
    with_btf(&blob, |btf| {
        let long = BtfType::Int {
            bits: 64,
            signed: true,
            offset: 0,
        };
        // ssize_t -> __kernel_ssize_t -> long int
        assert_eq!(btf.type_info(ids.ssize_t), Some(long));
        assert_eq!(btf.type_info(ids.long), Some(long));
        assert_eq!(
            btf.type_info(ids.const_char),
            Some(BtfType::Int {
                bits: 8,
                signed: false,
                offset: 0
            })
        );
        assert_eq!(
            btf.type_info(ids.const_char_ptr),
            Some(BtfType::Ptr {
                target: ids.const_char
            })
        );
        assert_eq!(
            btf.type_info(ids.iname),
            Some(BtfType::Array {
                elem: ids.const_char
            })
        );
        assert_eq!(btf.type_info(ids.file_t), Some(BtfType::Struct));
        assert_eq!(btf.type_info(ids.pid_type), Some(BtfType::Enum));
        assert_eq!(btf.type_info(ids.big_enum), Some(BtfType::Enum64));
        // void, as the kernel's btf_type_by_id(0) answers it.
        assert_eq!(btf.type_info(0), Some(BtfType::Other));
        assert_eq!(
            btf.type_info(ids.void_ptr),
            Some(BtfType::Ptr { target: 0 })
        );
        // Unknown ids and cycles have no type.
        assert_eq!(btf.type_info(btf.nr_types() + 1), None);
        assert_eq!(btf.type_info(u32::MAX), None);
        assert_eq!(btf.type_info(ids.cycle_a), None);
        // Bit offset and width of an integer type are passed on.
    });
    let mut w = BtfWriter::new();
    let int = w.int_encoded("odd", 8, 13, 3, 0);
    let c = w.modifier(KIND_CONST, int);
    let v = w.modifier(KIND_VOLATILE, c);
    let r = w.modifier(KIND_RESTRICT, v);
    let t = w.type_tag("user", r);
    let blob = w.finish();
    with_btf(&blob, |btf| {
        assert_eq!(
            btf.type_info(t),
            Some(BtfType::Int {
                bits: 13,
                signed: false,
                offset: 3
            })
        );
    });
}

#[test]
fn typedef_chain_limit() {
    // 31 typedefs in a row resolve; a chain longer than the kernel's
    // resolve depth does not.
    for (n, resolves) in [(31, true), (40, false)] {
        let mut w = BtfWriter::new();
        let int = w.int("int", 4, 32, true);
        let mut t = int;
        for i in 0..n {
            t = w.typedef(&format!("t{i}"), t);
        }
        let blob = w.finish();
        with_btf(&blob, |btf| {
            assert_eq!(btf.type_info(t).is_some(), resolves, "{n}");
        });
    }
}

#[test]
fn struct_members() {
    let (blob, ids) = mini_kernel();
    with_btf(&blob, |btf| {
        let member = |id: u32, name: &str| btf.member(id, name).expect("a struct");
        let at = |bit_offset, bitfield_size, ty| {
            Some(BtfMember {
                bit_offset,
                bitfield_size,
                ty,
            })
        };
        assert_eq!(member(ids.filename, "name"), at(0, 0, ids.const_char_ptr));
        assert_eq!(member(ids.filename, "refcnt"), at(128, 0, ids.int));
        assert_eq!(member(ids.file, "f_mode"), at(64, 0, ids.uint));
        assert_eq!(member(ids.file, "f_path"), at(128, 0, ids.path));
        assert_eq!(member(ids.path, "dentry").map(|m| m.bit_offset), Some(64));
        // In an anonymous union, and in a struct inside it.
        assert_eq!(member(ids.file, "f_iocb_flags"), at(0, 0, ids.uint));
        assert_eq!(member(ids.file, "f_b"), at(32, 0, ids.uint));
        // In an anonymous union at 128 and a volatile anonymous kind-flag
        // struct at 160.
        assert_eq!(member(ids.inode, "__i_nlink"), at(128, 0, ids.uint));
        assert_eq!(member(ids.inode, "i_state"), at(160, 3, ids.uint));
        assert_eq!(member(ids.inode, "i_dirty"), at(163, 5, ids.uint));
        // Through a const typedef of the struct.
        assert_eq!(member(ids.file_t, "f_inode"), at(256, 0, ids.inode_ptr));
        // No such member.
        assert_eq!(member(ids.file, "f_nope"), None);
        assert_eq!(member(ids.file, ""), None);
        // Not a struct or union: broken type information.
        assert_eq!(btf.member(ids.int, "x"), Err(BtfError));
        assert_eq!(btf.member(ids.file_ptr, "f_mode"), Err(BtfError));
        assert_eq!(btf.member(0, "x"), Err(BtfError));
        assert_eq!(btf.member(btf.nr_types() + 1, "x"), Err(BtfError));
    });
}

#[test]
fn enumerators_by_name() {
    let mut w = BtfWriter::new();
    w.int("int", 4, 32, true);
    w.enumeration(
        "trace_iterator_bits",
        &[("ITER_A_BIT", 0), ("ITER_B_BIT", 13), ("ITER_NONE_BIT", -1)],
    );
    w.enumeration64("wide", &[("WIDE", (1 << 40) | 7), ("WIDE_TOP", u64::MAX)]);
    let blob = w.finish();
    with_btf(&blob, |btf| {
        assert_eq!(btf.enumerator("ITER_A_BIT"), Some(0));
        assert_eq!(btf.enumerator("ITER_B_BIT"), Some(13));
        assert_eq!(btf.enumerator("ITER_NONE_BIT"), Some(-1));
        assert_eq!(btf.enumerator("WIDE"), Some((1 << 40) | 7));
        assert_eq!(btf.enumerator("WIDE_TOP"), Some(-1));
        assert_eq!(btf.enumerator("ITER_C_BIT"), None);
        // Type names are not enumerators.
        assert_eq!(btf.enumerator("wide"), None);
        assert_eq!(btf.enumerator("int"), None);
    });
}

#[test]
fn anonymous_member_search_order() {
    let mut w = BtfWriter::new();
    let int = w.int("int", 4, 32, true);
    let first = w.union("", 4, &[m("dup", int, 0)]);
    let second = w.union("", 4, &[m("dup", int, 0)]);
    // A named member wins over anonymous ones, and of two anonymous ones
    // the kernel searches the last first.
    let outer = w.structure(
        "outer",
        16,
        &[m("", first, 0), m("", second, 64), m("named", int, 96)],
    );
    let inner = w.union("", 4, &[m("named", int, 0)]);
    let shadow = w.structure("shadow", 8, &[m("", inner, 0), m("named", int, 32)]);
    // Only 16 anonymous members are remembered per level.
    let mut anons = Vec::new();
    for i in 0..17u32 {
        let name = format!("a{i}");
        let u = w.union("", 4, &[m(&name, int, 0)]);
        anons.push((u, i * 32));
    }
    let members: Vec<Member> = anons.iter().map(|&(u, off)| m("", u, off)).collect();
    let many = w.structure("many", 17 * 4, &members);
    // An anonymous member that contains itself is not followed forever.
    let self_ref = w.next_id();
    w.structure("", 4, &[m("", self_ref, 8)]);
    let blob = w.finish();
    with_btf(&blob, |btf| {
        assert_eq!(btf.member(outer, "dup").unwrap().unwrap().bit_offset, 64);
        assert_eq!(btf.member(shadow, "named").unwrap().unwrap().bit_offset, 32);
        assert_eq!(
            btf.member(many, "a15").unwrap().unwrap().bit_offset,
            15 * 32
        );
        assert_eq!(btf.member(many, "a16"), Ok(None));
        assert_eq!(btf.member(self_ref, "x"), Err(BtfError));
    });
}

#[test]
fn tracepoint_prototypes() {
    let (blob, ids) = mini_kernel();
    with_btf(&blob, |btf| {
        // The stub's prototype, __data included, and not the function of
        // the same name.
        assert_eq!(
            btf.tracepoint("kfree"),
            Some(BtfFunc {
                nr_params: 3,
                ret_type: 0
            })
        );
        assert_eq!(
            btf.tracepoint_param("kfree", 0),
            Some(("__data", ids.void_ptr))
        );
        assert_eq!(
            btf.tracepoint_param("kfree", 1),
            Some(("call_site", ids.ulong))
        );
        assert_eq!(
            btf.tracepoint_param("kfree", 2),
            Some(("ptr", ids.const_void_ptr))
        );
        assert_eq!(btf.tracepoint_param("kfree", 3), None);
        assert_eq!(
            btf.tracepoint_param("sched_wakeup", 1),
            Some(("p", ids.task_ptr))
        );
        // Without a stub, the typedef's (unnamed) prototype.
        assert_eq!(btf.tracepoint("only_typedef").map(|f| f.nr_params), Some(2));
        assert_eq!(btf.tracepoint_param("only_typedef", 1), Some(("", ids.int)));
        assert_eq!(btf.tracepoint("vfs_read"), None);
        assert_eq!(btf.tracepoint("kfre"), None);
    });
}

#[test]
fn unsorted_and_sorted_names() {
    // Many functions in reverse name order, then the same sorted: every
    // one is found in both.
    let names: Vec<String> = (0..300).map(|i| format!("fn_{i:04}")).collect();
    for sorted in [false, true] {
        let mut w = BtfWriter::new();
        let int = w.int("int", 4, 32, true);
        let mut order: Vec<(usize, &String)> = names.iter().enumerate().collect();
        if !sorted {
            order.reverse();
        }
        for (i, n) in &order {
            let params: Vec<(&str, u32)> = (0..(i % 5)).map(|_| ("p", int)).collect();
            w.function(n, int, &params);
        }
        let blob = w.finish();
        with_btf(&blob, |btf| {
            for (i, n) in names.iter().enumerate() {
                assert_eq!(
                    btf.func(n).map(|f| f.nr_params),
                    Some((i % 5) as u32),
                    "{n}"
                );
            }
            assert_eq!(btf.func("fn_"), None);
            assert_eq!(btf.func("fn_0300"), None);
        });
    }
}

#[test]
fn layout_section_sizes_new_kinds() {
    // Kind 25 (unknown here): 4 bytes, then 8 per vlen.
    let mut w = BtfWriter::new();
    let int = w.int("int", 4, 32, true);
    let odd = w.header("future", 25, false, 2, 0);
    w.words(&[1, 2, 3, 4, 5]);
    w.function("after", int, &[("x", int)]);
    let mut layout = vec![[0u8; 4]; 26];
    layout[25] = [4, 8, 0, 0];
    let blob = w.finish_with(32, &layout);
    with_btf(&blob, |btf| {
        assert_eq!(btf.func_param("after", 0), Some(("x", int)));
        assert_eq!(btf.type_info(odd), Some(BtfType::Other));
    });
    // Without the layout section the kind cannot be skipped.
    assert_eq!(
        index_len(&w.finish()),
        Err(BtfBlobError::UnknownKind { id: 2, kind: 25 })
    );
    // A header longer than the one known here is read up to what is known.
    let blob = w.finish_with(40, &layout);
    assert!(index_len(&blob).is_ok());
}

/// The offsets a program reads at: each dereference, then the store's.
fn offsets(p: &Program) -> Vec<i64> {
    let mut v: Vec<i64> = p.derefs().map(|d| d.offset).collect();
    match p.store {
        Store::Mem { offset, .. } | Store::String { offset, .. } => v.push(offset),
        _ => {}
    }
    v
}

fn parse_with(btf: &Btf<'_>, line: &str) -> Result<Box<Definition>, ParseError> {
    let mut d = Box::new(Definition::new());
    match parse(Control::DynamicEvents, line.as_bytes(), btf, &mut d) {
        Ok(Command::Define) => Ok(d),
        Ok(c) => panic!("{line}: {c:?}"),
        Err(e) => Err(e),
    }
}

#[test]
fn definitions_with_a_blob() {
    let (blob, _) = mini_kernel();
    with_btf(&blob, |btf| {
        let def = |line: &str| parse_with(btf, line).unwrap_or_else(|e| panic!("{line}: {e:?}"));
        let d = def("f:fpevent kfree $arg1");
        assert_eq!(canon_of(&d), "f:fprobes/fpevent kfree object=object");
        let d = def("p:kpevent kfree object");
        assert_eq!(canon_of(&d), "p:kprobes/kpevent kfree object=object");
        assert_eq!(d.args()[0].program().load, Load::Arg(0));
        let d = def("f vfs_read $arg*");
        assert_eq!(
            canon_of(&d),
            "f:fprobes/vfs_read__entry vfs_read file=file buf=buf count=count pos=pos"
        );
        // size_t is u64, pointers x64.
        assert_eq!(
            fields_of(&d)[1..],
            [
                "u64 file;\toffset:16;\tsize:8;\tsigned:0;",
                "u64 buf;\toffset:24;\tsize:8;\tsigned:0;",
                "u64 count;\toffset:32;\tsize:8;\tsigned:0;",
                "u64 pos;\toffset:40;\tsize:8;\tsigned:0;",
            ]
        );
        assert!(fmt_of(&d).contains("file=0x%Lx buf=0x%Lx count=%Lu pos=0x%Lx"));
        // $retval gets the return type: ssize_t is s64.
        let d = def("f vfs_read%return $retval");
        assert_eq!(
            fields_of(&d)[2],
            "s64 arg1;\toffset:24;\tsize:8;\tsigned:1;"
        );
        // Members through pointers, inside anonymous unions, bitfields.
        let d = def("f vfs_read ino=file->f_inode->i_ino mode=file->f_mode");
        assert_eq!(d.args()[0].program().load, Load::Arg(0));
        assert_eq!(offsets(d.args()[0].program()), [32, 8]);
        assert_eq!(d.args()[0].fetch_type(), FetchType::U64);
        assert_eq!(offsets(d.args()[1].program()), [8]);
        assert_eq!(d.args()[1].fetch_type(), FetchType::U32);
        let d = def("f vfs_read file->f_b file->f_path.dentry");
        assert_eq!(offsets(d.args()[0].program()), [4]);
        assert_eq!(offsets(d.args()[1].program()), [24]);
        assert_eq!(d.args()[1].fetch_type(), FetchType::X64);
        // i_dirty: bits 163..168 of the inode.
        let d = def("f vfs_read file->f_inode->i_dirty");
        assert_eq!(offsets(d.args()[0].program()), [32, 20]);
        let bits = d.args()[0].program().bitfield.expect("a bitfield");
        assert_eq!((bits.lshift, bits.rshift), (64 - 5 - 3, 64 - 5));
        // $retval->name as a string: the char pointer is followed.
        let d = def("f:fpevent getname_flags%return path=$retval->name:string");
        assert_eq!(
            canon_of(&d),
            "f:fprobes/fpevent getname_flags%return path=$retval->name:string"
        );
        assert_eq!(d.args()[0].program().load, Load::RetVal);
        assert_eq!(offsets(d.args()[0].program()), [0, 0]);
        // A char array member is the string itself.
        let d = def("f getname_flags%return $retval->iname:string");
        assert_eq!(offsets(d.args()[0].program()), [24]);
        // Entry arguments at exit.
        let d = def("f vfs_read%return count");
        assert_eq!(d.entry_args(), [2]);
        // Tracepoints: names from the stub, __data hidden.
        let d = def("t:tpevent kfree $arg*");
        assert_eq!(
            canon_of(&d),
            "t:tracepoints/tpevent kfree call_site=call_site ptr=ptr"
        );
        assert_eq!(d.args()[1].program().load, Load::Arg(2));
        let d = def("t:tpevent2 sched_wakeup p->se.group_node.next->prev");
        let p = d.args()[0].program();
        assert_eq!(p.load, Load::Arg(1));
        assert_eq!(offsets(p), [16, 8]);
        // $current (7.3's, on every kernel): the task's address, and with
        // `->` a member of its task_struct, on any kind of kernel probe
        // (no function's BTF is needed: p at an address too).
        let d = def("p:kpevent kfree task=$current");
        assert_eq!(d.args()[0].program().load, Load::Current);
        assert_eq!(offsets(d.args()[0].program()), []);
        assert_eq!(d.args()[0].fetch_type(), FetchType::X64);
        let d =
            def("p:kpevent 0xffffffff81000000 pid=$current->pid next=$current->se.group_node.next");
        let p = d.args()[0].program();
        assert_eq!(p.load, Load::Current);
        assert_eq!(offsets(p), [0]);
        assert_eq!(d.args()[0].fetch_type(), FetchType::S32);
        assert_eq!(offsets(d.args()[1].program()), [16]);
        assert_eq!(d.args()[1].fetch_type(), FetchType::X64);
        let d = def("f vfs_read%return pid=$current->pid $retval");
        assert_eq!(d.args()[0].program().load, Load::Current);
        let d = def("t:tpevent kfree $current->pid");
        assert_eq!(
            canon_of(&d),
            "t:tracepoints/tpevent kfree arg1=$current->pid"
        );
        // Errors the kernel reports with BTF.
        let code = |line: &str| parse_with(btf, line).map(|_| ()).unwrap_err().code;
        assert_eq!(code("p kfree $currentx"), ErrorCode::BadVar);
        assert_eq!(code("p kfree $current.pid"), ErrorCode::BadVar);
        assert_eq!(code("p kfree $current->nope"), ErrorCode::NoBtfField);
        assert_eq!(code("p kfree $current-pid"), ErrorCode::BadHyphen);
        assert_eq!(code("f vfs_read hoge"), ErrorCode::NoBtfarg);
        assert_eq!(code("f kfree $arg10"), ErrorCode::NoBtfarg);
        assert_eq!(code("f kfree%return $retval"), ErrorCode::NoRetval);
        assert_eq!(
            code("f vfs_read%return $retval->foo"),
            ErrorCode::NoPtrStrct
        );
        assert_eq!(code("f vfs_read file->foo"), ErrorCode::NoBtfField);
        assert_eq!(code("f vfs_read file:string"), ErrorCode::BadType4str);
        assert_eq!(code("f vfs_read buf->x"), ErrorCode::BadBtfTid);
        assert_eq!(code("f kfree object->x"), ErrorCode::BadBtfTid);
        assert_eq!(code("f do_nothing $arg*"), ErrorCode::NosupBtfarg);
        assert_eq!(code("f unknown_fn x"), ErrorCode::NoBtfEntry);
        assert_eq!(code("t only_typedef $arg*"), ErrorCode::NoArgBody);
    });
}

/// 7.3's typecasts, on the mini kernel's BTF: what they read, and their
/// errors with the kernel's carets (kprobe_syntax_errors.tc's cases, on
/// this BTF's structures).
#[test]
fn typecasts() {
    let (blob, _) = mini_kernel();
    with_btf(&blob, |btf| {
        let def = |line: &str| parse_with(btf, line).unwrap_or_else(|e| panic!("{line}: {e:?}"));
        let prog = |line: &str| {
            let d = def(line);
            let p = *d.args()[0].program();
            (p.load, offsets(&p), d.args()[0].fetch_type())
        };
        // The value taken as a pointer to the structure named.
        assert_eq!(
            prog("f vfs_read ino=(inode)file->i_ino"),
            (Load::Arg(0), vec![8], FetchType::U64)
        );
        assert_eq!(
            prog("f vfs_read ino=(file)file->f_inode->i_ino"),
            (Load::Arg(0), vec![32, 8], FetchType::U64)
        );
        // container_of: the value points at se.group_node of a task.
        assert_eq!(
            prog("f vfs_read pid=(task_struct,se.group_node)file->pid"),
            (Load::Arg(0), vec![-16], FetchType::S32)
        );
        assert_eq!(
            prog("f vfs_read%return pid=(task_struct,se)$current->pid"),
            (Load::Current, vec![-8], FetchType::S32)
        );
        // Nested: a typecast inside parentheses; a dereference and a
        // per-CPU form inside.
        assert_eq!(
            prog("f vfs_read pid=(task_struct)((file)file->f_inode)->pid"),
            (Load::Arg(0), vec![32, 0], FetchType::S32)
        );
        assert_eq!(
            prog("p vfs_read pid=(task_struct)+8(%di)->pid"),
            (Load::Reg(Reg::Di), vec![8, 0], FetchType::S32)
        );
        // Tracepoint probes and return probes too.
        assert_eq!(
            prog("t:tpc sched_wakeup pid=(task_struct)p->pid"),
            (Load::Arg(1), vec![0], FetchType::S32)
        );
        assert_eq!(
            prog("r vfs_read ino=(inode)$retval->i_ino"),
            (Load::RetVal, vec![8], FetchType::U64)
        );
        let d = def("p vfs_read pid=(task_struct)this_cpu_ptr(%di)->pid");
        let ops: Vec<DerefOp> = d.args()[0].program().derefs().map(|x| x.op).collect();
        assert_eq!(ops, [DerefOp::ThisCpuPtr]);
        assert_eq!(offsets(d.args()[0].program()), [0, 0]);
        // Errors, with the caret where the kernel puts it.
        let caret = |case: &str| {
            let line: String = case.chars().filter(|&c| c != '^').collect();
            let e = parse_with(btf, &line).map(|_| ()).unwrap_err();
            (e.code, e.column, case.find('^').unwrap())
        };
        for (case, code) in [
            (
                "f vfs_read a=(task_struct)file^",
                ErrorCode::TypecastReqField,
            ),
            (
                "f vfs_read a=(inode,^i_dirty)file->i_ino",
                ErrorCode::TypecastNotAligned,
            ),
            (
                "f vfs_read a=(task_struct,^foo_bar)file->pid",
                ErrorCode::NoBtfField,
            ),
            (
                "f vfs_read a=(^task_struct1234)file->pid",
                ErrorCode::NoPtrStrct,
            ),
            (
                "f vfs_read a=(task_struct,se^->group_node)file->pid",
                ErrorCode::TypecastBadArrow,
            ),
            (
                "f vfs_read a=(task_struct,^->pid)file->pid",
                ErrorCode::NoBtfField,
            ),
            (
                "f vfs_read a=(task_struct,^.pid)file->pid",
                ErrorCode::NoBtfField,
            ),
            (
                "f vfs_read a=(task_struct,^.)file->pid",
                ErrorCode::NoBtfField,
            ),
            (
                "f vfs_read a=(task_struct)^@symbol+10->pid",
                ErrorCode::TypecastSymOffset,
            ),
            (
                "f vfs_read a=(task_struct)file->^nope",
                ErrorCode::NoBtfField,
            ),
            (
                "f vfs_read a=(task_struct)^(file",
                ErrorCode::DerefOpenBrace,
            ),
            (
                "f vfs_read a=(task_struct)(file)^x",
                ErrorCode::TypecastReqField,
            ),
            ("f vfs_read a=(task_struct^", ErrorCode::DerefOpenBrace),
            (
                "p vfs_read+4 a=^(task_struct)%di->pid",
                ErrorCode::NosupBtfarg,
            ),
        ] {
            let (got, col, want_col) = caret(case);
            assert_eq!((got, col), (code, want_col), "{case}");
        }
    });
}

/// Every lookup, on anything: must not panic.
fn exercise(btf: &Btf<'_>) {
    for name in ["vfs_read", "kfree", "dup", "getname_flags", "", "x"] {
        let _ = btf.func(name);
        let _ = btf.tracepoint(name);
        for i in 0..6 {
            if let Some((_, t)) = btf.func_param(name, i) {
                let _ = btf.type_info(t);
            }
            let _ = btf.tracepoint_param(name, i);
        }
    }
    for id in 0..btf.nr_types().saturating_add(3) {
        let _ = btf.type_info(id);
        for m in ["name", "f_b", "i_dirty", "se", ""] {
            let _ = btf.member(id, m);
        }
    }
}

fn check_blob(blob: &[u8]) -> Result<(), BtfBlobError> {
    let len = index_len(blob)?;
    let mut index = vec![0u32; len];
    build_index(blob, &mut index)?;
    let btf = Btf::new(blob, &index)?;
    exercise(&btf);
    Ok(())
}

#[test]
fn corrupt_headers_and_sections() {
    let (blob, _) = mini_kernel();
    assert_eq!(check_blob(&blob), Ok(()));
    let err = |f: &dyn Fn(&mut Vec<u8>)| {
        let mut b = blob.clone();
        f(&mut b);
        check_blob(&b).unwrap_err()
    };
    assert_eq!(check_blob(&[]), Err(BtfBlobError::Truncated));
    assert_eq!(check_blob(&blob[..23]), Err(BtfBlobError::Truncated));
    // Big-endian BTF and other garbage.
    assert_eq!(
        err(&|b| b[..2].copy_from_slice(&[0xeb, 0x9f])),
        BtfBlobError::BadMagic
    );
    assert_eq!(err(&|b| b[2] = 2), BtfBlobError::BadVersion);
    // Header length shorter than a header, or longer than the blob.
    assert_eq!(err(&|b| poke(b, 4, 8)), BtfBlobError::Truncated);
    assert_eq!(err(&|b| poke(b, 4, u32::MAX)), BtfBlobError::Truncated);
    // Sections past the end, or wrapping around.
    let str_len = u32::from_le_bytes(blob[20..24].try_into().unwrap());
    assert_eq!(
        err(&|b| poke(b, 20, str_len + 1)),
        BtfBlobError::SectionOutOfRange
    );
    assert_eq!(
        err(&|b| poke(b, 8, u32::MAX)),
        BtfBlobError::SectionOutOfRange
    );
    assert_eq!(
        err(&|b| poke(b, 12, u32::MAX)),
        BtfBlobError::SectionOutOfRange
    );
    assert_eq!(
        err(&|b| poke(b, 16, u32::MAX - 2)),
        BtfBlobError::SectionOutOfRange
    );
    // Strings: empty, or not ending with NUL.
    assert_eq!(err(&|b| poke(b, 20, 0)), BtfBlobError::BadStrings);
    assert_eq!(
        err(&|b| {
            let n = b.len();
            b[n - 1] = b'x';
        }),
        BtfBlobError::BadStrings
    );
    // Every cut of the blob is refused, none panics.
    for n in 0..blob.len() {
        assert!(check_blob(&blob[..n]).is_err(), "cut at {n}");
    }
}

#[test]
fn corrupt_types() {
    let mut w = BtfWriter::new();
    let int = w.int("int", 4, 32, true);
    w.function("f", int, &[("a", int)]);
    let good = w.finish();
    assert_eq!(check_blob(&good), Ok(()));
    let t = 24; // the type section starts right after the header
    let err = |f: &dyn Fn(&mut Vec<u8>)| {
        let mut b = good.clone();
        f(&mut b);
        check_blob(&b).unwrap_err()
    };
    // Type 1's name past the strings.
    assert_eq!(
        err(&|b| poke(b, t, 0x00ff_0000)),
        BtfBlobError::BadName { id: 1 }
    );
    // The parameter's name (type 2 is the prototype, 16 bytes after int).
    assert_eq!(
        err(&|b| poke(b, t + 16 + 12, 0x7fff_ffff)),
        BtfBlobError::BadName { id: 2 }
    );
    // A huge vlen: the prototype's parameters run past the section.
    assert_eq!(
        err(&|b| poke(b, t + 16 + 4, (13 << 24) | 0x00ff_ffff)),
        BtfBlobError::TypeTruncated { id: 2 }
    );
    // Kind 0 and an unknown kind.
    assert_eq!(
        err(&|b| poke(b, t + 4, 0)),
        BtfBlobError::UnknownKind { id: 1, kind: 0 }
    );
    assert_eq!(
        err(&|b| poke(b, t + 4, 0x7f << 24)),
        BtfBlobError::UnknownKind { id: 1, kind: 0x7f }
    );
    // A type section that ends inside a record: shorten it by 4.
    let type_len = u32::from_le_bytes(good[12..16].try_into().unwrap());
    assert_eq!(
        err(&|b| poke(b, 12, type_len - 4)),
        BtfBlobError::TypeTruncated { id: 3 }
    );
    // Bad type references only make lookups fail.
    let mut b = good.clone();
    poke(&mut b, t + 16 + 8, 9999); // the prototype's return type
    poke(&mut b, t + 16 + 16, 7777); // the parameter's type
    assert_eq!(check_blob(&b), Ok(()));
    let index = index_of(&b);
    let btf = Btf::new(&b, &index).unwrap();
    assert_eq!(btf.func("f").map(|f| f.ret_type), Some(9999));
    assert_eq!(btf.type_info(9999), None);
    assert_eq!(btf.func_param("f", 0), Some(("a", 7777)));
}

#[test]
fn index_must_fit_the_blob() {
    let (blob, _) = mini_kernel();
    let len = index_len(&blob).unwrap();
    let mut short = vec![0u32; len - 1];
    assert_eq!(build_index(&blob, &mut short), Err(BtfBlobError::BadIndex));
    let mut long = vec![0u32; len + 1];
    assert_eq!(build_index(&blob, &mut long), Err(BtfBlobError::BadIndex));
    assert_eq!(Btf::new(&blob, &[]).err(), Some(BtfBlobError::BadIndex));
    assert_eq!(
        Btf::new(&blob, &[5, 5, 1]).err(),
        Some(BtfBlobError::BadIndex)
    );
    // An index of another blob gives wrong answers but no panic.
    let mut w = BtfWriter::new();
    w.int("int", 4, 32, true);
    let other = w.finish();
    let other_index = index_of(&other);
    let btf = Btf::new(&blob, &other_index).unwrap();
    exercise(&btf);
    let index = index_of(&blob);
    let btf = Btf::new(&other, &index).unwrap();
    exercise(&btf);
}

#[test]
fn random_damage_never_panics() {
    let (blob, _) = mini_kernel();
    let accepted = accepted_after_damage(&blob, 0x9e37_79b9_7f4a_7c15, |b| check_blob(b).is_ok());
    // Most single-byte damage lands in names or ids, which still parse.
    assert!(accepted > 0);
}

/// Damages 1000 copies of `blob` (one to four bytes each, at places and
/// with values from an xorshift sequence started at `seed`) and counts
/// the copies `accepts` takes. A panic on the way fails the test.
fn accepted_after_damage(blob: &[u8], seed: u64, accepts: impl Fn(&[u8]) -> bool) -> usize {
    let mut state = seed;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let mut accepted = 0;
    for _ in 0..1000 {
        let mut b = blob.to_vec();
        for _ in 0..1 + next() % 4 {
            let at = (next() as usize) % b.len();
            b[at] = next() as u8;
        }
        if accepts(&b) {
            accepted += 1;
        }
    }
    accepted
}

/// The running kernel's BTF, when the host has it.
#[test]
fn host_vmlinux() {
    let Ok(blob) = std::fs::read("/sys/kernel/btf/vmlinux") else {
        eprintln!("no readable /sys/kernel/btf/vmlinux: skipped");
        return;
    };
    let index = index_of(&blob);
    let btf = Btf::new(&blob, &index).unwrap();
    assert!(btf.nr_types() > 1000);
    let vfs_read: Vec<&str> = (0..4)
        .map(|i| btf.func_param("vfs_read", i).unwrap().0)
        .collect();
    assert_eq!(vfs_read, ["file", "buf", "count", "pos"]);
    let ret = btf.func("getname_flags").unwrap().ret_type;
    let Some(BtfType::Ptr { target }) = btf.type_info(ret) else {
        panic!("getname_flags returns {:?}", btf.type_info(ret));
    };
    let name = btf.member(target, "name").unwrap().unwrap();
    let Some(BtfType::Ptr { target: c }) = btf.type_info(name.ty) else {
        panic!("filename.name");
    };
    assert!(matches!(
        btf.type_info(c),
        Some(BtfType::Int { bits: 8, .. })
    ));
    // sched_wakeup(p): p->se.group_node.next
    let tp = btf.tracepoint("sched_wakeup").unwrap();
    assert_eq!(tp.nr_params, 2);
    let (p, ty) = btf.tracepoint_param("sched_wakeup", 1).unwrap();
    assert_eq!(p, "p");
    let Some(BtfType::Ptr { target: task }) = btf.type_info(ty) else {
        panic!("p");
    };
    let se = btf.member(task, "se").unwrap().unwrap();
    let group_node = btf.member(se.ty, "group_node").unwrap().unwrap();
    assert!(btf.member(group_node.ty, "next").unwrap().is_some());
    let d = parse_with(
        &btf,
        "f:fpevent getname_flags%return path=$retval->name:string",
    )
    .unwrap();
    assert_eq!(d.args()[0].fetch_type(), FetchType::String);
}

/// Ids of [`mini_module`]'s types.
#[derive(Default, Debug)]
struct ModIds {
    fid: u32,
    fid_ptr: u32,
    wrap: u32,
    read: u32,
}

/// A module's split BTF on [`mini_kernel`]: its own struct, which holds
/// base types (and an anonymous union of its own that holds a base
/// struct), functions whose parameters are of both, a function named as
/// one of the base's, a tracepoint, and names taken from the base's
/// strings.
#[allow(clippy::field_reassign_with_default)]
fn mini_module(base: &[u8], base_btf: &Btf<'_>, k: &Ids) -> (Vec<u8>, ModIds) {
    let mut w = BtfWriter::split(base_btf.nr_types(), strings_len(base));
    let mut ids = ModIds::default();
    // struct p9_fid { u32 fid; union { struct file *filp; struct path
    //   path; }; struct inode *inode; }
    let u = w.union("", 16, &[m("filp", k.file_ptr, 0), m("path", k.path, 0)]);
    ids.fid = w.structure(
        "p9_fid",
        32,
        &[
            m("fid", k.uint, 0),
            m("", u, 64),
            m("inode", k.inode_ptr, 192),
        ],
    );
    ids.fid_ptr = w.ptr(ids.fid);
    // struct wrap { struct p9_fid fid; }: a module struct by value in a
    // module struct.
    ids.wrap = w.structure("wrap", 32, &[m("fid", ids.fid, 0)]);
    let wrap_ptr = w.ptr(ids.wrap);
    ids.read = w.function(
        "v9fs_read",
        k.ssize_t,
        &[
            ("fid", ids.fid_ptr),
            ("file", k.file_ptr),
            ("count", k.size_t),
            ("w", wrap_ptr),
        ],
    );
    // A static function of the module named as a base function: the
    // base's comes first, as the kernel searches vmlinux first.
    w.function("kfree", k.int, &[("mod_only", k.int)]);
    // A tracepoint of the module.
    w.function(
        "__probestub_v9fs_event",
        0,
        &[("__data", k.void_ptr), ("fid", ids.fid_ptr)],
    );
    // A parameter named with a string of the base (offset below the
    // split's strings).
    let count_off = string_in(base, "count").expect("base has \"count\"");
    let proto = w.header("", KIND_FUNC_PROTO, false, 1, k.int);
    w.words(&[count_off, k.size_t]);
    w.func("mod_count", proto);
    (w.finish(), ids)
}

fn with_split<T>(f: impl FnOnce(&Btf<'_>, &Ids, &ModIds) -> T) -> T {
    let (base, k) = mini_kernel();
    let base_index = index_of(&base);
    let base_btf = Btf::new(&base, &base_index).expect("Btf::new");
    let (module, ids) = mini_module(&base, &base_btf, &k);
    let index = split_index_of(&base_btf, &module);
    let btf = Btf::new_split(&base_btf, &module, &index).expect("Btf::new_split");
    f(&btf, &k, &ids)
}

#[test]
fn split_lookups_cross_into_the_base() {
    with_split(|btf, k, ids| {
        assert!(btf.is_split());
        assert!(ids.fid > k.dup_first);
        assert_eq!(
            btf.func("v9fs_read"),
            Some(BtfFunc {
                nr_params: 4,
                ret_type: k.ssize_t
            })
        );
        assert_eq!(btf.func_param("v9fs_read", 0), Some(("fid", ids.fid_ptr)));
        assert_eq!(btf.func_param("v9fs_read", 1), Some(("file", k.file_ptr)));
        // The base's functions, through the split.
        assert_eq!(btf.func_param("vfs_read", 2), Some(("count", k.size_t)));
        // The base's kfree, not the module's.
        assert_eq!(
            btf.func_param("kfree", 0),
            Some(("object", k.const_void_ptr))
        );
        assert_eq!(btf.func_param("mod_count", 0), Some(("count", k.size_t)));
        assert_eq!(btf.func("nothing_here"), None);
        // Types of both blobs by id.
        assert_eq!(btf.type_info(ids.fid), Some(BtfType::Struct));
        assert_eq!(
            btf.type_info(ids.fid_ptr),
            Some(BtfType::Ptr { target: ids.fid })
        );
        assert_eq!(
            btf.type_info(k.size_t),
            Some(BtfType::Int {
                bits: 64,
                signed: false,
                offset: 0
            })
        );
        assert_eq!(btf.type_info(btf.nr_types() + 1), None);
        // Members: module struct, anonymous module union, base struct.
        let fid = btf.member(ids.fid, "fid").unwrap().unwrap();
        assert_eq!((fid.bit_offset, fid.ty), (0, k.uint));
        let filp = btf.member(ids.fid, "filp").unwrap().unwrap();
        assert_eq!((filp.bit_offset, filp.ty), (64, k.file_ptr));
        let path = btf.member(ids.fid, "path").unwrap().unwrap();
        assert_eq!(path.ty, k.path);
        let ino = btf.member(k.inode, "i_ino").unwrap().unwrap();
        assert_eq!(ino.bit_offset, 64);
        assert_eq!(btf.member(ids.fid, "nope"), Ok(None));
        assert_eq!(btf.member(k.uint, "x"), Err(BtfError));
        // Tracepoint of the module.
        assert_eq!(btf.tracepoint("v9fs_event").map(|f| f.nr_params), Some(2));
        assert_eq!(
            btf.tracepoint_param("v9fs_event", 1),
            Some(("fid", ids.fid_ptr))
        );
        assert_eq!(
            btf.tracepoint_param("kfree", 2),
            Some(("ptr", k.const_void_ptr))
        );
    });
}

#[test]
fn definitions_with_split_btf() {
    with_split(|btf, _, _| {
        let def = |line: &str| parse_with(btf, line).unwrap_or_else(|e| panic!("{line}: {e:?}"));
        let d = def("f v9fs_read $arg*");
        assert_eq!(
            canon_of(&d),
            "f:fprobes/v9fs_read__entry v9fs_read fid=fid file=file count=count w=w"
        );
        // Module struct -> anonymous module union -> base struct -> base
        // struct.
        let d = def("f v9fs_read ino=fid->filp->f_inode->i_ino id=fid->fid");
        assert_eq!(offsets(d.args()[0].program()), [8, 32, 8]);
        assert_eq!(d.args()[0].fetch_type(), FetchType::U64);
        assert_eq!(offsets(d.args()[1].program()), [0]);
        assert_eq!(d.args()[1].fetch_type(), FetchType::U32);
        // Base pointer parameter, module struct by value inside a module
        // struct.
        let d = def("p:kp v9fs_read file->f_mode w->fid.inode->i_mode");
        assert_eq!(offsets(d.args()[0].program()), [8]);
        assert_eq!(offsets(d.args()[1].program()), [24, 0]);
        let d = def("f v9fs_read%return $retval");
        assert_eq!(
            fields_of(&d)[2],
            "s64 arg1;\toffset:24;\tsize:8;\tsigned:1;"
        );
        let d = def("t v9fs_event fid->inode");
        assert_eq!(d.args()[0].program().load, Load::Arg(1));
        // Base functions still answer through the split.
        def("f vfs_read file->f_inode->i_ino");
        let code = |line: &str| parse_with(btf, line).map(|_| ()).unwrap_err().code;
        assert_eq!(code("f v9fs_read fid->nope"), ErrorCode::NoBtfField);
        assert_eq!(code("f v9fs_read nope"), ErrorCode::NoBtfarg);
        // The kernel looks BTF up by the name written: `MOD:SYM` has none.
        assert_eq!(code("p 9p:v9fs_read fid"), ErrorCode::NoBtfEntry);
    });
}

#[test]
fn corrupt_split_blobs() {
    let (base, k) = mini_kernel();
    let base_index = index_of(&base);
    let base_btf = Btf::new(&base, &base_index).expect("Btf::new");
    let (module, _) = mini_module(&base, &base_btf, &k);
    let check = |blob: &[u8]| -> Result<(), BtfBlobError> {
        let len = index_len_split(&base_btf, blob)?;
        let mut index = vec![0u32; len];
        build_index_split(&base_btf, blob, &mut index)?;
        let btf = Btf::new_split(&base_btf, blob, &index)?;
        exercise(&btf);
        let _ = btf.func("v9fs_read");
        Ok(())
    };
    assert_eq!(check(&module), Ok(()));
    // A split blob's strings need not start with NUL, but must end with one.
    let mut b = module.clone();
    let last = b.len() - 1;
    b[last] = b'x';
    assert_eq!(check(&b), Err(BtfBlobError::BadStrings));
    // A name past both string sections.
    let mut b = module.clone();
    poke(&mut b, 24, strings_len(&base) + strings_len(&module));
    assert!(matches!(check(&b), Err(BtfBlobError::BadName { .. })));
    // Without its base, the module's names are out of range (its strings
    // lack the leading NUL of a base).
    assert!(index_len(&module).is_err());
    // A split blob is no base for another.
    let index = split_index_of(&base_btf, &module);
    let split = Btf::new_split(&base_btf, &module, &index).expect("Btf::new_split");
    assert_eq!(index_len_split(&split, &module), Err(BtfBlobError::BadBase));
    let mut idx = vec![0u32; index.len()];
    assert_eq!(
        build_index_split(&split, &module, &mut idx),
        Err(BtfBlobError::BadBase)
    );
    assert!(matches!(
        Btf::new_split(&split, &module, &index),
        Err(BtfBlobError::BadBase)
    ));
    // An index of the wrong length.
    assert_eq!(
        build_index_split(&base_btf, &module, &mut idx[1..]),
        Err(BtfBlobError::BadIndex)
    );
    // Random damage: refused or answered, never a panic.
    let accepted = accepted_after_damage(&module, 0x2545_f491_4f6c_dd1d, |b| check(b).is_ok());
    assert!(accepted > 0);
}
