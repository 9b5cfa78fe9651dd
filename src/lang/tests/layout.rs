// SPDX-License-Identifier: GPL-2.0
//! Golden tests: format fields, print fmt and canonical text of probe events
//! as Linux 7.2 builds them.

mod common;
use common::*;
use dynprobe_lang::*;

#[test]
fn kprobe_basic_types() {
    let d = def_of(
        Control::KprobeEvents,
        "p:myprobe vfs_read %di %si:u32 +0(%di):string $comm arr=+0(%si):u8[4]",
    );
    assert_eq!(d.kind(), ProbeKind::Kprobe);
    assert_eq!((d.group(), d.event()), ("kprobes", "myprobe"));
    assert_eq!(
        fields_of(&d),
        [
            "unsigned long __probe_ip;\toffset:8;\tsize:8;\tsigned:0;",
            "u64 arg1;\toffset:16;\tsize:8;\tsigned:0;",
            "u32 arg2;\toffset:24;\tsize:4;\tsigned:0;",
            "__data_loc char[] arg3;\toffset:28;\tsize:4;\tsigned:1;",
            "__data_loc char[] arg4;\toffset:32;\tsize:4;\tsigned:1;",
            "u8[4] arr;\toffset:36;\tsize:4;\tsigned:0;",
        ]
    );
    assert_eq!(
        fmt_of(&d),
        r#""(%lx) arg1=0x%Lx arg2=%u arg3=\"%s\" arg4=\"%s\" arr={%u,%u,%u,%u}", REC->__probe_ip, REC->arg1, REC->arg2, __get_str(arg3), __get_str(arg4), REC->arr[0], REC->arr[1], REC->arr[2], REC->arr[3]"#
    );
    assert_eq!(
        canon_of(&d),
        "p:kprobes/myprobe vfs_read arg1=%di arg2=%si:u32 arg3=+0(%di):string arg4=$comm arr=+0(%si):u8[4]"
    );
    assert_eq!(d.view().fixed_size(), 40);
}

#[test]
fn kprobe_all_scalar_types() {
    let d = def_of(
        Control::KprobeEvents,
        "p vfs_read a=%ax:s8 b=%ax:s16 c=%ax:s32 d=%ax:s64 e=%ax:x8 f=%ax:x16 g=%ax:x32 h=%ax:char i=%ax:symbol j=%ax:u16 k=%ax:u64 l=%ax:symstr m=+0(%ax):ustring",
    );
    assert_eq!(d.event(), "p_vfs_read_0");
    assert_eq!(
        fmt_of(&d),
        r#""(%lx) a=%d b=%d c=%d d=%Ld e=0x%x f=0x%x g=0x%x h='%c' i=%pS j=%u k=%Lu l=\"%s\" m=\"%s\"", REC->__probe_ip, REC->a, REC->b, REC->c, REC->d, REC->e, REC->f, REC->g, REC->h, REC->i, REC->j, REC->k, __get_str(l), __get_str(m)"#
    );
    let f = fields_of(&d);
    assert_eq!(f[1], "s8 a;\toffset:16;\tsize:1;\tsigned:1;");
    assert_eq!(f[4], "s64 d;\toffset:23;\tsize:8;\tsigned:1;");
    assert_eq!(f[5], "u8 e;\toffset:31;\tsize:1;\tsigned:0;");
    assert_eq!(f[8], "u8 h;\toffset:38;\tsize:1;\tsigned:0;");
    assert_eq!(f[9], "u64 i;\toffset:39;\tsize:8;\tsigned:0;");
    assert_eq!(
        f[12],
        "__data_loc char[] l;\toffset:57;\tsize:4;\tsigned:1;"
    );
}

