#!/usr/bin/env python3
"""Builds and runs the entries of MPICH's test/mpi testlists, and reports them (scripts/conformance).

  mpich_suite.py run    --suite SRC --mode MODE:BUILDDIR:LAUNCHER ... [options] DIR...
  mpich_suite.py report --results FILE [options]

An entry is a line of a testlist: `program [ranks [key=value ...]]`; an entry naming a folder
runs that folder's testlist. It passes as MPICH's runtests decides (runtests.in, RunMPIProgram):
the program exits 0 and its output (stdout and stderr together) has a line ` No Errors` and no
line other than that or `Test Passed`. With resultTest=TestStatus or TestErrFatal it passes when
the program exits non-zero; with TestStatusNoErrors it must also print only ` No Errors`.
The suite is configured with --enable-strictmpi, as for an MPI other than MPICH: MPIX_ entries
are left out and `xfail=` (MPICH's own known failures) does not apply. Entries marked
`strict=false` run too: most are MPI-4.0 calls (persistent collectives) that MPICH 4.0.2 still
counted as extensions; the ones outside MPI-4.1 are set aside by name (mpich-set-aside.tsv).
"""

import argparse
import concurrent.futures
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
# Keys of an entry that say how to run or judge it, not which test it is.
JUDGING_KEYS = ("timeLimit", "xfail", "strict", "mem", "lock", "resultTest", "mpix")


@dataclass
class Entry:
    top: str  # the directory named on the command line (the table's row)
    workdir: str  # the folder of the program, relative to the build folder
    program: str
    ranks: int
    args: list = field(default_factory=list)
    envs: list = field(default_factory=list)
    time_limit: int = 0
    result_test: str = ""
    mem_gb: float = 0.0
    label: str = ""  # program (with its path below top), ranks and what tells it apart

    @property
    def name(self):
        return str(Path(self.workdir, self.program).relative_to(self.top))


def read_testlist(build: Path, suite: Path, folder: str):
    for base in (build, suite):
        path = base / folder / "testlist"
        if path.is_file():
            return path.read_text().splitlines()
    return []


def collect(build: Path, suite: Path, top: str, folder: str = None):
    """The entries of folder's testlist, recursively, as runtests reads them."""
    folder = folder or top
    entries = []
    for line in read_testlist(build, suite, folder):
        words = line.split("#", 1)[0].split()
        if not words:
            continue
        program = words[0]
        if (build / folder / program).is_dir() or (suite / folder / program).is_dir():
            entries += collect(build, suite, top, f"{folder}/{program}")
            continue
        entry = Entry(top, folder, program, int(words[1]) if len(words) > 1 else 2)
        kept = []
        for word in words[2:]:
            key, _, value = word.partition("=")
            if key == "arg":
                entry.args.append(value)
            elif key == "env":
                entry.envs.append(value)
            elif key == "timeLimit" and value.isdigit():
                entry.time_limit = int(value)
            elif key == "resultTest":
                entry.result_test = value
            elif key == "mem":
                entry.mem_gb = float(value)
            if key not in JUDGING_KEYS:
                kept.append(word)
        if "/" in program:  # runtests runs such a program in its folder
            sub, _, entry.program = program.rpartition("/")
            entry.workdir = f"{folder}/{sub}"
        entry.label = " ".join([entry.name, str(entry.ranks)] + kept)
        entries.append(entry)
    return entries


def read_tsv(path: Path, columns: int):
    rows = []
    if path.is_file():
        for line in path.read_text().splitlines():
            if line.strip() and not line.startswith("#"):
                cells = line.split("\t")
                rows.append(cells + [""] * (columns - len(cells)))
    return rows


