"""Fuzzed dumps: real demo-dump files, mutated, read through the index's public API (Catalog / RunQueries).

Each case copies the demo dump's six files into a fresh directory, damages one of them (truncation at and inside
record boundaries, flipped bytes, bad CRCs, huge length fields with and without a valid header CRC, inserted
garbage, zero-length files, a file of the wrong kind under a right name, a missing companion file, non-UTF-8 paths
and source lines), builds a Catalog (its constructor runs one read pass: no background thread) and then checks:

- no exception escapes any query, nothing is answered that the API's JSON encoder cannot take, and no pass had to
  be rescued by the catalog's catch-all ("refresh_failed" means the reader raised on bad input: a bug);
- bounded time (an interval timer aborts a case that takes too long) and bounded memory (tracemalloc peak);
- every record before the damage is served, equal to a cold read of the pristine dump, and every file that was not
  touched is served in full;
- for damage the reader can tell apart from a shorter valid file, the run's status names the file and the offset.

The cost of a case is dominated by CRC-checking `source_files` (the demo's is 5 MB of TF modules), so the fuzz base
keeps only its first SOURCE_RECORDS records (a truncation at a record boundary, itself one of the mutations); a few
cases per run still mutate the full file. `DBG_FUZZ_CASES=10000 scripts/fuzz.sh` is the dedicated long run.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import signal
import struct
import tempfile
import tracemalloc

import pytest
from fuzz_records import masked_crc, source_record, spans
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tensorboard_plugin_dbg.analysis import alerts, root_cause
from tensorboard_plugin_dbg.api import json_encoding
from tensorboard_plugin_dbg.index.catalog import Catalog
from tensorboard_plugin_dbg.index.protocol import NotFound
from tensorboard_plugin_dbg.index.trace_filter import TraceFilter
from tensorboard_plugin_dbg.reader import schema

CASES = int(os.environ.get("DBG_FUZZ_CASES", "60"))
SOURCE_RECORDS = 3
CASE_SECONDS = 20.0  # one case normally takes ~30 ms; this only catches hangs
PEAK_BYTES = 64 << 20  # the files are < 1 MB (5 MB for the full source file); 64 MB means something was sized
SUFFIXES = ("metadata", "source_files", "stack_frames", "graphs", "execution", "graph_execution_traces")


# ------------------------------------------------------------------------------------------ the pristine dump
@dataclasses.dataclass(repr=False)
class Base:
    prefix: str
    files: dict  # suffix -> bytes (fuzz base: source_files trimmed)
    full_sources: bytes
    spans: dict  # suffix -> [(start, end)]
    expect: dict  # suffix -> per-record expectation (see _expectations)

    def _repr_pretty_(self, p, cycle):  # hypothesis prints this on failure; the bytes would be megabytes
        p.text(f"Base({self.prefix})")


def _rows(run) -> dict:
    n_exec, n_tr = run.info()["counts"]["executions"], run.info()["counts"]["graph_executions"]
    execs = [r for b in range(0, n_exec, 1000) for r in run.executions(b, min(n_exec, b + 1000))["executions"]]
    traces = [r for b in range(0, n_tr, 1000) for r in run.graph_executions(b, min(n_tr, b + 1000))["rows"]]
    return {
        "execution": [(r["wall_time"], r["op_type"], r["num_outputs"]) for r in execs],
        "graph_execution_traces": [(r["wall_time"], r["op_name"], r["output_slot"], r["graph_id"]) for r in traces],
    }


def _expectations(files: dict, rows: dict, run) -> dict:
    """Per file, one entry per record: what the index must serve when that record is intact."""
    expect = dict(rows)
    expect["metadata"] = [run.info()["tf_version"]]
    expect["source_files"] = [f["path"] for f in run.source_files()["files"]]
    frames, graph_items = [], []
    for suffix, out in (("stack_frames", frames), ("graphs", graph_items)):
        data = files[suffix]
        for start, end in spans(data):
            event = schema.parse_event(data[start + 12 : end - 4])
            what = event.WhichOneof("what")
            if what == "stack_frame_with_id":
                flc = event.stack_frame_with_id.file_line_col
                out.append((event.stack_frame_with_id.id, int(flc.line), flc.func))
            elif what == "graph_op_creation":
                op = event.graph_op_creation
                out.append(("op", op.graph_id, op.op_name, op.op_type))
            elif what == "debugged_graph":
                out.append(("graph", event.debugged_graph.graph_id))
            else:
                out.append(("other",))
    expect["stack_frames"], expect["graphs"] = frames, graph_items
    for suffix in SUFFIXES:
        assert len(expect[suffix]) == len(spans(files[suffix])), suffix
    return expect


@pytest.fixture(scope="module")
def base(demo_dump) -> Base:
    names = sorted(os.listdir(demo_dump))
    assert len(names) == 6, names
    prefix = names[0].rsplit(".", 1)[0]
    files = {}
    for suffix in SUFFIXES:
        with open(os.path.join(demo_dump, f"{prefix}.{suffix}"), "rb") as f:
            files[suffix] = f.read()
    full_sources = files["source_files"]
    files["source_files"] = full_sources[: spans(full_sources)[SOURCE_RECORDS - 1][1]]
    with tempfile.TemporaryDirectory(prefix="dbg-fuzz-base-") as tmp:
        _write(tmp, "d", prefix, files)
        run = Catalog(tmp).runs()[0]
        expect = _expectations(files, _rows(run), run)
    assert expect["execution"] and expect["graph_execution_traces"] and len(expect["source_files"]) == SOURCE_RECORDS
    return Base(prefix, files, full_sources, {s: spans(files[s]) for s in SUFFIXES}, expect)


def _write(root: str, dirname, prefix: str, files: dict) -> str:
    directory = os.path.join(os.fsencode(root), os.fsencode(dirname))
    os.makedirs(directory)
    for suffix, data in files.items():
        if data is None:
            continue  # a missing companion file
        path = os.path.join(directory, os.fsencode(f"{prefix}.{suffix}"))
        if isinstance(data, str):  # "dir": a directory where the file should be
            os.makedirs(path)
            continue
        with open(path, "wb") as f:
            f.write(data)
    return os.fsdecode(directory)


# ------------------------------------------------------------------------------------------ mutations
KINDS = (
    "truncate_boundary",
    "truncate_inside",
    "flip",
    "bad_length_crc",
    "bad_data_crc",
    "huge_length",
    "huge_length_valid_crc",
    "garbage",
    "zero_length",
    "wrong_kind",
    "not_tfrecord",
    "missing",
    "directory",
    "non_utf8_path",
    "non_utf8_lines",
    "full_sources",
)


@dataclasses.dataclass
class Case:
    suffix: str
    kind: str
    files: dict = dataclasses.field(repr=False)
    damage_at: int  # first byte that differs from the pristine file (len(file) when nothing before it changed)
    # "offset": a notice names the file and an offset <= notice_max; "file": a notice names the file; "none": a
    # valid (shorter or renamed) file set, no notice names any file; "after": a notice may name the file, only at
    # an offset >= damage_at (nothing before the appended record is blamed)
    notice: str
    whole_after: bool = False  # the damage is one record: every record after it is served too
    record: int = -1  # the damaged record
    notice_max: int = 0  # the latest offset a notice may name: where the damaged record (or the garbage) starts
    dirname: object = "run"
    prefix: str = ""

    def _repr_pretty_(self, p, cycle):
        p.text(f"Case({self.kind} in {self.suffix} at {self.damage_at}, record {self.record}, dir {self.dirname!r})")


def _record_at(sp: list, pos: int) -> int:
    for i, (s, e) in enumerate(sp):
        if s <= pos < e:
            return i
    return len(sp)


@st.composite
def cases(draw, base: Base, suffix: str | None = None, kind: str | None = None) -> Case:
    suffix = suffix or draw(st.sampled_from(SUFFIXES))
    kind = kind or draw(st.sampled_from(KINDS))
    files = dict(base.files)
    data, sp = files[suffix], base.spans[suffix]
    rec = draw(st.integers(0, len(sp) - 1))
    start, end = sp[rec]
    case = Case(suffix, kind, files, len(data), "none", prefix=base.prefix)
    if kind == "truncate_boundary":
        files[suffix] = data[:start]
        case.damage_at = start
    elif kind == "truncate_inside":
        cut = draw(st.integers(start + 1, end - 1))
        files[suffix], case.damage_at, case.notice = data[:cut], cut, "offset"
    elif kind == "flip":
        positions = sorted(set(draw(st.lists(st.integers(start, end - 1), min_size=1, max_size=4))))
        buf = bytearray(data)
        for p in positions:
            buf[p] ^= draw(st.integers(1, 255))
        files[suffix], case.damage_at, case.notice = bytes(buf), positions[0], "offset"
        case.whole_after = True
    elif kind in ("bad_length_crc", "bad_data_crc"):
        at = start + 8 if kind == "bad_length_crc" else end - 4
        buf = bytearray(data)
        buf[at : at + 4] = struct.pack("<I", (struct.unpack_from("<I", data, at)[0] ^ draw(st.integers(1, 2**32 - 1))))
        files[suffix], case.damage_at, case.notice, case.whole_after = bytes(buf), at, "offset", True
    elif kind in ("huge_length", "huge_length_valid_crc"):
        length = draw(st.sampled_from((2**30 + 1, 2**31, 2**32 + 7, 2**63, 2**64 - 1, 2**40)))
        head = struct.pack("<Q", length)
        crc = struct.pack("<I", masked_crc(head)) if kind.endswith("valid_crc") else data[start + 8 : start + 12]
        files[suffix] = data[:start] + head + crc + data[start + 12 :]
        case.damage_at, case.notice, case.whole_after = start, "offset", True
    elif kind == "garbage":
        junk = draw(st.binary(min_size=1, max_size=64))
        files[suffix] = data[:start] + junk + data[start:]
        case.damage_at, case.notice = start, "offset"
    elif kind == "zero_length":
        files[suffix], case.damage_at = b"", 0
    elif kind == "wrong_kind":
        other = draw(st.sampled_from([s for s in SUFFIXES if s != suffix and base.files[s]]))
        files[suffix], case.damage_at, case.notice = base.files[other], 0, "offset"
    elif kind == "not_tfrecord":
        files[suffix] = draw(
            st.sampled_from(
                (
                    b"<html><img src=x onerror=alert(1)></html>\n" * 20,
                    b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4,
                    b"\x00" * 4096,
                )
            )
        )
        case.damage_at, case.notice = 0, "offset"
    elif kind == "missing":
        files[suffix], case.damage_at, case.notice = None, 0, "file"
    elif kind == "directory":
        files[suffix], case.damage_at, case.notice = "dir", 0, "file"
    elif kind == "non_utf8_path":
        # The directory and the host part of the file names are not UTF-8; nothing else changes.
        case.dirname = b"run\xff\xfe" + draw(st.sampled_from((b"", b"<img src=x>", b"\xc3\x28")))
        case.prefix = os.fsdecode(os.fsencode(base.prefix.rsplit(".", 1)[0]) + b".h\xff\xfest")
    elif kind == "non_utf8_lines":
        suffix = case.suffix = "source_files"
        bad = source_record(
            draw(st.sampled_from((b"/u/\xff\xfe.py", b"/u/ok.py"))),
            [b"x = 1", b"y = '\xff\xfe\xc3\x28'", b"<img src=x onerror=alert(1)>"],
        )
        files[suffix] = base.files[suffix] + bad
        case.damage_at = len(base.files[suffix])  # everything already there stays
        case.notice = "after"
    elif kind == "full_sources":
        suffix = case.suffix = "source_files"
        full = base.full_sources
        fsp = spans(full)
        cut = draw(st.integers(0, len(fsp) - 1))
        s, e = fsp[cut]
        mode = draw(st.sampled_from(("truncate_inside", "flip")))
        if mode == "truncate_inside":
            cut_at = draw(st.integers(s + 1, e - 1))
            files[suffix], case.damage_at, case.notice = full[:cut_at], cut_at, "offset"
        else:
            p = draw(st.integers(s, e - 1))
            files[suffix] = full[:p] + bytes([full[p] ^ 0x40]) + full[p + 1 :]
            case.damage_at, case.notice = p, "offset"
        case.kind, case.notice_max = f"full_sources/{mode}", s
        return case
    case.record = _record_at(base.spans[case.suffix], case.damage_at)
    if case.kind in ("garbage", "wrong_kind", "not_tfrecord"):
        case.notice_max = case.damage_at
    elif case.record < len(base.spans[case.suffix]):
        case.notice_max = base.spans[case.suffix][case.record][0]
    return case


# ------------------------------------------------------------------------------------------ checking one case
class CaseTimeout(BaseException):
    """BaseException so that no `except Exception` in the code under test can swallow it."""


def _on_alarm(signum, frame):
    raise CaseTimeout(f"case took longer than {CASE_SECONDS}s")


def _query_everything(run) -> list:
    """Every query, with bounded fan-out; NotFound is a fine answer, anything else escapes."""
    answers = [run.info()]
    counts = answers[0]["counts"]
    for call in (
        lambda: alerts.alerts(run, 0, 100),
        lambda: alerts.alerts(run, 0, 100, producers_only=True),
        lambda: run.executions(0, 1000),
        lambda: run.graph_executions(0, 100),
        lambda: run.graph_executions(0, 50, TraceFilter(only_nonfinite=True, op_name="log")),
        run.source_files,
        lambda: root_cause.analyze(run),
    ):
        answers.append(call())
    for i in sorted({0, counts["executions"] // 2, counts["executions"] - 1}):
        if 0 <= i < counts["executions"]:
            answers.append(run.execution(i, max_elements=100))
    for i in sorted({0, counts["graph_executions"] // 2, counts["graph_executions"] - 1}):
        if 0 <= i < counts["graph_executions"]:
            answers.append(run.graph_execution(i, max_elements=100))
    for i in range(min(counts["source_files"], 4)):
        answers.append(run.source_file(i, begin_line=1, end_line=50))
    for row in answers[4]["rows"][:3]:
        for call, args in ((run.graph, (row["graph_id"],)), (run.op, (row["graph_id"], row["op_name"], 0))):
            try:
                answers.append(call(*args))
            except NotFound:
                pass
    return answers


def _check_prefix(run, base: Base, case: Case) -> None:
    """Intact records are served: the whole file when untouched, the records before the damage otherwise."""
    rows = _rows(run)
    for suffix in SUFFIXES:
        expect = base.expect[suffix]
        if suffix != case.suffix or case.kind == "non_utf8_lines":
            keep = len(expect)
        elif case.kind.startswith("full_sources"):
            keep = 0
        else:
            keep = _record_at(base.spans[suffix], case.damage_at)
            if case.damage_at >= len(base.files[suffix]):
                keep = len(expect)
        want = expect[:keep]
        where = f"{case.kind} in {suffix} at {case.damage_at}: {suffix}"
        if suffix in rows:
            assert rows[suffix][:keep] == want, where
            if suffix == case.suffix and case.whole_after and keep < len(expect):
                assert rows[suffix][keep:] == expect[keep + 1 :], where + " (records after the damaged one)"
        elif suffix == "metadata":
            if keep:
                assert run.info()["tf_version"] == want[0], where
        elif suffix == "source_files":
            assert [f["path"] for f in run.source_files()["files"]][:keep] == want, where
        elif suffix == "stack_frames":
            got = run.stack_frames([fid for fid, _, _ in want])["frames"] if want else []
            assert [(f["id"], f["line"], f["function"]) for f in got] == want, where
        elif suffix == "graphs":
            for item in want:
                if item[0] == "op":
                    assert run.op(item[1], item[2])["op_type"] == item[3], where
                elif item[0] == "graph":
                    run.graph(item[1])


def _check_notice(run, case: Case, rel: str) -> None:
    notices = run.info()["status"]["notices"]
    mine = [n for n in notices if n.get("file") == rel]
    where = f"{case.kind} in {rel} at {case.damage_at}"
    if case.notice == "none":
        # Nothing is damaged: no notice names a file (run-wide notices such as "no executions" may be there).
        named = [n for n in notices if n.get("file")]
        assert not named, f"{where}: a valid file set, yet a file is reported: {named}"
        return
    if case.notice == "after":
        late = [n for n in mine if isinstance(n.get("offset"), int) and n["offset"] >= case.damage_at]
        assert late == mine, f"{where}: a notice blames what came before the appended record: {mine}"
        return
    assert mine, f"{where}: no notice names the file: {notices}"
    if case.notice == "offset":
        offsets = [n["offset"] for n in mine if isinstance(n.get("offset"), int)]
        assert offsets and min(offsets) <= case.notice_max, f"{where}: want an offset <= {case.notice_max}: {mine}"


def run_case(base: Base, case: Case, root: str) -> None:
    directory = _write(root, case.dirname, case.prefix, case.files)
    rel = f"{case.prefix}.{case.suffix}"
    old = signal.signal(signal.SIGALRM, _on_alarm)
    signal.setitimer(signal.ITIMER_REAL, CASE_SECONDS)
    # Memory is traced (~30% slower) where a damaged length field could size a buffer.
    traced = case.kind in (
        "huge_length",
        "huge_length_valid_crc",
        "flip",
        "bad_length_crc",
        "garbage",
        "truncate_inside",
        "not_tfrecord",
        "full_sources",
    )
    peak = 0
    if traced:
        tracemalloc.start()
    try:
        catalog = Catalog(os.path.dirname(directory))  # one read pass, no thread
        catalog.refresh()  # the next pass starts where the first stopped
        runs = catalog.runs()
        assert len(runs) == 1, [r.name for r in runs]
        run = runs[0]
        answers = _query_everything(run) + [catalog.notices()]
        if traced:
            _, peak = tracemalloc.get_traced_memory()
    finally:
        if traced:
            tracemalloc.stop()
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
    assert peak < PEAK_BYTES, f"{case.kind}: peak {peak} bytes"
    for answer in answers:
        json_encoding.encode_body(answer, False)
    # A directory where a file should be cannot be read at all: the failed read is the notice. Anything else that
    # ends in the catalog's catch-all means the reader raised on bad bytes instead of reporting damage.
    failed = [
        n
        for n in answers[0]["status"]["notices"]
        if n["code"] == "refresh_failed" and not (case.kind == "directory" and n.get("file") == rel)
    ]
    assert not failed, f"{case.kind} in {rel}: the reader raised: {failed}"
    _check_prefix(run, base, case)
    _check_notice(run, case, rel)
    shutil.rmtree(os.fsencode(directory) if isinstance(directory, str) else directory)


@settings(
    max_examples=CASES,
    deadline=None,
    derandomize=CASES <= 500,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(data=st.data())
def _fuzz(base, data):
    case = data.draw(cases(base))
    root = tempfile.mkdtemp(prefix="dbg-fuzz-")
    try:
        run_case(base, case, root)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    kind = case.kind.split("/")[0]
    RAN[kind] = RAN.get(kind, 0) + 1


RAN: dict[str, int] = {}


@pytest.mark.slow  # 60 mutated dumps: ~13 s
def test_fuzzed_dump_never_crashes_and_keeps_intact_records(base):
    RAN.clear()
    _fuzz(base=base)
    total = sum(RAN.values())
    print(f"\nfuzzed dump cases passed: {total} {dict(sorted(RAN.items()))}")
    assert total >= CASES, RAN


# Every kind on every file, except the two that always damage source_files (once is enough for them).
EACH_KIND_ON_EACH_FILE = [
    pytest.param(suffix, kind, id=f"{suffix}-{kind}")
    for kind in KINDS
    for suffix in SUFFIXES
    if kind not in ("non_utf8_lines", "full_sources") or suffix == "source_files"
]


@pytest.mark.parametrize(("suffix", "kind"), EACH_KIND_ON_EACH_FILE)
def test_each_mutation_kind_on_each_file(base, suffix, kind):
    """Every mutation kind on every file at least once in the normal run, whatever the random test draws."""
    _examples(base, suffix, kind)


@settings(
    max_examples=1,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(data=st.data())
def _examples_given(data, base, suffix, kind):
    case = data.draw(cases(base, suffix, kind))
    root = tempfile.mkdtemp(prefix="dbg-fuzz-")
    try:
        run_case(base, case, root)
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _examples(base, suffix, kind):
    _examples_given(base=base, suffix=suffix, kind=kind)
