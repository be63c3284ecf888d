"""The GC diagnosis and the memory pass of ``bench/scaling.py`` (run from there).

**GC diagnosis**: each contender's read with CPython's cyclic collector as it is, disabled
around the read, after ``gc.freeze()`` (everything older than the read moved out of the
collector's reach) and with ``gc.set_threshold(10_000)`` (a young generation of 10,000
objects instead of 700), interleaved call by call; modes are set up and undone outside the
timed region. With the collector as it is, ``gc.callbacks`` measure its own thread CPU time and
count its collections per generation. Figures are means over all reads (amortised: a full
collection lands in one read but is paid for by everything that filled the heap). Also
printed: the GC-tracked objects in the heap and in one wire item and one entity.

**Memory pass** (untimed: tracemalloc slows everything): the peak traced bytes per item of
one read, and the bytes its result holds, against the floor: ``model_validate`` of the same
number of entities from Python dicts built beforehand.
"""

from __future__ import annotations

import gc
import random
import statistics
import time
import tracemalloc
from collections.abc import Callable
from typing import Any, Protocol

TIMES = "\u00d7"


class Reader(Protocol):
    read: Callable[[Any], list[Any]]  # a partition -> its items (wire dicts or entities)


class Part(Protocol):
    kb: int
    size: int

    def orders(self) -> list[Any]: ...


# -- the garbage collector ----------------------------------------------------------------------

_THRESHOLD = gc.get_threshold()
#: Diagnosis modes: (set up before the read, undo after it), both outside the timed region.
GC_MODES: dict[str, tuple[Callable[[], Any], Callable[[], Any]]] = {
    "GC on": (lambda: None, lambda: None),
    "GC off": (gc.disable, gc.enable),
    "after gc.freeze()": (gc.freeze, gc.unfreeze),
    "gc.set_threshold(10_000)": (
        lambda: gc.set_threshold(10_000, *_THRESHOLD[1:]),
        lambda: gc.set_threshold(*_THRESHOLD),
    ),
}