def first_error(log: str):
    """The line of a failed build that says why: the first missing symbol or compiler error."""
    for pattern in (r"undefined reference to `([^']+)'", r"error: (.*)", r"\*\*\* (.*)"):
        for line in log.splitlines():
            found = re.search(pattern, line)
            if found:
                if pattern.startswith("undefined"):
                    return f"undefined {found.group(1)}"
                where = re.match(r"([^\s:]+):(\d+):\d+: error", line)
                place = f"{Path(where.group(1)).name}:{where.group(2)}: " if where else ""
                return place + found.group(1).strip()
    return "build failed"


def dtpools_error(build_dir: Path):
    """Why the datatype pool library (which every program's Makefile links) did not build."""
    if (build_dir / "dtpools/src/libdtpools.la").is_file():
        return None
    log = build_dir / "dtpools.log"
    return first_error(log.read_text(errors="replace") if log.is_file() else "")


def build(build_dir: Path, entry: Entry, log_dir: Path, dtpools: str):
    """Builds the entry's program with make; returns None or why it failed to compile.

    When dtpools did not build, the programs are linked without it: those that need it then
    fail for dtpools' reason, and the others are not held back by it."""
    folder = build_dir / entry.workdir
    command = ["make", "-C", str(folder), entry.program]
    if dtpools:
        library = os.path.relpath(build_dir / "dtpools/src/libdtpools.la", folder)
        makefile = (folder / "Makefile").read_text().replace("\\\n", " ")
        ldadd = re.search(r"^LDADD = (.*)$", makefile, re.M)
        libraries = ldadd.group(1).replace("$(top_builddir)/dtpools/src/libdtpools.la", "")
        command += ["-o", library, f"LDADD={libraries}"]
    done = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          errors="replace")
    log = log_dir / f"{entry.workdir}/{entry.program}.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    log.write_text(done.stdout)
    if done.returncode == 0 and (folder / entry.program).is_file():
        return None
    reason = first_error(done.stdout)
    if dtpools and reason.startswith("undefined DTP"):
        return f"needs dtpools, which did not build: {dtpools}"
    return reason


def signal_name(number):
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def judge(entry: Entry, status: int, output: str):
    """None when the entry passed, else the reason (runtests.in's rules)."""
    lines = output.splitlines()
    no_errors = any(re.fullmatch(r"\s*No [Ee]rrors\s*", line) for line in lines)
    unexpected = [line for line in lines if not re.fullmatch(r"\s*(No [Ee]rrors|Test Passed)\s*", line)
                  and "FORTRAN STOP" not in line]
    # A fatal MPI error says the most: weft's "weft: MPI_X (rank r): MPI_ERR_Y: ..." line.
    fatal = [line for line in unexpected if line.startswith("weft: ")]
    first = ((fatal or unexpected)[0].strip()[:200]) if unexpected else ""

    def exit_text():
        if status < 0:
            return signal_name(-status)
        if status > 128 and status - 128 < 65:  # weftrun and mpirun report 128+S
            return f"exit {status} ({signal_name(status - 128)})"
        return f"exit {status}"

    if entry.result_test in ("TestStatus", "TestErrFatal"):
        return None if status != 0 else "exited 0; the test requires a non-zero status"
    if entry.result_test == "TestStatusNoErrors":
        if unexpected:
            return f"output: {first}"
        if not no_errors:
            return "no 'No Errors'"
        return None if status != 0 else "exited 0; the test requires a non-zero status"
    if status != 0:
        return exit_text() + (f": {first}" if first else "")
    if unexpected:
        return f"output: {first}"
    if not no_errors:
        return "no 'No Errors'"
    return None


