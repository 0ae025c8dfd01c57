"""Scaffolding the whole suite shares, written once.

- `loopback`: the HTTP server the provider SDKs talk to, and its raw replies;
- `openai_replies`, `anthropic_replies`: one builder per kind of reply in each
  provider's shape; `replies`: the same reply for either provider, chosen by name;
- `chat_script`: a server handler playing a script of text and tool-call turns;
- `agent_kinds`: the two agents a test runs on, and what a scripted model writes for each;
- `tools`: small typed tools; `valkey`: a real Redis-protocol server;
- `postgres`: a real Postgres on loopback (the ``postgres`` / ``postgres_url`` fixtures);
- `workers`: durable-run worker processes (each one `durable_worker`), their journal
  and gates;
- `leaks`: the leak guard, a plugin that fails a test leaving a thread, a child
  process, a listening socket, an asyncio task or a stuck sync tool call behind;
- `timing`: CPU times for tests that check how work scales, as ratios.

Imports the three packages as a user does, and never a test module; test modules import
their scaffolding from here, never from one another.
"""
