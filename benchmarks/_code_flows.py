"""The code-mode benchmark's flows: their worlds, and what the model writes in each chain.

Each flow is one task, played by a scripted model twice: with ``JSONToolChain`` (one
action per reply, calls one step at a time where the seed does so) and with
``PythonToolChain`` (one program that calls the tools, prints what the answer needs).
The model writes what a capable model would write; a script step is given the text of
the latest observations (what the model just read) and returns its next move: calls, a
program, or the answer. Answers the model works out are worked out from what it read,
never from the world's data directly, so a flow whose observation lacked a value fails.

* ``weather``: seed 000's comparison (mastra's weather tools, ``WeatherWorld``):
  get_weather NYC, then London, then compare_weather of both (copied whole, as the
  seed's by-value flow does), then an answer quoting both temperatures;
* ``transcript``: seed 002's transcript → analysis (``RelayWorld``: video 123's ~70 KB
  transcript, the corpus the pass-by-reference benchmark uses): yt_transcribe, then
  deep_check of the transcript (copied whole), then an answer quoting the analysis;
* ``orders``: a 20-record aggregation (``OrdersWorld``): list the week's 20 orders,
  fetch them (20 calls in one action), then the total of the paid EU ones;
* ``cms``: the discovery benchmark's 60-tool task under ``ToolSearch`` (its stepwise
  player, ``benchmarks.discovery_tokens``, in the JSON chain).

``naive``: the orders flow played by a model that works one thing at a time and copies
values (a program per tool call, printing each result whole, the sum worked out by
itself), against the same model in the JSON chain (one call per reply).
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

import msgspec
from typing_extensions import TypedDict

from agents import Limits, ReActAgent, ToolCallingAgent
from agents.evals.toolsets import LONG_TRANSCRIPT, RelayWorld
from agents.models import Message, ScriptedModel, ScriptedReply, ToolCallRequest
from benchmarks._cms_tools import CmsTool, cms_info, cms_tools
from benchmarks._record_flow import Recorded, ScriptError
from benchmarks._reference_tasks import WEATHER, WEATHER_ANSWER, WeatherWorld
from benchmarks.pass_by_reference import Count, Tokens
from toolchain import Extension, JSONToolChain, Tool, tool
from toolchain.code import PROGRAM_TOOL, PythonToolChain
from toolchain.discovery import ToolIndex, ToolSearch
from toolchain.testing import fixed_clock

__all__ = [
    "FLOWS",
    "NAIVE",
    "Chain",
    "Count",
    "Flow",
    "Mode",
    "OrdersWorld",
    "Program",
    "count_flow",
]

Mode = Literal["text", "native"]
Chain = Literal["json", "code"]
MODES: tuple[Mode, ...] = ("text", "native")


@dataclass(frozen=True, slots=True)
class Program:
    """A move of the code-mode model: one program."""

    code: str


Calls = list[tuple[str, dict[str, object]]]
Move = Calls | Program | str
Step = Callable[[str], Move]
"""Given the text the model just read, its next move: calls, a program, or the answer."""


class Writer(Protocol):
    """A scripted model that counts the tokens it wrote."""

    written: int

    def __call__(self, messages: Sequence[Message]) -> str | ScriptedReply: ...


class Player:
    """Plays a flow's steps as the model, in either mode, counting what it writes."""

    def __init__(self, mode: Mode, steps: Sequence[Step], tokens: Tokens) -> None:
        self.mode: Mode = mode
        self.steps = iter(steps)
        self.tokens = tokens
        self.written = 0

    def __call__(self, messages: Sequence[Message]) -> str | ScriptedReply:
        try:
            move = next(self.steps)(_latest(messages))
        except StopIteration:
            raise ScriptError("the agent asked for more steps than were scripted") from None
        if isinstance(move, str):
            reply = move if self.mode == "native" else f"<answer>{move}</answer>"
            self.written += self.tokens.of(reply)
            return reply
        calls: Calls = [(PROGRAM_TOOL, {"code": move.code})] if isinstance(move, Program) else move
        if self.mode == "native":
            requests = tuple(
                ToolCallRequest(f"c{i}", name, msgspec.json.encode(args).decode())
                for i, (name, args) in enumerate(calls)
            )
            self.written += sum(
                self.tokens.of(r.name) + self.tokens.of(r.arguments) for r in requests
            )
            return ScriptedReply("", requests)
        if isinstance(move, Program):
            reply = f"<action>\n{move.code}\n</action>"
        else:
            body = msgspec.json.encode([{"tool": n, "args": a} for n, a in move]).decode()
            reply = f"<action>{body}</action>"
        self.written += self.tokens.of(reply)
        return reply


