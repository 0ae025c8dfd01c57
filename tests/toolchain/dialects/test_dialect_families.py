"""The formats of current open-weight models (issue 19): each family read as its
specification says, then the corpus taken from the engines' own parser tests.

The tests of a family are written from ``tests/corpus/dialects/SPECS.md`` (the chat
template and the official parsers), not from the corpus. The corpus
(``tests/corpus/dialects/cases.jsonl``, 168 cases from vLLM, SGLang, ollama and llama.cpp
tests) is judged as the peers' corpus is (see test_dialects): where one engine's policy
contradicts our stated choice, the case is in ``EXPECTED_MISSES`` with why, and the
tests check it still misses (and passes with the ``DialectPolicy`` that gives that
engine's behaviour, when one does). Its per-format table is in the terminal summary.
"""

from __future__ import annotations

import importlib.util
import math
from pathlib import Path
from typing import Any

import pytest

from tests.toolchain.dialects.dialect_corpus import (
    FAMILY_BY_ID,
    FAMILY_CASES,
    Miss,
    Summary,
    misses,
    table,
)
from toolchain.dialects import FAMILIES, DialectPolicy, DialectStream, parse

CASE_COUNT = 168
PASS_RATE = 0.85
CHECK = Path(__file__).resolve().parents[2] / "corpus/dialects/check_corpus.py"

MARKUP_AS_CONTENT = (
    "{peer} returns a block it cannot read as content, markup and all, with no error; "
    "we remove the markup and report the block in error, so the model is told"
)
EXPECTED_MISSES: dict[str, Miss] = {
    "sglang-dsv32-strict-malformed-param-missing-dsml-marker": Miss(
        "SGLang's strict DSML mode refuses a <parameter> without the DSML marker inside "
        "a DSML invoke; its default mode and we read mixed markers (SPECS.md §2)"
    ),
    "sglang-plain-invoke-mixed-marker-strict": Miss(
        "SGLang's strict DSML mode refuses mixed markers; its default mode and we read them"
    ),
    "sglang-dsv32-strict-malformed-invalid-json-body": Miss(
        MARKUP_AS_CONTENT.format(peer="SGLang's strict DSML mode")
    ),
    "sglang-dsv32-strict-malformed-unterminated-param": Miss(
        MARKUP_AS_CONTENT.format(peer="SGLang's strict DSML mode")
    ),
    "sglang-dsv32-strict-malformed-prose-in-body": Miss(
        MARKUP_AS_CONTENT.format(peer="SGLang's strict DSML mode")
    ),
    "sglang-gigachat3-invalid-json": Miss(MARKUP_AS_CONTENT.format(peer="SGLang's GigaChat 3")),
    "sglang-minimax-m2-unclosed-block": Miss(MARKUP_AS_CONTENT.format(peer="SGLang's MiniMax-M2")),
    "vllm-gemma4-incomplete": Miss(MARKUP_AS_CONTENT.format(peer="vLLM's Gemma 4")),
    "llamacpp-seed-budget-reflect-outside-think": Miss(
        "llama.cpp keeps a <seed:cot_budget_reflect> note written after </seed:think> in "
        "content, tags and all; a budget note is the model's reasoning, and reasoning is "
        "always apart (vLLM removes it from content too)"
    ),
    "ollama-laguna-nested-duplicate": Miss(
        "ollama reads an unclosed <tool_call> followed by the same call once; we read the two "
        "blocks written (the first is complete on its own), as for any block left open"
    ),
    "ollama-laguna-alias-normalised": Miss(
        "ollama renames read_file to read when only read is offered: a guess about one "
        "tool set, not the format; the call keeps its name and the chain says it is unknown"
    ),
    "vllm-minimax-m2-untyped-stays-string": Miss(
        "vLLM keeps every untyped MiniMax value a string; with no schema an XML element "
        "that spells a number or true/false/null is read as one (these formats have no "
        "other way to write them; SGLang's MiniMax detector types them too)"
    ),
    "sglang-minimax-m2-unknown-tool": Miss(
        "SGLang drops a call to a tool not offered; marked calls are kept so the chain can "
        "tell the model the tool does not exist",
        DialectPolicy(unknown_tools="drop"),
    ),
    "ollama-gemma4-two-think-blocks": Miss(
        "ollama joins two thinking blocks with nothing between them; reasoning blocks are "
        "joined by a newline, as for every other family"
    ),
    "vllm-functiongemma-no-commas-escaped-number": Miss(
        "vLLM reads <escape>10<escape> as a number with no schema; the template writes "
        "strings between <escape> and numbers bare, so it is the string '10' unless the "
        "tool's schema takes no string there (ollama keeps it a string)"
    ),
    "ollama-cogito-tool-outputs-block-dropped": Miss(
        "ollama's Cogito parser drops the text between DeepSeek's tool-output tokens; its "
        "DeepSeek3 parser keeps it (ollama-deepseek-tool-output-*), as we do: the tokens "
        "go, the text the model wrote stays"
    ),
    "sglang-glm45-missing-newline-rejected": Miss(
        "SGLang's GLM-4.5 detector wants a newline after the name; GLM-4.7 writes none "
        "(vllm-glm47-zero-arg-inline), and a call naming a tool is read either way"
    ),
    "sglang-glm47-typing-nullable-string-quoted-null": Miss(
        "SGLang strips the quotes a model writes around a string value; a string "
        "parameter keeps its text as written (vLLM's GLM parser too)"
    ),
}


