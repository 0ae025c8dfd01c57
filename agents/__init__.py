"""Agents: model adapters, the ReAct loop, terminations, limits and the CLI."""
