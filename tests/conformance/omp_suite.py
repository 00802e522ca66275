#!/usr/bin/env python3
"""Runs the OpenMP runtimes' own test suites against weft and beside the reference runtime
(scripts/conformance-omp, docs/omp-conformance.md).

  omp_suite.py --suite libgomp|llvm-openmp --src DIR --build DIR --work DIR [options]

libgomp (GCC 12's libgomp/testsuite): the tests of libgomp.c (C), libgomp.c++ (C++) and
libgomp.c-c++-common (both), read as DejaGnu's dg.exp would: `dg-do run` (the default) tests
only, compiled with -O2 -fopenmp unless `dg-options` says otherwise, plus `dg-additional-options`
and `dg-additional-sources`; run with `dg-set-target-env-var`; passing when the program exits 0
(non-zero with `dg-shouldfail`) and its output matches the `dg-output` patterns. weft builds
with weftcc/weftcxx -fopenmp, the reference with gcc/g++ -fopenmp (libgomp).

llvm-openmp (LLVM 14's openmp/runtime/test): the lit tests, their `RUN:` lines run by bash
(pipefail, as lit's shell) with lit.cfg's substitutions; `REQUIRES:`/`UNSUPPORTED:`/`XFAIL:` read
against clang 14's features on Linux (no OMPT). weft builds with weftcc/weftcxx --cc=clang
-fopenmp, the reference with clang/clang++ -fopenmp (libomp).

Tests set aside, with the reason (the table counts them apart): target offload (out of weft's
scope), OMPT (not provided), tests of libomp's internals (KMP_* variables, kmp_set_defaults,
__kmpc_atomic_* entry points clang never emits). The results go to a TSV (suite, group, test,
mode, result, reason); the reference mode's are kept and reused unless --rerun-reference.
"""

import argparse
import concurrent.futures
import os
import re
import shlex
import signal
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path


def run_in_group(command, timeout, **kwargs):
    """subprocess.run in a process group of its own, the whole group killed at the limit: a test
    that spins (one runtime thread per core, no preemption) must not outlive its run, nor a
    program that bash -c started."""
    with subprocess.Popen(command, start_new_session=True, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, **kwargs) as process:
        try:
            out, err = process.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.communicate()
            raise
        return subprocess.CompletedProcess(command, process.returncode, out, err)


FILECHECK = "/usr/lib/llvm-14/bin/FileCheck"
NOT = "/usr/lib/llvm-14/bin/not"
CLANG_FEATURES = {"clang", "clang-14", "clang-14.0", "clang-14.0.6", "linux", "affinity",
                  "multicpu"}


@dataclass
class Test:
    group: str
    name: str
    path: Path
    lang: str = "c"  # c or c++
    aside: str = ""  # the reason it is set aside, empty when it counts
    # libgomp
    options: list = field(default_factory=list)
    env: dict = field(default_factory=dict)
    outputs: list = field(default_factory=list)
    sources: list = field(default_factory=list)
    shouldfail: bool = False
    # llvm-openmp
    run_lines: list = field(default_factory=list)


# ---- libgomp's DejaGnu directives ------------------------------------------------------------

def tcl_words(text):
    """Splits a Tcl list: words, "quoted" (backslash-substituted) and {braced} (verbatim)."""
    words, i = [], 0
    while i < len(text):
        c = text[i]
        if c.isspace():
            i += 1
        elif c == "{":
            depth, j = 1, i + 1
            while j < len(text) and depth:
                depth += {"{": 1, "}": -1}.get(text[j], 0)
                j += 1
            words.append(text[i + 1:j - 1])
            i = j
        elif c == '"':
            j, out = i + 1, []
            while j < len(text) and text[j] != '"':
                if text[j] == "\\" and j + 1 < len(text):
                    nxt = text[j + 1]
                    out.append({"n": "\n", "t": "\t", "r": "\r"}.get(nxt, nxt if nxt in '[]"{}$\\' else "\\" + nxt))
                    j += 2
                else:
                    out.append(text[j])
                    j += 1
            words.append("".join(out))
            i = j + 1
        else:
            j = i
            while j < len(text) and not text[j].isspace():
                j += 1
            words.append(text[i:j])
            i = j
    return words


def directives(source):
    """Every `{ dg-NAME args }` of a file, as (NAME, [words])."""
    found = []
    for match in re.finditer(r"\{\s*dg-([a-z-]+)", source):
        depth, j = 1, match.start() + 1
        while j < len(source) and depth:
            depth += {"{": 1, "}": -1}.get(source[j], 0)
            j += 1
        found.append((match.group(1), tcl_words(source[match.end():j - 1])))
    return found