def run(case: dict[str, Any], policy: DialectPolicy | None = None) -> list[str]:
    tools = case.get("tools")
    result = (
        parse(case["text"], tools) if policy is None else parse(case["text"], tools, policy=policy)
    )
    return misses(case, result)


@pytest.mark.parametrize("case", FAMILY_CASES, ids=[case["id"] for case in FAMILY_CASES])
def test_case(case: dict[str, Any]) -> None:
    found = run(case)
    miss = EXPECTED_MISSES.get(case["id"])
    if miss is None:
        assert not found, f"{case['id']} ({case['format']}): {found}; notes: {case['notes']}"
        return
    assert found, f"{case['id']} passes now: remove it from EXPECTED_MISSES"
    if miss.policy is not None:
        assert not run(case, miss.policy), f"{case['id']} fails with {miss.policy}"


def test_the_corpus_is_the_one_described() -> None:
    assert len(FAMILY_CASES) == CASE_COUNT == len(FAMILY_BY_ID)
    assert set(EXPECTED_MISSES) <= set(FAMILY_BY_ID)
    # The corpus README's counts are true (the corpus's own check).
    spec = importlib.util.spec_from_file_location("check_corpus", CHECK)
    assert spec is not None and spec.loader is not None
    check = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(check)
    cases = check.load()
    assert check.problems(cases) + check.readme_problems(cases) == []


def test_rejected_outputs_never_yield_calls() -> None:
    rejected = [case for case in FAMILY_CASES if case.get("expected_error")]
    assert len(rejected) == 18
    for case in rejected:
        if case["id"] in EXPECTED_MISSES:
            continue  # a peer's policy (checked by test_case)
        assert parse(case["text"], case.get("tools")).calls == (), case["id"]


def test_conformance_table(request: pytest.FixtureRequest) -> None:
    failed = {case["id"] for case in FAMILY_CASES if run(case)}
    lines = table(FAMILY_CASES, failed)
    print("\n".join(lines))
    summary = Summary("tool-call dialect conformance: current open-weight formats", lines)
    request.config.pluginmanager.register(summary, "dialect-families-table")
    assert CASE_COUNT - len(failed) >= math.ceil(PASS_RATE * CASE_COUNT), "\n".join(lines)
    assert failed == set(EXPECTED_MISSES), (
        f"unexpected misses: {sorted(failed - set(EXPECTED_MISSES))}; "
        f"listed but passing: {sorted(set(EXPECTED_MISSES) - failed)}"
    )


# -- each family from its specification ------------------------------------------------

BAR = "\uff5c"  # DeepSeek's fullwidth bar


def dsml(tag: str) -> str:
    return tag.replace("<", f"<{BAR}DSML{BAR}", 1).replace("</", f"</{BAR}DSML{BAR}", 1)


def calls(text: str, tools: Any = None, **policy: Any) -> list[tuple[str, dict[str, object]]]:
    result = parse(text, tools, policy=DialectPolicy(**policy))
    return [(call.name, dict(call.args)) for call in result.calls]


def schema(name: str, **properties: dict[str, Any]) -> dict[str, Any]:
    return {"name": name, "parameters": {"type": "object", "properties": properties}}


def test_families_are_listed() -> None:
    new = {"dsml", "olmo3", "seed_oss", "gigachat", "lfm2"}
    assert new <= FAMILIES