def run(entry: Entry, build_dir: Path, launcher: list, timeout: int, log: Path):
    """Runs one entry; returns (result, reason)."""
    command = [word.replace("{n}", str(entry.ranks)) for word in launcher]
    workdir = build_dir / entry.workdir
    scratch = None
    if entry.top == "io":
        # The I/O programs make their files ("testfile") in the folder they run in; runtests runs
        # them one at a time, so they share the name. Each runs in a scratch folder of its own.
        scratch = tempfile.TemporaryDirectory(prefix=f"{entry.program}-", dir=workdir)
        command += [str(workdir / entry.program)] + entry.args
        workdir = Path(scratch.name)
    else:
        command += [f"./{entry.program}"] + entry.args
    env = dict(os.environ)
    for assignment in entry.envs:
        key, _, value = assignment.partition("=")
        env[key] = value
    env["MPITEST_TIMEOUT"] = str(timeout)
    start = time.monotonic()
    process = subprocess.Popen(command, cwd=workdir, env=env,
                               stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, start_new_session=True)
    try:
        output, _ = process.communicate(timeout=timeout)
        reason = judge(entry, process.returncode, output.decode(errors="replace"))
    except subprocess.TimeoutExpired:
        # The launcher passes SIGTERM on to the ranks and kills them when it dies.
        os.killpg(process.pid, signal.SIGTERM)
        try:
            output, _ = process.communicate(timeout=5)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            output, _ = process.communicate()
        output = output.decode(errors="replace")
        reason = f"timeout ({timeout} s)"
        if entry.result_test in ("TestStatus", "TestErrFatal"):
            reason = None  # runtests' mpiexec ends such a job at its limit, with a failing status
    seconds = time.monotonic() - start
    if scratch is not None:
        scratch.cleanup()
    log.parent.mkdir(parents=True, exist_ok=True)
    log.write_text(" ".join(command) + f"\n# {seconds:.1f} s, {reason or 'pass'}\n" +
                   (output if isinstance(output, str) else output.decode(errors="replace")))
    if not reason:
        return ("pass", "")
    # A program may print any bytes; the reason goes into one line of a TSV.
    return ("fail", "".join(c if c.isprintable() else "?" for c in reason))


def set_aside():
    """(dir, program) -> reason, from mpich-set-aside.tsv."""
    return {(row[0], row[1]): row[2] for row in read_tsv(HERE / "mpich-set-aside.tsv", 3)}


def command_run(options):
    suite = Path(options.suite)
    modes = []  # (mode, build dir, launcher words)
    for text in options.mode:
        name, build_dir, launcher = text.split(":", 2)
        modes.append((name, Path(build_dir), launcher.split()))
    entries = []
    for top in options.dirs:
        entries += collect(modes[0][1], suite, top)
    aside = set_aside()
    # Known failures that hung: a short limit (they still run, and are reported if they pass).
    hung = set()
    if options.expected:
        hung = {(r[0], r[1], r[2]) for r in read_tsv(Path(options.expected), 4)
                if r[3].startswith("timeout")}
    memory_gb = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    log = sys.stderr
    results = open(options.results, "w")
    results.write("# dir\tentry\tmode\tresult\treason\n")

    def not_built(entry):
        if (entry.top, entry.name) in aside:
            return "set aside: " + aside[(entry.top, entry.name)]
        if entry.mem_gb > memory_gb:
            return f"needs {entry.mem_gb} GB of memory"
        return None

    def skip_reason(entry, mode):
        if mode.endswith("-p2") and entry.ranks < 2:
            return "one rank: no second process"
        return not_built(entry)

    pool = concurrent.futures.ThreadPoolExecutor(max_workers=options.jobs)
    builds = {}  # build dir -> {(folder, program): None or why it did not compile}
    for mode, build_dir, launcher in modes:
        log_dir = build_dir / "weft-logs"
        if build_dir not in builds:
            # Every program once, even when several entries or modes run it.
            programs = {}
            for entry in entries:
                if not not_built(entry):
                    programs.setdefault((entry.workdir, entry.program), entry)
            start = time.monotonic()
            dtpools = dtpools_error(build_dir)
            builds[build_dir] = dict(zip(programs, pool.map(
                lambda e: build(build_dir, e, log_dir / "build", dtpools), programs.values())))
            failed = sum(1 for reason in builds[build_dir].values() if reason)
            print(f"conformance: {build_dir.name}: built {len(programs) - failed} of "
                  f"{len(programs)} programs in {time.monotonic() - start:.0f} s", file=log,
                  flush=True)
        built = builds[build_dir]

        def one(numbered):
            number, entry = numbered
            reason = skip_reason(entry, mode)
            if reason:
                return "skip", reason
            compile_error = built.get((entry.workdir, entry.program))
            if compile_error:
                return "fail", "compile: " + compile_error
            limit = min(entry.time_limit or options.timeout, options.max_timeout)
            if (entry.top, entry.label, mode) in hung:
                limit = min(limit, options.hung_timeout)
            run_log = log_dir / mode / f"{entry.workdir}/{entry.program}.{number}.log"
            return run(entry, build_dir, launcher, limit, run_log)

        start = time.monotonic()
        for entry, (result, reason) in zip(entries, pool.map(one, enumerate(entries))):
            results.write(f"{entry.top}\t{entry.label}\t{mode}\t{result}\t{reason}\n")
            results.flush()
            if options.verbose or result == "fail":
                print(f"  {mode:8} {result:4} {entry.top}: {entry.label}  {reason}", file=log,
                      flush=True)
        print(f"conformance: {mode}: ran {len(entries)} entries in {time.monotonic() - start:.0f} s",
              file=log, flush=True)
    results.close()


