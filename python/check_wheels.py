"""Checks that each wheel in a folder can be installed where its tag says: the glibc (and
libstdc++) symbol versions its native modules need are no newer than its manylinux tag, the
modules are built for the tag's architecture and stripped, the tag is abi3 for CPython 3.9, and
`auditwheel show` agrees. Prints one line per wheel; exits 1 when any check fails.

    python python/check_wheels.py dist/            # run by python/release.sh

Run with a Python that has auditwheel (and so pyelftools); --no-auditwheel does the symbol check alone.
"""

from __future__ import annotations

import argparse
import io
import pathlib
import re
import subprocess
import sys
import zipfile

from elftools.elf.elffile import ELFFile
from elftools.elf.gnuversions import GNUVerNeedSection

# The ELF machine each wheel architecture must carry (pyelftools' e_machine names).
MACHINES = {"x86_64": "EM_X86_64", "aarch64": "EM_AARCH64"}
# The legacy manylinux tags and the glibc they stand for (PEP 599).
LEGACY = {"manylinux1": (2, 5), "manylinux2010": (2, 12), "manylinux2014": (2, 17)}


def tag_glibc(platform: str) -> tuple[tuple[int, int], str]:
    """(glibc version, architecture) of one platform tag: `manylinux_2_17_x86_64` or
    `manylinux2014_aarch64`; a `linux_*` tag has no glibc promise (an error)."""
    m = re.fullmatch(r"manylinux_(\d+)_(\d+)_(\w+)", platform)
    if m:
        return (int(m[1]), int(m[2])), m[3]
    m = re.fullmatch(r"(manylinux\d+)_(\w+)", platform)
    if m and m[1] in LEGACY:
        return LEGACY[m[1]], m[2]
    raise ValueError(f"platform tag {platform!r} is not a manylinux tag; the package index refuses it")


def needed_versions(elf: ELFFile) -> dict[str, set[str]]:
    """Library → the symbol versions the module needs from it (`.gnu.version_r`)."""
    out: dict[str, set[str]] = {}
    for section in elf.iter_sections():
        if isinstance(section, GNUVerNeedSection):
            for verneed, auxes in section.iter_versions():
                out.setdefault(verneed.name, set()).update(aux.name for aux in auxes)
    return out


def highest(versions: set[str], prefix: str) -> tuple[int, ...] | None:
    found = [tuple(int(x) for x in v[len(prefix):].split(".")) for v in versions
             if v.startswith(prefix) and re.fullmatch(r"[\d.]+", v[len(prefix):])]
    return max(found) if found else None


def check_wheel(path: pathlib.Path, auditwheel: bool) -> tuple[list[str], str]:
    """(problems, summary line) of one wheel."""
    problems: list[str] = []
    # name-version-python-abi-platform.whl; the platform part may hold several tags joined by dots.
    _, _, python_tag, abi_tag, platforms = path.name[:-len(".whl")].split("-")
    if (python_tag, abi_tag) != ("cp39", "abi3"):
        problems.append(f"tag {python_tag}-{abi_tag}, expected cp39-abi3 (one wheel for every CPython >= 3.9)")
    promised: tuple[int, int] | None = None
    arch = None
    for platform in platforms.split("."):
        try:
            glibc, arch = tag_glibc(platform)
        except ValueError as e:
            problems.append(str(e))
            continue
        # A wheel tagged with several policies promises the oldest of them.
        promised = glibc if promised is None else min(promised, glibc)
    needed_glibc: tuple[int, ...] = ()
    needed_glibcxx: tuple[int, ...] | None = None
    modules = 0
    with zipfile.ZipFile(path) as wheel:
        for name in wheel.namelist():
            if not (name.endswith(".so") or ".so." in name):
                continue
            modules += 1
            elf = ELFFile(io.BytesIO(wheel.read(name)))
            if arch is not None and elf["e_machine"] != MACHINES.get(arch):
                problems.append(f"{name} is built for {elf['e_machine']}, the tag says {arch}")
            if elf.get_section_by_name(".symtab") is not None or elf.get_section_by_name(".debug_info") is not None:
                problems.append(f"{name} is not stripped (it has a symbol table or debug info)")
            versions = needed_versions(elf)
            libraries = set(versions)
            allowed = {"libc.so.6", "libm.so.6", "libpthread.so.0", "libdl.so.2", "librt.so.1",
                       "libgcc_s.so.1", "ld-linux-x86-64.so.2", "ld-linux-aarch64.so.1"}
            for lib in sorted(libraries - allowed):
                problems.append(f"{name} needs versioned symbols of {lib}, which manylinux does not promise")
            for lib, names in versions.items():
                v = highest(names, "GLIBC_")
                if v is not None:
                    needed_glibc = max(needed_glibc, v)
                v = highest(names, "GLIBCXX_")
                if v is not None:
                    needed_glibcxx = max(needed_glibcxx or v, v)
            if promised is not None and needed_glibc > promised:
                problems.append(f"{name} needs GLIBC_{'.'.join(map(str, needed_glibc))}, newer than the tag's "
                                f"glibc {promised[0]}.{promised[1]}")
    if modules == 0:
        problems.append("no native module in the wheel")
    report = ""
    if auditwheel:
        out = subprocess.run([sys.executable, "-m", "auditwheel", "show", str(path)], capture_output=True, text=True)
        text = " ".join((out.stdout + out.stderr).split())
        m = re.search(r'consistent with the following platform tag: "manylinux_(\d+)_(\d+)_(\w+)"', text)
        if out.returncode != 0 or not m:
            problems.append(f"auditwheel show: {text[:300]}")
        else:
            audited = (int(m[1]), int(m[2]))
            report = f", auditwheel: manylinux_{audited[0]}_{audited[1]}"
            if promised is not None and audited > promised:
                problems.append(f"auditwheel says manylinux_{audited[0]}_{audited[1]}, newer than the tag's glibc "
                                f"{promised[0]}.{promised[1]}")
    glibcxx = "none" if needed_glibcxx is None else ".".join(map(str, needed_glibcxx))
    summary = (f"{path.name}: {path.stat().st_size / 1e6:.2f} MB, needs GLIBC_{'.'.join(map(str, needed_glibc))}"
               f" (tag: {'?' if promised is None else '.'.join(map(str, promised))}), GLIBCXX {glibcxx}{report}")
    return problems, summary