def test_deepseek_v32_dsml() -> None:
    # SPECS §1: block, invokes, parameters with string="true" (raw text) or "false" (JSON).
    param = '<{b}parameter name="{k}" string="{s}">{v}</{b}parameter>'
    b = f"{BAR}DSML{BAR}"
    text = (
        f"</think>Checking.\n\n<{b}function_calls>\n"
        f'<{b}invoke name="get_weather">\n'
        + param.format(b=b, k="city", s="true", v='Paris <"&"> "15e"')
        + "\n"
        + param.format(b=b, k="days", s="false", v="3")
        + "\n"
        + param.format(b=b, k="opts", s="false", v='{"unit": "C", "hourly": true}')
        + f"\n</{b}invoke>\n"
        f'<{b}invoke name="ping">\n</{b}invoke>\n'
        f"</{b}function_calls><{BAR}end▁of▁sentence{BAR}>"
    )
    result = parse("I will look.\n" + text)
    assert [(c.name, dict(c.args)) for c in result.calls] == [
        (
            "get_weather",
            {"city": 'Paris <"&"> "15e"', "days": 3, "opts": {"unit": "C", "hourly": True}},
        ),
        ("ping", {}),
    ]
    assert (result.reasoning, result.content, result.format) == (
        "I will look.",
        "Checking.",
        "dsml",
    )
    # string="true" typed by the schema where it declares another type
    typed = text.replace('string="false">3', 'string="true">3')
    assert calls(typed, [schema("get_weather", days={"type": "integer"})])[0][1]["days"] == 3
    assert calls(typed)[0][1]["days"] == "3"
    # a started block that cannot be read is an error, not content and not {}
    broken = parse(
        f'Ok.<{b}function_calls>\n<{b}invoke name="f">\nplease\n</{b}invoke>\n</{b}function_calls>'
    )
    assert broken.calls == () and broken.content == "Ok."
    assert [c.name for c in broken.rejected] == ["f"]  # the chain answers it with why
    cut = parse(
        f'Ok.<{b}function_calls>\n<{b}invoke name="f">\n<{b}parameter name="a" string="true">1'
    )
    assert cut.calls == () and cut.content == "Ok." and cut.error is not None


def test_invoke_with_string_attributes_and_no_marker() -> None:
    # SPECS §2: the same tags without |DSML|; mixed markers read too.
    text = (
        '<function_calls>\n<invoke name="f">\n<parameter name="a" string="true">1</parameter>\n'
        '<parameter name="b" string="false">[1, 2]</parameter>\n</invoke>\n</function_calls>'
    )
    assert calls(text) == [("f", {"a": "1", "b": [1, 2]})]
    b = f"{BAR}DSML{BAR}"
    mixed = (
        f'<{b}invoke name="f">\n<parameter name="a" string="true">x</{b}parameter>\n</{b}invoke>'
    )
    assert calls(mixed) == [("f", {"a": "x"})]
    assert calls('<invoke name="f">{"a": 1}</invoke>') == [("f", {"a": 1})]  # a JSON body


def test_olmo3_function_calls() -> None:
    # SPECS §3: one Python-style call per line, no list, no commas between calls.
    text = (
        "<function_calls>get_weather(city='Paris', days=3)\n"
        'search(q="a \\"b\\"", opts={"k": [1, null]}, exact=true)\n</function_calls>'
    )
    result = parse(text)
    assert [(c.name, dict(c.args)) for c in result.calls] == [
        ("get_weather", {"city": "Paris", "days": 3}),
        ("search", {"q": 'a "b"', "opts": {"k": [1, None]}, "exact": True}),
    ]
    assert result.content is None and result.format == "olmo3"
    # a line that is not a call is reported; the calls around it stay
    mixed = parse("<function_calls>f(a=1)\nnot a call\ng(b=b'x')\n</function_calls>")
    assert [c.name for c in mixed.calls] == ["f"] and [c.name for c in mixed.rejected] == ["g"]
    assert mixed.error is not None and mixed.content is None


def test_seed_oss() -> None:
    # SPECS §4: <seed:think> reasoning, budget notes, one <function=…> per block.
    text = (
        "<seed:think>Two steps.<seed:cot_budget_reflect>used 10</seed:cot_budget_reflect>"
        "<seed:tool_call><function=quoted></function></seed:tool_call></seed:think>"
        "On it.\n<seed:tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n"
        "<parameter=days>3</parameter>\n<parameter=flags>['a', 'b']</parameter>\n"
        "</function>\n</seed:tool_call><seed:eos>"
    )
    tool = schema(
        "get_weather", city={"type": "string"}, days={"type": "integer"}, flags={"type": "array"}
    )
    result = parse(text, [tool])
    assert [(c.name, dict(c.args)) for c in result.calls] == [
        ("get_weather", {"city": "Paris", "days": 3, "flags": ["a", "b"]})
    ]
    assert result.content == "On it." and result.format == "seed_oss"
    assert result.reasoning is not None and "quoted" in result.reasoning  # not a call
    cut = parse("<seed:tool_call>\n<function=f>\n<parameter=a>1")
    assert cut.calls == () and cut.unread and "<seed" not in (cut.content or "")


