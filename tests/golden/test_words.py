"""What an SRE reads, pinned: every verdict's text (``analyze --format text``) on each golden scenario and each real
lab fixture is checked in under ``tests/data/words/``, so a change of wording shows in review as a diff of the text
people read, not only of codes. ``CORRELATOR_UPDATE_WORDS=1`` rewrites the files after an intended change.

The same verdicts' titles, explanations, remediation steps, what-if figures and outlooks, the early warnings beside
them and the cause registry's templates on their own are read once by someone on call: each sentence must have a
verb of its own and no internal word (``dn stall``, a code's "symptoms", ``snake_case`` names of evidence kinds,
event types or fields). The checker is ``tests/support/sentences.py``; its own cases below show that it fails.
"""

from __future__ import annotations

import os
from pathlib import Path
from types import SimpleNamespace

import pytest

from correlator.core.correlate.evidence import Interval
from correlator.core.correlate.explanation import title
from correlator.core.events import CheckpointCompleted, CheckpointExpired, CheckpointTriggered, Event, FlinkSetting
from correlator.core.explain.causes import Code
from correlator.core.explain.registry import CAUSES
from correlator.core.explain.knowledge import HDFS_14476, HDFS_15415, remediation
from correlator.core.explain.risk import Risk, RiskWatch
from correlator.core.explain.verdict import Verdict
from correlator.core.explain.verdict_text import failure_time_sentence, unpredicted_sentence, verdict_text, window_sentence
from tests.support.analyzed import analysis_of
from tests.support.sentences import Kind, finite_verbs, fragments, jargon, sentences

ROOT = Path(__file__).resolve().parents[1]
WORDS = ROOT / "data" / "words"
RUNS = sorted(p for p in (ROOT / "golden" / "scenarios").iterdir() if p.is_dir()) + sorted(
    p for p in (ROOT / "data" / "lab").glob("*/*") if (p / "truth.json").is_file())
UPDATE = os.environ.get("CORRELATOR_UPDATE_WORDS") == "1"
T0 = 1_796_000_000_000


def _name(run: Path) -> str:
    return f"{run.parent.name}--{run.name}" if run.parent.name != "scenarios" else f"golden--{run.name}"


def _analysis(run: Path) -> tuple[tuple[Verdict, ...], tuple[Risk, ...]]:
    """Verdicts and early warnings of one run, once per session (shared with the schema and advice tests)."""
    return analysis_of(run)


@pytest.mark.parametrize("run", RUNS, ids=_name)
def test_the_words_are_the_ones_checked_in(run: Path) -> None:
    text = "\n".join(verdict_text(v) + "\n" for v in _analysis(run)[0])
    path = WORDS / f"{_name(run)}.txt"
    if UPDATE:
        path.write_text(text, encoding="utf-8")
    assert path.is_file(), f"no words for {run.name}: run with CORRELATOR_UPDATE_WORDS=1 and review the file"
    assert text == path.read_text(encoding="utf-8"), f"the words of {path.name} changed (see the diff)"


def test_every_run_has_its_words_and_no_stale_file_is_left() -> None:
    assert {p.stem for p in WORDS.glob("*.txt")} == {_name(r) for r in RUNS}


# --- every text a reader sees: sentences, no jargon -------------------------------------------------------------

Text = tuple[str, Kind, str]
"""(where it is shown, statement or instruction, the text)."""


def verdict_texts(v: Verdict) -> list[Text]:
    """What a verdict shows a reader in words (evidence summaries are log lines, shortened, not prose)."""
    out: list[Text] = [("title", "statement", v.root_cause.title),
                       ("explanation", "statement", v.root_cause.explanation)]
    out += [("remediation", "instruction", s.text) for s in v.remediation]
    out += [("what-if", "statement", w.text) for w in v.whatif]
    out += [("what-if assumption", "statement", w.assumes) for w in v.whatif]
    if v.outlook is not None:
        out += [("outlook", "statement", window_sentence(v.outlook.kind, w)) for w in v.outlook.windows]
        out += [("outlook basis", "statement", w.basis) for w in v.outlook.windows]
        out += [("outlook, unpredicted hosts", "statement", t) for t in [unpredicted_sentence(v.outlook)] if t]
    out += [("failure time", "statement", t) for t in [failure_time_sentence(v)] if t]
    return out


def risk_texts(r: Risk) -> list[Text]:
    return [("warning", "statement", r.headline), *(("warning advice", "instruction", a) for a in r.advice)]


def verdict_names(v: Verdict) -> set[str]:
    """The hosts a verdict names: proper nouns to the checker whatever their spelling (``lab-nn``)."""
    return ({*v.root_cause.hosts, *v.failure.hosts} | {e.host for e in v.evidence}
            | {c.host for c in (*v.covered, *v.missing)})


