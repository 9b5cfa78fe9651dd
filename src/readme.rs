// SPDX-License-Identifier: GPL-2.0

//! Text of tracefs `dynprobe/README`: the syntax the control files accept.

/// Served as `dynprobe/README`.
pub(crate) const README: &str = "\
dynprobe: dynamic trace events

Control files (write definitions, read them back; '>' replaces, '>>' appends):
  function_events   FUNC(TYPE NAME, ...)            function entry events
  kprobe_events     p[:[GRP/]EVENT] [MOD:]SYM[+OFFS]|ADDR [FETCHARGS]
                    r[MAXACTIVE][:[GRP/]EVENT] [MOD:]SYM[+0] [FETCHARGS]
                    -:[GRP/]EVENT
  dynamic_events    the kprobe_events syntax, plus
                    f[:[GRP/][EVENT]] SYM[%return] [FETCHARGS]
                    !... removes, like -:
  kprobe_profile    hits and misses per event

Status: the control files exist; definitions are not accepted yet
(writes fail with EOPNOTSUPP).
";
