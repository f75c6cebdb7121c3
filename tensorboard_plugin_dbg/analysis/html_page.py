"""One self-contained HTML page for a comparison (`compare --html`) or a report (`report --html`): inline CSS, no
script, nothing fetched, every dump-derived string escaped — a file to attach to a bug report or keep as a CI
artifact."""

from __future__ import annotations

import html

from tensorboard_plugin_dbg.analysis import report_text
from tensorboard_plugin_dbg.analysis.compare.document import CompareDocument
from tensorboard_plugin_dbg.wire import types as wire

_CSS = """
body{font:14px/1.45 system-ui,sans-serif;margin:24px;color:#222;max-width:1200px}
h1{font-size:20px}h2{font-size:16px;margin-top:28px}
.card{border:1px solid #d33;border-left:6px solid #d33;padding:12px 16px;border-radius:4px;background:#fff6f6}
.card.ok{border-color:#2a2;background:#f4fff4}
.sides{display:grid;grid-template-columns:1fr 1fr;gap:16px}
code,pre{font:12px/1.4 ui-monospace,monospace;background:#f4f4f4;padding:2px 4px;border-radius:3px}
pre{padding:8px;white-space:pre-wrap}
table{border-collapse:collapse;margin-top:8px}td,th{border:1px solid #ddd;padding:3px 8px;text-align:left;
vertical-align:top;font-size:12px}th{background:#f0f0f0}.muted{color:#777}
"""


def _e(value: object) -> str:
    return html.escape("" if value is None else str(value), quote=True)


def _page(title: str, body: str) -> str:
    return (
        "<!doctype html><html><head><meta charset='utf-8'>"
        "<meta http-equiv='Content-Security-Policy' content=\"default-src 'none'; style-src 'unsafe-inline'\">"
        f"<title>{_e(title)}</title><style>{_CSS}</style></head><body>{body}</body></html>\n"
    )


def _side(label: str, side: wire.CompareSide | None) -> str:
    if side is None:
        return f"<div><h3>{label}</h3><p class='muted'>not in this run</p></div>"
    what = side.get("op_name") or side.get("op_type")
    where = f"{side['file']}:{side['line']}" if side.get("file") else "no user frame recorded"
    code = f"<pre>{_e(side.get('line'))}: {_e(side.get('code'))}</pre>" if side.get("code") else ""
    return (
        f"<div class='side'><h3>{label}</h3><p><b class='op'>{_e(what)}</b>:{_e(side.get('output'))} "
        f"({_e(side.get('op_type'))}) in {_e(side.get('function'))}, occurrence {_e(side.get('occurrence'))}<br>"
        f"<span class='where'>{_e(where)}</span></p>{code}</div>"
    )


def _finding(first: wire.CompareFinding | None, doc: CompareDocument) -> str:
    headline = doc.get("headline") or ("First divergence" if first else "No divergence")
    if first is None:
        return f"<div class='card ok' id='finding'><b>{_e(headline)}</b>: every aligned tensor within tolerance.</div>"
    metric = first["metric"]["summary"] if first["metric"] else None
    rows = "".join(
        f"<tr><td>{_e(i['name'])}</td><td>{_e(i['status'])}</td>"
        f"<td>{_e(i['metric']['summary'] if i['metric'] else None)}</td></tr>"
        for i in first.get("inputs", [])
    )
    inputs = f"<table><tr><th>input</th><th>status</th><th>difference</th></tr>{rows}</table>" if rows else ""
    return (
        f"<div class='card' id='finding' data-kind='{_e(first['kind'])}'><b>{_e(headline)}</b>: {_e(first['why'])}"
        f"<div class='sides'>{_side('baseline ' + _e(doc['a']['run']), first.get('a'))}"
        f"{_side('changed ' + _e(doc['b']['run']), first.get('b'))}</div>"
        f"<p>Difference: {_e(metric)}</p>{inputs}</div>"
    )


def _side_cell(side: wire.CompareSide | None) -> str:
    if side is None:
        return "<td class='muted'>—</td>"
    where = f"{side['file']}:{side['line']}" if side.get("file") else ""
    return f"<td>{_e(side.get('op_name') or side.get('op_type'))}:{_e(side.get('output'))}<br>{_e(where)}</td>"