def problems(texts: list[Text], names: set[str] | frozenset[str] = frozenset()) -> list[str]:
    found = []
    for where, kind, text in texts:
        found += [f"{where}: fragment: {s}" for s in fragments(text, kind, names)]
        found += [f"{where}: internal word ({j}): {text}" for j in jargon(text)]
    return found


@pytest.mark.parametrize("run", RUNS, ids=_name)
def test_a_reader_gets_sentences_without_internal_words(run: Path) -> None:
    verdicts, risks = _analysis(run)
    found = [p for v in verdicts for p in problems(verdict_texts(v), verdict_names(v))]
    found += [p for r in risks for p in problems(risk_texts(r))]
    assert not found, "\n".join(dict.fromkeys(found))


def _interval(kind: str, host: str) -> Interval:
    """Leading evidence of ``kind`` for a title: what a title reads from it is its size and its source's facts."""
    source = SimpleNamespace(holder="FsDatasetImpl.createRbw", limit=4096)
    return Interval(kind, 1_000, 38_700, host, "datanode", 37_700, "", source)  # type: ignore[arg-type]


def registry_texts() -> list[Text]:
    """Each cause's title and steps rendered on their own, with every fact each template may name."""
    out: list[Text] = []
    for code, entry in CAUSES.items():
        for kind in (None, *entry.evidence):  # a title by kind is for a kind of its evidence; "user" is below
            top = _interval(kind, "dn02.example.com") if kind else None
            out.append((f"{code} title ({kind or 'default'})", "statement",
                        title(code, ("dn02.example.com",), 60, top)))
        if code == Code.FLINK_TASK_ERROR:
            user = ("java.lang.IllegalStateException: bad state", "Enrich.snapshotState(Enrich.java:88)")
            out.append((f"{code} title (user code)", "statement", title(code, ("tm01",), 60, None, user)))
        for issue in (None, HDFS_15415, HDFS_14476):
            for flink in ("1.20.1", "1.7.2"):
                for frame in (None, "Enrich.snapshotState(Enrich.java:88)"):
                    steps = remediation(code, hosts=("dn02.example.com",), datanode_version="3.1.0",
                                        flink_version=flink, timeout_ms=10_000, missing=("dn03.example.com",),
                                        holder="FsDatasetImpl.createRbw", user_frame=frame, issue=issue,
                                        limit=4096)
                    out += [(f"{code} step", "instruction", s.text) for s in steps]
    return list(dict.fromkeys(out))


def test_the_registry_templates_read_as_sentences_on_their_own() -> None:
    texts = registry_texts()
    assert len(texts) > 60  # every code's title and steps, not an empty loop
    found = problems(texts, {"dn02.example.com", "dn03.example.com", "tm01"})
    assert not found, "\n".join(found)


def _warnings() -> list[Risk]:
    """Early warnings of every kind: a duration rising to a configured timeout, then withdrawn as it levels off; state
    growing under Flink's assumed default, then superseded by the expiry it foretold."""
    def completed(i: int, job: str, duration_ms: int, size: int) -> CheckpointCompleted:
        return CheckpointCompleted(ts_ms=T0 + i * 60_000, cluster=job[0], host="jm", role="jobmanager",
                                   ref=f"jm.log:{i}", job_id=job, checkpoint_id=i, duration_ms=duration_ms,
                                   size_bytes=size)

    rising = [FlinkSetting(ts_ms=T0 - 1, cluster="a", host="jm", role="jobmanager",
                           key="execution.checkpointing.timeout", value_ms=10_000)]
    rising += [completed(i, "a" * 32, 2_000 + i * 150 + (i * 37) % 80, 1_000_000) for i in range(40)]
    rising += [completed(40 + i, "a" * 32, 2_000 + (i % 3) * 50, 1_000_000) for i in range(60)]
    growing: list[Event] = [completed(i, "b" * 32, 60_000 + i * 30_000, 10_000_000 + i * 4_000_000)
                            for i in range(30)]
    growing += [CheckpointTriggered(ts_ms=T0 + 30 * 60_000, cluster="b", host="jm", role="jobmanager",
                                    job_id="b" * 32, checkpoint_id=30),
                CheckpointExpired(ts_ms=T0 + 30 * 60_000 + 600_000, cluster="b", host="jm", role="jobmanager",
                                  job_id="b" * 32, checkpoint_id=30)]
    watch = RiskWatch()
    return [r for e in [*rising, *growing] for r in watch.observe(e)]


def test_every_kind_of_early_warning_reads_as_sentences() -> None:
    warnings = _warnings()
    assert {(r.status, r.cause, r.timeout_source) for r in warnings} >= {
        ("raised", "duration_growth", "configuration"), ("withdrawn", "duration_growth", "configuration"),
        ("raised", "state_growth", "flink_default"), ("superseded", "state_growth", "flink_default")}
    found = [p for r in warnings for p in problems(risk_texts(r))]
    assert not found, "\n".join(dict.fromkeys(found))


# --- the checker fails where it should ---------------------------------------------------------------------------

