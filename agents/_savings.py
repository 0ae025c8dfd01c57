"""`Ledger`: what each extension of a run kept out of its requests, and what it cost
(``AgentResult.savings``, whose `Savings` says what is counted).

A run with the relay, discovery or the variables opens a ledger; any other run opens
none and counts nothing. The ledger reads what the extensions tell observers on
``ctx.events`` (outputs boxed, references resolved in a call's arguments) and what
the step engine hands it itself, as no event would be made for it alone: each
request as sent, with the tools it could call and those it described
(`note_request`; a step nothing had a say in is told as the run's plain call,
`Ledger.plain_step`, with no request made for it); each step's calls and results
(`Ledger.step_done`); each step's extension sections (`note_sections`). Multipliers
are settled when the run ends, once it is known how many requests followed each step
and which requests only served an extension (a search, a read of a boxed output).
"""

from __future__ import annotations

import bisect
import contextlib
import functools
import json
import sys
import weakref
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, TypeVar, cast

import toolchain.runtime
from agents._step_log import log
from agents._tool_specs import chain_tools, tool_spec
from agents.models import Message
from agents.result import Savings, StepResult
from formats import FormattedSection, MarkdownFormat, TextFormat, XMLFormat
from toolchain import (
    CallObservation,
    ExecutionContext,
    Extension,
    StateKey,
    Tool,
    ToolCallStarted,
    ToolChain,
    ToolChainResult,
)
from toolchain.chain import ToolChainBase

if TYPE_CHECKING:
    from agents._step_state import StepCall
    from agents.steps import StepRequest
    from toolchain.relay import OutputBoxed, ReferencesResolved
    from toolchain.variables import ToolVariables, VariablesResolved

__all__ = ["Ledger", "LedgerPlan", "note_request", "note_sections", "open_ledger", "run_savings"]

_LEDGER = StateKey["Ledger | None"]("agents.savings.ledger")
_CHILDREN = StateKey[dict[str, Savings]]("agents.savings.children")
"""Extension name → what the sub-agents of a run saved, added up as they end."""


@dataclass(slots=True)
class _Carried:
    """Tokens that ride in every request after step ``step`` (kept out, or a cost)."""

    step: int
    name: str
    tokens: int
    kept: bool


