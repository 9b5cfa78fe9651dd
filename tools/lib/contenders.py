# SPDX-License-Identifier: GPL-2.0
"""The bench's contenders (tools/bench/guest: what each one turns on), by
the name raw.csv gives them, with the label the reports show: one table
for bench/report.py and bench/profile.py. The order is the order of
report.py's table.
"""

LABEL = {
    "hook_kprobe": "bare kprobe, empty handler",
    "hook_ftrace": "bare ftrace_ops, empty callback",
    "hook_kprobe_rb": "bare kprobe + raw ring-buffer write",
    "hook_ftrace_rb": "bare ftrace_ops + raw ring-buffer write",
    "hook_fprobe": "bare fprobe, empty entry handler",
    "function_tracer": "the kernel's function tracer on the target",
    "k_kprobe": "kernel kprobe event, 3 register args",
    "d_kprobe": "dynprobe kprobe event, 3 register args",
    "k_kprobe_str": "kernel kprobe event, 3 regs + string",
    "d_kprobe_str": "dynprobe kprobe event, 3 regs + string",
    "k_kretprobe": "kernel kretprobe event, $retval",
    "d_kretprobe": "dynprobe kretprobe event, $retval",
    "k_fentry": "kernel fprobe entry event, 3 args",
    "d_fentry": "dynprobe `f` entry event, 3 args",
    "d_func": "dynprobe function event, 3 args",
    "k_fexit": "kernel fprobe %return event, retval + 1 arg",
    "d_fexit": "dynprobe `f` %return event, retval + 1 arg",
    "d_func_exit": "dynprobe function exit event, retval + 1 arg",
    "hook_vftrace_rb": "bare ftrace_ops + raw ring-buffer write, vmlinux target",
    "k_vfentry": "kernel fprobe entry event, 3 args, vmlinux target",
    "d_vfentry": "dynprobe `f` entry event, 3 args, vmlinux target",
    "d_vfunc": "dynprobe function event, 3 args, vmlinux target",
    "k_uprobe": "kernel uprobe event, 3 register args, user target",
    "d_uprobe": "dynprobe uprobe event, 3 register args, user target",
    "k_uprobe_str": "kernel uprobe event, 3 regs + ustring, user target",
    "d_uprobe_str": "dynprobe uprobe event, 3 regs + ustring, user target",
    "k_uretprobe": "kernel uretprobe event, $retval, user target",
    "d_uretprobe": "dynprobe uretprobe event, $retval, user target",
    "d_uretprobe_arg": "dynprobe uretprobe event, $retval + entry $arg1, user target",
}
