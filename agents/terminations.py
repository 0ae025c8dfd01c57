"""Terminations: the section that ends a run, and how its content becomes the answer.

A termination is a ``TextSection`` (default name ``answer``). ``TextTermination``
returns the text; ``TypedTermination`` validates JSON or YAML into a pydantic model
and runs your validators. Raise (or return, from a validator) a rejection to send the
model feedback instead of ending the run.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Literal, Protocol, TypeVar, runtime_checkable

import msgspec
import pydantic

from toolchain import ToolCallParseError, load_yaml, to_json, to_yaml, unfence

__all__ = ["AnswerRejected", "Termination", "TextTermination", "TypedTermination"]

AnswerT = TypeVar("AnswerT")
AnswerT_co = TypeVar("AnswerT_co", covariant=True)
ModelT = TypeVar("ModelT", bound=pydantic.BaseModel)


class AnswerRejected(ValueError):
    """The answer section did not hold an acceptable answer; the message is for the model.

    >>> str(AnswerRejected("total must be positive"))
    'total must be positive'
    """


@runtime_checkable
class Termination(Protocol[AnswerT_co]):
    """A section that ends the run with a typed answer.

    ``parse_section`` raises ``AnswerRejected`` to give the model feedback instead.
    """

    @property
    def name(self) -> str: ...

    @property
    def guidance(self) -> str: ...

    def parse_section(self, content: str) -> AnswerT_co: ...


class TextTermination:
    """The answer is the section's text.

    >>> TextTermination().parse_section("  Your flight is AA102.  ")
    'Your flight is AA102.'
    """

    def __init__(
        self,
        *,
        name: str = "answer",
        guidance: str = "Your final answer to the user, once you have everything you need.",
    ) -> None:
        self._name = name
        self._guidance = guidance

    @property
    def name(self) -> str:
        return self._name

    @property
    def guidance(self) -> str:
        return self._guidance

    def parse_section(self, content: str) -> str:
        answer = content.strip()
        if not answer:
            raise AnswerRejected("the answer section is empty; write your answer inside it")
        return answer


Validator = Callable[[ModelT], str | None]
"""Returns a rejection message for the model, or None to accept."""


class TypedTermination(Termination[ModelT]):
    """The answer is JSON or YAML validated into ``model``, then checked by validators.

    >>> from pydantic import BaseModel
    >>> class Order(BaseModel):
    ...     item: str
    ...     quantity: int
    >>> def positive(order: Order) -> str | None:
    ...     return None if order.quantity > 0 else "quantity must be at least 1"
    >>> done = TypedTermination(Order, validators=[positive])
    >>> done.parse_section('{"item": "tea", "quantity": 2}')
    Order(item='tea', quantity=2)
    >>> try:
    ...     done.parse_section('{"item": "tea", "quantity": 0}')
    ... except AnswerRejected as rejected:
    ...     print(rejected)
    quantity must be at least 1
    """

    def __init__(
        self,
        model: type[ModelT],
        *,
        syntax: Literal["json", "yaml"] = "json",
        validators: Sequence[Validator[ModelT]] = (),
        name: str = "answer",
    ) -> None:
        self.model = model
        self.syntax = syntax
        self.validators = tuple(validators)
        self._name = name

    @property
    def name(self) -> str:
        return self._name

    @property
    def guidance(self) -> str:
        schema = self.model.model_json_schema()
        shown = to_json(schema) if self.syntax == "json" else to_yaml(schema)
        return (
            f"Your final answer, once you have everything you need, as one "
            f"{self.syntax.upper()} value matching this schema:\n{shown}"
        )

    def parse_section(self, content: str) -> ModelT:
        text = unfence(content).strip()
        try:
            if self.syntax == "json":
                data: object = msgspec.json.decode(text)
            else:
                data = load_yaml(text, self.model.model_json_schema())
        except (msgspec.DecodeError, ToolCallParseError) as error:
            raise AnswerRejected(
                f"the answer is not valid {self.syntax.upper()}: {error}"
            ) from error
        try:
            answer = self.model.model_validate(data)
        except pydantic.ValidationError as error:
            problems = "; ".join(
                f"{'.'.join(map(str, e['loc'])) or '(answer)'}: {e['msg']}"
                for e in error.errors(include_url=False)
            )
            raise AnswerRejected(f"the answer does not match the schema: {problems}") from error
        for validator in self.validators:
            rejection = validator(answer)
            if rejection:
                raise AnswerRejected(rejection)
        return answer
