"""Plug into your own loop: only a TextFormat and a ToolChain, no agent class.

Swap ``ScriptedModel`` for ``resolve_model("openai:gpt-4o-mini")`` (or any ``Model``)
to run it for real.
"""

from __future__ import annotations

import asyncio

from agents.models import Message, ScriptedModel
from formats import FormatParseError, Section, XMLFormat
from toolchain import ExecutionContext, JSONToolChain, ToolCallParseError, tool


@tool
def convert(amount: float, rate: float) -> dict[str, float]:
    """Convert an amount with an exchange rate."""
    return {"converted": round(amount * rate, 2)}


async def main() -> None:
    chain = JSONToolChain().register_tool(convert)
    fmt = XMLFormat().register_section(chain).register_section(Section("answer"))
    model = ScriptedModel(
        [
            '<action>{"tool": "convert", "args": {"amount": 120, "rate": 0.92}}</action>',
            "<answer>120 USD is 110.40 EUR.</answer>",
        ]
    )
    ctx = ExecutionContext()
    system = f"Tools:\n{chain.available_tools_prompt()}\n\n{fmt.describe_structure()}"
    messages = [Message.text("system", system), Message.text("user", "120 USD in EUR at 0.92?")]
    for _ in range(5):
        output = (await model.generate(messages)).text
        messages.append(Message.text("assistant", output))
        try:
            sections = fmt.parse(output)
        except FormatParseError as error:
            messages.append(Message.text("user", str(error)))
            continue
        if "answer" in sections and "action" not in sections:
            print("answer:", sections["answer"][0])
            return
        for action in sections.get("action", []):
            try:
                result = await chain.execute(ctx, action, fmt)
            except ToolCallParseError as error:
                messages.append(Message.text("user", f"Could not read your calls: {error}"))
                continue
            print(result.text)
            messages.append(Message("user", result.as_content_parts()))


if __name__ == "__main__":
    asyncio.run(main())
