"""Parsing a model's output into registered sections, both formats."""

from __future__ import annotations

import pytest

from formats import FormatParseError, MarkdownFormat, Section, XMLFormat
from tests.formats._support import DIALECTS, Dialect

# Content a model writes that must reach the section parser byte for byte: no
# registered name, none of the three XML entities, no line starting with "#" or "\".
RICH_CONTENT = (
    "if a < b && c & d:\n"
    "    x = a<b>c  # not a heading\n"
    "```python\n"
    'print("<b>bold</b>", 1 > 0)\n'
    "```\n"
    '{"k": [1, "&"], "html": "<br/>", "q": "a && b"}\n'
    "## Notes\n"
    "&nbsp; &copy; &#60; &lt &amp\n"
    "<!-- comment --> <?pi?> <foo x='1'/>"
)


@pytest.fixture(params=DIALECTS, ids=lambda d: d.kind)
def dialect(request: pytest.FixtureRequest) -> Dialect:
    d: Dialect = request.param
    return d


def test_section_names_are_case_insensitive(dialect: Dialect) -> None:
    fmt = dialect.make()
    output = dialect.section("THINKING", "hm") + "\n" + dialect.section("Answer", "42")
    assert fmt.parse(output) == {"thinking": ["hm"], "answer": ["42"]}


def test_sections_come_back_under_the_registered_spelling(dialect: Dialect) -> None:
    fmt = dialect.new().register_section(Section("FinalAnswer"))
    output = dialect.section("finalanswer", "42")
    assert fmt.parse(output) == {"FinalAnswer": ["42"]}


def test_xml_closing_tag_matches_case_insensitively() -> None:
    fmt = Dialect("xml").make()
    assert fmt.parse("<Thinking>hm</THINKING>\n<answer>42</ANSWER> tail") == {
        "thinking": ["hm"],
        "answer": ["42"],
    }


def test_markdown_heading_takes_an_optional_colon_and_spaces() -> None:
    fmt = Dialect("markdown").make()
    assert fmt.parse("#   Thinking:  \nhm\n# answer\r\n42") == {
        "thinking": ["hm"],
        "answer": ["42"],
    }


def test_text_before_the_first_section_is_ignored(dialect: Dialect) -> None:
    fmt = dialect.make()
    output = "Sure! Here is my reasoning.\nsecond line\n" + dialect.section("answer", "42")
    assert fmt.parse(output) == {"answer": ["42"]}


def test_xml_text_between_and_after_sections_is_ignored() -> None:
    fmt = Dialect("xml").make()
    output = "pre <thinking>a</thinking> between <answer>b</answer> after"
    assert fmt.parse(output) == {"thinking": ["a"], "answer": ["b"]}


def test_unknown_tags_are_content_kept_exactly() -> None:
    fmt = Dialect("xml").make()
    body = '<b>bold</b> <foo x="1"/> <br> </unknown> <observation>o</observation> <Answers>'
    assert fmt.parse(f"<answer>{body}</answer>") == {"answer": [body]}


def test_headings_of_other_names_are_content_kept_exactly() -> None:
    fmt = Dialect("markdown").make()
    body = "# Other\n## answer\n### thinking\n# answer is 42\n #  action\ntext"
    assert fmt.parse(f"# answer\n{body}\n") == {"answer": [body]}


@pytest.mark.parametrize(
    "content",
    [
        RICH_CONTENT,
        "a && b & c",
        "x < y > z",
        "# Heading of another name\nbody",
        "",
    ],
    ids=["rich", "ampersands", "angles", "other-heading", "empty"],
)
def test_content_survives_exactly(dialect: Dialect, content: str) -> None:
    fmt = dialect.make()
    assert fmt.parse(dialect.section("answer", content)) == {"answer": [content]}


