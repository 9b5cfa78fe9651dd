/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The interface between dynprobe's C shims and its Rust core. bindgen reads
 * this header to produce the Rust declarations, so both sides share one
 * definition.
 */
#ifndef DYNPROBE_SHIM_H
#define DYNPROBE_SHIM_H

#include <linux/types.h>

/* The files under tracefs dynprobe/. */
enum dynprobe_file {
	DYNPROBE_FILE_FUNCTION_EVENTS,
	DYNPROBE_FILE_KPROBE_EVENTS,
	DYNPROBE_FILE_DYNAMIC_EVENTS,
	DYNPROBE_FILE_KPROBE_PROFILE,
	DYNPROBE_FILE_README,
	DYNPROBE_NR_FILES,
};

/* The longest command line a control file accepts, as the kernel's. */
#define DYNPROBE_MAX_LINE 4094

/* Implemented in C, called from Rust. */
int dynprobe_resolve_symbols(void);
int dynprobe_tracefs_init(void);
void dynprobe_tracefs_exit(void);
void dynprobe_log_err(const char *subsystem, const char *cmd, u8 err_type,
		      u16 pos);
unsigned long dynprobe_lookup_symbol(const char *name);

/*
 * Implemented in Rust, called from the file operations.
 *
 * dynprobe_rs_open() runs when a file is opened: @truncate clears the
 * definitions (failing with -EBUSY, and removing nothing, if one is in
 * use); @read asks for a snapshot of the contents, returned through
 * @text/@data/@len and freed with dynprobe_rs_release().
 * dynprobe_rs_command() runs one command line (no newline, comments
 * stripped, NUL-terminated at @line[@len]).
 */
struct dynprobe_text;
int dynprobe_rs_open(enum dynprobe_file file, bool truncate, bool read,
		     struct dynprobe_text **text, const u8 **data, size_t *len);
void dynprobe_rs_release(struct dynprobe_text *text);
int dynprobe_rs_command(enum dynprobe_file file, const u8 *line, size_t len);

#endif /* DYNPROBE_SHIM_H */