def _latest(messages: Sequence[Message]) -> str:
    """The text of the messages after the model's last one: what it just read."""
    last = max((i for i, m in enumerate(messages) if m.role == "assistant"), default=-1)
    return "\n".join(m.text_content() for m in messages[last + 1 :])


def _found(pattern: str, seen: str) -> re.Match[str]:
    match = re.search(pattern, seen)
    if match is None:
        raise ScriptError(f"{pattern!r} is not in what the model read: {seen[-300:]!r}")
    return match


# -- the orders world: 20 records, filter and sum -----------------------------------------


class Item(TypedDict):
    sku: str
    name: str
    quantity: int
    unit_price: float


class Order(TypedDict):
    """One order as the shop's API returns it."""

    id: str
    customer: str
    email: str
    region: str
    status: str
    currency: str
    amount: float
    items: list[Item]
    shipping_address: str
    notes: str


WEEK = "2026-W47"
_REGIONS = ("EU", "US", "EU", "APAC", "EU")
_STATUSES = ("paid", "paid", "refunded", "paid", "pending")
_PRODUCTS = (("KB-101", "Mechanical keyboard", 89.0), ("MS-220", "Wireless mouse", 34.5))


def _order(n: int) -> Order:
    items = [
        Item(sku=sku, name=name, quantity=1 + (n + k) % 3, unit_price=price)
        for k, (sku, name, price) in enumerate(_PRODUCTS)
    ]
    return Order(
        id=f"ORD-{1000 + n}",
        customer=f"Customer {n:02d} Ltd",
        email=f"buyer{n:02d}@example.com",
        region=_REGIONS[n % len(_REGIONS)],
        status=_STATUSES[(n * 3) % len(_STATUSES)],
        currency="EUR",
        amount=round(sum(i["quantity"] * i["unit_price"] for i in items), 2),
        items=items,
        shipping_address=f"{10 + n} Harbour Street, Unit {n}, Port Town, PT{n:03d} 77",
        notes="Leave at the reception desk; call ahead if nobody answers.",
    )


ORDERS: tuple[Order, ...] = tuple(_order(n) for n in range(20))
PAID_EU = [o for o in ORDERS if o["status"] == "paid" and o["region"] == "EU"]
ORDERS_ANSWER = "The {n} paid EU orders of the week total {total:.2f} EUR."


@dataclass
class OrdersWorld(Recorded):
    """A shop's orders API: the week's order ids, and one order by id."""

    def tools(self) -> tuple[Tool[Any, Any], ...]:
        world = self
        by_id = {o["id"]: o for o in ORDERS}

        @tool
        def list_orders(week: str) -> list[str]:
            """The ids of the orders placed in an ISO week (e.g. 2026-W47)."""
            world.record("list_orders", week=week)
            return [o["id"] for o in ORDERS] if week == WEEK else []

        @tool
        def get_order(order_id: str) -> Order:
            """One order by its id, with its items, amount, status and region."""
            world.record("get_order", order_id=order_id)
            return by_id[order_id]

        return (list_orders, get_order)