def test_xml_content_is_stripped_of_outer_whitespace_only() -> None:
    fmt = Dialect("xml").make()
    assert fmt.parse("<answer>\n\n  a\n\n  b  \n\n</answer>") == {"answer": ["a\n\n  b"]}


def test_xml_decodes_exactly_three_entities() -> None:
    fmt = Dialect("xml").make()
    assert fmt.parse("<answer>&lt;b&gt; &amp;lt; &amp; &nbsp; &#60; &quot;</answer>") == {
        "answer": ["<b> &lt; & &nbsp; &#60; &quot;"]
    }


def test_markdown_removes_exactly_one_escaping_backslash() -> None:
    fmt = Dialect("markdown").make()
    output = "# answer\n\\# answer\n\\\\## x\n  \\# y\na \\# z\n\\n"
    assert fmt.parse(output) == {"answer": ["# answer\n\\## x\n  # y\na \\# z\n\\n"]}


@pytest.mark.parametrize(
    ("output", "thinking"),
    [
        (
            "<thinking>I will answer in <answer> tags.</thinking>\n<answer>42</answer>",
            "I will answer in <answer> tags.",
        ),
        (
            "<thinking>Use <answer>x</answer> then stop.</thinking><answer>42</answer>",
            "Use <answer>x</answer> then stop.",
        ),
        (
            "<thinking>Maybe <action> first, then <answer>.\nOr </action> not.</thinking>"
            "\n<answer>42</answer>",
            "Maybe <action> first, then <answer>.\nOr </action> not.",
        ),
    ],
    ids=["open-only", "open-and-close", "several"],
)
def test_xml_section_named_in_prose_does_not_split(output: str, thinking: str) -> None:
    fmt = Dialect("xml").make()
    assert fmt.parse(output) == {"thinking": [thinking], "answer": ["42"]}


def test_markdown_section_named_in_prose_does_not_split() -> None:
    fmt = Dialect("markdown").make()
    output = "# thinking\nI will answer in # answer form, see # Answer.\n# answer\n42"
    assert fmt.parse(output) == {
        "thinking": ["I will answer in # answer form, see # Answer."],
        "answer": ["42"],
    }


def test_final_section_left_unclosed_is_returned(dialect: Dialect) -> None:
    fmt = dialect.make()
    output = (
        dialect.section("thinking", "hm")
        + "\n"
        + dialect.section("answer", "The answer is 4", closed=False)
    )
    assert fmt.parse(output) == {"thinking": ["hm"], "answer": ["The answer is 4"]}


def test_xml_unclosed_section_keeps_inner_mentions() -> None:
    fmt = Dialect("xml").make()
    assert fmt.parse("<answer>use <answer> here") == {"answer": ["use <answer> here"]}


@pytest.mark.parametrize("indent", ["", "  ", "\t"])
def test_xml_forgotten_close_before_action_on_new_line(indent: str) -> None:
    fmt = Dialect("xml").make()
    output = f"<thinking>\nI should look it up.\n{indent}<action>\nweather('Paris')\n</action>"
    assert fmt.parse(output) == {
        "thinking": ["I should look it up."],
        "action": ["weather('Paris')"],
    }


def test_xml_prose_mention_does_not_capture_a_later_real_close() -> None:
    # The mention's pending "<answer>" must not swallow the real answer's "</answer>".
    fmt = Dialect("xml").make()
    output = "<thinking>I will answer in <answer> tags\n<answer>42</answer>\n<action>x</action>"
    assert fmt.parse(output) == {
        "thinking": ["I will answer in <answer> tags"],
        "answer": ["42"],
        "action": ["x"],
    }


def test_xml_forgotten_close_then_stray_close_is_ignored() -> None:
    fmt = Dialect("xml").make()
    output = "<thinking>hm\n<answer>42</answer>\n</thinking>"
    assert fmt.parse(output) == {"thinking": ["hm"], "answer": ["42"]}


