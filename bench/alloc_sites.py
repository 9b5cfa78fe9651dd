# SPDX-License-Identifier: GPL-2.0
"""Where one event's slab bytes go, allocation by allocation.

tools/bench/guest's profile run defines and enables one more event of
each kind on each side while the kmem and percpu tracepoints record, and
keeps each trace in OUTDIR/allocs/SIDE-KIND.trace. An allocation still
live at the end of the trace (no free of its pointer after it) belongs to
the event. alloc_report() lists them by call site in
OUTDIR/profile-allocations.md.
"""

import os
import re

ALLOC = re.compile(r"\b(kmalloc|kmem_cache_alloc|percpu_alloc_percpu): call_site=(\S+)"
                   r".*?\bptr=(\S+)")
FREE = re.compile(r"\b(kfree|kmem_cache_free|percpu_free_percpu): .*?\bptr=(\S+)")
TASK = re.compile(r"^\s*\S+-(\d+)\s+\[")
FIELD = re.compile(r"\b(name|bytes_req|bytes_alloc|size)=(\S+)")
# Objects of the caches that the memory phase's drop_caches frees (tracefs
# dentries and inodes made by the shell's lookups), and per-open objects:
# none stays with the event.
TRANSIENT = re.compile(r"^(dentry|.*inode_cache|names_cache|filp|seq_file)$")
SIDES = ("dynprobe", "kernel")
KINDS = ("function", "kprobe")


def rust_path(symbol):
    """A Rust v0 symbol's identifiers joined by ::, crate hashes left out
    (dynprobe_main::probe::Probe::new); other names as they are."""
    name, plus, offset = symbol.partition("+")
    if not name.startswith("_R"):
        return symbol
    # Crate and impl disambiguators, and back references, carry no name.
    text = re.sub(r"(?:[CM]s|B)[0-9A-Za-z]*_", "", name[2:])
    idents, i = [], 0
    while i < len(text):
        m = re.match(r"(\d+)_?", text[i:])
        if not m:
            i += 1
            continue
        n, start = int(m.group(1)), i + m.end()
        ident = text[start:start + n]
        if n and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", ident):
            idents.append(ident)
            i = start + n
        else:
            i = start
    return "::".join(idents) + plus + offset.split()[0] if idents else symbol


def live_allocations(path):
    """(cache, call site, bytes requested, bytes allocated) of each
    allocation of the trace at `path` that is not freed in it. A first
    line `# pid N` keeps only the allocations of task N, the shell that
    wrote the definition (others are the kernel's own work meanwhile)."""
    live, pid = {}, None
    for line in open(path, errors="replace"):
        if pid is None and line.startswith("# pid "):
            pid = line.split()[2]
            continue
        m = ALLOC.search(line)
        if m:
            task = TASK.match(line)
            if pid is not None and task and task.group(1) != pid:
                continue
            kind, site, ptr = m.groups()
            f = dict(FIELD.findall(line))
            cache = "percpu" if kind.startswith("percpu") else f.get("name", "kmalloc")
            req = int(f.get("bytes_req", f.get("size", 0)))
            live[ptr] = (cache, rust_path(site), req, int(f.get("bytes_alloc", 0)))
            continue
        m = FREE.search(line)
        if m:
            live.pop(m.group(2), None)
    return [a for a in live.values() if not TRANSIENT.match(a[0])]


def alloc_report(out):
    """OUTDIR/profile-allocations.md from OUTDIR/allocs/; None without it."""
    lines = ["# Where one event's memory goes, allocation by allocation", "",
             "One more event of each kind defined and enabled on each side, beside "
             "one already there (tools/bench/guest's profile run), while the kmem and "
             "percpu tracepoints record: each allocation that is still live when the "
             "event is enabled, by call site (Rust symbols as paths). Objects of the "
             "dentry and inode caches, which the memory phase's drop_caches frees, "
             "are left out. Slab totals leave out percpu.", ""]
    found = False
    for kind in KINDS:
        for side in SIDES:
            path = os.path.join(out, "allocs", f"{side}-{kind}.trace")
            if not os.path.exists(path):
                continue
            found = True
            allocs = sorted(live_allocations(path), key=lambda a: (-a[3], a[1]))
            slab = sum(a[3] for a in allocs if a[0] != "percpu")
            lines += [f"## {side} {kind} event: {slab} bytes of slab", "",
                      "| bytes allocated | bytes asked | cache | call site |",
                      "| ---: | ---: | --- | --- |"]
            lines += [f"| {a[3]} | {a[2]} | {a[0]} | `{a[1]}` |" for a in allocs]
            lines.append("")
    if not found:
        return None
    path = os.path.join(out, "profile-allocations.md")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    return path