def _orders_answer(seen: str) -> str:
    """The answer a model works out from the orders it read: JSON objects (a JSON
    chain's observations) or Python dicts (what a program printed)."""
    paid: list[float] = []
    ids: set[str] = set()
    for match in re.finditer(
        r"\{[\"']id[\"']: ?[\"']ORD-\d+.*?[\"']notes[\"']: ?[\"'][^\"']*[\"']\}", seen
    ):
        text = match.group(0)
        order = json.loads(text) if text.startswith('{"') else ast.literal_eval(text)
        ids.add(order["id"])
        if order["status"] == "paid" and order["region"] == "EU":
            paid.append(float(order["amount"]))
    if len(ids) != len(ORDERS):
        raise ScriptError(f"the model read {len(ids)} of the {len(ORDERS)} orders")
    return ORDERS_ANSWER.format(n=len(paid), total=sum(paid))


def _ids(seen: str) -> list[str]:
    ids = re.findall(r"ORD-\d+", seen)
    if len(ids) != len(ORDERS):
        raise ScriptError(f"expected {len(ORDERS)} order ids, read {len(ids)}")
    return ids


def orders_json() -> list[Step]:
    return [
        lambda seen: [("list_orders", {"week": WEEK})],
        lambda seen: [("get_order", {"order_id": i}) for i in _ids(seen)],
        _orders_answer,
    ]


ORDERS_PROGRAM = f"""import asyncio
ids = await list_orders(week="{WEEK}")
orders = await asyncio.gather(*[get_order(order_id=i) for i in ids])
paid = [o for o in orders if o["status"] == "paid" and o["region"] == "EU"]
print(len(paid), "paid EU orders, total", round(sum(o["amount"] for o in paid), 2))"""


def _printed_total(seen: str) -> str:
    match = _found(r"(\d+) paid EU orders, total ([0-9.]+)", seen)
    return ORDERS_ANSWER.format(n=int(match.group(1)), total=float(match.group(2)))


def orders_code() -> list[Step]:
    return [lambda seen: Program(ORDERS_PROGRAM), _printed_total]


class _Naive:
    """The naive model's orders flow: one thing at a time, each result copied from
    what it read; ``program`` writes each call as a program printing the result whole."""

    def __init__(self, program: bool) -> None:
        self.program = program
        self.ids: list[str] = []
        self.read: list[str] = []

    def steps(self) -> list[Step]:
        first: Step = lambda seen: self._call("list_orders", {"week": WEEK})  # noqa: E731
        return [first, *(self._fetch(n) for n in range(len(ORDERS))), self._answer]

    def _call(self, name: str, args: dict[str, object]) -> Move:
        if not self.program:
            return [(name, args)]
        written = ", ".join(f"{key}={json.dumps(value)}" for key, value in args.items())
        return Program(f"print(await {name}({written}))")

    def _fetch(self, n: int) -> Step:
        def step(seen: str) -> Move:
            if n == 0:
                self.ids = re.findall(r"ORD-\d+", seen)
            else:
                self.read.append(seen)
            return self._call("get_order", {"order_id": self.ids[n]})

        return step

    def _answer(self, seen: str) -> str:
        self.read.append(seen)
        return _orders_answer("\n".join(self.read))


# -- the weather and transcript flows (seeds 000 and 002) ----------------------------------


def weather_json() -> list[Step]:
    read: list[str] = []  # the two reports, as the model read them

    def london(seen: str) -> Calls:
        read.append(seen)
        return [("get_weather", {"location": "London"})]

    def compare(seen: str) -> Calls:
        read.append(seen)
        reports = [json.loads(_found(r"\{.*\}", text).group(0)) for text in read]
        return [("compare_weather", {"a": reports[0], "b": reports[1]})]

    def answer(seen: str) -> str:
        _found(r"warmer than", seen)
        temps = [json.loads(_found(r"\{.*\}", t).group(0))["temperature"] for t in read]
        return WEATHER_ANSWER.format(a=temps[0], b=temps[1])

    return [lambda seen: [("get_weather", {"location": "NYC"})], london, compare, answer]