def test_gigachat3() -> None:
    # SPECS §5: content, <|message_sep|>, `function call<|role_sep|>`, one JSON object.
    three = (
        "Let me check.<|message_sep|>\n\nfunction call<|role_sep|>\n"
        '{"name": "f", "arguments": {"a": 1}}</s>'
    )
    result = parse(three)
    assert [(c.name, dict(c.args)) for c in result.calls] == [("f", {"a": 1})]
    assert (result.content, result.format) == ("Let me check.", "gigachat")
    assert calls('Hi<|function_call|>{"name": "f", "arguments": {}}') == [("f", {})]
    bad = parse('Hi<|function_call|>{"name": "f", "arguments": "x"}')  # must be an object
    assert bad.calls == () and [c.name for c in bad.rejected] == ["f"] and bad.content == "Hi"
    broken = parse("Hi<|function_call|>{not json")
    assert broken.calls == () and broken.content == "Hi" and broken.unread


def test_tool_call_name_then_json() -> None:
    # SPECS §6: <tool_call>NAME, then the arguments object; `name` inside is an argument.
    text = '<tool_call>skill\n{"name": "review", "depth": 2}\n</tool_call>'
    assert calls(text) == [("skill", {"name": "review", "depth": 2})]
    bad = parse("<tool_call>skill\n{not json}\n</tool_call>")
    assert bad.calls == () and [c.name for c in bad.rejected] == ["skill"]


def test_minimax_m2_reads_every_parameter() -> None:
    # SPECS §7: one element per argument, typed by the schema; never a silent {}.
    text = (
        '</think>\n<minimax:tool_call>\n<invoke name="get_weather">\n'
        '<parameter name="city">Oslo</parameter>\n<parameter name="days">2</parameter>\n'
        '<parameter name="hours">[6, 18]</parameter>\n</invoke>\n</minimax:tool_call>'
    )
    tool = schema(
        "get_weather", city={"type": "string"}, days={"type": "integer"}, hours={"type": "array"}
    )
    assert calls(text, [tool]) == [("get_weather", {"city": "Oslo", "days": 2, "hours": [6, 18]})]
    odd = parse('<minimax:tool_call><invoke name="f">city: Oslo</invoke></minimax:tool_call>')
    assert odd.calls == () and [c.name for c in odd.rejected] == ["f"]


def test_lfm2_markup_never_in_content() -> None:
    # SPECS §8: [calls] between the tokens; unescaped quotes, leading zeros, the echo.
    text = (
        "<|tool_call_start|>[book(title='it's here', day=07), grocery.order(items=['a'])]"
        "<|tool_call_end|>[book(title='it's here', day=07)]<|tool_call_end|>Done."
    )
    result = parse(text)
    assert [(c.name, dict(c.args)) for c in result.calls] == [
        ("book", {"title": "it's here", "day": 7}),
        ("grocery.order", {"items": ["a"]}),
    ]
    assert (result.content, result.format) == ("Done.", "lfm2")
    assert parse("<|tool_call_start|>[]<|tool_call_end|>Hi").content == "Hi"


def test_gemma4_channels_and_blocks() -> None:
    # SPECS §9: <|channel>thought…<channel|> is reasoning; a malformed block is an error.
    text = (
        "<|channel>thought\nCheck first.<channel|>Sure."
        '<|tool_call>call:get_weather{city:<|"|>C:\\tmp<|"|>,'
        "days:2,opts:{metric:true}}<tool_call|><tool_call|><|tool_response>"
    )
    result = parse(text)
    assert [(c.name, dict(c.args)) for c in result.calls] == [
        ("get_weather", {"city": "C:\\tmp", "days": 2, "opts": {"metric": True}})
    ]
    assert (result.reasoning, result.content) == ("Check first.", "Sure.")
    malformed = parse("Sure.<|tool_call>call:get_weather{city:}<tool_call|>Bye")
    assert malformed.calls == () and malformed.content == "Sure.\nBye"
    assert malformed.error is not None and malformed.unread
    assert calls("<|tool_call>:call:f{a:1}<turn|>") == [("f", {"a": 1})]  # drifts


