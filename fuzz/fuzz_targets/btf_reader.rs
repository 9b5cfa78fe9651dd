// SPDX-License-Identifier: GPL-2.0
//! Fuzz the BTF reader: any bytes, as a whole blob and as the type and
//! string sections behind a valid header, through index building, every
//! lookup and definitions parsed with the blob as the resolver; and the
//! same bytes as split BTF on the blob they make (when it is accepted as
//! a base), whose ids and string offsets then continue the base's.
#![no_main]

use dynprobe_lang::btf::{build_index, build_index_split, index_len, index_len_split};
use dynprobe_lang::*;
use libfuzzer_sys::fuzz_target;

const LINES: &[&str] = &[
    "f vfs_read $arg*",
    "f vfs_read%return $retval->name:string",
    "f vfs_read file->f_inode->i_ino a->b.c",
    "t kfree $arg*",
    "t kfree ptr->x",
    "p vfs_read $arg2:u32 buf:string",
];

fn exercise(blob: &[u8]) {
    let Ok(len) = index_len(blob) else {
        return;
    };
    let mut index = vec![0u32; len];
    build_index(blob, &mut index).expect("index_len accepted the blob");
    let btf = Btf::new(blob, &index).expect("a built index fits its blob");
    lookups(&btf);
    // The same bytes as split BTF on themselves.
    let Ok(len) = index_len_split(&btf, blob) else {
        return;
    };
    let mut split_index = vec![0u32; len];
    build_index_split(&btf, blob, &mut split_index).expect("index_len_split accepted it");
    let split = Btf::new_split(&btf, blob, &split_index).expect("a built index fits");
    lookups(&split);
}

fn lookups(btf: &Btf<'_>) {
    for name in ["vfs_read", "kfree", "", "a"] {
        let _ = btf.func(name);
        let _ = btf.tracepoint(name);
        for i in 0..4 {
            let _ = btf.func_param(name, i);
            let _ = btf.tracepoint_param(name, i);
        }
    }
    for id in 0..btf.nr_types().min(64) + 2 {
        let _ = btf.type_info(id);
        let _ = btf.member(id, "a");
    }
    let mut def = Box::new(Definition::new());
    for line in LINES {
        let _ = parse(Control::DynamicEvents, line.as_bytes(), btf, &mut def);
    }
}

fuzz_target!(|data: &[u8]| {
    exercise(data);
    // The same bytes behind a valid header: a type section of the length
    // the first two bytes say, then strings.
    if data.len() < 2 {
        return;
    }
    let rest = &data[2..];
    let split = usize::from(u16::from_le_bytes([data[0], data[1]])) % (rest.len() + 1);
    let (types, strings) = rest.split_at(split);
    let mut blob = Vec::with_capacity(data.len() + 32);
    blob.extend_from_slice(&0xeb9fu16.to_le_bytes());
    blob.extend_from_slice(&[1, 0]);
    let str_len = strings.len() as u32 + 2;
    for w in [24u32, 0, types.len() as u32, types.len() as u32, str_len] {
        blob.extend_from_slice(&w.to_le_bytes());
    }
    blob.extend_from_slice(types);
    blob.push(0);
    blob.extend_from_slice(strings);
    blob.push(0);
    exercise(&blob);
});
