"""The offline model's audio scripts: the report's own title, summary and key findings, spoken.

A report whose summary and findings would only repeat its body carries none (the engine drops such
copies): its opening paragraph stands in for the summary, and its first cited sentences after it
for the findings. An overview reads them in one voice. A dialogue gives the findings to the researcher (speaker 1)
and the framing to the host (speaker 0), whose few fixed lines live in prompts/offline.
"""

from __future__ import annotations

import re

from sleuth.llm.offline.request import OfflineRequest, Reply
from sleuth.llm.offline.text import cited_units
from sleuth.llm.prompting import render

MAX_FINDINGS = 5

_FIELD = re.compile(r"^(Question|Title|Summary):[ \t]*(.*)$", re.M)
_FINDINGS = re.compile(r"^Key findings:\s*\n((?:- .*\n?)*)", re.M)
_REPORT = re.compile(r"^Report:\s*\n(.*)\Z", re.M | re.S)


def _parts(text: str) -> tuple[dict[str, str], list[str]]:
    fields = {name: value.strip() for name, value in _FIELD.findall(text)}
    block = _FINDINGS.search(text)
    findings = [line[2:].strip() for line in block.group(1).splitlines() if line.strip()] if block else []
    report = _REPORT.search(text)
    if report and not fields.get("Summary") and not findings:
        opening, _, rest = report.group(1).strip().partition("\n\n")
        fields["Summary"] = " ".join(unit.bare for unit in cited_units(opening))
        findings = [unit.bare for unit in cited_units(rest if fields["Summary"] else report.group(1))]
    return fields, findings[:MAX_FINDINGS]


def record_overview(request: OfflineRequest) -> Reply:
    fields, findings = _parts(request.last_user)
    texts = [render("offline/overview_open", title=fields.get("Title") or fields.get("Question", ""))]
    texts += [fields.get("Summary", ""), *findings]
    return Reply(tool_calls=[("record_overview", {"lines": [{"speaker": 0, "text": t} for t in texts if t]})])


def record_dialogue(request: OfflineRequest) -> Reply:
    fields, findings = _parts(request.last_user)
    lines = [{"speaker": 0, "text": render("offline/dialogue_open", question=fields.get("Question", ""))}]
    if fields.get("Summary"):
        lines.append({"speaker": 1, "text": fields["Summary"]})
    for i, finding in enumerate(findings):
        lines.append({"speaker": 0, "text": render("offline/dialogue_ask", first=i == 0)})
        lines.append({"speaker": 1, "text": finding})
    lines.append({"speaker": 0, "text": render("offline/dialogue_close")})
    return Reply(tool_calls=[("record_dialogue", {"lines": lines})])