TRIPLET = "x86_64-pc-linux-gnu"
# Effective-target keywords false on x86_64 Linux without an offload device; the others hold.
FALSE_KEYWORDS = {"ia32", "ilp32", "offload_device", "offload_device_nonshared_as",
                  "offload_device_shared_as", "offload_target_nvptx", "offload_target_amdgcn",
                  "openacc_nvidia_accel_selected", "openacc_radeon_accel_selected", "hsa",
                  "arm_neon_hw", "powerpc_vsx_ok", "vect_no_align"}


def keyword_holds(word):
    if "-" in word and "*" in word or word.count("-") >= 2:
        import fnmatch
        return fnmatch.fnmatch(TRIPLET, word.replace("?", "*"))
    if word.startswith("offload_target") or word.startswith("offload_device"):
        return False
    if word == "avx_runtime":
        return "avx" in Path("/proc/cpuinfo").read_text()
    return word not in FALSE_KEYWORDS


def expression_holds(words):
    """A DejaGnu selector expression: items (any of them), !, && and ||, braces grouping."""
    if not words:
        return True
    if "||" in words:
        at = words.index("||")
        return expression_holds(words[:at]) or expression_holds(words[at + 1:])
    if "&&" in words:
        at = words.index("&&")
        return expression_holds(words[:at]) and expression_holds(words[at + 1:])
    if words[0] == "!":
        return not expression_holds(words[1:2]) and (len(words) < 3 or expression_holds(words[2:]))
    holds = False
    for word in words:
        holds |= expression_holds(tcl_words(word)) if " " in word.strip() else keyword_holds(word)
    return holds


def selector_holds(words):
    """A `{ target ... }` selector (or `{ ! ... }`) for x86_64 Linux without an offload device."""
    if not words:
        return True
    inner = tcl_words(words[0]) if len(words) == 1 else words
    if inner and inner[0] in ("target", "xfail"):
        if inner[0] == "xfail":
            return True
        inner = inner[1:]
    if len(inner) == 1 and " " in inner[0]:
        inner = tcl_words(inner[0])
    return expression_holds(inner)


def effective_target(name):
    return keyword_holds(name)


OFFLOAD = re.compile(r"^\s*#\s*pragma\s+omp\s+(target|declare\s+target|requires)\b|"
                     r"_Pragma\s*\(\s*\"omp\s+(target|declare\s+target)", re.M)


def with_includes(path, text):
    """The text of a test and of the test files it includes with "...", which may hold its pragmas."""
    for name in re.findall(r'^\s*#\s*include\s+"([^"]+)"', text, re.M):
        included = path.parent / name
        if included.is_file() and included != path:
            text += included.read_text(errors="replace")
    return text


HERE = Path(__file__).resolve().parent


def set_aside(suite):
    """Tests set aside by name (omp-set-aside.tsv): test path -> reason."""
    reasons = {}
    for line in (HERE / "omp-set-aside.tsv").read_text().splitlines():
        parts = line.split("\t")
        if len(parts) == 3 and not line.startswith("#") and parts[0] == suite:
            reasons[parts[1]] = parts[2]
    return reasons


def libgomp_tests(src, only):
    groups = [("libgomp.c", "c", "*.c", "libgomp.c"), ("libgomp.c++", "c++", "*.C", "libgomp.c++"),
              ("libgomp.c-c++-common", "c", "*.c", "libgomp.c-c++-common (C)"),
              ("libgomp.c-c++-common", "c++", "*.c", "libgomp.c-c++-common (C++)")]
    tests = []
    for folder, lang, pattern, group in groups:
        for path in sorted((src / folder).glob(pattern)):
            name = f"{folder}/{path.name}"
            if only and not re.search(only, f"{group}/{path.name}"):
                continue
            text = path.read_text(errors="replace")
            test = Test(group, name, path, lang)
            action, default_options = "run", ["-O2"]
            options = None
            extra = []
            for kind, words in directives(text):
                if kind == "do" and words:
                    action = words[0] if selector_holds(words[1:]) else "skip"
                elif kind == "options" and words and selector_holds(words[1:]):
                    options = shlex.split(words[0])
                elif kind == "additional-options" and words and selector_holds(words[1:]):
                    extra += shlex.split(words[0])
                elif kind == "set-target-env-var" and len(words) >= 2:
                    test.env[words[0]] = words[1]
                elif kind == "output" and words and selector_holds(words[1:]):
                    test.outputs.append(words[0])
                elif kind == "shouldfail":
                    test.shouldfail = True
                elif kind == "additional-sources" and words:
                    test.sources += [str(path.parent / s) for s in words[0].split()]
                elif kind == "require-effective-target" and words and not effective_target(words[0]):
                    action = "skip"
                elif kind == "skip-if" and len(words) >= 2 and selector_holds([words[1]]):
                    action = "skip"
            if action != "run":
                continue
            test.options = (options if options is not None else default_options) + extra
            if re.search(r'#\s*include\s*[<"](libgomp_g\.h|config\.h)', text):
                test.aside = "needs libgomp's own build tree (libgomp_g.h, config.h)"
            everything = with_includes(path, text) + "".join(
                Path(extra).read_text(errors="replace") for extra in test.sources
                if Path(extra).is_file())
            if OFFLOAD.search(everything):
                test.aside = "target offload (#pragma omp target/declare target/requires): out of weft's scope"
            tests.append(test)
    return tests