class GcClock:
    """The collector's own thread CPU time and its collections per generation (gc.callbacks)."""

    def __init__(self) -> None:
        self.ns = 0
        self.started = 0
        self.collections = [0, 0, 0]

    def __call__(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self.started = time.thread_time_ns()
        else:
            self.ns += time.thread_time_ns() - self.started
            self.collections[info["generation"]] += 1


def tracked_objects(root: Any) -> int:
    """GC-tracked objects reachable from ``root`` (classes not followed): what a collection
    has to visit for it."""
    seen: set[int] = set()
    stack, count = [root], 0
    while stack:
        obj = stack.pop()
        if id(obj) in seen or isinstance(obj, type):
            continue
        seen.add(id(obj))
        count += gc.is_tracked(obj)
        stack.extend(gc.get_referents(obj))
    return count


def gc_diagnosis(
    contenders: dict[str, Reader],
    parts: list[Part],
    rounds: int,
    steps: Callable[[Any], int],
    rng: random.Random,
    raw: str,
) -> dict[str, Any]:
    """Each contender in each of :data:`GC_MODES`, interleaved call by call (the timed rounds
    before it were the warm-up); with the collector as it is, its own time and collections.
    ``raw`` names the contender whose result is wire items."""
    clock = GcClock()
    slots = [(n, m) for n in contenders for m in GC_MODES]
    cpu: dict[tuple[int, int, str, str], list[int]] = {}
    spent: dict[tuple[int, int, str], list[tuple[int, list[int]]]] = {}
    thread_time = time.thread_time_ns
    heap = len(gc.get_objects())
    gc.callbacks.append(clock)
    try:
        for _ in range(rounds):
            for p in rng.sample(parts, len(parts)):
                gc.collect()
                for _ in range(steps(p)):
                    for name, mode in rng.sample(slots, len(slots)):
                        read, (enter, leave) = contenders[name].read, GC_MODES[mode]
                        enter()
                        ns, collections = clock.ns, clock.collections[:]
                        c0 = thread_time()
                        read(p)
                        c1 = thread_time()
                        leave()
                        cpu.setdefault((p.kb, p.size, name, mode), []).append(c1 - c0)
                        if mode == "GC on":
                            done = [a - b for a, b in zip(clock.collections, collections)]
                            spent.setdefault((p.kb, p.size, name), []).append((clock.ns - ns, done))
    finally:
        gc.callbacks.remove(clock)
    rows: dict[int, dict[str, Any]] = {}
    for p in parts:
        for name in contenders:
            calls = spent[p.kb, p.size, name]
            row: dict[str, Any] = {
                m: statistics.mean(cpu[p.kb, p.size, name, m]) / p.size / 1e3 for m in GC_MODES
            }
            row["in_gc_us_per_item"] = statistics.mean(ns for ns, _ in calls) / p.size / 1e3
            row["collections"] = [statistics.mean(d[g] for _, d in calls) for g in range(3)]
            rows.setdefault(p.kb, {}).setdefault(name, {})[p.size] = row
    per_item = {}
    for kb in rows:
        p = next(p for p in parts if p.kb == kb)
        wire = tracked_objects(contenders[raw].read(p)[0])
        per_item[kb] = {"wire item": wire, "entity": tracked_objects(p.orders()[0])}
    return {"heap_tracked_objects": heap, "tracked_per_item": per_item, "rows": rows}


def report_gc(label: str, diag: dict[str, Any]) -> None:
    for kb, rows in diag["rows"].items():
        tracked = diag["tracked_per_item"][kb]
        print(
            f"#### {label}, {kb} KB items: the cyclic GC. Mean µs CPU per item (÷ the same "
            f"column at the next smaller page); heap {diag['heap_tracked_objects']:,} "
            f"GC-tracked objects; per item, {tracked['wire item']} tracked objects in a wire "
            f"item and {tracked['entity']} in an entity"
        )
        print()
        print(
            "| contender | page |" + "".join(f" {m} |" for m in GC_MODES) + " in the collector "
            "(GC on, mean µs/item) | collections per read (gen 0 / 1 / 2) |"
        )
        print("|---|---:|" + "---:|" * (len(GC_MODES) + 1) + "---|")
        for name, by_size in rows.items():
            smaller = by_size[min(by_size)]
            for size, r in by_size.items():
                cells = "".join(f" {r[m]:,.1f} ({r[m] / smaller[m]:.2f}) |" for m in GC_MODES)
                g0, g1, g2 = r["collections"]
                print(
                    f"| {name} | {size} |{cells} {r['in_gc_us_per_item']:,.1f} | "
                    f"{g0:,.1f} / {g1:,.2f} / {g2:,.2f} |"
                )
                smaller = r
        print()


# -- memory -----------------------------------------------------------------------------------

FLOOR = "floor: model_validate of pre-built dicts"


def traced(fn: Callable[[], Any], count: int) -> dict[str, float]:
    """Peak and held (result still alive) traced bytes per item of one ``fn()``."""
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        result = fn()
        current, peak = tracemalloc.get_traced_memory()
        del result
    finally:
        tracemalloc.stop()
    return {"peak": (peak - before) / count, "held": (current - before) / count}


def memory_pass(
    contenders: dict[str, Reader], parts: list[Part], validate: Callable[[Any], Any]
) -> dict[int, Any]:
    """kb -> row -> size -> bytes per item (untimed: tracemalloc slows everything)."""
    out: dict[int, dict[str, Any]] = {}
    for p in parts:
        rows = out.setdefault(p.kb, {})
        for name, c in contenders.items():
            c.read(p)  # first-use caches are not the read's
            rows.setdefault(name, {})[p.size] = traced(lambda: c.read(p), p.size)  # noqa: B023
        dicts = [o.model_dump() for o in p.orders()]
        floor = traced(lambda: [validate(d) for d in dicts], p.size)  # noqa: B023
        rows.setdefault(FLOOR, {})[p.size] = floor
    return out


def report_memory(label: str, memory: dict[int, Any]) -> None:
    for kb, rows in memory.items():
        sizes = sorted(rows[FLOOR])
        print(
            f"#### {label}, {kb} KB items: tracemalloc peak bytes per item during one read "
            f"({TIMES} the floor), and the bytes per item its result holds"
        )
        print()
        print("| contender |" + "".join(f" peak @{s} |" for s in sizes) + f" held @{sizes[-1]} |")
        print("|---|" + "---:|" * (len(sizes) + 1))
        for name, by_size in rows.items():
            cells = "".join(
                f" {by_size[s]['peak']:,.0f} ({by_size[s]['peak'] / rows[FLOOR][s]['peak']:.1f}"
                f"{TIMES}) |"
                for s in sizes
            )
            print(f"| {name} |{cells} {by_size[sizes[-1]]['held']:,.0f} |")
        print()
    print(
        "The floor validates the same entities from Python dicts made beforehand (it reuses "
        "their strings, numbers and datetimes, so it counts the model objects only); raw "
        "boto3's held bytes are the wire dicts. tracemalloc sees Python's allocators, not "
        "pydantic-core's own Rust buffers."
    )
    print()
