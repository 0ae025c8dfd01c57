"""Scaffolding the whole suite shares, written once.

- `loopback`: the HTTP server the provider SDKs talk to, and its raw replies;
- `openai_replies`, `anthropic_replies`: one builder per kind of reply in each
  provider's shape; `replies`: the same reply for either provider, chosen by name;
- `chat_script`: a server handler playing a script of text and tool-call turns;
- `tools`: small typed tools; `valkey`: a real Redis-protocol server.

Imports the three packages as a user does; no test module is imported from here, and
test modules import scaffolding from here, never from one another.
"""