def judge_libgomp(test, rc, output):
    if test.shouldfail:
        ok = rc != 0
        why = "exited 0 where a failure was expected"
    else:
        ok = rc == 0
        why = f"exit {rc}"
    if ok and test.outputs:
        pattern = "".join(test.outputs)
        try:
            ok = re.search(pattern, output, re.S) is not None
        except re.error:
            ok = pattern in output
        why = "output does not match dg-output"
    return ok, "" if ok else why


# ---- LLVM's lit tests -------------------------------------------------------------------------

def lit_expr_holds(expr, features):
    """A REQUIRES/UNSUPPORTED/XFAIL item: names joined by || and &&, with !."""
    expr = expr.strip()
    if "||" in expr:
        return any(lit_expr_holds(e, features) for e in expr.split("||"))
    if "&&" in expr:
        return all(lit_expr_holds(e, features) for e in expr.split("&&"))
    if expr.startswith("!"):
        return not lit_expr_holds(expr[1:], features)
    return expr in features or expr == "*"


INTERNALS = re.compile(r"\bKMP_[A-Z_]+=|\b__kmp_[a-z_]+|kmp_set_defaults|kmp_set_disp_num_buffers|kmp_get_blocktime|"
                       r"__kmpc_atomic_|__kmpc_proxy_task|__kmpc_get_target_offload|KMP_[A-Z_]+\s*\(")


def llvm_tests(src, only):
    tests = []
    for path in sorted(list(src.rglob("*.c")) + list(src.rglob("*.cpp"))):
        rel = path.relative_to(src)
        if only and not re.search(only, str(rel)):
            continue
        text = path.read_text(errors="replace")
        lines = []
        requires, unsupported = [], []
        pending = ""
        for line in text.splitlines():
            m = re.search(r"\b(RUN|REQUIRES|UNSUPPORTED|XFAIL):(.*)$", line)
            if not m:
                continue
            kind, rest = m.group(1), m.group(2).strip()
            if kind == "RUN":
                if rest.endswith("\\"):
                    pending += rest[:-1] + " "
                    continue
                lines.append(pending + rest)
                pending = ""
            elif kind == "REQUIRES":
                requires += [r.strip() for r in rest.split(",") if r.strip()]
            elif kind == "UNSUPPORTED":
                unsupported += [r.strip() for r in rest.split(",") if r.strip()]
        if not lines:
            continue  # a header or helper, not a test
        features = set(CLANG_FEATURES)
        if any(lit_expr_holds(u, features) for u in unsupported):
            continue
        group = str(rel.parts[0]) if len(rel.parts) > 1 else "."
        test = Test(group, str(rel), path, "c++" if path.suffix == ".cpp" else "c")
        test.run_lines = lines
        missing = [r for r in requires if not lit_expr_holds(r, features | {"ompt"})]
        if missing:
            continue
        if any(lit_expr_holds(r, {"ompt"}) and "ompt" in r for r in requires) or rel.parts[0] == "ompt":
            test.aside = "OMPT (the tools interface): not provided"
        elif INTERNALS.search(text) or INTERNALS.search(" ".join(lines)):
            test.aside = "tests libomp's internals (KMP_* settings or libomp-only entry points)"
        tests.append(test)
    return tests