def test_xml_opening_tag_mid_line_does_not_close_the_open_section() -> None:
    fmt = Dialect("xml").make()
    assert fmt.parse("<thinking>\nnext I do <action>\n</thinking>") == {
        "thinking": ["next I do <action>"]
    }


def test_xml_registered_tag_on_its_own_line_closes_the_open_section() -> None:
    # Documented rule; the flip side of recovering a forgotten close tag is that a
    # fenced example with a registered tag on its own line splits the section.
    fmt = Dialect("xml").make()
    assert fmt.parse("<answer>\n```\n<thinking>\n```\n</answer>") == {
        "answer": ["```"],
        "thinking": ["```\n</answer>"],
    }


def test_xml_same_name_at_line_start_starts_a_new_section() -> None:
    fmt = Dialect("xml").make()
    assert fmt.parse("<answer>\n<answer>\n42\n</answer>\n") == {"answer": ["", "42"]}


def test_xml_mention_before_the_first_section_does_not_swallow_the_answer() -> None:
    fmt = Dialect("xml").make()
    parsed = fmt.parse("I will answer in <answer> tags.\n<answer>42</answer>")
    assert parsed["answer"][-1] == "42"


def test_repeated_sections_come_back_in_order(dialect: Dialect) -> None:
    fmt = dialect.make()
    parts = [
        ("thinking", "first"),
        ("action", "a1"),
        ("thinking", "second"),
        ("action", "a2"),
        ("thinking", "third"),
        ("answer", "done"),
    ]
    output = "\n".join(dialect.section(name, body) for name, body in parts)
    result = fmt.parse(output)
    assert result == {
        "thinking": ["first", "second", "third"],
        "action": ["a1", "a2"],
        "answer": ["done"],
    }
    assert list(result) == ["thinking", "action", "answer"]


def test_empty_section_gives_empty_string(dialect: Dialect) -> None:
    fmt = dialect.make()
    output = dialect.section("thinking", "") + "\n" + dialect.section("answer", "  \n ")
    assert fmt.parse(output) == {"thinking": [""], "answer": [""]}


@pytest.mark.parametrize(
    "output",
    [
        "",
        "   \n",
        "just prose, no sections",
        "<other>x</other>\n# Other\n## answer\nx",
        "</answer> stray close",
        "<answer >spaced</answer >",
        " # answer\nindented heading",
    ],
    ids=["empty", "blank", "prose", "other-names", "stray-close", "spaced-tag", "indented"],
)
def test_no_registered_section_raises(dialect: Dialect, output: str) -> None:
    fmt = dialect.make()
    with pytest.raises(FormatParseError) as info:
        fmt.parse(output)
    assert info.value.expected == ("thinking", "action", "answer")
    assert str(info.value) == (
        "no section found; write your response in sections: thinking, action, answer"
    )


def test_parse_error_names_registered_spelling(dialect: Dialect) -> None:
    fmt = dialect.new().register_section(Section("Plan")).register_section(Section("Answer"))
    with pytest.raises(FormatParseError, match=r"sections: Plan, Answer$"):
        fmt.parse("nothing here")


def test_parse_error_is_a_value_error_with_detail() -> None:
    err = FormatParseError(["a"], "empty output")
    assert isinstance(err, ValueError)
    assert str(err) == "no section found; write your response in sections: a (empty output)"
    assert str(FormatParseError([])) == (
        "no section found; write your response in sections: (none registered)"
    )


def test_format_with_no_sections_registered_raises(dialect: Dialect) -> None:
    with pytest.raises(FormatParseError, match=r"\(none registered\)"):
        dialect.new().parse(dialect.section("answer", "42"))


# --- parse_nested -------------------------------------------------------------------

DIRECT_CALL = '[{"tool": "weather", "args": {"city": "Paris", "q": "a<b && c"}}]'