def reason_group(reason):
    """The kind of a failure, for grouping: the missing symbol, a crash, a hang, a wrong result."""
    if reason.startswith("compile: undefined "):
        return "missing symbol " + reason.split()[2]
    if reason.startswith("compile: "):
        return "does not compile: " + re.sub(r"^[^:]*:\d+: ", "", reason[9:])
    if reason.startswith("timeout"):
        return "timeout"
    signal_name = re.search(r"\((SIG[A-Z]+)\)|^(SIG[A-Z]+)", reason)
    if signal_name:
        return "crash: " + (signal_name.group(1) or signal_name.group(2))
    raised = re.search(r"weft: (MPI_\w+) \(rank \d+\): (MPI_ERR_\w+)", reason)
    if raised:
        return f"error raised: {raised.group(1)} {raised.group(2)}"
    return "wrong result or output"


def print_groups(rows, mode):
    """The failures of one mode, grouped by reason_group, largest group first."""
    groups = {}
    for top, label, row_mode, result, reason in rows:
        if row_mode == mode and result == "fail":
            groups.setdefault(reason_group(reason), []).append(f"{top}/{label}")
    print(f"\nFailures of {mode} by kind:")
    for group, members in sorted(groups.items(), key=lambda item: (-len(item[1]), item[0])):
        print(f"- {group} ({len(members)}): {', '.join(members)}")


