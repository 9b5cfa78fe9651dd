// SPDX-License-Identifier: GPL-2.0
/*
 * The module's version in its modinfo (modinfo -F version,
 * /sys/module/dynprobe/version): dkms.conf's PACKAGE_VERSION, which Kbuild
 * passes in as DYNPROBE_VERSION, the version of the Debian packages and
 * of `dynprobe --version` (tools/setup/deb checks they agree). The Rust
 * module! macro has no version field, and MODULE_VERSION() is a C macro:
 * that makes it C.
 */
#include <linux/module.h>

MODULE_VERSION(DYNPROBE_VERSION);