@pytest.mark.parametrize("fragment", [
    "DataNodes of the write from the NameNode's block allocation for the checkpoint's files.",
    "Ranked lower: HDFS_SLOW_PIPELINE 0.12.",
    "next DirectoryScanner run on dn02.example.com expected ≈ 2020-01-02T15:05:05.024Z (interval 6 h)",
    "3 pauses of 20 s or more logged at a median gap of 10 min (each gap within 10 s of it), the last at "
    "2020-01-02T09:05:30.025Z",
    "1203 differences on dn02.example.com at 2020-01-02T09:06:07.714Z, as the stuck write of 37.8 s ran.",  # "as"
    "A slow disk on DataNode lab-dn2 (it runs 3.2.1).",  # its only verb is in the parentheses
    "Raise dfs.datanode.directoryscan.interval on dn02.example.com",  # an instruction is no statement
])
def test_a_fragment_is_rejected(fragment: str) -> None:
    assert fragments(fragment, names={"lab-dn2"}) == [fragment]


@pytest.mark.parametrize(("text", "kind"), [
    ("The DirectoryScanner on dn02.example.com held the DataNode dataset lock for 37.8 s while checkpoint 60 was "
     "being written", "statement"),
    ("NameNode lab-nn logged why HDFS refused the write at 2026-12-03T19:33:32.313Z: “SafeModeException: Cannot "
     "create directory /flink/checkpoints/9c76/chk-4. Name node is in safe mode.”", "statement"),
    ("The stuck write of 34.2 s (timeout 10.0 s) overlaps what DataNode lab-dn2 logged from "
     "2026-12-03T16:00:03.284Z to 2026-12-03T16:00:39.179Z: dataset lock held 35895 ms by DirectoryScanner.scan.",
     "statement"),
    ("every other checkpoint of this job completed (a failure for another cause would break the run)", "statement"),
    ("Tune the TaskManager heap/GC of tm01.example.com (taskmanager.memory.*, env.java.opts.taskmanager)",
     "instruction"),
    ("If the pause shows no GC, check the host for swapping or CPU starvation", "instruction"),
    ("To gain time now, set `execution.checkpointing.timeout` well above the current 8.7 s (it is 10.0 s); this "
     "postpones the expiry, it does not stop the rise.", "instruction"),
])
def test_a_full_sentence_is_accepted(text: str, kind: Kind) -> None:
    assert fragments(text, kind, names={"lab-nn", "lab-dn2"}) == [], finite_verbs(text, kind)


def test_sentences_end_where_a_reader_ends_them() -> None:
    """Not inside a number, a host, a path, an abbreviation or quoted log text; at a stop before the next one."""
    text = ("It held the lock 37.8 s on dn02.example.com, e.g. under /data/1. Then it logged “Cannot create "
            "/a/chk-4. Name node is in safe mode.” The write failed.")
    assert sentences(text) == ["It held the lock 37.8 s on dn02.example.com, e.g. under /data/1.",
                               "Then it logged “Cannot create /a/chk-4. Name node is in safe mode.”",
                               "The write failed."]


@pytest.mark.parametrize(("text", "word"), [
    ("Same-host dn stall are its symptoms.", "dn stall"),
    ("Same-host dn stall are its symptoms.", "symptoms"),
    ("The window was predicted as_of the decision.", "as_of"),
    ("Its dn_pause covers the write.", "dn_pause"),
    ("next run on dn01: not derivable (interval unknown)", "not derivable"),
])
def test_an_internal_word_is_rejected(text: str, word: str) -> None:
    assert [found for found in jargon(text) if found.startswith(f"{word}: ")], jargon(text)


def test_a_block_id_and_quoted_log_text_are_not_jargon() -> None:
    assert jargon("DataNode dn02 received blk_1073741829_1005 and logged “slow_nn_commands took 9 s”.") == []


@pytest.mark.parametrize("run", RUNS, ids=_name)
def test_a_text_verdict_leads_with_the_cause_and_the_fix_and_fits_100_columns(run: Path) -> None:
    """Cause first, then what to do, then why; no line past 100 columns (a path or an id longer than a line stays
    whole on a line of its own); evidence named in words, not by internal event types."""
    for v in _analysis(run)[0]:
        text = verdict_text(v)
        lines = text.splitlines()
        assert all(len(ln) <= 100 or " " not in ln.strip() for ln in lines), [ln for ln in lines if len(ln) > 100]
        starts = [next((i for i, ln in enumerate(lines) if ln.startswith(f"  {head}")), None)
                  for head in ("cause: ", "verdict: ", "what to do:", "why: ")]
        cause = starts[0] if starts[0] is not None else starts[1]
        assert cause is not None and starts[3] is not None and cause < starts[3]
        assert starts[2] is None or cause < starts[2] < starts[3]
        evidence = [ln for ln in lines if ln.startswith("    ") and ln[4:8].isdigit()]
        assert not any(f" {e.type}: " in text for e in v.evidence if "_" in e.type), evidence[:3]