WEATHER_PROGRAM = """import asyncio
nyc, london = await asyncio.gather(get_weather(location="NYC"), get_weather(location="London"))
print(await compare_weather(a=nyc, b=london))
print("NYC", nyc["temperature"], "London", london["temperature"])"""


def weather_code() -> list[Step]:
    def answer(seen: str) -> str:
        match = _found(r"NYC ([0-9.]+) London ([0-9.]+)", seen)
        return WEATHER_ANSWER.format(a=float(match.group(1)), b=float(match.group(2)))

    return [lambda seen: Program(WEATHER_PROGRAM), answer]


TRANSCRIPT_ANSWER = "Deep Check says: {analysis}"


def transcript_json() -> list[Step]:
    def check(seen: str) -> Calls:
        _found(r"and the last number is 4242\.", seen)  # the whole transcript was read
        return [("deep_check", {"text": LONG_TRANSCRIPT})]  # and is copied whole

    return [
        lambda seen: [("yt_transcribe", {"video_id": "123"})],
        check,
        lambda seen: TRANSCRIPT_ANSWER.format(analysis=_found(r"Analysis: [^\n<\"]*", seen)[0]),
    ]


TRANSCRIPT_PROGRAM = """transcript = await yt_transcribe(video_id="123")
print(await deep_check(text=transcript))"""


def transcript_code() -> list[Step]:
    return [
        lambda seen: Program(TRANSCRIPT_PROGRAM),
        lambda seen: TRANSCRIPT_ANSWER.format(analysis=_found(r"Analysis: [^\n<\"]*", seen)[0]),
    ]


# -- the 60-tool CMS task with ToolSearch --------------------------------------------------

CMS_PROMPT = "Create an About page with a hero section showing an image of mountains."
CMS_ANSWER = "The About page has a mountain hero image."
CMS_PROGRAM = """image = await search_images(query="mountains")
page = await create_page(title="About", slug="about")
section = await add_section(page_id=page["id"], template="hero")
print(await set_section_image(section_id=section["id"], image_id=image["results"][0]["id"]))"""


@dataclass
class CmsWorld:
    """The discovery benchmark's 60 CMS tools, behind a ``ToolSearch`` that defers them."""

    tools_: list[CmsTool] = field(default_factory=cms_tools)

    def tools(self) -> tuple[Tool[Any, Any], ...]:
        return ()  # all of them reach the chain through the extension

    def extensions(self) -> list[Extension]:
        return [ToolSearch(ToolIndex(self.tools_, cms_info(self.tools_)), defer=True)]

    @property
    def received(self) -> dict[str, list[dict[str, object]]]:
        return {t.name: t.calls for t in self.tools_ if t.calls}


CMS_SEARCH = (
    'print(await tool_search(query=["find an image", "create a new page", '
    '"add a hero section to a page", "set the image of a section"]))'
)


def cms_code() -> list[Step]:
    """One search for every step (the gate refuses a tool not found yet, though its
    stub is listed: see the benchmark's note), then one program."""

    def program(seen: str) -> Program:
        for name in ("search_images", "create_page", "add_section", "set_section_image"):
            _found(f"'name': '{name}'", seen)
        return Program(CMS_PROGRAM)

    def answer(seen: str) -> str:
        _found(r"'ok': True", seen)
        return CMS_ANSWER

    return [lambda seen: Program(CMS_SEARCH), program, answer]


# -- flows and their runs ------------------------------------------------------------------


class World(Protocol):
    @property
    def received(self) -> dict[str, list[dict[str, object]]]: ...

    def tools(self) -> tuple[Tool[Any, Any], ...]: ...