class Ledger:
    """One run's account of its extensions' tokens (see the module text)."""

    # Slots: a ledger is made for every run with an extension and sets all of these.
    __slots__ = (
        "_boxed",
        "_carried",
        "_chain",
        "_cost",
        "_count",
        "_ctx",
        "_deferred_for",
        "_extra",
        "_fixed_at",
        "_fixed_for",
        "_fixing",
        "_format",
        "_growing",
        "_guide",
        "_kinds",
        "_message_tokens",
        "_named",
        "_names",
        "_native",
        "_observation_limit",
        "_output_limit",
        "_owner",
        "_pending",
        "_per_request",
        "_plain",
        "_protocol",
        "_requests",
        "_resolved",
        "_sections",
        "_shown",
        "_step",
        "_tallied",
        "_tool_tokens",
        "_unsubscribe",
        "_variables",
        "_watching_calls",
    )

    def __init__(self, ctx: ExecutionContext, plan: LedgerPlan) -> None:
        # Read from the module each run (the encoder loads on first count; a test may
        # count the counts by patching it there).
        self._count = toolchain.runtime.count_tokens
        self._ctx = ctx
        self._chain = plan.chain
        self._format = plan.format
        self._native = plan.protocol == "native"
        self._kinds = plan.kinds
        self._variables = plan.variables
        """The run's ToolVariables (``_kinds`` found it by its class: cast where asked)."""
        self._names = plan.names
        self._owner = plan.owner
        self._guide = plan.guide
        self._cost: dict[str, int] = dict.fromkeys(self._names, 0)  # whole requests
        self._carried: list[_Carried] = []
        self._per_request: list[tuple[int, str, int, bool]] = []  # request, name, tokens, kept
        self._fixing = plan.fixing
        self._growing = plan.growing
        self._shown: list[tuple[int, tuple[str, ...], tuple[str, ...] | None]] = []
        """Each request of a chain that only gains tools (`_only_grows`): its tools and
        those it described (None: all of them), tuples the request holds anyway. What
        they cost is worked out when the figures are read (`tally`), from the tools the
        chain has then: the same ones under those names."""
        self._fixed_at: list[tuple[int, tuple[tuple[str, int, bool], ...]]] = []
        """Any other chain's requests and what each cost every time (`_fixed`: name,
        tokens, kept), worked out as the step is told (its tools may change)."""
        self._requests: list[int] = []
        self._extra: dict[int, str] = {}  # request → the extension it alone served
        self._pending: dict[int, StepRequest | int] = {}  # requests whose reply is not read yet
        """Step → its request; for a plain step (`plain_step`), how many messages of the
        plain call's conversation it sent (the call is ``_plain``)."""
        self._plain: StepCall | None = None
        """The run's plain call, once a step sent it (its conversation, the system
        message first, is the run's own: it grows step by step)."""
        self._sections: tuple[int, list[tuple[str, str]]] | None = None
        """The requests told before the sections were, and the sections (`sections`)."""
        self._resolved: dict[str, str] = {}  # call id → the extension that resolved it
        self._boxed: dict[str, int] = {}  # call id → what boxing its output kept out
        self._named: list[tuple[int, CallObservation, object]] = []
        """Outputs shown whole with (most likely) a name before them, not counted yet:
        the step, the call's observation and its output, which the step's record holds
        too. See `_outputs_shown`."""
        self._tallied: dict[str, Savings] | None = None
        self._step = 0
        self._tool_tokens: dict[str, tuple[object, int]] | None = None
        """The chain's tools' definitions counted (`_definition`): found when first asked."""
        self._message_tokens: dict[int, tuple[Message, int]] = {}
        self._protocol = plan.protocol
        self._unsubscribe: list[Callable[[], None]] = []
        self._watching_calls = False
        # How much of an output the chain shows (as toolchain.chain cuts them): 0 for a
        # chain that does not say, and every output is then compared as written again.
        self._output_limit: int = getattr(plan.chain, "max_output_chars", 0)
        self._observation_limit: int = getattr(plan.chain, "max_observation_chars", 0)
        self._fixed_for: _FixedFor | None = None  # the last request's (`_request_cost`)
        self._deferred_for: _Kept[int] | None = None

    # -- the run -----------------------------------------------------------------------

    def open(self) -> None:
        """Start listening on the run's context: to what the relay and the variables tell."""
        events = self._ctx.events
        watch = self._unsubscribe.append
        relay = self._kinds.get("relay")
        if relay is not None:
            boxed, resolved = _relay_events()
            watch(events.subscribe(boxed, lambda event: self._output_boxed(relay, event)))
            watch(events.subscribe(resolved, lambda event: self._resolved_by(relay, event.call_id)))
        variables = self._kinds.get("variables")
        if variables is not None:
            named = _variables_event()
            watch(
                events.subscribe(named, lambda event: self._resolved_by(variables, event.call_id))
            )
        self._ctx.state.set(_LEDGER, self)

    def close(self) -> dict[str, Savings]:
        """Stop listening; each extension's savings over the run."""
        self.stop()
        return self.tally()

    def stop(self) -> None:
        """Stop listening (the run has ended); what it heard is kept for `tally`."""
        for unsubscribe in self._unsubscribe:
            unsubscribe()
        self._unsubscribe.clear()
        if self._ctx.state.get(_LEDGER) is self:
            self._ctx.state.set(_LEDGER, None)
        # Only the counts are read from here on: what served the steps goes now (the
        # ledger may live as long as the run's result does, see `run_savings`).
        self._pending.clear()
        self._message_tokens.clear()
        self._resolved.clear()

    def tally(self) -> dict[str, Savings]:
        """Each extension's savings over the run (after `stop`); counted once."""
        if self._tallied is not None:
            return self._tallied
        # Nothing of the ledger changes here but its kept figures (each right for its
        # own key): two threads reading a result at once each count the same figures.
        items = list(self._carried)
        variables = self._kinds.get("variables")
        if variables is not None:
            for step, seen, output in self._named:
                difference = self._named_output(seen, output)
                if difference:
                    items.append(_Carried(step, variables, abs(difference), difference >= 0))
        fixed_at = [*self._fixed_at, *self._fixed_shown()] if self._shown else self._fixed_at
        kept, cost = dict.fromkeys(self._names, 0), dict(self._cost)
        counted = sorted(r for r in self._requests if r not in self._extra)
        for item in items:
            carried = len(counted) - bisect.bisect_right(counted, item.step)
            _add(kept if item.kept else cost, item.name, item.tokens * carried)
        for request, name, tokens, is_kept in self._per_request:
            if request not in self._extra:
                _add(kept if is_kept else cost, name, tokens)
        for request, fixed in fixed_at:
            if request not in self._extra:
                for name, tokens, is_kept in fixed:
                    _add(kept if is_kept else cost, name, tokens)
        self._tallied = {name: Savings(kept[name], cost[name]) for name in self._names}
        return self._tallied

    def _fixed_shown(self) -> list[tuple[int, tuple[tuple[str, int, bool], ...]]]:
        """What each request in ``_shown`` cost every time (`_request_cost`), over the
        chain's tools as they are now: the same ones under the names the requests showed
        (`_only_grows`)."""
        registered = chain_tools(self._chain)
        return [
            (index, self._request_cost(tools, described, registered))
            for index, tools, described in self._shown
        ]

    # -- what the engine tells -------------------------------------------------------

    def sections(self, texts: list[tuple[str, str]]) -> None:
        """The extension sections of the request about to be made (name, formatted);
        `note_sections` tells only a step that has some. Noted with the requests told
        so far: the next request's, not a later one's (were that one never made)."""
        made = len(self._requests)
        self._sections = (made, [(name, text) for name, text in texts if name in self._names])

    def request_ready(self, request: StepRequest) -> None:
        """A step's request, as the model is called with it (`note_request`)."""
        try:  # (the work itself in the try: no second call a step, as in plain_step)
            index = self._step = request.index
            sections = self._sections
            if sections is not None:
                self._sections = None
                if sections[0] == len(self._requests):  # this request's
                    for name, text in sections[1]:
                        self._per_request.append((index, name, self._count(text), False))
            self._requests.append(index)
            if self._owner:  # read back only for a step that served one extension alone
                self._pending[index] = request
            if self._fixing:
                self._note_shown(index, request.tools, request.described)
        except Exception:  # as an observer's would be: the run goes on without it
            log.exception("the savings ledger failed on a step's request; the run goes on")

    def plain_step(self, index: int, call: StepCall) -> None:
        """Step ``index`` sends the run's plain ``call`` (its system message and the
        conversation as it is now, every tool of ``call`` shown): no step hook, prompt
        section or ``StepReady`` observer had a say in it, and the engine made no
        `StepRequest` for it; this is told instead of `request_ready`."""
        try:  # (the work itself in the try: no second call a step, as request_ready has)
            self._step = index
            self._requests.append(index)
            if self._owner:  # read back only for a step that served one extension alone
                # The conversation is only added to until the step is done (`step_done`):
                # its length now says which of its messages the request sent.
                self._pending[index] = len(call.messages)
                if self._plain is None:
                    self._plain = call
            if self._fixing:
                self._note_shown(index, call.tools, None)
        except Exception:  # as an observer's would be: the run goes on without it
            log.exception("the savings ledger failed on a step's request; the run goes on")

    def _note_shown(
        self, index: int, tools: tuple[str, ...], described: tuple[str, ...] | None
    ) -> None:
        """Step ``index``'s request shows ``tools`` (and described those of
        ``described``; None, all of them). On a chain that only gains tools
        (`_only_grows`) only noted: what it costs is worked out when the figures are
        read (`tally`); on any other, worked out now, over the tools the chain has now."""
        if self._growing:
            self._shown.append((index, tools, described))
        else:
            cost = self._request_cost(tools, described, chain_tools(self._chain))
            self._fixed_at.append((index, cost))

    def _request_cost(
        self,
        tools: tuple[str, ...],
        described: tuple[str, ...] | None,
        registered: Mapping[str, Tool[Any, Any]],
    ) -> tuple[tuple[str, int, bool], ...]:
        """What a request showing ``tools`` (described: those it described; None, all of
        them) costs every time, over ``registered``: the guides and the extensions' own
        tools it showed (`_fixed`) and, with discovery, the definitions of the tools it
        could call but did not describe (`_deferred`). Steps mostly show the same tools:
        the last request's figures are used again while they hold (`_Kept.holds`)."""
        shown = tools if described is None else described
        fixed: tuple[tuple[str, int, bool], ...] = ()
        if self._guide or self._owner:
            last = self._fixed_for
            if last is None or not last.holds(shown, registered):
                last = self._fixed_for = self._fixed(shown, registered)
            fixed = last.value[0]
        search = self._kinds.get("discovery")
        if search is not None and described is not None:
            # Tools callable but not described: without discovery every request would
            # have described them (text: in the prompt's listing; native: as specs).
            key = (tools, described)
            kept = self._deferred_for  # the last request's, which most defer again
            if kept is None or not kept.holds(key, registered):
                kept = self._deferred_for = self._deferred(key, registered)
            fixed = (*fixed, (search, kept.value, True))
        return fixed

    def _fixed(self, shown: tuple[str, ...], registered: Mapping[str, Tool[Any, Any]]) -> _FixedFor:
        """What every request showing ``shown`` costs: each guide, and the definitions of
        the extensions' own tools among ``shown``. A run's steps mostly show the same
        tools from the same registry: worked out once, and asked for only when the run's
        last does not hold."""
        # The run's first step: the agent's last run may have worked out the same, with
        # the same guides and extension tools (compared: another run may differ).
        runs = _FIXED.setdefault(self._chain, {})
        last = runs.get(self._protocol)
        if (
            last is not None
            and last.holds(shown, registered)
            and (last.value[1] is self._guide or last.value[1] == self._guide)
            and (last.value[2] is self._owner or last.value[2] == self._owner)
        ):
            return last
        fixed = [(name, tokens, False) for name, tokens in self._guide.items()]
        for tool in shown:
            owner = self._owner.get(tool)
            if owner is not None:
                fixed.append((owner, self._definition(tool, registered), False))
        # The ledger's guides and owners are not changed after it is made: kept as they are.
        made = _Kept(shown, registered, len(registered), (tuple(fixed), self._guide, self._owner))
        runs[self._protocol] = made
        return made

    def step_done(self, done: StepResult) -> None:
        """A step's record, once made (the engine tells it where ``StepFinished`` is
        emitted: the ledger is no observer of its own run's steps)."""
        try:  # (the work itself in the try: no second call a step)
            index = done.index
            variables = self._kinds.get("variables")
            if variables is not None and done.tool_results:
                self._outputs_shown(index, variables, done.tool_results)
            owner_of = self._owner
            if not owner_of:  # no extension of the run has tools: no call is one's own
                return
            request = self._pending.pop(index, None)
            # Most steps call none of the extensions' own tools: then nothing is carried, and
            # their calls are not paired with what they showed (as below) to find it out.
            # (Loops, not any(): a generator costs more than the two names it looks at.)
            for chain_result in done.tool_results:
                for seen in chain_result.observations:
                    if seen.name in owner_of:
                        break
                else:
                    continue
                break
            else:
                return
            owned: list[tuple[str, int]] = []  # each call to an extension's own tool: its tokens
            others = False
            for chain_result in done.tool_results:
                for seen, call in zip(
                    chain_result.observations, chain_result.raw.calls, strict=False
                ):
                    owner = self._owner.get(seen.name)
                    if owner is None:
                        others = True
                    else:
                        written = self._count(seen.name) + self._count(_json(call.args))
                        owned.append((owner, written + self._count(seen.text)))
            owners = {owner for owner, _ in owned}
            if others or len(owners) != 1 or request is None:
                for owner, tokens in owned:  # the calls and results stay in later requests
                    self._carried.append(_Carried(index, owner, tokens, kept=False))
                return
            # Without the extension this step would not have been taken: its request is all
            # cost (nothing it left out counts as kept), and so are its messages, which
            # every later request carries.
            owner = owners.pop()
            self._extra[index] = owner
            self._cost[owner] += self._request_tokens(request)
            step_tokens = self._count(done.output)
            if self._native:
                step_tokens += sum(tokens for _, tokens in owned)
            else:  # the reply as written, and the observation as wrapped
                step_tokens += sum(self._count(result.text) for result in done.tool_results)
            self._carried.append(_Carried(index, owner, step_tokens, kept=False))
        except Exception:  # as an observer's would be: the run goes on without it
            log.exception("the savings ledger failed on a step's record; the run goes on")

    def _outputs_shown(
        self, step: int, variables: str, results: tuple[ToolChainResult, ...]
    ) -> None:
        """What the variables changed in each output shown (a name beside it, or a
        shorter form): the output as the chain writes it against what was shown, less
        what the relay's boxing already accounts for.

        An output shown whole with a name before it (``$name = ``, as `_named_output`
        finds when the figures are read) is only noted now: the output is neither
        written again nor counted, whatever its size, and a run whose savings nobody
        reads never asks the variables its name. Any other (boxed, cut by the chain, no
        name) is written again now to compare with, as its output may change later."""
        kept = cost = 0  # added up over the step: carried from it as one figure each
        owner, boxed, named = self._owner, self._boxed, self._named
        for chain_result in results:
            observations = chain_result.observations
            if not observations:
                continue
            share = min(self._output_limit, max(1, self._observation_limit // len(observations)))
            # zip's strict=False is its default, not passed: a keyword costs its parsing.
            for seen, result in zip(observations, chain_result.raw.results):  # noqa: B905
                if result is None or seen.error is not None or seen.name in owner:
                    continue
                text = seen.text
                if text[:1] == "$" and len(text) <= share and seen.id not in boxed:
                    named.append((step, seen, result.output))  # not cut, not boxed
                    continue
                rewritten = self._rewritten(seen, result.output)
                if rewritten is None:
                    continue
                difference = rewritten - boxed.pop(seen.id, 0)
                if difference > 0:
                    kept += difference
                else:
                    cost += difference
        for difference in (kept, cost):
            if difference:
                self._carry(variables, difference, step)

    def _named_output(self, seen: CallObservation, output: object) -> int | None:
        """What the variables changed in an output noted by `_outputs_shown` (shown whole,
        ``$`` first): the name before it, where the variables still name its call so; else
        (the name since dropped or reused, or none given) the output written again, as
        `_outputs_shown` writes any other, to compare with (`_rewritten`)."""
        variables = cast("ToolVariables | None", self._variables)
        name = variables.named(self._ctx, seen.id) if variables is not None else None
        text = seen.text
        if name is not None and text.startswith(prefix := f"${name} = "):
            return self._changed(seen.name, text[len(prefix) :], text)
        return self._rewritten(seen, output)

    def _rewritten(self, seen: CallObservation, output: object) -> int | None:
        """The tokens ``output``, written as the chain writes it, has beyond the text
        shown; None where that says nothing (unchanged, or an output the chain cut)."""
        encode: Callable[[object], str] | None = getattr(self._chain, "encode_output", None)
        limit: int = getattr(self._chain, "max_output_chars", 0)
        if encode is None:
            return None
        try:
            written = encode(output)
        except Exception:  # the chain showed an error for it: nothing was replaced
            return None
        if written == seen.text or (limit and len(written) > limit):
            return None  # unchanged, or cut by the chain (compared with a cut text)
        return self._changed(seen.name, written, seen.text)

    def _changed(self, tool: str, written: str, shown: str) -> int:
        """The tokens ``written`` has beyond ``shown``, as the model reads each."""
        if self._native:
            return self._count(written, minus=shown)
        return self._count(self._observed(tool, written), minus=self._observed(tool, shown))

    # -- what the extensions tell ----------------------------------------------------

    def _output_boxed(self, relay: str, event: OutputBoxed) -> None:
        kept = event.original_tokens - event.shown_tokens
        if not self._native and event.original:
            # The text format may escape what it wraps (XML: < and &), and the output
            # would have been escaped in full where its reference is now.
            original = self._observed(event.tool, event.original)
            if original != self._observed(event.tool, event.original, escape=False):
                kept = self._count(original, minus=self._observed(event.tool, event.shown))
        if "variables" in self._kinds:  # told apart from what the variables changed
            self._boxed[event.call_id] = self._boxed.get(event.call_id, 0) + kept
        self._carry(relay, kept)

    def _observed(self, tool: str, text: str, *, escape: bool = True) -> str:
        """``text`` as a section of a text agent's observation."""
        return self._format.format_sections([FormattedSection(tool, text, escape=escape)])

    def _resolved_by(self, owner: str, call_id: str) -> None:
        """A call's arguments passed values by reference: its ``ToolCallStarted`` (which
        follows the hooks) has both forms. Listened to from the first such call on: most
        runs pass none, and their calls are not looked at."""
        self._resolved[call_id] = owner
        if not self._watching_calls:
            self._watching_calls = True
            self._unsubscribe.append(self._ctx.events.subscribe(ToolCallStarted, self._before_call))

    def _before_call(self, event: ToolCallStarted) -> None:
        owner = self._resolved.pop(event.id, None) if event.id else None
        if owner is None or event.raw_args is None:
            return
        copied = self._count(_json(event.args), minus=_json(event.raw_args))
        self._carry(owner, copied)

    def _carry(self, name: str, difference: int, step: int | None = None) -> None:
        """``difference`` tokens kept out of every request after ``step`` (this one by
        default); a cost when below 0."""
        at = self._step if step is None else step
        self._carried.append(_Carried(at, name, abs(difference), kept=difference >= 0))

    # -- counting ------------------------------------------------------------------

    def _deferred(
        self,
        key: tuple[tuple[str, ...], tuple[str, ...]],
        registered: Mapping[str, Tool[Any, Any]],
    ) -> _Kept[int]:
        """The definitions of the tools a request may call but does not describe
        (``key``: its tools and those it describes).

        The same sets of tools recur step after step and run after run, so the sum is
        kept while the request's tools and what it describes (compared in C) and the
        chain's registry stay the same (`_Kept.holds`); a chain that hands out copies
        is summed again each step. Asked for only when the last sum does not hold. The
        sum itself is a Python loop over every deferred tool.
        """
        kept = _DEFERRED.setdefault(self._chain, {})
        last = kept.get(self._protocol)
        if last is None or not last.holds(key, registered):
            tools, described = key
            shown = set(described)
            total = sum(self._definition(t, registered) for t in tools if t not in shown)
            last = kept[self._protocol] = _Kept(key, registered, len(registered), total)
        return last

    def _definition(self, tool: str, registered: Mapping[str, Tool[Any, Any]]) -> int:
        """A tool's definition as the model is shown it: its block of the prompt's
        listing (text), or its spec (native); counted again only when the chain holds
        another tool under that name."""
        counted = self._tool_tokens
        if counted is None:  # counted once per chain and tool, for every run
            counted = _DEFINITIONS.setdefault(self._chain, {}).setdefault(self._protocol, {})
            self._tool_tokens = counted
        current = registered.get(tool)
        known = counted.get(tool)
        if known is not None and known[0] is current:
            return known[1]
        tokens = self._count(self._definition_text(tool))
        counted[tool] = (current, tokens)
        return tokens

    def _definition_text(self, name: str) -> str:
        if not self._native:
            return self._chain.available_tools_prompt([name])
        tool = self._chain.tools.get(name)
        if tool is None:
            return ""
        spec = tool_spec(tool)
        described = {"name": spec.name, "description": spec.description}
        return json.dumps({**described, "parameters": spec.parameters}, separators=(",", ":"))

    def _request_tokens(self, request: StepRequest | int) -> int:
        if isinstance(request, int):  # the plain call, of which so many messages were sent
            call = self._plain
            assert call is not None  # set with the first such step
            system_prompt = call.messages[0].text_content()
            messages: Sequence[Message] = call.messages[1:request]
            shown = call.tools
        else:
            system_prompt, messages, shown = (
                request.system_prompt,
                request.messages,
                request.shown_tools,
            )
        total = self._count(system_prompt)
        for message in messages:
            total += self._message(message)
        if self._native:
            registered = self._chain.tools
            total += sum(self._definition(tool, registered) for tool in shown)
        return total

    def _message(self, message: Message) -> int:
        known = self._message_tokens.get(id(message))
        if known is not None and known[0] is message:
            return known[1]
        tokens = self._count(message.text_content())
        for call in message.tool_calls:
            tokens += self._count(call.name) + self._count(call.arguments)
        self._message_tokens[id(message)] = (message, tokens)
        return tokens


def open_ledger(ctx: ExecutionContext, plan: LedgerPlan) -> Ledger | None:
    """A ledger listening on ``ctx``, or None for a run without an extension that
    replaces content (the relay, discovery, the variables): ``plan`` says which."""
    if not plan.kinds:
        return None
    left = ctx.state.get(_LEDGER)
    if left is not None:  # a run on this context that never ended (a stream let go)
        left.close()
    ledger = Ledger(ctx, plan)
    ledger.open()
    return ledger


class LedgerPlan:
    """What the ledgers of an agent's runs share, worked out once: its extensions by
    kind, the tools that are one's overhead (an agent offers the tools its extensions
    had when it was built), the guides' tokens. An agent keeps its plan while it runs
    with the same extensions, chain, format and protocol, and each guide reads as it
    did (an extension's settings may change its guide between runs: `holds`)."""

    __slots__ = (
        "chain",
        "extensions",
        "fixing",
        "format",
        "growing",
        "guide",
        "guides",
        "kinds",
        "names",
        "owner",
        "protocol",
        "variables",
    )

    def __init__(
        self,
        extensions: Sequence[Extension],
        chain: ToolChain,
        text_format: TextFormat,
        protocol: str,
    ) -> None:
        self.extensions = extensions
        self.chain = chain
        self.format = text_format
        self.protocol = protocol
        kinds = _kinds(extensions)
        self.kinds = {kind: extension.name for kind, extension in kinds.items()}
        """Kind → the name of the run's extension of that kind (none: no ledger)."""
        self.variables = kinds.get("variables")
        self.names = tuple(dict.fromkeys(self.kinds.values()))
        self.owner: dict[str, str] = {}  # tool name → the extension whose overhead it is
        self.guide: dict[str, int] = {}
        guides: list[tuple[Extension, str]] = []
        for kind, extension in kinds.items():
            for tool in _overhead_tools(kind, extension):
                self.owner.setdefault(tool, extension.name)
            text = extension.instructions().strip()
            guides.append((extension, text))
            if text:
                tokens = _guide_of(text_format, extension.name, text)
                self.guide[extension.name] = self.guide.get(extension.name, 0) + tokens
        self.guides = tuple(guides)
        """Each extension of a kind and its guide as counted (`holds` reads them again)."""
        self.fixing = bool(self.guide or self.owner or "discovery" in self.kinds)
        """Whether a request costs anything for the tools it shows or defers (else the
        variables alone: nothing is fixed)."""
        self.growing = _only_grows(chain)

    def holds(
        self,
        extensions: Sequence[Extension],
        chain: ToolChain,
        text_format: TextFormat,
        protocol: str,
    ) -> bool:
        """Whether this plan is the one for a run of these: the same objects, each guide
        the same text (asked again: as the agent asks for its prompt), and a format of
        this package's (one of the user's own is asked to write the guides each run)."""
        if (
            extensions is not self.extensions
            or chain is not self.chain
            or text_format is not self.format
            or protocol != self.protocol
            or type(text_format) not in _PURE_FORMATS
        ):
            return False
        for extension, text in self.guides:  # noqa: SIM110 (a loop, not all(): no generator a run)
            if extension.instructions().strip() != text:
                return False
        return True


def note_sections(ctx: ExecutionContext, texts: list[tuple[str, str]]) -> None:
    """Tell the run's ledger, if it has one, this step's extension sections (a step
    without any is not told: its request finds none noted for it, `Ledger.sections`)."""
    if not texts:
        return
    ledger = ctx.state.get(_LEDGER)
    if ledger is not None:
        ledger.sections(texts)


def note_request(ctx: ExecutionContext, request: StepRequest) -> None:
    """Tell the run's ledger, if it has one, the request a step is about to make (as
    `note_sections` is told its sections: a call, not an event every run pays for)."""
    ledger = ctx.state.get(_LEDGER)
    if ledger is not None:
        ledger.request_ready(request)


def run_savings(ctx: ExecutionContext, ledger: Ledger | None) -> Mapping[str, Savings]:
    """The run's savings: its ledger's and its sub-agents', added up; and added into
    the parent run's (a sub-agent's requests are its parent's run's too).

    A run of its own (no parent) counts them when they are first read (`RunSavings`):
    most results' savings are never read, and counting is most of a ledger's work."""
    children = ctx.state.get(_CHILDREN) or {}
    if children:
        ctx.state.set(_CHILDREN, {})  # a context used again starts from nothing
    if ledger is not None:
        ledger.stop()
        if ctx.parent is None:
            return RunSavings(ledger, children)
    savings = _with_children(ledger.tally() if ledger is not None else {}, children)
    if savings and ctx.parent is not None:
        into = ctx.parent.state.setdefault(_CHILDREN, dict)
        for name, saved in savings.items():
            into[name] = into.get(name, Savings()) + saved
    return savings


def _with_children(
    savings: Mapping[str, Savings], children: Mapping[str, Savings]
) -> dict[str, Savings]:
    added = dict(savings)
    for name, saved in children.items():
        added[name] = added.get(name, Savings()) + saved
    return added


class RunSavings(Mapping[str, Savings]):
    """A run's savings (``AgentResult.savings``), counted from its stopped ledger when
    first read, then kept: the same figures whenever they are read. Equal to the plain
    dict of them, shown and pickled as that dict."""

    __slots__ = ("_children", "_counted", "_ledger")

    def __init__(self, ledger: Ledger, children: Mapping[str, Savings]) -> None:
        self._ledger: Ledger | None = ledger
        self._children = children
        self._counted: dict[str, Savings] | None = None

    def _figures(self) -> dict[str, Savings]:
        counted, ledger = self._counted, self._ledger
        if counted is not None:
            return counted
        if ledger is None:  # another thread counted them just now (they are set first)
            return cast(dict[str, Savings], self._counted)
        counted = self._counted = _with_children(ledger.tally(), self._children)
        self._ledger = None  # what it heard is not needed any more
        return counted

    def __getitem__(self, name: str) -> Savings:
        return self._figures()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._figures())

    def __len__(self) -> int:
        return len(self._figures())

    def __repr__(self) -> str:
        return repr(self._figures())

    def __reduce__(self) -> tuple[type[dict[str, Savings]], tuple[dict[str, Savings]]]:
        return dict, (self._figures(),)


_DEFINITIONS: weakref.WeakKeyDictionary[ToolChain, dict[str, dict[str, tuple[object, int]]]] = (
    weakref.WeakKeyDictionary()
)
"""chain → protocol → tool name → (the tool, the tokens of its definition as shown)."""

_V = TypeVar("_V")


class _Kept(Generic[_V]):
    """A figure worked out for ``key`` (the tools a request shows, say) over a chain's
    registry as it then was; kept for the next steps and runs of an agent."""

    __slots__ = ("key", "registry", "size", "value")

    def __init__(
        self, key: object, registry: Mapping[str, Tool[Any, Any]], size: int, value: _V
    ) -> None:
        self.key = key
        self.registry = registry
        self.size = size
        self.value = value

    def holds(self, key: object, registered: Mapping[str, Tool[Any, Any]]) -> bool:
        """Whether the figure is still right for ``key`` over ``registered``: the same
        mapping of the same length, as a registry only grows (``ToolChainBase.registry``),
        and an equal key (the same object, most steps: compared by identity first)."""
        return (
            self.registry is registered
            and self.size == len(registered)
            and (self.key is key or self.key == key)
        )


_FixedFor = _Kept[tuple[tuple[tuple[str, int, bool], ...], dict[str, int], dict[str, str]]]
"""For the tools shown (the key): what each request showing them costs, and the guides'
tokens and the extension tools' owners it was worked out with."""

_FIXED: weakref.WeakKeyDictionary[ToolChain, dict[str, _FixedFor]] = weakref.WeakKeyDictionary()
"""chain → protocol → the last `_FixedFor` worked out: for the next run of the agent."""

_DEFERRED: weakref.WeakKeyDictionary[ToolChain, dict[str, _Kept[int]]] = weakref.WeakKeyDictionary()
"""chain → protocol → for the request's tools and described ones (the key): the tokens
of the definitions deferred. The last sum, for the runs of one agent."""


def _guide_of(text_format: TextFormat, name: str, text: str) -> int:
    """The tokens of extension ``name``'s guide ``text`` as the system prompt shows it.

    The formats of this package write a section from its name and text alone: for them
    the count is kept by those (`_known_guide`), and the guide is not formatted again
    each run. Any other format (a subclass too) formats it each time."""
    if type(text_format) in _PURE_FORMATS:
        return _known_guide(type(text_format), name, text)
    section = FormattedSection(name, text, escape=False)
    return _guide_tokens(text_format.format_sections([section]))


@functools.lru_cache(maxsize=256)
def _known_guide(format_type: type[TextFormat], name: str, text: str) -> int:
    section = FormattedSection(name, text, escape=False)
    return _guide_tokens(format_type().format_sections([section]))


_PURE_FORMATS: frozenset[type[object]] = frozenset({MarkdownFormat, XMLFormat})
"""Formats whose ``format_sections`` reads nothing but the sections it is given."""


@functools.lru_cache(maxsize=256)
def _guide_tokens(text: str) -> int:
    """The tokens of an extension's guide as the system prompt shows it: the same few
    texts in every run of an agent (a relay's is some 1,000 characters), counted once."""
    from toolchain.runtime import count_tokens

    return count_tokens(text)


@functools.cache
def _relay_events() -> tuple[type[OutputBoxed], type[ReferencesResolved]]:
    """The relay's events a ledger listens to (imported once: the run has a relay)."""
    from toolchain.relay import OutputBoxed, ReferencesResolved

    return OutputBoxed, ReferencesResolved


@functools.cache
def _variables_event() -> type[VariablesResolved]:
    """The variables' event a ledger listens to (imported once: the run has them)."""
    from toolchain.variables import VariablesResolved

    return VariablesResolved


def _only_grows(chain: ToolChain) -> bool:
    """Whether ``chain`` only ever gains tools, never holds another under a name it has:
    a `ToolChainBase` whose ``register_tool`` refuses a name taken and whose ``registry``
    is what was registered (a subclass may change either, a chain written against the
    protocol may hand out any tools). The tools a request showed are then the same
    when the figures are read, and what they cost is worked out then (`Ledger.tally`)."""
    kind = type(chain)
    return (
        issubclass(kind, ToolChainBase)
        and kind.register_tool is ToolChainBase.register_tool
        and kind.registry is ToolChainBase.registry
    )


def _kinds(extensions: Sequence[Extension]) -> dict[str, Extension]:
    """The run's extensions that replace content, by kind (the first of each kind). An
    extension package not imported has no extension in the run, and is not imported."""
    kinds: dict[str, Extension] = {}
    for kind, (module, cls) in _KINDS.items():
        loaded = sys.modules.get(module)
        if loaded is None:
            continue
        of_kind = getattr(loaded, cls)
        for extension in extensions:
            if isinstance(extension, of_kind):
                kinds.setdefault(kind, extension)
                break
    return kinds


_KINDS = {
    "relay": ("toolchain.relay", "ContextRelay"),
    "discovery": ("toolchain.discovery", "ToolSearch"),
    "variables": ("toolchain.variables", "ToolVariables"),
}


def _overhead_tools(kind: str, extension: Extension) -> tuple[str, ...]:
    """The tools a run has only because of the extension: the relay's readers and
    ``tool_search``, not the tools a search finds (the run would have those anyway).

    Worked out once while the extension offers the same tools: a search's index may
    hold thousands, and every run of an agent asks again."""
    tools = tuple(extension.tools())
    if not tools:  # (the variables': none, and nothing to remember)
        return ()
    try:
        known = _OVERHEAD.get(extension)
    except TypeError:  # a subclass that cannot be a key (an eq dataclass): every run
        known = None
    if known is not None and known[0] == tools:
        return known[1]
    if kind == "discovery":
        from toolchain.discovery import ToolSearch  # loaded: the run has one (_kinds)

        found: Mapping[str, object] = (
            extension.index.tools if isinstance(extension, ToolSearch) else {}
        )
        names = tuple(tool.name for tool in tools if tool.name not in found)
    else:
        names = tuple(tool.name for tool in tools)
    with contextlib.suppress(TypeError):
        _OVERHEAD[extension] = (tools, names)
    return names


_OVERHEAD: weakref.WeakKeyDictionary[
    Extension, tuple[tuple[Tool[Any, Any], ...], tuple[str, ...]]
] = weakref.WeakKeyDictionary()
"""extension → (the tools it offered, those of them that are its overhead)."""


def _add(into: dict[str, int], name: str, tokens: int) -> None:
    into[name] = into.get(name, 0) + tokens


def _json(value: Mapping[str, object]) -> str:
    """Arguments as a model writes them: compact JSON (what JSON cannot hold as text)."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False, default=str)