def compare_page(doc: CompareDocument, context: dict[str, str] | None = None) -> str:
    """The comparison as one page to attach to a bug report: what was compared (folders, mode, tolerances, date,
    versions: `context`), the headline, and what the lists leave out with how to get the rest."""
    a, b, n = doc["a"], doc["b"], doc["counts"]
    split = f"{n.get('divergent_traces', 0)} traces + {n.get('divergent_executions', 0)} executions"
    listed = len(doc["divergent"])
    body = [
        f"<h1>Compare baseline {_e(a['run'])} with changed {_e(b['run'])}</h1>",
        "<table>" + "".join(f"<tr><th>{_e(k)}</th><td>{_e(v)}</td></tr>" for k, v in (context or {}).items()),
        f"<tr><th>mode</th><td>{_e(doc['mode'])}</td></tr><tr><th>tolerances</th><td>{_e(doc.get('tolerance'))}</td>"
        "</tr></table>",
        f"<p>matched {n['matched']}, divergent {n['divergent']} ({split}), only in baseline {n['only_in_a']}, "
        f"only in changed {n['only_in_b']}</p>",
        _finding(doc["first_divergence"], doc),
        f"<h2>Divergent tensors (the changed run's order): {listed} of {n['divergent']} listed</h2>",
    ]
    if listed < n["divergent"]:
        body.append(
            f"<p class='cut'>Cut: the first {listed} of {n['divergent']} are listed. For all of them: "
            "<code>compare BASELINE CHANGED --limit N</code> (or <code>--json</code>), or Compare with… in the "
            "dashboard (Graph Execution's divergent only filter pages through every one).</p>"
        )
    body.append("<table><tr><th>#</th><th>op (changed)</th><th>occurrence</th><th>baseline</th><th>changed</th>")
    body.append("<th>difference</th></tr>")
    for item in doc["divergent"]:
        side = item["b"] or item["a"] or {}
        body.append(
            f"<tr><td>{item['position']}</td><td>{_e(side.get('op_name') or side.get('op_type'))}</td>"
            f"<td>{_e(side.get('occurrence'))}</td>{_side_cell(item['a'])}{_side_cell(item['b'])}"
            f"<td>{_e(item['metric'].get('summary'))}</td></tr>"
        )
    body.append("</table>")
    for only, title in ((doc["only_in_a"], "Only in the baseline"), (doc["only_in_b"], "Only in the changed run")):
        body.append(f"<h2>{title}</h2><table>")
        body += [f"<tr>{_side_cell(side)}<td>{_e(side.get('code'))}</td></tr>" for side in only]
        body.append("</table>" if only else "</table><p class='muted'>none</p>")
    body += [f"<p class='muted'>Note: {_e(note)}</p>" for note in doc.get("notes", [])]
    return _page(f"compare {a['run']} / {b['run']}", "".join(body))


def report_page(
    logdir: str, summary: str, results: list[report_text.RunResult], needs: str = "", capsules: str = ""
) -> str:
    """The text report as a page: the summary line first, the NaN capsule sections the text report prints
    (`capsules`: capsule_text.report_capsules), each run's section once (its verdict is the section's first line: the
    card does not say it again), the rules the dumps could not judge after the runs."""
    body = [f"<h1>tfdbg2 report: {_e(logdir)}</h1>", f"<p><b>{_e(summary.strip())}</b></p>"]
    if capsules:
        body.append(f"<h2>NaN capsules</h2><pre data-section='capsules'>{_e(capsules)}</pre>")
    for r in results:
        ok = r["status"] == "clean"
        body.append(f"<div class='card{' ok' if ok else ''}'><pre>{_e(report_text.run_section(r))}</pre></div>")
        for f in r["rules"]["findings"] if "rules" in r else []:
            frame = f.get("user_frame")
            where = f"{frame.get('path')}:{frame.get('line')}" if frame else ""
            body.append(f"<p>{_e(f['type'])}: {_e(f['op_name'])} — {_e(f['evidence'])} <code>{_e(where)}</code></p>")
    if needs.strip():
        body.append(f"<h2>Not judged</h2><pre>{_e(needs.strip())}</pre>")
    return _page(f"report {logdir}", "".join(body))
