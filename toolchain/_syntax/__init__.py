"""The built-in call syntaxes: JSON and schema-aware YAML, and the nesting scan both share.

Their chains (`JSONToolChain`, `YAMLToolChain`) are exported by `toolchain`; the readers are
shared with the dialects (`toolchain.dialects`), which read JSON inside other envelopes.
"""
