#!/usr/bin/env python3
"""Compares the kernel suites' skipped tests with the committed list.

ftracetest ends a test it cannot run UNSUPPORTED (a feature is missing) or
UNRESOLVED (a precondition is not met) and exits 0, so a rewrite that
stops matching, or a README line that disappears, would turn a test into
a silent skip. selftests/peer-expected-skips says which tests are expected
to end so on which kernel, and why; this fails on any other skip, and on
a listed test that ran and ended otherwise (the list must stay exact).

  peer-skips.py --kernel NAME --list FILE --logs DIR --suite TEST_D TEST...

DIR is ftracetest's -l directory: its ftracetest.log has a result line
per test case ("[N] description<TAB>[RESULT]") and each case has a log
N-NAME-log.XXXXXX whose first line names the test file it executed.
TEST... are the test files handed to ftracetest, under TEST_D.
"""

import argparse
import glob
import os
import re
import sys

SKIPS = ("UNSUPPORTED", "UNRESOLVED", "XFAIL")
RESULT_LINE = re.compile(r"^\[(\d+)\].*\[([A-Z]+)\]")


def read_list(path, kernel):
    """{test: (result, reason)} for KERNEL; the file's own errors exit."""
    expected = {}
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            fields = line.split(None, 3)
            if len(fields) < 4 or fields[2] not in SKIPS:
                sys.exit(f"{path}:{number}: want KERNEL[,KERNEL] TEST RESULT REASON, "
                         f"RESULT one of {', '.join(SKIPS)}")
            kernels, test, result, reason = fields
            # A line applies to a kernel by any of its names (--kernel
            # stock,7.3: every stock kernel, and the 7.3 series).
            if set(kernel.split(",")) & set(kernels.split(",")):
                expected[test] = (result, reason)
    return expected


def test_name(path, suite):
    """kprobe/foo for SUITE/kprobe/foo.tc."""
    rel = os.path.relpath(path, suite)
    return rel[:-3] if rel.endswith(".tc") else rel


def case_results(logs, suite):
    """[(test, result)] for every case ftracetest reported, in order."""
    results = []
    with open(os.path.join(logs, "ftracetest.log"), encoding="utf-8",
              errors="replace") as f:
        for line in f:
            m = RESULT_LINE.match(line)
            if not m:
                continue
            case, result = m.groups()
            case_logs = glob.glob(os.path.join(logs, f"{case}-*-log.*"))
            if len(case_logs) != 1:
                sys.exit(f"peer skips: case {case} has {len(case_logs)} logs in {logs}")
            with open(case_logs[0], encoding="utf-8", errors="replace") as cl:
                first = cl.readline()
            # "execute: PATH" or, for a run in an instance, "execute (instance) : PATH"
            path = first.rsplit(": ", 1)[-1].strip()
            results.append((test_name(path, suite), result))
    return results


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kernel", required=True)
    ap.add_argument("--list", required=True)
    ap.add_argument("--logs", required=True)
    ap.add_argument("--suite", required=True)
    ap.add_argument("tests", nargs="*")
    args = ap.parse_args()

    expected = read_list(args.list, args.kernel)
    ran = {test_name(t, args.suite) for t in args.tests}
    results = case_results(args.logs, args.suite)
    problems = []
    seen = {}
    as_expected = 0
    for test, result in results:
        seen.setdefault(test, set()).add(result)
        if result not in SKIPS:
            continue
        want = expected.get(test)
        if want is not None and want[0] == result:
            as_expected += 1
        elif want is None:
            problems.append(f"{test} ended {result} on the {args.kernel} kernel, "
                            f"which {args.list} does not expect")
        elif want[0] != result:
            problems.append(f"{test} ended {result}; {args.list} expects {want[0]} ({want[1]})")
    for test, (result, reason) in sorted(expected.items()):
        if test in ran and result not in seen.get(test, set()):
            ended = ", ".join(sorted(seen.get(test, {"no result"})))
            problems.append(f"{test} is expected to end {result} ({reason}) on the "
                            f"{args.kernel} kernel, and ended {ended}")
    for p in problems:
        print(f"FAILED: peer skips: {p}")
    print(f"peer skips on the {args.kernel} kernel: {as_expected} as expected, "
          f"{len(problems)} other")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
