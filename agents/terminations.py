"""Terminations: the section that ends a run, and how its content becomes the answer.

A termination is a ``TextSection`` (default name ``answer``). ``TextTermination``
returns the text; ``TypedTermination`` validates JSON or YAML into a pydantic model
and runs your validators. Raise (or return, from a validator) a rejection to send the
model feedback instead of ending the run.

``parse_section`` raises nothing but ``AnswerRejected`` on any content: unreadable text
(too deep, huge numbers, lone surrogates) is a rejection the model can act on, and so is
a validator (yours, or the model's own pydantic validators) that raises by mistake; that
bug is logged on the ``agents`` logger with its traceback, which the model never sees.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Literal, Protocol, TypeVar, runtime_checkable

import pydantic

from toolchain import ModelFeedback, ToolCallParseError, load_json, load_yaml, to_json, to_yaml
from toolchain.runtime import logger, unfence

__all__ = ["AnswerRejected", "Termination", "TextTermination", "TypedTermination"]

_log = logger("agents")

AnswerT = TypeVar("AnswerT")
AnswerT_co = TypeVar("AnswerT_co", covariant=True)
ModelT = TypeVar("ModelT", bound=pydantic.BaseModel)


class AnswerRejected(ModelFeedback, ValueError):
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
        answer = self._validate(self._decode(unfence(content).strip()))
        for validator in self.validators:
            try:
                rejection = validator(answer)
            except AnswerRejected:
                raise
            except Exception as error:
                raise _unchecked(f"the validator {_name_of(validator)}", error) from error
            if rejection:
                raise AnswerRejected(str(rejection))
        return answer

    def _decode(self, text: str) -> object:
        syntax = self.syntax.upper()
        try:
            if self.syntax == "json":
                return load_json(text)
            return load_yaml(text, self.model.model_json_schema())
        except ToolCallParseError as error:
            raise AnswerRejected(f"the answer is not valid {syntax}: {error}") from error
        except UnicodeEncodeError as error:
            code = ord(error.object[error.start])
            raise AnswerRejected(
                f"the answer is not valid Unicode: it holds U+{code:04X} (an unpaired "
                f"surrogate) at character {error.start}; write the answer again without it"
            ) from error
        except ValueError as error:  # e.g. a number beyond Python's int digit limit
            raise AnswerRejected(f"the answer is not valid {syntax}: {error}") from error

    def _validate(self, data: object) -> ModelT:
        try:
            return self.model.model_validate(data)
        except pydantic.ValidationError as error:
            problems = "; ".join(
                f"{'.'.join(map(str, e['loc'])) or '(answer)'}: {e['msg']}"
                for e in error.errors(include_url=False)
            )
            raise AnswerRejected(f"the answer does not match the schema: {problems}") from error
        except RecursionError as error:
            raise AnswerRejected(
                "the answer is nested too deeply to check; write a flatter answer"
            ) from error
        except Exception as error:  # a validator on the model raised something odd
            raise _unchecked(f"validating it as {self.model.__name__}", error) from error


def _unchecked(what: str, error: Exception) -> AnswerRejected:
    """A bug in a validator: logged for the developer, a plain rejection for the model."""
    kind = type(error).__name__
    _log.exception("answer rejected: %s raised %s", what, kind, exc_info=error)
    return AnswerRejected(
        f"the answer could not be checked ({what} raised {kind}); check that it is "
        "complete and matches the schema, then write it again"
    )


def _name_of(validator: object) -> str:
    name = getattr(validator, "__qualname__", None) or getattr(validator, "__name__", None)
    return str(name) if name else repr(validator)
