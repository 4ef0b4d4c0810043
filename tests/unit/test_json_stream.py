import json

import pytest

from sleuth.llm.json_stream import StreamingStringField

TEXT = 'Covered: "descriptors".\nMissing: \\ paths, émigré 😀 and \t tabs.'


@pytest.mark.parametrize("size", [1, 2, 3, 5, 8, 1000])
def test_decodes_the_value_whatever_the_fragment_boundaries(size: int) -> None:
    raw = json.dumps({"reasoning": TEXT})
    parser = StreamingStringField()
    out = "".join(parser.feed(raw[i : i + size]) for i in range(0, len(raw), size))
    assert out == TEXT


def test_nothing_before_the_value_and_nothing_after_it() -> None:
    parser = StreamingStringField()
    assert parser.feed('{"reas') == ""
    assert parser.feed('oning": "ab') == "ab"
    assert parser.feed('c", "other": "zzz"}') == "c"
    assert parser.feed("more") == ""