def command_report(options):
    rows = [row for path in options.results for row in read_tsv(Path(path), 5)]
    modes = list(dict.fromkeys(row[2] for row in rows))
    dirs = list(dict.fromkeys(row[0] for row in rows))
    expected = {}
    if options.expected:
        expected = {(r[0], r[1], r[2]): r[3] for r in read_tsv(Path(options.expected), 4)}
    titles = {"weft": "weft 1 process", "weft-p2": "weft -p 2", "openmpi": "Open MPI"}

    # One table per directory would repeat the header; one row per directory reads the same.
    header = ["dir", "entries"] + [titles.get(m, m) for m in modes]
    table = []
    totals = {m: [0, 0] for m in modes}
    for top in dirs:
        entries = list(dict.fromkeys(r[1] for r in rows if r[0] == top))
        cells = [top, str(len(entries))]
        for mode in modes:
            mine = [r for r in rows if r[0] == top and r[2] == mode]
            passed = sum(r[3] == "pass" for r in mine)
            ran = sum(r[3] != "skip" for r in mine)
            totals[mode][0] += passed
            totals[mode][1] += ran
            cells.append(f"{passed}/{ran}")
        table.append(cells)
    count = len(dict.fromkeys((r[0], r[1]) for r in rows))
    table.append(["total", str(count)] + [f"{totals[m][0]}/{totals[m][1]}" for m in modes])
    widths = [max(len(row[i]) for row in [header] + table) for i in range(len(header))]
    line = lambda cells: "| " + " | ".join(c.ljust(w) for c, w in zip(cells, widths)) + " |"
    print(line(header))
    print("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    for cells in table:
        print(line(cells))
    print("(passed/ran per column; set-aside entries and -p 2 of one-rank entries are skipped)")

    unexpected = []
    for top, label, mode, result, reason in rows:
        key = (top, label, mode)
        if result == "fail" and key not in expected:
            unexpected.append(f"  {mode}: {top}: {label}: {reason}")
    listed_pass = [f"  {m}: {t}: {l} (listed: {expected[(t, l, m)]})"
                   for t, l, m, r, _ in rows if r == "pass" and (t, l, m) in expected]
    if options.expected:
        known = sum(1 for t, l, m, r, _ in rows if r == "fail" and (t, l, m) in expected)
        print(f"{known} known failures ({Path(options.expected).name}), "
              f"{len(unexpected)} unexpected failures, {len(listed_pass)} listed entries passed")
        if listed_pass:
            print("Listed as known failures but passed (regenerate with --update-expected):")
            print("\n".join(listed_pass))
        if unexpected:
            print("Unexpected failures:")
            print("\n".join(unexpected))
    for mode in options.groups.split(",") if options.groups else []:
        print_groups(rows, mode)
    if options.update_expected:
        mode_set = set(options.update_modes.split(",")) if options.update_modes else set(modes)
        with open(options.update_expected, "w") as out:
            out.write("# Entries of MPICH's test/mpi that fail under weft today (scripts/conformance "
                      "--update-expected).\n# CI fails on any other failure. dir\tentry\tmode\treason\n")
            for top, label, mode, result, reason in rows:
                if result == "fail" and mode in mode_set:
                    out.write(f"{top}\t{label}\t{mode}\t{reason}\n")
        print(f"wrote {options.update_expected}")
    passed = sum(r[3] == "pass" for r in rows)
    failed = sum(r[3] == "fail" for r in rows)
    skipped = sum(r[3] == "skip" for r in rows)
    print(f"{passed} passed, {failed} failed, {skipped} skipped")
    return 1 if options.expected and unexpected else 0


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    run_parser = commands.add_parser("run")
    run_parser.add_argument("--suite", required=True, help="MPICH's test/mpi source folder")
    run_parser.add_argument("--mode", action="append", required=True,
                            help="NAME:BUILD_DIR:LAUNCHER WORDS ({n} is the number of ranks)")
    run_parser.add_argument("--results", required=True)
    run_parser.add_argument("--jobs", type=int, default=2)
    run_parser.add_argument("--timeout", type=int, default=180, help="entries without timeLimit")
    run_parser.add_argument("--max-timeout", type=int, default=600, help="caps timeLimit too")
    run_parser.add_argument("--expected", help="known failures (mpich-expected-failures.tsv)")
    run_parser.add_argument("--hung-timeout", type=int, default=15,
                            help="limit of the known failures that timed out")
    run_parser.add_argument("--verbose", action="store_true")
    run_parser.add_argument("dirs", nargs="+")
    report_parser = commands.add_parser("report")
    report_parser.add_argument("--results", action="append", required=True,
                               help="a results file of run; repeatable (their modes side by side)")
    report_parser.add_argument("--expected", help="known failures: CI fails on any other")
    report_parser.add_argument("--update-expected", help="write the failures to this file")
    report_parser.add_argument("--update-modes", help="modes whose failures it keeps")
    report_parser.add_argument("--groups", help="modes whose failures to list by kind")
    options = parser.parse_args()
    if options.command == "run":
        command_run(options)
        return 0
    return command_report(options)


if __name__ == "__main__":
    sys.exit(main())