#[test]
fn kretprobe_and_names() {
    let d = def_of(Control::KprobeEvents, "r vfs_read $retval");
    assert_eq!(d.kind(), ProbeKind::Kretprobe);
    assert_eq!(d.event(), "r_vfs_read_0");
    assert_eq!(
        fields_of(&d),
        [
            "unsigned long __probe_func;\toffset:8;\tsize:8;\tsigned:0;",
            "unsigned long __probe_ret_ip;\toffset:16;\tsize:8;\tsigned:0;",
            "s64 arg1;\toffset:24;\tsize:8;\tsigned:1;",
        ]
    );
    assert_eq!(
        fmt_of(&d),
        r#""(%lx <- %lx) arg1=%Ld", REC->__probe_func, REC->__probe_ret_ip, REC->arg1"#
    );
    assert_eq!(canon_of(&d), "r:kprobes/r_vfs_read_0 vfs_read arg1=$retval");
    // %return suffix, maxactive, GRP.EVENT split, module prefix sanitized.
    let d = def_of(Control::KprobeEvents, "p vfs_read%return");
    assert_eq!(
        (d.kind(), d.event()),
        (ProbeKind::Kretprobe, "r_vfs_read_0")
    );
    assert_eq!(canon_of(&d), "r:kprobes/r_vfs_read_0 vfs_read");
    let d = def_of(Control::KprobeEvents, "r16:grp.ev vfs_read");
    assert_eq!(
        (d.group(), d.event(), d.view().maxactive()),
        ("grp", "ev", 16)
    );
    assert_eq!(canon_of(&d), "r16:grp/ev vfs_read");
    let d = def_of(Control::KprobeEvents, "p ext4:ext4_sync_file+8");
    assert_eq!(d.event(), "p_ext4_ext4_sync_file_8");
    assert_eq!(
        (d.module(), d.symbol(), d.view().offset()),
        (Some("ext4"), Some("ext4_sync_file"), 8)
    );
    assert_eq!(
        canon_of(&d),
        "p:kprobes/p_ext4_ext4_sync_file_8 ext4:ext4_sync_file+8"
    );
    let d = def_of(Control::KprobeEvents, "p 0xffffffff81234560");
    assert_eq!(d.view().address(), Some(0xffff_ffff_8123_4560));
    assert_eq!(d.event(), "p_0xffffffff81234560");
    let d = def_of(Control::KprobeEvents, "p:grp-1/ev vfs_read");
    assert_eq!(d.group(), "grp-1");
}

#[test]
fn btf_arguments() {
    let d = def_of(Control::KprobeEvents, "p vfs_read $arg*");
    assert_eq!(
        canon_of(&d),
        "p:kprobes/p_vfs_read_0 vfs_read file=file buf=buf count=count pos=pos"
    );
    let f = fields_of(&d);
    assert_eq!(f[1], "u64 file;\toffset:16;\tsize:8;\tsigned:0;");
    assert_eq!(f[3], "u64 count;\toffset:32;\tsize:8;\tsigned:0;");
    assert_eq!(
        fmt_of(&d),
        r#""(%lx) file=0x%Lx buf=0x%Lx count=%Lu pos=0x%Lx", REC->__probe_ip, REC->file, REC->buf, REC->count, REC->pos"#
    );
    assert_eq!(d.args()[2].program().load, Load::Arg(2));
    // $argN with a type is renamed and typed.
    let d = def_of(Control::KprobeEvents, "p vfs_read $arg3:u32");
    assert_eq!(
        canon_of(&d),
        "p:kprobes/p_vfs_read_0 vfs_read count=count:u32"
    );
    // Member access: file->f_mode is a u32 read at +4.
    let d = def_of(
        Control::DynamicEvents,
        "f vfs_read mode=file->f_mode ino=file->f_inode->i_ino",
    );
    assert_eq!(d.event(), "vfs_read__entry");
    let p = d.args()[0].program();
    assert_eq!(p.load, Load::Arg(0));
    assert_eq!(
        p.store,
        Store::Mem {
            space: Space::Kernel,
            offset: 4
        }
    );
    assert_eq!(d.args()[0].fetch_type(), FetchType::U32);
    let p = d.args()[1].program();
    assert_eq!(
        p.derefs().collect::<Vec<_>>(),
        [Deref::read(Space::Kernel, 40)]
    );
    assert_eq!(
        p.store,
        Store::Mem {
            space: Space::Kernel,
            offset: 64
        }
    );
    // char __user *buf as ustring gets an extra dereference.
    let d = def_of(Control::DynamicEvents, "f vfs_read buf:ustring");
    assert_eq!(
        d.args()[0].program().store,
        Store::String {
            space: Space::User,
            offset: 0
        }
    );
    // Entry arguments at exit go through entry data.
    let d = def_of(
        Control::DynamicEvents,
        "f vfs_read%return $retval $arg3 file",
    );
    assert_eq!(d.event(), "vfs_read__exit");
    assert_eq!(d.entry_args(), &[2, 0]);
    assert_eq!(d.args()[1].program().load, Load::EntryData(0));
    assert_eq!(d.args()[2].program().load, Load::EntryData(1));
    assert_eq!(
        canon_of(&d),
        "f:fprobes/vfs_read__exit vfs_read%return arg1=$retval count=count file=file"
    );
    // $retval makes an fprobe a return probe.
    let d = def_of(Control::DynamicEvents, "f vfs_read ret=$retval");
    assert_eq!(d.kind(), ProbeKind::FprobeExit);
    // Bitfield member through BTF.
    let d = def_of(Control::DynamicEvents, "f vfs_read b=file->f_inode->i_bits");
    let p = d.args()[0].program();
    assert_eq!(
        p.store,
        Store::Mem {
            space: Space::Kernel,
            offset: 12
        }
    );
    assert_eq!(
        p.bitfield,
        Some(Bitfield {
            basesize: 8,
            lshift: 58,
            rshift: 61
        })
    );
}