def test_function_gemma_escape_strings() -> None:
    # SPECS §10: strings between <escape>; typed by the schema only where it takes no string.
    text = (
        "Ok.<start_function_call>call:search{q:<escape>a, b<escape>,"
        "limit:<escape>10<escape>}<end_function_call>Done."
    )
    result = parse(text)
    assert [(c.name, dict(c.args)) for c in result.calls] == [
        ("search", {"q": "a, b", "limit": "10"})
    ]
    assert result.content == "Ok.\nDone."
    tool = schema("search", q={"type": "string"}, limit={"type": "integer"})
    assert calls(text, [tool]) == [("search", {"q": "a, b", "limit": 10})]


def test_deepseek_tool_output_tokens() -> None:
    # SPECS §11: the tokens never reach content; the text the model wrote stays.
    t = f"Result: <{BAR}tool▁output▁begin{BAR}>22 C<{BAR}tool▁output▁end{BAR}> in Oslo."
    assert parse(t).content == "Result: 22 C in Oslo."


def test_command_r_leading_end_thinking_and_actions() -> None:
    # SPECS §12: output starts inside reasoning; a missing comma between actions.
    text = (
        'Plan <co>it</co: 0:[1]>.<|END_THINKING|><|START_ACTION|>[{"tool_call_id": "0", '
        '"tool_name": "a", "parameters": {}} {"tool_call_id": "1", "tool_name": "b", '
        '"parameters": {"x": 1}}]<|END_ACTION|>'
    )
    result = parse(text)
    assert [(c.name, c.id) for c in result.calls] == [("a", "0"), ("b", "1")]
    assert (result.reasoning, result.content) == ("Plan it.", None)
    assert parse("<|END_THINKING|>Hello<|END_OF_TURN_TOKEN|>").content == "Hello"
    broken = parse('<|START_ACTION|>[{"tool_name": "a", "parameters": {}} oops]<|END_ACTION|>')
    assert broken.calls == () and broken.unread  # never half


def test_qwen3_coder_self_closing_function() -> None:
    # SPECS §14: <function=NAME/> calls NAME with no arguments.
    assert calls("<tool_call>\n<function=ping/>\n</tool_call>") == [("ping", {})]
    assert calls("<function=ping/>") == [("ping", {})]


def test_glm_json_arguments_typed_by_the_schema() -> None:
    # SPECS §13: arrays and objects are JSON text, escaped or not.
    tool = schema(
        "todo", items={"anyOf": [{"type": "array"}, {"type": "string"}]}, n={"type": "integer"}
    )
    text = (
        '<tool_call>todo\n<arg_key>items</arg_key>\n<arg_value>[\\"a\\", \\"b\\"]</arg_value>\n'
        '<arg_key>n</arg_key>\n<arg_value>"2"</arg_value>\n</tool_call>'
    )
    assert calls(text, [tool]) == [("todo", {"items": ["a", "b"], "n": 2})]
    plain = (
        "<tool_call>todo\n<arg_key>items</arg_key>\n<arg_value>none yet</arg_value>\n</tool_call>"
    )
    assert calls(plain, [tool]) == [("todo", {"items": "none yet"})]
    cut = parse("Ok.<tool_call>todo\n<arg_key>items</arg_key>\n<arg_value>[1")
    assert cut.calls == () and cut.content == "Ok." and cut.unread


@pytest.mark.parametrize(
    "text",
    [
        f"<{BAR}DSML{BAR}function_calls>",
        "<function_calls>",
        "<seed:tool_call>",
        "<minimax:tool_call>",
        "<|tool_call_start|>",
        "<|tool_call>",
        "<start_function_call>",
        "<|function_call|>",
        "function call<|role_sep|>",
        "<tool_call>",
    ],
)
def test_a_block_opened_and_left_empty_is_reported(text: str) -> None:
    for repeated in (text, text * 3):
        result = parse("Hi." + repeated)
        assert result.calls == () and result.content == "Hi.", repeated
        assert result.unread and result.error is not None, repeated


def test_calls_stream_as_their_block_closes() -> None:
    stream = DialectStream()
    assert (
        stream.feed('<minimax:tool_call><invoke name="a"><parameter name="x">1</parameter>') == ()
    )
    assert [c.name for c in stream.feed("</invoke></minimax:tool_call>Done")] == ["a"]
    assert stream.finish().content == "Done"
