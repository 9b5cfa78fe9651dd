# SPDX-License-Identifier: GPL-2.0
"""tracefs for the Python tools that run in the test guest: where its
files are, how a command is written to them, and what error_log says.

A tool imports it with tools/lib on sys.path, found from the tool's own
place (the project may be anywhere), e.g. from selftests/robust/NAME/:

    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                    '..', '..', '..', 'tools', 'lib'))
    import tracefs
"""

import os
import re

TRACING = '/sys/kernel/tracing'
DYNPROBE = TRACING + '/dynprobe'
ERROR_LOG = TRACING + '/error_log'


def read(path):
    """The whole of a file, as bytes."""
    with open(path, 'rb') as f:
        return f.read()


def _bytes(data):
    return data.encode() if isinstance(data, str) else data


def write(path, data, truncate=False):
    """Writes data (str or bytes) with one write(2) on a descriptor opened
    for appending, or truncating the file first: a command split over two
    writes is two commands, and tracefs's probe files refuse the seek that
    a Python file object opened for appending makes. Nothing is written
    when data is empty (truncating alone clears a control file). Returns
    the count written; raises OSError."""
    data = _bytes(data)
    fd = os.open(path, os.O_WRONLY | (os.O_TRUNC if truncate else os.O_APPEND))
    try:
        return os.write(fd, data) if data else 0
    finally:
        os.close(fd)


def write_errno(path, data, truncate=False):
    """write(), its outcome as a number: 0, or the errno of the open or
    the write that failed."""
    try:
        write(path, data, truncate)
        return 0
    except OSError as e:
        return e.errno


def write_pieces(path, pieces):
    """Writes each piece with one write(2), all on one descriptor opened
    for appending (a line may span pieces). Per piece: None when it was
    written whole, ('short', count) when not, or the errno."""
    results = []
    fd = os.open(path, os.O_WRONLY | os.O_APPEND)
    try:
        for p in map(_bytes, pieces):
            try:
                n = os.write(fd, p)
                results.append(None if n == len(p) else ('short', n))
            except OSError as e:
                results.append(e.errno)
    finally:
        os.close(fd)
    return results


def clear_error_log():
    os.close(os.open(ERROR_LOG, os.O_WRONLY | os.O_TRUNC))


# An entry of error_log reads
#   [   12.345678] trace_kprobe: error: Invalid argument
#     Command: p:grp/ev vfs_read %zz
#                                 ^
ENTRY_RE = re.compile(r'^\[ *[0-9.]+\] (.*)$')
COMMAND_PREFIX = '  Command: '


def error_log_entries():
    """error_log's entries, oldest first, as (message, command, caret):
    the message without its time stamp, the command as logged and the
    caret line ('' where missing)."""
    with open(ERROR_LOG, 'rb') as f:
        text = f.read().decode('utf-8', 'replace')
    out, cur = [], None
    for line in text.split('\n'):
        m = ENTRY_RE.match(line)
        if m:
            cur = [m.group(1), '', '']
            out.append(cur)
        elif cur is not None and line.startswith(COMMAND_PREFIX):
            cur[1] = line[len(COMMAND_PREFIX):]
        elif cur is not None and line.strip() == '^':
            cur[2] = line
    return [tuple(e) for e in out]


def error_log_message(command):
    """The message of the last error_log entry for command (whoever wrote
    it), or None: says why a definition was refused."""
    try:
        entries = error_log_entries()
    except OSError:
        return None
    found = None
    for message, logged, _ in entries:
        if logged.strip() == command.strip():
            found = message
    return found