def lit_command(test, mode, build, workdir):
    if mode == "weft":
        cc = f"{build}/bin/weftcc --cc=clang"
        cxx = f"{build}/bin/weftcxx --cc=clang++"
    else:
        cc, cxx = "clang", "clang++"
    root = test.path
    while root.name != "test":
        root = root.parent
    flags = f"-I {root}"
    subs = [
        ("%libomp-compile-and-run", "%libomp-compile && %libomp-run"),
        ("%libomp-c99-compile-and-run", "%libomp-c99-compile && %libomp-run"),
        ("%libomp-cxx-compile-and-run", "%libomp-cxx-compile && %libomp-run"),
        ("%libomp-cxx-compile-c", "%clangXX %openmp_flags %flags -std=c++14 -x c++ %s -o %t -lm"),
        ("%libomp-cxx-compile", "%clangXX %openmp_flags %flags -std=c++14 %s -o %t -lm"),
        ("%libomp-compile", "%clang %openmp_flags %flags %s -o %t -lm"),
        ("%libomp-c99-compile", "%clang %openmp_flags %flags -std=c99 %s -o %t -lm"),
        ("%libomp-run", "%t"),
        ("%clangXX", cxx), ("%clang", cc), ("%openmp_flags", "-fopenmp"),
        ("%flags-use-compiler-omp-h", flags), ("%flags", flags),
        ("%python", sys.executable), ("%not", NOT),
        ("FileCheck", f"{FILECHECK}"), ("%sort-threads", "sort -n -s"),
        ("%preload-tool", "true ||"), ("%no-as-needed-flag", "-Wl,--no-as-needed"),
        ("%s", str(test.path)), ("%S", str(test.path.parent)), ("%t", f"{workdir}/t"),
        ("%T", str(workdir)),
    ]
    commands = []
    for line in test.run_lines:
        for key, value in subs:
            line = line.replace(key, value)
        commands.append(line)
    return "set -o pipefail\n" + "\n".join(f"( {c} ) || exit $?" for c in commands)


# ---- running ----------------------------------------------------------------------------------

def run_test(test, mode, args):
    workdir = Path(args.work) / args.suite / mode / re.sub(r"[^A-Za-z0-9_.-]", "_", test.group + "__" + test.name)
    workdir.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ)
    env.pop("OMP_NUM_THREADS", None)
    build = Path(args.build).resolve()
    if args.suite == "libgomp":
        if mode == "weft":
            compiler = [str(build / "bin" / ("weftcxx" if test.lang == "c++" else "weftcc"))]
        else:
            compiler = ["g++" if test.lang == "c++" else "gcc"]
        lang = ["-x", "c++"] if test.lang == "c++" and test.path.suffix == ".c" else []
        command = compiler + lang + [str(test.path)] + test.sources + ["-fopenmp"] + test.options + \
            ["-lm", "-o", str(workdir / "t")]
        try:
            built = run_in_group(command, 5 * args.timeout, cwd=workdir, text=True,
                                 errors="replace")
        except subprocess.TimeoutExpired:
            return "FAIL", "compile timed out"
        if built.returncode != 0:
            return "FAIL", "compile: " + first_error(built.stderr)
        env.update(test.env)
        try:
            ran = run_in_group([str(workdir / "t")], args.timeout, cwd=workdir, env=env)
        except subprocess.TimeoutExpired:
            return "FAIL", f"timed out after {args.timeout} s"
        output = (ran.stdout + ran.stderr).decode(errors="replace")
        ok, why = judge_libgomp(test, ran.returncode, output)
        if not ok:
            why += ": " + last_line(output)
        return ("PASS", "") if ok else ("FAIL", why)
    script = lit_command(test, mode, build, workdir)
    try:
        ran = run_in_group(["bash", "-c", script], args.timeout, cwd=workdir, env=env)
    except subprocess.TimeoutExpired:
        return "FAIL", f"timed out after {args.timeout} s"
    if ran.returncode == 0:
        return "PASS", ""
    output = (ran.stdout + ran.stderr).decode(errors="replace")
    return "FAIL", f"exit {ran.returncode}: " + (first_error(output) or last_line(output))


def first_error(text):
    for line in text.splitlines():
        if "error" in line or "undefined reference" in line or "weft" in line:
            return line.strip()[:200]
    return last_line(text)


def last_line(text):
    lines = [l for l in text.splitlines() if l.strip()]
    return lines[-1].strip()[:200] if lines else ""


