// SPDX-License-Identifier: GPL-2.0
/*
 * What src/sys/tracefs.rs and src/control/error_log.rs need of C: the tracefs
 * directory, its files, their file operations and the error_log entries
 * are Rust's; only what bindgen cannot reach stays here.
 *
 * What makes it C: kmemleak_not_leak() and security_locked_down() are
 * static inlines without CONFIG_DEBUG_KMEMLEAK and CONFIG_SECURITY, and
 * the FMODE_* values are __force casts only C evaluates.
 */
#include <linux/fs.h>
#include <linux/kmemleak.h>
#include <linux/security.h>
#include <linux/tracefs.h>
#include "dynprobe/shim.h"

/* FMODE_* are __force casts, which bindgen cannot evaluate. */
static_assert(DYNPROBE_FMODE_READ == (__force unsigned int)FMODE_READ);
static_assert(DYNPROBE_FMODE_WRITE == (__force unsigned int)FMODE_WRITE);

/* A static inline without CONFIG_DEBUG_KMEMLEAK. */
void dynprobe_kmemleak_not_leak(const void *ptr)
{
	kmemleak_not_leak(ptr);
}

int dynprobe_lockdown_tracefs(void)
{
	return security_locked_down(LOCKDOWN_TRACEFS);
}
