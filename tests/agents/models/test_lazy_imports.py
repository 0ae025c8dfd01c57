"""The provider SDKs load only when a model that needs them is built.

Each check runs in a fresh interpreter: in this one, other tests have long imported
the SDKs.
"""

from __future__ import annotations

import pytest

import agents.models
from agents.models import _anthropic, _openai
from tests.agents.models.sdk_imports import run_fresh


def test_importing_agents_loads_no_provider_sdk() -> None:
    seen = run_fresh(
        """
        import agents
        from agents import ReActAgent, ScriptedModel
        loaded("import")
        agent = ReActAgent(ScriptedModel(["<answer>Paris</answer>"]))
        assert agent.run_sync("Capital of France?").answer == "Paris"
        loaded("scripted run")
        """
    )
    assert seen == {"import": set(), "scripted run": set()}


def test_adapter_classes_resolve_without_loading_their_sdk() -> None:
    seen = run_fresh(
        """
        from agents import AnthropicModel, OpenAIChatModel
        import agents.models
        assert agents.models.OpenAIChatModel is OpenAIChatModel
        loaded("names")
        """
    )
    assert seen == {"names": set()}


def test_openai_chat_model_loads_its_sdk_when_built_and_still_works() -> None:
    seen = run_fresh(
        """
        import asyncio
        from agents import Message, OpenAIChatModel
        from tests.support.loopback import LoopbackServer
        from tests.support.openai_replies import openai_completion
        loaded("import")

        async def ask(base_url):
            model = OpenAIChatModel("gpt-test", api_key="k", base_url=base_url)
            loaded("built")
            reply = await model.generate([Message.text("user", "6 * 7?")])
            await model.aclose()
            return reply.text

        with LoopbackServer() as server:
            server.enqueue(openai_completion("42"))
            assert asyncio.run(ask(server.openai_base_url)) == "42"
        loaded("answered")
        """
    )
    assert seen["import"] == set()
    assert {"openai", "httpx2"} <= seen["built"]
    assert "anthropic" not in seen["answered"]


def test_resolve_model_imports_only_the_adapter_it_builds() -> None:
    seen = run_fresh(
        """
        from agents import resolve_model
        loaded("import")
        env = {"ANTHROPIC_API_KEY": "k", "OLLAMA_API_KEY": "k",
               "OLLAMA_API_BASE": "http://127.0.0.1:9/v1"}
        resolve_model("anthropic:claude-test", env=env)
        loaded("anthropic")
        resolve_model("ollama:llama3", env=env)
        loaded("both")
        """
    )
    assert seen["import"] == set()
    assert "anthropic" in seen["anthropic"]
    assert "openai" not in seen["anthropic"]
    assert {"openai", "anthropic"} <= seen["both"]


def test_lazy_names_are_the_adapter_classes_and_listed() -> None:
    assert agents.models.OpenAIChatModel is _openai.OpenAIChatModel
    assert agents.models.AnthropicModel is _anthropic.AnthropicModel
    assert {"AnthropicModel", "OpenAIChatModel"} <= set(dir(agents.models))
    assert {"AnthropicModel", "OpenAIChatModel"} <= set(agents.models.__all__)


def test_an_unknown_name_is_still_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="NoSuchModel"):
        getattr(agents.models, "NoSuchModel")  # noqa: B009
