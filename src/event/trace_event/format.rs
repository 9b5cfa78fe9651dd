// SPDX-License-Identifier: GPL-2.0

//! An event's format as the tracing core reads it: the text of its print
//! fmt and of its fields' types and names ([`Shape`]), the fields array
//! the core lays the fields out from (each at the offset the record
//! layout gave it), and [`define_fields`], which defines the fields the
//! array cannot lay out. events/GRP/EVENT/format, filters and triggers
//! all read the fields defined from these.

use kernel::ffi::{c_char, c_int};
use kernel::prelude::*;

use super::TraceEvent;
use crate::lang::{Field, TRACE_ENTRY_SIZE};
use crate::probe::compiled::CompiledDef;
use crate::sys::bindings as b;
use crate::sys::exact_text;

/// `TRACE_FUNCTION_TYPE`: a fields-array entry that calls `define_fields`.
const TRACE_FUNCTION_TYPE: *const c_char = usize::MAX as *const c_char;

/// What an event's fields and `cat trace` text come from: its first
/// probe's definition, and the text of its print fmt and format fields
/// ([`shape_text`]; the tracing core keeps pointers to them, so they
/// live as long as the event: in its parts, `trace_event/parts.rs`).
#[derive(Clone, Copy)]
pub(super) struct Shape<'a> {
    pub(super) def: &'a CompiledDef,
    /// The print fmt with its NUL, then for each field, in
    /// `DefView::fields()` order, `type\0` unless its type is one of
    /// [`STATIC_TEXT`], then `name\0` unless it is a header field named
    /// there: most events' fields take only their arguments' names. One
    /// text, not two: an event's own field text is a few bytes.
    text: &'a [u8],
}

/// The field types and header field names the language has, as the C
/// strings the tracing core points to: fields that have them need no text
/// of the event's own.
static STATIC_TEXT: [&CStr; 23] = [
    c"u8",
    c"u16",
    c"u32",
    c"u64",
    c"s8",
    c"s16",
    c"s32",
    c"s64",
    c"__data_loc char[]",
    c"char",
    c"short",
    c"int",
    c"long",
    c"unsigned char",
    c"unsigned short",
    c"unsigned int",
    c"unsigned long",
    c"size_t",
    c"__probe_ip",
    c"__probe_func",
    c"__probe_ret_ip",
    c"__parent_ip",
    c"__ip",
];

/// `text` as one of [`STATIC_TEXT`].
fn static_text(text: &str) -> Option<&'static CStr> {
    STATIC_TEXT
        .iter()
        .copied()
        .find(|c| c.to_bytes() == text.as_bytes())
}