def read_results(path):
    results = {}
    if path.is_file():
        for line in path.read_text().splitlines():
            parts = line.split("\t")
            if len(parts) == 6:
                results[(parts[1], parts[2], parts[3])] = (parts[4], parts[5])
    return results


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--suite", required=True, choices=["libgomp", "llvm-openmp"])
    parser.add_argument("--src", required=True)
    parser.add_argument("--build", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("--modes", default="weft,ref")
    parser.add_argument("--results", required=True)
    parser.add_argument("--reference-results", required=True)
    parser.add_argument("--rerun-reference", action="store_true")
    parser.add_argument("--keep-passed", action="store_true",
                        help="reuse weft's passes from the previous results, rerun the rest")
    parser.add_argument("--filter", default="")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--timeout", type=int, default=60)
    parser.add_argument("-v", "--verbose", action="store_true")
    parser.add_argument("--report-only", action="store_true",
                        help="print the tables of the last results without running anything")
    args = parser.parse_args()
    src = Path(args.src)
    tests = libgomp_tests(src, args.filter) if args.suite == "libgomp" else llvm_tests(src, args.filter)
    named = set_aside(args.suite)
    for test in tests:
        if test.name in named:
            test.aside = named[test.name]
    modes = args.modes.split(",")
    ref_path = Path(args.reference_results)
    reference = {} if args.rerun_reference else read_results(ref_path)
    previous = read_results(Path(args.results)) if args.keep_passed else {}
    results = {}
    if args.report_only:
        results = read_results(Path(args.results))
        results.update({k: v for k, v in reference.items() if k[2] == "ref"})
        for test in tests:
            for mode in modes:
                if test.aside:
                    results[(test.group, test.name, mode)] = ("ASIDE", test.aside)
        report(args.suite, tests, results, modes)
        return
    jobs = []
    for test in tests:
        for mode in modes:
            key = (test.group, test.name, mode)
            if test.aside:
                results[key] = ("ASIDE", test.aside)
            elif mode == "ref" and key in reference:
                results[key] = reference[key]
            elif mode == "weft" and previous.get(key, ("",))[0] == "PASS":
                results[key] = previous[key]
            else:
                jobs.append((test, mode))
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        futures = {pool.submit(run_test, t, m, args): (t, m) for t, m in jobs}
        for future in concurrent.futures.as_completed(futures):
            test, mode = futures[future]
            results[(test.group, test.name, mode)] = future.result()
            if args.verbose:
                result, why = future.result()
                print(f"{result:5} {mode:4} {test.group}/{test.name} {why}", flush=True)
    # A filtered run updates the results of its tests and keeps the others'.
    written = read_results(Path(args.results)) if args.filter else {}
    written.update(results)
    lines = [f"{args.suite}\t{g}\t{n}\t{m}\t{r}\t{w}" for (g, n, m), (r, w) in sorted(written.items())]
    Path(args.results).parent.mkdir(parents=True, exist_ok=True)
    Path(args.results).write_text("\n".join(lines) + "\n")
    if "ref" in modes:
        merged = dict(reference)
        merged.update({k: v for k, v in results.items() if k[2] == "ref" and v[0] != "ASIDE"})
        ref_path.parent.mkdir(parents=True, exist_ok=True)
        ref_path.write_text("\n".join(f"{args.suite}\t{g}\t{n}\t{m}\t{r}\t{w}"
                                      for (g, n, m), (r, w) in sorted(merged.items())) + "\n")
    report(args.suite, tests, results, modes)


def report(suite, tests, results, modes):
    reference = "libgomp" if suite == "libgomp" else "libomp"
    groups = sorted({t.group for t in tests})
    print(f"\n{suite}: weft beside {reference} on the same tests")
    header = f"{'group':28} {'tests':>5} {'aside':>5} {'weft':>5} {reference:>7} {'weft fails, ' + reference + ' passes':>26}"
    print(header)
    total_pass = total_fail = 0
    for group in groups:
        members = [t for t in tests if t.group == group]
        counted = [t for t in members if not t.aside]
        weft = sum(results.get((t.group, t.name, "weft"), ("",))[0] == "PASS" for t in counted)
        ref = sum(results.get((t.group, t.name, "ref"), ("",))[0] == "PASS" for t in counted)
        worse = sum(results.get((t.group, t.name, "weft"), ("",))[0] != "PASS" and
                    results.get((t.group, t.name, "ref"), ("",))[0] == "PASS" for t in counted)
        total_pass += weft
        total_fail += len(counted) - weft
        print(f"{group:28} {len(members):5} {len(members) - len(counted):5} {weft:5} "
              f"{ref if 'ref' in modes or ref else '-':>7} {worse:26}")
    failures = [t for t in tests if not t.aside and
                results.get((t.group, t.name, "weft"), ("",))[0] not in ("PASS", "")]
    if failures:
        print("\nweft's failures (reference result in brackets):")
        for t in failures:
            r = results.get((t.group, t.name, "ref"), ("?", ""))[0]
            print(f"  {t.group}/{Path(t.name).name} [{reference} {r}]: {results[(t.group, t.name, 'weft')][1]}")
    print(f"\n{total_pass} passed, {total_fail} failed")


if __name__ == "__main__":
    main()
