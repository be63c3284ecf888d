"""Import-time benchmark: what singletable adds to a program's start-up.

Run ``python bench/imports.py [--runs 10] [--seed 7] [--json out.json]``.

Every run starts fresh interpreters (``python -c ...``), one per contender, in an order
shuffled per run with a seeded RNG:

* ``python -c pass`` -- the interpreter alone;
* ``boto3+pydantic`` -- ``import boto3, pydantic``;
* ``singletable`` -- ``import boto3, pydantic, singletable``. The package's names load on
  first use (as pydantic's do), so this is the package alone;
* ``by hand: one pydantic model`` -- ``import boto3`` and one ``pydantic.BaseModel``
  subclass: what a program that maps items by hand loads. ``import pydantic`` is lazy, and
  its first model class loads the model machinery and discovers plugins through the
  installed packages' entry points (30-45 ms, paid by any program with a pydantic model);
* ``singletable: one entity + repository`` -- the same program with the model declared as a
  singletable ``Entity`` (same fields, key templates) and a ``Repository`` with one
  pattern: what an application of singletable loads.

Each contender is timed twice per run: the wall time of the whole subprocess, and (in a
separate subprocess) ``-X importtime``'s top-level cumulative microseconds. Each overhead
is the median of per-run differences between two contenders measured in the same run:

* ``import singletable`` over ``import boto3, pydantic`` (target ≤ 15 ms);
* the singletable program over the by-hand program: singletable's own cost to an
  application (same target);
* the singletable program over ``import boto3, pydantic``: all it pays, pydantic's model
  machinery included (no target: any pydantic program pays that part).

The script also prints the modules only the singletable program loads (against the by-hand
program), by self time (median over the runs), and checks that no CLI, lint, layout or
testing module is among them.

Not a test: absolute milliseconds depend on the machine and its load.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

#: Acceptance target: ms that singletable may add (see COMPARISONS).
TARGET_MS = 15.0

_FIELDS = "    order_id: str\n    customer_id: str\n    total: int\n"
CONTENDERS: dict[str, str] = {
    "python -c pass": "pass",
    "boto3+pydantic": "import boto3, pydantic",
    "singletable": "import boto3, pydantic, singletable",
    "by hand: one pydantic model": (
        "import boto3, pydantic\nfrom pydantic import BaseModel\n"
        f"class Order(BaseModel):\n{_FIELDS}"
    ),
    "singletable: one entity + repository": (
        "import boto3, pydantic\nfrom singletable import Entity, Repository, Table, get\n"
        "shop = Table('shop')\n"
        f"class Order(Entity, table=shop, type='ORDER'):\n{_FIELDS}"
        "    class Keys:\n        pk = 'CUSTOMER#{customer_id}'\n        sk = 'ORDER#{order_id}'\n"
        "class Shop(Repository, table=shop):\n    order = get(Order)\n"
    ),
}
#: (label, contender, baseline, target in ms or None)
COMPARISONS: list[tuple[str, str, str, float | None]] = [
    (
        "`import singletable` over `import boto3, pydantic`",
        "singletable",
        "boto3+pydantic",
        TARGET_MS,
    ),
    (
        "an entity + repository over the same model by hand",
        "singletable: one entity + repository",
        "by hand: one pydantic model",
        TARGET_MS,
    ),
    (
        "an entity + repository over `import boto3, pydantic`",
        "singletable: one entity + repository",
        "boto3+pydantic",
        None,
    ),
]
APPLICATION = "singletable: one entity + repository"
BY_HAND = "by hand: one pydantic model"

#: singletable modules that must not be imported by ``import singletable`` (CLI, lint,
#: layout/explain rendering, the moto testing helper).
MUST_BE_LAZY = ("singletable._tools", "singletable.testing")


def run_wall(code: str) -> float:
    """ms of wall time for one fresh interpreter running ``code``."""
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], check=True, env=_env())
    return (time.perf_counter() - start) * 1000


def run_importtime(code: str) -> tuple[float, dict[str, tuple[float, float, int]]]:
    """(top-level cumulative ms, {module: (self ms, cumulative ms, depth)}) from -X importtime."""
    out = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", code],
        check=True,
        capture_output=True,
        text=True,
        env=_env(),
    )
    total = 0.0
    modules: dict[str, tuple[float, float, int]] = {}
    for line in out.stderr.splitlines():
        if not line.startswith("import time:") or "self [us]" in line:
            continue
        self_us, cumulative_us, raw_name = line.removeprefix("import time:").split("|", 2)
        depth = (len(raw_name) - len(raw_name.lstrip()) - 1) // 2
        name = raw_name.strip()
        self_ms, cumulative_ms = int(self_us) / 1000, int(cumulative_us) / 1000
        modules[name] = (self_ms, cumulative_ms, depth)
        if depth == 0:
            total += cumulative_ms
    return total, modules


#: Bytecode caches for the measured interpreters, outside the work tree. An installed package
#: has its .pyc files (pip compiles them); a checkout run with PYTHONDONTWRITEBYTECODE=1 does
#: not, and would then be measured compiling every module from source on every run.
PYCACHE = Path(tempfile.gettempdir()) / "singletable-bench-pycache"


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env.pop("PYTHONIMPORTTIME", None)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = str(PYCACHE)
    return env


def measure(runs: int, seed: int) -> dict[str, Any]:
    """Interleaved measurements: per contender, ``runs`` wall and -X importtime samples."""
    rng = random.Random(seed)
    wall: dict[str, list[float]] = {name: [] for name in CONTENDERS}
    importtime: dict[str, list[float]] = {name: [] for name in CONTENDERS}
    module_samples: dict[str, list[dict[str, tuple[float, float, int]]]] = {
        name: [] for name in CONTENDERS
    }
    for code in CONTENDERS.values():  # write the .pyc files, warm the file cache (not recorded)
        run_wall(code)
        run_wall(code)
    for _ in range(runs):
        order = list(CONTENDERS)
        rng.shuffle(order)
        for name in order:
            wall[name].append(run_wall(CONTENDERS[name]))
            total, modules = run_importtime(CONTENDERS[name])
            importtime[name].append(total)
            module_samples[name].append(modules)
    return {"wall": wall, "importtime": importtime, "modules": module_samples}


def summarise(data: dict[str, Any]) -> dict[str, Any]:
    wall, importtime = data["wall"], data["importtime"]
    rows: dict[str, Any] = {}
    for name in CONTENDERS:
        rows[name] = {
            "wall_ms": statistics.median(wall[name]),
            "wall_above_pass_ms": statistics.median(
                a - b for a, b in zip(wall[name], wall["python -c pass"])
            ),
            "importtime_ms": statistics.median(importtime[name]),
        }
    overhead: dict[str, Any] = {}
    for label, name, base, target in COMPARISONS:
        overhead[label] = {
            "wall_ms": statistics.median(a - b for a, b in zip(wall[name], wall[base])),
            "importtime_ms": statistics.median(
                a - b for a, b in zip(importtime[name], importtime[base])
            ),
            "target_ms": target,
        }
    # modules only the singletable program loads, by median self time
    base_modules = set().union(*(set(m) for m in data["modules"][BY_HAND]))
    extra: dict[str, list[float]] = {}
    depth: dict[str, int] = {}
    for modules in data["modules"][APPLICATION]:
        for name, (self_ms, _cum, d) in modules.items():
            if name not in base_modules:
                extra.setdefault(name, []).append(self_ms)
                depth[name] = d
    extra_rows = sorted(
        ((name, statistics.median(v), depth[name]) for name, v in extra.items()),
        key=lambda r: -r[1],
    )
    lazy_violations = sorted(
        name for name in extra if any(name == m or name.startswith(m + ".") for m in MUST_BE_LAZY)
    )
    return {
        "rows": rows,
        "overhead": overhead,
        "extra_modules": extra_rows,
        "lazy_violations": lazy_violations,
    }


def report(summary: dict[str, Any], runs: int, *, top: int = 25) -> str:
    """The Markdown tables (returned, so bench/e2e.py can print them too)."""
    lines = [
        f"Import time: {runs} interleaved fresh-interpreter runs per contender "
        "(wall time of `python -c`, and -X importtime's top-level cumulative time in a "
        "separate run); medians",
        "",
        "| import | median wall ms | wall ms above `python -c pass` | -X importtime ms |",
        "|---|---:|---:|---:|",
    ]
    for name, row in summary["rows"].items():
        lines.append(
            f"| {name} | {row['wall_ms']:.1f} | {row['wall_above_pass_ms']:.1f} | "
            f"{row['importtime_ms']:.1f} |"
        )
    lines += ["", "| overhead | wall ms | -X importtime ms | target |", "|---|---:|---:|---|"]
    for label, row in summary["overhead"].items():
        target = row["target_ms"]
        verdict = (
            f"≤ {target:.0f} ms: {'PASS' if row['wall_ms'] <= target else 'FAIL'}"
            if target is not None
            else "(pydantic's model machinery included)"
        )
        lines.append(f"| {label} | {row['wall_ms']:.1f} | {row['importtime_ms']:.1f} | {verdict} |")
    lines += [
        "",
        f"Modules only the singletable program loads (not the by-hand one), top {top} by "
        "median self time "
        "(-X importtime; depth 0 = imported at top level):",
        "",
        "| module | self ms | depth |",
        "|---|---:|---:|",
    ]
    for name, self_ms, d in summary["extra_modules"][:top]:
        lines.append(f"| {name} | {self_ms:.2f} | {d} |")
    total_own = sum(r[1] for r in summary["extra_modules"] if r[0].startswith("singletable"))
    total_other = sum(r[1] for r in summary["extra_modules"] if not r[0].startswith("singletable"))
    lines += [
        "",
        f"self time of singletable.* modules: {total_own:.1f} ms; of other modules only "
        f"singletable loads: {total_other:.1f} ms",
    ]
    if summary["lazy_violations"]:
        lines.append("eagerly imported, should be lazy: " + ", ".join(summary["lazy_violations"]))
    else:
        lines.append("no CLI/lint/layout/testing module is imported by the singletable program")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=10, help="runs per contender (default 10)")
    parser.add_argument("--seed", type=int, default=7, help="order seed (default 7)")
    parser.add_argument("--json", type=Path, help="also write the results to this file")
    args = parser.parse_args(argv)
    if args.runs < 1:
        parser.error("--runs must be ≥ 1")
    print(f"command: `{shlex.join(['python', 'bench/imports.py', *sys.argv[1:]])}`")
    python = platform.python_version()
    print(f"machine: {platform.platform()}, {os.cpu_count()} CPUs, Python {python}")
    print()
    data = measure(args.runs, args.seed)
    summary = summarise(data)
    print(report(summary, args.runs))
    if args.json:
        payload = {"command": sys.argv, "summary": summary, "samples": data["wall"]}
        args.json.write_text(json.dumps(payload, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