#[test]
fn dentry_and_bitfields() {
    let d = def_of(Control::KprobeEvents, "p:testprobe dput name=$arg1:%pd");
    assert_eq!(
        canon_of(&d),
        "p:kprobes/testprobe dput name=+0x0(+0x28($arg1)):string"
    );
    let d = def_of(Control::KprobeEvents, "p:testprobe vfs_read $arg1:%pD");
    assert_eq!(
        canon_of(&d),
        "p:kprobes/testprobe vfs_read arg1=+0x0(+0x28(+0x48(file))):string"
    );
    let d = def_of(
        Control::KprobeEvents,
        "p:testprobe vfs_read $stack0:b4@4/32",
    );
    let a = &d.args()[0];
    assert_eq!(a.fetch_type(), FetchType::U32);
    assert_eq!(
        a.program().bitfield,
        Some(Bitfield {
            basesize: 4,
            lshift: 24,
            rshift: 28
        })
    );
    assert_eq!(
        fields_of(&d)[1],
        "u32 arg1;\toffset:16;\tsize:4;\tsigned:0;"
    );
}

#[test]
fn strings_and_symbols() {
    let d = def_of(
        Control::KprobeEvents,
        "p vfs_read s=\\\"hello\" i=\\123 m=@_sdata+8:u32 ss=+0(%di):string[2]",
    );
    let a = &d.args()[0];
    assert!(matches!(a.program().load, Load::ImmString(_)));
    assert_eq!(d.args()[1].program().load, Load::Imm(123));
    assert_eq!(
        d.args()[2].program().load,
        Load::Symbol {
            name: TextRange { start: 1, len: 6 },
            offset: 8,
            addr: 0xffff_ffff_8200_0008
        }
    );
    assert_eq!(
        fields_of(&d)[4],
        "__data_loc char[][2] ss;\toffset:32;\tsize:8;\tsigned:1;"
    );
    let mut s = String::new();
    d.view().print_fmt(&mut s).unwrap();
    assert!(s.ends_with("__get_str(ss[0]), __get_str(ss[1])"), "{s}");
}

#[test]
fn tracepoint_probe() {
    let d = def_of(Control::DynamicEvents, "t kfree");
    assert_eq!(
        (d.group(), d.event(), d.kind()),
        ("tracepoints", "kfree", ProbeKind::Tprobe)
    );
    assert_eq!(canon_of(&d), "t:tracepoints/kfree kfree");
    let d = def_of(Control::DynamicEvents, "t:mygrp/myev sched_switch $arg2");
    assert_eq!(d.args()[0].program().load, Load::Arg(2));
}

#[test]
fn definition_size_is_bounded() {
    let n = core::mem::size_of::<Definition>();
    println!("size_of::<Definition>() = {n}");
    assert!(n < 80 * 1024, "{n}");
}

#[test]
fn fetch_program_dump() {
    let dump = |c: Control, line: &str| {
        let d = def_of(c, line);
        let mut s = String::new();
        d.view().write_fetch_programs(&mut s).unwrap();
        s
    };
    assert_eq!(
        dump(
            Control::KprobeEvents,
            "p:g/e vfs_read a=%di b=+8(+0(%si)):u32 s=+0(%di):string c=$comm n=%dx:b4@4/32 u=+4(%ax):u16[2] v=+u4(%ax):u16"
        ),
        "#  a: REG(112) -> ST_RAW(size=8) -> END\n\
         #  b: REG(104) -> DEREF(offset=0) -> ST_MEM(offset=8,size=4) -> END\n\
         #  s: REG(112) -> ST_STRING(offset=0,size=4) -> END\n\
         #  c: COMM -> ST_STRING(offset=0,size=4) -> END\n\
         #  n: REG(96) -> ST_RAW(size=4) -> MOD_BF(basesize=4,lshift=24,rshift=28) -> END\n\
         #  u: REG(80) -> ST_MEM(offset=4,size=2) -> LP_ARRAY(2) -> END\n\
         #  v: REG(80) -> ST_UMEM(offset=4,size=2) -> END\n"
    );
    assert_eq!(
        dump(
            Control::DynamicEvents,
            "f vfs_read%return r=$retval c=$arg3 t=$current p=this_cpu_read(@jiffies+8):s32"
        )
        .lines()
        .collect::<Vec<_>>(),
        [
            "#  r: RETVAL -> ST_RAW(size=8) -> END",
            "#  c: EDATA(slot=0) -> ST_RAW(size=8) -> END",
            "#  t: CURRENT -> ST_RAW(size=8) -> END",
            "#  p: SYMBOL(jiffies+8) -> CPU_PTR -> ST_MEM(offset=0,size=4) -> END",
        ]
    );
    assert_eq!(
        dump(
            Control::FunctionEvents,
            "vfs_read(x64 file, NULL, u64 count)"
        ),
        "#  file: ARG(0) -> ST_RAW(size=8) -> END\n\
         #  count: ARG(2) -> ST_RAW(size=8) -> END\n"
    );
}
