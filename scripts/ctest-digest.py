#!/usr/bin/python3
"""Prints, for every failed test in ctest's LastTest.log files, its GoogleTest failure messages and `[ figures ]`
lines, then a short summary of where each first failed (scripts/test.sh calls it last, so that the end of a failed
run's output names what failed and why, not only the test's name).

  scripts/ctest-digest.py LOG [LOG...]
"""
import re
import sys

MAX_LINES = 60  # per failed test


def failures(text):
    # One block per test: from "N/M Testing: NAME" to the next such line.
    for block in re.split(r"^(?=\d+/\d+ Testing: )", text, flags=re.M):
        m = re.match(r"\d+/\d+ Testing: (\S+)", block)
        # Failed, or no verdict at all (a timeout or a crash of ctest's child).
        if not m or "\nTest Passed." in block:
            continue
        # Skipped (a server version without the feature: the matrix runs it) is not a failure.
        if "[  SKIPPED ]" in block and "[  FAILED  ]" not in block:
            continue
        lines = block.splitlines()
        keep, follow = [], 0
        for line in lines:
            if re.search(r": Failure$|\[  FAILED  \]|\[ figures  \]|Timeout|Exception|Segmentation|Aborted", line):
                keep.append(line)
                follow = 8 if line.endswith(": Failure") else 0
            elif follow > 0:
                if not line.strip():
                    follow = 0
                else:
                    keep.append(line[:400])
                    follow -= 1
        yield m.group(1), keep[:MAX_LINES]


def first_failure(keep):
    """The first failure's location and its next three lines: a CI summary that shows only the last lines of the
    output still shows where each failed test failed."""
    for i, line in enumerate(keep):
        if line.endswith(": Failure") or "Timeout" in line or "Segmentation" in line or "Aborted" in line:
            return [line] + keep[i + 1:i + 4]
    return keep[:1]


def main():
    summary = []
    for path in sys.argv[1:]:
        try:
            with open(path, errors="replace") as f:
                text = f.read()
        except OSError:
            continue
        for name, keep in failures(text):
            print(f"---- failed: {name} ({path})")
            for line in keep:
                print("  " + line)
            summary.append((name, first_failure(keep)))
    if summary:
        print("==== where each failed test first failed")
        for name, lines in summary:
            print(f"{name}:")
            for line in lines:
                print("  " + line[:300])


if __name__ == "__main__":
    main()
