#!/usr/bin/env python3
"""Checks, on full traces, what tests/real.rs checks on trimmed copies: every input event a
parser read is accounted for (imported, or dropped under a stat), none lost without a count.

usage: check_accounting.py BIN ROOT      e.g. python3 tools/check_accounting.py target/release/sextant ../shared/real
Prints one line per trace with unaccounted events and exits 1 if there is any."""
import os, subprocess, sys


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    bin_, root = sys.argv[1], sys.argv[2]
    bad = 0
    for dirpath, _, files in sorted(os.walk(root)):
        if os.path.relpath(dirpath, root).split(os.sep)[0] == 'reference':
            continue
        for f in sorted(files):
            if f.endswith('.md'):
                continue
            path = os.path.join(dirpath, f)
            r = subprocess.run(
                [bin_, 'query', path,
                 'select coalesce(sum(read), 0), coalesce(sum(unaccounted), 0) from __sextant_file_events'],
                capture_output=True, timeout=300)
            if r.returncode != 0:
                continue  # a refusal is check_real.py's business
            read, unaccounted = (int(x) for x in r.stdout.decode().splitlines()[1].split(','))
            if unaccounted:
                bad += 1
                print(f'BAD {os.path.relpath(path, root)}: {unaccounted} of {read} events lost without a count')
    print(f'{bad} traces with unaccounted events')
    sys.exit(1 if bad else 0)


if __name__ == '__main__':
    main()