def test_parse_nested_gent_action_shape(dialect: Dialect) -> None:
    fmt = dialect.make()
    action = dialect.nested("direct_call", DIRECT_CALL)
    output = dialect.section("thinking", "call it") + "\n" + dialect.section("action", action)
    content = fmt.parse(output)["action"][0]
    assert fmt.parse_nested(content, ["direct_call", "yaml_chain"]) == {
        "direct_call": [DIRECT_CALL]
    }


def test_parse_nested_xml_log_shape_exactly() -> None:
    fmt = Dialect("xml").make()
    output = (
        "<action>\n<direct_call>\n"
        '[{"tool": "search", "args": {"q": "x"}}]\n'
        "</direct_call>\n</action>"
    )
    content = fmt.parse(output)["action"][0]
    assert content == '<direct_call>\n[{"tool": "search", "args": {"q": "x"}}]\n</direct_call>'
    assert fmt.parse_nested(content, ["direct_call"]) == {
        "direct_call": ['[{"tool": "search", "args": {"q": "x"}}]']
    }


def test_parse_nested_markdown_shape_exactly() -> None:
    fmt = Dialect("markdown").make()
    output = '# action\n## direct_call\n[{"tool": "search", "args": {"q": "x"}}]\n# answer\nok'
    content = fmt.parse(output)["action"][0]
    assert content == '## direct_call\n[{"tool": "search", "args": {"q": "x"}}]'
    assert fmt.parse_nested(content, ["direct_call"]) == {
        "direct_call": ['[{"tool": "search", "args": {"q": "x"}}]']
    }


def test_parse_nested_repeated_and_case_insensitive(dialect: Dialect) -> None:
    fmt = dialect.make()
    content = dialect.nested("Direct_Call", "[1]") + "\n" + dialect.nested("direct_call", "[2]")
    assert fmt.parse_nested(content, ["direct_call"]) == {"direct_call": ["[1]", "[2]"]}


def test_parse_nested_other_names_are_content_or_ignored() -> None:
    xml, md = Dialect("xml").make(), Dialect("markdown").make()
    xml_content = "<other>x</other>\n<direct_call>\n<b>[1]</b>\n</direct_call>"
    assert xml.parse_nested(xml_content, ["direct_call"]) == {"direct_call": ["<b>[1]</b>"]}
    md_content = "## direct_call\n[1]\n## other\nx"
    assert md.parse_nested(md_content, ["direct_call"]) == {"direct_call": ["[1]\n## other\nx"]}


def test_parse_nested_without_sub_sections_is_empty(dialect: Dialect) -> None:
    fmt = dialect.make()
    assert fmt.parse_nested("just [1, 2] json", ["direct_call"]) == {}
    assert fmt.parse_nested("", ["direct_call"]) == {}


def test_markdown_parse_nested_only_reads_level_two() -> None:
    fmt = MarkdownFormat()
    content = "# direct_call\n[0]\n### direct_call\n[1]\n## direct_call\n[2]\n"
    assert fmt.parse_nested(content, ["direct_call"]) == {"direct_call": ["[2]"]}


def test_parse_nested_rejects_invalid_names(dialect: Dialect) -> None:
    with pytest.raises(ValueError, match="not a valid tag name"):
        dialect.new().parse_nested("x", ["direct call"])


def test_xml_docstring_example() -> None:
    fmt = XMLFormat().register_section(Section("answer"))
    assert fmt.parse("Sure.\n<answer>42</answer>") == {"answer": ["42"]}


def test_parse_nested_does_not_decode_twice() -> None:
    xml = Dialect("xml").make()
    outer = xml.parse("<answer>\n<direct_call>&amp;lt;b></direct_call>\n</answer>")["answer"][0]
    assert xml.parse_nested(outer, ["direct_call"]) == {"direct_call": ["&lt;b>"]}
    md = Dialect("markdown").make()
    outer = md.parse("# answer\n## direct_call\n\\\\# x")["answer"][0]
    assert md.parse_nested(outer, ["direct_call"]) == {"direct_call": ["\\# x"]}