def self_test() -> int:
    """The check must fail on what it exists to catch: a module of this machine (built against its
    newer glibc) in a wheel tagged manylinux2014, and a wheel tagged plain `linux_*`."""
    import platform
    import sysconfig
    import tempfile

    arch = platform.machine()
    best: tuple[tuple[int, ...], pathlib.Path] | None = None
    for so in sorted(pathlib.Path(sysconfig.get_config_var("DESTSHARED")).glob("*.so")):
        with so.open("rb") as f:
            needed = highest(set().union(*needed_versions(ELFFile(f)).values()), "GLIBC_")
        if needed is not None and (best is None or needed > best[0]):
            best = (needed, so)
    if best is None or best[0] <= (2, 17):
        print("self-test: no module of this Python needs glibc > 2.17; nothing to test with")
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        failures = []
        for platform_tag, expected in ((f"manylinux2014_{arch}", "newer than the tag's glibc 2.17"),
                                       (f"linux_{arch}", "is not a manylinux tag")):
            wheel = pathlib.Path(tmp) / f"fxonnx-0.0.0-cp39-abi3-{platform_tag}.whl"
            with zipfile.ZipFile(wheel, "w") as z:
                z.write(best[1], "fxonnx/_fxonnx.abi3.so")
            problems, _ = check_wheel(wheel, auditwheel=False)
            if not any(expected in p for p in problems):
                failures.append(f"{wheel.name} ({best[1].name}) passed: {problems}")
    for f in failures:
        print(f"self-test FAILED: {f}")
    if not failures:
        print(f"self-test: a {best[1].name} needing GLIBC_{'.'.join(map(str, best[0]))} is refused "
              "under a manylinux2014 tag and under a linux tag")
    return 1 if failures else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dist", type=pathlib.Path, nargs="?", help="the folder holding the wheels")
    parser.add_argument("--self-test", action="store_true",
                        help="first check that mislabeled wheels made of this machine's modules fail")
    parser.add_argument("--no-auditwheel", action="store_true", help="the symbol check alone")
    parser.add_argument("--arch", action="append", default=[],
                        help="an architecture that must have a wheel (repeatable)")
    args = parser.parse_args()
    if args.self_test and self_test() != 0:
        return 1
    if args.dist is None:
        return 0
    wheels = sorted(args.dist.glob("*.whl"))
    failed = False
    if not wheels:
        print(f"error: no wheel in {args.dist}", file=sys.stderr)
        return 1
    for arch in args.arch:
        if not any(w.name.endswith(f"_{arch}.whl") for w in wheels):
            print(f"error: no {arch} wheel in {args.dist}", file=sys.stderr)
            failed = True
    for wheel in wheels:
        problems, summary = check_wheel(wheel, not args.no_auditwheel)
        print(("FAIL " if problems else "ok   ") + summary)
        for p in problems:
            print(f"     - {p}")
        failed |= bool(problems)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