/// A field's type as a static C string, if it has one (not an array).
fn static_type(field: &Field<'_>) -> Option<&'static CStr> {
    (field.count == 0)
        .then(|| static_text(field.c_type))
        .flatten()
}

/// A header field's name as a static C string.
fn static_name(field: &Field<'_>) -> Option<&'static CStr> {
    field.header.then(|| static_text(field.name)).flatten()
}

/// The NUL-terminated piece at the start of `text`, which moves past it.
fn next_piece(text: &mut &[u8]) -> *const c_char {
    let ptr = text.as_ptr().cast();
    let len = text.iter().position(|&c| c == 0).unwrap_or(text.len());
    *text = text.get(len + 1..).unwrap_or(&[]);
    ptr
}

/// The text of the shape of an event of `def`, as [`Shape`] reads it.
pub(super) fn shape_text(def: &CompiledDef) -> Result<KVec<u8>> {
    exact_text(|mut w| {
        def.view().print_fmt(&mut w)?;
        w.write_str("\0")?;
        def.view().fields().try_for_each(|field| {
            if static_type(&field).is_none() {
                field.write_type(&mut w)?;
                w.write_str("\0")?;
            }
            if static_name(&field).is_none() {
                write!(w, "{}\0", field.name)?;
            }
            Ok(())
        })
    })
}

impl<'a> Shape<'a> {
    /// The shape of `def` whose text ([`shape_text`]) is `text`.
    pub(super) fn new(def: &'a CompiledDef, text: &'a [u8]) -> Self {
        Shape { def, text }
    }

    /// The print fmt, NUL-terminated.
    pub(super) fn print_fmt(&self) -> *const c_char {
        self.text.as_ptr().cast()
    }

    /// The fields' own text, after the print fmt.
    fn field_text(&self) -> &'a [u8] {
        let fmt_len = self
            .text
            .iter()
            .position(|&c| c == 0)
            .unwrap_or(self.text.len());
        self.text.get(fmt_len + 1..).unwrap_or(&[])
    }

    /// Each field with its NUL-terminated type and name.
    pub(super) fn fields(self) -> impl Iterator<Item = (Field<'a>, *const c_char, *const c_char)> {
        let mut text = self.field_text();
        let view = self.def.view();
        (0..view.nr_fields()).filter_map(move |i| {
            let field = view.field(i)?;
            let type_ptr = match static_type(&field) {
                Some(c) => c.as_char_ptr(),
                None => next_piece(&mut text),
            };
            let name_ptr = match static_name(&field) {
                Some(c) => c.as_char_ptr(),
                None => next_piece(&mut text),
            };
            Some((field, type_ptr, name_ptr))
        })
    }
}

/// The alignment that makes the tracing core's layout of a fields array
/// (each field at its offset rounded up to its alignment) put a field
/// ending at `end` next at `offset`, if there is one.
fn align_reaching(end: u32, offset: u32) -> Option<u32> {
    if offset == end {
        return Some(1);
    }
    let align = 1u32.checked_shl(offset.trailing_zeros())?;
    (offset > end && offset - align < end).then_some(align)
}

/// The fields array of every event none of whose fields declares an
/// array length: [`define_fields`] defines them all, as the kernel's probe
/// events have theirs defined, and the events share it instead of each
/// allocating one.
pub(super) struct SharedFields(pub(super) [b::trace_event_fields; 2]);

// SAFETY: never written; the tracing core only reads a fields array.
unsafe impl Sync for SharedFields {}

pub(super) static DEFINE_ALL: SharedFields = SharedFields([
    b::trace_event_fields {
        type_: TRACE_FUNCTION_TYPE,
        __bindgen_anon_1: b::trace_event_fields__bindgen_ty_1 {
            define_fields: Some(define_fields),
        },
    },
    // SAFETY: an all-zero `trace_event_fields` is valid (null pointers,
    // zero numbers); its null type ends the array.
    unsafe { core::mem::zeroed() },
]);

/// How many fields the tracing core has defined for an event (`head`:
/// its list of them).
///
/// # Safety
///
/// `head` is a registered event's list of fields; event_mutex is held,
/// under which the list changes.
pub(super) unsafe fn defined_fields(head: *mut b::list_head) -> usize {
    // SAFETY: per the function's contract, the list is initialised and
    // stable while it is walked.
    unsafe {
        let mut n = 0;
        let mut at = (*head).next;
        while !at.is_null() && at != head {
            n += 1;
            at = (*at).next;
        }
        n
    }
}

/// The event's own fields array, where a field declares an array length
/// (a function event's `char name[64]`: [`fields_array_entries`]); empty
/// where the shared one does, since `trace_define_field()` takes no
/// length and needs no entry. Also returns the index of the first field
/// [`define_fields`] defines.
pub(super) fn fields_array(shape: Shape<'_>) -> Result<(KVec<b::trace_event_fields>, usize)> {
    let view = shape.def.view();
    if view.fields().all(|f| view.declared_len(&f) == 0) {
        return Ok((KVec::new(), 0));
    }
    fields_array_entries(shape)
}

/// An event's fields array: each field the tracing core can lay out at
/// its offset is an entry of its own, which carries its declared array
/// length (`trace_define_field()` takes none); from the first that it
/// cannot, `define_fields` defines the rest. Also returns that index.
fn fields_array_entries(shape: Shape<'_>) -> Result<(KVec<b::trace_event_fields>, usize)> {
    let view = shape.def.view();
    // How many fields the array can lay out: it is allocated to its size
    // (an array of them sized for the largest event would take a bigger
    // slab object for every small one).
    let mut end = TRACE_ENTRY_SIZE;
    let mut first_defined = view.nr_fields();
    for (i, (field, _, _)) in shape.fields().enumerate() {
        if align_reaching(end, field.offset).is_none() {
            first_defined = i;
            break;
        }
        end = field.offset + field.size;
    }
    let defined_later = usize::from(first_defined < view.nr_fields());
    let mut array = KVec::with_capacity(first_defined + defined_later + 1, GFP_KERNEL)?;
    end = TRACE_ENTRY_SIZE;
    for (field, type_ptr, name_ptr) in shape.fields().take(first_defined) {
        let align = align_reaching(end, field.offset).unwrap_or(1);
        // SAFETY: an all-zero `trace_event_fields` is valid (null
        // pointers, zero numbers).
        let mut entry: b::trace_event_fields = unsafe { core::mem::zeroed() };
        entry.type_ = type_ptr;
        // SAFETY: writing the plain-field variant of the union.
        let plain = unsafe { &mut entry.__bindgen_anon_1.__bindgen_anon_1 };
        plain.name = name_ptr;
        plain.size = field.size as c_int;
        plain.align = align as c_int;
        plain.set_is_signed(field.signed.into());
        plain.filter_type = b::FILTER_OTHER as c_int;
        plain.len = view.declared_len(&field) as c_int;
        array.push(entry, GFP_KERNEL)?;
        end = field.offset + field.size;
    }
    if defined_later != 0 {
        // SAFETY: as above.
        let mut entry: b::trace_event_fields = unsafe { core::mem::zeroed() };
        entry.type_ = TRACE_FUNCTION_TYPE;
        entry.__bindgen_anon_1.define_fields = Some(define_fields);
        array.push(entry, GFP_KERNEL)?;
    }
    // SAFETY: as above; a null type ends the array.
    array.push(unsafe { core::mem::zeroed() }, GFP_KERNEL)?;
    Ok((array, first_defined))
}

/// Defines the fields the fields array could not lay out.
///
/// # Safety
///
/// Called by the tracing core for a live event's call.
unsafe extern "C" fn define_fields(call: *mut b::trace_event_call) -> c_int {
    // SAFETY: per the function's contract.
    let ev = unsafe { TraceEvent::from_call(call) };
    for (field, type_ptr, name_ptr) in ev.shape().fields().skip(ev.parts.first_defined()) {
        // SAFETY: both strings are NUL-terminated in the shape, which
        // lives as long as the event.
        let ret = unsafe {
            b::trace_define_field(
                call,
                type_ptr,
                name_ptr,
                field.offset as c_int,
                field.size as c_int,
                field.signed.into(),
                b::FILTER_OTHER as c_int,
            )
        };
        if ret != 0 {
            return ret;
        }
    }
    0
}

/// The fields array the tracing core lays out (`trace_event_fields` with
/// an alignment each) must put every field at the offset the record
/// layout gave it: the host tests check the layout, these its translation.
#[kernel::macros::kunit_tests(dynprobe_fields_array)]
mod kunit {
    use super::*;
    use crate::lang::{parse, Command, Control, NoResolver};
    use crate::probe::compiled::{compile, new_definition};
    use kernel::sync::Arc;

    /// Where the tracing core puts a field ending at `end` with `align`.
    fn core_offset(end: u32, align: u32) -> u32 {
        end.div_ceil(align) * align
    }

    #[test]
    fn align_reaching_rounds_up_to_the_next_offset() {
        assert_eq!(align_reaching(8, 8), Some(1));
        assert_eq!(align_reaching(9, 16), Some(16));
        assert_eq!(align_reaching(17, 20), Some(4));
        assert_eq!(align_reaching(21, 22), Some(2));
        // Offsets no alignment reaches: a 4-byte gap after an 8-aligned
        // end, an offset before the end, offset 0.
        assert_eq!(align_reaching(8, 12), None);
        assert_eq!(align_reaching(16, 12), None);
        assert_eq!(align_reaching(4, 0), None);
        for end in 0..64u32 {
            for offset in end..end + 40 {
                if let Some(align) = align_reaching(end, offset) {
                    assert_eq!(core_offset(end, align), offset);
                }
            }
        }
    }

    /// A definition and its shape's text, as an event's parts hold them.
    struct Owned {
        def: Arc<CompiledDef>,
        text: KVec<u8>,
    }

    impl Owned {
        fn shape(&self) -> Shape<'_> {
            Shape::new(&self.def, &self.text)
        }
    }

    /// The shape of an event defined by `line`.
    fn shape_of(line: &[u8], control: Control) -> Result<Owned> {
        let mut def = new_definition()?;
        match parse(control, line, &NoResolver, &mut def) {
            Ok(Command::Define) => {}
            _ => return Err(EINVAL),
        }
        let def = compile(&def)?;
        let text = shape_text(&def)?;
        Ok(Owned { def, text })
    }

    /// The fields array of a definition, laid out as the tracing core
    /// does: each entry at the offset and of the size of its field.
    fn check_layout(line: &[u8], control: Control) -> Result {
        let owned = shape_of(line, control)?;
        let shape = owned.shape();
        let (array, first_defined) = fields_array_entries(shape)?;
        let view = shape.def.view();
        assert_eq!(first_defined, view.nr_fields());
        // One entry per field and the null that ends the array.
        assert_eq!(array.len(), view.nr_fields() + 1);
        let mut end = TRACE_ENTRY_SIZE;
        for (entry, field) in array.iter().zip(view.fields()) {
            // SAFETY: fields_array() wrote the plain-field variant.
            let plain = unsafe { &entry.__bindgen_anon_1.__bindgen_anon_1 };
            assert_eq!(plain.size, field.size as c_int);
            assert_eq!(core_offset(end, plain.align as u32), field.offset);
            assert_eq!(plain.len, view.declared_len(&field) as c_int);
            end = field.offset + field.size;
        }
        assert!(array.last().is_some_and(|e| e.type_.is_null()));
        Ok(())
    }

    #[test]
    fn fields_array_lays_out_kprobe_arguments() -> Result {
        check_layout(
            b"p:kunit/kp 0x1000 a=%di:u8 b=%si:u64 c=%dx:s16 d=%cx:x32 e=+0(%di):string",
            Control::KprobeEvents,
        )
    }

    #[test]
    fn fields_array_lays_out_char_arrays() -> Result {
        check_layout(
            b"p:kunit/arr 0x1000 a=%di:u8 b=+0(%si):u8[3] c=%dx:u64 d=+0(%cx):char[5]",
            Control::KprobeEvents,
        )
    }

    #[test]
    fn fields_array_lays_out_function_event_arrays() -> Result {
        check_layout(
            b"link_path_walk(char[64] name, x8[6] mac+558, int n)",
            Control::FunctionEvents,
        )
    }

    /// Each field's type and name as the tracing core reads them (static
    /// or the event's own text), and the event's own text.
    fn field_texts(line: &[u8], control: Control) -> Result<KVec<u8>> {
        let owned = shape_of(line, control)?;
        let shape = owned.shape();
        for (field, type_ptr, name_ptr) in shape.fields() {
            // SAFETY: `fields()` points into `shape`'s text or statics,
            // NUL-terminated.
            let (ty, name) =
                unsafe { (CStr::from_char_ptr(type_ptr), CStr::from_char_ptr(name_ptr)) };
            let mut want = KVec::new();
            field
                .write_type(&mut crate::sys::VecWriter(&mut want))
                .map_err(|_| ENOMEM)?;
            assert_eq!(ty.to_bytes(), &want[..]);
            assert_eq!(name.to_bytes(), field.name.as_bytes());
        }
        let mut own = KVec::new();
        own.extend_from_slice(shape.field_text(), GFP_KERNEL)?;
        Ok(own)
    }

    #[test]
    fn common_types_and_header_names_take_no_text_of_the_event() -> Result {
        let text = field_texts(b"vfs_read(x64 file, u64 count)", Control::FunctionEvents)?;
        assert_eq!(&text[..], b"file\0count\0");
        let line = b"p:kunit/kp 0x1000 a=%ax:s32 b=+0(%si):u8[3] e=+0(%di):string";
        let text = field_texts(line, Control::KprobeEvents)?;
        assert_eq!(&text[..], b"a\0u8[3]\0b\0e\0");
        Ok(())
    }

    /// Which array an event gets: its own only where a field declares a
    /// length, the shared one otherwise.
    fn own_array_len(line: &[u8], control: Control) -> Result<usize> {
        let (array, first_defined) = fields_array(shape_of(line, control)?.shape())?;
        if array.is_empty() {
            assert_eq!(first_defined, 0);
        }
        Ok(array.len())
    }

    #[test]
    fn only_declared_lengths_need_an_array_of_their_own() -> Result {
        let kprobe = b"p:kunit/arr 0x1000 a=%di:u8 b=+0(%si):u8[3] e=+0(%di):string";
        assert_eq!(own_array_len(kprobe, Control::KprobeEvents)?, 0);
        assert_eq!(
            own_array_len(b"vfs_read(x64 file, u64 n)", Control::FunctionEvents)?,
            0
        );
        // Two header fields, the array, the terminator.
        assert_eq!(
            own_array_len(b"vfs_read(char[8] f)", Control::FunctionEvents)?,
            4
        );
        Ok(())
    }
}
