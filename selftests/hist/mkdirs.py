# SPDX-License-Identifier: GPL-2.0
"""The hist tests' workload (selftests/hist/pair.sh): mkdir() and
mkdirat() calls, which nothing else in the guest makes, with names,
modes, directory descriptors, results and processes in known numbers,
every count distinct so that a hist sorted by hit count has one order.
  python3 mkdirs.py DIR
"""
import os
import sys

base = sys.argv[1]
os.makedirs(base, exist_ok=True)
fd = os.open(base, os.O_RDONLY | os.O_DIRECTORY)
# name, mode, calls by path (mkdir), calls by descriptor (mkdirat)
plan = [("a", 0o700, 1, 6), ("bb", 0o755, 2, 7), ("ccc", 0o711, 3, 8),
        ("dddd", 0o750, 4, 9), ("eeeee", 0o777, 5, 10)]


def run(part):
    for name, mode, by_path, by_fd in part:
        path = os.path.join(base, name)
        for _ in range(by_path):
            os.mkdir(path, mode)
            os.rmdir(path)
        for _ in range(by_fd):
            os.mkdir(name, mode, dir_fd=fd)
            os.rmdir(name, dir_fd=fd)
    # An existing directory: -EEXIST, 11 times.
    for _ in range(11):
        try:
            os.mkdir(base, 0o700)
        except FileExistsError:
            pass


run(plan[:2])
# The rest in a child: another common_pid.
pid = os.fork()
if pid == 0:
    run(plan[2:])
    os._exit(0)
os.waitpid(pid, 0)
