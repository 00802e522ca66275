#!/usr/bin/env python3
"""Builds and runs ROMIO's own tests (romio-tests.tsv) under each mode; scripts/conformance runs it
for the pseudo-directory `romio`. Results go to the same TSV form as mpich_suite.py's (dir, entry,
mode, result, reason), so its report prints them."""

import argparse
import concurrent.futures
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent


def entries():
    rows = []
    for line in (HERE / "romio-tests.tsv").read_text().splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        fields = line.split("\t")
        rows.append((fields[0], int(fields[1]), fields[2] if len(fields) > 2 else ""))
    return rows


def source(suite: Path, program: str, out_dir: Path):
    """The program's C file; a .c.in gets its one configure substitution (the format of a long long)."""
    plain = suite / f"{program}.c"
    if plain.is_file():
        return plain
    text = (suite / f"{program}.c.in").read_text().replace("@LL@", "lld")
    made = out_dir / f"{program}.c"
    made.write_text(text)
    return made


def build(suite: Path, program: str, out_dir: Path, cc: str):
    exe = out_dir / program
    result = subprocess.run([cc, "-o", str(exe), str(source(suite, program, out_dir))],
                            capture_output=True, text=True)
    if result.returncode != 0:
        lines = [l for l in (result.stdout + result.stderr).splitlines() if "error" in l]
        return None, (lines[0] if lines else "build failed")[:200]
    return exe, None


def run(exe: Path, ranks: int, args: str, suite: Path, launcher: str, timeout: int, log: Path):
    with tempfile.TemporaryDirectory(prefix="romio-") as work:
        words = args.replace("{file}", str(Path(work) / "testfile")).replace("{srcdir}", str(suite))
        command = launcher.replace("{n}", str(ranks)).split() + [str(exe)] + words.split()
        try:
            result = subprocess.run(command, cwd=work, capture_output=True, text=True,
                                    errors="replace", timeout=timeout)
        except subprocess.TimeoutExpired:
            return "fail", f"timeout after {timeout} s"
    output = result.stdout + result.stderr
    log.parent.mkdir(parents=True, exist_ok=True)
    log.write_text(" ".join(command) + "\n" + output)
    if result.returncode != 0:
        first = next((l for l in output.splitlines() if l.strip()), "")
        return "fail", f"exit {result.returncode}: {first[:160]}"
    if not re.search(r"^\s*No Errors", output, re.M):
        first = next((l for l in output.splitlines() if l.strip()), "no output")
        return "fail", f"no 'No Errors': {first[:160]}"
    return "pass", ""


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--suite", required=True, help="src/mpi/romio/test")
    parser.add_argument("--mode", action="append", required=True,
                        help="name:compiler:launcher ({n}: the ranks)")
    parser.add_argument("--out", required=True, help="where the programs are built")
    parser.add_argument("--results", required=True)
    parser.add_argument("--timeout", type=int, default=180)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--verbose", action="store_true")
    options = parser.parse_args()
    suite = Path(options.suite)
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=options.jobs)
    rows = entries()
    with open(options.results, "a") as results:
        for text in options.mode:
            mode, cc, launcher = text.split(":", 2)
            out_dir = Path(options.out) / mode.split("-")[0]
            out_dir.mkdir(parents=True, exist_ok=True)
            built = dict(zip([r[0] for r in rows],
                             pool.map(lambda r: build(suite, r[0], out_dir, cc), rows)))

            def one(row):
                program, ranks, args = row
                if mode.endswith("-p2") and ranks < 2:
                    return "skip", "one rank: no second process"
                exe, error = built[program]
                if error:
                    return "fail", "compile: " + error
                return run(exe, ranks, args, suite, launcher, options.timeout,
                           out_dir / "logs" / mode / f"{program}.log")

            for row, (result, reason) in zip(rows, pool.map(one, rows)):
                label = f"{row[0]} {row[1]}"
                # A program may print any bytes; the reason goes into one line of a TSV.
                reason = "".join(c if c.isprintable() else "?" for c in reason)
                results.write(f"romio\t{label}\t{mode}\t{result}\t{reason}\n")
                results.flush()
                if options.verbose or result == "fail":
                    print(f"  {mode:8} {result:4} romio: {label}  {reason}", file=sys.stderr,
                          flush=True)


if __name__ == "__main__":
    main()