@dataclass(frozen=True)
class Flow:
    """One task, its world, and the model's script in each chain."""

    name: str
    prompt: str
    world: Callable[[], World]
    json_steps: Callable[[], list[Step]]
    code_steps: Callable[[], list[Step]]
    answer: str
    target: float | None = None
    """% fewer input tokens code mode must spend (the issue's target), if any."""
    players: Callable[[Chain, Mode, Tokens], Writer] | None = None
    """Players of its own (the discovery benchmark's), instead of the steps."""


def _cms_players(chain: Chain, mode: Mode, tokens: Tokens) -> Writer:
    if chain == "json":
        from benchmarks.discovery_tokens import Player as Discovering

        return Discovering(mode, discovery=True)
    return Player(mode, cms_code(), tokens)


_PAID_TOTAL = sum(o["amount"] for o in PAID_EU)
FLOWS: tuple[Flow, ...] = (
    Flow(
        "weather (seed 000)",
        "What's the weather in NYC? What about London? Then compare them.",
        WeatherWorld,
        weather_json,
        weather_code,
        WEATHER_ANSWER.format(a=WEATHER["NYC"]["temperature"], b=WEATHER["London"]["temperature"]),
    ),
    Flow(
        "transcript (seed 002)",
        "Generate a transcript of the YouTube video with video_id='123' and then pass it "
        "to Deep Check for analysis.",
        RelayWorld,
        transcript_json,
        transcript_code,
        TRANSCRIPT_ANSWER.format(
            analysis=f"Analysis: {len(LONG_TRANSCRIPT.split())} words, nothing alarming."
        ),
        target=60.0,
    ),
    Flow(
        "cms 60 tools, ToolSearch",
        CMS_PROMPT,
        CmsWorld,
        lambda: [],
        cms_code,
        CMS_ANSWER,
        players=_cms_players,
    ),
    Flow(
        "orders: 20 records",
        f"Of the orders placed in week {WEEK}, what is the total amount of the paid ones "
        "in the EU?",
        OrdersWorld,
        orders_json,
        orders_code,
        ORDERS_ANSWER.format(n=len(PAID_EU), total=_PAID_TOTAL),
        target=60.0,
    ),
)
NAIVE = Flow(
    "orders, naive model",
    FLOWS[-1].prompt,
    OrdersWorld,
    lambda: _Naive(program=False).steps(),
    lambda: _Naive(program=True).steps(),
    FLOWS[-1].answer,
)


def count_flow(flow: Flow, chain: Chain, mode: Mode, tokens: Tokens) -> Count:
    """Run ``flow`` once in ``chain`` under the ``mode`` agent; its tokens and answer
    (``big_step``: the tokens the first action's observation added)."""
    world = flow.world()
    extensions = world.extensions() if isinstance(world, CmsWorld) else []
    tool_chain = JSONToolChain() if chain == "json" else PythonToolChain()
    for each in world.tools():
        tool_chain.register_tool(each)
    if flow.players is not None:
        player = flow.players(chain, mode, tokens)
    else:
        steps = flow.json_steps() if chain == "json" else flow.code_steps()
        player = Player(mode, steps, tokens)
    model = ScriptedModel(player)
    limits = Limits(max_steps=30)  # the naive model's 22 steps
    agent: ReActAgent[str] | ToolCallingAgent[str] = (
        ToolCallingAgent(
            model, tool_chain=tool_chain, extensions=extensions, limits=limits, clock=fixed_clock
        )
        if mode == "native"
        else ReActAgent(
            model, tool_chain=tool_chain, extensions=extensions, limits=limits, clock=fixed_clock
        )
    )
    result = agent.run_sync(flow.prompt)
    if not result.ok or result.answer is None:
        raise ScriptError(f"{flow.name} ({chain}, {mode}) did not finish: {result.stopped_by}")
    received = {name: sorted(calls, key=repr) for name, calls in world.received.items()}
    first, second = model.requests[0].messages, model.requests[1].messages
    added = tokens.messages([m for m in second[len(first) :] if m.role != "assistant"])
    read = tokens.requests(model)
    return Count(read, player.written, len(model.requests), added, result.answer, received)
